package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The engine runs events in (time, scheduling order) whatever mix of ties and
// distinct times it is given: bursts of thousands of events at a few instants,
// PHOLD-like distinct times, many ties among close times, events far in the
// future (high buckets of the radix queue, emptied long after they were
// filled), and the transitions between them.
func TestQueueOrder(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		e := NewEngine(seed)
		r := rand.New(rand.NewPCG(seed, 7))
		type key struct {
			at  Time
			seq uint64
		}
		var last key
		scheduled, ran := 0, 0
		var k Kind
		sched := func(at Time, i int32) {
			scheduled++
			e.Schedule(at, k, i, int64(scheduled))
		}
		k = e.NewKind("t", func(ev Event) {
			ran++
			cur := key{ev.At, ev.seq}
			if cur.at < last.at || cur.at == last.at && cur.seq <= last.seq {
				t.Fatalf("seed %d: event (%d, %d) ran after (%d, %d)", seed, cur.at, cur.seq, last.at, last.seq)
			}
			last = cur
			if got, want := e.Pending(), scheduled-ran; got != want {
				t.Fatalf("seed %d: Pending() = %d, want %d", seed, got, want)
			}
			if scheduled > 400000 {
				return
			}
			phase := (scheduled / 50000) % 4
			switch {
			case phase == 3 && r.IntN(3) == 0: // far ahead, some at equal far times
				sched(e.Now()+Time(r.IntN(4))<<(20+r.IntN(30)), ev.I)
			case phase == 3:
				sched(e.Now()+Time(r.IntN(1000)), ev.I)
			case phase == 0: // distinct times
				sched(e.Now()+1+Time(r.ExpFloat64()*1000), ev.I)
			case phase == 1 && r.IntN(200) == 0: // a burst at a few instants
				for j := 0; j < 2000; j++ {
					sched(e.Now()+Time(r.IntN(4))*100, ev.I)
				}
			case phase == 1:
				sched(e.Now()+Time(r.IntN(3))*50, ev.I)
			default: // many ties among random times, some now
				sched(e.Now()+Time(r.IntN(20)), ev.I)
				if r.IntN(2) == 0 {
					sched(e.Now()+Time(r.IntN(20)), ev.I)
				}
			}
		})
		for i := 0; i < 1000; i++ {
			sched(Time(r.IntN(100)), int32(i))
		}
		e.Run(Never)
		if ran != scheduled {
			t.Fatalf("seed %d: %d events ran, %d scheduled", seed, ran, scheduled)
		}
	}
}

// Events carry any Kind and any J, including those that do not fit the
// queue's compact entries.
func TestEventArgs(t *testing.T) {
	e := NewEngine(1)
	var got []Event
	h := func(ev Event) { got = append(got, ev) }
	var k Kind
	for n := 0; n <= bigKind; n++ {
		k = e.NewKind("k", h)
	}
	if k < bigKind {
		t.Fatalf("last kind %d, want at least %d", k, bigKind)
	}
	want := []Event{
		{At: 5, Kind: 0, I: -7, J: math.MaxInt64},
		{At: 5, Kind: 1, I: math.MaxInt32, J: math.MinInt64},
		{At: 5, Kind: k, I: math.MinInt32, J: 3},
		{At: 6, Kind: k - 1, I: 1, J: 1 << 32},
		{At: 7, Kind: 2, I: 2, J: math.MinInt32},
		{At: 7, Kind: 3, I: 3, J: math.MaxInt32},
		{At: 8, Kind: 4, I: 4, J: -1},
	}
	for _, w := range want {
		e.Schedule(w.At, w.Kind, w.I, w.J)
	}
	e.Run(Never)
	if len(got) != len(want) {
		t.Fatalf("%d events ran, want %d", len(got), len(want))
	}
	for n := range want {
		g, w := got[n], want[n]
		if g.At != w.At || g.Kind != w.Kind || g.I != w.I || g.J != w.J {
			t.Errorf("event %d: got %+v, want %+v", n, g, w)
		}
	}
	if len(e.big.items) != len(e.big.free) {
		t.Errorf("%d big events left over", len(e.big.items)-len(e.big.free))
	}
}

// A node's ready queue keeps its first four objects in the node's own record
// (readyBuf), in FIFO order, and moves out only for a fifth.
func TestReadyQueueInTheNode(t *testing.T) {
	rt, err := New(testConfig(2), idle(2), &recordProto{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rt.nodes {
		nd := &rt.nodes[i]
		for round := range 2 { // the second round after the queue emptied
			for id := range ObjID(4) {
				nd.ready.push(id)
			}
			if &nd.ready.items[0] != &nd.readyBuf[0] {
				t.Fatalf("node %d, round %d: four ready objects outside the node", i, round)
			}
			for want := range ObjID(4) {
				if got := nd.ready.pop(); got != want {
					t.Fatalf("node %d, round %d: popped %d, want %d", i, round, got, want)
				}
			}
		}
		for id := range ObjID(5) {
			nd.ready.push(id)
		}
		if &nd.ready.items[0] == &nd.readyBuf[0] || nd.ready.len() != 5 {
			t.Fatalf("node %d: five ready objects, %d queued, still in the node's four slots", i, nd.ready.len())
		}
	}
}
