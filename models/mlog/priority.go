package mlog

// This file holds how a restart runs restored objects first: the other
// objects of their node are held until the restored ones have re-processed
// what they had processed before the crash (fast restart, section 3.3).

import (
	"slices"

	"ftsim/sim"
)

// hold pauses object id for one more reason.
func (p *Protocol) hold(id sim.ObjID) {
	p.holds[id]++
	p.RT.PauseObject(id)
}

// unhold removes one reason; the object runs again when none is left.
func (p *Protocol) unhold(id sim.ObjID) {
	if p.holds[id] == 0 {
		return
	}
	p.holds[id]--
	if p.holds[id] == 0 {
		if !p.RT.Lost(id) {
			p.RT.ResumeObject(id)
		}
	}
}

// priority is a node whose own objects wait while restored objects re-execute.
type priority struct {
	inc     uint32
	pending int         // restored objects still catching up
	held    []sim.ObjID // the node's other objects
}

// prioritize makes w's node run w's re-execution first.
func (p *Protocol) prioritize(r *recovery, w *object) {
	rt := p.RT
	n := w.node
	pr := p.prio[n]
	if pr == nil || pr.inc != rt.Incarnation(n) {
		pr = &priority{inc: rt.Incarnation(n)}
		p.prio[n] = pr
		for _, o := range p.objectsOn(n) {
			if slices.Contains(r.objs, o) {
				continue
			}
			p.hold(o.id)
			pr.held = append(pr.held, o.id)
		}
		// a bound, in case the re-execution waits for something the held objects owe
		rt.At(rt.Now()+p.cfg.Period, func() {
			if p.prio[n] == pr {
				p.endPriority(n)
			}
		})
	}
	pr.pending++
}

// caughtUp: w has re-processed every message it had processed before the crash.
func (p *Protocol) caughtUp(w *object) {
	w.catchUp = 0
	pr := p.prio[w.node]
	if pr == nil {
		return
	}
	if pr.pending--; pr.pending <= 0 {
		p.endPriority(w.node)
	}
}

func (p *Protocol) endPriority(n sim.NodeID) {
	pr := p.prio[n]
	delete(p.prio, n)
	if pr == nil || !p.RT.Holds(n, pr.inc) {
		return
	}
	for _, id := range pr.held {
		p.unhold(id)
	}
}
