package sim

import "math/rand/v2"

// Protocol tags the runtime itself uses for control transfers.
const (
	TagMigrate  int32 = -1 // an object's state moving to another node
	TagTransfer int32 = -2 // a generic Transfer
)

// inFlightMsg is a message in flight as the network keeps it (Runtime.msgs):
// the message, and what the arrival handler needs of it. With that and the
// receiver's link the arrival never touches the Message: at 10,000 nodes,
// with tens of thousands of messages in flight, a Message is a cache miss.
// This leaves one per message (at delivery, where the object's handler needs
// it anyway), and the arrival and the delivery read the same small record.
type inFlightMsg struct {
	m     *Message
	xfer  Time   // time on each interface: the wire size at transmission over the bandwidth
	toInc uint32 // the receiver's incarnation at transmission
	from  NodeID // the sending node
}

// transmit puts m on the network at m.SentAt (or now, whichever is later).
// Each node has a full-duplex interface: a message first occupies the sender's
// outgoing side for size/bandwidth, its head reaches the receiver after the
// latency, then it occupies the receiver's incoming side for size/bandwidth
// (waiting if that side is busy). An uncontended message therefore takes
// latency + size/bandwidth, and a burst through one interface is serialised.
// A message dated later than now (a handler's sends, dated at its end) leaves
// from a departure event at m.SentAt: the interface is free for others until
// then, and a send voided in between never takes it. The departure event
// carries the sender in I, the arrival and delivery events the receiver;
// all carry the msgs slot in J.
func (rt *Runtime) transmit(m *Message) {
	now := rt.eng.now
	if m.SentAt < now {
		m.SentAt = now
	}
	from := &rt.links[m.From]
	if from.state == nodeFailed { // a failed node sends nothing
		rt.stats.LostMsgs++
		return
	}
	if !m.Control {
		m.To = rt.place[m.Dst]
		rt.inFlight++
	}
	m.fromInc = from.inc
	m.toInc = rt.links[m.To].inc
	ref := rt.msgs.put(inFlightMsg{m: m, toInc: m.toInc, from: m.From})
	m.ref = ref
	if m.From == m.To {
		m.outEnd = m.SentAt
		rt.later(m, rt.kDeliver, m.To, ref)
		return
	}
	if m.SentAt > now {
		rt.later(m, rt.kDepart, m.From, ref)
		return
	}
	rt.departMsg(m, ref)
}

// lateMsg is the event (kind, on node, msgs slot) of a message m a running
// handler sent after its start. It keeps m, which the slot holds too, so
// that a cut can list the handler's messages without reading the slots.
type lateMsg struct {
	kind Kind
	node NodeID
	ref  int32
	m    *Message
}

// later schedules the event of kind k, on node n, of message m, in msgs
// slot ref, at its time m.SentAt. A message a running handler sends after its
// start waits in rt.late until the handler returns: one due at the
// handler's end then leaves from its completion event (settleLate,
// departLate), without an event of its own, and a cut can hold it back
// without touching the event queue.
func (rt *Runtime) later(m *Message, k Kind, n NodeID, ref int32) {
	if rt.inHandler && m.SentAt > rt.eng.now {
		rt.late = append(rt.late, lateMsg{k, n, ref, m})
		return
	}
	rt.eng.Schedule(m.SentAt, k, int32(n), int64(ref))
}

// settleLate files the late messages of the handler that just ran in ctx
// for object o, which ends at end: in o.late those due then, which leave
// with its completion; the others get their events now, in the order they
// were sent (under a Cutter, o.sends keeps them too, for a cut). With held,
// the handler is the rest of a cut one whose messages due at its end are
// still in o.late (resumeCut), and they stay.
func (rt *Runtime) settleLate(o *objState, end Time, held bool) {
	o.lateAt = end
	if !held {
		o.late, o.lateApp, o.lateWire, o.lateEpoch = o.late[:0], 0, 0, rt.epoch
		if cap(o.late) < len(rt.late) { // at most this many: one allocation, not a doubling each
			o.late = make([]lateMsg, 0, len(rt.late))
		}
	}
	o.sends = o.sends[:0]
	for _, l := range rt.late {
		m := l.m
		if m.SentAt == end {
			o.late = append(o.late, l)
			if !m.Control {
				o.lateApp++
			}
			o.lateWire += m.WireSize()
			continue
		}
		rt.eng.Schedule(m.SentAt, l.kind, int32(l.node), int64(l.ref))
		if rt.cutStep > 0 {
			o.sends = append(o.sends, m)
		}
	}
	rt.late = rt.late[:0]
}

