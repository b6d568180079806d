package mlog

// This file holds the second half of the multiple-failure extension of
// section 3.4 (multi_failure): a message to an object on another node is sent
// with its SN alone; the receiver assigns its TN and logs the (sender, SN, TN)
// tuple in the remote message log on the receiver's buddy before processing
// it. Without it, a node failing while objects restored after an earlier
// failure still re-execute loses the TNs of the messages those objects had
// sent before their crash (their logs died with them, the TN tables with the
// receivers): the pattern is reported as unrecoverable.

import (
	"cmp"
	"slices"

	"ftsim/sim"
)

// sendDirect sends logged message e: to another node at once with its SN; to
// the same node in local mode (the tuple is logged on the buddy, which is
// the receiver's buddy too).
func (p *Protocol) sendDirect(s *object, e *entry) {
	if !p.live(s, e) || e.old || e.asking || p.RT.Lost(e.dst) {
		return // the resend after the receiver's restart sends it again
	}
	if e.tn != 0 {
		// A re-executed send whose TN the receiver told before it left:
		// the receiver had ticketed the copy the sender's lost life sent.
		// The resend of a later restart of the receiver may have come and
		// gone before this entry was logged; the message goes with its TN.
		if !e.given {
			p.transmit(s, e)
		}
		return
	}
	if s.node == p.objs[e.dst].node {
		p.localTicket(s, e)
		return
	}
	p.transmit(s, e) // TN 0: the receiver assigns it
}

// arriveDirect handles at receiver w a message sent without a TN: a duplicate
// is dropped (the sender learns it was processed), a message whose TN is known
// waits for its turn, and a new one gets a TN whose tuple is logged on w's
// buddy before the message can be processed.
func (p *Protocol) arriveDirect(w *object, m *sim.Message) {
	k := pair{m.Src, m.Hdr.SN}
	if w.done.Lookup(m.Src).has(m.Hdr.SN) {
		p.Stats.Duplicates++
		p.tellSender(w, k, w.tnOf(k), true)
		return
	}
	if x := w.slotOf(k); x != nil && x.tn != 0 {
		tn := x.tn
		if x.logging || tn <= w.delivered || w.heldAt(tn) != nil {
			p.Stats.Duplicates++ // its tuple is on the way, or it waits already
			return
		}
		m.Hdr.TN = tn
		w.holdMsg(tn, m) // the tuple is in the remote log (restored from it)
		p.tellSender(w, k, tn, false)
		p.release(w)
		return
	}
	if w.gated { // TNs are handed out once every node has resent
		w.waiting = append(w.waiting, m)
		return
	}
	tn := p.newTicket(w, k) // what ticket would do: k has neither TN nor done SN, w is not gated
	w.setLogging(k, true)
	p.logReceived(w, m, k, tn)
}

// receipt is a message received without a TN (multi_failure) on its way to
// being processable: its tuple is logged on the receiver's buddy, the buddy
// acknowledges, then the sender is told the TN. One record, passed to
// TransferTo, carries the message through all three steps (and through the
// retries while the buddy is down), where closures cost an allocation or more
// per step on the path of every message between nodes.
type receipt struct {
	p   *Protocol
	w   *object      // the receiver
	m   *sim.Message // nil when the record only tells the sender
	k   pair
	tn  uint64
	gen uint32     // w's generation when its tuple was first logged, or when it told the sender
	n   sim.NodeID // w's node then
	inc uint32     // and its incarnation
	b   sim.NodeID // the buddy the tuple goes to

	sgen uint32 // the sender's generation when told (tagReply)
	old  bool   // the sender is told the message was already processed
}

// logReceived logs the tuple of message m (TN tn) on the buddy of w's node and
// makes m processable when the buddy has acknowledged.
func (p *Protocol) logReceived(w *object, m *sim.Message, k pair, tn uint64) {
	r := p.newReceipt()
	*r = receipt{p: p, w: w, m: m, k: k, tn: tn, gen: w.gen, n: w.node, inc: w.inc}
	p.spend(w.node, p.cfg.CPU.Local)
	r.log()
}

// newReceipt returns a receipt from the free list, or a new one.
func (p *Protocol) newReceipt() *receipt {
	if n := len(p.receipts); n > 0 {
		r := p.receipts[n-1]
		p.receipts = p.receipts[:n-1]
		return r
	}
	return new(receipt)
}

// free puts r, which nothing refers to any more (its last transfer has
// reported, or was never made), on the free list.
func (r *receipt) free() {
	p := r.p
	*r = receipt{}
	p.receipts = append(p.receipts, r)
}

// mine reports whether the receiver is still in the life its tuple was logged for.
func (r *receipt) mine() bool {
	p, w, rt := r.p, r.w, r.p.RT
	return !p.fallen && w.gen == r.gen && w.node == r.n && rt.Holds(r.n, r.inc)
}

// log sends the tuple to the buddy of the receiver's node (again, after a
// retry: the receiver is the same life, so node and buddy are recomputed alike).
func (r *receipt) log() {
	p := r.p
	rt := p.RT
	r.b = p.buddy(r.n)
	if r.b == sim.None {
		r.ready() // alone: nothing can survive a failure anyway
		return
	}
	if !rt.Alive(r.b) {
		r.retry()
		return
	}
	rt.TransferTo(r.n, r.b, p.cfg.TicketBytes, tagTuple, r)
}

