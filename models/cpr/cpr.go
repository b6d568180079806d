package cpr

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"ftsim/internal/chunk"
	"ftsim/models/none"
	"ftsim/sim"
)

// Level is one storage level of a (multi-level) checkpoint: checkpoint number
// j is written to this level when j is a multiple of Every (as SCR and FTI do:
// frequent cheap local copies, rarer partner and file-system copies).
type Level struct {
	Tier  Tier
	Every int
}

// Tier is where a level keeps its copies.
type Tier int

// The checkpoint tiers.
const (
	PFS    Tier = iota // the shared parallel file system: survives any failure
	Disk               // the node's local disk: lost with the node
	Memory             // the node's memory: lost with the node
	Buddy              // a partner node's memory, over the network: lost when the partner fails
)

// ParseTier maps a scenario name to a Tier.
func ParseTier(s string) (Tier, error) {
	switch s {
	case "pfs":
		return PFS, nil
	case "disk", "local":
		return Disk, nil
	case "memory":
		return Memory, nil
	case "buddy", "partner":
		return Buddy, nil
	}
	return 0, fmt.Errorf("unknown checkpoint tier %q (pfs, disk, memory, buddy)", s)
}

// String is the tier's name as a scenario writes it.
func (t Tier) String() string { return [...]string{"pfs", "disk", "memory", "buddy"}[t] }

// Interval policies.
const (
	PolicyFixed      = "fixed"      // every Period of time
	PolicyIterations = "iterations" // every Every units of workload progress per object (iteration boundaries)
	PolicyYoung      = "young"      // √(2Cμ)
	PolicyDaly       = "daly"       // Daly's higher-order optimum
	PolicyAuto       = "auto"       // measure the first checkpoint's cost C, then Daly
	PolicyHazard     = "hazard"     // at each checkpoint, the first-order optimum for the nodes' failure rates (hazard.go)
	PolicyGiven      = "given"      // Config.IntervalFor the estimated cost C (a protocol running cpr under it brings its own optimum)
)

// Config configures the protocol.
type Config struct {
	Policy string
	Period sim.Time // Fixed; also the first interval of Auto
	Every  int64    // Iterations: progress units per object between checkpoints
	Levels []Level
	// NoDrain records the messages in flight as channel state instead of
	// waiting for the network to empty (the LuNA-style variant).
	NoDrain bool
	// MaxLive defers a due checkpoint until the modeled live state is at most
	// this many bytes (LuNA: checkpoint when little data is live), waiting at
	// most MaxWait; 0 disables.
	MaxLive int64
	MaxWait sim.Time
	// PlatformMTBF (μ) and Restart (R) feed Young and Daly.
	PlatformMTBF sim.Time
	Restart      sim.Time
	// Law feeds the hazard policy.
	Law FailureLaw
	// IntervalFor is the interval of policy given for a checkpoint cost c.
	IntervalFor func(c sim.Time) sim.Time
	// BuddyOffset places each node's buddy copy on the slot BuddyOffset
	// places further in rank order (sim.Runtime.SlotPartner; 0 means 1,
	// the next one). A multiple of the failure-domain size puts it in
	// another domain.
	BuddyOffset int
	// Image is the modeled size of each object's process image beyond its
	// application state (code, heap, libraries): a system-level checkpointer
	// such as BLCR writes and reads it with every checkpoint, where an
	// application-level one (Image = 0) saves the state alone.
	Image int64
	// NoRebuild skips the rebuild after a restore from the buddy tier
	// (Protocol.rebuild): the pieces a failure left with one copy then keep
	// one until the next checkpoint. By default they get their second copy
	// before the application resumes, as SCR rebuilds its cached datasets
	// in SCR_Init.
	NoRebuild bool
	// MiddlewareCPU is the CPU time every application message costs at each
	// end in the fault-tolerant middleware's message-passing layer, on top
	// of the network's (MPI/FT's fault-free overhead without checkpoints,
	// Table 5.4); 0 = none.
	MiddlewareCPU sim.Time
	// Substep is the length of the time steps the application's handlers
	// stand for (a macro-step of a stencil is many sweeps): a checkpoint
	// cuts each running handler at the end of its current time step
	// (sim.Runtime.InterruptApp) instead of waiting for the handler to end,
	// so that its interval is not rounded up to the handler's length. 0
	// waits for the handlers.
	Substep sim.Time
}