// departLate sends the messages due at the end of object o's handler,
// which ends now, in the order they were sent, as their own events would.
func (rt *Runtime) departLate(o *objState) {
	for _, l := range o.late {
		l.m.SentAt = rt.eng.now // a cut may have held it back since it was due (cut.go)
		ev := Event{At: rt.eng.now, Kind: l.kind, I: int32(l.node), J: int64(l.ref)}
		if l.kind == rt.kDepart {
			rt.onDepart(ev)
		} else {
			rt.onDeliver(ev)
		}
	}
	o.late = o.late[:0]
}

// scheduleLate gives the messages due at the end of object o's handler,
// which will not complete (it is aborted), their own events: they leave at
// their time, as an aborted handler's messages always have (unless their
// sender died or their epoch is void by then).
func (rt *Runtime) scheduleLate(o *objState) {
	for _, l := range o.late {
		l.m.SentAt = o.lateAt // a cut may have held it back since it was due (cut.go)
		rt.eng.Schedule(o.lateAt, l.kind, int32(l.node), int64(l.ref))
	}
	o.late = o.late[:0]
}

// departMsg puts m, in msgs slot ref, on the sender's interface now.
func (rt *Runtime) departMsg(m *Message, ref int32) {
	from := &rt.links[m.From]
	head, dur := rt.depart(from, m.From, m.To, m.SentAt, m.WireSize())
	m.outEnd = from.outFree
	rt.msgs.items[ref].xfer = dur
	rt.eng.Schedule(head, rt.kArrive, int32(m.To), int64(ref))
}

// onDepart: a message a handler sent at its end leaves now, unless its
// sender died or a rollback voided it meanwhile; either way it would be lost
// at delivery, and it must not hold the interface until then.
func (rt *Runtime) onDepart(ev Event) {
	m := rt.msgs.items[ev.J].m
	if m == nil { // a cut took it back (cut.go)
		rt.msgs.take(int32(ev.J))
		return
	}
	// a failure bumps the incarnation, and transmit took none from a failed node
	dead := rt.links[m.From].inc != m.fromInc
	if !dead && (m.Control || m.Epoch == rt.epoch) {
		rt.departMsg(m, int32(ev.J))
		return
	}
	rt.msgs.take(int32(ev.J))
	rt.stats.LostMsgs++
	if !m.Control && m.Epoch == rt.epoch {
		rt.inFlight--
		rt.checkQuiet()
	}
}

// depart occupies the outgoing side of node a's interface (from) with wire
// bytes for node b handed over at sentAt, and returns when their head
// reaches b and their time on each interface. from.outFree is then when the
// last byte left. With a topology, the transfer goes at the pace of the
// slowest of its interfaces and links, and its head waits on the way for a
// lane of each link it takes as it leaves.
func (rt *Runtime) depart(from *link, a, b NodeID, sentAt Time, wire int64) (head, dur Time) {
	start := max(sentAt, from.outFree)
	dur = rt.bounded(TransferTime(wire, rt.cfg.Bandwidth), "network.bandwidth and the workload's message sizes")
	lat := rt.cfg.Latency
	if t := rt.cfg.Topology; t != nil {
		lat += t.ExtraLatency(a, b)
		// the pace of every link on the way, then the ones taken now
		rt.route = t.Route(a, b, true, rt.route[:0])
		dur = max(dur, rt.pace(rt.route, wire))
		rt.route = t.Route(a, b, false, rt.route[:0])
		dur = max(dur, rt.pace(rt.route, wire))
		from.outFree = start.plus(dur)
		head = rt.reserve(rt.route, start, dur).plus(lat)
	} else {
		from.outFree = start.plus(dur)
		head = start.plus(lat)
	}
	if rt.jitter != nil {
		head = rt.jitter.delay(a, head)
	}
	return head, dur
}

// jitter is Config.Jitter's random delay: one stream for the run, drawn in
// the order messages leave their senders, so the draws a message gets depend
// on the messages that left before it (a protocol's own messages shift the
// application's: runs of two protocols share their failures, not their
// jitter).
type jitter struct {
	mean float64
	rng  *rand.Rand
	last []Time // per sending node: the latest head it has sent
}

