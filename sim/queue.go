package sim

import "math/bits"

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
// so that a quarter more of the queue fits in each cache line. The key packs
// the scheduling sequence number above the kind. J is kept in 32 bits; an
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

// queue holds the pending events in (At, seq) order: a radix heap, which the
// engine can use because simulated time never goes back (every event is
// scheduled at or after the last one taken).
//
// Bucket b > 0 holds the events whose time differs from last, the time of the
// last event taken, first in bit b-1; bucket 0 holds those at last itself, in
// scheduling order. Scheduling appends to a bucket. Taking reads bucket 0;
// when it is empty, the lowest non-empty bucket is emptied: its earliest time
// becomes last and its events move to lower buckets (those at last to bucket
// 0). An event moves at most once per bit of its distance to now, and every
// move is a sequential append: no comparisons along a heap path and no cache
// miss per level, which a heap of tens of thousands of events pays at every
// step. (It replaced a 4-ary heap with FIFO runs for equal times: PHOLD went
// from 10 to 17-18 M events/s, and ftsim run scenarios/exascale.toml from
// 564 to 471 s of CPU, with the same results.)
//
// Ties keep scheduling order: events with equal times always share a bucket
// (the bucket depends on the time and last only), scheduling appends, and a
// move keeps the order of the bucket it empties; so within bucket 0, which
// holds one time, order is scheduling order.
type queue struct {
	last    Time
	head    int         // next event of bucket 0
	n       int         // events pending
	full    uint64      // bit b-1 set when bucket b > 0 is not empty
	buckets [65][]entry // indexed by bits.Len64(at ^ last)
	// spare holds the arrays of buckets emptied by refill, for buckets that
	// fill again: a burst of events that moves down through twenty buckets
	// reuses two arrays instead of leaving one of its size in each.
	spare [][]entry
}

func (q *queue) len() int { return q.n }

// push adds e, which must not be earlier than the last event taken.
func (q *queue) push(e entry) {
	b := bits.Len64(uint64(e.at ^ q.last))
	if b > 0 {
		q.full |= 1 << (b - 1)
	}
	q.add(b, e)
	q.n++
}

func (q *queue) add(b int, e entry) {
	if cap(q.buckets[b]) == 0 {
		if n := len(q.spare); n > 0 {
			q.buckets[b], q.spare = q.spare[n-1], q.spare[:n-1]
		}
	}
	q.buckets[b] = append(q.buckets[b], e)
}

// top returns the earliest event, which stays in the queue until pop. The
// queue must not be empty.
func (q *queue) top() *entry {
	if q.head == len(q.buckets[0]) {
		q.refill()
	}
	return &q.buckets[0][q.head]
}

// pop removes the event top returned.
func (q *queue) pop() {
	q.head++
	q.n--
}

// refill empties the lowest non-empty bucket into the lower ones, starting
// from its earliest time.
func (q *queue) refill() {
	q.buckets[0], q.head = q.buckets[0][:0], 0
	b := bits.TrailingZeros64(q.full) + 1
	src := q.buckets[b]
	q.buckets[b] = nil
	q.full &^= 1 << (b - 1)
	m := src[0].at
	for i := 1; i < len(src); i++ {
		m = min(m, src[i].at)
	}
	q.last = m
	for _, e := range src {
		nb := bits.Len64(uint64(e.at ^ m))
		if nb > 0 {
			q.full |= 1 << (nb - 1)
		}
		q.add(nb, e)
	}
	q.spare = append(q.spare, src[:0])
}
