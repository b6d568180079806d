package sim

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// Handler runs one event. It receives the event by value; anything it needs
// beyond I and J lives in tables owned by whoever allocated the Kind.
type Handler func(Event)

// Engine is the discrete-event core: a clock, an event queue and the handler
// table. It is single-threaded by design; parallelism comes from running many
// replications at once, each with its own Engine.
type Engine struct {
	// the fields every event reads come first, to share cache lines
	now      Time
	seq      uint64
	executed uint64
	stopped  bool
	handlers []Handler
	q        queue
	// prefetchers, per kind, warm the cache for events a few places ahead
	// in the current instant's run (see prefetchAhead); depth is how many
	// levels each uses (0: it has none)
	prefetchers []Prefetcher
	depth       []uint8
	prefetching bool // some kind has a prefetcher

	// events run at the current instant, and the count that stops Run
	// (SetStallLimit)
	atInstant, stallAt uint64
	stalled            bool

	names []string
	seed  uint64
	big   slab[bigArgs] // events whose kind or J do not fit an entry
}

// NewEngine returns an engine whose random streams derive from seed.
func NewEngine(seed uint64) *Engine {
	return &Engine{seed: seed, stallAt: math.MaxUint64}
}

// SetStallLimit makes Run stop once n events have run at one simulated
// instant (n = 0: never); Stalled then reports true.
func (e *Engine) SetStallLimit(n uint64) {
	e.stallAt = n
	if n == 0 {
		e.stallAt = math.MaxUint64
	}
}

// Stalled reports whether Run stopped on the stall limit: time stood still.
func (e *Engine) Stalled() bool { return e.stalled }

// NewKind registers a handler and returns the Kind that selects it.
func (e *Engine) NewKind(name string, h Handler) Kind {
	e.handlers = append(e.handlers, h)
	e.prefetchers = append(e.prefetchers, nil)
	e.depth = append(e.depth, 0)
	e.names = append(e.names, name)
	return Kind(len(e.handlers) - 1)
}

// Prefetcher warms the cache for an event of its kind, with arguments i and
// j, that will run soon. It only reads, and only issues prefetches for what
// the handler will touch: at level 0 the records i and j index; at level 1,
// called fewer events ahead, when those should be in cache, what they point
// to; at level 2, closer still, what those point to.
type Prefetcher func(i int32, j int64, level int)

// SetPrefetcher registers the prefetcher of kind k, which uses levels 0 to
// depth-1 (0 to prefetchLevels). It is not called for the levels past
// them: a call that does nothing is still an indirect call, whose target
// changes with the kinds of the events ahead, and half the calls were such
// under a logging protocol (most of its events are transfers, whose
// prefetchers use one level or two).
func (e *Engine) SetPrefetcher(k Kind, depth int, p Prefetcher) {
	e.prefetchers[k] = p
	e.depth[k] = uint8(max(0, min(depth, prefetchLevels)))
	e.prefetching = true
}

// Level l is prefetched prefetchStep*(prefetchLevels-l) events ahead. At
// 10,000 nodes an event's records are a trip to memory each (hundreds of
// megabytes live), taken one after the other; but the run of events at the
// current instant (a wave of halos, their transfers) is known in advance, so
// the trips for the coming ones can overlap with the current one's work.
const (
	prefetchLevels = 3
	prefetchStep   = 8
)

// prefetchAhead calls the prefetchers of the coming events of the current
// instant (bucket 0 of the queue) at each level's distance.
func (e *Engine) prefetchAhead() {
	b0 := e.q.buckets[0]
	for l := range prefetchLevels {
		h := e.q.head + prefetchStep*(prefetchLevels-l)
		if h >= len(b0) {
			continue
		}
		x := &b0[h]
		if k := x.key & kindMask; k != bigKind && l < int(e.depth[k]) {
			e.prefetchers[k](x.i, int64(x.j), l)
		}
	}
}

// Now is the current simulated time.
func (e *Engine) Now() Time { return e.now }

// Executed is the number of events run so far.
func (e *Engine) Executed() uint64 { return e.executed }

// Scheduled is the number of events scheduled so far.
func (e *Engine) Scheduled() uint64 { return e.seq }

// Pending is the number of events in the queue.
func (e *Engine) Pending() int {
	return e.q.len()
}

// Schedule adds an event of kind k at time at (not earlier than now) with the
// handler's arguments i and j.
func (e *Engine) Schedule(at Time, k Kind, i int32, j int64) {
	if at < e.now {
		at = e.now // a handler may compute a time in the past after rounding; never go back
	}
	e.seq++
	if e.seq > maxSeq {
		panic("sim: more than 2^48 events scheduled in one run")
	}
	x := entry{at: at, key: e.seq<<kindBits | uint64(k), i: i, j: int32(j)}
	if int64(x.j) != j || k >= bigKind {
		x.key = e.seq<<kindBits | bigKind
		x.j = e.big.put(bigArgs{k, j})
	}
	e.q.push(x)
}

// After schedules an event d after now, or at Never if that is later.
func (e *Engine) After(d Time, k Kind, i int32, j int64) {
	e.Schedule(e.now+min(d, Never-e.now), k, i, j)
}

// Stop ends Run after the current event.
func (e *Engine) Stop() { e.stopped = true }

// Run executes events in time order until the queue is empty, Stop is called,
// or the next event is later than until.
func (e *Engine) Run(until Time) {
	e.stopped = false
	for e.q.len() > 0 && !e.stopped {
		if e.q.top().at > until {
			break
		}
		e.step()
	}
}

// step runs the first event.
func (e *Engine) step() {
	x := e.q.top()
	if e.prefetching {
		e.prefetchAhead()
	}
	ev := Event{At: x.at, seq: x.key >> kindBits, Kind: Kind(x.key & kindMask), I: x.i, J: int64(x.j)}
	e.q.pop()
	if ev.Kind == bigKind {
		b := e.big.take(int32(ev.J))
		ev.Kind, ev.J = b.k, b.j
	}
	if ev.At != e.now {
		e.atInstant = 0
	}
	e.atInstant++
	if e.atInstant >= e.stallAt {
		e.stalled, e.stopped = true, true
	}
	e.now = ev.At
	e.executed++
	e.handlers[ev.Kind](ev)
}

// Stream returns an independent random stream named by (name, id). The stream
// depends only on the engine's seed, the name and the id, never on how many
// other streams exist or in which order they were created: the failure stream
// of node 7 is the same whatever protocol runs.
func (e *Engine) Stream(name string, id uint64) *rand.Rand {
	return NewStream(e.seed, name, id)
}

// NewStream is Engine.Stream without an engine.
func NewStream(seed uint64, name string, id uint64) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	a := splitmix(seed ^ h.Sum64())
	b := splitmix(a ^ splitmix(id+0x9e3779b97f4a7c15))
	return rand.New(rand.NewPCG(a, b))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
