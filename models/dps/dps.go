package dps

// This file is the protocol of Gerlach & Hersch §3-6 mapped onto ftsim: a DPS
// thread is an object, a data object is an application message.
//
// Identity of a data object. The paper identifies a re-posted data object by
// its sequence number and its operation identifier. Here the operation
// identifier is (sender, sender life, rank of the object on the sender →
// receiver edge): Hdr.Op = life<<32 | rank. The rank is what a deterministic
// thread reproduces when it re-executes, whatever order its inputs are
// re-executed in (a Life tile posts its borders in generation order), while
// SeqOut = max(SeqIn, SeqOut) + 1 depends on which input triggered the send, and
// re-execution in sequence-number order need not pick the same trigger as the
// original run. Silent re-execution therefore drops a re-posted object when its
// operation identifier was already received; the sequence number orders
// re-execution (its job in §4). With Config.Audit the protocol also records
// whether the sequence number of every dropped re-post equalled the original's
// (SeqMismatches), which is what the paper's literal rule would have needed.
//
// Gap forwarding. A message is duplicated to the backups its receiver has when
// it is sent (Hdr.SN carries the receiver's backup generation then). A backup
// regenerated later misses the duplicates of messages sent before it existed
// and received after its state was copied; the receiver forwards those to it
// when it accepts them. The paper leaves this window implicit.
//
// Threads whose outputs depend on the arrival order of concurrent inputs
// (outside the paper's determinism assumption) need the handling order logged
// at their backups: order.go (Config.LogOrder). The protocol's memory is
// measured in memory.go.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"ftsim/internal/peermap"
	"ftsim/internal/seqset"
	"ftsim/models/none"
	"ftsim/sim"
)

// Config configures the protocol (scenario kind "dps").
type Config struct {
	// Backups is the number of backup threads per stateful object (the paper uses 1).
	Backups int
	// Every checkpoints an object to its backups after every Every messages it
	// handled; 0 disables this trigger.
	Every int64
	// EveryProgress checkpoints an object once its progress (sim.Object's
	// Progress: generations for Life) advanced by this much since its last
	// checkpoint, the paper's "every k iterations" (Fig. 12); 0 disables.
	EveryProgress int64
	// Period checkpoints every object every Period of simulated time; 0 disables.
	Period sim.Time
	// AutoStateless declares stateless (no backups, no duplicates, tasks resent
	// by the split) the objects whose ModeledSize is 0 at the start, when the
	// workload is a task farm (TaskFarm) whose master can list outstanding
	// tasks (Resubmitter).
	AutoStateless bool
	// Stateless lists more stateless objects (same condition on the workload).
	Stateless []sim.ObjID
	// Shrink: a stateless thread lost with its node is not re-created; the
	// split resends its unconfirmed tasks to the surviving threads of the
	// collection, round robin (§6: "the shrunken thread collection"). It is
	// re-created only when none survives, or when the master cannot reassign
	// tasks (Reassigner).
	Shrink bool
	// HeaderBytes is the modeled size of the sequence number and operation
	// identifier on every application message (protocol bytes); 0 ignores it.
	HeaderBytes int64
	// EntryBytes is the modeled size of one entry of a checkpoint's list of
	// processed objects.
	EntryBytes int64
	// LogOrder makes every stateful thread log the order in which it handles
	// data objects to its backups and hold its outputs until that order is
	// there, so that re-execution reproduces threads whose outputs depend on
	// the arrival order of concurrent inputs (order.go); each determinant costs
	// EntryBytes on the wire.
	LogOrder bool
	// Audit keeps oracle bookkeeping for tests (original sequence numbers,
	// double processing); it costs memory and changes nothing else.
	Audit bool
	// Spread places the backups of a node's threads on different nodes (the
	// j-th thread of a node starts j nodes further than the paper's Fig. 4
	// rotation), so that a failed node's threads are taken over by several
	// nodes instead of doubling the load of the next one. The price: with
	// several threads per node, any two simultaneous failures may take a
	// thread and its backup, where with the plain rotation only neighbours do.
	Spread bool
	// Offset starts the rotation Offset nodes after the thread's own (0
	// means 1, the paper's next node): a multiple of the failure-domain size
	// puts a thread's backups outside its domain (backup_offset).
	Offset int
}

// DefaultConfig is one backup per thread, a checkpoint every 100 handled
// messages, automatic stateless segments whose collections shrink after a
// failure, and 16-byte processed-list entries.
func DefaultConfig() Config {
	return Config{Backups: 1, Every: 100, AutoStateless: true, Shrink: true, EntryBytes: 16}
}

// TaskFarm is what the stateless-segment mechanism needs from a master/worker
// workload (the farm implements it): the split/merge object and how a task is
// sent.
type TaskFarm interface {
	Master() sim.ObjID
	TaskMessage(task int) (tag int32, size int64, payload []byte)
}

// Resubmitter is implemented by a farm's master object: the tasks a worker
// holds and has not returned yet (the copies the split keeps until the merge
// confirms them).
type Resubmitter interface {
	Outstanding(worker sim.ObjID) []int
}

// Reassigner is implemented by a farm's master that can record a task as
// handed to another worker (Config.Shrink needs it).
type Reassigner interface {
	Reassign(task int, from, to sim.ObjID)
}

// Counters are the protocol's own measurements of a run.
type Counters struct {
	Duplicates, DuplicateBytes int64 // copies of data objects sent to backup threads
	Checkpoints                int64 // thread checkpoints sent (one per backup)
	CheckpointBytes            int64
	SkippedCheckpoints         int64 // timer ticks without checkpoint: the previous one was still on its way, or nothing was handled since
	Recovered                  int   // threads re-activated from a backup
	Replayed                   int64 // stored data objects re-injected for re-execution
	Reposted                   int64 // data objects re-posted by re-execution (rank already used)
	SilentDrops                int64 // re-posted objects dropped on arrival (already received)
	LateCopies                 int64 // duplicates reaching a re-activated backup that already had them
	WrongDrops                 int64 // dropped objects that were not re-posts (must stay 0)
	OvertakenOriginals         int64 // originals dropped because their re-post, sent after their sender's failure, arrived first
	Regenerated                int   // backup threads created after a failure
	GapForwards                int64 // copies forwarded to regenerated backups
	Resent                     int   // tasks resent by the split after a failure
	Reassigned                 int   // Shrink: of those, tasks resent to another thread of the collection
	Recreated                  int   // stateless threads re-created
	Retired                    int   // Shrink: stateless threads lost and not re-created
	StaleResults               int64 // results of tasks handed out by a lost split, dropped
	SeqMismatches              int64 // Audit: dropped re-posts whose sequence number differed
	DoubleProcessed            int64 // Audit: an object handled twice by one incarnation (must stay 0)
	Determinants               int64 // LogOrder: handling-order entries sent to backups
	DeterminantBytes           int64
	Held                       int64 // LogOrder: outputs held back until their determinants arrived
	ReplayWaits                int64 // LogOrder: times re-execution waited for a logged object still in flight
}

// Protocol tags of control messages and timers.
const (
	tagDup   int32 = 1 // a duplicate data object for a backup thread
	tagCkpt  int32 = 2 // a checkpoint (Transfer)
	tagRegen int32 = 3 // the state of a regenerated backup (Transfer)
	tagFwd   int32 = 4 // a gap-forwarded duplicate
	tagTimer int32 = 1
)

