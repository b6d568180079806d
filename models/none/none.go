// Package none is the baseline "protocol": no fault tolerance at all. When a
// failure is detected the whole application starts again from its initial
// state, on a spare in place of each failed node or, when the pool is empty,
// on the surviving nodes. Its expected makespan is the restart-from-scratch
// formula e^{λR}(1/λ + D)(e^{λT} − 1) (MPI/FT thesis eq. 1.1 with downtime and
// restart cost), which the tests check.
package none

import "ftsim/sim"

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

// Restarter is the restart-from-scratch recovery, for this protocol and for
// protocols that fall back to it: stop the application, replace each failed
// node by a spare (or drop it), and once every replacement has booted and the
// downtime has passed, re-create every object from its initial state.
type Restarter struct {
	rt        *sim.Runtime
	booting   map[sim.NodeID]sim.NodeID // spare being booted -> node it replaces
	notBefore sim.Time                  // downtime: no restart before this
	gen       int                       // a pending restart of an older generation is void
	active    bool
}

// NewRestarter returns a restarter for rt.
func NewRestarter(rt *sim.Runtime) *Restarter {
	return &Restarter{rt: rt, booting: map[sim.NodeID]sim.NodeID{}}
}

// Active reports whether a restart is in progress.
func (r *Restarter) Active() bool { return r.active }

// OnFailure handles a detected failure.
func (r *Restarter) OnFailure(f sim.Failure) {
	rt := r.rt
	r.active = true
	rt.PauseApp()
	rt.NewEpoch() // whatever survivors compute from now on is void
	r.gen++
	r.notBefore = max(r.notBefore, rt.Now()+rt.Config().Downtime)
	failed := f.Node
	if old, ok := r.booting[f.Node]; ok { // a spare died while booting
		delete(r.booting, f.Node)
		failed = old
	} else if !inSlots(rt, f.Node) {
		r.maybeRestart()
		return
	}
	spare, ok := rt.TakeSpare(func(s sim.NodeID) {
		delete(r.booting, s)
		rt.ReplaceSlot(failed, s)
		r.maybeRestart()
	})
	if ok {
		r.booting[spare] = failed
	} else {
		rt.RemoveSlot(failed)
	}
	r.maybeRestart()
}

func (r *Restarter) maybeRestart() {
	rt := r.rt
	if len(r.booting) > 0 {
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
		if gen != r.gen || len(r.booting) > 0 {
			return
		}
		rt.RestartAll()
		rt.ResumeApp()
		r.active = false
	})
}

func inSlots(rt *sim.Runtime, n sim.NodeID) bool {
	for _, s := range rt.Slots() {
		if s == n {
			return true
		}
	}
	return false
}
