package abft

// FTPIDA* (Kabir, chapter 3, Algorithms 3.2 and 3.3) on the pida workload.
//
// The workers form a logical ring by object id. Every worker's fault recovery
// information (FRI: its whole state, the DFS stack replicated by deltas) is
// kept by its two ring neighbours' nodes. A fault recovery message (FRM) goes to
// both every Interval and after every handler that moved work or credit; the
// holders answer backupACK. What makes this exact rather than approximate is
// the commit rule of Algorithm 3.2, applied to every message that carries work
// or credit (work, credit return, bound and solution broadcasts — the
// "critical" messages):
//
//   - output commit: a critical message leaves only after the FRM holding the
//     state that produced it is acknowledged by every live holder. A restored
//     FRI therefore never holds work or credit already given away (no
//     duplicated credit, which would end an iteration early);
//   - sender keeps, receiver commits: the sender keeps the message in its
//     outbox (part of its FRI) until the receiver's FRM that consumed it is
//     acknowledged and the receiver sends workACK. A receiver that fails before
//     that gets the message again; a sender that fails has it in its FRI;
//   - per-pair sequence numbers and a consumed set (also part of the FRI) drop
//     the duplicates this re-sending creates.
//
// Requests and "no work" answers are not critical: after a recovery the
// restored worker tells every other worker "no work" on its behalf, which
// only makes a waiting requester ask someone else (harmless in pida: a second
// work message's credit goes straight back to the coordinator).
//
// Recovery (Algorithm 3.3): a lost worker is rebuilt from the newest FRI held
// by a surviving neighbour, on a spare when one is left, otherwise on the
// detecting neighbour's node (the same work placement as merging its stack into
// the neighbour's: pida's coordinator state cannot be merged). Holders are the
// nearest live workers on other nodes in each ring direction, so the ring is
// rebuilt around lost and co-located workers. A worker whose neighbours both
// lost their copies (three ring-consecutive failures) cannot be rebuilt: the
// pattern is reported unrecoverable and the run restarts from scratch
// (none.Restarter). The recovery is in ftpidarecover.go.

import (
	"errors"
	"fmt"

	"ftsim/internal/seqset"
	"ftsim/models/none"
	"ftsim/sim"
	"ftsim/workloads/pida"
)

// pida's message tags (unexported in workloads/pida; values as declared there).
const (
	pidaCont   int32 = 1
	pidaBound  int32 = 2
	pidaWork   int32 = 4
	pidaNoWork int32 = 5
	pidaCredit int32 = 6
	pidaSolved int32 = 7
)

// pida worker state flags (workloads/pida parallel.go).
const (
	pidaFlagCont       = 1 << 2
	pidaFlagRequesting = 1 << 3
)

// Control message tags of the protocol.
const (
	ctlFRM int32 = iota + 100
	ctlBackupAck
	ctlWorkAck
)

const (
	timerBackup   int32 = 1
	flagCritical        = 1 << 0
	seqHeaderSize       = 8 // modeled bytes of the sequence number a critical message carries
)

func critical(tag int32) bool {
	return tag == pidaBound || tag == pidaWork || tag == pidaCredit || tag == pidaSolved
}

// Config holds the FTPIDA* parameters (scenario keys under [protocol]).
type Config struct {
	// Interval is c, the period of the FRMs (besides those after each transfer).
	Interval sim.Time
	// FrameBytes is the modeled size of one stack frame in an FRM (pida's
	// bytes_per_frame); HeaderBytes the fixed part of an FRM (neighbour ids,
	// counters, the worker's scalars).
	FrameBytes, HeaderBytes int64
	// AckBytes is the modeled size of a backupACK, a workACK and of a "no work"
	// notice sent during recovery.
	AckBytes int64
	// UseSpares takes a spare for a lost worker when one is left; false always
	// places it on the detecting neighbour's node.
	UseSpares bool
}

// DefaultConfig is an FRM every 10 ms with pida's default frame size.
func DefaultConfig() Config {
	return Config{Interval: 10 * sim.Millisecond, FrameBytes: 32, HeaderBytes: 64, AckBytes: 16, UseSpares: true}
}