// HasTier reports whether a level writes to tier t.
func (cfg Config) HasTier(t Tier) bool {
	return slices.ContainsFunc(cfg.Levels, func(l Level) bool { return l.Tier == t })
}

// LostWithNode reports whether every level keeps a node's copies only where
// that node's failure destroys them: on the node itself (disk, memory), or on
// its buddy when the application has a single node (its buddy is itself).
// Recovery needs every node's copy, so any failure then rolls the run back to
// its initial state, as without protocol.
func (cfg Config) LostWithNode(nodes int) bool {
	for _, l := range cfg.Levels {
		if l.Tier == PFS || (l.Tier == Buddy && nodes > 1) {
			return false
		}
	}
	return true
}

// Protocol is blocking coordinated checkpoint/restart. At each checkpoint the
// application is paused, the network drained (or its messages recorded), every
// object serialised to real bytes and the modeled bytes written to the
// configured levels; every node writes its own objects. After a detected
// failure every object rolls back to the newest checkpoint whose copies all
// survive (falling back level by level, then to an older checkpoint, then to
// the initial state), on spares in place of the failed nodes or, with no spare
// left, on the survivors (restart on fewer nodes).
type Protocol struct {
	sim.BaseProtocol
	cfg Config

	gen    int // bumped by every failure: work of an older generation is void
	seq    int // number of the newest checkpoint of the job's current history (levels: every divides it)
	cps    []*checkpoint
	nodes  *none.Replacer
	notBef sim.Time

	interval  sim.Time // current interval (time policies)
	boundary  int64    // Iterations: per-object progress at which the next checkpoint is taken
	held      int      // Iterations: objects held at the boundary
	rewatch   bool     // Iterations: watchStuck found a quiet moment that was not stuck; watch again after the next handler
	passed    int64    // Iterations: the boundary of the checkpoint the application last resumed from
	due       bool     // a checkpoint is due, waiting for little live state
	dueSince  sim.Time
	retryAt   sim.Time // MaxLive: when a deferred checkpoint is looked at again
	busy      bool     // a checkpoint or a recovery is in progress
	measuredC sim.Time
	cost      sim.Time // Hazard: the estimated checkpoint cost C
	quad      hazardQuadrature
	varied    bool // Hazard: an interval differed from the first

	replicas   Replicas  // nil unless a replication protocol runs cpr under it
	recovering bool      // busy with a failure's recovery, not a checkpoint
	run        *writeRun // the checkpoint being written (or the last one written)

	// RestoredFrom lists, per recovery, the tier it restored from ("scratch"
	// when no checkpoint survived); RestoreTime, per restore from a
	// checkpoint, the time from its first read to the application's
	// resumption (the rebuild included).
	RestoredFrom []string
	RestoreTime  []sim.Time
	// RebuiltBytes counts the bytes rebuilds wrote (metric
	// cpr_rebuild_bytes).
	RebuiltBytes int64
	// Rewritten counts the pieces of checkpoints being written that a
	// failure the application survived lost and a survivor wrote again;
	// Retaken, the checkpoints taken again instead (Survived).
	Rewritten, Retaken int
}

// checkpoint is a committed (or in-progress) global checkpoint.
type checkpoint struct {
	n        int
	boundary int64        // Iterations: the boundary it was taken at
	snaps    []sim.Snap   // per object (its inbox: delivered-not-handled, + in flight with NoDrain)
	owner    []sim.NodeID // node that wrote each object's piece
	size     []int64      // per object: modeled bytes written (state, image, saved messages)
	bytes    []int64      // per node: the bytes of the piece it wrote
	copies   map[Tier]pieceCopies
}

// pieceCopies are, per node, the copies at one level of the piece the node
// wrote (nil: it wrote none). Indexed by node rather than keyed: a checkpoint
// of 10,000 nodes fills and reads one at every checkpoint.
type pieceCopies [][]copyLoc