// Header flags on application messages.
const (
	flagRepost   uint32 = 1 // re-posted by re-execution
	flagResend   uint32 = 2 // task resent by the split: never a duplicate
	flagInjected uint32 = 4 // re-injected from a backup queue
)

type chanKey struct {
	src  sim.ObjID
	life uint32
}

type msgKey struct {
	src sim.ObjID
	op  uint64
}

func opID(life uint32, rank uint64) uint64 { return uint64(life)<<32 | rank&0xffffffff }
func opLife(op uint64) uint32              { return uint32(op >> 32) }
func opRank(op uint64) uint64              { return op & 0xffffffff }

// idSet is a set of data-object identities, by edge. Ranks start at 0 and
// a seqset.Set's numbers at 1: rank r is number r+1.
type idSet struct {
	edges peermap.Map[chanKey, seqset.Set]
}

func newIDSet() *idSet { return &idSet{} }

func (s *idSet) has(src sim.ObjID, op uint64) bool {
	i := s.edges.Find(chanKey{src, opLife(op)})
	return i >= 0 && s.edges.At(i).Has(opRank(op)+1)
}

func (s *idSet) add(src sim.ObjID, op uint64) {
	s.edges.Ptr(chanKey{src, opLife(op)}).Add(opRank(op) + 1)
}

// covers reports whether s holds every id of o.
func (s *idSet) covers(o *idSet) bool {
	for i := range o.edges.Len() {
		e := o.edges.At(i)
		j := s.edges.Find(o.edges.Key(i))
		if j < 0 { // s has no id on this edge: o must have none either
			var none seqset.Set
			if !none.Covers(e) {
				return false
			}
			continue
		}
		if !s.edges.At(j).Covers(e) {
			return false
		}
	}
	return true
}

func (s *idSet) clone() *idSet {
	return &idSet{edges: s.edges.Clone(func(e seqset.Set) seqset.Set { return e.Clone() })}
}

// pstate is the protocol part of a thread's state, checkpointed with it.
type pstate struct {
	seqOut uint64
	seqIn  uint64 // largest sequence number of the objects handled so far (the paper's SeqIn)
	life   uint32
	sent   peermap.Map[sim.ObjID, uint64] // next rank per receiver
}

// clone returns a copy that shares nothing with s: a checkpoint's pstate is
// never modified, the thread's is.
func (s pstate) clone() pstate {
	c := s
	c.sent = s.sent.Clone(func(r uint64) uint64 { return r })
	return c
}

// ckptData is what a backup thread receives: a checkpoint, or the whole
// content of a regenerated backup.
type ckptData struct {
	stamp     uint64
	act       uint32            // the thread's activation counter when the state was taken
	count     uint64            // LogOrder: handling rank the state covers
	log       map[uint64]msgKey // regeneration: the consumed backup's handling-order log
	initial   bool              // the workload's initial state: recovery re-runs Start
	unstarted bool              // a state taken before the object's Start ran: Restore runs it
	state     []byte            // nil when initial
	size      int64             // modeled state size
	pst       pstate
	processed *idSet
	queue     []*sim.Message // regeneration: stored duplicates to carry over
}

// backup is one backup thread of an object, on a node.
type backup struct {
	node  sim.NodeID
	inc   uint32
	gen   uint32 // the owner's backup generation when this backup was registered
	ready bool   // a state has arrived
	ck    *ckptData
	queue peermap.Map[msgKey, *sim.Message] // stored duplicates
	bytes int64                             // queue and log bytes accounted
	log   map[uint64]msgKey                 // LogOrder: handling rank -> data object, after ck.count
	// sentBefore is, for a backup registered after the start, how many
	// data objects each sender had sent the thread by then: their
	// duplicates went to the backups before this one, so each reaches it
	// only in its first state or by a gap forward (complete).
	sentBefore []sentCount
}

// sentCount is how many data objects src had sent in its life.
type sentCount struct {
	src  sim.ObjID
	life uint32
	n    uint64
}

// thread is the protocol's record of one object.
type thread struct {
	stateless bool
	pst       pstate
	received  *idSet // accepted by the active thread (queued or handled)
	processed *idSet // handled by the active thread
	since     int64  // processed since the last checkpoint
	handled   int64  // handled since the last checkpoint (Every)
	ckProg    int64  // the object's progress at its last checkpoint (EveryProgress)
	backups   []*backup
	bkGen     uint32
	replaying int    // re-injected objects not yet handled
	inGen     uint32 // split generation of the task being handled (stateless threads)
	resendDue bool   // the split resends its outstanding tasks once replaying is 0
	retired   bool   // a stateless thread lost and not re-created (Shrink)
	timerGen  uint32
	tick      tickState
	ckSending int  // checkpoint transfers of the thread still on their way
	logs      bool // LogOrder applies to this thread
	ord       orderState
	// audit
	dispatched map[msgKey]struct{}
	// hw tells a re-posted data object from a new one: per receiver, the
	// highest rank sent in the current life, plus one. It survives the
	// thread's restores (it is what re-execution is checked against).
	hw peermap.Map[sim.ObjID, highWater]
}

// highWater is the next rank never sent on an edge in life.
type highWater struct {
	life uint32
	next uint64
}

// Protocol is DPS fault tolerance: backup threads on rotated nodes,
// duplicated data objects, sequence numbers, independent thread checkpoints,
// recovery by re-execution with silent re-execution, regeneration of backups,
// and the stateless-segment mechanism for task farms.
type Protocol struct {
	sim.BaseProtocol
	cfg      Config
	th       []thread
	stamp    uint64
	farm     TaskFarm
	split    sim.ObjID
	next     int // round robin for re-created stateless threads
	scratch  *none.Restarter
	fallback bool
	origSeq  map[[3]uint64]uint64 // Audit: auditKey -> original sequence number
	repostIn map[[3]uint64]bool   // Audit: auditKey of the re-posts accepted (their original had not arrived)
	copies   map[sim.ObjID][]taskCopy
	splitGen uint32               // the split's generation: results of tasks of an older one are void
	reassign bool                 // the split's object implements Reassigner
	lostOnly bool                 // the split's pending resend is for lost workers only (it restarted from scratch)
	memNode  [][numMemKinds]int64 // by node
	memTot   [numMemKinds]int64
	memPeak  [numMemKinds]int64

	// C holds the counters of the run.
	C Counters
}

// New returns the protocol, or an error for an invalid configuration. Its
// errors start with the scenario key at fault ("protocol.backups: ..."),
// which the scenarios package locates at the key's line.
func New(cfg Config) (*Protocol, error) {
	if err := sim.CheckDelay("protocol.period", cfg.Period); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		key string
		v   int64
	}{
		{"backups", int64(cfg.Backups)}, {"every", cfg.Every}, {"every_progress", cfg.EveryProgress},
		{"header_bytes", cfg.HeaderBytes}, {"entry_bytes", cfg.EntryBytes}, {"backup_offset", int64(cfg.Offset)},
	} {
		if c.v < 0 {
			return nil, fmt.Errorf("protocol.%s: must not be negative, got %d", c.key, c.v)
		}
	}
	return &Protocol{cfg: cfg, split: sim.None, splitGen: 1}, nil
}

// CheckNodes reports an error naming protocol.backups when a cluster of
// nodes application nodes cannot hold the backups asked for: each backup of
// a thread lives on another node than the thread and than its other backups
// (Start), so there can be at most nodes − 1. Start would quietly create
// fewer, and a run would then be reported as that many backups' run.
func (cfg Config) CheckNodes(nodes int) error {
	if cfg.Backups > nodes-1 {
		return fmt.Errorf("protocol.backups: %d backups per thread need as many nodes besides the thread's own, and cluster.nodes = %d (at most %d)",
			cfg.Backups, nodes, max(nodes-1, 0))
	}
	return nil
}