// Counters are what the protocol did during a run, for reports and tests.
type Counters struct {
	FRMs, FullFRMs    int   // FRMs sent (one per holder), of which full stacks
	FRMBytes          int64 // their modeled bytes
	BackupAcks        int
	WorkAcks          int
	Held              int // critical messages held until their commit
	Resent            int // critical messages sent again after a recovery
	Duplicates        int // critical messages dropped as already consumed
	Notices           int // "no work" notices sent during recoveries
	Restored          int // workers rebuilt from an FRI
	OnSpare           int // of which on a spare
	OnNeighbour       int // of which on the detecting neighbour's node
	DeltaMismatch     int // deltas whose base was not the holder's copy (a bug if > 0)
	SurvivalDecisions int // recoveries decided, cross-checked against Survivable
	SurvivalMismatch  int // decisions that disagreed with Survivable (one worker per node only)
}

// Protocol is FTPIDA*: protocol kind "abft" on the pida workload.
type Protocol struct {
	sim.BaseProtocol
	cfg Config
	n   int

	live    []*proc
	fri     [][]*copyFRI // per owner, the copies held by other nodes
	bodies  map[uint64]*frmBody
	nextID  uint64
	timers  map[sim.NodeID]uint32 // node -> incarnation whose backup timer is armed
	booting map[sim.NodeID]pendingRecovery
	scratch *none.Restarter
	// fallback: an unrecoverable pattern handed the run to restart from scratch.
	fallback bool
	life     int64 // bumped when FTPIDA* takes over after such a restart: older timers are void

	// Counters is what the protocol did.
	Counters Counters
}

type pendingRecovery struct {
	failed  sim.NodeID
	workers []sim.ObjID
}

// New returns FTPIDA* with the given configuration.
func New(cfg Config) *Protocol {
	return &Protocol{cfg: cfg, bodies: map[uint64]*frmBody{}, timers: map[sim.NodeID]uint32{},
		booting: map[sim.NodeID]pendingRecovery{}}
}

// Validate checks a configuration.
func (c Config) Validate() error {
	if c.Interval <= 0 {
		return errors.New("protocol.interval: must be positive")
	}
	if err := sim.CheckDelay("protocol.interval", c.Interval); err != nil {
		return err
	}
	for _, b := range []struct {
		key string
		v   int64
	}{{"frame_bytes", c.FrameBytes}, {"header_bytes", c.HeaderBytes}, {"ack_bytes", c.AckBytes}} {
		if b.v < 0 {
			return fmt.Errorf("protocol.%s: must not be negative, got %d", b.key, b.v)
		}
	}
	return nil
}

// entry is a critical message kept by its sender until the receiver commits it.
type entry struct {
	dst      sim.ObjID
	seq      uint64
	msg      *sim.Message
	ver      uint64 // the FRM version that first held it; 0 while only held
	released bool
}

type ackEntry struct {
	src sim.ObjID
	seq uint64
	ver uint64
}

type pairKey struct {
	src sim.ObjID
	seq uint64
}

// proc is the protocol state of one worker, kept on the worker's node.
type proc struct {
	node     sim.NodeID
	inc      uint32
	seq      []uint64     // last sequence number sent, per destination
	consumed []seqset.Set // per sender
	arrived  map[pairKey]bool
	held     []*entry
	outbox   []*entry
	toAck    []ackEntry
	ver      uint64 // last FRM version sent
	inflight bool
	waiting  []sim.NodeID
	holders  []sim.NodeID // holders of the FRM in flight or last sent
	dirty    bool
	synced   map[sim.NodeID]uint32 // holder -> incarnation that has version ver
	lastExp  uint64
}

// copyFRI is one holder's copy of a worker's FRI.
type copyFRI struct {
	holder   sim.NodeID
	inc      uint32
	ver      uint64
	prefix   []byte
	stack    pida.Stack
	seq      []uint64
	consumed []seqset.Set
	outbox   []entry
	size     int64
}

