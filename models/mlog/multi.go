package mlog

// This file holds the second half of the multiple-failure extension of
// section 3.4 (multi_failure): a message to an object on another node is sent
// with its SN alone; the receiver assigns its TN and logs the (sender, SN, TN)
// tuple in the remote message log on the receiver's buddy before processing
// it. Without it, a node failing while objects restored after an earlier
// failure still re-execute loses the TNs of the messages those objects had
// sent before their crash (their logs died with them, the TN tables with the
// receivers): the pattern is reported as unrecoverable.

import "ftsim/sim"

// sendDirect sends logged message e: to another node at once with its SN; to
// the same node in local mode (the tuple is logged on the buddy, which is
// the receiver's buddy too).
func (p *Protocol) sendDirect(s *object, e *entry) {
	if !p.live(s, e) || e.tn != 0 || e.old || e.asking || p.RT.Lost(e.dst) {
		return // the resend after the receiver's restart sends it again
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
	if w.done[m.Src].has(m.Hdr.SN) {
		p.Stats.Duplicates++
		p.tellSender(w, k, w.tnTable[k], true)
		return
	}
	if tn, ok := w.tnTable[k]; ok {
		if w.logging[k] || tn <= w.delivered || w.held[tn] != nil {
			p.Stats.Duplicates++ // its tuple is on the way, or it waits already
			return
		}
		m.Hdr.TN = tn
		w.held[tn] = m // the tuple is in the remote log (restored from it)
		p.tellSender(w, k, tn, false)
		p.release(w)
		return
	}
	if w.gated { // TNs are handed out once every node has resent
		w.waiting = append(w.waiting, m)
		return
	}
	tn, _, _ := p.ticket(w, m.Src, m.Hdr.SN)
	w.logging[k] = true
	p.logReceived(w, m, k, tn)
}

// logReceived logs the tuple of message m (TN tn) on the buddy of w's node and
// makes m processable when the buddy has acknowledged.
func (p *Protocol) logReceived(w *object, m *sim.Message, k pair, tn uint64) {
	rt := p.RT
	gen, n, inc := w.gen, w.node, w.inc
	mine := func() bool {
		return !p.fallen && w.gen == gen && w.node == n && rt.Alive(n) && rt.Incarnation(n) == inc
	}
	ready := func() {
		delete(w.logging, k)
		m.Hdr.TN = tn
		if tn > w.delivered && w.held[tn] == nil {
			w.held[tn] = m
		}
		p.tellSender(w, k, tn, false)
		p.release(w)
	}
	b := p.buddy(n)
	if b == sim.None {
		ready() // alone: nothing can survive a failure anyway
		return
	}
	retry := func() {
		p.retryRecv = append(p.retryRecv, func() {
			if mine() {
				p.logReceived(w, m, k, tn)
			}
		})
	}
	if !rt.Alive(b) {
		retry()
		return
	}
	sz := p.cfg.TicketBytes
	rt.Transfer(n, b, sz, tagTuple, func(ok bool) {
		if !mine() {
			return
		}
		if !ok {
			retry()
			return
		}
		w.rlog = append(w.rlog, tuple{src: k.src, sn: k.sn, tn: tn, holder: b, inc: rt.Incarnation(b)})
		p.memAdd(b, rt.Incarnation(b), sim.MemLog, sz)
		p.Stats.ReceiverTuples++
		rt.Transfer(b, n, sz, tagAck, func(ok bool) {
			if !mine() {
				return
			}
			if !ok {
				retry()
				return
			}
			ready()
		})
	})
}

// tellSender tells the sender of message k the TN its receiver w gave it (or
// that w had processed it), so that garbage collection can prune its log entry
// and a resend carries the TN.
func (p *Protocol) tellSender(w *object, k pair, tn uint64, old bool) {
	rt := p.RT
	s := p.objs[k.src]
	if rt.Lost(s.id) || !rt.Alive(s.node) {
		return
	}
	gen := s.gen
	rt.Transfer(w.node, s.node, p.cfg.TicketBytes, tagReply, func(ok bool) {
		if !ok || p.fallen || s.gen != gen {
			return
		}
		for _, e := range s.log[w.id] {
			if e.sn != k.sn || !p.live(s, e) {
				continue
			}
			if e.tn == 0 {
				e.tn = tn
			}
			if old {
				e.old = true
				if e.tn == 0 { // processed and checkpointed: never needed again
					p.prune(s, e)
				}
			}
			return
		}
	})
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
			if o.sn[x.id] > 0 || x.ckpt.done[o.id] != nil {
				return o, x
			}
		}
	}
	return nil, nil
}