// Init prepares the fallback restart.
func (p *Protocol) Init(rt *sim.Runtime) {
	p.BaseProtocol.Init(rt)
	p.scratch = none.NewRestarter(rt)
	p.scratch.Restarted = p.takeOver
}

// Start creates the backup threads, holding the initial state: object i's
// k-th backup lives on the node at slot (slot(i) + 1 + k) mod N (the paper's
// Fig. 4), or with Spread at slot(i) + 1 + (j + k) mod (N − 1) for the j-th
// thread of its node; with an Offset o, k counts from o − 1.
func (p *Protocol) Start() {
	rt := p.RT
	p.th = make([]thread, rt.NumObjects())
	p.copies = map[sim.ObjID][]taskCopy{}
	if p.cfg.Audit {
		p.origSeq = map[[3]uint64]uint64{}
		p.repostIn = map[[3]uint64]bool{}
	}
	p.setUp(p.statelessSet())
}

// takeOver runs when the restart from scratch that followed an unrecoverable
// pattern is done, before the application resumes: every thread starts a new
// life from its initial state with backups placed as at the start (on the
// slots as they are now), so that later failures are handled by DPS again
// instead of by more restarts from scratch.
func (p *Protocol) takeOver() {
	p.fallback = false
	for id := range p.copies {
		p.releaseCopies(id)
	}
	p.lostOnly = false
	stateless := map[sim.ObjID]bool{}
	for i := range p.th {
		t := &p.th[i]
		if t.stateless {
			stateless[sim.ObjID(i)] = true
		}
		// what outlives a life: the life counter (operation ids of the new
		// life are new), the re-post audit, the generations that void
		// timers and order callbacks of the old one, and its checkpoints
		// still on their way (they report to the counter)
		*t = thread{pst: pstate{life: t.pst.life + 1}, hw: t.hw, timerGen: t.timerGen,
			ord: orderState{act: t.ord.act + 1}, ckSending: t.ckSending}
	}
	p.setUp(stateless)
}

// setUp gives every thread empty received and processed sets and, unless it
// is stateless, its backups holding the initial state, and arms its
// checkpoint timer.
func (p *Protocol) setUp(stateless map[sim.ObjID]bool) {
	rt := p.RT
	slots := rt.Slots()
	idx := map[sim.NodeID]int{}
	for i, s := range slots {
		idx[s] = i
	}
	nb := min(p.cfg.Backups, len(slots)-1)
	local := map[sim.NodeID]int{} // threads of each node placed so far
	for i := range p.th {
		t := &p.th[i]
		t.received, t.processed = newIDSet(), newIDSet()
		if p.cfg.Audit {
			t.dispatched = map[msgKey]struct{}{}
		}
		id := sim.ObjID(i)
		if stateless[id] {
			t.stateless = true
			continue
		}
		// The farm's split restarts from its checkpoint rather than
		// re-executing (see activate): it needs no order.
		t.logs = p.cfg.LogOrder && id != p.split
		t.bkGen = 1
		s := idx[rt.NodeOf(id)]
		// Rotation as in the paper's Fig. 4; with Spread the j-th thread of
		// a node starts its backups j nodes further.
		j := 0
		if p.cfg.Spread {
			j = local[rt.NodeOf(id)]
			local[rt.NodeOf(id)]++
		}
		size := rt.ModeledSize(id)
		for k := range nb {
			node := slots[(s+1+(p.skip()+j+k)%(len(slots)-1))%len(slots)]
			ck := &ckptData{act: t.ord.act, initial: true, size: size, pst: t.pst.clone(), processed: newIDSet()}
			bk := &backup{node: node, inc: rt.Incarnation(node), gen: 1, ready: true, ck: ck}
			t.backups = append(t.backups, bk)
			p.memAdd(node, memState, size)
		}
		if p.cfg.Period > 0 {
			p.armTimer(id)
		}
	}
}

// statelessSet decides which objects are stateless segments: only in a task
// farm whose master can list outstanding tasks, never the master itself.
func (p *Protocol) statelessSet() map[sim.ObjID]bool {
	rt := p.RT
	out := map[sim.ObjID]bool{}
	farm, ok := rt.Workload().(TaskFarm)
	if !ok {
		return out
	}
	master := farm.Master()
	if _, ok := rt.Object(master).(Resubmitter); !ok {
		return out
	}
	for i := range rt.NumObjects() {
		id := sim.ObjID(i)
		if id != master && p.cfg.AutoStateless && rt.ModeledSize(id) == 0 {
			out[id] = true
		}
	}
	for _, id := range p.cfg.Stateless {
		if id < 0 || int(id) >= rt.NumObjects() {
			// a silently ignored id would run a different experiment
			rt.Abort(fmt.Sprintf("protocol.stateless: object %d does not exist (the workload has %d objects)", id, rt.NumObjects()))
			return out
		}
		if id != master {
			out[id] = true
		}
	}
	if len(out) > 0 {
		p.farm, p.split = farm, master
		_, p.reassign = rt.Object(master).(Reassigner)
	}
	return out
}

func (p *Protocol) cpuCost(size int64) sim.Time {
	c := p.RT.Config()
	if c.CPULoad == 0 || size <= 0 {
		return 0
	}
	return sim.FromSeconds(c.CPULoad * float64(size) / c.Bandwidth)
}

func (p *Protocol) charge(n sim.NodeID, size int64) {
	if d := p.cpuCost(size); d > 0 {
		p.RT.ChargeCPU(n, d, func() {})
	}
}

// valid reports whether backup bk is still there: its node has not failed
// since bk was set up on it, and is still one of the application's. (A
// backup set up on a node that had already failed, before its failure was
// detected, has the incarnation of the dead node: once that node is
// repaired, only its absence from the slots tells the backup is gone.)
func (p *Protocol) valid(bk *backup) bool {
	rt := p.RT
	return rt.Alive(bk.node) && rt.Incarnation(bk.node) == bk.inc && rt.SlotIndex(bk.node) >= 0
}

// OnSend stamps the sequence number and operation identifier and duplicates the
// data object to every backup thread of its receiver.
func (p *Protocol) OnSend(m *sim.Message) bool {
	if p.fallback {
		return true
	}
	rt := p.RT
	t := &p.th[m.Src]
	t.pst.seqOut = max(t.pst.seqIn, t.pst.seqOut) + 1
	next := t.pst.sent.Ptr(m.Dst)
	rank := *next
	*next++
	m.Hdr.Seq = t.pst.seqOut
	m.Hdr.Op = opID(t.pst.life, rank)
	m.Hdr.Bytes += p.cfg.HeaderBytes
	if p.cfg.HeaderBytes > 0 {
		st := rt.Stats()
		st.ExtraBytes += p.cfg.HeaderBytes
	}
	hw := t.hw.Ptr(m.Dst)
	if hw.life != t.pst.life {
		*hw = highWater{life: t.pst.life}
	}
	if rank < hw.next {
		m.Hdr.Flags |= flagRepost
		p.C.Reposted++
	} else {
		hw.next = rank + 1
		if p.origSeq != nil {
			p.origSeq[auditKey(m)] = m.Hdr.Seq
		}
	}
	switch {
	case m.Src == p.split:
		m.Hdr.Inc = p.splitGen
	case t.stateless:
		m.Hdr.Inc = t.inGen
	}
	if p.hold(t, m) {
		return false
	}
	p.duplicate(m)
	return true
}

