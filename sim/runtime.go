package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync/atomic"

	"ftsim/internal/chunk"
)

// Runtime is one simulated run: the engine, the cluster's nodes, the
// application's objects and the protocol between them. Build it with New, then
// call Run. A Runtime is used by one goroutine; replications each have their own.
type Runtime struct {
	eng   *Engine
	cfg   Config
	wl    Workload
	proto Protocol
	// layerCPU is the protocol's own CPU time per application message at
	// each end (SetLayerCPU); freeMsgs says an application message costs
	// no CPU at all, the common case, checked inline on every send.
	layerCPU Time
	freeMsgs bool

	links []link // the per-message part of each node, apart (see link)
	nodes []node
	objs  []objState
	place []NodeID // place[i] is the node object i is placed on; apart from objs because every send reads it
	// lost[i]: object i's node failed and it has not been restored yet;
	// apart from objs because protocols ask it of other objects per
	// message (Lost), where their objState would be a cache miss
	lost []bool
	// placeVer counts changes of place; byNode (objects per node, for
	// ObjectsOn) is valid while byNodeVer equals it
	placeVer, byNodeVer uint64
	incVer              uint64 // counts changes of a node's incarnation
	byNode              [][]ObjID
	slots               []NodeID // the application's nodes, in rank order
	slotOf              []int32  // slotOf[n] is node n's index in slots, -1 if none
	spares              []NodeID // idle spares, taken first to last
	repairsDue          int      // repaired nodes waiting to leave the slots for the pool
	poolWatchers        []func() // OnPoolJoin's callbacks

	epoch     uint32
	started   bool // objects may run (set after Protocol.Start)
	aborted   bool
	atLimit   bool // stopped at Config.Limit with events still to run
	tracer    Tracer
	appPaused bool
	running   int // application tasks on cores
	inFlight  int // application messages between send and arrival
	quiet     []quietWaiter
	// traced runs only: traceStart[id] is when object id's running handler
	// started, traceWorkStart[i] when the protocol work in task slot i did
	traceStart, traceWorkStart []Time
	// migrations are the objects Migrate is moving, read only while their
	// objState says migrating (an entry outlives its migration until the next)
	migrations map[ObjID]migration

	msgs  slab[inFlightMsg] // messages in flight: events carry the slot
	xfers slab[xfer]        // protocol transfers in flight: events carry the slot
	tasks slab[task]
	calls slab[call]
	ctx   Ctx
	// inHandler is set while an object's handler code (and the protocol's
	// OnDispatch before it) runs in ctx; a node made ready meanwhile is
	// kicked once it returns (deferred), not from inside it: another
	// handler run there would reuse ctx, and the first one's sends would
	// leave under the other object's name.
	inHandler bool
	late      []lateMsg // the messages the running handler sent after its start (later)
	deferred  []NodeID
	kicking   []NodeID // the other buffer of deferred

	progress, total int64
	// shown is progress/total as math.Float64bits, for Fraction: the one
	// field another goroutine reads while the run goes on
	shown    atomic.Uint64
	planned  []ScriptedFailure // progress-triggered failures not yet fired
	failRecs []Recovery
	open     []int // failRecs indices not yet recovered
	// restoring are failRecs indices whose lost objects are not all
	// restored; those with a progressBack are parked out of open
	restoring []int

	pfs psShare
	// the topology's shared links; link i's lanes are laneFree[laneOf[i]:
	// laneOf[i+1]], each busy until the time it holds; a scratch route
	shared   []Link
	laneOf   []int32
	laneFree []Time
	route    []int32
	failRNG  map[NodeID]*rand.Rand
	jitter   *jitter // nil without Config.Jitter
	// each node's heartbeats, with jittered heartbeats (heartbeat.go): a
	// stream per node, so that detections and suspicions do not shift the
	// messages' draws
	heartbeats []heartbeatLife
	// each failure domain's stream, and whether its clock is running
	groupRNG []*rand.Rand
	groupOn  []bool

	stats      Stats
	finished   bool
	finishedAt Time
	finishDue  bool // a kFinish event (completion and recoveries judged after restores) is scheduled
	// restoredIn is the event (its ordinal) in which a protocol last
	// restored or re-created an object: completion reached during it is
	// judged once it is over (restoredProgress)
	restoredIn uint64

	kArrive, kDeliver, kCoreDone, kFail, kDetect, kCall, kSpare, kRepair, kPFS, kDisk Kind
	kXferArrive, kXferDeliver, kFinish, kGroupFail, kSuspect, kDepart, kCut           Kind
	// cutStep is the protocol's CutStep (cut.go), 0 if it cuts no handler
	cutStep Time
	// returner is the protocol if it gives back held messages at a cut
	// (CutReturner; nil otherwise, or if it cuts no handler)
	returner CutReturner
	// coupled: the workload is a Coupler whose objects are coupled; catchUps
	// are the lost objects the others wait for (coupled.go)
	coupled  bool
	catchUps []catchUp
	// cut records and their message lists, cut from blocks (newCut)
	cuts     chunk.Alloc[CutTask]
	cutSends chunk.Alloc[PendingSend]
}