// copyLoc is one copy of a node's piece: on holder (None for the parallel file
// system), valid while holder keeps the incarnation it had when written.
type copyLoc struct {
	holder sim.NodeID
	inc    uint32
}

// New returns the protocol with configuration cfg. Its errors start with
// the scenario key at fault ("protocol.period: ..."), which the scenarios
// package locates at the key's line.
func New(cfg Config) (*Protocol, error) {
	if len(cfg.Levels) == 0 {
		cfg.Levels = []Level{{Tier: PFS, Every: 1}}
	}
	seen := map[Tier]bool{}
	for i, l := range cfg.Levels {
		if l.Every < 1 {
			return nil, fmt.Errorf("protocol.levels: level %d (%s): every must be at least 1", i+1, l.Tier)
		}
		if seen[l.Tier] {
			// A checkpoint keeps one copy per tier (checkpoint.copies): a
			// second level on the tier would write it again, paying twice
			// for a copy recorded once.
			return nil, fmt.Errorf("protocol.levels: level %d: tier %s appears twice (a checkpoint keeps one copy per tier: list each tier once)", i+1, l.Tier)
		}
		seen[l.Tier] = true
	}
	switch cfg.Policy {
	case PolicyFixed, PolicyAuto:
		if cfg.Period <= 0 {
			return nil, fmt.Errorf("protocol.period: checkpoint interval %q needs a positive period", cfg.Policy)
		}
	case PolicyIterations:
		if cfg.Every < 1 {
			return nil, fmt.Errorf("protocol.every: checkpoint interval %q needs every ≥ 1", cfg.Policy)
		}
	case PolicyYoung, PolicyDaly:
		if cfg.PlatformMTBF <= 0 {
			return nil, fmt.Errorf("protocol.interval: checkpoint interval %q needs failures with a finite MTBF", cfg.Policy)
		}
	case PolicyHazard:
		if !(cfg.Law.NodeMTBF > 0 && cfg.Law.Shape > 0 && cfg.Law.Extra >= 0) {
			return nil, fmt.Errorf("protocol.interval: checkpoint interval %q needs exponential or Weibull failures", cfg.Policy)
		}
	case PolicyGiven:
		if cfg.IntervalFor == nil {
			return nil, fmt.Errorf("protocol.interval: checkpoint interval %q needs Config.IntervalFor", cfg.Policy)
		}
	default:
		return nil, fmt.Errorf("protocol.interval: unknown checkpoint interval %q (fixed, iterations, young, daly, auto, hazard)", cfg.Policy)
	}
	if cfg.BuddyOffset < 0 {
		return nil, fmt.Errorf("protocol.buddy_offset: must be ≥ 1, got %d", cfg.BuddyOffset)
	}
	if cfg.Image < 0 {
		return nil, fmt.Errorf("protocol.image: negative process image %d B", cfg.Image)
	}
	if err := sim.CheckDelay("protocol.period", cfg.Period); err != nil {
		return nil, err
	}
	if err := sim.CheckDelay("protocol.max_wait", cfg.MaxWait); err != nil {
		return nil, err
	}
	if err := sim.CheckDelay("protocol.middleware_cpu", cfg.MiddlewareCPU); err != nil {
		return nil, err
	}
	if err := sim.CheckDelay("protocol.substep", cfg.Substep); err != nil {
		return nil, err
	}
	return &Protocol{cfg: cfg}, nil
}

var _ sim.Cutter = (*Protocol)(nil)

// CutStep implements sim.Cutter: checkpoints cut handlers at Substep.
func (p *Protocol) CutStep() sim.Time { return p.cfg.Substep }

// Init prepares the node replacement and sets the middleware's cost.
func (p *Protocol) Init(rt *sim.Runtime) {
	p.BaseProtocol.Init(rt)
	rt.SetLayerCPU(p.cfg.MiddlewareCPU)
	p.nodes = none.NewReplacer(rt, p.maybeRecover)
}

// Interval is the current checkpoint interval (0 for the iterations policy).
func (p *Protocol) Interval() sim.Time { return p.interval }

