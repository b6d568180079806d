package mlog

// This file holds the sender's side of the forward path (section 3.1): the
// SN of each message, its entry in the sender's log, the ticket (TN) that the
// receiver hands out for it, and the local mode, which logs the (sender, SN,
// TN) tuple on the buddy node instead of asking the receiver.

import (
	"slices"

	"ftsim/sim"
)

// OnSend stamps the SN, logs the message at its sender and replaces the send by
// a ticket request (remote mode) or a ticket and a tuple logged at the buddy
// (local mode), both made when the message would have left.
func (p *Protocol) OnSend(m *sim.Message) bool {
	if p.fallen {
		return true
	}
	s := p.objs[m.Src]
	relog := m.Hdr.SN != 0 // given back by a cut (ReturnCut): its logging was spent
	sn := s.sn.Ptr(m.Dst)
	*sn++
	m.Hdr.SN = *sn
	m.Hdr.Bytes = p.cfg.HeaderBytes
	// the log keeps m itself: the runtime lets go of a message its protocol
	// holds back (transmit hands it over once, see entry.given)
	e := p.entries.New()
	sz := m.WireSize()
	*e = entry{m: m, dst: m.Dst, sn: m.Hdr.SN, wire: sz, gen: s.gen}
	l := s.log.Ptr(m.Dst)
	*l = append(*l, e)
	s.logBytes += sz
	p.memAdd(s.node, s.inc, sim.MemLog, sz)
	if !relog {
		p.spend(s.node, p.cfg.CPU.Log)
	}
	if p.cfg.Substep > 0 {
		if now := p.RT.Now(); s.unsentAt != now {
			s.unsent, s.unsentAt = s.unsent[:0], now
		}
		s.unsent = append(s.unsent, e)
	}
	p.sendAt(s, e, m.SentAt)
	if p.cfg.MaxLog > 0 && s.logBytes > p.cfg.MaxLog {
		p.RT.At(p.RT.Now(), func() { p.logFull(s) }) // not from inside the sender's handler
	}
	return false
}

// sendAt makes e's first send (sendDirect, or requestTicket) at time t, when
// its message would have left. It is a timer of s's node rather than an At
// closure: the same event (a call at t, scheduled at this point) without an
// allocation per message. The runtime drops the timer if that node fails
// first, where the send would have returned anyway: e is no longer live (an
// object changes node or incarnation only with a new generation). s.node is
// a real node: s is sending, so it is placed (Start, restoreObj and takeOver
// set node from the placement or the restore target).
//
// The sends a handler makes at its end (a stencil block's faces) share one
// timer: a send of the same object for the same time joins the last timer
// set while no event has been scheduled or run since (the EventMark is
// unchanged), where its own timer would have been the very next event, run
// right after that one (and the timer has not fired: that would have run an
// event). That is an event fewer per message.
func (p *Protocol) sendAt(s *object, e *entry, t sim.Time) {
	rt := p.RT
	if l := &p.lastSend; !p.timerPerSend && l.slot >= 0 && l.obj == s.id && l.at == t && l.mark == rt.EventMark() {
		p.sends[l.slot] = append(p.sends[l.slot], e)
		return
	}
	var i int64
	if n := len(p.sendFree); n > 0 {
		i, p.sendFree = p.sendFree[n-1], p.sendFree[:n-1]
	} else {
		i = int64(len(p.sends))
		p.sends = append(p.sends, nil)
	}
	p.sends[i] = append(p.sends[i], e)
	rt.SetTimer(s.node, t, timerSend, i)
	p.lastSend = sendTimer{slot: i, obj: s.id, at: t, mark: rt.EventMark()}
}

// firstSend makes the first send of s's logged message e.
func (p *Protocol) firstSend(s *object, e *entry) {
	if p.cfg.MultiFailure {
		p.sendDirect(s, e)
	} else {
		p.requestTicket(s, e)
	}
}

// live reports whether entry e of sender s is still in a live log.
func (p *Protocol) live(s *object, e *entry) bool {
	return !p.fallen && e.gen == s.gen && !e.done && p.RT.Holds(s.node, s.inc)
}