// duplicate sends the copies of data object m to the backup threads of its
// receiver (or keeps the split's copy of a task), as m leaves.
func (p *Protocol) duplicate(m *sim.Message) {
	t := &p.th[m.Src]
	d := &p.th[m.Dst]
	if d.stateless {
		if !t.stateless {
			p.keepCopy(m)
		}
		return
	}
	if !p.duplicated(m) {
		return // results reach the split's backups by forwardGap
	}
	m.Hdr.SN = uint64(d.bkGen)
	for _, bk := range d.backups {
		p.sendCopy(m, bk.node, tagDup)
	}
}

// taskCopy is the copy of a task the split keeps, on its node, until the merge
// confirms it (accounted memory only: the split's Outstanding is the content).
type taskCopy struct {
	node sim.NodeID
	inc  uint32
	size int64
}

// keepCopy accounts the copy of a task the split keeps until the merge confirms it.
func (p *Protocol) keepCopy(m *sim.Message) {
	c := taskCopy{m.From, p.RT.Incarnation(m.From), m.WireSize()}
	p.copies[m.Dst] = append(p.copies[m.Dst], c)
	p.memAdd(c.node, memCopy, c.size)
}

func (p *Protocol) releaseCopy(c taskCopy) {
	if p.RT.Alive(c.node) && p.RT.Incarnation(c.node) == c.inc {
		p.memAdd(c.node, memCopy, -c.size)
	}
}

// confirmCopy releases the oldest copy of a task held by worker: its result reached the merge.
func (p *Protocol) confirmCopy(worker sim.ObjID) {
	q := p.copies[worker]
	if len(q) == 0 {
		return
	}
	p.releaseCopy(q[0])
	p.copies[worker] = q[1:]
}

// releaseCopies forgets the copies of worker's tasks (they are resent, and kept again).
func (p *Protocol) releaseCopies(worker sim.ObjID) {
	for _, c := range p.copies[worker] {
		p.releaseCopy(c)
	}
	p.copies[worker] = nil
}

// sendCopy sends a duplicate of data object m to node to; the original tag
// travels in Hdr.TN.
func (p *Protocol) sendCopy(m *sim.Message, to sim.NodeID, tag int32) {
	rt := p.RT
	c := m.Clone()
	c.To = to
	c.Tag = tag
	c.Hdr.TN = uint64(uint32(m.Tag))
	c.Hdr.Flags &^= flagInjected
	rt.SendControl(c)
	p.C.Duplicates++
	p.C.DuplicateBytes += c.WireSize()
	p.charge(c.From, c.Size)
}

// OnArrive drops re-posted data objects the thread already received (silent
// re-execution) and forwards gap copies to regenerated backups.
func (p *Protocol) OnArrive(m *sim.Message) bool {
	if p.fallback {
		return true
	}
	t := &p.th[m.Dst]
	if m.Dst == p.split && p.th[m.Src].stateless && m.Hdr.Inc != p.splitGen {
		p.C.StaleResults++
		return false
	}
	if m.Hdr.Flags&flagResend != 0 || t.stateless {
		// a stateless thread recomputes a duplicate task harmlessly: the merge
		// ignores a second result, and a re-executed split that handed out its
		// tasks in another order must reach every worker
		return true
	}
	if t.received.has(m.Src, m.Hdr.Op) {
		p.drop(m)
		return false
	}
	t.received.add(m.Src, m.Hdr.Op)
	if p.repostIn != nil && m.Hdr.Flags&flagRepost != 0 {
		p.repostIn[auditKey(m)] = true
	}
	p.forwardGap(t, m, p.RT.NodeOf(m.Dst))
	if t.ord.replay {
		p.deliverReplay(m.Dst, p.park(m.Dst, m))
		return false
	}
	return true
}

func (p *Protocol) drop(m *sim.Message) {
	if m.Hdr.Flags&flagRepost == 0 {
		// An original still on the wire when its sender failed may arrive
		// after the re-executed sender's re-post of it (sent from a node
		// nearer the receiver, or the receiver's own): dropping it is right.
		if p.repostIn[auditKey(m)] {
			p.C.OvertakenOriginals++
		} else {
			p.C.WrongDrops++
		}
		return
	}
	p.C.SilentDrops++
	if p.origSeq != nil {
		if s, ok := p.origSeq[auditKey(m)]; ok && s != m.Hdr.Seq {
			p.C.SeqMismatches++
		}
	}
}

// auditKey names data object m for the audit: (sender, receiver, operation).
func auditKey(m *sim.Message) [3]uint64 {
	return [3]uint64{uint64(m.Src), uint64(m.Dst), m.Hdr.Op}
}

// duplicated reports whether data object m to a stateful thread is
// duplicated to its receiver's backups as it is sent: all are but the
// results of stateless threads to the split, which forwardGap copies to
// the split's backups once accepted. Re-activation does not need them (the
// split is not re-executed, see activate), so a backup missing them is
// still complete.
func (p *Protocol) duplicated(m *sim.Message) bool {
	return m.Dst != p.split || !p.th[m.Src].stateless
}

// forwardGap copies an accepted data object to the backups registered after it
// was sent (they did not get its duplicate).
func (p *Protocol) forwardGap(t *thread, m *sim.Message, at sim.NodeID) {
	if t.stateless {
		return
	}
	for _, bk := range t.backups {
		if uint64(bk.gen) > m.Hdr.SN && bk.node != at {
			c := m.Clone()
			c.From = at
			c.SentAt = p.RT.Now()
			p.sendCopy(c, bk.node, tagFwd)
			p.C.GapForwards++
		}
	}
}

// OnDispatch raises SeqIn to the object's sequence number and records the
// object as processed. SeqIn is the largest sequence number handled so far, not
// that of the current object alone: a merge whose last input carries a small
// number must still number its output above all its inputs (§4).
func (p *Protocol) OnDispatch(m *sim.Message) {
	if p.fallback {
		return
	}
	p.unpark(m.Dst) // a tick during the handler checkpoints once it ends
	t := &p.th[m.Dst]
	t.pst.seqIn = max(t.pst.seqIn, m.Hdr.Seq)
	t.inGen = m.Hdr.Inc
	if m.Hdr.Flags&flagInjected != 0 && t.replaying > 0 {
		t.replaying--
	}
	if m.Hdr.Flags&flagResend != 0 {
		return
	}
	if p.th[m.Src].stateless && !t.stateless {
		p.confirmCopy(m.Src)
	}
	if t.dispatched != nil && !t.stateless {
		k := msgKey{m.Src, m.Hdr.Op}
		if _, ok := t.dispatched[k]; ok {
			p.C.DoubleProcessed++
		}
		t.dispatched[k] = struct{}{}
	}
	t.processed.add(m.Src, m.Hdr.Op)
	t.since++
	if p.logging(t) {
		p.logDispatch(m.Dst, m)
	}
}

