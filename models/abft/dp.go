package abft

// ABFT for parallel dynamic programming (Kabir, thesis 004 chapters 4-5).
//
// Every DP object advances through stages (iterations); what it produced at
// a stage that a failed process would need is its critical data (Critical).
// Protocol 1 replicates the critical data of stage s at the start of
// iteration s+1 on the peers P_k(s):
//
//   - on the application's own messages that leave then (case 1: the data
//     messages to the sender set P_S; case 2: the requests to the receiver
//     set P_R, in request-reply mode), in Header.Aux with their modeled bytes
//     in Header.Bytes;
//   - in an explicit control message only where the thesis sends one: for
//     LCS the border processes whose P_R or P_S is empty send it to the
//     wrap-around neighbour (+2 messages per iteration, eq. 4.13); for the
//     knapsack flag bits (Protocol 1.1) a process whose P_R is empty sends
//     them to P(1+(C+m-w_i-1) mod C) and one whose P_S is empty to
//     P(1+(m+w_i-1) mod C) (+2w_i per iteration, eqs. 5.6-5.8); TSP has
//     none (case 1 only, +0).
//
// The copies live in the holders' memory and die with their node. Each
// sender also keeps the last few stages of application messages it sent
// (its replies and requests), and can build older ones again from its state
// (the LCS right edge, the TSP rows, the knapsack values from the flag
// bits): that is how the receiver set "helps recover CD_Remote" (§4.3.4).
// A failed object is rebuilt at the start of a stage s* from the copies of
// stages 0..s*-1 (the lost DP table columns travel in the background; only
// the last stage's copy delays the restart), on a spare or on the node of a
// surviving holder, and the messages it needs, and the ones others were
// still waiting for from it, are sent again. s* is the newest stage all of
// whose predecessors' copies survive, lowered until every message the
// rebuilt objects and the live ones wait for can be sent again. Nobody
// else rolls back, unless a message only it could send is gone for good
// (then it is rebuilt from its copies too: a forced rollback).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"ftsim/sim"
	"ftsim/workloads/dp"
)

// Critical is what a DP object exposes to ABFT: its stage, the critical data
// of the stage it completed last, and a rebuild from the copies. The objects
// of workloads/dp implement it.
type Critical interface {
	sim.Object
	// Stage is the number of stages completed.
	Stage() int
	// CriticalData is the critical data of stage Stage()-1 (nil before the
	// first stage): real bytes, and their size in the modeled problem.
	CriticalData() (data []byte, modeled int64)
	// RestoreCritical sets a fresh object to the start of stage from the
	// critical data of stages 0..stage-1 (cds[s] as CriticalData returned
	// it) and what src offers (messages from their senders' logs, table
	// values by back-tracking); a rebuild that needs something unavailable
	// fails with an error wrapping dp.ErrUnavailable.
	RestoreCritical(stage int, cds [][]byte, src dp.Sources) error
	// Promised reports whether the data of stage for dst is computed and
	// waits for dst's request (request-reply mode).
	Promised(stage int, dst sim.ObjID) bool
	// Regenerable reports whether an object rebuilt at the start of stage
	// can send again the data message of tag (with SentAfter(tag) < stage)
	// from its state.
	Regenerable(stage, tag int) bool
	// Regenerate is that message for dst.
	Regenerate(tag int, dst sim.ObjID) (size int64, payload []byte, ok bool)
}

var (
	_ Critical = (*dp.LCSObject)(nil)
	_ Critical = (*dp.KnapsackObject)(nil)
	_ Critical = (*dp.TSPObject)(nil)
)

// DPConfig configures ABFT for the DP workloads.
type DPConfig struct {
	// HeaderBytes is the modeled size of the stage number and length that
	// accompany each stage of critical data, piggybacked or explicit.
	HeaderBytes int64
	// UseSpares rebuilds a failed object on a spare node when one is left,
	// else on the node of the holder of its newest copy.
	UseSpares bool
}

// DefaultDPConfig is 8 header bytes per stage of critical data and spares.
func DefaultDPConfig() DPConfig { return DPConfig{HeaderBytes: 8, UseSpares: true} }

// Validate checks the configuration.
func (c DPConfig) Validate() error {
	if c.HeaderBytes < 0 {
		return fmt.Errorf("abft: header_bytes must not be negative, got %d", c.HeaderBytes)
	}
	return nil
}

// DPCounters are what the protocol did, for tests and metrics.
type DPCounters struct {
	AppMsgs        int64 // application messages sent (data and requests; not the self-sent ticks)
	ExplicitMsgs   int64 // explicit critical-data messages (cases 3 / Protocol 1.1 steps with an empty set)
	ExplicitBytes  int64 // their modeled bytes
	Piggybacked    int64 // application messages that carried critical data
	PiggyBytes     int64 // modeled critical-data bytes piggybacked
	CDStages       int64 // stages of critical data captured
	Recovered      int64 // objects rebuilt after their node failed
	FromScratch    int64 // failed objects rebuilt at stage 0 (no copy of their first stage survived, or none was made yet)
	Forced         int64 // live objects rebuilt because a message only they could regenerate was gone
	StagesRedone   int64 // stages between the last one known done and the one rebuilt at, over recoveries
	Replayed       int64 // logged messages sent again after a recovery
	RemoteFetches  int64 // logged messages a rebuild read (knapsack, §5.4 case 1.1)
	Backtracked    int64 // knapsack values a rebuild took from the owners' flag bits (case 1.2.2)
	BackgroundSent int64 // modeled bytes of DP table copies moved to a rebuilt object
	Restocked      int64 // modeled bytes of peers' copies given back to a rebuilt holder
	Rounds         int64 // recovery rounds
}

