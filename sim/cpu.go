package sim

// task is work occupying one core: an object's handler or protocol CPU work.
type task struct {
	node NodeID
	inc  uint32 // node incarnation when started
	obj  ObjID  // None for protocol work
	gen  uint32 // the object's runGen when started
	fn   func() // protocol work's continuation
	// an object's handler: when it started and when it ends (cut.go)
	start, end Time
}

// sysTask is protocol CPU work waiting for a core.
type sysTask struct {
	d  Time
	fn func()
}

// ChargeCPU occupies a core of node n for d (protocol work such as storing a
// duplicate or packing a checkpoint), ahead of queued application work, then
// calls fn unless it is nil. Nothing is called if n fails first.
func (rt *Runtime) ChargeCPU(n NodeID, d Time, fn func()) {
	if rt.links[n].state == nodeFailed {
		return
	}
	rt.nodes[n].sys.push(sysTask{d: d, fn: fn})
	rt.kick(n)
}

// kick starts queued work on node n's idle cores.
func (rt *Runtime) kick(n NodeID) {
	if rt.links[n].state != nodeActive || !rt.started {
		return
	}
	if rt.inHandler {
		rt.deferred = append(rt.deferred, n)
		return
	}
	nd := &rt.nodes[n]
	for nd.busy < rt.cfg.Cores {
		if nd.sys.len() > 0 {
			s := nd.sys.pop()
			nd.busy++
			t := rt.tasks.put(task{node: n, inc: rt.links[n].inc, obj: None, fn: s.fn})
			if rt.tracer != nil {
				rt.traceWorkStarted(t)
			}
			rt.eng.After(s.d, rt.kCoreDone, int32(n), int64(t))
			continue
		}
		if rt.appPaused || nd.ready.len() == 0 {
			return
		}
		id := nd.ready.pop()
		o := &rt.objs[id]
		o.queued = false
		if !o.dispatchable(rt.place[id], n, rt.lost[id]) {
			continue
		}
		rt.runObject(n, id)
	}
}

// runObject runs one handler of object id on node n: the real code runs now,
// the core stays busy for the compute the handler charged. A handler that
// charged nothing ends at once, without a completion event: most handlers in
// a halo exchange only file a message away until the last one arrives.
func (rt *Runtime) runObject(n NodeID, id ObjID) {
	nd := &rt.nodes[n]
	o := &rt.objs[id]
	c := &rt.ctx
	c.self, c.node, c.start, c.elapsed, c.held = id, n, rt.eng.now, 0, false
	// running from before the handler's code: hooks called from inside it
	// (OnSend) see the object busy
	o.running = true
	o.runNode = n
	nd.busy++
	rt.running++
	if rt.tracer != nil {
		rt.traceStart[id] = c.start
	}
	rt.inHandler = true
	held := false
	rest := o.cut != nil
	if rest {
		held = rt.resumeCut(o)
	} else if o.needStart {
		o.needStart, o.state = false, nil
		o.obj.Start(c)
	} else {
		o.state = nil
		m := o.inbox.pop()
		c.elapsed = rt.appMessageCPU(m.Size)
		rt.proto.OnDispatch(m)
		o.obj.Handle(c, m)
	}
	rt.inHandler = false
	if len(rt.catchUps) > 0 {
		rt.startedCatchingUp(id, c.elapsed, rest)
	}
	// even with no late message: a cut reads o's late messages and sends,
	// which must be this handler's, not an earlier one's
	rt.settleLate(o, c.start.plus(c.elapsed), held)
	if rt.tracer != nil && c.elapsed == 0 && o.running {
		rt.traceCompute(id, c.start)
	}
	if c.elapsed == 0 {
		rt.objectDone(id)
	} else {
		t := rt.tasks.put(task{node: n, inc: rt.links[n].inc, obj: id, gen: o.runGen, start: c.start, end: c.start.plus(c.elapsed)})
		rt.eng.After(c.elapsed, rt.kCoreDone, int32(n), int64(t))
		if rt.cutStep > 0 {
			o.task, o.cuttable = t, !c.held || rt.returner != nil
		}
	}
	for len(rt.deferred) > 0 {
		// two buffers in turn, so that deferring stays allocation-free
		ns := rt.deferred
		rt.deferred = rt.kicking[:0]
		for _, d := range ns {
			rt.kick(d)
		}
		rt.kicking = ns[:0]
	}
}

func (rt *Runtime) onCoreDone(ev Event) {
	slot := int32(ev.J)
	t := rt.tasks.take(slot)
	if rt.tracer != nil {
		rt.traceTask(slot, &t, rt.eng.now)
	}
	if rt.links[t.node].inc != t.inc {
		return // the node failed while this task ran: its work is lost
	}
	if t.obj == None {
		rt.nodes[t.node].busy--
		if t.fn != nil {
			t.fn()
		}
		rt.kick(t.node)
		return
	}
	o := &rt.objs[t.obj]
	if o.runGen != t.gen || !o.running {
		return // aborted or cut: its core was freed then
	}
	rt.departLate(o)
	rt.objectDone(t.obj)
	rt.kick(t.node)
}

// objectDone ends object id's handler: the core is free, progress and the
// protocol are told, and the object is queued again if it has work.
func (rt *Runtime) objectDone(id ObjID) {
	o := &rt.objs[id]
	rt.nodes[o.runNode].busy--
	o.running, o.task = false, -1
	rt.running--
	rt.setProgress(id, o.obj.Progress())
	rt.proto.OnHandled(id)
	if fns := o.idle; len(fns) > 0 {
		o.idle = nil
		for _, fn := range fns {
			fn()
		}
	}
	rt.ready(id)
	rt.checkQuiet()
}

// ready queues object id on its node if it has something to run.
func (rt *Runtime) ready(id ObjID) {
	o := &rt.objs[id]
	if o.queued || o.running || rt.lost[id] || o.paused || o.stalled || (!o.needStart && o.cut == nil && o.inbox.len() == 0) {
		return
	}
	o.queued = true
	rt.nodes[rt.place[id]].ready.push(id)
}