// New builds a run of workload wl under protocol p on the cluster cfg. Objects
// are placed on the primary nodes; nothing runs until Run.
func New(cfg Config, wl Workload, p Protocol) (*Runtime, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if w, ok := p.(WorkloadWrapper); ok {
		wl = w.WrapWorkload(wl)
	}
	rt := &Runtime{eng: NewEngine(cfg.Seed), cfg: cfg, wl: wl, proto: p}
	rt.SetLayerCPU(0) // none until the protocol's Init sets one; sets freeMsgs
	rt.eng.SetStallLimit(cmp.Or(cfg.StallEvents, DefaultStallEvents))
	rt.ctx.rt = rt
	e := rt.eng
	rt.kArrive = e.NewKind("arrive", rt.onArrive)
	rt.kDeliver = e.NewKind("deliver", rt.onDeliver)
	rt.kCoreDone = e.NewKind("core-done", rt.onCoreDone)
	rt.kFail = e.NewKind("fail", rt.onFail)
	rt.kDetect = e.NewKind("detect", rt.onDetect)
	rt.kCall = e.NewKind("call", rt.onCall)
	rt.kSpare = e.NewKind("spare-ready", rt.onSpareReady)
	rt.kRepair = e.NewKind("repair", rt.onRepair)
	rt.kPFS = e.NewKind("pfs", rt.onPFS)
	rt.kDisk = e.NewKind("storage", rt.onStorageDone)
	rt.kXferArrive = e.NewKind("transfer-arrive", rt.onXferArrive)
	rt.kXferDeliver = e.NewKind("transfer-deliver", rt.onXferDeliver)
	rt.kFinish = e.NewKind("finish", rt.onFinish)
	rt.kGroupFail = e.NewKind("group-fail", rt.onGroupFail)
	rt.kSuspect = e.NewKind("suspect", rt.onSuspect)
	rt.kDepart = e.NewKind("depart", rt.onDepart)
	rt.kCut = e.NewKind("cut", rt.onCut)
	rt.setPrefetchers()

	n := cfg.Nodes + cfg.Spares
	rt.nodes = make([]node, n)
	for i := range rt.nodes {
		rt.nodes[i].ready.items = rt.nodes[i].readyBuf[:0]
	}
	rt.links = make([]link, n)
	for i := range rt.links {
		rt.links[i].state = nodeSpare
	}
	for i := cfg.Nodes; i < n; i++ {
		rt.spares = append(rt.spares, NodeID(i))
	}
	rt.slots = make([]NodeID, cfg.Nodes)
	for i := range rt.slots {
		rt.slots[i] = NodeID(i)
	}
	rt.indexSlots()
	rt.pfs = psShare{rate: cfg.PFSBandwidth, perFlow: cfg.PFSNodeBandwidth}
	if cfg.Topology != nil {
		rt.shared = cfg.Topology.Links()
		rt.laneOf = make([]int32, len(rt.shared)+1)
		for i, l := range rt.shared {
			rt.laneOf[i+1] = rt.laneOf[i] + int32(l.Lanes)
		}
		rt.laneFree = make([]Time, rt.laneOf[len(rt.shared)])
	}
	if cfg.Jitter > 0 {
		rt.jitter = &jitter{mean: float64(cfg.Jitter), rng: e.Stream("network-jitter", 0), last: make([]Time, n)}
	}

	rt.objs = make([]objState, wl.NumObjects())
	rt.lost = make([]bool, wl.NumObjects())
	for i := range rt.objs {
		rt.objs[i].task = -1
	}
	rt.place = make([]NodeID, len(rt.objs))
	rt.total = wl.TotalProgress()
	for _, f := range cfg.Planned {
		if int(f.Node) >= n || f.Node < 0 {
			return nil, fmt.Errorf("planned failure of node %d: the cluster has nodes 0..%d", f.Node, n-1)
		}
		if f.ByProgress {
			rt.planned = append(rt.planned, f)
		}
	}
	sort.SliceStable(rt.planned, func(i, j int) bool { return rt.planned[i].Progress < rt.planned[j].Progress })
	return rt, nil
}

