package sim

// Protocol tags the runtime itself uses for control transfers.
const (
	TagMigrate  int32 = -1 // an object's state moving to another node
	TagTransfer int32 = -2 // a generic Transfer
)

// arrival is what the arrival handler needs of a message in flight, kept in
// Runtime.arrivals beside its msgs slot: with it and the receiver's link the
// handler never touches the Message. At 10,000 nodes, with tens of thousands
// of messages in flight, a Message is a cache miss; this leaves one per
// message (at delivery, where the object's handler needs it anyway) and reads
// a record a tenth of its size at arrival.
type arrival struct {
	xfer  Time   // time on each interface: the wire size at transmission over the bandwidth
	toInc uint32 // the receiver's incarnation at transmission
}

// transmit puts m on the network at m.SentAt (or now, whichever is later).
// Each node has a full-duplex interface: a message first occupies the sender's
// outgoing side for size/bandwidth, its head reaches the receiver after the
// latency, then it occupies the receiver's incoming side for size/bandwidth
// (waiting if that side is busy). An uncontended message therefore takes
// latency + size/bandwidth, and a burst through one interface is serialised.
// The arrival and delivery events carry the receiver in I and the msgs slot
// in J.
func (rt *Runtime) transmit(m *Message) {
	now := rt.eng.now
	if m.SentAt < now {
		m.SentAt = now
	}
	if !m.Control {
		m.To = rt.place[m.Dst]
		rt.inFlight++
	}
	from := &rt.links[m.From]
	m.fromInc = from.inc
	m.toInc = rt.links[m.To].inc
	ref := rt.msgs.put(m)
	if len(rt.arrivals) < len(rt.msgs.items) {
		rt.arrivals = append(rt.arrivals, arrival{}) // the slab grew by one slot
	}
	if m.From == m.To {
		m.outEnd = m.SentAt
		rt.eng.Schedule(m.SentAt, rt.kDeliver, int32(m.To), int64(ref))
		return
	}
	start := m.SentAt
	if from.outFree > start {
		start = from.outFree
	}
	xfer := TransferTime(m.WireSize(), rt.cfg.Bandwidth)
	m.outEnd = start + xfer
	from.outFree = m.outEnd
	rt.arrivals[ref] = arrival{xfer: xfer, toInc: m.toInc}
	rt.eng.Schedule(start+rt.cfg.Latency, rt.kArrive, int32(m.To), int64(ref))
}

// onArrive: the head of a message reached its receiver's interface.
func (rt *Runtime) onArrive(ev Event) {
	a := &rt.arrivals[ev.J]
	to := &rt.links[ev.I]
	start := rt.eng.now
	if to.inFree > start {
		start = to.inFree
	}
	end := start + a.xfer
	if to.inc == a.toInc {
		to.inFree = end // a dead interface is not occupied
	}
	rt.eng.Schedule(end, rt.kDeliver, ev.I, ev.J)
}

// onDeliver: the whole message is at its receiver. Fail-stop rules apply here:
// a message whose sender died before its last byte left, or whose receiver died
// before it arrived, is lost.
func (rt *Runtime) onDeliver(ev Event) {
	m := rt.msgs.take(int32(ev.J))
	from := &rt.links[m.From]
	to := &rt.links[m.To]
	lost := to.inc != m.toInc || to.state == nodeFailed ||
		(from.inc != m.fromInc && rt.nodes[m.From].failAt[m.fromInc] < m.outEnd)
	if m.Control {
		if lost {
			rt.stats.LostMsgs++
			if m.done != nil {
				rt.transferDone(m, false)
			}
			return
		}
		if rt.tracer != nil {
			rt.tracer.Message(m, rt.eng.now)
		}
		if m.done != nil {
			rt.transferDone(m, true)
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
	if o := &rt.objs[m.Dst]; rt.place[m.Dst] != m.To && !o.lost {
		// the object moved while the message travelled: forward it
		m.From = m.To
		m.SentAt = rt.eng.now
		rt.stats.ForwardedMsgs++
		rt.transmit(m)
		return
	}
	if rt.tracer != nil {
		rt.tracer.Message(m, rt.eng.now)
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
	rt.transfer(from, to, size, tag, doneFunc(done))
}

// doneFunc is Transfer's closure as a Completion (a func is pointer-shaped:
// the conversion does not allocate).
type doneFunc func(ok bool)

func (f doneFunc) TransferDone(_ int32, ok bool) { f(ok) }

// Completion receives the outcome of a TransferTo.
type Completion interface {
	// TransferDone is called when the transfer with tag has arrived (ok) or
	// was lost with one of its ends (!ok).
	TransferDone(tag int32, ok bool)
}

// TransferTo is Transfer reporting to c. A protocol that makes a transfer per
// application message passes a record it allocates anyway (a pointer
// implementing Completion) instead of a closure per step.
func (rt *Runtime) TransferTo(from, to NodeID, size int64, tag int32, c Completion) {
	rt.transfer(from, to, size, tag, c)
}

func (rt *Runtime) transfer(from, to NodeID, size int64, tag int32, c Completion) {
	var m *Message
	if n := len(rt.xferFree); n > 0 {
		m, rt.xferFree = rt.xferFree[n-1], rt.xferFree[:n-1]
	} else {
		m = new(Message)
	}
	*m = Message{Src: None, Dst: None, From: from, To: to, Tag: tag, Size: size, SentAt: rt.eng.now, done: c}
	rt.SendControl(m)
}

// transferDone ends Transfer m: its Message goes back to the pool before done
// runs (done never sees it), so that the transfers done starts reuse it.
func (rt *Runtime) transferDone(m *Message, ok bool) {
	c, tag := m.done, m.Tag
	m.done = nil
	rt.xferFree = append(rt.xferFree, m)
	c.TransferDone(tag, ok)
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
		Epoch: rt.epoch, SentAt: rt.eng.now, From: rt.place[src]}
	rt.stats.ExtraMsgs++
	rt.stats.ExtraBytes += m.WireSize()
	rt.transmit(m)
	return m
}