// Control message tag of an explicit critical-data message.
const ctlCD int32 = 120

// cdItem is one stage of an object's critical data in its own memory until
// every peer of P_k has it.
type cdItem struct {
	stage    int
	data     []byte
	modeled  int64
	carriers []sim.ObjID // peers that an application message will bring it to
	sent     []sim.ObjID // carriers that have it
}

// logKey names a message by its other end and tag (a sender sends each
// receiver one message per tag).
type logKey struct {
	peer sim.ObjID
	tag  int32
}

// cdCopy is one stage of an object's critical data in a holder's memory.
type cdCopy struct {
	data    []byte
	modeled int64 // its size in the modeled problem
}

// logEntry is a message kept in its sender's memory, and that node.
type logEntry struct {
	m    *sim.Message
	node sim.NodeID
}

// logWindow is how many stages behind its receiver's progress a data
// message stays in its sender's log. Older ones are sent again, if ever, from
// the sender's state (Regenerate, or the knapsack's flag bits); a sender that
// can do neither is rebuilt (a forced rollback).
const logWindow = 4

// plan is one object's rebuild being prepared.
type plan struct {
	stage  int
	forced bool // live, rebuilt in place
}

// DPProtocol is ABFT for the staged DP workloads (LCS, TSP, 0/1 knapsack).
type DPProtocol struct {
	sim.BaseProtocol
	cfg      DPConfig
	w        dp.StagedWorkload
	problem  string
	n        int
	stages   int
	requests bool

	captured []int                                // per object: stages whose critical data was captured
	pending  [][]*cdItem                          // per object: captured stages not yet at every carrier
	store    []map[sim.ObjID]map[int]cdCopy       // per holder: owner → stage → copy
	sent     []map[int32]map[sim.ObjID]logEntry   // per receiver: tag → sender → the message, in the sender's memory
	got      []map[logKey]bool                    // per receiver: (sender, tag) data arrived
	detected []bool                               // lost objects whose failure was detected
	recStart []sim.Time                           // when each lost object's rebuild started (its node ready)
	recovery sim.Time                             // sum over rebuilt objects of rebuild-start-to-restart time
	target   []sim.NodeID                         // per lost object: the node it is rebuilt on, or None
	gen      []uint64                             // per object: bumped by every plan, voiding older installs
	rollback []int                                // per live object: 1 + the stage of a forced rebuild not restarted yet (0: none)
	booting  map[sim.NodeID]bool                  // spares taken and booting
	queued   bool                                 // a recovery round is scheduled
	pk       func(j sim.ObjID, s int) []sim.ObjID // explicit peers of object j for stage s

	err     error                  // the workload is not a DP one
	scratch map[sim.ObjID]Critical // fresh objects asked what they can regenerate

	// Counters is what the protocol did.
	Counters DPCounters
}

// Start implements sim.Protocol: it stops a run on a workload without
// critical data.
func (p *DPProtocol) Start() {
	if p.err != nil {
		p.RT.Abort(p.err.Error())
	}
}

// NewDP returns the protocol; it learns its workload at Init and aborts
// the run at Start if that is not a DP workload (the experiment layer
// refuses such scenarios before).
func NewDP(cfg DPConfig) (*DPProtocol, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &DPProtocol{cfg: cfg}, nil
}

// CheckDPWorkload reports whether the DP protocol can run on w.
func CheckDPWorkload(w sim.Workload) error {
	switch w.(type) {
	case *dp.LCSWorkload, *dp.KnapsackWorkload, *dp.TSPWorkload:
		return nil
	}
	return errors.New("abft: the DP protocol needs a dp workload (lcs, knapsack or tsp)")
}

// setup reads the workload's structure and the peers of Protocol 1.
func (p *DPProtocol) setup(w sim.Workload) error {
	if err := CheckDPWorkload(w); err != nil {
		return err
	}
	sw := w.(dp.StagedWorkload)
	p.w, p.problem, p.n, p.stages = sw, sw.Problem(), sw.NumObjects(), sw.Stages()
	if r, ok := w.(interface{ Requests() (bool, int64) }); ok {
		p.requests, _ = r.Requests()
	}
	switch ww := w.(type) {
	case *dp.LCSWorkload:
		p.pk = p.lcsExplicit(ww)
	case *dp.KnapsackWorkload:
		p.pk = p.knapsackExplicit(ww)
	default:
		p.pk = func(sim.ObjID, int) []sim.ObjID { return nil } // TSP: case 1 only
	}
	return nil
}

// lcsExplicit: the leftmost non-empty object has no P_R and sends its
// critical data to the rightmost (wrap-around), the rightmost has no P_S and
// sends to the leftmost, at the start of each iteration after the first
// (eq. 4.13). Objects without columns take no part.
func (p *DPProtocol) lcsExplicit(w *dp.LCSWorkload) func(sim.ObjID, int) []sim.ObjID {
	first, last := sim.ObjID(sim.None), sim.ObjID(sim.None)
	for k := range p.n {
		if lo, hi := w.Columns(sim.ObjID(k)); hi > lo {
			if first == sim.None {
				first = sim.ObjID(k)
			}
			last = sim.ObjID(k)
		}
	}
	return func(j sim.ObjID, s int) []sim.ObjID {
		if s+1 >= p.stages || first == last {
			return nil
		}
		if lo, hi := w.Columns(j); hi == lo {
			return nil
		}
		var out []sim.ObjID
		if j == first {
			out = append(out, last)
		}
		if j == last {
			out = append(out, first)
		}
		return out
	}
}