// frmBody is what an FRM carries besides the stack bytes in its payload.
type frmBody struct {
	owner    sim.ObjID
	ver      uint64
	prefix   []byte
	full     []byte // the stack's full encoding, used when a delta cannot apply
	seq      []uint64
	consumed []seqset.Set
	outbox   []entry
	size     int64 // modeled size of the copy held
}

// Interval is c, the period of the fault recovery messages.
func (p *Protocol) Interval() sim.Time { return p.cfg.Interval }

// Init prepares the restart-from-scratch fallback.
func (p *Protocol) Init(rt *sim.Runtime) {
	p.BaseProtocol.Init(rt)
	p.scratch = none.NewRestarter(rt)
	p.scratch.Restarted = p.takeOver
}

// takeOver runs when the restart from scratch that followed an unrecoverable
// pattern is done, before the workers resume: every worker starts afresh
// (no FRM sent, nothing consumed, nothing held), the backup timers start
// again, and later failures are recovered by FTPIDA* again instead of by
// more restarts from scratch.
func (p *Protocol) takeOver() {
	rt := p.RT
	p.fallback = false
	p.life++
	for w := range p.live {
		p.live[w] = p.newProc(rt.NodeOf(sim.ObjID(w)))
		p.fri[w] = nil
	}
	clear(p.timers)
	for _, s := range rt.Slots() {
		p.armTimer(s)
	}
}

// Start refuses workloads other than pida and arms the backup timers.
func (p *Protocol) Start() {
	rt := p.RT
	if err := p.cfg.Validate(); err != nil {
		rt.Abort(err.Error())
		return
	}
	if _, ok := rt.Workload().(*pida.Workload); !ok {
		rt.Abort(fmt.Sprintf("protocol abft (FTPIDA*) needs the pida workload, not %T", rt.Workload()))
		return
	}
	p.n = rt.NumObjects()
	p.live = make([]*proc, p.n)
	p.fri = make([][]*copyFRI, p.n)
	for w := range p.live {
		p.live[w] = p.newProc(rt.NodeOf(sim.ObjID(w)))
	}
	for _, s := range rt.Slots() {
		p.armTimer(s)
	}
}

func (p *Protocol) newProc(n sim.NodeID) *proc {
	return &proc{node: n, inc: p.RT.Incarnation(n), seq: make([]uint64, p.n), consumed: make([]seqset.Set, p.n),
		arrived: map[pairKey]bool{}, synced: map[sim.NodeID]uint32{}}
}

func (p *Protocol) armTimer(n sim.NodeID) {
	rt := p.RT
	if inc, ok := p.timers[n]; ok && inc == rt.Incarnation(n) {
		return
	}
	p.timers[n] = rt.Incarnation(n)
	rt.SetTimer(n, rt.Now()+p.cfg.Interval, timerBackup, p.life)
}

func (p *Protocol) active() bool { return !p.fallback && p.live != nil }

// OnSend holds every critical message until the state that produced it is
// backed up (output commit) and keeps it until the receiver commits it.
func (p *Protocol) OnSend(m *sim.Message) bool {
	if !p.active() || m.Src == m.Dst || !critical(m.Tag) {
		return true
	}
	pr := p.live[m.Src]
	pr.seq[m.Dst]++
	m.Hdr.Seq = pr.seq[m.Dst]
	m.Hdr.Flags |= flagCritical
	m.Hdr.Bytes += seqHeaderSize
	pr.held = append(pr.held, &entry{dst: m.Dst, seq: m.Hdr.Seq, msg: m})
	pr.dirty = true
	p.Counters.Held++
	return false
}

// OnArrive drops critical messages already consumed or already waiting.
func (p *Protocol) OnArrive(m *sim.Message) bool {
	if !p.active() || m.Hdr.Flags&flagCritical == 0 || p.RT.Lost(m.Dst) {
		return true
	}
	pr := p.live[m.Dst]
	k := pairKey{m.Src, m.Hdr.Seq}
	if pr.consumed[m.Src].Has(m.Hdr.Seq) || pr.arrived[k] {
		p.Counters.Duplicates++
		return false
	}
	pr.arrived[k] = true
	return true
}