func (c *Config) validate() error {
	switch {
	case c.Nodes < 1:
		return errors.New("cluster needs at least one node")
	case c.Spares < 0:
		return errors.New("negative number of spares")
	case c.Cores < 1:
		return errors.New("nodes need at least one core")
	case c.Rate <= 0:
		return errors.New("core rate must be positive")
	case c.Bandwidth <= 0:
		return errors.New("network bandwidth must be positive")
	case c.CPULoad < 0 || c.CPULoad > 1:
		return errors.New("network cpu_load must be in [0, 1]")
	case (c.Failures == Exponential || c.Failures == Weibull) && c.NodeMTBF <= 0:
		return errors.New("node MTBF must be positive")
	case c.Failures == Weibull && c.WeibullShape <= 0:
		return errors.New("the Weibull shape must be positive")
	case c.GroupMTBF < 0 || (c.GroupMTBF > 0 && (c.GroupSize < 1 || c.GroupSize > c.Nodes+c.Spares)):
		return errors.New("group failures need a positive MTBF and 1 to nodes+spares nodes per group")
	case !c.OracleDetection && (c.HBPeriod <= 0 || c.HBTimeout < c.HBPeriod):
		return errors.New("heartbeat period must be positive and timeout at least one period")
	case !c.OracleDetection && c.HBPeriod/HBJitterMargin < c.Jitter:
		return fmt.Errorf("heartbeat period must be at least %d mean network jitters (heartbeats are not held behind late ones)", HBJitterMargin)
	case c.WaitForRepair && c.Repair <= 0:
		return errors.New("waiting for repaired nodes needs a repair time: the job would wait for ever")
	case c.Topology != nil && c.Topology.Nodes() < c.Nodes+c.Spares:
		return fmt.Errorf("the %s connects %d nodes, the cluster has %d (nodes + spares)", c.Topology.Name(), c.Topology.Nodes(), c.Nodes+c.Spares)
	}
	if c.Topology != nil {
		for i, l := range c.Topology.Links() {
			if l.Lanes < 1 || !(l.Bandwidth > 0) {
				return fmt.Errorf("the %s's link %d has %d lanes of %g bytes/s: want ≥ 1 lane of > 0 bytes/s", c.Topology.Name(), i, l.Lanes, l.Bandwidth)
			}
		}
	}
	for _, d := range []struct {
		key string
		t   Time
	}{{"cluster.spare_boot", c.SpareBoot}, {"cluster.repair", c.Repair}, {"network.latency", c.Latency}, {"network.jitter", c.Jitter},
		{"network.message_cpu", c.MessageCPU},
		{"storage.pfs_latency", c.PFSLatency}, {"failures.downtime", c.Downtime}, {"detection.delay", c.DetectDelay},
		{"detection.period", c.HBPeriod}, {"detection.timeout", c.HBTimeout}} {
		if err := CheckDelay(d.key, d.t); err != nil {
			return err
		}
	}
	return nil
}

// CheckDelay reports a delay that a run adds to its clock (a latency, a
// checkpoint period) outside [0, MaxDuration): a run simulates at most
// MaxDuration, and a longer delay added to a late time of it would pass
// the range of Time. The error starts with key, the scenario key at fault.
func CheckDelay(key string, d Time) error {
	if d < 0 || d >= MaxDuration {
		return fmt.Errorf("%s: must be ≥ 0 and under %d years, got %.6g years", key, MaxYears, float64(d)/float64(year))
	}
	return nil
}

