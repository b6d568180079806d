package dps

// This file is the message path of a thread: stamping and duplicating the
// data objects it sends, accepting or dropping those it receives (silent
// re-execution), the copies of tasks the split keeps for its workers, and
// what follows a handler (OnHandled: the every and every_progress
// checkpoints, the split's pending resends).

import "ftsim/sim"

// OnSend stamps the sequence number and operation identifier and duplicates the
// data object to every backup thread of its receiver.
func (p *Protocol) OnSend(m *sim.Message) bool {
	if p.fallback {
		return true
	}
	rt := p.RT
	t := &p.th[m.Src]
	t.pst.seqOut = max(t.pst.seqIn, t.pst.seqOut) + 1
	next := t.pst.sent.Ptr(m.Dst)
	rank := *next
	*next++
	m.Hdr.Seq = t.pst.seqOut
	m.Hdr.Op = opID(t.pst.life, rank)
	if m.SentAt > rt.Now() {
		t.later = append(t.later, laterSend{m.Dst, rank, m.SentAt})
	}
	m.Hdr.Bytes += p.cfg.HeaderBytes
	if p.cfg.HeaderBytes > 0 {
		st := rt.Stats()
		st.ExtraBytes += p.cfg.HeaderBytes
	}
	hw := t.hw.Ptr(m.Dst)
	if hw.life != t.pst.life {
		*hw = highWater{life: t.pst.life}
	}
	if rank < hw.next {
		m.Hdr.Flags |= flagRepost
		p.C.Reposted++
	} else {
		hw.next = rank + 1
		if p.origSeq != nil {
			p.origSeq[auditKey(m)] = m.Hdr.Seq
		}
	}
	switch {
	case m.Src == p.split:
		m.Hdr.Inc = p.splitGen
	case t.stateless:
		m.Hdr.Inc = t.inGen
	}
	if p.hold(t, m) {
		return false
	}
	p.duplicate(m)
	return true
}

// duplicate sends the copies of data object m to the backup threads of its
// receiver (or keeps the split's copy of a task), as m leaves.
func (p *Protocol) duplicate(m *sim.Message) {
	t := &p.th[m.Src]
	d := &p.th[m.Dst]
	if d.stateless {
		if !t.stateless {
			p.keepCopy(m)
		}
		return
	}
	if !p.duplicated(m) {
		return // results reach the split's backups by forwardGap
	}
	m.Hdr.SN = uint64(d.bkGen)
	for _, bk := range d.backups {
		p.sendCopy(m, bk.node, tagDup)
	}
}

// taskCopy is the copy of a task the split keeps, on its node, until the merge
// confirms it (accounted memory only: the split's Outstanding is the content).
type taskCopy struct {
	node sim.NodeID
	inc  uint32
	size int64
}

// keepCopy accounts the copy of a task the split keeps until the merge confirms it.
func (p *Protocol) keepCopy(m *sim.Message) {
	c := taskCopy{m.From, p.RT.Incarnation(m.From), m.WireSize()}
	p.copies[m.Dst] = append(p.copies[m.Dst], c)
	p.memAdd(c.node, memCopy, c.size)
}

func (p *Protocol) releaseCopy(c taskCopy) {
	if p.RT.Holds(c.node, c.inc) {
		p.memAdd(c.node, memCopy, -c.size)
	}
}

// confirmCopy releases the oldest copy of a task held by worker: its result reached the merge.
func (p *Protocol) confirmCopy(worker sim.ObjID) {
	q := p.copies[worker]
	if len(q) == 0 {
		return
	}
	p.releaseCopy(q[0])
	p.copies[worker] = q[1:]
}

// releaseCopies forgets the copies of worker's tasks (they are resent, and kept again).
func (p *Protocol) releaseCopies(worker sim.ObjID) {
	for _, c := range p.copies[worker] {
		p.releaseCopy(c)
	}
	p.copies[worker] = nil
}

// sendCopy sends a duplicate of data object m to node to; the original tag
// travels in Hdr.TN.
func (p *Protocol) sendCopy(m *sim.Message, to sim.NodeID, tag int32) {
	rt := p.RT
	c := m.Clone()
	c.To = to
	c.Tag = tag
	c.Hdr.TN = uint64(uint32(m.Tag))
	c.Hdr.Flags &^= flagInjected
	rt.SendControl(c)
	p.C.Duplicates++
	p.C.DuplicateBytes += c.WireSize()
	p.charge(c.From, c.Size)
}