// OnDispatch records the consumption of a critical message: it is acknowledged
// to its sender once an FRM holding its effect is committed.
func (p *Protocol) OnDispatch(m *sim.Message) {
	if !p.active() || m.Hdr.Flags&flagCritical == 0 {
		return
	}
	pr := p.live[m.Dst]
	delete(pr.arrived, pairKey{m.Src, m.Hdr.Seq})
	pr.consumed[m.Src].Add(m.Hdr.Seq)
	pr.toAck = append(pr.toAck, ackEntry{src: m.Src, seq: m.Hdr.Seq})
	pr.dirty = true
}

// OnHandled sends the FRM after a handler that moved work or credit.
func (p *Protocol) OnHandled(obj sim.ObjID) {
	if !p.active() {
		return
	}
	if pr := p.live[obj]; pr.dirty && !pr.inflight {
		p.sendFRM(obj)
	}
}

// OnTimer is the periodic FRM of every worker on node n that changed.
func (p *Protocol) OnTimer(n sim.NodeID, tag int32, life int64) {
	if !p.active() || tag != timerBackup || life != p.life {
		return
	}
	rt := p.RT
	for w := range p.live {
		id := sim.ObjID(w)
		if rt.Lost(id) || rt.NodeOf(id) != n {
			continue
		}
		pr := p.live[w]
		if pr.inflight {
			continue
		}
		if k := p.worker(id); pr.dirty || k.Stack().Expanded != pr.lastExp {
			p.sendFRM(id)
		}
	}
	rt.SetTimer(n, rt.Now()+p.cfg.Interval, timerBackup, p.life)
}

func (p *Protocol) worker(id sim.ObjID) *pida.Worker {
	k, _ := p.RT.Object(id).(*pida.Worker)
	return k
}

// holders are the nodes of the nearest live workers on other nodes in each
// ring direction: the ring rebuilt around lost and co-located workers.
func (p *Protocol) holders(w sim.ObjID) []sim.NodeID {
	rt := p.RT
	own := rt.NodeOf(w)
	var out []sim.NodeID
	for _, dir := range []int{-1, 1} {
		for i := 1; i < p.n; i++ {
			j := sim.ObjID(((int(w)+dir*i)%p.n + p.n) % p.n)
			if rt.Lost(j) {
				continue
			}
			if nd := rt.NodeOf(j); nd != own && rt.Alive(nd) {
				if len(out) == 0 || out[0] != nd {
					out = append(out, nd)
				}
				break
			}
		}
	}
	return out
}