// OnHandled checkpoints every Every handled messages and lets a split that
// finished re-executing resend its outstanding tasks.
func (p *Protocol) OnHandled(id sim.ObjID) {
	if p.fallback {
		return
	}
	t := &p.th[id]
	t.handled++
	if t.resendDue && t.replaying == 0 {
		t.resendDue = false
		p.resendAll()
	} else if id == p.split && p.C.Retired > 0 && t.replaying == 0 && !t.resendDue {
		p.resendRetired()
	}
	due := p.cfg.Every > 0 && t.handled >= p.cfg.Every ||
		p.cfg.EveryProgress > 0 && p.RT.ObjectProgress(id)-t.ckProg >= p.cfg.EveryProgress
	if !t.stateless && due {
		if p.logging(t) {
			t.handled, t.ckProg = 0, p.RT.ObjectProgress(id)
			p.whenSettled(id, func() {
				if !p.fallback && !p.RT.Lost(id) {
					p.checkpoint(id)
				}
			})
		} else {
			p.checkpoint(id)
		}
	}
}

// tickState is where a thread's checkpoint timer (every Period) stands.
//
// A tick at which the checkpoint would be skipped (see OnTimer) does not
// re-arm the timer: it parks it, and every tick after it would be skipped
// too until something the skip depends on changes: the thread starts a
// handler (OnDispatch), one of its checkpoints reaches a backup, or the
// checkpoint a tick waits for is taken. unpark then re-arms the timer at the
// next tick of the same grid. The ticks in between are counted as skipped,
// not executed: with a period far shorter than a checkpoint's transfer or
// than the gaps between handlers (1 ns, say), running them kept the run
// crawling at its first percent and, while the thread ran, gave each tick a
// waiting closure, gigabytes of them.
type tickState struct {
	last    sim.Time   // the time of the latest tick: the grid is last + k·Period
	node    sim.NodeID // the node the timer lives on
	waiting bool       // the latest tick's checkpoint waits for the thread to settle
	parked  bool       // the timer is stopped at last (see above)
}

// armTimer starts thread id's checkpoint timer on its node: the first tick is
// a Period from now.
func (p *Protocol) armTimer(id sim.ObjID) {
	t := &p.th[id]
	t.tick = tickState{last: p.RT.Now(), node: p.RT.NodeOf(id)}
	p.schedTick(id, p.RT.Now()+p.cfg.Period)
}

// schedTick sets thread id's timer at time at; a timer set before is void.
func (p *Protocol) schedTick(id sim.ObjID, at sim.Time) {
	t := &p.th[id]
	t.timerGen++
	p.RT.SetTimer(t.tick.node, at, tagTimer, int64(t.timerGen)<<32|int64(id))
}

// unpark re-arms a parked timer at the next tick of its grid after now,
// counting the ticks it passed over as skipped.
func (p *Protocol) unpark(id sim.ObjID) {
	t := &p.th[id]
	if !t.tick.parked || t.tick.waiting || !p.tickAlive(id) {
		return // while a tick waits, the ticks after it are skipped: it unparks when it is done
	}
	now := p.RT.Now()
	next := t.tick.last + ((now-t.tick.last)/p.cfg.Period+1)*p.cfg.Period
	p.stopTick(id, now+1) // the ticks up to now were skipped
	p.schedTick(id, next)
}

// tickAlive reports whether the next tick of thread id's timer would still
// find the thread where the timer lives: a timer whose tick would find its
// thread lost or moved, or the protocol fallen back, would stop there.
func (p *Protocol) tickAlive(id sim.ObjID) bool {
	return !p.fallback && !p.RT.Lost(id) && p.RT.NodeOf(id) == p.th[id].tick.node
}

// stopTick ends thread id's parked timer at time at, counting its ticks
// before then as skipped, as they would have been had they run. (The ticks
// after one that waits for the thread to settle are counted when it is done,
// and not at all if it never is.)
func (p *Protocol) stopTick(id sim.ObjID, at sim.Time) {
	t := &p.th[id]
	if t.tick.parked && !t.tick.waiting && at > t.tick.last {
		p.C.SkippedCheckpoints += int64((at - t.tick.last - 1) / p.cfg.Period)
	}
	t.tick.parked = false
}

// OnTimer checkpoints an object at the end of its period, once its running
// operation has ended.
func (p *Protocol) OnTimer(node sim.NodeID, tag int32, arg int64) {
	if p.fallback || tag != tagTimer {
		return
	}
	rt := p.RT
	id := sim.ObjID(arg & 0xffffffff)
	t := &p.th[id]
	if uint32(arg>>32) != t.timerGen || rt.NodeOf(id) != node || rt.Lost(id) {
		return
	}
	if t.tick.waiting {
		// Skipped, as is every tick until the waiting one is done, which
		// counts them (its closure would have run theirs after its own).
		t.tick.parked = true
		return
	}
	t.tick.last = rt.Now()
	if p.settled(id) && p.skipTick(t) {
		// Skipped, and so is every tick until unpark.
		p.C.SkippedCheckpoints++
		t.tick.parked = true
		return
	}
	p.schedTick(id, rt.Now()+p.cfg.Period)
	t.tick.waiting = true
	gen := t.timerGen
	p.whenSettled(id, func() {
		ours := t.timerGen == gen // the timer has not been re-armed by another path since
		if ours {
			t.tick.waiting = false
		}
		if p.fallback || rt.Lost(id) || rt.NodeOf(id) != node {
			if ours {
				t.tick.parked = false // so would the ticks after it have returned: the timer is dead
			}
			return
		}
		if p.skipTick(t) {
			p.C.SkippedCheckpoints++
		} else {
			p.checkpoint(id)
		}
		if ours {
			p.unpark(id)
		}
	})
}

// skipTick reports whether a tick finding thread t settled skips its
// checkpoint. It does while the previous checkpoint has not reached every
// backup: with a period shorter than a checkpoint's transfer, checkpoints
// would queue on the link, and the memory they hold grow, without bound (a
// checkpointing library skips a tick while a checkpoint is in progress). It
// does too when the thread has handled nothing since: the state is the one
// saved. On a node whose protocol CPU work already exceeds its cores, that
// work goes ahead of the application's, which would never run again if every
// tick added more. (A schedule by handled objects slows down with the
// application its checkpoints delay: it needs no such rule.)
func (p *Protocol) skipTick(t *thread) bool { return t.ckSending > 0 || t.handled == 0 }

// checkpoint sends object id's state, protocol state and processed list to its
// backups. The object is not running.
func (p *Protocol) checkpoint(id sim.ObjID) {
	rt := p.RT
	t := &p.th[id]
	if len(t.backups) == 0 || rt.Lost(id) || rt.Running(id) {
		return
	}
	state, _, started, err := rt.Snapshot(id)
	if err != nil {
		rt.Abort(err.Error())
		return
	}
	p.stamp++
	ck := &ckptData{stamp: p.stamp, act: t.ord.act, count: t.ord.dispN, unstarted: !started, state: state, size: rt.ModeledSize(id),
		pst: t.pst.clone(), processed: t.processed.clone()}
	wire := ck.size + p.cfg.EntryBytes*t.since
	t.since, t.handled, t.ckProg = 0, 0, rt.ObjectProgress(id)
	from := rt.NodeOf(id)
	p.charge(from, wire)
	for _, bk := range t.backups {
		if !bk.ready {
			// Being regenerated: only its regeneration state carries the
			// objects queued at the thread before it was registered; a
			// checkpoint arriving first would make it ready without them.
			continue
		}
		p.C.Checkpoints++
		p.C.CheckpointBytes += wire
		st := rt.Stats()
		st.Checkpoints++
		st.CheckpointBytes += wire
		t.ckSending++
		rt.Transfer(from, bk.node, wire, tagCkpt, func(ok bool) {
			p.th[id].ckSending--
			p.unpark(id)
			if ok && !p.fallback {
				p.charge(bk.node, wire)
				p.install(id, bk, ck)
			}
		})
	}
}