// Start schedules the first checkpoint.
func (p *Protocol) Start() {
	switch p.cfg.Policy {
	case PolicyFixed, PolicyAuto:
		p.interval = p.cfg.Period
	case PolicyYoung, PolicyDaly:
		p.interval = p.optimal(p.EstimateCost())
	case PolicyGiven:
		p.interval = max(p.cfg.IntervalFor(p.EstimateCost()), sim.Microsecond)
	case PolicyHazard:
		p.cost = p.EstimateCost() // the interval is set when armed
	}
	p.arm()
}

// IntervalVaried reports whether the hazard policy set an interval other
// than its first one: the periodic models then do not apply.
func (p *Protocol) IntervalVaried() bool { return p.varied }

// optimal is Young's or Daly's interval for a checkpoint cost c.
func (p *Protocol) optimal(c sim.Time) sim.Time {
	return p.optimalAt(c, p.cfg.PlatformMTBF.Seconds())
}

// optimalAt is Young's interval for a checkpoint cost c and an MTBF of mu
// seconds (Daly's under the Daly policy).
func (p *Protocol) optimalAt(c sim.Time, mu float64) sim.Time {
	var tau float64
	if p.cfg.Policy == PolicyDaly {
		tau = DalyHigher(c.Seconds(), mu)
	} else {
		tau = Young(c.Seconds(), mu)
	}
	if math.IsNaN(tau) || tau <= 0 {
		tau = mu
	}
	return max(sim.FromSeconds(tau), sim.Microsecond)
}

// EstimateCost is the modeled time of one checkpoint with the current
// placement, written to the levels of a checkpoint that hits all of them.
func (p *Protocol) EstimateCost() sim.Time {
	rt := p.RT
	cfg := rt.Config()
	bytes := map[sim.NodeID]int64{}
	for i := 0; i < rt.NumObjects(); i++ {
		if id := sim.ObjID(i); p.writer(id) == id {
			bytes[rt.NodeOf(id)] += rt.ModeledSize(id) + p.cfg.Image
		}
	}
	var worst int64
	for _, b := range bytes {
		worst = max(worst, b)
	}
	var total sim.Time
	for _, l := range p.cfg.Levels {
		switch l.Tier {
		case PFS:
			share := cfg.PFSBandwidth / float64(len(bytes))
			if cfg.PFSNodeBandwidth > 0 {
				share = math.Min(share, cfg.PFSNodeBandwidth)
			}
			total = max(total, cfg.PFSLatency+sim.TransferTime(worst, share))
		case Disk:
			total = max(total, sim.TransferTime(worst, cfg.DiskBandwidth))
		case Memory:
			total = max(total, sim.TransferTime(worst, cfg.MemBandwidth))
		case Buddy:
			// its own copy in memory, and one over the network to its buddy
			// (none when it is the only node)
			total = max(total, sim.TransferTime(worst, cfg.MemBandwidth))
			for _, n := range rt.Slots() {
				if to := rt.SlotPartner(n, p.cfg.BuddyOffset); to != sim.None {
					total = max(total, rt.Latency(n, to)+sim.TransferTime(bytes[n], cfg.Bandwidth))
				}
			}
		}
	}
	return total
}

// arm schedules the next checkpoint from now.
func (p *Protocol) arm() {
	rt := p.RT
	if p.cfg.Policy == PolicyIterations {
		// the next boundary after the slowest object, as after a rollback
		low := int64(math.MaxInt64)
		for i := 0; i < rt.NumObjects(); i++ {
			low = min(low, rt.ObjectProgress(sim.ObjID(i)))
			rt.ResumeObject(sim.ObjID(i))
		}
		// past the boundary just checkpointed even when some objects are
		// still behind it (a checkpoint taken when the application got
		// stuck, see watchStuck)
		p.boundary = max((low/p.cfg.Every+1)*p.cfg.Every, p.passed+p.cfg.Every)
		p.held, p.rewatch = 0, false
		return
	}
	if p.cfg.Policy == PolicyHazard {
		// from the nodes' ages now: a failure may also have put a new
		// node in a slot
		next := p.hazardInterval(p.cost)
		p.varied = p.varied || (p.interval != 0 && next != p.interval)
		p.interval = next
	}
	gen := p.gen
	rt.At(rt.Now()+p.interval, func() {
		if gen == p.gen && !p.busy {
			p.request()
		}
	})
}

