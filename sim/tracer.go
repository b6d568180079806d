package sim

import "slices"

// Tracer receives the timeline of a run, for a per-node trace (package trace
// writes it in the Chrome/Perfetto format). Tracing is off unless SetTracer is
// called; the hot path then only tests a nil interface.
type Tracer interface {
	// Task is CPU work on node n from start to end: a handler of object obj, or
	// protocol work (obj = None) named what. It is reported when it ends, or
	// when it is cut short (see SetTracer).
	Task(n NodeID, obj ObjID, start, end Time, what string)
	// Message is a message delivered at time delivered (it was sent at m.SentAt).
	Message(m *Message, delivered Time)
	// Instant is a point event on node n (a failure, a detection).
	Instant(n NodeID, at Time, what string)
}

// SetTracer records the run's timeline into t. Tasks are reported as they
// end: a handler or protocol work cut short by its node's failure, by a
// restore or re-creation of its object, or by the end of the run, ends there
// in the trace.
func (rt *Runtime) SetTracer(t Tracer) {
	rt.tracer = t
	rt.traceStart = make([]Time, len(rt.objs))
}

// traceCompute reports object id's running handler, ending at end.
func (rt *Runtime) traceCompute(id ObjID, end Time) {
	rt.tracer.Task(rt.objs[id].runNode, id, rt.traceStart[id], end, "compute")
}

// traceWorkStarted notes that the protocol work in task slot i starts now.
func (rt *Runtime) traceWorkStarted(i int32) {
	for int(i) >= len(rt.traceWorkStart) {
		rt.traceWorkStart = append(rt.traceWorkStart, 0)
	}
	rt.traceWorkStart[i] = rt.eng.now
}

// traceTask reports task t, taken from slot i, which ends at end unless its
// node failed first (then its work ended with the failure). An object's
// handler aborted before (its runGen moved on) was reported then.
func (rt *Runtime) traceTask(i int32, t *task, end Time) {
	if rt.links[t.node].inc != t.inc {
		end = rt.nodes[t.node].failAt[t.inc]
	}
	if t.obj == None {
		rt.tracer.Task(t.node, None, rt.traceWorkStart[i], end, "protocol work")
	} else if o := &rt.objs[t.obj]; o.running && o.runGen == t.gen {
		rt.traceCompute(t.obj, end)
	}
}

// traceEnd reports the tasks still on a core when the run ends (at end), cut
// there.
func (rt *Runtime) traceEnd(end Time) {
	free := make(map[int32]bool, len(rt.tasks.free))
	for _, i := range rt.tasks.free {
		free[i] = true
	}
	for i := range rt.tasks.items {
		if !free[int32(i)] {
			rt.traceTask(int32(i), &rt.tasks.items[i], end)
		}
	}
}

// Span lets a protocol add a span of its own to the trace (a checkpoint, a
// recovery) on node n; it does nothing when the run is not traced. A span
// ends at n's failure if n failed before end, and is left out if n was down
// at start: a collective span drawn on every slot does not go on in a
// member that failed in it (a replica, whose twin carried the job on).
func (rt *Runtime) Span(n NodeID, start, end Time, what string) {
	if rt.tracer == nil {
		return
	}
	// incarnation k of n ended at failAt[k]; even ones are up
	fail := rt.nodes[n].failAt
	k, _ := slices.BinarySearch(fail, start+1) // the incarnations ended by start
	if k%2 == 1 {
		return
	}
	if k < len(fail) {
		end = min(end, fail[k])
	}
	rt.tracer.Task(n, None, start, end, what)
}
