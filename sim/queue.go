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

// entry is an event as the queue keeps it: 24 bytes where an Event takes 32,
// so that a quarter more of the heap fits in each cache line and level. The
// key packs the scheduling sequence number above the kind, so that comparing
// keys compares sequence numbers (they are unique). J is kept in 32 bits; an
// event whose J does not fit, or whose kind does not fit in kindBits, is
// stored with kind bigKind and j indexing the engine's table of such events
// (the storage layer's PFS starts are the only ones the runtime makes).
type entry struct {
	at  Time
	key uint64 // seq<<kindBits | kind
	i   int32
	j   int32
}

const (
	kindBits = 16
	kindMask = 1<<kindBits - 1
	bigKind  = kindMask // the kind and J are in Engine.big
	maxSeq   = 1<<(64-kindBits) - 1
)

// bigArgs are the kind and J of an event that does not fit an entry.
type bigArgs struct {
	k Kind
	j int64
}

// before orders events by time, then by scheduling order, so that ties resolve
// the same way in every run.
func (e *entry) before(o *entry) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	return e.key < o.key
}

// queue holds the pending events in (At, seq) order: a 4-ary min-heap, plus
// runs of events that share a time.
//
// A bulk-synchronous model schedules its events at a few instants: when every
// node of a 10,000-node stencil ends its compute at once, its faces leave
// together and their heads arrive one latency later, so some 50,000 pending
// events share about 20 distinct times. Events with equal times run in
// scheduling order, so an event whose time already has an entry in the heap
// can wait in a FIFO (a run) behind that entry instead of being sifted through
// the heap: the heap holds one entry per run, and when that entry is taken the
// run's next event replaces it at the top without a comparison. It is the new
// minimum: every other event at that time was scheduled later than the run's
// entry (an earlier one would have preceded the entry), and, the run being
// open, it either joined the run behind its events or (runs switched off, see
// below) went to the heap with a larger seq. The order is exactly the heap's;
// only the work changes.
//
// Runs live in a small table indexed by a hash of their time. A run is opened
// by the heap entry that finds its slot free (or holding a run with nothing
// queued, which it takes over: that run's entry then pops as a plain event),
// and closed when its last event is taken. An event whose slot holds another
// time's non-empty run goes to the heap as usual. Queued events are kept in
// chunks from a shared pool, so memory follows the events pending and steady
// state does not allocate.
//
// Where few events share a time (PHOLD: one in ten), the table costs more than
// it saves, so the queue watches the share of events that join a run and
// switches runs off when it is low, trying again now and then. Switching on
// waits until every run is closed: an event sent to the heap while runs were
// off must not be overtaken by a later one joining a run at its time.
type queue struct {
	ev   []entry
	open int // run slots in use
	// the switch: runs are on when off == 0; seen and joined count the
	// events scheduled and those that joined a run in the current window
	off, seen, joined int

	inRuns    int           // events waiting in runs, not in ev
	runs      *[numRuns]run // indexed by runSlot; apart, to keep the engine's fields in one cache line
	chunks    []runChunk    // chunks[0] is unused: chunk 0 means none
	freeChunk int32         // first free chunk, linked through next
}

const (
	runBits  = 8 // the run table has 2^runBits slots: small enough for the L1 cache
	numRuns  = 1 << runBits
	chunkLen = 64 // events a chunk holds

	runWindow = 4096 // events scheduled between two looks at the share that joined runs
	runOffFor = 16   // windows runs stay off when fewer than 1 in 4 events joined
)

// run is the FIFO of events at time at queued behind the heap entry whose key
// is head. head == 0 marks a free slot (no key is 0: seq numbers start at 1).
// The events are read from chunk first at rd and written to chunk last at wr;
// first == 0 when none is queued.
type run struct {
	at          Time
	head        uint64
	first, last int32
	rd, wr      int32
}

// runEvent is an entry waiting in a run, which holds its time.
type runEvent struct {
	key  uint64
	i, j int32
}

// runChunk is a piece of a run's FIFO.
type runChunk struct {
	ev   [chunkLen]runEvent
	next int32 // the run's next chunk, or the next free chunk
}

// runSlot hashes a time to its run slot (Fibonacci hashing).
func runSlot(t Time) uint64 { return (uint64(t) * 0x9e3779b97f4a7c15) >> (64 - runBits) }

func (q *queue) len() int { return len(q.ev) - root }