// OnHandled holds objects at iteration boundaries and triggers deferred
// checkpoints. Under the iterations policy each object stops when it has
// completed the boundary iteration (as every rank of an MPI/FT Model-IIa
// program calls the collective checkpoint after iteration k); when all are
// there, or when the application can go no further before that (watchStuck),
// the checkpoint is taken.
func (p *Protocol) OnHandled(id sim.ObjID) {
	if p.busy {
		return
	}
	if p.due {
		p.tryCheckpoint()
		return
	}
	if p.cfg.Policy != PolicyIterations {
		return
	}
	rt := p.RT
	_, total := rt.Progress()
	if p.boundary*int64(rt.NumObjects()) >= total {
		return // no checkpoint after the last iteration
	}
	watch := p.rewatch && p.held > 0
	p.rewatch = false
	if rt.ObjectProgress(id) >= p.boundary {
		rt.PauseObject(id)
		p.held++
		if p.held == rt.NumObjects() {
			p.request()
			return
		}
		watch = watch || p.held == 1
	}
	if watch {
		p.watchStuck()
	}
}

// watchStuck takes the boundary's checkpoint before every object reached it
// if the application gets stuck: in a request-reply program an object behind
// the boundary may wait for an answer from one held there, which answers
// only after the checkpoint. With nothing running, nothing to run and
// nothing in flight the global state is a consistent cut (the held objects'
// waiting requests are saved in their inboxes), so the checkpoint is taken
// there, and the next boundary is the one after it. A quiet moment that is
// not stuck (a handler just ended and the next one on its core is about to
// start) is watched again after the next handler: watching again at once
// would find the same moment, without end.
func (p *Protocol) watchStuck() {
	gen, b := p.gen, p.boundary
	p.RT.WhenQuiet(true, func() {
		if gen != p.gen || b != p.boundary || p.busy || p.due {
			return // a failure, or the round's checkpoint is under way or taken
		}
		if !p.RT.AppStuck() {
			p.rewatch = true
			return
		}
		p.request()
	})
}

// request makes a checkpoint due; it starts at once unless it waits for the
// live state to shrink.
func (p *Protocol) request() {
	p.due, p.dueSince = true, p.RT.Now()
	p.tryCheckpoint()
}

func (p *Protocol) tryCheckpoint() {
	rt := p.RT
	if p.cfg.MaxLive > 0 && rt.Now()-p.dueSince < p.cfg.MaxWait {
		var live int64
		for i := 0; i < rt.NumObjects(); i++ {
			live += rt.ModeledSize(sim.ObjID(i))
		}
		if live > p.cfg.MaxLive {
			p.retryWhenWaited()
			return
		}
	}
	p.due = false
	p.checkpoint()
}

// retryWhenWaited looks at the due checkpoint again when its wait is over:
// every handler's end looks too, but nothing may run until then (under the
// iterations policy every object can be held at the boundary).
func (p *Protocol) retryWhenWaited() {
	at := p.dueSince + p.cfg.MaxWait
	if p.retryAt == at {
		return // already set for this due checkpoint
	}
	p.retryAt = at
	due := p.dueSince
	p.RT.At(at, func() {
		if p.due && p.dueSince == due && !p.busy {
			p.tryCheckpoint()
		}
	})
}

