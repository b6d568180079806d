package sim

// Cutting a handler short for a checkpoint. A handler of a macro-step
// workload stands for many of the application's time steps: a 5-minute
// stencil sweep is three hundred 1-second ones, and the real code could
// checkpoint between any two of them. A coordinated checkpoint that waited
// for the whole handler would take its checkpoints only at handler ends,
// so its interval would be rounded up to the macro-step (and Daly's
// interval to buddy memory, a minute at exascale, could not be had with
// macro-steps of five). InterruptApp pauses the application as PauseApp
// does and cuts each running handler at the end of its current time step:
// the core is freed, and what is left of the handler (its compute, and the
// messages it sends that have not left yet) waits in the object's record
// as a CutTask, taken into its snapshot and run, before anything else, when
// the application resumes or the snapshot is restored.
//
// The handler's code has run when it started (that is how the runtime runs
// handlers), so the state a cut leaves is the state after the handler, with
// the rest of its time still to spend and its late messages still to send:
// a consistent state, as the real application's between two of its time
// steps is. Only handlers whose messages all went to the runtime as they
// were (the protocol's OnSend returned true) can be cut: a protocol that
// holds messages back, logs or duplicates them has acted on them already.

// Cutter is implemented by a protocol whose checkpoints may cut handlers
// short (InterruptApp). CutStep is the length of the application's time
// steps, between which a cut falls; 0 means never cut. With a positive
// step the runtime also keeps, for each running handler, its task and the
// messages it sent that have departure events of their own (those due at
// its end it keeps anyway: they leave with its completion).
type Cutter interface {
	CutStep() Time
}

// CutReturner is a Cutter that holds handlers' messages back (its OnSend
// returns false for them) and can give back those it has not sent yet when
// a handler is cut, so that its handlers can be cut too: ReturnCut(id),
// called at the cut of object id's handler, returns them in the order they
// were sent and forgets them (as if the handler had not sent them yet).
// The rest of the handler sends them again, through OnSend, at their
// offsets from its start, as a cut's other messages leave; so does the rest
// of a restored cut. Message logging uses it to checkpoint a node between
// the time steps of a long handler (CutObject) instead of at its end.
type CutReturner interface {
	Cutter
	ReturnCut(id ObjID) []*Message
}

// CutTask is what a cut left of a handler: the compute still to spend, the
// messages the handler sent that had not left yet, and the object's
// progress before the handler, which counts until the rest has run. It is
// not changed once made, so a snapshot shares the live object's (and its
// messages: what the network sets on a message it sends, its node, time,
// epoch and addresses, resumeCut and transmit set again, and what a
// snapshot needs of it, its object endpoints, tag, size and payload,
// nothing changes); Restore takes copies (restoredClone).
type CutTask struct {
	Rest     Time
	Sends    []PendingSend
	Progress int64
	wire     int64 // the bytes of Sends' messages
	restored bool  // rebuilt by Restore: its sends are sent again, not for the first time
	// The last len(o.late) Sends of the live object's cut are held back
	// where its handler left them (due at its end, in o.late and their
	// network slots): the rest leaves with them, unread, unless a place or
	// a node's incarnation changed since the cut (placeVer, incVer then)
	// or a rollback voided their epoch. A checkpoint cuts every handler
	// and resumes it soon after; moving each message out of the network's
	// table and back was a fifth of cpr-buddy's time. A restored cut holds
	// none (Restore drops the live one's first).
	placeVer, incVer uint64
}

// PendingSend is a message of a cut handler that leaves After the rest of
// the handler begins (its offset from the cut).
type PendingSend struct {
	Msg   *Message
	After Time
	offer bool // given back by a CutReturner: offered to OnSend again
}

// restoredClone copies c, its messages too, for Restore: two restores of
// one snapshot must not send the same message.
func (c *CutTask) restoredClone() *CutTask {
	if c == nil {
		return nil
	}
	d := *c
	d.Sends = make([]PendingSend, len(c.Sends))
	for i, s := range c.Sends {
		d.Sends[i] = s
		d.Sends[i].Msg = s.Msg.Clone()
	}
	d.restored = true
	return &d
}

// wireSize is the bytes of the messages c still has to send.
func (c *CutTask) wireSize() int64 {
	if c == nil {
		return 0
	}
	return c.wire
}

// InterruptApp pauses the application as PauseApp does and, under a
// protocol whose CutStep is positive, cuts each running handler that can
// be cut at the end of its current time step (counted from the handler's
// start), unless the handler ends first. WhenQuiet then sees the cut
// handlers as idle.
func (rt *Runtime) InterruptApp() {
	rt.PauseApp()
	if rt.cutStep <= 0 {
		return
	}
	for i := range rt.objs {
		rt.scheduleCut(ObjID(i))
	}
}

// CutObject cuts object id's running handler, under a protocol whose
// CutStep is positive, at the end of its current time step, as
// InterruptApp cuts every handler but without pausing the application:
// the protocol pauses the object (PauseObject) first, or the rest runs at
// once. WhenObjectIdle's functions run at the cut (or at the handler's end,
// if that comes first).
func (rt *Runtime) CutObject(id ObjID) {
	if rt.cutStep > 0 && rt.scheduleCut(id) {
		rt.objs[id].cutAsked = true
	}
}