// sendFRM backs worker w up to its holders: the stack delta since the last FRM
// (full stack to a holder without the previous version), the worker's scalars
// (iteration, bound, credit exponent, coordinator's credit sum), the outbox and
// the consumed sets.
func (p *Protocol) sendFRM(w sim.ObjID) {
	rt := p.RT
	pr := p.live[w]
	k := p.worker(w)
	raw, err := k.MarshalBinary()
	if err != nil {
		rt.Abort(fmt.Sprintf("abft: worker %d: %v", w, err))
		return
	}
	cut, err := stackOffset(raw)
	if err != nil {
		rt.Abort(fmt.Sprintf("abft: worker %d: %v", w, err))
		return
	}
	st := k.Stack()
	d := st.Delta()
	st.ResetDelta()
	delta, _ := d.MarshalBinary()
	pr.ver++
	v := pr.ver
	var newBytes int64
	for _, e := range pr.held {
		e.ver = v
		newBytes += e.msg.WireSize()
		pr.outbox = append(pr.outbox, e)
	}
	pr.held = nil
	for i := range pr.toAck {
		if pr.toAck[i].ver == 0 {
			pr.toAck[i].ver = v
		}
	}
	pr.dirty = false
	pr.lastExp = st.Expanded
	body := &frmBody{owner: w, ver: v, prefix: raw[:cut:cut], full: raw[cut:], seq: append([]uint64(nil), pr.seq...),
		consumed: make([]seqset.Set, p.n)}
	for i := range pr.consumed {
		body.consumed[i] = pr.consumed[i].Clone()
	}
	for _, e := range pr.outbox {
		body.outbox = append(body.outbox, *e)
	}
	body.size = p.cfg.HeaderBytes + int64(st.Len())*p.cfg.FrameBytes
	hs := p.holders(w)
	pr.waiting = pr.waiting[:0]
	for _, h := range hs {
		useDelta := false
		if inc, ok := pr.synced[h]; ok && inc == rt.Incarnation(h) {
			useDelta = true
		}
		size, payload := p.cfg.HeaderBytes+int64(len(d.Frames))*p.cfg.FrameBytes+newBytes, delta
		flags := uint32(1)
		if !useDelta {
			size, payload, flags = body.size+newBytes, body.full, 0
			p.Counters.FullFRMs++
		}
		p.nextID++
		p.bodies[p.nextID] = body
		rt.SendControl(&sim.Message{Src: w, Dst: sim.None, From: rt.NodeOf(w), To: h, Tag: ctlFRM, Size: size, Epoch: rt.Epoch(),
			Payload: payload, Hdr: sim.Header{Seq: v, Op: p.nextID, Flags: flags}})
		p.Counters.FRMs++
		p.Counters.FRMBytes += size
		rt.Stats().CheckpointBytes += size // an FRM is an incremental checkpoint to a neighbour's memory
		pr.synced[h] = rt.Incarnation(h)
		pr.waiting = append(pr.waiting, h)
	}
	for h := range pr.synced {
		if !containsNode(hs, h) {
			delete(pr.synced, h)
		}
	}
	pr.holders = append(pr.holders[:0], hs...)
	pr.inflight = true
	if len(hs) > 0 {
		rt.Stats().Checkpoints++ // one backup point (Lemma 3), replicated to every holder
	}
	if len(pr.waiting) == 0 {
		p.commit(w) // no other node to hold a copy (one node): nothing to wait for
	}
}

func containsNode(ns []sim.NodeID, n sim.NodeID) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}

// OnControl handles FRMs at holders, backupACKs and workACKs.
func (p *Protocol) OnControl(m *sim.Message) {
	if !p.active() || m.Epoch != p.RT.Epoch() {
		return // or sent before a restart from scratch
	}
	switch m.Tag {
	case ctlFRM:
		p.storeFRM(m)
	case ctlBackupAck:
		p.Counters.BackupAcks++
		w := m.Src
		pr := p.live[w]
		if p.RT.Lost(w) || p.RT.NodeOf(w) != m.To || !pr.inflight || m.Hdr.Seq != pr.ver {
			return
		}
		pr.waiting = removeNode(pr.waiting, m.From)
		if len(pr.waiting) == 0 {
			p.commit(w)
		}
	case ctlWorkAck:
		p.Counters.WorkAcks++
		src := m.Src
		if p.RT.Lost(src) || p.RT.NodeOf(src) != m.To {
			return // the sender was rebuilt elsewhere; duplicates are dropped at the receiver
		}
		pr := p.live[src]
		for i, e := range pr.outbox {
			if e.dst == m.Dst && e.seq == m.Hdr.Seq {
				pr.outbox = append(pr.outbox[:i], pr.outbox[i+1:]...)
				break
			}
		}
	}
}

func removeNode(ns []sim.NodeID, n sim.NodeID) []sim.NodeID {
	out := ns[:0]
	for _, x := range ns {
		if x != n {
			out = append(out, x)
		}
	}
	return out
}