func (p *Protocol) registered(id sim.ObjID, bk *backup) bool {
	return slices.Contains(p.th[id].backups, bk)
}

// install replaces a backup's state by a newer checkpoint and prunes its
// queue of the objects processed before it. A state taken by an incarnation
// that has since been lost is ignored: it is ahead of the re-activated
// thread, and pruning by it would drop objects the thread has yet to handle
// again. For the same reason a backup keeps its own state when it is ahead
// of the checkpoint (it handled an object the checkpoint has not): that
// state came from the lost incarnation, which checkpointed on this backup
// but not on the one the thread was re-activated from, and the backup's
// queue no longer holds what the checkpoint would need. The re-executed
// thread catches up with that state, and its later checkpoints replace it.
func (p *Protocol) install(id sim.ObjID, bk *backup, ck *ckptData) {
	if !p.registered(id, bk) || !p.valid(bk) || ck.act != p.th[id].ord.act {
		return
	}
	for _, m := range ck.queue {
		p.store(bk, m)
	}
	for r, k := range ck.log {
		if r > ck.count {
			p.logEntry(bk, r, k)
		}
	}
	if bk.ck != nil && bk.ready && (ck.stamp <= bk.ck.stamp || !ck.processed.covers(bk.ck.processed)) {
		return
	}
	old := int64(0)
	if bk.ck != nil && bk.ready {
		old = bk.ck.size
	}
	p.memAdd(bk.node, memState, ck.size-old)
	bk.ck, bk.ready = ck, true
	for _, k := range sortedKeys(&bk.queue) {
		if ck.processed.has(k.src, k.op) {
			p.unstore(bk, k)
		}
	}
	for r := range bk.log {
		if r <= ck.count {
			delete(bk.log, r)
			bk.bytes -= p.cfg.EntryBytes
			p.memAdd(bk.node, memQueue, -p.cfg.EntryBytes)
		}
	}
}

func (p *Protocol) store(bk *backup, m *sim.Message) {
	k := msgKey{m.Src, m.Hdr.Op}
	if bk.ck != nil && bk.ck.processed.has(k.src, k.op) {
		return
	}
	q := bk.queue.Ptr(k)
	if *q != nil {
		return
	}
	*q = m
	bk.bytes += m.WireSize()
	p.memAdd(bk.node, memQueue, m.WireSize())
}

func (p *Protocol) unstore(bk *backup, k msgKey) {
	m := bk.queue.Get(k)
	bk.queue.Del(k)
	bk.bytes -= m.WireSize()
	p.memAdd(bk.node, memQueue, -m.WireSize())
}

func sortedKeys(q *peermap.Map[msgKey, *sim.Message]) []msgKey {
	ks := slices.Clone(q.Keys())
	slices.SortFunc(ks, func(a, b msgKey) int {
		return cmp.Or(cmp.Compare(a.src, b.src), cmp.Compare(a.op, b.op))
	})
	return ks
}

// OnControl stores a duplicate at a backup thread, or hands it to the thread if
// the backup has become the active thread meanwhile.
func (p *Protocol) OnControl(m *sim.Message) {
	if p.fallback || (m.Tag != tagDup && m.Tag != tagFwd) {
		return
	}
	rt := p.RT
	if m.Epoch != rt.Epoch() {
		return // a copy of a data object sent before a restart from scratch
	}
	id := m.Dst
	t := &p.th[id]
	n := m.To
	if rt.NodeOf(id) == n && !rt.Lost(id) {
		if t.received.has(m.Src, m.Hdr.Op) {
			p.C.LateCopies++
			return
		}
		a := appCopy(m)
		t.received.add(a.Src, a.Hdr.Op)
		p.forwardGap(t, a, n)
		if t.ord.replay {
			p.deliverReplay(id, p.park(id, a))
			return
		}
		rt.Deliver(a)
		return
	}
	for _, bk := range t.backups {
		if bk.node == n && p.valid(bk) {
			p.charge(n, m.Size)
			p.store(bk, m)
			return
		}
	}
}

// appCopy turns a stored duplicate back into the application message.
func appCopy(c *sim.Message) *sim.Message {
	a := c.Clone()
	a.Control = false
	a.Tag = int32(uint32(c.Hdr.TN))
	a.Hdr.TN = 0
	return a
}

// OnFailure re-activates the backups of the failed node's threads, re-creates
// its stateless threads, resends the split's tasks and regenerates backups.
func (p *Protocol) OnFailure(f sim.Failure) {
	p.memFailed(f.Node)
	for _, id := range f.Objects {
		if p.th[id].tick.node == f.Node {
			p.stopTick(id, f.At) // the timer died with its node
		}
	}
	if p.fallback {
		p.scratch.OnFailure(f)
		return
	}
	if f.WasSpare {
		return
	}
	if d := p.RT.Config().Downtime; d > 0 {
		p.RT.At(p.RT.Now()+d, func() { p.recover(f) })
		return
	}
	p.recover(f)
}

func (p *Protocol) recover(f sim.Failure) {
	rt := p.RT
	if p.fallback {
		p.scratch.OnFailure(f)
		return
	}
	// every lost stateful object needs a live, ready backup
	var lost []sim.ObjID
	for i := range p.th {
		if id := sim.ObjID(i); rt.Lost(id) && rt.NodeOf(id) == f.Node {
			lost = append(lost, id)
		}
	}
	// the backups are chosen from the state at the failure: activating one
	// thread voids the outputs its lost incarnation held back, which
	// complete counts on for another lost thread (re-execution sends them
	// again)
	sources := map[sim.ObjID]*backup{}
	for _, id := range lost {
		if p.th[id].stateless {
			continue
		}
		if sources[id] = p.source(id); sources[id] == nil {
			p.giveUp(f, id)
			return
		}
	}
	rt.RemoveSlot(f.Node)
	if len(rt.Slots()) == 0 {
		p.giveUp(f, sim.None)
		return
	}
	// drop the backups that died
	for i := range p.th {
		t := &p.th[i]
		t.backups = slices.DeleteFunc(t.backups, func(bk *backup) bool { return !p.valid(bk) })
	}
	splitLost := false
	for _, id := range lost {
		if bk := sources[id]; bk != nil {
			p.activate(id, bk)
			if id == p.split {
				splitLost = true
			}
		}
	}
	var workers []sim.ObjID
	for _, id := range lost {
		if p.th[id].stateless {
			if p.canShrink() {
				p.C.Retired++
				p.th[id].retired = true
				p.releaseCopies(id) // kept again for the threads its tasks go to
			} else {
				p.recreate(id)
			}
			workers = append(workers, id)
		}
	}
	if p.split != sim.None && !splitLost && !rt.Lost(p.split) && p.th[p.split].replaying == 0 && !p.th[p.split].resendDue {
		for _, w := range workers {
			p.resend(w) // to w re-created, or to the survivors
		}
	}
	for i := range p.th {
		p.regenerate(sim.ObjID(i))
	}
}

// source is the backup object id is re-activated from: the first live,
// ready and complete one.
func (p *Protocol) source(id sim.ObjID) *backup {
	for _, bk := range p.th[id].backups {
		if bk.ready && p.valid(bk) && p.complete(id, bk) {
			return bk
		}
	}
	return nil
}

