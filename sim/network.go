package sim

// Protocol tags the runtime itself uses for control transfers.
const (
	TagMigrate  int32 = -1 // an object's state moving to another node
	TagTransfer int32 = -2 // a generic Transfer
)

// transmit puts m on the network at m.SentAt (or now, whichever is later).
// Each node has a full-duplex interface: a message first occupies the sender's
// outgoing side for size/bandwidth, its head reaches the receiver after the
// latency, then it occupies the receiver's incoming side for size/bandwidth
// (waiting if that side is busy). An uncontended message therefore takes
// latency + size/bandwidth, and a burst through one interface is serialised.
func (rt *Runtime) transmit(m *Message) {
	now := rt.eng.now
	if m.SentAt < now {
		m.SentAt = now
	}
	if !m.Control {
		m.To = rt.objs[m.Dst].node
		rt.inFlight++
	}
	from := &rt.nodes[m.From]
	m.fromInc = from.inc
	m.toInc = rt.nodes[m.To].inc
	ref := int64(rt.msgs.put(m))
	if m.From == m.To {
		m.outEnd = m.SentAt
		rt.eng.Schedule(m.SentAt, rt.kDeliver, 0, ref)
		return
	}
	start := m.SentAt
	if from.outFree > start {
		start = from.outFree
	}
	m.outEnd = start + TransferTime(m.WireSize(), rt.cfg.Bandwidth)
	from.outFree = m.outEnd
	rt.eng.Schedule(start+rt.cfg.Latency, rt.kArrive, 0, ref)
}

// onArrive: the head of a message reached its receiver's interface.
func (rt *Runtime) onArrive(ev Event) {
	m := *rt.msgs.get(int32(ev.J))
	to := &rt.nodes[m.To]
	start := rt.eng.now
	if to.inFree > start {
		start = to.inFree
	}
	end := start + TransferTime(m.WireSize(), rt.cfg.Bandwidth)
	if to.inc == m.toInc {
		to.inFree = end // a dead interface is not occupied
	}
	rt.eng.Schedule(end, rt.kDeliver, 0, ev.J)
}

// onDeliver: the whole message is at its receiver. Fail-stop rules apply here:
// a message whose sender died before its last byte left, or whose receiver died
// before it arrived, is lost.
func (rt *Runtime) onDeliver(ev Event) {
	m := rt.msgs.take(int32(ev.J))
	from := &rt.nodes[m.From]
	to := &rt.nodes[m.To]
	lost := to.inc != m.toInc || to.state == nodeFailed ||
		(from.inc != m.fromInc && from.failAt[m.fromInc] < m.outEnd)
	if m.Control {
		if lost {
			rt.stats.LostMsgs++
			if m.done != nil {
				m.done(m, false)
			}
			return
		}
		if m.done != nil {
			m.done(m, true)
			return
		}
		rt.proto.OnControl(m)
		return
	}
	rt.inFlight--
	if lost || m.Epoch != rt.epoch {
		rt.stats.LostMsgs++
		rt.checkQuiet()
		return
	}
	if o := &rt.objs[m.Dst]; o.node != m.To && !o.lost {
		// the object moved while the message travelled: forward it
		m.From = m.To
		m.SentAt = rt.eng.now
		rt.stats.ForwardedMsgs++
		rt.transmit(m)
		return
	}
	if rt.proto.OnArrive(m) {
		rt.Deliver(m)
	}
	rt.checkQuiet()
}

// Transmit sends an application message the protocol held back in OnSend.
func (rt *Runtime) Transmit(m *Message) { rt.transmit(m) }

// SendControl sends protocol message m (modeled size m.Size) from node m.From to
// node m.To; it arrives through Protocol.OnControl and counts as protocol
// traffic. It leaves at m.SentAt if that is later than now. Src and Dst are free
// for the protocol's use.
func (rt *Runtime) SendControl(m *Message) {
	m.Control = true
	rt.stats.ExtraMsgs++
	rt.stats.ExtraBytes += m.WireSize()
	rt.transmit(m)
}

// SendCopy sends a copy of application message m to node to as protocol
// traffic leaving when m does (a DPS duplicate for a backup thread).
func (rt *Runtime) SendCopy(m *Message, to NodeID, tag int32) {
	c := m.Clone()
	c.To = to
	c.Tag = tag
	rt.SendControl(c)
}

// Transfer moves size bytes from node from to node to over the network (a
// checkpoint to a buddy, a migration) and calls done(true) when they have
// arrived, done(false) if either end failed first.
func (rt *Runtime) Transfer(from, to NodeID, size int64, tag int32, done func(ok bool)) {
	m := &Message{Src: None, Dst: None, From: from, To: to, Tag: tag, Size: size, SentAt: rt.eng.now,
		done: func(_ *Message, ok bool) { done(ok) }}
	rt.SendControl(m)
}

// InFlight returns the application messages of the current epoch that have been
// transmitted and not yet delivered, in transmission order. A checkpoint that
// does not drain the network records them as channel state.
func (rt *Runtime) InFlight() []*Message {
	var out []*Message
	for _, m := range rt.msgs.items { // freed slots are nil
		if m != nil && !m.Control && m.Epoch == rt.epoch {
			out = append(out, m)
		}
	}
	return out
}

// SendApp sends an application message on behalf of object src, now, from the
// node src is placed on (a master's task resubmitted by a protocol, a logged
// message re-sent after a restart). It arrives at dst like any application
// message but counts as protocol traffic.
func (rt *Runtime) SendApp(src, dst ObjID, tag int32, size int64, payload []byte, hdr Header) *Message {
	m := &Message{Src: src, Dst: dst, Tag: tag, Size: size, Payload: payload, Hdr: hdr,
		Epoch: rt.epoch, SentAt: rt.eng.now, From: rt.objs[src].node}
	rt.stats.ExtraMsgs++
	rt.stats.ExtraBytes += m.WireSize()
	rt.transmit(m)
	return m
}