// requestTicket asks e's receiver for a ticket.
func (p *Protocol) requestTicket(s *object, e *entry) {
	rt := p.RT
	if !p.live(s, e) || e.tn != 0 || e.old || e.asking || rt.Lost(e.dst) {
		return // the resend after the receiver's restart will ask again
	}
	from, to := s.node, p.objs[e.dst].node
	if from == to {
		p.localTicket(s, e)
		return
	}
	e.asking = true
	life := p.life
	p.spend(from, p.cfg.CPU.TicketRequest)
	rt.Transfer(from, to, p.cfg.TicketBytes, tagTicket, func(ok bool) { p.onTicketRequest(ok, life, s, e, to) })
}

// onTicketRequest runs at node at when e's ticket request, sent in life,
// arrives. A request sent before a restart from scratch is void: a ticket
// handed out for it would be a TN no message of the new life carries, and
// the receiver would wait for it forever.
func (p *Protocol) onTicketRequest(ok bool, life int64, s *object, e *entry, at sim.NodeID) {
	rt := p.RT
	if !ok || p.fallen || life != p.life {
		e.asking = false
		return
	}
	w := p.objs[e.dst]
	if rt.Lost(w.id) || !rt.Alive(w.node) {
		e.asking = false
		return
	}
	if w.node != at { // the receiver moved: the request follows it
		rt.Transfer(at, w.node, p.cfg.TicketBytes, tagTicket, func(ok bool) { p.onTicketRequest(ok, life, s, e, w.node) })
		return
	}
	p.answer(w, ticketReq{s: s, e: e, at: at})
}

// answer hands out (or looks up) a ticket for request q, or queues it while
// the restarted receiver w still collects the TNs it handed out before its crash.
func (p *Protocol) answer(w *object, q ticketReq) {
	tn, old, ok := p.ticket(w, q.s.id, q.e.sn)
	if !ok {
		w.queued = append(w.queued, q)
		return
	}
	if q.local {
		p.gotLocalTicket(q.s, q.e, tn, old)
		return
	}
	s, e := q.s, q.e
	gen := w.gen
	p.spend(q.at, p.cfg.CPU.Ticket)
	p.RT.Transfer(q.at, s.node, p.cfg.TicketBytes, tagReply, func(ok bool) {
		if w.gen != gen {
			// handed out by a life of w that has failed since: its TN table
			// died with it, and the restored w may give this TN to another
			// message. The restart's resend asks again (and resets asking).
			return
		}
		e.asking = false
		if ok {
			p.onTicketReply(s, e, tn, old)
		}
	})
}

// ticket returns the TN of message (src, sn) at receiver w: the one already
// assigned, old if already processed, or a new one (a TN missing since a
// restart first). ok is false while w waits for the resends after its restart.
func (p *Protocol) ticket(w *object, src sim.ObjID, sn uint64) (tn uint64, old, ok bool) {
	k := pair{src, sn}
	tn = w.tnOf(k)
	if w.done.Lookup(src).has(sn) {
		p.Stats.OldTickets++
		return tn, true, true
	}
	if tn != 0 {
		return tn, false, true
	}
	if w.gated {
		return 0, false, false
	}
	return p.newTicket(w, k), false, true
}

// newTicket hands out a new TN to message k at receiver w (a TN missing since
// a restart first); ticket has checked that k has none and may get one.
func (p *Protocol) newTicket(w *object, k pair) (tn uint64) {
	if len(w.missing) > 0 {
		tn, w.missing = w.missing[0], w.missing[1:]
	} else {
		w.tnCount++
		tn = w.tnCount
	}
	w.setTN(k, tn)
	p.Stats.Tickets++
	return tn
}

// onTicketReply: the ticket reached the sender, which sends the message.
func (p *Protocol) onTicketReply(s *object, e *entry, tn uint64, old bool) {
	if !p.live(s, e) || e.tn != 0 || e.old {
		return
	}
	e.tn = tn
	if old {
		e.old, e.oldGen = true, p.objs[e.dst].gen
		if tn == 0 { // processed and checkpointed: the receiver will never need it
			p.prune(s, e)
		}
		return
	}
	p.transmit(s, e)
}

// transmit sends logged message e with its TN.
func (p *Protocol) transmit(s *object, e *entry) {
	c := e.m
	if e.given {
		c = e.m.Clone() // e.m may still be on its way, or held at the receiver
	}
	e.given = true
	c.Hdr.TN = e.tn
	c.From = s.node
	c.SentAt = p.RT.Now()
	p.RT.Stats().ExtraBytes += c.Hdr.Bytes
	p.RT.Transmit(c)
}