// complete reports whether backup bk of thread id holds every data object
// sent to the thread before bk was registered that its state has not
// handled. The duplicates of those went only to the backups before it; bk
// gets them in its first state or by a gap forward once the thread accepts
// them. One still on its way to the thread's node, or a forward still on its
// way from there, when that node failed may have been lost with the thread
// and its last complete backup (the paper's unrecoverable pattern): bk is
// then incomplete. A forward whose last byte had left would still arrive;
// counting it missing errs on the side of restarting from scratch. An
// object its sender still holds (LogOrder) has not left: its duplicates
// will reach bk.
func (p *Protocol) complete(id sim.ObjID, bk *backup) bool {
	for _, c := range bk.sentBefore {
		for r := range c.n {
			k := msgKey{c.src, opID(c.life, r)}
			if !bk.ck.processed.has(k.src, k.op) && bk.queue.Find(k) < 0 && !p.holds(c.src, id, k.op) {
				return false
			}
		}
	}
	return true
}

// holds reports whether thread src still holds back its data object op to dst.
func (p *Protocol) holds(src, dst sim.ObjID, op uint64) bool {
	return slices.ContainsFunc(p.th[src].ord.held, func(m *sim.Message) bool { return m.Dst == dst && m.Hdr.Op == op })
}

// giveUp reports an unrecoverable pattern and falls back to restarting from
// scratch.
func (p *Protocol) giveUp(f sim.Failure, id sim.ObjID) {
	rt := p.RT
	st := rt.Stats()
	st.Unrecoverable++
	if id == sim.None {
		st.UnrecoverableNote = "dps: no node is left; the application cannot run"
	} else {
		st.UnrecoverableNote = fmt.Sprintf("dps: object %d and all its backup threads were lost; the application restarted from scratch", id)
	}
	p.fallback = true
	for i := range p.th {
		p.stopTick(sim.ObjID(i), rt.Now()) // ticks stop while the application restarts from scratch
		t := &p.th[i]
		for _, bk := range t.backups {
			if p.valid(bk) {
				if bk.ready {
					p.memAdd(bk.node, memState, -bk.ck.size)
				}
				p.memAdd(bk.node, memQueue, -bk.bytes)
			}
		}
		t.backups = nil
	}
	p.scratch.OnFailure(f)
}

// activate turns backup bk of object id (its source at the failure) into the
// active thread: its state is restored on the backup's node and its stored
// data objects are re-injected in sequence-number order for re-execution.
func (p *Protocol) activate(id sim.ObjID, bk *backup) {
	rt := p.RT
	t := &p.th[id]
	t.backups = slices.DeleteFunc(t.backups, func(b *backup) bool { return b == bk })
	p.memAdd(bk.node, memState, -bk.ck.size)
	p.memAdd(bk.node, memQueue, -bk.bytes)
	ck := bk.ck
	msgs := make([]*sim.Message, 0, bk.queue.Len())
	for _, k := range sortedKeys(&bk.queue) {
		msgs = append(msgs, bk.queue.Get(k))
	}
	slices.SortStableFunc(msgs, func(a, b *sim.Message) int { return cmp.Compare(a.Hdr.Seq, b.Hdr.Seq) })
	// a new incarnation: what the lost one sent (checkpoints, held outputs,
	// pending determinants) is void
	t.ord.act++
	// the regenerated backup is a copy of the consumed one, registered before
	// re-execution starts so that its checkpoints follow it
	p.addBackup(id, bk.node, &ckptData{stamp: ck.stamp, act: t.ord.act, count: ck.count, log: maps.Clone(bk.log), initial: ck.initial,
		unstarted: ck.unstarted, state: ck.state, size: ck.size, pst: ck.pst, processed: ck.processed, queue: slices.Clone(msgs)},
		ck.size+bk.bytes+p.cfg.EntryBytes*int64(len(bk.log)))

	t.pst = ck.pst.clone()
	t.processed = ck.processed.clone()
	t.received = ck.processed.clone()
	t.since, t.handled = 0, 0
	if t.dispatched != nil {
		t.dispatched = map[msgKey]struct{}{}
	}
	if id == p.split {
		// The farm's master hands tiles out in the order results arrive: it is
		// not a DPS split whose re-execution in sequence order reproduces the
		// original run (a replayed result may precede the hand-out of its own
		// tile, which the master cannot absorb). It restarts from its
		// checkpoint instead, results of the lost generation are void, and
		// every task it holds outstanding is resent (§6: the split resends).
		p.splitGen++
		for w := range p.copies {
			p.copies[w] = nil // they were on the dead node
		}
		msgs = slices.DeleteFunc(msgs, func(m *sim.Message) bool { return p.th[m.Src].stateless })
	}
	// outputs held back by the lost incarnation never left
	t.ord.held, t.ord.need, t.ord.pend = nil, nil, nil
	t.ord.dispN, t.ord.ackN = ck.count, ck.count
	t.replaying = len(msgs)
	if p.logging(t) {
		t.replaying = 0 // counted as they are delivered
	}
	// A split restarted from its initial state hands its tasks out again in
	// Start, but to every worker, retired ones included (Shrink): after Start
	// it resends the tasks of the lost ones to the survivors.
	t.resendDue = id == p.split
	p.lostOnly = ck.initial
	p.C.Recovered++
	if ck.initial {
		rt.Recreate(id, bk.node)
	} else if err := rt.Restore(id, bk.node, ck.state, nil, !ck.unstarted); err != nil {
		rt.Abort(err.Error())
		return
	}
	t.ckProg = rt.ObjectProgress(id) // the backup's state is the last checkpoint
	if p.logging(t) {
		as := make([]*sim.Message, 0, len(msgs))
		for _, c := range msgs {
			a := appCopy(c)
			a.To = bk.node
			a.Hdr.Flags |= flagInjected
			t.received.add(a.Src, a.Hdr.Op)
			as = append(as, a)
		}
		p.deliverReplay(id, p.replayOrder(id, ck, bk.log, as))
	} else {
		for _, c := range msgs {
			a := appCopy(c)
			a.To = bk.node
			a.Hdr.Flags |= flagInjected
			t.received.add(a.Src, a.Hdr.Op)
			p.C.Replayed++
			rt.Deliver(a)
		}
	}
	if t.resendDue && !ck.initial && t.replaying == 0 && !rt.Running(id) {
		t.resendDue = false
		p.resendAll()
	}
	if p.cfg.Period > 0 {
		p.armTimer(id)
	}
}

// recreate re-creates stateless object id on a surviving node.
func (p *Protocol) recreate(id sim.ObjID) {
	rt := p.RT
	t := &p.th[id]
	live := p.liveSlots()
	if len(live) == 0 {
		return
	}
	node := live[p.next%len(live)]
	p.next++
	p.releaseCopies(id)
	t.pst.life++
	t.pst.seqOut, t.pst.seqIn = 0, 0
	t.pst.sent = peermap.Map[sim.ObjID, uint64]{}
	t.received, t.processed = newIDSet(), newIDSet()
	if t.dispatched != nil {
		t.dispatched = map[msgKey]struct{}{}
	}
	p.C.Recreated++
	rt.Recreate(id, node)
}