// Run simulates until the workload finishes, the time limit passes, or nothing
// is left to do, and returns the run's record.
func (rt *Runtime) Run() Result {
	rt.proto.Init(rt)
	if c, ok := rt.proto.(Cutter); ok {
		rt.cutStep = c.CutStep()
	}
	if r, ok := rt.proto.(CutReturner); ok && rt.cutStep > 0 {
		rt.returner = r
	}
	if c, ok := rt.wl.(Coupler); ok {
		rt.coupled = c.Coupled()
	}
	for _, n := range rt.slots {
		rt.activate(n)
	}
	for _, f := range rt.cfg.Planned {
		if !f.ByProgress {
			rt.eng.Schedule(f.At, rt.kFail, int32(f.Node), -1)
		}
	}
	rt.Place()
	for i := range rt.objs {
		rt.create(ObjID(i), rt.place[i])
	}
	rt.proto.Start()
	rt.started = true
	for _, n := range rt.slots {
		rt.kick(n)
	}
	rt.eng.Run(rt.limit())
	rt.atLimit = !rt.finished && !rt.aborted && rt.eng.q.len() > 0 && rt.eng.q.top().at > rt.limit()
	if rt.eng.Stalled() && !rt.finished {
		rt.Abort(fmt.Sprintf("time stood still: %d events at %v without the clock moving (handlers answering each other at no cost, without end)", rt.eng.atInstant, rt.eng.now))
	}
	if rt.tracer != nil {
		rt.traceEnd(rt.endTime())
	}
	return rt.result()
}

// limit is when the run stops: Config.Limit, and never after MaxDuration.
func (rt *Runtime) limit() Time {
	if rt.cfg.Limit > 0 {
		return min(rt.cfg.Limit, MaxDuration)
	}
	return MaxDuration
}

// Abort ends the run now because the protocol or the workload hit an error it
// cannot handle (a state that does not deserialise, say): the run is reported
// unfinished with the reason, instead of crashing the whole experiment.
func (rt *Runtime) Abort(reason string) {
	rt.stats.Unrecoverable++
	rt.stats.UnrecoverableNote = "aborted: " + reason
	rt.eng.Stop()
	rt.aborted = true
}

// Now is the current simulated time.
func (rt *Runtime) Now() Time { return rt.eng.now }

// EventMark identifies the run's current point in its events: it changes
// whenever an event is scheduled or run. A protocol that finds it unchanged
// since it scheduled an event knows that the event is still the last one
// scheduled and has not run: work joined to it runs in the order an event
// of its own, scheduled now for the same time, would have.
type EventMark struct{ scheduled, executed uint64 }

// EventMark returns the run's current EventMark.
func (rt *Runtime) EventMark() EventMark {
	return EventMark{rt.eng.Scheduled(), rt.eng.Executed()}
}

// Config returns the cluster configuration.
func (rt *Runtime) Config() Config { return rt.cfg }

// Workload returns the application.
func (rt *Runtime) Workload() Workload { return rt.wl }

// Stats gives the protocol write access to the run's counters (checkpoint
// bytes, unrecoverable patterns, ...).
func (rt *Runtime) Stats() *Stats { return &rt.stats }

// NumObjects is the number of application objects.
func (rt *Runtime) NumObjects() int { return len(rt.objs) }

// Progress returns completed and total work in the workload's units.
func (rt *Runtime) Progress() (done, total int64) { return rt.progress, rt.total }

// Fraction returns the share of the workload done, from 0 to 1 (it may go
// back after a rollback). Unlike the rest of the runtime, it may be called
// from another goroutine while the run goes on, for a progress display.
func (rt *Runtime) Fraction() float64 { return math.Float64frombits(rt.shown.Load()) }

// Finished reports whether the workload has completed.
func (rt *Runtime) Finished() bool { return rt.finished }

// Epoch is the current application epoch.
func (rt *Runtime) Epoch() uint32 { return rt.epoch }

// MessageCPU is the CPU time a message or transfer of size bytes costs at one
// end: network.message_cpu, plus network.cpu_load of a core for as long as
// the bytes take at full bandwidth. The runtime charges it to an application
// message's sending and receiving handlers; a protocol charges its own
// transfers where its model says they cost CPU (dps).
func (rt *Runtime) MessageCPU(size int64) Time {
	d := rt.cfg.MessageCPU
	if rt.cfg.CPULoad == 0 || size <= 0 {
		return d
	}
	// both terms are below MaxDuration: their sum cannot wrap
	return rt.bounded(d+min(FromSeconds(rt.cfg.CPULoad*float64(size)/rt.cfg.Bandwidth), MaxDuration),
		"network.bandwidth, network.cpu_load and network.message_cpu")
}