// delay returns when a head from node a due at head arrives: after an
// exponential delay, and not before the heads node a sent earlier, so that
// messages between two nodes stay in order, as MPI's do.
func (j *jitter) delay(a NodeID, head Time) Time {
	d := min(j.rng.ExpFloat64()*j.mean, float64(MaxDuration)) // the tail of a long mean passes int64
	head = max(head.plus(Time(d)), j.last[a])
	j.last[a] = head
	return head
}

// pace is the longest time wire bytes take on the links of path.
func (rt *Runtime) pace(path []int32, wire int64) Time {
	var d Time
	for _, l := range path {
		d = max(d, rt.bounded(TransferTime(wire, rt.shared[l].Bandwidth), "network.bandwidth, the topology's keys and the workload's message sizes"))
	}
	return d
}

// reserve takes a lane of each link of path in turn, each for dur from the
// first instant it is free at or after the message entered the link
// before (start for the first), and returns when the message entered the
// last one. A lane is free from the end of the last message it carries (a
// FIFO, like the interfaces), so of the lanes free when the message comes
// it takes the one that became free last, keeping those idle longer for
// messages that can use them earlier; when none is free, the one free
// first.
func (rt *Runtime) reserve(path []int32, start, dur Time) Time {
	for _, l := range path {
		lanes := rt.laneFree[rt.laneOf[l]:rt.laneOf[l+1]]
		k := -1
		for j, free := range lanes {
			if free <= start && (k < 0 || free > lanes[k]) {
				k = j
			}
		}
		if k < 0 {
			k = 0
			for j, free := range lanes {
				if free < lanes[k] {
					k = j
				}
			}
			start = lanes[k]
		}
		lanes[k] = start.plus(dur)
	}
	return start
}

// Latency is the time the head of a message takes from node a to node b:
// Config.Latency plus the topology's extra hops, and 0 within a node.
func (rt *Runtime) Latency(a, b NodeID) Time {
	switch t := rt.cfg.Topology; {
	case a == b:
		return 0
	case t != nil:
		return rt.cfg.Latency + t.ExtraLatency(a, b)
	}
	return rt.cfg.Latency
}

// receive occupies the incoming side of node n, whose incarnation was inc at
// transmission, with a message from node from whose head arrives now and
// which takes dur on the interface, and returns when its last byte is in.
// With a topology, the message also waits for a lane of each link it takes
// as it arrives.
func (rt *Runtime) receive(from, n NodeID, inc uint32, dur Time) Time {
	to := &rt.links[n]
	start := max(rt.eng.now, to.inFree)
	if t := rt.cfg.Topology; t != nil {
		rt.route = t.Route(from, n, true, rt.route[:0])
		start = rt.reserve(rt.route, start, dur)
	}
	end := start.plus(dur)
	if to.inc == inc {
		to.inFree = end // a dead interface is not occupied
	}
	return end
}

// lostInTransit applies the fail-stop rules to a message delivered now: it
// is lost if its receiver died after transmission or is down, or its sender
// died before the last byte left.
func (rt *Runtime) lostInTransit(from, to NodeID, fromInc, toInc uint32, outEnd Time) bool {
	f, t := &rt.links[from], &rt.links[to]
	return t.inc != toInc || t.state == nodeFailed ||
		(f.inc != fromInc && rt.nodes[from].failAt[fromInc] < outEnd)
}

// onArrive: the head of a message reached its receiver's interface.
func (rt *Runtime) onArrive(ev Event) {
	a := &rt.msgs.items[ev.J]
	rt.eng.Schedule(rt.receive(a.from, NodeID(ev.I), a.toInc, a.xfer), rt.kDeliver, ev.I, ev.J)
}

