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
//
// This file holds the set-up, the replication of the critical data and the log
// of sent messages; the recovery is in dprecover.go.

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
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
	// the node (and its incarnation) whose memory it is accounted in: the
	// holder's node when stored, which a restore of the holder may change
	node sim.NodeID
	inc  uint32
}

// held reports whether c is still in its node's memory.
func (p *DPProtocol) held(c cdCopy) bool {
	return p.RT.Holds(c.node, c.inc)
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
	if p.rollback[j] == 0 {
		// A forced rebuild planned and not restarted yet keeps running
		// meanwhile; its plan counted on the logged inputs of the stages it
		// goes back to, which it must not prune as it passes them again.
		p.prune(j, st)
	}
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

// AuditMemory implements sim.MemoryAuditor: each live node accounts as
// MemLog the messages its objects logged, and as MemBackup the critical
// data they hold.
func (p *DPProtocol) AuditMemory() error {
	rt := p.RT
	logs, cd := make([]int64, rt.NumNodes()), make([]int64, rt.NumNodes())
	for k := range p.sent {
		for _, byTag := range p.sent[k] {
			for _, e := range byTag {
				if rt.Alive(e.node) {
					logs[e.node] += e.m.WireSize()
				}
			}
		}
	}
	for j := range p.store {
		for _, st := range p.store[j] {
			for _, c := range st {
				if p.held(c) {
					cd[c.node] += c.modeled
				}
			}
		}
	}
	if err := cmp.Or(rt.MemMismatch(sim.MemLog, logs, "logged messages"), rt.MemMismatch(sim.MemBackup, cd, "critical data")); err != nil {
		return fmt.Errorf("abft: %w", err)
	}
	return nil
}

// keep stores critical data of owner in holder's memory.
func (p *DPProtocol) keep(holder, owner sim.ObjID, enc []byte) {
	st := p.store[holder][owner]
	if st == nil {
		st = map[int]cdCopy{}
		p.store[holder][owner] = st
	}
	decodeCD(enc, func(s int, modeled int64, data []byte) {
		c, ok := st[s]
		if !ok {
			c.node = p.RT.NodeOf(holder)
			c.inc = p.RT.Incarnation(c.node)
			p.RT.MemAdd(c.node, sim.MemBackup, modeled)
		}
		c.data, c.modeled = data, modeled
		st[s] = c
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

var _ sim.MemoryAuditor = (*DPProtocol)(nil)