// scheduleCut schedules the cut of object id's running handler, if it can
// be cut, at the end of its current time step, unless the handler ends
// first; it reports whether it did.
func (rt *Runtime) scheduleCut(id ObjID) bool {
	o := &rt.objs[id]
	if !o.running || o.task < 0 || !o.cuttable {
		return false
	}
	t := &rt.tasks.items[o.task]
	at := t.start + (rt.eng.now-t.start+rt.cutStep-1)/rt.cutStep*rt.cutStep
	if at >= t.end {
		return false
	}
	rt.eng.Schedule(at, rt.kCut, int32(id), int64(o.runGen))
	return true
}

// onCut cuts object ev.I's handler, still the one running (runGen ev.J),
// if the application is still paused or the object's cut was asked for.
func (rt *Runtime) onCut(ev Event) {
	id := ObjID(ev.I)
	o := &rt.objs[id]
	asked := o.cutAsked
	o.cutAsked = false
	if !(rt.appPaused || asked) || !o.running || o.runGen != uint32(ev.J) {
		return
	}
	now := rt.eng.now
	t := &rt.tasks.items[o.task]
	var back []*Message // the protocol's, given back
	if rt.returner != nil {
		back = rt.returner.ReturnCut(id)
	}
	c := rt.newCut(len(o.sends) + len(back) + len(o.late))
	c.Rest, c.Progress = t.end-now, o.progress
	// the messages that have not left yet leave with the rest: those with
	// a departure event of their own (sent before the handler's end) find
	// their slot empty; those due at its end leave the network's table
	for _, m := range o.sends {
		if m.SentAt > now {
			rt.msgs.items[m.ref].m = nil
			if !m.Control && m.Epoch == rt.epoch {
				rt.inFlight--
			}
			c.Sends = append(c.Sends, PendingSend{Msg: m, After: m.SentAt - now})
			c.wire += m.WireSize()
		}
	}
	for _, m := range back { // before o.late's, which must come last (resumeCut)
		c.Sends = append(c.Sends, PendingSend{Msg: m, After: m.SentAt - now, offer: true})
		c.wire += m.WireSize()
	}
	for _, l := range o.late {
		c.Sends = append(c.Sends, PendingSend{Msg: l.m, After: c.Rest})
	}
	if o.lateEpoch == rt.epoch {
		rt.inFlight -= o.lateApp
	}
	c.wire += o.lateWire
	c.placeVer, c.incVer = rt.placeVer, rt.incVer // o.late stays: held
	o.sends = o.sends[:0]
	if rt.tracer != nil {
		rt.traceCompute(id, now)
	}
	o.cut = c
	o.task = -1
	o.running = false
	o.runGen++ // its completion event is void
	rt.running--
	rt.nodes[o.runNode].busy--
	if fns := o.idle; len(fns) > 0 {
		o.idle = nil
		for _, fn := range fns {
			fn()
		}
	}
	rt.checkQuiet()
	rt.kick(o.runNode)
}

// newCut returns an empty cut record with room for n messages, cut from
// blocks: a checkpoint cuts every running handler, and a record and a
// slice each were two allocations per object and checkpoint.
func (rt *Runtime) newCut(n int) *CutTask {
	c := rt.cuts.New()
	c.Sends = rt.cutSends.Slice(n)[:0]
	return c
}

// resumeCut starts the rest of object o's cut handler in ctx: its compute
// is charged, and its messages are sent again at their offsets from now,
// but for those it held (o.late), which leave with its end as they were;
// it reports whether it kept them.
func (rt *Runtime) resumeCut(o *objState) (held bool) {
	c := &rt.ctx
	cut := o.cut
	c.elapsed = cut.Rest
	sends := cut.Sends
	if n := len(o.late); n > 0 {
		held = cut.placeVer == rt.placeVer && cut.incVer == rt.incVer && o.lateEpoch == rt.epoch
		if held {
			sends = sends[:len(sends)-n]
			rt.inFlight += o.lateApp
		} else {
			rt.releaseHeld(o) // sent again below, to where their receivers are now
		}
	}
	o.cut = nil
	for _, s := range sends {
		m := s.Msg
		m.From, m.Hdr.Inc = c.node, o.inc // the object may have been restored elsewhere since
		m.SentAt = rt.eng.now + s.After
		m.Epoch = rt.epoch // part of the restored state, not of a void epoch
		if cut.restored {  // re-executed, as a restored handler's sends are
			rt.stats.AppMsgs++
			rt.stats.AppBytes += m.Size
		}
		if s.offer && !rt.proto.OnSend(m) {
			c.held = true
			continue
		}
		rt.transmit(m)
	}
	return held
}

// releaseHeld frees the network slots of the messages object o's cut
// handler holds back (o.late), which will not leave from them.
func (rt *Runtime) releaseHeld(o *objState) {
	if o.cut == nil {
		return // o.late, if any, is the running handler's
	}
	for _, l := range o.late {
		rt.msgs.take(l.ref)
	}
	o.late = o.late[:0]
}

// dropCut discards what a cut left of object o's handler (a restore or a
// failure replaces its state): the messages it held back never leave.
func (rt *Runtime) dropCut(o *objState) {
	rt.releaseHeld(o)
	o.cut = nil
}