// checkpoint pauses the application, waits for a consistent cut and writes.
func (p *Protocol) checkpoint() {
	rt := p.RT
	p.busy = true
	gen := p.gen
	rt.InterruptApp()
	rt.WhenQuiet(!p.cfg.NoDrain, func() {
		if gen != p.gen {
			return
		}
		start := rt.Now() // the cut: from here the application waits for the checkpoint only
		for i := 0; i < rt.NumObjects(); i++ {
			if p.writer(sim.ObjID(i)) == sim.None {
				// a member died and is not yet detected: the collective
				// checkpoint blocks until the detection aborts it
				return
			}
		}
		cp, writers, err := p.snapshot()
		if err != nil {
			rt.Abort(fmt.Sprintf("checkpoint: %v", err))
			return
		}
		p.write(cp, writers, func(ok bool) {
			if gen != p.gen || !ok {
				return // a writer failed: the checkpoint is void, the detection recovers
			}
			p.commit(cp)
			st := rt.Stats()
			st.CheckpointTime += rt.Now() - start
			for _, n := range rt.Slots() {
				rt.Span(n, start, rt.Now(), "checkpoint")
			}
			if p.cfg.Policy == PolicyAuto && p.measuredC == 0 {
				p.measuredC = rt.Now() - start
				p.interval = max(sim.FromSeconds(DalyHigher(p.measuredC.Seconds(), p.cfg.PlatformMTBF.Seconds())), sim.Microsecond)
			}
			if r, ok := p.replicas.(ReplicaRestarter); ok {
				r.RestartReplicas(func() {
					if gen == p.gen {
						p.resume()
					}
				})
				return
			}
			p.resume()
		})
	})
}

// piece takes object id's share of checkpoint cp from writer w (id itself,
// or its live replica): its snapshot, addressed to id, the node that writes
// it and its modeled size.
func (p *Protocol) piece(cp *checkpoint, id, w sim.ObjID) error {
	rt := p.RT
	s, err := rt.Snapshot(w)
	if err != nil {
		return err
	}
	if w != id {
		s.Inbox = readdressed(s.Inbox, id)
	}
	cp.snaps[id], cp.owner[id] = s, rt.NodeOf(w)
	cp.size[id] = rt.ModeledSize(w) + p.cfg.Image + s.WireSize()
	return nil
}

// snapshot serialises every object (and, without drain, the messages in
// flight); it returns the nodes that wrote a piece, in ascending order.
func (p *Protocol) snapshot() (*checkpoint, []sim.NodeID, error) {
	rt := p.RT
	n := rt.NumObjects()
	cp := &checkpoint{n: p.seq + 1, boundary: p.boundary, snaps: make([]sim.Snap, n),
		owner: make([]sim.NodeID, n), size: make([]int64, n), bytes: make([]int64, rt.NumNodes()), copies: map[Tier]pieceCopies{}}
	written := make([]bool, n)
	for i := 0; i < n; i++ {
		id := sim.ObjID(i)
		w := p.writer(id)
		if err := p.piece(cp, id, w); err != nil {
			return nil, nil, err
		}
		written[i] = w == id
	}
	if p.cfg.NoDrain {
		fl := rt.InFlight()
		sort.SliceStable(fl, func(a, b int) bool { return fl[a].SentAt < fl[b].SentAt })
		for _, m := range fl {
			cp.snaps[m.Dst].Inbox = append(cp.snaps[m.Dst].Inbox, m)
			cp.size[m.Dst] += m.WireSize()
		}
	}
	wrote := make([]bool, rt.NumNodes())
	for i, sz := range cp.size {
		if written[i] {
			cp.bytes[cp.owner[i]] += sz
			wrote[cp.owner[i]] = true
		}
	}
	var writers []sim.NodeID
	for n, ok := range wrote {
		if ok {
			writers = append(writers, sim.NodeID(n))
		}
	}
	return cp, writers, nil
}

// write stores the piece of every node of writers (those of cp's snapshot)
// on the levels checkpoint cp.n belongs to and calls done when all writes
// are complete, with false if any of them failed.
func (p *Protocol) write(cp *checkpoint, writers []sim.NodeID, done func(ok bool)) {
	rt := p.RT
	w := &writeRun{cp: cp, gen: p.gen, pending: 1, all: true, done: done, locs: chunk.Alloc[copyLoc]{Size: 1024}}
	w.finished = w.finish
	p.run = w
	st := rt.Stats()
	for _, l := range p.cfg.Levels {
		if cp.n%l.Every != 0 {
			continue
		}
		cp.copies[l.Tier] = make(pieceCopies, rt.NumNodes())
		for _, n := range writers {
			st.CheckpointBytes += cp.bytes[n]
			p.writePiece(w, l.Tier, n, cp.bytes[n])
		}
	}
	w.finish(true)
}

