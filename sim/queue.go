package sim

// Kind selects the handler of an event. Kinds are allocated by Engine.NewKind so
// that each layer (cluster, runtime, protocol) owns its own without a global table.
type Kind uint32

// Event is one entry of the event queue. It is a plain value: no interface, no
// pointer, so the queue holds events inline and scheduling never allocates.
// The meaning of I and J belongs to the handler of Kind (typically an index into
// a table the handler owns, and a generation number to detect stale events).
type Event struct {
	At   Time
	seq  uint64
	Kind Kind
	I    int32
	J    int64
}

// before orders events by time, then by scheduling order, so that ties resolve
// the same way in every run.
func (e *Event) before(o *Event) bool {
	if e.At != o.At {
		return e.At < o.At
	}
	return e.seq < o.seq
}

// queue is a 4-ary min-heap of events. A 4-ary heap halves the depth of a binary
// heap and keeps a node's children in one cache line pair.
type queue struct {
	ev []Event
}

func (q *queue) len() int { return len(q.ev) }

func (q *queue) push(e Event) {
	q.ev = append(q.ev, e)
	q.up(len(q.ev) - 1)
}

// replaceTop overwrites the minimum with e and restores the heap. Handlers that
// schedule one event per event (the common case) pay one sift instead of two.
func (q *queue) replaceTop(e Event) {
	q.ev[0] = e
	q.down(0)
}

func (q *queue) popTop() {
	n := len(q.ev) - 1
	q.ev[0] = q.ev[n]
	q.ev = q.ev[:n]
	if n > 0 {
		q.down(0)
	}
}

func (q *queue) up(i int) {
	ev := q.ev
	e := ev[i]
	for i > 0 {
		p := (i - 1) >> 2
		if !e.before(&ev[p]) {
			break
		}
		ev[i] = ev[p]
		i = p
	}
	ev[i] = e
}

func (q *queue) down(i int) {
	// Floyd's bottom-up variant: walk the path of smallest children down to a
	// leaf without comparing against e, then climb back to e's place. A newly
	// scheduled event is usually later than most of the queue, so it belongs near
	// the leaves and the climb is short: about one comparison saved per level.
	ev := q.ev
	n := len(ev)
	e := ev[i]
	start := i
	for {
		c := i<<2 + 1
		if c+3 < n {
			m := c
			if ev[c+1].before(&ev[m]) {
				m = c + 1
			}
			if ev[c+2].before(&ev[m]) {
				m = c + 2
			}
			if ev[c+3].before(&ev[m]) {
				m = c + 3
			}
			ev[i] = ev[m]
			i = m
			continue
		}
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < n; k++ {
			if ev[k].before(&ev[m]) {
				m = k
			}
		}
		ev[i] = ev[m]
		i = m
		break
	}
	for i > start {
		p := (i - 1) >> 2
		if !e.before(&ev[p]) {
			break
		}
		ev[i] = ev[p]
		i = p
	}
	ev[i] = e
}
