package sim

import "unsafe"

// The runtime's prefetchers (Engine.SetPrefetcher) follow, level by level,
// what the handlers of its most frequent events read. They only read the
// tables, bounds-checked, and a stale or freed slot only wastes a prefetch:
// results never depend on them.

// setPrefetchers registers each prefetcher with the number of levels it
// uses (its level 0, 1 and 2 below), for which alone the engine calls it.
func (rt *Runtime) setPrefetchers() {
	e := rt.eng
	e.SetPrefetcher(rt.kArrive, 1, rt.prefetchMsgSlot)
	e.SetPrefetcher(rt.kDepart, 2, rt.prefetchDepart)
	e.SetPrefetcher(rt.kDeliver, 3, rt.prefetchMsg)
	e.SetPrefetcher(rt.kXferArrive, 1, rt.prefetchXferRecord)
	e.SetPrefetcher(rt.kXferDeliver, 2, rt.prefetchXfer)
	e.SetPrefetcher(rt.kCall, 2, rt.prefetchCall)
	e.SetPrefetcher(rt.kCoreDone, 3, rt.prefetchTask)
}

func addr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// prefetchLines prefetches the lines of a record of n bytes at a.
func prefetchLines(a uintptr, n uintptr) {
	for off := uintptr(0); off < n; off += 64 {
		prefetch(a + off)
	}
}

// data is the pointer an interface value holds (its second word).
func data[I any](v *I) uintptr { return (*[2]uintptr)(unsafe.Pointer(v))[1] }

// funcData is the closure record a func value points to.
func funcData(f *func()) uintptr { return *(*uintptr)(unsafe.Pointer(f)) }

// record is record j of items for the levels past 0. At level 0 it
// prefetches the record and returns nil: reading it then would be the very
// load the prefetch is there to hide.
func record[T any](items []T, j int64, level int) *T {
	if int(j) >= len(items) {
		return nil
	}
	r := &items[j]
	if level == 0 {
		prefetchLines(addr(r), unsafe.Sizeof(*r))
		return nil
	}
	return r
}

// prefetchRecord prefetches record j of items at level 0 and, at level 1,
// the record next reads from it points to (nil: none).
func prefetchRecord[T any](items []T, j int64, level int, next func(*T) uintptr) {
	if r := record(items, j, level); r != nil && level == 1 && next != nil {
		if p := next(r); p != 0 {
			prefetch(p)
		}
	}
}

// prefetchMsgSlot: a message's slot, all its arrival reads.
func (rt *Runtime) prefetchMsgSlot(_ int32, j int64, level int) {
	prefetchRecord(rt.msgs.items, j, level, nil)
}

// prefetchDepart: a departing message's slot and its sender's network
// record, then the message.
func (rt *Runtime) prefetchDepart(from int32, j int64, level int) {
	r := record(rt.msgs.items, j, level)
	if level == 0 && int(from) < len(rt.links) && from >= 0 {
		prefetch(addr(&rt.links[from]))
	}
	if r != nil && level == 1 && r.m != nil {
		prefetchLines(addr(r.m), unsafe.Sizeof(*r.m))
	}
}

// prefetchXferRecord: a transfer's record, all its arrival reads.
func (rt *Runtime) prefetchXferRecord(_ int32, j int64, level int) {
	prefetchRecord(rt.xfers.items, j, level, nil)
}

// prefetchMsg: a delivered message's slot, the message, then its
// receiver's object record.
func (rt *Runtime) prefetchMsg(_ int32, j int64, level int) {
	r := record(rt.msgs.items, j, level)
	if r == nil {
		return
	}
	m := r.m
	if m == nil {
		return
	}
	if level == 1 {
		prefetchLines(addr(m), unsafe.Sizeof(*m))
		return
	}
	if !m.Control && int(m.Dst) < len(rt.objs) && m.Dst >= 0 {
		prefetchLines(addr(&rt.objs[m.Dst]), unsafe.Sizeof(rt.objs[0]))
	}
}

// prefetchXfer: a delivered transfer's record, then the record its
// completion reports to.
func (rt *Runtime) prefetchXfer(_ int32, j int64, level int) {
	prefetchRecord(rt.xfers.items, j, level, func(x *xfer) uintptr { return data(&x.done) })
}

// prefetchCall: a timed call's record, then its closure.
func (rt *Runtime) prefetchCall(_ int32, j int64, level int) {
	prefetchRecord(rt.calls.items, j, level, func(c *call) uintptr { return funcData(&c.fn) })
}

// prefetchTask: a finished task's record, then its object's record and
// node, then the object.
func (rt *Runtime) prefetchTask(_ int32, j int64, level int) {
	t := record(rt.tasks.items, j, level)
	if t == nil || t.obj < 0 || int(t.obj) >= len(rt.objs) {
		return // at level 0, or protocol work
	}
	o := &rt.objs[t.obj]
	if level == 1 {
		prefetchLines(addr(o), unsafe.Sizeof(*o))
		if int(t.node) < len(rt.nodes) && t.node >= 0 {
			prefetch(addr(&rt.nodes[t.node]))
		}
		return
	}
	if p := data(&o.obj); p != 0 {
		prefetch(p)
	}
}

// prefetchInboxes prefetches the first messages in the inboxes of the
// objects queued on node n: the ones its next kick dispatches.
func (rt *Runtime) prefetchInboxes(n NodeID) {
	q := &rt.nodes[n].ready
	for _, id := range q.items[q.head:] {
		in := &rt.objs[id].inbox
		for _, m := range in.items[in.head:min(len(in.items), in.head+inboxPrefetch)] {
			prefetchLines(addr(m), unsafe.Sizeof(*m))
		}
	}
}

// inboxPrefetch is how many of an inbox's messages prefetchInboxes warms: a
// stencil block's six halos.
const inboxPrefetch = 6