// localTicket is the local mode: the receiver on the same node hands out the
// ticket by a method call, then the tuple is logged on the buddy.
func (p *Protocol) localTicket(s *object, e *entry) {
	w := p.objs[e.dst]
	e.asking = true
	p.answer(w, ticketReq{s: s, e: e, at: s.node, local: true})
}

func (p *Protocol) gotLocalTicket(s *object, e *entry, tn uint64, old bool) {
	e.asking = false
	if !p.live(s, e) || e.tn != 0 {
		return
	}
	e.tn = tn
	if old {
		e.old = true
		if tn == 0 {
			p.prune(s, e)
		}
		return
	}
	p.Stats.LocalMessages++
	p.spend(s.node, p.cfg.CPU.Local)
	if k, w := (pair{s.id, e.sn}), p.objs[e.dst]; w.logged[k] {
		// re-execution after a restart: the tuple of this message survived in
		// the remote message log, which is where its TN came from; logging it
		// again would only wait for the buddy's acknowledgement
		delete(w.logged, k)
		p.transmit(s, e)
		return
	}
	p.logTuple(s, e)
}

// pendingLocal is a local-mode message whose tuple waits for a live buddy.
type pendingLocal struct {
	s *object
	e *entry
}

// logTuple logs (sender, SN, TN) of local-mode message e in the remote message
// log on the buddy, and sends the message when the buddy has acknowledged.
func (p *Protocol) logTuple(s *object, e *entry) {
	rt := p.RT
	if !p.live(s, e) {
		return
	}
	n := s.node
	b := p.buddy(n)
	if b == sim.None {
		p.transmit(s, e) // alone: nothing can survive a failure anyway
		return
	}
	if !rt.Alive(b) {
		p.retry = append(p.retry, &pendingLocal{s, e})
		return
	}
	e.asking = true
	w := p.objs[e.dst]
	sz := p.cfg.TicketBytes
	life, wgen, inc := p.life, w.gen, rt.Incarnation(n)
	rt.Transfer(n, b, sz, tagTuple, func(ok bool) {
		if life != p.life || p.fallen {
			return // a tuple of a life before a restart from scratch is void
		}
		if w.gen != wgen || !rt.Holds(n, inc) {
			// the receiver's node failed before its tuple was logged: the
			// message never left with this TN (it leaves after the
			// acknowledgement), and the restored receiver hands its TNs
			// out again. Kept, the tuple would give this TN to the message
			// at the next restore, which may have given it to another.
			// (receipt.mine is the same rule for multi_failure.)
			return
		}
		if !ok {
			// the buddy failed: again, to the buddy of now (the ring may
			// have changed already: a retry queued now would wait for a
			// change that has come)
			e.asking = false
			p.logTuple(s, e)
			return
		}
		w.rlog = append(w.rlog, tuple{src: s.id, sn: e.sn, tn: e.tn, holder: b, inc: rt.Incarnation(b)})
		p.memAdd(b, rt.Incarnation(b), sim.MemLog, sz)
		rt.Transfer(b, n, sz, tagAck, func(ok bool) {
			e.asking = false
			if !p.live(s, e) {
				return
			}
			if !ok {
				p.logTuple(s, e)
				return
			}
			p.transmit(s, e)
		})
	})
}

// flushRetries logs again the tuples whose buddy had failed.
func (p *Protocol) flushRetries() {
	rr := p.retryRecv
	p.retryRecv = nil
	for _, r := range rr {
		if r.mine() {
			r.log()
		}
	}
	rs := p.retry
	p.retry = nil
	for _, r := range rs {
		if !r.e.asking {
			p.logTuple(r.s, r.e)
		}
	}
}

// prune removes entry e from s's log.
func (p *Protocol) prune(s *object, e *entry) {
	if e.done {
		return
	}
	e.done = true
	sz := e.wire
	s.logBytes -= sz
	p.memAdd(s.node, s.inc, sim.MemLog, -sz)
	j := s.log.Find(e.dst)
	if j < 0 {
		return
	}
	l := s.log.At(j)
	if i := slices.Index(*l, e); i >= 0 {
		*l = slices.Delete(*l, i, i+1)
	}
	if len(*l) == 0 {
		s.log.Del(e.dst)
	}
}
