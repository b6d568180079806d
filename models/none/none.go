// Package none is the baseline "protocol": no fault tolerance at all. When a
// failure is detected the whole application starts again from its initial
// state, on a spare in place of each failed node or, when the pool is empty,
// on the surviving nodes. Its expected makespan is the restart-from-scratch
// formula e^{λR}(1/λ + D)(e^{λT} − 1) (MPI/FT thesis eq. 1.1 with downtime and
// restart cost), which the tests check.
package none

import (
	"slices"

	"ftsim/sim"
)

// Protocol restarts the application from scratch after every detected failure.
type Protocol struct {
	sim.BaseProtocol
	r *Restarter
}

// New returns the baseline protocol.
func New() *Protocol { return &Protocol{} }

// Init creates the restarter.
func (p *Protocol) Init(rt *sim.Runtime) {
	p.BaseProtocol.Init(rt)
	p.r = NewRestarter(rt)
}

// OnFailure restarts the application from scratch.
func (p *Protocol) OnFailure(f sim.Failure) { p.r.OnFailure(f) }

// Replacer keeps the application's node set whole after failures: each failed
// application node is replaced by a spare after its boot or, when the pool is
// empty, dropped (the application then runs on fewer nodes). A node set that
// shrank takes spares back, up to its size at the start (cluster.nodes), at
// the next failure that finds them in the pool (repaired nodes join it): a
// job restarted or rolled back is relaunched on its whole allocation, as a
// resource manager would, rather than left on fewer nodes beside idle
// spares. With Config.WaitForRepair a node set that shrank does not run
// small: it stays pending until the pool, which repaired nodes join, can
// refill it, as a resource manager holds a requeued job until its whole
// allocation is free. A spare that dies while booting is replaced in turn.
// A node set left with no node at all, nothing booting, waits for the next
// repaired node whatever Config.WaitForRepair says (a job cannot run on
// none); without repairs (Config.Repair = 0) it is not Pending, and the
// protocol reports the run unrecoverable.
// Protocols call Failed on each detection and act when Pending turns false
// (the ready callback); when the node set grew, every object has been
// placed again.
type Replacer struct {
	rt      *sim.Runtime
	booting map[sim.NodeID]sim.NodeID // spare being booted -> node it replaces, or None: a slot of its own
	ready   func()
	// waiting: short of cluster.nodes with Config.WaitForRepair, or left
	// with no node; regrows when a repaired node joins the pool (watching:
	// told of the joins since it first waited)
	waiting, watching bool
}

// NewReplacer returns a replacer that calls ready whenever a replacement has
// booted (check Pending: more may still be booting).
func NewReplacer(rt *sim.Runtime, ready func()) *Replacer {
	return &Replacer{rt: rt, booting: map[sim.NodeID]sim.NodeID{}, ready: ready}
}

// Pending reports whether spares are still booting or the node set still
// waits for repaired nodes (Config.WaitForRepair, or no node left).
func (r *Replacer) Pending() bool { return len(r.booting) > 0 || r.waiting }

// Failed handles a detected failure; it reports whether the failed node was
// dropped for want of a spare (the caller may re-place objects; with
// Config.WaitForRepair, Pending then holds until the set is whole again).
func (r *Replacer) Failed(f sim.Failure) (dropped bool) {
	defer r.regrow()
	rt := r.rt
	failed := f.Node
	if old, ok := r.booting[f.Node]; ok && f.WasSpare { // a spare died while booting
		// (a report of the node's failure before it was repaired and
		// taken as a spare is not WasSpare: it changes nothing here)
		delete(r.booting, f.Node)
		failed = old
		if failed == sim.None {
			return false // regrow takes another
		}
	} else if rt.SlotIndex(f.Node) < 0 || rt.FailedAt(f.Node) != f.At || r.replacing(f.Node) {
		// not one of the slots, or a failure the node has been repaired
		// from since and taken back (a protocol may hand a failure over
		// again), or one a spare boots for already
		return false
	}
	// waiting, the job takes no spare before the pool has one for every
	// node it lacks (regrow)
	if !rt.Config().WaitForRepair || r.missing() < rt.SparesLeft() {
		if spare, ok := rt.TakeSpare(r.booted); ok {
			r.booting[spare] = failed
			return false
		}
	}
	rt.RemoveSlot(failed)
	return true
}

// missing is how many nodes the node set lacks of cluster.nodes, beyond
// those the spares booting for slots of their own will add.
func (r *Replacer) missing() int {
	n := r.rt.Config().Nodes - len(r.rt.Slots())
	for _, failed := range r.booting {
		if failed == sim.None {
			n--
		}
	}
	return n
}

// regrow boots spares for the slots the node set lost, as many as the pool
// has. With Config.WaitForRepair it takes them only once the pool has them
// all: the repaired nodes wait in the pool, cold, until the job can be
// relaunched whole, as a resource manager allocates a requeued job at once.
// A node set that still has no node, nothing booting, waits for a repaired
// one.
func (r *Replacer) regrow() {
	rt := r.rt
	missing := r.missing()
	r.waiting = rt.Config().WaitForRepair && missing > rt.SparesLeft()
	if !r.waiting {
		for ; missing > 0; missing-- {
			spare, ok := rt.TakeSpare(r.booted)
			if !ok {
				break
			}
			r.booting[spare] = sim.None
		}
		r.waiting = len(rt.Slots()) == 0 && len(r.booting) == 0 && rt.Config().Repair > 0
	}
	r.watch()
}