// SetLayerCPU makes every application message cost d more CPU time at each
// end, on top of MessageCPU: the cost of the protocol's message-passing layer
// (MPI/FT's middleware intercepts every send and receive). A protocol calls
// it from Init; d is at least 0 and under MaxDuration.
func (rt *Runtime) SetLayerCPU(d Time) {
	rt.layerCPU = d
	rt.freeMsgs = rt.cfg.CPULoad == 0 && rt.cfg.MessageCPU == 0 && d == 0
}

// appMessageCPU is the CPU time an application message of size bytes costs
// at each end: MessageCPU and the protocol layer's.
func (rt *Runtime) appMessageCPU(size int64) Time {
	if rt.freeMsgs {
		return 0
	}
	return rt.paidMessageCPU(size)
}

// paidMessageCPU is appMessageCPU when messages cost CPU, kept apart so that
// the check above inlines.
func (rt *Runtime) paidMessageCPU(size int64) Time {
	d := rt.MessageCPU(size)
	if rt.layerCPU > 0 {
		// both are at most MaxDuration: their sum cannot wrap
		d = rt.bounded(d+rt.layerCPU, "the protocol's middleware_cpu")
	}
	return d
}

// bounded returns duration d, or MaxDuration after ending the run if d
// reaches it; keys names the scenario keys that made it so.
func (rt *Runtime) bounded(d Time, keys string) Time {
	if d < MaxDuration {
		return d
	}
	if !rt.aborted {
		rt.Abort(fmt.Sprintf("a transfer or computation would take %d years or more (check %s)", MaxYears, keys))
	}
	return MaxDuration
}

// setProgress records object id's progress and reacts to it: progress-scripted
// failures, recovery bookkeeping and completion.
func (rt *Runtime) setProgress(id ObjID, p int64) {
	rt.updateProgress(id, p)
	if rt.progress < rt.total {
		return
	}
	if rt.restoredIn == rt.eng.executed {
		rt.finishLater() // a handler the restores started at once
		return
	}
	rt.finish()
}

// restoredProgress records the progress of object id restored or re-created
// by a protocol. Completion reached in the same event is judged once the
// event is over: a rollback restores object after object, and a lost object
// (its progress counted as 0) restored before the others are rolled back
// would otherwise make the sum reach the total for a moment and end the run
// unfinished.
func (rt *Runtime) restoredProgress(id ObjID, p int64) {
	rt.restoredIn = rt.eng.executed // before the recoveries are judged
	rt.updateProgress(id, p)
	if rt.progress >= rt.total {
		rt.finishLater()
	}
}

// finishLater checks for completion, and for recoveries, after the current
// event.
func (rt *Runtime) finishLater() {
	if !rt.finished && !rt.finishDue {
		rt.finishDue = true
		rt.eng.Schedule(rt.eng.now, rt.kFinish, 0, 0)
	}
}

// onFinish judges the recoveries, and ends the run if the workload is still
// complete, after the event that restored objects.
func (rt *Runtime) onFinish(Event) {
	rt.finishDue = false
	if len(rt.open) > 0 {
		rt.closeRecoveries()
	}
	if rt.progress >= rt.total {
		rt.finish()
	}
}

// updateProgress records object id's progress, and fires the failures
// scripted at a share of progress and recovery bookkeeping.
func (rt *Runtime) updateProgress(id ObjID, p int64) {
	o := &rt.objs[id]
	rt.progress += p - o.progress
	o.progress = p
	if len(rt.catchUps) > 0 {
		rt.progressed(id)
	}
	if rt.total > 0 {
		rt.shown.Store(math.Float64bits(min(1, max(0, float64(rt.progress)/float64(rt.total)))))
	}
	for len(rt.planned) > 0 && rt.total > 0 && float64(rt.progress) >= rt.planned[0].Progress*float64(rt.total) {
		rt.eng.Schedule(rt.eng.now, rt.kFail, int32(rt.planned[0].Node), -1)
		rt.planned = rt.planned[1:]
	}
	if len(rt.open) > 0 {
		rt.closeRecoveries()
	}
}

// finish ends the run: the workload is complete.
func (rt *Runtime) finish() {
	if !rt.finished {
		rt.finished = true
		rt.finishedAt = rt.eng.now
		for _, i := range rt.open {
			rt.failRecs[i].RecoveredAt = rt.eng.now
		}
		rt.open = rt.open[:0]
		rt.eng.Stop()
	}
}