// OnArrive drops re-posted data objects the thread already received (silent
// re-execution) and forwards gap copies to regenerated backups.
func (p *Protocol) OnArrive(m *sim.Message) bool {
	if p.fallback {
		return true
	}
	t := &p.th[m.Dst]
	if m.Dst == p.split && p.th[m.Src].stateless && m.Hdr.Inc != p.splitGen {
		p.C.StaleResults++
		return false
	}
	if m.Hdr.Flags&flagResend != 0 || t.stateless {
		// a stateless thread recomputes a duplicate task harmlessly: the merge
		// ignores a second result, and a re-executed split that handed out its
		// tasks in another order must reach every worker
		return true
	}
	if t.received.has(m.Src, m.Hdr.Op) {
		p.drop(m)
		return false
	}
	t.received.add(m.Src, m.Hdr.Op)
	if p.repostIn != nil && m.Hdr.Flags&flagRepost != 0 {
		p.repostIn[auditKey(m)] = true
	}
	p.forwardGap(t, m, p.RT.NodeOf(m.Dst))
	if t.ord.replay {
		p.deliverReplay(m.Dst, p.park(m.Dst, m))
		return false
	}
	return true
}

func (p *Protocol) drop(m *sim.Message) {
	if m.Hdr.Flags&flagRepost == 0 {
		// An original still on the wire when its sender failed may arrive
		// after the re-executed sender's re-post of it (sent from a node
		// nearer the receiver, or the receiver's own): dropping it is right.
		switch k := auditKey(m); {
		case p.repostIn[k]:
			p.C.OvertakenOriginals++
		case p.copyIn[k]:
			// its duplicate reached the backup's node as the thread was
			// re-activated there, and was handed over: the same object
			p.C.CopiesFirst++
		default:
			p.C.WrongDrops++
		}
		return
	}
	p.C.SilentDrops++
	if p.origSeq != nil {
		if s, ok := p.origSeq[auditKey(m)]; ok && s != m.Hdr.Seq {
			p.C.SeqMismatches++
		}
	}
}

// auditKey names data object m for the audit: (sender, receiver, operation).
func auditKey(m *sim.Message) [3]uint64 {
	return [3]uint64{uint64(m.Src), uint64(m.Dst), m.Hdr.Op}
}

// duplicated reports whether data object m to a stateful thread is
// duplicated to its receiver's backups as it is sent: all are but the
// results of stateless threads to the split, which forwardGap copies to
// the split's backups once accepted. Re-activation does not need them (the
// split is not re-executed, see activate), so a backup missing them is
// still complete.
func (p *Protocol) duplicated(m *sim.Message) bool {
	return m.Dst != p.split || !p.th[m.Src].stateless
}

// forwardGap copies an accepted data object to the backups registered after it
// was sent (they did not get its duplicate).
func (p *Protocol) forwardGap(t *thread, m *sim.Message, at sim.NodeID) {
	if t.stateless {
		return
	}
	for _, bk := range t.backups {
		if uint64(bk.gen) > m.Hdr.SN && bk.node != at {
			c := m.Clone()
			c.From = at
			c.SentAt = p.RT.Now()
			p.sendCopy(c, bk.node, tagFwd)
			p.C.GapForwards++
		}
	}
}

// OnDispatch raises SeqIn to the object's sequence number and records the
// object as processed. SeqIn is the largest sequence number handled so far, not
// that of the current object alone: a merge whose last input carries a small
// number must still number its output above all its inputs (§4).
func (p *Protocol) OnDispatch(m *sim.Message) {
	if p.fallback {
		return
	}
	p.unpark(m.Dst) // a tick during the handler checkpoints once it ends
	t := &p.th[m.Dst]
	t.pst.seqIn = max(t.pst.seqIn, m.Hdr.Seq)
	t.inGen = m.Hdr.Inc
	if m.Hdr.Flags&flagInjected != 0 && t.replaying > 0 {
		t.replaying--
	}
	if m.Hdr.Flags&flagResend != 0 {
		return
	}
	if p.th[m.Src].stateless && !t.stateless {
		p.confirmCopy(m.Src)
	}
	if t.dispatched != nil && !t.stateless {
		k := msgKey{m.Src, m.Hdr.Op}
		if _, ok := t.dispatched[k]; ok {
			p.C.DoubleProcessed++
		}
		t.dispatched[k] = struct{}{}
	}
	t.processed.add(m.Src, m.Hdr.Op)
	t.since++
	if p.logging(t) {
		p.logDispatch(m.Dst, m)
	}
}

// OnHandled checkpoints every Every handled messages and lets a split that
// finished re-executing resend its outstanding tasks.
func (p *Protocol) OnHandled(id sim.ObjID) {
	t := &p.th[id]
	t.later = t.later[:0] // they have left
	if p.fallback {
		return
	}
	t.handled++
	if t.resendDue && t.replaying == 0 {
		t.resendDue = false
		p.resendAll()
	} else if id == p.split && p.C.Retired > 0 && t.replaying == 0 && !t.resendDue {
		p.resendRetired()
	}
	due := p.cfg.Every > 0 && t.handled >= p.cfg.Every ||
		p.cfg.EveryProgress > 0 && p.RT.ObjectProgress(id)-t.ckProg >= p.cfg.EveryProgress
	if !t.stateless && due {
		if p.logging(t) {
			t.handled, t.ckProg = 0, p.RT.ObjectProgress(id)
			p.whenSettled(id, func() {
				if !p.fallback && !p.RT.Lost(id) {
					p.checkpoint(id)
				}
			})
		} else {
			p.checkpoint(id)
		}
	}
}