// onDeliver: the whole message is at its receiver. Fail-stop rules apply here:
// a message whose sender died before its last byte left, or whose receiver died
// before it arrived, is lost.
func (rt *Runtime) onDeliver(ev Event) {
	m := rt.msgs.take(int32(ev.J)).m
	if m == nil { // a message within a node, taken back by a cut before it left
		return
	}
	lost := rt.lostInTransit(m.From, m.To, m.fromInc, m.toInc, m.outEnd)
	if m.Control {
		if lost {
			rt.stats.LostMsgs++
			return
		}
		if rt.tracer != nil {
			rt.tracer.Message(m, rt.eng.now)
		}
		rt.proto.OnControl(m)
		return
	}
	if m.Epoch != rt.epoch {
		rt.stats.LostMsgs++ // sent before a rollback: void (and no longer counted in flight)
		return
	}
	rt.inFlight--
	if lost {
		rt.stats.LostMsgs++
		rt.checkQuiet()
		return
	}
	if rt.place[m.Dst] != m.To && !rt.lost[m.Dst] {
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

// Transfer moves size bytes from node from to node to over the network (a
// checkpoint to a buddy, a migration) and calls done(true) when they have
// arrived, done(false) if either end failed first.
func (rt *Runtime) Transfer(from, to NodeID, size int64, tag int32, done func(ok bool)) {
	rt.TransferTo(from, to, size, tag, doneFunc(done))
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

// xfer is a protocol transfer in flight: all its arrival and delivery read.
// Transfers are most of the traffic of a logging protocol (three per
// application message for mlog), and a record of their own, in a slab of
// values, makes their delivery read one record where a Message would cost a
// slot and the message, each a cache miss with tens of thousands in flight.
type xfer struct {
	from, to       NodeID
	fromInc, toInc uint32 // the ends' incarnations at transmission
	tag            int32
	fromFailed     bool // sent by a failed node: lost
	size           int64
	sentAt, outEnd Time
	dur            Time // time on each interface
	done           Completion
}

// TransferTo is Transfer reporting to c. A protocol that makes a transfer per
// application message passes a record it allocates anyway (a pointer
// implementing Completion) instead of a closure per step. The transfer is
// protocol traffic with the timing and fail-stop rules of a control message
// of size bytes.
func (rt *Runtime) TransferTo(from, to NodeID, size int64, tag int32, c Completion) {
	rt.stats.ExtraMsgs++
	rt.stats.ExtraBytes += size
	now := rt.eng.now
	f := &rt.links[from]
	x := xfer{from: from, to: to, fromInc: f.inc, toInc: rt.links[to].inc, tag: tag, size: size, sentAt: now, outEnd: now, done: c}
	if f.state == nodeFailed {
		// A failed node sends nothing (its incarnation is already the
		// next one, which the loss rules would take for the sender's):
		// the transfer is reported lost, from an event of its own.
		x.fromFailed = true
		rt.eng.Schedule(now, rt.kXferDeliver, int32(to), int64(rt.xfers.put(x)))
		return
	}
	if from == to {
		rt.eng.Schedule(now, rt.kXferDeliver, int32(to), int64(rt.xfers.put(x)))
		return
	}
	head, dur := rt.depart(f, from, to, now, size)
	x.outEnd, x.dur = f.outFree, dur
	rt.eng.Schedule(head, rt.kXferArrive, int32(to), int64(rt.xfers.put(x)))
}

// onXferArrive: the head of a transfer reached its receiver's interface.
func (rt *Runtime) onXferArrive(ev Event) {
	x := rt.xfers.get(int32(ev.J))
	rt.eng.Schedule(rt.receive(x.from, NodeID(ev.I), x.toInc, x.dur), rt.kXferDeliver, ev.I, ev.J)
}

// onXferDeliver: the whole transfer is at its receiver, or lost. The slot is
// free before the completion runs, for the transfers it starts.
func (rt *Runtime) onXferDeliver(ev Event) {
	x := rt.xfers.take(int32(ev.J))
	ok := !x.fromFailed && !rt.lostInTransit(x.from, x.to, x.fromInc, x.toInc, x.outEnd)
	if !ok {
		rt.stats.LostMsgs++
	} else if rt.tracer != nil {
		rt.tracer.Message(&Message{Src: None, Dst: None, From: x.from, To: x.to, Tag: x.tag, Size: x.size, Control: true, SentAt: x.sentAt}, rt.eng.now)
	}
	x.done.TransferDone(x.tag, ok)
}

// InFlight returns the application messages of the current epoch that have been
// transmitted and not yet delivered, in transmission order. A checkpoint that
// does not drain the network records them as channel state.
func (rt *Runtime) InFlight() []*Message {
	held := map[int32]bool{} // a cut handler's, part of its object's state (cut.go)
	for i := range rt.objs {
		o := &rt.objs[i]
		for _, l := range o.late {
			if o.running {
				l.m.SentAt = o.lateAt // a resumed cut's may date from the cut handler's end
			} else if o.cut != nil {
				held[l.ref] = true
			}
		}
	}
	var out []*Message
	for i, r := range rt.msgs.items { // freed slots are zero
		if m := r.m; m != nil && !m.Control && m.Epoch == rt.epoch && !held[int32(i)] {
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