// writeRun is a checkpoint being written: the writes and transfers in
// flight, and under replication the ones not yet done, which a failure the
// application survives may have to redo from elsewhere (Survived).
type writeRun struct {
	cp      *checkpoint
	gen     int
	pending int
	all     bool
	done    func(ok bool)
	ops     []*writeOp // under replication only
	// finished is finish as a func value, made once: a method value made
	// per write or transfer was an allocation each, two per node and
	// checkpoint
	finished func(ok bool)
	// locs are the copy locations of the checkpoint's pieces, one or two
	// per node, cut from blocks (a slice each was an allocation per node
	// and checkpoint)
	locs chunk.Alloc[copyLoc]
}

// newLocs returns a slice of the copy locations ls from w.locs.
func (w *writeRun) newLocs(ls ...copyLoc) []copyLoc {
	s := w.locs.Slice(len(ls))
	copy(s, ls)
	return s
}

// writeOp is a write of a node's piece to a tier, or the transfer of its
// buddy copy.
type writeOp struct {
	owner, to sim.NodeID // to: the buddy copy's holder; None for the owner's own write
	bytes     int64
	settled   bool // done, or redone by another op
}

func (w *writeRun) finish(ok bool) {
	w.pending--
	w.all = w.all && ok
	if w.pending == 0 {
		w.done(w.all)
	}
}

// writePiece writes b bytes of node n's piece to tier t, where its copies
// are (a piece that grows keeps them), or else where they go.
func (p *Protocol) writePiece(w *writeRun, t Tier, n sim.NodeID, b int64) {
	rt := p.RT
	locs := w.cp.copies[t]
	if locs[n] == nil {
		self := copyLoc{holder: n, inc: rt.Incarnation(n)}
		switch t {
		case PFS:
			locs[n] = w.newLocs(copyLoc{holder: sim.None})
		case Disk, Memory:
			locs[n] = w.newLocs(self)
		case Buddy:
			// the node keeps its own copy in memory and sends one to its
			// partner: the piece is lost only when both fail
			to := p.buddy(n)
			locs[n] = w.newLocs(self, copyLoc{holder: to, inc: rt.Incarnation(to)})
		}
	}
	switch t {
	case PFS:
		rt.StorageWrite(n, sim.PFS, b, p.op(w, n, sim.None, b))
	case Disk:
		rt.StorageWrite(n, sim.Disk, b, p.op(w, n, sim.None, b))
	case Memory:
		rt.StorageWrite(n, sim.Memory, b, p.op(w, n, sim.None, b))
	case Buddy:
		to := locs[n][1].holder
		rt.StorageWrite(n, sim.Memory, b, p.op(w, n, sim.None, b))
		rt.Transfer(n, to, b, sim.TagTransfer, p.op(w, n, to, b))
	}
}

// op returns the completion of a write or transfer of run w. Under
// replication one that failed is not counted: the detection of its node's
// failure redoes it (Survived), or it interrupts the application.
func (p *Protocol) op(w *writeRun, owner, to sim.NodeID, b int64) func(bool) {
	w.pending++
	if p.replicas == nil {
		return w.finished
	}
	o := &writeOp{owner: owner, to: to, bytes: b}
	w.ops = append(w.ops, o)
	return func(ok bool) {
		if ok && !o.settled && w.gen == p.gen {
			o.settled = true
			w.finish(true)
		}
	}
}

// buddy is the node that holds node n's buddy copy: its partner at
// BuddyOffset, or n itself when it is the application's only node. Under
// replication a node known to be dead keeps its slot (its pairs run
// degraded): the copy then goes to the next slot's node that is not.
func (p *Protocol) buddy(n sim.NodeID) sim.NodeID {
	rt := p.RT
	b := rt.SlotPartner(n, p.cfg.BuddyOffset)
	if b == sim.None {
		return n
	}
	slots := rt.Slots()
	for i, k := rt.SlotIndex(b), len(slots); rt.FailureDetected(b) || b == n; {
		if i = (i + 1) % k; slots[i] == rt.SlotPartner(n, p.cfg.BuddyOffset) {
			return n // no live node besides n
		}
		b = slots[i]
	}
	return b
}