// join queues e behind the open run at its time and reports true, or reports
// false when e must go into the heap; then, if it can, it opens a run headed
// by e. The caller skips it while runs are off, calling tick instead.
func (q *queue) join(e entry) bool {
	q.seen++
	if q.seen == runWindow {
		q.review()
	}
	r := &q.runs[runSlot(e.at)]
	if r.head != 0 {
		if r.at == e.at {
			q.append(r, e)
			return true
		}
		if r.first != 0 {
			return false // the slot's run has events queued: e is a plain heap entry
		}
	} else {
		q.open++
	}
	r.at, r.head = e.at, e.key
	return false
}

// tick counts an event scheduled while runs are off.
func (q *queue) tick() {
	q.seen++
	if q.seen == runWindow {
		q.offWindow()
	}
}

// offWindow ends a window with runs off, and switches them on again when the
// time has come and no run is left open.
func (q *queue) offWindow() {
	q.seen = 0
	if q.off > 1 || q.open == 0 {
		q.off--
	}
}

// review ends a window with runs on: it switches them off if too few events
// joined one.
func (q *queue) review() {
	if q.joined < runWindow/4 {
		q.off = runOffFor
	}
	q.seen, q.joined = 0, 0
}

func (q *queue) append(r *run, e entry) {
	if r.first == 0 || r.wr == chunkLen {
		c := q.freeChunk
		if c != 0 {
			q.freeChunk = q.chunks[c].next
		} else {
			if len(q.chunks) == 0 {
				q.chunks = append(q.chunks, runChunk{})
			}
			c = int32(len(q.chunks))
			q.chunks = append(q.chunks, runChunk{})
		}
		q.chunks[c].next = 0
		if r.first == 0 {
			r.first, r.rd = c, 0
		} else {
			q.chunks[r.last].next = c
		}
		r.last, r.wr = c, 0
	}
	q.chunks[r.last].ev[r.wr] = runEvent{key: e.key, i: e.i, j: e.j}
	r.wr++
	q.inRuns++
	q.joined++
}

// take removes the minimum event, which the caller has read from ev[root] and is
// about to run, and reports whether the next event of its run took its place
// (no sift needed). If not, the top slot is free: the caller must fill it
// (replaceTop) or pop it (popTop). The caller skips it when no run is open.
func (q *queue) take() bool {
	top := &q.ev[root]
	r := &q.runs[runSlot(top.at)]
	if r.head != top.key {
		return false
	}
	if r.first == 0 {
		r.head = 0 // the run is over
		q.open--
		return false
	}
	c := &q.chunks[r.first]
	x := &c.ev[r.rd]
	top.key, top.i, top.j = x.key, x.i, x.j
	r.head = x.key
	r.rd++
	q.inRuns--
	if r.first == r.last && r.rd == r.wr {
		q.freeChunkOf(r.first)
		r.first, r.last = 0, 0
	} else if r.rd == chunkLen {
		f := r.first
		r.first, r.rd = c.next, 0
		q.freeChunkOf(f)
	}
	return true
}

func (q *queue) freeChunkOf(c int32) {
	q.chunks[c].next = q.freeChunk
	q.freeChunk = c
}

// The heap starts at ev[root], after root unused slots, so that the four
// children of a node, at 4i-8 to 4i-5, start at a multiple of four entries:
// 96 bytes that span two cache lines of an aligned array, where a group
// starting at 4i+1 of a heap at ev[0] spans three every other time. The
// sift-down reads a group per level.
const root = 3

func (q *queue) push(e entry) {
	q.ev = append(q.ev, e)
	q.up(len(q.ev) - 1)
}

// replaceTop overwrites the minimum with e and restores the heap. Handlers that
// schedule one event per event (the common case) pay one sift instead of two.
func (q *queue) replaceTop(e entry) {
	q.ev[root] = e
	q.down(root)
}

func (q *queue) popTop() {
	n := len(q.ev) - 1
	q.ev[root] = q.ev[n]
	q.ev = q.ev[:n]
	if n > root {
		q.down(root)
	}
}

func (q *queue) up(i int) {
	ev := q.ev
	e := ev[i]
	for i > root {
		p := (i + 8) >> 2
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
	//
	// The exception is an event that goes right back to the top: a handler
	// that schedules its own follow-up a nanosecond later (a message's
	// delivery after its head arrived, a 32-byte control message's) would walk
	// to a leaf and climb all the way back. One comparison with the smallest
	// child at the first level catches it.
	ev := q.ev
	n := len(ev)
	e := ev[i]
	start := i
	first := true
	for {
		c := i<<2 - 8
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
			if first {
				if e.before(&ev[m]) {
					return // e is already in place
				}
				first = false
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
		p := (i + 8) >> 2
		if !e.before(&ev[p]) {
			break
		}
		ev[i] = ev[p]
		i = p
	}
	ev[i] = e
}