// resend sends again the tasks the split believes worker w holds: to w, or,
// when w was lost and not re-created (Shrink), to the surviving threads of
// the collection in turn.
func (p *Protocol) resend(w sim.ObjID) {
	rt := p.RT
	if p.split == sim.None || rt.Lost(p.split) {
		return
	}
	rs, ok := rt.Object(p.split).(Resubmitter)
	if !ok {
		return
	}
	var live []sim.ObjID
	if rt.Lost(w) {
		live = p.liveStateless()
		if len(live) == 0 {
			return
		}
	}
	for _, task := range rs.Outstanding(w) {
		to := w
		if live != nil {
			to = live[p.next%len(live)]
			p.next++
			rt.Object(p.split).(Reassigner).Reassign(task, w, to) // p.reassign: it can
			p.C.Reassigned++
		}
		tag, size, payload := p.farm.TaskMessage(task)
		m := rt.SendApp(p.split, to, tag, size, payload, sim.Header{Seq: p.th[p.split].pst.seqOut, Inc: p.splitGen, Flags: flagResend})
		p.keepCopy(m)
		p.C.Resent++
	}
}

// canShrink reports whether a lost stateless thread may stay lost: Shrink is
// on, the master can reassign tasks and some stateless thread survives.
func (p *Protocol) canShrink() bool {
	return p.cfg.Shrink && p.reassign && len(p.liveStateless()) > 0
}

// unretire re-creates, when the run is over, the stateless threads Shrink
// left lost: the runtime checks the answer only when every object exists,
// and a stateless thread holds nothing the answer depends on. They are
// re-created in their initial state and never run (the engine has stopped);
// the run's figures are those of the shrunken collection.
func (p *Protocol) unretire() {
	rt := p.RT
	if p.fallback {
		return
	}
	live := p.liveSlots()
	if len(live) == 0 {
		return
	}
	for i := range p.th {
		if id := sim.ObjID(i); p.th[i].stateless && rt.Lost(id) {
			rt.Recreate(id, live[0])
		}
	}
}

// liveStateless lists the stateless threads that are not lost, by id.
func (p *Protocol) liveStateless() []sim.ObjID {
	var out []sim.ObjID
	for i := range p.th {
		if p.th[i].stateless && !p.RT.Lost(sim.ObjID(i)) {
			out = append(out, sim.ObjID(i))
		}
	}
	return out
}

// resendRetired hands to the survivors the tasks the split gave retired
// threads after they were retired: a result a thread sent before its node
// failed still arrives, and the split answers it with the thread's next
// task, which would otherwise wait at the lost thread for ever.
func (p *Protocol) resendRetired() {
	for i := range p.th {
		if id := sim.ObjID(i); p.th[i].retired && p.RT.Lost(id) {
			p.releaseCopies(id)
			p.resend(id)
		}
	}
}

// resendAll resends every outstanding task, after the split re-executed.
func (p *Protocol) resendAll() {
	for i := range p.th {
		if p.lostOnly && !p.RT.Lost(sim.ObjID(i)) {
			continue // Start handed it its tasks
		}
		if p.th[i].stateless {
			p.releaseCopies(sim.ObjID(i))
			p.resend(sim.ObjID(i))
		}
	}
}

// regenerate gives object id new backup threads until it has Config.Backups.
func (p *Protocol) regenerate(id sim.ObjID) {
	rt := p.RT
	t := &p.th[id]
	if t.stateless || rt.Lost(id) {
		return
	}
	for len(t.backups) < p.cfg.Backups {
		node, ok := p.placeBackup(id)
		if !ok {
			return
		}
		bk := p.register(id, node)
		p.whenSettled(id, func() {
			if p.fallback || !p.registered(id, bk) || rt.Lost(id) {
				return
			}
			state, inbox, started, err := rt.Snapshot(id)
			if err != nil {
				rt.Abort(err.Error())
				return
			}
			p.stamp++
			ck := &ckptData{stamp: p.stamp, act: t.ord.act, count: t.ord.dispN, unstarted: !started, state: state, size: rt.ModeledSize(id),
				pst: t.pst.clone(), processed: t.processed.clone()}
			wire := ck.size
			for _, m := range inbox {
				c := m.Clone()
				c.Hdr.TN = uint64(uint32(m.Tag))
				c.Hdr.Flags &^= flagInjected
				ck.queue = append(ck.queue, c)
				wire += m.WireSize()
			}
			if p.logging(t) && len(inbox) > 0 {
				// The inbox of a re-executing thread holds objects whose
				// handling order was logged (the lost incarnation's
				// consequences of them were seen), and the thread handles
				// its inbox in order: the new backup gets that order, or
				// a re-activation from it would replay them by sequence
				// number and re-post other content under operation
				// identifiers already received.
				ck.log = make(map[uint64]msgKey, len(inbox))
				for i, m := range inbox {
					ck.log[ck.count+1+uint64(i)] = msgKey{m.Src, m.Hdr.Op}
				}
				wire += p.cfg.EntryBytes * int64(len(inbox))
			}
			p.ship(id, bk, rt.NodeOf(id), ck, wire)
		})
	}
}

// addBackup registers a new backup on node n and ships it ck from the thread's
// (new) node.
func (p *Protocol) addBackup(id sim.ObjID, from sim.NodeID, ck *ckptData, wire int64) {
	if p.cfg.Backups == 0 {
		return
	}
	// the consumed backup's node is the thread's node from now on
	node, ok := p.placeBackupFrom(id, from)
	if !ok {
		return
	}
	bk := p.register(id, node)
	p.ship(id, bk, from, ck, wire)
}

func (p *Protocol) register(id sim.ObjID, node sim.NodeID) *backup {
	t := &p.th[id]
	t.bkGen++
	bk := &backup{node: node, inc: p.RT.Incarnation(node), gen: t.bkGen}
	for s := range p.th {
		src := &p.th[s]
		if n := src.pst.sent.Get(id); n > 0 && !src.stateless {
			bk.sentBefore = append(bk.sentBefore, sentCount{sim.ObjID(s), src.pst.life, n})
		}
	}
	t.backups = append(t.backups, bk)
	p.C.Regenerated++
	return bk
}

func (p *Protocol) ship(id sim.ObjID, bk *backup, from sim.NodeID, ck *ckptData, wire int64) {
	rt := p.RT
	p.charge(from, wire)
	rt.Transfer(from, bk.node, wire, tagRegen, func(ok bool) {
		if ok && !p.fallback {
			p.charge(bk.node, wire)
			p.install(id, bk, ck)
		}
	})
}

func (p *Protocol) placeBackup(id sim.ObjID) (sim.NodeID, bool) {
	return p.placeBackupFrom(id, p.RT.NodeOf(id))
}

// skip is the number of slots the rotation passes over after a thread's own
// before its first backup: Config.Offset − 1.
func (p *Protocol) skip() int { return max(p.cfg.Offset, 1) - 1 }

// placeBackupFrom picks the next live node after home (Offset nodes after it
// first), by rotation over the surviving slots, that holds neither the thread
// nor another of its backups.
func (p *Protocol) placeBackupFrom(id sim.ObjID, home sim.NodeID) (sim.NodeID, bool) {
	slots := p.RT.Slots()
	start := p.RT.SlotIndex(home)
	if start < 0 {
		start = 0
	}
	for j := 1; j <= len(slots); j++ {
		n := slots[(start+p.skip()+j)%len(slots)]
		if n == home || !p.RT.Alive(n) {
			continue
		}
		if slices.ContainsFunc(p.th[id].backups, func(b *backup) bool { return b.node == n }) {
			continue
		}
		return n, true
	}
	return 0, false
}

// liveSlots returns the application's node slots that are alive, in slot order.
func (p *Protocol) liveSlots() []sim.NodeID {
	var live []sim.NodeID
	for _, n := range p.RT.Slots() {
		if p.RT.Alive(n) {
			live = append(live, n)
		}
	}
	return live
}