// commit makes cp the newest checkpoint of each level it was written to and
// releases what it replaces.
func (p *Protocol) commit(cp *checkpoint) {
	p.seq = cp.n
	p.passed = cp.boundary
	p.RT.Stats().Checkpoints++
	p.account(cp, +1)
	p.cps = append(p.cps, cp)
	// keep, per tier, only the newest checkpoint that has it
	newest := map[Tier]int{}
	for i, c := range p.cps {
		for t := range c.copies {
			newest[t] = i
		}
	}
	keep := p.cps[:0]
	for i, c := range p.cps {
		used := false
		for t := range c.copies {
			if newest[t] == i {
				used = true
			} else {
				p.accountTier(c, t, -1)
				delete(c.copies, t)
			}
		}
		if used {
			keep = append(keep, c)
		}
	}
	p.cps = keep
}

// account adds (sign +1) or releases (−1) the memory held by cp's in-memory copies.
func (p *Protocol) account(cp *checkpoint, sign int64) {
	for t := range cp.copies {
		p.accountTier(cp, t, sign)
	}
}

func (p *Protocol) accountTier(cp *checkpoint, t Tier, sign int64) {
	if t != Memory && t != Buddy {
		return
	}
	for n, locs := range cp.copies[t] {
		for _, loc := range locs {
			if p.valid(loc) { // a failure released the others with their node
				p.RT.MemAdd(loc.holder, sim.MemCheckpoint, sign*cp.bytes[n])
			}
		}
	}
}

// AuditMemory implements sim.MemoryAuditor: each live node accounts as
// MemCheckpoint the pieces it holds of the checkpoints kept in memory or at
// a buddy.
func (p *Protocol) AuditMemory() error {
	rt := p.RT
	held := make([]int64, rt.NumNodes())
	for _, cp := range p.cps {
		for _, tier := range []Tier{Memory, Buddy} {
			for owner, locs := range cp.copies[tier] {
				for _, loc := range locs {
					if loc.holder != sim.None && p.valid(loc) {
						held[loc.holder] += cp.bytes[owner]
					}
				}
			}
		}
	}
	if err := rt.MemMismatch(sim.MemCheckpoint, held, "checkpoints"); err != nil {
		return fmt.Errorf("cpr: %w", err)
	}
	return nil
}

// valid reports whether copy loc still exists.
func (p *Protocol) valid(loc copyLoc) bool {
	return loc.holder == sim.None || p.RT.Holds(loc.holder, loc.inc)
}

// source returns a surviving copy of owner's piece at tier t, preferring one
// on node to (a local read).
func (p *Protocol) source(cp *checkpoint, t Tier, owner, to sim.NodeID) (copyLoc, bool) {
	var found copyLoc
	ok := false
	for _, loc := range cp.copies[t][owner] {
		if !p.valid(loc) {
			continue
		}
		if loc.holder == to {
			return loc, true
		}
		if !ok {
			found, ok = loc, true
		}
	}
	return found, ok
}

// survives reports whether every piece of cp has a surviving copy at tier t.
func (p *Protocol) survives(cp *checkpoint, t Tier) bool {
	locs, ok := cp.copies[t]
	if !ok {
		return false
	}
	for owner, l := range locs {
		if l == nil {
			continue // no piece
		}
		if _, ok := p.source(cp, t, sim.NodeID(owner), sim.None); !ok {
			return false
		}
	}
	return true
}

// MetricRebuildBytes is the metric of the bytes rebuilds wrote, set in runs
// with a buddy level that rebuilds.
const MetricRebuildBytes = "cpr_rebuild_bytes"

// OnFinish reports the bytes rebuilds wrote.
func (p *Protocol) OnFinish() {
	if !p.cfg.NoRebuild && p.cfg.HasTier(Buddy) {
		p.RT.Stats().SetMetric(MetricRebuildBytes, float64(p.RebuiltBytes))
	}
}

// resume lets the application run again; the next checkpoint is armed first,
// because resuming may run (zero-time) handlers at once.
func (p *Protocol) resume() {
	p.busy, p.recovering = false, false
	p.arm()
	p.RT.ResumeApp()
}

var _ sim.MemoryAuditor = (*Protocol)(nil)