// knapsackExplicit is Protocol 1.1 over column blocks: at the start of item
// i = s+1, an object with an empty receiver set sends its flag bits of item
// s to the owner of column (lo-w_i) mod (C+1), one with an empty sender set
// to the owner of (lo+w_i) mod (C+1); with one column per object these are
// P(1+(C+m-w_i-1) mod C) and P(1+(m+w_i-1) mod C).
func (p *DPProtocol) knapsackExplicit(w *dp.KnapsackWorkload) func(sim.ObjID, int) []sim.ObjID {
	k := w.Instance()
	cols := k.Capacity + 1
	owner := w.Owner
	return func(j sim.ObjID, s int) []sim.ObjID {
		i := s + 1
		if i >= p.stages {
			return nil
		}
		lo, hi := w.Columns(j)
		if hi == lo {
			return nil
		}
		wt := k.Weights[i] % cols
		var out []sim.ObjID
		if len(w.ReceiverSet(i, j)) == 0 {
			if q := owner((lo - wt + cols) % cols); q != j {
				out = append(out, q)
			}
		}
		if len(w.SenderSet(i, j)) == 0 {
			if q := owner((lo + wt) % cols); q != j {
				out = append(out, q)
			}
		}
		return out
	}
}

// carriers is the set of peers that an application message from j brings
// its critical data of stage s to: the data messages that leave after stage
// s (P_S, case 1) and, in request-reply mode, the requests of stage s+1
// (P_R, case 2), except for TSP whose P_k is P_S (§4.4.2).
func (p *DPProtocol) carriers(j sim.ObjID, s int) []sim.ObjID {
	var out []sim.ObjID
	for _, t := range []int{s, s + 1} {
		if t < p.stages && p.w.SentAfter(t) == s {
			out = append(out, p.w.SenderSet(t, j)...)
		}
	}
	if p.requests && p.problem != "tsp" && s+1 < p.stages {
		out = append(out, p.w.ReceiverSet(s+1, j)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Init implements sim.Protocol.
func (p *DPProtocol) Init(rt *sim.Runtime) {
	p.RT = rt
	if p.err = p.setup(rt.Workload()); p.err != nil {
		return
	}
	p.captured = make([]int, p.n)
	p.pending = make([][]*cdItem, p.n)
	p.store = make([]map[sim.ObjID]map[int]cdCopy, p.n)
	p.sent = make([]map[int32]map[sim.ObjID]logEntry, p.n)
	p.got = make([]map[logKey]bool, p.n)
	p.detected = make([]bool, p.n)
	p.recStart = make([]sim.Time, p.n)
	p.target = make([]sim.NodeID, p.n)
	p.gen = make([]uint64, p.n)
	p.rollback = make([]int, p.n)
	p.booting = map[sim.NodeID]bool{}
	for i := range p.n {
		p.store[i] = map[sim.ObjID]map[int]cdCopy{}
		p.sent[i] = map[int32]map[sim.ObjID]logEntry{}
		p.got[i] = map[logKey]bool{}
		p.target[i] = sim.None
	}
}

func (p *DPProtocol) object(j sim.ObjID) Critical {
	o, _ := p.RT.Object(j).(Critical)
	return o
}

// capture takes the critical data of the stage object j completed since
// the last capture, sends it explicitly where Protocol 1 says so, and keeps
// it for the carriers. Objects compute one stage per handler, and capture
// runs at the first send and at the end of each handler, so no stage is
// skipped.
func (p *DPProtocol) capture(j sim.ObjID) {
	o := p.object(j)
	if o == nil {
		return
	}
	st := o.Stage()
	if st <= p.captured[j] {
		return
	}
	if st > p.captured[j]+1 {
		p.captured[j] = st - 1 // cannot happen: one stage per handler
	}
	s := st - 1
	p.captured[j] = st
	p.prune(j, st)
	data, modeled := o.CriticalData()
	if data == nil {
		return
	}
	p.Counters.CDStages++
	for _, q := range p.pk(j, s) {
		p.sendExplicit(j, q, s, data, modeled)
	}
	if c := p.carriers(j, s); len(c) > 0 {
		p.pending[j] = append(p.pending[j], &cdItem{stage: s, data: data, modeled: modeled, carriers: c})
	}
}

// sendExplicit sends stage s of j's critical data to peer q in a control
// message.
func (p *DPProtocol) sendExplicit(j, q sim.ObjID, s int, data []byte, modeled int64) {
	rt := p.RT
	if rt.Lost(q) {
		return
	}
	m := &sim.Message{Src: j, Dst: q, From: rt.NodeOf(j), To: rt.NodeOf(q), Tag: ctlCD,
		Size: modeled + p.cfg.HeaderBytes, Payload: encodeCD(nil, s, modeled, data), SentAt: rt.Now()}
	rt.SendControl(m)
	p.Counters.ExplicitMsgs++
	p.Counters.ExplicitBytes += m.Size
	rt.Stats().CheckpointBytes += modeled // a copy of critical data in a peer's memory
}

// encodeCD appends stage s of critical data: the stage, its modeled size
// (for the holder's memory account) and the real bytes.
func encodeCD(b []byte, s int, modeled int64, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(s))
	b = binary.AppendUvarint(b, uint64(modeled))
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

// decodeCD calls fn for each stage in an encoding of concatenated encodeCD.
func decodeCD(b []byte, fn func(s int, modeled int64, data []byte)) {
	for len(b) > 0 {
		s, n := binary.Uvarint(b)
		if n <= 0 {
			return
		}
		b = b[n:]
		md, n := binary.Uvarint(b)
		if n <= 0 {
			return
		}
		b = b[n:]
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return
		}
		fn(int(s), int64(md), b[n:n+int(l)])
		b = b[n+int(l):]
	}
}

// OnSend piggybacks the sender's pending critical data for the receiver and
// logs the message in the sender's memory.
func (p *DPProtocol) OnSend(m *sim.Message) bool {
	if p.err != nil || m.Tag == dp.TagTick || m.Src == m.Dst {
		return true
	}
	j := m.Src
	p.Counters.AppMsgs++
	p.capture(j)
	var aux []byte
	var bytes int64
	items := p.pending[j][:0]
	for _, it := range p.pending[j] {
		if slices.Contains(it.carriers, m.Dst) && !slices.Contains(it.sent, m.Dst) {
			aux = encodeCD(aux, it.stage, it.modeled, it.data)
			bytes += it.modeled + p.cfg.HeaderBytes
			p.RT.Stats().CheckpointBytes += it.modeled
			it.sent = append(it.sent, m.Dst)
		}
		if len(it.sent) < len(it.carriers) {
			items = append(items, it)
		}
	}
	clear(p.pending[j][len(items):])
	p.pending[j] = items
	if aux != nil {
		m.Hdr.Aux = aux
		m.Hdr.Bytes += bytes
		p.Counters.Piggybacked++
		p.Counters.PiggyBytes += bytes
	}
	c := m.Clone()
	c.Hdr = sim.Header{}
	p.logMsg(c)
	return true
}

// OnArrive stores piggybacked critical data in the receiver's memory and
// notes which data messages arrived.
func (p *DPProtocol) OnArrive(m *sim.Message) bool {
	if p.err != nil || m.Tag == dp.TagTick {
		return true
	}
	if m.Hdr.Aux != nil {
		p.keep(m.Dst, m.Src, m.Hdr.Aux)
	}
	if m.Tag >= 0 {
		p.got[m.Dst][logKey{m.Src, m.Tag}] = true
	}
	return true
}

// logMsg keeps message m in its sender's memory.
func (p *DPProtocol) logMsg(m *sim.Message) {
	byTag := p.sent[m.Dst][m.Tag]
	if byTag == nil {
		byTag = map[sim.ObjID]logEntry{}
		p.sent[m.Dst][m.Tag] = byTag
	}
	if old, ok := byTag[m.Src]; ok {
		p.unlog(old)
	}
	n := p.RT.NodeOf(m.Src)
	byTag[m.Src] = logEntry{m, n}
	p.RT.MemAdd(n, sim.MemLog, m.WireSize())
}

// unlog returns a log entry's memory (a failed node's is gone already).
func (p *DPProtocol) unlog(e logEntry) {
	if p.RT.Alive(e.node) && p.RT.NodeOf(e.m.Src) == e.node {
		p.RT.MemAdd(e.node, sim.MemLog, -e.m.WireSize())
	}
}

// logged is the message src sent dst with tag, if src still keeps it.
func (p *DPProtocol) logged(src, dst sim.ObjID, tag int32) *sim.Message {
	if p.RT.Lost(src) {
		return nil
	}
	if e, ok := p.sent[dst][tag][src]; ok {
		return e.m
	}
	return nil
}

// prune drops, once object k has reached stage, what no recovery will need:
// the data messages to k more than logWindow stages back, k's requests for
// the stage it just completed, and the record of what arrived before.
func (p *DPProtocol) prune(k sim.ObjID, stage int) {
	for tag, byTag := range p.sent[k] {
		if tag >= 0 && int(tag) < stage-logWindow {
			for _, e := range byTag {
				p.unlog(e)
			}
			delete(p.sent[k], tag)
		}
	}
	if t := stage - 1; t >= 0 && p.requests {
		for _, q := range p.w.ReceiverSet(t, k) {
			if e, ok := p.sent[q][dp.TagRequest(t)][k]; ok {
				p.unlog(e)
				delete(p.sent[q][dp.TagRequest(t)], k)
			}
		}
	}
	for key := range p.got[k] {
		if int(key.tag) < stage {
			delete(p.got[k], key)
		}
	}
}

// keep stores critical data of owner in holder's memory.
func (p *DPProtocol) keep(holder, owner sim.ObjID, enc []byte) {
	st := p.store[holder][owner]
	if st == nil {
		st = map[int]cdCopy{}
		p.store[holder][owner] = st
	}
	decodeCD(enc, func(s int, modeled int64, data []byte) {
		if _, ok := st[s]; !ok {
			p.RT.MemAdd(p.RT.NodeOf(holder), sim.MemBackup, modeled)
		}
		st[s] = cdCopy{data, modeled}
	})
}

// OnControl stores an explicit critical-data message.
func (p *DPProtocol) OnControl(m *sim.Message) {
	if p.err != nil || m.Tag != ctlCD || p.RT.Lost(m.Dst) || p.RT.NodeOf(m.Dst) != m.To {
		return
	}
	p.keep(m.Dst, m.Src, m.Payload)
}

// OnHandled captures the stage the handler completed.
func (p *DPProtocol) OnHandled(j sim.ObjID) {
	if p.err == nil {
		p.capture(j)
	}
}

// OnFailure forgets what lived in the failed node's memory and schedules a
// recovery round; failures detected at the same instant share one round.
func (p *DPProtocol) OnFailure(f sim.Failure) {
	if p.err != nil {
		return
	}
	if f.WasSpare {
		delete(p.booting, f.Node)
		for i, t := range p.target {
			if t == f.Node {
				p.target[i] = sim.None
			}
		}
		p.schedule()
		return
	}
	for _, j := range f.Objects {
		p.forget(j)
		p.detected[j] = true
		p.target[j] = sim.None
	}
	for i, t := range p.target {
		if t == f.Node {
			p.target[i] = sim.None
		}
	}
	p.schedule()
}

// forget drops what object j's node held: its copies of others' data, its
// log, its pending critical data.
func (p *DPProtocol) forget(j sim.ObjID) {
	p.store[j] = map[sim.ObjID]map[int]cdCopy{}
	for k := range p.sent {
		for _, byTag := range p.sent[k] {
			delete(byTag, j)
		}
	}
	p.got[j] = map[logKey]bool{}
	p.pending[j] = nil
}

func (p *DPProtocol) schedule() {
	if p.queued {
		return
	}
	p.queued = true
	p.RT.At(p.RT.Now(), func() {
		p.queued = false
		p.round()
	})
}

// copies returns, for each stage s of owner j's critical data, a surviving
// copy and its holder, up to the first stage without one. A holder not
// running a handler is preferred: the sends of a running handler hold its
// node's network interface until the handler ends, and a copy sent from
// there would wait behind them.
func (p *DPProtocol) copies(j sim.ObjID) (cds []cdCopy, holders []sim.ObjID) {
	rt := p.RT
	for s := 0; s < p.stages; s++ {
		var found cdCopy
		h := sim.ObjID(sim.None)
		for q := range p.n {
			qq := sim.ObjID(q)
			if rt.Lost(qq) || qq == j {
				continue
			}
			if d, ok := p.store[q][j][s]; ok && (h == sim.None || rt.Running(h) && !rt.Running(qq)) {
				found, h = d, qq
			}
		}
		if h == sim.None {
			break
		}
		cds, holders = append(cds, found), append(holders, h)
	}
	return cds, holders
}

// cdData is the real bytes of each copy.
func cdData(cds []cdCopy) [][]byte {
	out := make([][]byte, len(cds))
	for i, c := range cds {
		out[i] = c.data
	}
	return out
}

// round plans the rebuild of every detected lost object and starts it.
func (p *DPProtocol) round() {
	rt := p.RT
	if rt.Finished() {
		return
	}
	plans := map[sim.ObjID]*plan{}
	lost := false
	for j := range p.n {
		id := sim.ObjID(j)
		switch {
		case rt.Lost(id) && p.detected[j]:
			cds, _ := p.copies(id)
			plans[id] = &plan{stage: len(cds)}
			lost = true
		case p.rollback[j] > 0 && !rt.Lost(id):
			// a forced rebuild not restarted yet: the objects that wait for
			// its messages see it at the stage it goes back to, not at the
			// stage it still shows
			plans[id] = &plan{stage: p.rollback[j] - 1, forced: true}
		}
	}
	if !lost {
		return
	}
	p.Counters.Rounds++
	p.settle(plans)
	ids := slices.Sorted(maps.Keys(plans))
	for _, j := range ids {
		pl := plans[j]
		p.gen[j]++
		cds, holders := p.copies(j)
		cds, holders = cds[:pl.stage], holders[:pl.stage]
		if pl.forced {
			p.rollback[j] = pl.stage + 1
			p.Counters.Forced++
			p.transfer(j, rt.NodeOf(j), pl.stage, cds, holders)
			continue
		}
		p.place(j, pl.stage, cds, holders)
	}
}

// place finds the node object j is rebuilt on: the one chosen before if it
// is still up, a spare, or the node of the holder of its newest copy (the
// detecting neighbour taking over), or else any live node.
func (p *DPProtocol) place(j sim.ObjID, stage int, cds []cdCopy, holders []sim.ObjID) {
	rt := p.RT
	t := p.target[j]
	if t != sim.None && p.booting[t] {
		return // the round after the boot installs it
	}
	if t == sim.None || !rt.Alive(t) {
		t = sim.None
		if p.cfg.UseSpares {
			old := rt.NodeOf(j)
			if spare, ok := rt.TakeSpare(func(n sim.NodeID) {
				delete(p.booting, n)
				rt.ReplaceSlot(old, n)
				p.schedule()
			}); ok {
				p.booting[spare] = true
				p.target[j] = spare
				for _, o := range rt.ObjectsOn(old) {
					if rt.Lost(o) {
						p.target[o] = spare
					}
				}
				return
			}
		}
		switch {
		case len(holders) > 0:
			// A holder of the newest copy takes it over; among several, the
			// least loaded, so that simultaneous failures spread.
			load := -1
			for q := range p.n {
				qq := sim.ObjID(q)
				if _, ok := p.store[q][j][stage-1]; !ok || rt.Lost(qq) {
					continue
				}
				if l := len(rt.ObjectsOn(rt.NodeOf(qq))); load < 0 || l < load {
					t, load = rt.NodeOf(qq), l
				}
			}
		default:
			for q := range p.n {
				if !rt.Lost(sim.ObjID(q)) {
					t = rt.NodeOf(sim.ObjID(q))
					break
				}
			}
		}
		if t == sim.None {
			rt.Abort("abft: every object is lost")
			return
		}
		p.target[j] = t
	}
	p.transfer(j, t, stage, cds, holders)
}

// transfer moves the copy of the last stage before stage to node t and then
// rebuilds j there; the older stages (the DP table) follow in the
// background.
func (p *DPProtocol) transfer(j sim.ObjID, t sim.NodeID, stage int, cds []cdCopy, holders []sim.ObjID) {
	rt := p.RT
	g := p.gen[j]
	p.recStart[j] = rt.Now()
	install := func() {
		if p.gen[j] != g {
			return // planned again since
		}
		p.install(j, t, stage, cdData(cds))
	}
	if stage == 0 {
		rt.At(rt.Now(), install)
		return
	}
	// Background: each holder sends the older stages it supplies.
	bg := map[sim.NodeID]int64{}
	for s := range stage - 1 {
		bg[rt.NodeOf(holders[s])] += cds[s].modeled + p.cfg.HeaderBytes
	}
	for _, n := range slices.Sorted(maps.Keys(bg)) { // in node order: a run is a function of its seed
		if b := bg[n]; n != t {
			p.Counters.BackgroundSent += b
			rt.Transfer(n, t, b, ctlCD+1, func(bool) {})
		}
	}
	from := rt.NodeOf(holders[stage-1])
	if from == t {
		rt.At(rt.Now(), install)
		return
	}
	rt.Transfer(from, t, cds[stage-1].modeled+p.cfg.HeaderBytes, ctlCD+1, func(ok bool) {
		if p.gen[j] != g {
			return
		}
		if !ok {
			p.schedule() // a holder or the target died: plan again
			return
		}
		install()
	})
}

// sources is what a rebuild of j may read: data messages j was sent, from
// the logs of live senders not being rebuilt (plans, may be nil), and for
// the knapsack any table value the flag bits give (§5.4 back-tracking).
func (p *DPProtocol) sources(j sim.ObjID, plans map[sim.ObjID]*plan) dp.Sources {
	src := dp.Sources{Received: func(tag int, q sim.ObjID) []byte {
		if plans[q] != nil {
			return nil
		}
		m := p.logged(q, j, int32(tag))
		if m == nil {
			return nil
		}
		if plans == nil {
			p.Counters.RemoteFetches++
		}
		return m.Payload
	}}
	if kw, ok := p.w.(*dp.KnapsackWorkload); ok {
		value := kw.Backtrack(p.knapsackFlag(kw))
		src.Value = func(item, col int) (int64, bool) {
			v, ok := value(item, col)
			if ok && plans == nil {
				p.Counters.Backtracked++
			}
			return v, ok
		}
	}
	return src
}

// knapsackFlag reads flag bit (item, col) from its owner if it is live, else
// from a surviving copy of the owner's critical data of that item.
func (p *DPProtocol) knapsackFlag(kw *dp.KnapsackWorkload) func(item, col int) (bool, bool) {
	rt := p.RT
	return func(item, col int) (bool, bool) {
		q := kw.Owner(col)
		if !rt.Lost(q) {
			ko, ok := p.object(q).(*dp.KnapsackObject)
			if !ok || item >= ko.Stage() {
				return false, false
			}
			return ko.Flag(item, col), true
		}
		lo, _ := kw.Columns(q)
		for h := range p.n {
			if rt.Lost(sim.ObjID(h)) {
				continue
			}
			if d, ok := p.store[h][q][item]; ok {
				c := col - lo
				if c>>3 >= len(d.data) {
					return false, false
				}
				return d.data[c>>3]>>(c&7)&1 != 0, true
			}
		}
		return false, false
	}
}

// install rebuilds j on node n at stage from cds, charges the rebuild, and
// restarts it (restart).
func (p *DPProtocol) install(j sim.ObjID, n sim.NodeID, stage int, cds [][]byte) {
	rt := p.RT
	if rt.Finished() || !rt.Alive(n) {
		return
	}
	fetches := p.Counters.RemoteFetches
	o, _ := rt.Workload().NewObject(j).(Critical)
	if o == nil {
		rt.Abort(fmt.Sprintf("abft: object %d has no critical data", j))
		return
	}
	if err := o.RestoreCritical(stage, cds, p.sources(j, nil)); err != nil {
		if errors.Is(err, dp.ErrUnavailable) {
			p.Counters.RemoteFetches = fetches
			p.schedule() // a message the plan counted on is gone: plan again
			return
		}
		rt.Abort(fmt.Sprintf("abft: %v", err))
		return
	}
	state, err := o.MarshalBinary()
	if err != nil {
		rt.Abort(fmt.Sprintf("abft: %v", err))
		return
	}
	// Rebuilding writes the object's state from the copies: charged at the
	// node's memory bandwidth before the object restarts.
	g := p.gen[j]
	d := sim.Time(0)
	if bw := rt.Config().MemBandwidth; bw > 0 {
		d = sim.FromSeconds(float64(o.ModeledSize()) / bw)
	}
	rt.ChargeCPU(n, d, func() {
		if p.gen[j] == g {
			p.restart(j, n, stage, o, state)
		}
	})
}

// restart puts the rebuilt object j (o, serialised as state) in place on
// node n at stage and sends again what recovery lost: the data messages of
// its stages from then on (from the senders' logs, else from their state),
// the data it had sent that live objects still wait for (from its rebuilt
// state), and the requests live objects sent it that are unanswered.
func (p *DPProtocol) restart(j sim.ObjID, n sim.NodeID, stage int, o Critical, state []byte) {
	rt := p.RT
	if rt.Finished() {
		return
	}
	kick := &sim.Message{Src: j, Dst: j, Tag: dp.TagTick, Epoch: rt.Epoch(), From: n, To: n}
	// The bookkeeping of the new incarnation comes first: Restore may run
	// its first handler at once.
	wasLost := rt.Lost(j)
	if wasLost {
		p.Counters.Recovered++
		if stage == 0 {
			p.Counters.FromScratch++
		}
		p.recovery += rt.Now() - p.recStart[j]
		p.Counters.StagesRedone += int64(max(0, p.captured[j]-stage))
		p.forget(j)
	} else {
		p.pending[j] = nil
		p.got[j] = map[logKey]bool{}
	}
	p.detected[j] = false
	p.target[j] = sim.None
	p.rollback[j] = 0
	p.captured[j] = stage
	if err := rt.Restore(j, n, state, []*sim.Message{kick}, true); err != nil {
		rt.Abort(fmt.Sprintf("abft: %v", err))
		return
	}
	if wasLost {
		p.restock(j)
	}
	// The data messages of its stages from now on, from live senders: from
	// their logs, else from their state.
	for t := stage; t < p.stages; t++ {
		for _, q := range p.w.ReceiverSet(t, j) {
			if rt.Lost(q) {
				continue
			}
			if m := p.logged(q, j, int32(t)); m != nil {
				rt.SendApp(q, j, m.Tag, m.Size, m.Payload, sim.Header{})
				p.Counters.Replayed++
				continue
			}
			if qo := p.object(q); qo.Stage() > p.w.SentAfter(t) && !qo.Promised(t, j) {
				if size, payload, ok := p.regen(qo, q, t, j); ok {
					rt.SendApp(q, j, int32(t), size, payload, sim.Header{})
					p.Counters.Replayed++
				}
			}
		}
	}
	// Data j sent before the stage it restarts at that live objects still
	// wait for: sent again from the rebuilt state. (An object still to be
	// rebuilt gets its inputs when it restarts, from j's log or state.)
	for k := range p.n {
		kk := sim.ObjID(k)
		if kk == j || rt.Lost(kk) {
			continue
		}
		for t := p.object(kk).Stage(); t < p.stages && p.w.SentAfter(t) < stage; t++ {
			if p.got[k][logKey{j, int32(t)}] || !slices.Contains(p.w.ReceiverSet(t, kk), j) {
				continue
			}
			size, payload, ok := p.regen(o, j, t, kk)
			if !ok {
				continue
			}
			m := &sim.Message{Src: j, Dst: kk, Tag: int32(t), Size: size, Payload: payload, Epoch: rt.Epoch()}
			p.logMsg(m)
			rt.SendApp(j, kk, m.Tag, size, payload, sim.Header{})
			p.Counters.Replayed++
		}
	}
	// Requests to j still waiting for their data.
	if p.requests {
		for k := range p.n {
			src := sim.ObjID(k)
			if src == j || rt.Lost(src) {
				continue
			}
			for _, tag := range slices.Sorted(maps.Keys(p.sent[j])) {
				e, ok := p.sent[j][tag][src]
				if t := dp.RequestStage(tag); !ok || t < 0 || p.got[k][logKey{j, int32(t)}] || p.object(src).Stage() > t {
					continue
				}
				rt.SendApp(src, j, tag, e.m.Size, nil, sim.Header{})
				p.Counters.Replayed++
			}
		}
	}
}

// restock gives the rebuilt object j back the copies it held of its peers'
// critical data (the remote critical data in its DP table, §4.3.4): each
// stage of a live owner q that j was to hold, from another live holder, in
// the background. Without it, two successive failures of q's holders would
// leave q with no copy of its early stages.
func (p *DPProtocol) restock(j sim.ObjID) {
	rt := p.RT
	type batch struct {
		from   sim.NodeID
		stages map[sim.ObjID]map[int]cdCopy
		bytes  int64
	}
	batches := map[sim.NodeID]*batch{}
	for k := range p.n {
		q := sim.ObjID(k)
		if q == j || rt.Lost(q) {
			continue
		}
		for s := 0; s < p.captured[q]; s++ {
			if !slices.Contains(p.carriers(q, s), j) && !slices.Contains(p.pk(q, s), j) {
				continue
			}
			for h := range p.n {
				hh := sim.ObjID(h)
				c, ok := p.store[h][q][s]
				if hh == j || !ok || rt.Lost(hh) {
					continue
				}
				from := rt.NodeOf(hh)
				b := batches[from]
				if b == nil {
					b = &batch{from: from, stages: map[sim.ObjID]map[int]cdCopy{}}
					batches[from] = b
				}
				if b.stages[q] == nil {
					b.stages[q] = map[int]cdCopy{}
				}
				b.stages[q][s] = c
				b.bytes += c.modeled + p.cfg.HeaderBytes
				break
			}
		}
	}
	to := rt.NodeOf(j)
	for _, from := range slices.Sorted(maps.Keys(batches)) {
		b := batches[from]
		p.Counters.Restocked += b.bytes
		rt.Transfer(from, to, b.bytes, ctlCD+2, func(ok bool) {
			if !ok || rt.Lost(j) || rt.NodeOf(j) != to {
				return
			}
			for q, st := range b.stages {
				for s, c := range st {
					if _, had := p.store[j][q][s]; had {
						continue
					}
					if p.store[j][q] == nil {
						p.store[j][q] = map[int]cdCopy{}
					}
					p.store[j][q][s] = c
					rt.MemAdd(to, sim.MemBackup, c.modeled)
				}
			}
		})
	}
}

// settle lowers the planned stages until every message a rebuilt object or
// a live one still waits for will be sent (again), adding live objects that
// must regenerate a message they no longer hold.
func (p *DPProtocol) settle(plans map[sim.ObjID]*plan) {
	rt := p.RT
	lower := func(q sim.ObjID, s int) bool {
		pl := plans[q]
		added := pl == nil
		if added {
			cds, _ := p.copies(q)
			pl = &plan{stage: min(len(cds), p.object(q).Stage()), forced: true}
			plans[q] = pl
		}
		if s < pl.stage {
			pl.stage = max(s, 0)
			return true
		}
		return added
	}
	// available reports whether the data of tag from q to j will reach j.
	available := func(q, j sim.ObjID, tag int) bool {
		if pl := plans[q]; pl != nil {
			return pl.stage <= p.w.SentAfter(tag) || p.regenerable(q, pl.stage, tag)
		}
		if rt.Lost(q) {
			return true // not detected yet: its own round will plan it against j
		}
		o := p.object(q)
		return o.Stage() <= p.w.SentAfter(tag) || o.Promised(tag, j) || p.logged(q, j, int32(tag)) != nil ||
			p.regenerable(q, o.Stage(), tag)
	}
	for range 4 * p.n * (p.stages + 1) {
		changed := false
		ids := slices.Sorted(maps.Keys(plans))
		for _, j := range ids {
			pl := plans[j]
			// (a) the rebuilt j needs its inputs of stages >= its stage.
			for t := pl.stage; t < p.stages; t++ {
				for _, q := range p.w.ReceiverSet(t, j) {
					if !available(q, j, t) {
						changed = lower(q, p.w.SentAfter(t)) || changed
					}
				}
			}
			// (b) live objects waiting for j's data.
			for k := range p.n {
				kk := sim.ObjID(k)
				if plans[kk] != nil || rt.Lost(kk) {
					continue
				}
				for t := p.object(kk).Stage(); t < p.stages; t++ {
					if slices.Contains(p.w.ReceiverSet(t, kk), j) && !p.got[k][logKey{j, int32(t)}] {
						if sa := p.w.SentAfter(t); sa < pl.stage && !p.regenerable(j, pl.stage, t) {
							pl.stage = max(sa, 0)
							changed = true
						}
						break
					}
				}
			}
			// (c) the rebuild itself (knapsack back-tracking) must find its messages.
			if p.problem == "knapsack" {
				cds, _ := p.copies(j)
				for pl.stage > 0 {
					o := rt.Workload().NewObject(j).(Critical)
					err := o.RestoreCritical(pl.stage, cdData(cds[:pl.stage]), p.sources(j, plans))
					if err == nil || !errors.Is(err, dp.ErrUnavailable) {
						break
					}
					pl.stage--
					changed = true
				}
			}
		}
		if !changed {
			return
		}
	}
}

// regenerable reports whether object j at stage can send the data of tag
// again from its state: if the object kind keeps it (a scratch object of j
// answers), and for the knapsack always, the values coming from the flag
// bits by back-tracking.
func (p *DPProtocol) regenerable(j sim.ObjID, stage, tag int) bool {
	if p.problem == "knapsack" {
		return p.w.SentAfter(tag) < stage
	}
	if p.scratch == nil {
		p.scratch = map[sim.ObjID]Critical{}
	}
	o, ok := p.scratch[j]
	if !ok {
		o, _ = p.RT.Workload().NewObject(j).(Critical)
		p.scratch[j] = o
	}
	return o != nil && o.Regenerable(stage, tag)
}

// regen is the data message of tag from q (object o, live) to dst, built
// again from q's state.
func (p *DPProtocol) regen(o Critical, q sim.ObjID, tag int, dst sim.ObjID) (size int64, payload []byte, ok bool) {
	if size, payload, ok := o.Regenerate(tag, dst); ok {
		return size, payload, true
	}
	if kw, isK := p.w.(*dp.KnapsackWorkload); isK && p.w.SentAfter(tag) < o.Stage() {
		return kw.Message(tag, q, dst, p.sources(q, nil).Value)
	}
	return 0, nil, false
}

// OnFinish records the protocol's figures as run metrics.
func (p *DPProtocol) OnFinish() {
	if p.err != nil {
		return
	}
	s := p.RT.Stats()
	s.SetMetric("abft_explicit_msgs", float64(p.Counters.ExplicitMsgs))
	s.SetMetric("abft_app_msgs", float64(p.Counters.AppMsgs))
	if p.Counters.AppMsgs > 0 {
		s.SetMetric("abft_extra_msg_ratio", float64(p.Counters.ExplicitMsgs)/float64(p.Counters.AppMsgs))
	}
	s.SetMetric("abft_cd_bytes", float64(p.Counters.ExplicitBytes+p.Counters.PiggyBytes))
	s.SetMetric("abft_recovered", float64(p.Counters.Recovered))
	s.SetMetric("abft_forced_rollbacks", float64(p.Counters.Forced))
	s.SetMetric("abft_stages_redone", float64(p.Counters.StagesRedone))
	if now := p.RT.Now(); now > 0 {
		// Thesis figs. 4.8, 4.14, 5.3-5.4: total recovery time (from the
		// rebuild's start on a ready node, i.e. after detection and any
		// spare's boot, to the restart; summed over the rebuilt processes)
		// over the run time.
		s.SetMetric("abft_recovery_overhead", p.recovery.Seconds()/now.Seconds())
	}
}
