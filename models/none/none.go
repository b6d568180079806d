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
	booting   map[sim.NodeID]sim.NodeID // spare being booted -> node it replaces
	notBefore sim.Time                  // downtime: no restart before this
	gen       int                       // restart attempts; a pending restart of an older one is void
}

// New returns the baseline protocol.
func New() *Protocol { return &Protocol{booting: map[sim.NodeID]sim.NodeID{}} }

// OnFailure stops the application, replaces or drops the failed node, and
// restarts everything once every replacement has booted.
func (p *Protocol) OnFailure(f sim.Failure) {
	rt := p.RT
	rt.PauseApp()
	rt.NewEpoch() // whatever survivors compute from now on is void
	p.gen++
	p.notBefore = max(p.notBefore, rt.Now()+rt.Config().Downtime)
	failed := f.Node
	if old, ok := p.booting[f.Node]; ok { // a spare died while booting
		delete(p.booting, f.Node)
		failed = old
	} else if !inSlots(rt, f.Node) {
		p.maybeRestart()
		return
	}
	p.replace(failed)
	p.maybeRestart()
}

// replace finds a spare for failed node n, or drops n from the application.
func (p *Protocol) replace(n sim.NodeID) {
	rt := p.RT
	spare, ok := rt.TakeSpare(func(s sim.NodeID) {
		delete(p.booting, s)
		rt.ReplaceSlot(n, s)
		p.maybeRestart()
	})
	if ok {
		p.booting[spare] = n
		return
	}
	rt.RemoveSlot(n)
	if len(rt.Slots()) == 0 {
		st := rt.Stats()
		st.Unrecoverable++
		st.UnrecoverableNote = "every node failed and no spare is left: the application cannot run"
	}
}

func (p *Protocol) maybeRestart() {
	rt := p.RT
	if len(p.booting) > 0 || len(rt.Slots()) == 0 {
		return
	}
	gen := p.gen
	rt.At(p.notBefore, func() {
		if gen != p.gen || len(p.booting) > 0 {
			return
		}
		rt.RestartAll()
		rt.ResumeApp()
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
