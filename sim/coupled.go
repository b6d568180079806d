package sim

// The coupling of an application whose objects synchronise at every time
// step of their handlers (a global sum every sweep, as a Jacobi solver
// reduces its residual): a macro-step workload's handler stands for many
// such steps, and with a global operation at each, a node that fails holds
// every other node at the next one, within a step, until its replacement
// has caught up with where it was. Without the coupling the others go on to
// the end of their macro-step, and the delays of two failures in the same
// macro-step overlap where the real code's add up: a bias that grows with
// the step (README, "The exascale scenario").
//
// Under a Coupler workload, a failure that loses objects stalls every other
// live object: its running handler is cut at the end of its current step
// (under a protocol that cuts handlers, Cutter; otherwise it runs to its
// end) and nothing of it is dispatched until every lost object has caught
// up. An object that had completed p iterations (its progress) and had run
// e into the handler of the next catches up e into its re-run of that
// handler (e − c into the rest of a handler a checkpoint cut c into it); one
// that was between handlers, when its progress is back to p. Ending the
// stall at the progress alone would give a failure its exact cost too (the
// global sum at the step's end waits for the rest of the restored object's
// step), but two failures in a step would still overlap by their partial
// steps.

// Coupler is implemented by a workload whose objects synchronise at every
// time step of their handlers (see above); Coupled reports whether they do.
type Coupler interface {
	Coupled() bool
}

// catchUp is what a lost object has to redo before the stall can end.
type catchUp struct {
	obj     ObjID
	p       int64 // its progress when it was lost
	e, l    Time  // how far it had run into its handler, and the handler's length
	running bool  // it was running a handler (e and l are set)
	timed   bool  // its catch-up time is scheduled (release)
	inc     uint32
}

// noteLost records what object id, about to be lost, will have to redo. A
// handler cut by an earlier stall counts as between handlers.
func (rt *Runtime) noteLost(id ObjID) {
	o := &rt.objs[id]
	c := catchUp{obj: id, p: o.progress}
	if o.running && o.task >= 0 {
		t := &rt.tasks.items[o.task]
		c.running, c.e, c.l = true, rt.eng.now-t.start, t.end-t.start
	}
	if k := rt.catchUpOf(id); k >= 0 {
		rt.catchUps[k] = c // lost again while it caught up
		return
	}
	rt.catchUps = append(rt.catchUps, c)
}

// catchUpOf is object id's index in rt.catchUps, or -1.
func (rt *Runtime) catchUpOf(id ObjID) int {
	for k := range rt.catchUps {
		if rt.catchUps[k].obj == id {
			return k
		}
	}
	return -1
}

// stallOthers stalls every live object that is not catching up.
func (rt *Runtime) stallOthers() {
	for i := range rt.objs {
		id := ObjID(i)
		if o := &rt.objs[i]; !rt.lost[i] && !o.stalled && rt.catchUpOf(id) < 0 {
			o.stalled = true
			rt.CutObject(id)
		}
	}
}

// caughtUp ends catch-up k, and the stall with the last one.
func (rt *Runtime) caughtUp(k int) {
	rt.catchUps = append(rt.catchUps[:k], rt.catchUps[k+1:]...)
	if len(rt.catchUps) == 0 {
		rt.endStall()
	}
}

// endStall lets every stalled object go on.
func (rt *Runtime) endStall() {
	for i := range rt.objs {
		if o := &rt.objs[i]; o.stalled {
			o.stalled = false
			rt.ready(ObjID(i))
		}
	}
	for _, n := range rt.slots {
		rt.kick(n)
	}
}

// dropStall forgets the catch-ups and the stall, without dispatching: a
// rollback or a restart from scratch (NewEpoch) restores or re-creates
// every object next, and they go on from the same point.
func (rt *Runtime) dropStall() {
	if !rt.coupled {
		return
	}
	rt.catchUps = rt.catchUps[:0]
	for i := range rt.objs {
		rt.objs[i].stalled = false
	}
}

// startedCatchingUp: object id has just started a handler that charged d,
// the rest of a cut one if rest. If it is the re-run of the handler it was
// lost in, it catches up e into it.
func (rt *Runtime) startedCatchingUp(id ObjID, d Time, rest bool) {
	k := rt.catchUpOf(id)
	if k < 0 || d == 0 {
		return
	}
	c := &rt.catchUps[k]
	o := &rt.objs[id]
	if !c.running || c.timed || o.progress != c.p {
		return
	}
	at := c.e
	if rest { // it begins l − d into the handler
		at = max(0, c.e-(c.l-d))
	}
	c.timed, c.inc = true, o.inc
	rt.At(rt.eng.now+at, func() {
		k := rt.catchUpOf(id)
		switch {
		case k < 0 || !rt.catchUps[k].timed:
		case rt.catchUps[k].inc != rt.objs[id].inc:
			rt.catchUps[k].timed = false // moved or restored meanwhile: timed again when it starts
		default:
			rt.caughtUp(k)
		}
	})
}

// progressed: object id's progress changed; an object lost between
// handlers catches up when it is back where it was, and any once past it.
func (rt *Runtime) progressed(id ObjID) {
	k := rt.catchUpOf(id)
	if k < 0 || rt.lost[id] {
		return
	}
	c := &rt.catchUps[k]
	if p := rt.objs[id].progress; p > c.p || !c.running && p >= c.p {
		rt.caughtUp(k)
	}
}
