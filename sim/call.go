package sim

// call is a deferred action: a protocol callback bound to the node incarnation
// it was made for, so it is skipped if that node has failed since.
type call struct {
	fn   func()
	done func(bool)
	node NodeID
	inc  uint32
	size int64
	tag  int32
	io   uint32 // a storage operation: its node's storage epoch when issued
	arg  int64
}

// At runs fn at time t (not before now), whatever happens to any node.
func (rt *Runtime) At(t Time, fn func()) {
	c := rt.calls.put(call{fn: fn, node: None})
	rt.eng.Schedule(t, rt.kCall, 0, int64(c))
}

// SetTimer fires Protocol.OnTimer(n, tag, arg) at time t, unless node n has
// failed by then (a timer lives in its node's memory).
func (rt *Runtime) SetTimer(n NodeID, t Time, tag int32, arg int64) {
	c := rt.calls.put(call{node: n, inc: rt.links[n].inc, tag: tag, arg: arg})
	rt.eng.Schedule(t, rt.kCall, 0, int64(c))
}

func (rt *Runtime) onCall(ev Event) {
	c := rt.calls.take(int32(ev.J))
	if c.node == None {
		c.fn()
		return
	}
	if rt.links[c.node].inc != c.inc {
		return
	}
	rt.proto.OnTimer(c.node, c.tag, c.arg)
}