// watch has the replacer told of the repaired nodes joining the pool once
// it waits for them (only then: each join is an event of its own).
func (r *Replacer) watch() {
	if r.waiting && !r.watching {
		r.watching = true
		r.rt.OnPoolJoin(func() {
			if r.waiting {
				r.regrow()
			}
		})
	}
}

// replacing reports whether a spare is booting to take failed node n's place.
func (r *Replacer) replacing(n sim.NodeID) bool {
	for _, failed := range r.booting {
		if failed == n {
			return true
		}
	}
	return false
}

// Adopt takes over spare s, booting for failed node failed on behalf of a
// recovery that gave up: s takes failed's place once booted, as a spare the
// replacer took itself would, rather than a second spare being booted.
func (r *Replacer) Adopt(s, failed sim.NodeID) {
	r.booting[s] = failed
	r.rt.OnSpareReady(s, r.booted)
}

// booted puts spare s in the place of the node it replaces.
func (r *Replacer) booted(s sim.NodeID) {
	failed, ok := r.booting[s]
	if !ok {
		return
	}
	delete(r.booting, s)
	if failed == sim.None {
		// every object is placed again: the node set is relaunched whole,
		// its ranks in node order, as a resource manager numbers a new
		// allocation's nodes. (Appended, a node that came back took the
		// last rank, and on a torus or a fat tree every rank after its old
		// one lost its neighbours: a restart on the nodes of the first run
		// took 13 times as long.)
		slots := append(slices.Clone(r.rt.Slots()), s)
		slices.Sort(slots)
		r.rt.SetSlots(slots)
		r.rt.Place()
	} else {
		r.rt.ReplaceSlot(failed, s)
	}
	r.ready()
}

// Restarter is the restart-from-scratch recovery, for this protocol and for
// protocols that fall back to it: stop the application, replace each failed
// node by a spare (or drop it), and once every replacement has booted and the
// downtime has passed, re-create every object from its initial state.
type Restarter struct {
	rt        *sim.Runtime
	nodes     *Replacer
	notBefore sim.Time // downtime: no restart before this
	gen       int      // a pending restart of an older generation is void
	active    bool
	taken     map[sim.NodeID]sim.Time // the failures the active restart took in: node → failure time
	// Restarted, when set, runs once the application has been restarted,
	// before it resumes: a protocol that fell back on restarting from
	// scratch takes over again from the fresh start.
	Restarted func()
}

// NewRestarter returns a restarter for rt.
func NewRestarter(rt *sim.Runtime) *Restarter {
	r := &Restarter{rt: rt, taken: map[sim.NodeID]sim.Time{}}
	r.nodes = NewReplacer(rt, r.maybeRestart)
	return r
}

// Adopt hands the restart spare s, booting for failed node failed on behalf
// of a recovery that gave up (Replacer.Adopt). Call it before OnFailure.
func (r *Restarter) Adopt(s, failed sim.NodeID) { r.nodes.Adopt(s, failed) }

// Active reports whether a restart is in progress.
func (r *Restarter) Active() bool { return r.active }

// OnFailure handles a detected failure. During a restart, a failure handed
// over again changes nothing, whether or not its node has been repaired
// since: the restart took it in, and its downtime counts from the first
// report (a protocol may pass on a failure it had scheduled to recover
// from, as dps does after its downtime).
func (r *Restarter) OnFailure(f sim.Failure) {
	rt := r.rt
	if r.active && (rt.FailedAt(f.Node) != f.At || r.tookIn(f)) {
		return
	}
	r.active = true
	r.taken[f.Node] = f.At
	rt.PauseApp()
	rt.NewEpoch() // whatever survivors compute from now on is void
	r.gen++
	r.notBefore = max(r.notBefore, rt.Now()+rt.Config().Downtime)
	r.nodes.Failed(f)
	// the nodes a protocol falling back here had been told were dead but
	// left in their slots (they held nothing): the restart places objects
	// on every slot
	for _, n := range slices.Clone(rt.Slots()) {
		if n != f.Node && rt.FailureDetected(n) {
			r.taken[n] = rt.FailedAt(n)
			r.nodes.Failed(sim.Failure{Node: n, At: rt.FailedAt(n)})
		}
	}
	r.maybeRestart()
}

// tookIn reports whether the active restart has taken in failure f.
func (r *Restarter) tookIn(f sim.Failure) bool {
	at, ok := r.taken[f.Node]
	return ok && at == f.At
}

func (r *Restarter) maybeRestart() {
	rt := r.rt
	if r.nodes.Pending() {
		return
	}
	if len(rt.Slots()) == 0 {
		st := rt.Stats()
		st.Unrecoverable++
		st.UnrecoverableNote = "every node failed and no spare is left: the application cannot run"
		return
	}
	gen := r.gen
	rt.At(r.notBefore, func() {
		// (the failure and the last replacement's boot may both have
		// scheduled this restart: the first to run does it)
		if gen != r.gen || r.nodes.Pending() || !r.active {
			return
		}
		rt.RestartAll()
		r.active = false
		clear(r.taken)
		if r.Restarted != nil {
			r.Restarted()
		}
		rt.ResumeApp()
	})
}
