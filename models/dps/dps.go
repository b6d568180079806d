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
//
// This file holds the configuration, the protocol's records and its set-up.
// The rest is in messages.go (the message path), checkpoint.go (checkpoints
// and what backups store), recover.go (recovery and regeneration) and
// backups.go (where backups live).

import (
	"fmt"

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
	// A farm's workers are stateless all or none: a run with some of each
	// aborts (statelessSet).
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
	Duplicates, DuplicateBytes int64    // copies of data objects sent to backup threads
	CPU                        sim.Time // core time charged for the protocol's transfers (network.cpu_load)
	Checkpoints                int64    // thread checkpoints sent (one per backup)
	CheckpointBytes            int64
	SkippedCheckpoints         int64 // timer ticks without checkpoint: the previous one was still on its way, or nothing was handled since
	Recovered                  int   // threads re-activated from a backup
	Replayed                   int64 // stored data objects re-injected for re-execution
	Reposted                   int64 // data objects re-posted by re-execution (rank already used)
	SilentDrops                int64 // re-posted objects dropped on arrival (already received)
	LateCopies                 int64 // duplicates reaching a re-activated backup that already had them
	OwnCopies                  int64 // copies of a re-activated thread's objects to itself that its re-execution posts again, dropped (ownRepost)
	WrongDrops                 int64 // dropped objects that were not re-posts (must stay 0)
	OvertakenOriginals         int64 // originals dropped because their re-post, sent after their sender's failure, arrived first
	CopiesFirst                int64 // Audit: originals dropped because their duplicate, handed to the receiver re-activated on its backup's node, came first
	Regenerated                int   // backup threads created after a failure
	StaleBackups               int   // LogOrder: live backups whose state or log disagreed with the order a re-activated thread replays (activate)
	GapForwards                int64 // copies forwarded to regenerated backups
	Resent                     int   // tasks resent by the split after a failure
	Reassigned                 int   // Shrink: of those, tasks resent to another thread of the collection
	Recreated                  int   // stateless threads re-created
	Retired                    int   // Shrink: stateless threads lost and not re-created
	StaleResults               int64 // results of tasks handed out by a lost split, dropped
	SeqMismatches              int64 // Audit: dropped re-posts whose sequence number differed
	DoubleProcessed            int64 // Audit: an object handled twice by one incarnation (must stay 0)
	OrderConflicts             int64 // Audit, LogOrder: re-activations whose order contradicts an acknowledged one (must stay 0)
	Determinants               int64 // LogOrder: handling-order entries sent to backups
	DeterminantBytes           int64
	Held                       int64 // LogOrder: outputs held back until their determinants arrived
	ReplayWaits                int64 // LogOrder: times re-execution waited for a logged object still in flight
	InFlightWaits              int64 // re-activations that waited for duplicates still in flight to the backup
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

func (s *idSet) has(src sim.ObjID, op uint64) bool {
	e := s.edges.Lookup(chanKey{src, opLife(op)})
	return e != nil && e.Has(opRank(op)+1)
}

// next returns the first rank of sender src's life that s lacks: s holds
// every rank below it.
func (s *idSet) next(src sim.ObjID, life uint32) uint64 {
	if e := s.edges.Lookup(chanKey{src, life}); e != nil {
		return e.Low()
	}
	return 0
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

func (s *idSet) clone() idSet {
	return idSet{edges: s.edges.Clone(func(e seqset.Set) seqset.Set { return e.Clone() })}
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
	processed idSet
	queue     []*sim.Message // regeneration: stored duplicates to carry over
	hist      []msgKey       // Audit, LogOrder: the thread's handling order up to count
}

// stored is a duplicate in a backup's queue, with its wire size: pruning
// the queue after a checkpoint accounts the bytes it frees without touching
// the message, long gone from the cache by then.
type stored struct {
	m    *sim.Message
	wire int64
}

// backup is one backup thread of an object, on a node.
type backup struct {
	node  sim.NodeID
	inc   uint32
	gen   uint32 // the owner's backup generation when this backup was registered
	ready bool   // a state has arrived
	// stale: the state or log disagrees with the handling order the thread
	// re-executes since an activation (activate); not a source until a
	// checkpoint of the current incarnation replaces the state
	stale bool
	ck    *ckptData
	// processed is ck.processed (sharing its arrays, which nobody changes;
	// empty without ck), here because every duplicate stored reads it,
	// and following ck was a cache miss more
	processed idSet
	queue     peermap.Map[msgKey, stored] // stored duplicates
	bytes     int64                       // queue and log bytes accounted
	log       map[uint64]msgKey           // LogOrder: handling rank -> data object, after ck.count
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
	// received and processed are values, not pointers: every message
	// arriving reads received, and a pointer to follow was a cache miss more
	received  idSet // accepted by the active thread (queued or handled)
	processed idSet // handled by the active thread
	since     int64 // processed since the last checkpoint
	handled   int64 // handled since the last checkpoint (Every)
	ckProg    int64 // the object's progress at its last checkpoint (EveryProgress)
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
	// later lists the data objects the running handler posted that leave
	// at a later simulated time than now (a handler's sends leave when its
	// compute reaches them): until then they are not in flight.
	later []laterSend
	// audit
	dispatched map[msgKey]struct{}
	// hist is the order-logging thread's handling order, by rank (rank r at
	// r-1); acked is the longest prefix of it the protocol has counted as at
	// every backup (ord.ackN), on which released outputs may depend
	hist, acked []msgKey
	// hw tells a re-posted data object from a new one: per receiver, the
	// highest rank sent in the current life, plus one. It survives the
	// thread's restores (it is what re-execution is checked against).
	hw peermap.Map[sim.ObjID, highWater]
}

// laterSend is a data object posted by a running handler, with its rank on
// the edge to dst and the time it leaves.
type laterSend struct {
	dst    sim.ObjID
	rank   uint64
	leaves sim.Time
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
	copyIn   map[[3]uint64]bool   // Audit: auditKey of the duplicates a re-activated thread took over from its backup's node (OnControl)
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

// Config returns the protocol's configuration.
func (p *Protocol) Config() Config { return p.cfg }

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
		p.copyIn = map[[3]uint64]bool{}
	}
	p.setUp(p.statelessSet())
}

// EnableAudit turns Config.Audit on for a protocol made by New, before its run.
func (p *Protocol) EnableAudit() { p.cfg.Audit = true }

// AuditErr reports what the audit (Config.Audit) found wrong in a run: a
// re-activation whose handling order contradicts the acknowledged one, and,
// unless the application restarted from scratch (a reported unrecoverable
// pattern, after which anything goes), a dropped object that was not a
// re-post or an object handled twice by one incarnation. Without the audit
// it reports nothing: those counts need its bookkeeping.
func (p *Protocol) AuditErr() error {
	if !p.cfg.Audit {
		return nil
	}
	c := p.C
	if c.OrderConflicts > 0 {
		return fmt.Errorf("dps audit: %d re-activations against the acknowledged handling order", c.OrderConflicts)
	}
	if p.RT.Stats().Unrecoverable == 0 && (c.WrongDrops > 0 || c.DoubleProcessed > 0) {
		return fmt.Errorf("dps audit: %d objects dropped that were not re-posts, %d handled twice by one incarnation", c.WrongDrops, c.DoubleProcessed)
	}
	return nil
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
		t.received, t.processed = idSet{}, idSet{}
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
			ck := &ckptData{act: t.ord.act, initial: true, size: size, pst: t.pst.clone()}
			bk := &backup{node: node, inc: rt.Incarnation(node), gen: 1, ready: true, ck: ck, processed: ck.processed}
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
		for i := range rt.NumObjects() {
			if id := sim.ObjID(i); id != master && !out[id] {
				// The master, the split of its stateless workers, restarts
				// from its checkpoint and resends their tasks (activate); its
				// hand-outs to a stateful worker would be re-posted in
				// another order, and the worker would drop them as received.
				rt.Abort(fmt.Sprintf("protocol.stateless: worker %d is stateful while others are stateless: a farm's workers are stateless all or none (list every worker, or none with auto_stateless = false)", id))
				return out
			}
		}
		p.farm, p.split = farm, master
		_, p.reassign = rt.Object(master).(Reassigner)
	}
	return out
}

// charge charges node n the CPU time of a transfer of size bytes at one end
// (sim.Runtime.MessageCPU: network.cpu_load and network.message_cpu).
func (p *Protocol) charge(n sim.NodeID, size int64) {
	if d := p.RT.MessageCPU(size); d > 0 {
		p.C.CPU += d
		p.RT.ChargeCPU(n, d, nil)
	}
}

// valid reports whether backup bk is still there: its node has not failed
// since bk was set up on it, and is still one of the application's. (A
// backup set up on a node that had already failed, before its failure was
// detected, has the incarnation of the dead node: once that node is
// repaired, only its absence from the slots tells the backup is gone.)
func (p *Protocol) valid(bk *backup) bool {
	rt := p.RT
	return rt.Holds(bk.node, bk.inc) && rt.SlotIndex(bk.node) >= 0
}
