package mlog

// This file holds the receiver's side of the forward path (section 3.1):
// messages are processed in TN order, duplicates are dropped, and each one
// processed is recorded for the checkpoint and the restart.

import (
	"ftsim/sim"
)

// OnArrive holds an application message until its TN is the next one of its
// receiver, and drops duplicates.
func (p *Protocol) OnArrive(m *sim.Message) bool {
	if p.fallen {
		return true
	}
	rt := p.RT
	w := p.objs[m.Dst]
	if rt.Lost(w.id) {
		rt.Stats().LostMsgs++
		return false
	}
	if p.cfg.MultiFailure && m.Hdr.TN == 0 {
		p.arriveDirect(w, m)
		return false
	}
	k := pair{m.Src, m.Hdr.SN}
	tn := m.Hdr.TN
	if tn == 0 || w.done.Lookup(m.Src).has(m.Hdr.SN) || tn <= w.delivered || w.heldAt(tn) != nil {
		p.Stats.Duplicates++
		return false
	}
	if prev, ok := w.byTNAt(tn); ok && prev != k {
		p.Stats.Duplicates++ // a stale ticket of an earlier life: never processed
		return false
	}
	if w.tnOf(k) == 0 { // a resent message carries a TN handed out before the crash
		w.setTN(k, tn)
	}
	if tn == w.delivered+1 { // the next TN: delivered at once rather than held and taken back by release
		w.delivered++
		p.RT.Deliver(m)
	} else {
		w.holdMsg(tn, m)
	}
	p.release(w)
	return false
}

// release delivers w's held messages in TN order.
func (p *Protocol) release(w *object) {
	for {
		m := w.heldAt(w.delivered + 1)
		if m == nil {
			return
		}
		w.delivered++
		w.held.dropBelow(w.delivered + 1)
		p.RT.Deliver(m)
	}
}

// OnDispatch records the message processed: TNProcessed and the sender's SN.
func (p *Protocol) OnDispatch(m *sim.Message) {
	if p.fallen {
		return
	}
	w := p.objs[m.Dst]
	w.tnProcessed = m.Hdr.TN
	d := w.done.Ptr(m.Src)
	d.Add(m.Hdr.SN)
	w.addSender(m.Src, d)
	if w.catchUp > 0 && w.tnProcessed >= w.catchUp {
		p.caughtUp(w)
	}
	if w.replayTo > 0 && w.tnProcessed >= w.replayTo {
		w.replayTo = 0
	}
	if p.trace != nil {
		k := pair{m.Src, m.Hdr.SN}
		if prev, ok := p.trace[w.id][m.Hdr.TN]; ok {
			if prev != k {
				p.Stats.OrderMismatches++
			} else {
				p.Stats.Reprocessed++
			}
		} else {
			p.trace[w.id][m.Hdr.TN] = k
		}
	}
}

// OnHandled feeds the probe.
func (p *Protocol) OnHandled(id sim.ObjID) {
	if p.dormant > 0 && !p.fallen {
		p.wake()
	}
	if p.Probe != nil {
		p.Probe.handled(p.RT, id)
	}
}