// retry waits for flushRetries: the buddy is down. Only log, which finds
// the buddy, calls it: a transfer to a buddy that failed meanwhile logs
// again, since the ring may have changed (and flushed) before its failure
// was reported.
func (r *receipt) retry() { r.p.retryRecv = append(r.p.retryRecv, r) }

// TransferDone moves the record on after its tuple (tagTuple), the buddy's
// acknowledgement (tagAck) or the reply to the sender (tagReply).
func (r *receipt) TransferDone(tag int32, ok bool) {
	p := r.p
	rt := p.RT
	switch tag {
	case tagTuple:
		if !r.mine() {
			return
		}
		if !ok {
			r.log() // the buddy failed: to the buddy of now (see logTuple)
			return
		}
		b, sz := r.b, p.cfg.TicketBytes
		r.w.rlog = append(r.w.rlog, tuple{src: r.k.src, sn: r.k.sn, tn: r.tn, holder: b, inc: rt.Incarnation(b)})
		p.memAdd(b, rt.Incarnation(b), sim.MemLog, sz)
		p.Stats.ReceiverTuples++
		rt.TransferTo(b, r.n, sz, tagAck, r)
	case tagAck:
		if !r.mine() {
			return
		}
		if !ok {
			r.log()
			return
		}
		r.ready()
	case tagReply:
		r.told(ok)
	}
}

// ready makes the message processable once its tuple is logged.
func (r *receipt) ready() {
	p, w, m, tn := r.p, r.w, r.m, r.tn
	w.setLogging(r.k, false)
	m.Hdr.TN = tn
	// the next TN (the usual case) is delivered at once rather than held
	// and taken back by release
	free := tn > w.delivered && w.heldAt(tn) == nil
	next := free && tn == w.delivered+1
	if free && !next {
		w.holdMsg(tn, m)
	}
	r.m = nil
	r.tell(false) // only starts a transfer: w's held messages stay as they are
	if next {
		w.delivered++
		p.RT.Deliver(m)
	}
	p.release(w)
}

// tellSender tells the sender of message k the TN its receiver w gave it (or
// that w had processed it), so that garbage collection can prune its log entry
// and a resend carries the TN.
func (p *Protocol) tellSender(w *object, k pair, tn uint64, old bool) {
	r := p.newReceipt()
	*r = receipt{p: p, w: w, k: k, tn: tn, gen: w.gen}
	r.tell(old)
}

// tell sends the reply of tellSender.
func (r *receipt) tell(old bool) {
	p := r.p
	rt := p.RT
	s := p.objs[r.k.src]
	if rt.Lost(s.id) || !rt.Alive(s.node) {
		r.free()
		return
	}
	r.sgen, r.old = s.gen, old
	p.spend(r.w.node, p.cfg.CPU.Ticket)
	rt.TransferTo(r.w.node, s.node, p.cfg.TicketBytes, tagReply, r)
}

// told: the reply reached the sender, which records the TN in its log entry.
func (r *receipt) told(ok bool) {
	p, w, k, tn, old, sgen, wgen := r.p, r.w, r.k, r.tn, r.old, r.sgen, r.gen
	r.free()
	s := p.objs[k.src]
	if !ok || p.fallen || s.gen != sgen {
		return
	}
	// a log list is in increasing SN order (sends append increasing SNs; a
	// restore appends its checkpoint's copies, in the order they were
	// logged, to an empty log), so the entry with SN k.sn is where the SNs
	// before it leave it when none of them was pruned, and found by binary
	// search otherwise, where a scan from the start cost a step per older
	// entry still logged
	l := s.log.Get(w.id)
	i := -1
	if len(l) > 0 && k.sn >= l[0].sn {
		if j := k.sn - l[0].sn; j < uint64(len(l)) && l[j].sn == k.sn {
			i = int(j)
		}
	}
	if i < 0 {
		i, _ = slices.BinarySearchFunc(l, k.sn, func(e *entry, sn uint64) int { return cmp.Compare(e.sn, sn) })
	}
	for _, e := range l[i:] {
		if e.sn != k.sn {
			return
		}
		if !p.live(s, e) {
			continue
		}
		if e.tn == 0 {
			e.tn = tn
		}
		if old {
			e.old, e.oldGen = true, wgen
			if e.tn == 0 { // processed and checkpointed: never needed again
				p.prune(s, e)
			}
		}
		return
	}
}

// replaying returns, when the multiple-failure extension is off, an object h
// restored after an earlier failure that still re-executes and that talks to
// one of the objects just lost (w): the TNs w had given to h's messages sent
// before h's crash died with w's table and h's log, so w's re-execution order
// cannot be rebuilt.
func (p *Protocol) replaying(lost []*object) (h, w *object) {
	if p.cfg.MultiFailure {
		return nil, nil
	}
	gone := map[sim.ObjID]bool{}
	for _, o := range lost {
		gone[o.id] = true
	}
	for _, o := range p.objs {
		if o.replayTo == 0 || gone[o.id] || p.RT.Lost(o.id) {
			continue
		}
		for _, x := range lost {
			if o.sn.Get(x.id) > 0 || x.ckpt.doneOf(o.id) != nil {
				return o, x
			}
		}
	}
	return nil, nil
}
