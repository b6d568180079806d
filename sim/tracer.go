package sim

// Tracer receives the timeline of a run, for a per-node trace (package trace
// writes it in the Chrome/Perfetto format). Tracing is off unless SetTracer is
// called; the hot path then only tests a nil interface.
type Tracer interface {
	// Task is CPU work on node n from start to end: a handler of object obj, or
	// protocol work (obj = None) named what.
	Task(n NodeID, obj ObjID, start, end Time, what string)
	// Message is a message delivered at time delivered (it was sent at m.SentAt).
	Message(m *Message, delivered Time)
	// Instant is a point event on node n (a failure, a detection).
	Instant(n NodeID, at Time, what string)
}

// SetTracer records the run's timeline into t.
func (rt *Runtime) SetTracer(t Tracer) { rt.tracer = t }

// Span lets a protocol add a span of its own to the trace (a checkpoint, a
// recovery) on node n; it does nothing when the run is not traced.
func (rt *Runtime) Span(n NodeID, start, end Time, what string) {
	if rt.tracer != nil {
		rt.tracer.Task(n, None, start, end, what)
	}
}