// storeFRM updates holder m.To's copy of the owner's FRI and acknowledges it.
func (p *Protocol) storeFRM(m *sim.Message) {
	rt := p.RT
	body := p.bodies[m.Hdr.Op]
	delete(p.bodies, m.Hdr.Op)
	if body == nil {
		return
	}
	w := body.owner
	var c *copyFRI
	for _, x := range p.fri[w] {
		if x.holder == m.To {
			c = x
		}
	}
	if c != nil && c.inc != rt.Incarnation(m.To) {
		p.dropCopy(w, c)
		c = nil
	}
	if c == nil {
		c = &copyFRI{holder: m.To, inc: rt.Incarnation(m.To)}
		p.fri[w] = append(p.fri[w], c)
	}
	applied := false
	if m.Hdr.Flags == 1 && c.ver == body.ver-1 && c.prefix != nil {
		var d pida.Delta
		if d.UnmarshalBinary(m.Payload) == nil && c.stack.ApplyDelta(d) == nil {
			applied = true
		}
	}
	if !applied {
		if m.Hdr.Flags == 1 {
			p.Counters.DeltaMismatch++
		}
		if err := c.stack.UnmarshalBinary(body.full); err != nil {
			rt.Abort(fmt.Sprintf("abft: FRI of worker %d: %v", w, err))
			return
		}
	}
	rt.MemAdd(m.To, sim.MemBackup, body.size-c.size)
	c.ver, c.prefix, c.seq, c.consumed, c.outbox, c.size = body.ver, body.prefix, body.seq, body.consumed, body.outbox, body.size
	if rt.Lost(w) {
		return
	}
	rt.SendControl(&sim.Message{Src: w, Dst: sim.None, From: m.To, To: rt.NodeOf(w), Tag: ctlBackupAck, Epoch: rt.Epoch(),
		Size: p.cfg.AckBytes, Hdr: sim.Header{Seq: body.ver}})
}

// AuditMemory implements sim.MemoryAuditor: each live node accounts as
// MemBackup the sizes of the FRI copies it holds, and nothing else.
func (p *Protocol) AuditMemory() error {
	rt := p.RT
	held := make([]int64, rt.NumNodes())
	for _, copies := range p.fri {
		for _, c := range copies {
			if rt.Holds(c.holder, c.inc) {
				held[c.holder] += c.size
			}
		}
	}
	if err := rt.MemMismatch(sim.MemBackup, held, "FRI copies"); err != nil {
		return fmt.Errorf("abft: %w", err)
	}
	return nil
}

func (p *Protocol) dropCopy(w sim.ObjID, c *copyFRI) {
	rt := p.RT
	out := p.fri[w][:0]
	for _, x := range p.fri[w] {
		if x != c {
			out = append(out, x)
		}
	}
	p.fri[w] = out
	if rt.Holds(c.holder, c.inc) {
		rt.MemAdd(c.holder, sim.MemBackup, -c.size)
	}
}

// commit: every live holder has the FRM; the critical messages it holds leave,
// the messages it consumed are acknowledged to their senders (workACK), and
// copies at nodes that are no longer holders are dropped.
func (p *Protocol) commit(w sim.ObjID) {
	rt := p.RT
	pr := p.live[w]
	pr.inflight = false
	node := rt.NodeOf(w)
	for _, e := range pr.outbox {
		if !e.released && e.ver <= pr.ver {
			e.released = true
			e.msg.From = node
			rt.Transmit(e.msg)
		}
	}
	rest := pr.toAck[:0]
	for _, a := range pr.toAck {
		if a.ver == 0 || a.ver > pr.ver {
			rest = append(rest, a)
			continue
		}
		if !rt.Lost(a.src) {
			rt.SendControl(&sim.Message{Src: a.src, Dst: w, From: node, To: rt.NodeOf(a.src), Tag: ctlWorkAck, Epoch: rt.Epoch(),
				Size: p.cfg.AckBytes, Hdr: sim.Header{Seq: a.seq}})
		}
	}
	pr.toAck = rest
	for _, c := range append([]*copyFRI(nil), p.fri[w]...) {
		if !containsNode(pr.holders, c.holder) {
			p.dropCopy(w, c)
		}
	}
	if pr.dirty {
		p.sendFRM(w)
	}
}

// bestCopy is the newest FRI of w on a live node.
func (p *Protocol) bestCopy(w sim.ObjID) *copyFRI {
	rt := p.RT
	var best *copyFRI
	for _, c := range p.fri[w] {
		if c.prefix == nil || !rt.Holds(c.holder, c.inc) {
			continue
		}
		if best == nil || c.ver > best.ver {
			best = c
		}
	}
	return best
}

var _ sim.MemoryAuditor = (*Protocol)(nil)
