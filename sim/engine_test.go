package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestEngineOrdersByTimeThenSequence(t *testing.T) {
	e := NewEngine(1)
	var got []int64
	k := e.NewKind("rec", func(ev Event) { got = append(got, ev.J) })
	e.Schedule(30, k, 0, 3)
	e.Schedule(10, k, 0, 1)
	e.Schedule(10, k, 0, 2) // same time: scheduled later, runs later
	e.Schedule(20, k, 0, 4)
	e.Run(Never)
	want := []int64{1, 2, 4, 3}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if e.Now() != 30 {
		t.Fatalf("now = %v, want 30", e.Now())
	}
}

// TestEngineMatchesReferenceOrder checks the heap, including the replace-top
// path, against a sort of the same events.
func TestEngineMatchesReferenceOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	e := NewEngine(1)
	var last Time
	var lastSeq uint64
	n := 0
	var k Kind
	k = e.NewKind("chain", func(ev Event) {
		if ev.At < last {
			t.Fatalf("time went back: %d after %d", ev.At, last)
		}
		last = ev.At
		_ = lastSeq
		n++
		// schedule 0, 1 or 2 follow-ups, some at the same time
		for c := r.IntN(3); c > 0 && n < 200000; c-- {
			e.After(Time(r.IntN(5)), k, 0, 0)
		}
	})
	for i := 0; i < 100; i++ {
		e.Schedule(Time(r.IntN(100)), k, 0, 0)
	}
	e.Run(Never)
	if n < 100 {
		t.Fatalf("ran %d events", n)
	}
}

func TestEngineRunUntilAndStop(t *testing.T) {
	e := NewEngine(1)
	count := 0
	k := e.NewKind("c", func(ev Event) { count++ })
	for i := 1; i <= 10; i++ {
		e.Schedule(Time(i*10), k, 0, 0)
	}
	e.Run(50)
	if count != 5 || e.Pending() != 5 {
		t.Fatalf("count %d pending %d", count, e.Pending())
	}
	s := e.NewKind("stop", func(ev Event) { e.Stop() })
	e.Schedule(65, s, 0, 0)
	e.Run(Never)
	if count != 6 {
		t.Fatalf("stop did not stop: count %d", count)
	}
}

func TestStreamsIndependentOfCreationOrder(t *testing.T) {
	a := NewStream(42, "failure", 7).Uint64()
	_ = NewStream(42, "workload", 0).Uint64()
	b := NewStream(42, "failure", 7).Uint64()
	if a != b {
		t.Fatal("stream depends on creation order")
	}
	if a == NewStream(42, "failure", 8).Uint64() || a == NewStream(43, "failure", 7).Uint64() {
		t.Fatal("streams for different ids or seeds collide")
	}
}

func TestTransferTime(t *testing.T) {
	cases := []struct {
		size int64
		rate float64
		want Time
	}{
		{0, 1e9, 0},
		{1, 1e9, 1},
		{65536, 12.5e9, 5243}, // 5242.88 ns rounds up
		{1000, 1e6, Millisecond},
		{1 << 40, 1e-30, Never}, // saturates instead of wrapping around
	}
	for _, c := range cases {
		if got := TransferTime(c.size, c.rate); got != c.want {
			t.Errorf("TransferTime(%d, %g) = %d, want %d", c.size, c.rate, got, c.want)
		}
	}
}

// A prefetcher is called for the events of the current instant only, at
// each of its levels' distance ahead of the event about to run, with the
// event's arguments; events of other kinds, and of later instants, are not
// its, and neither are the levels past its depth.
func TestPrefetchAhead(t *testing.T) {
	e := NewEngine(1)
	var ran []int64
	type call struct {
		j     int64
		level int
		now   int64 // the event about to run when it was called
	}
	var calls []call
	k := e.NewKind("rec", func(ev Event) { ran = append(ran, ev.J) })
	other := e.NewKind("other", func(ev Event) { ran = append(ran, ev.J) })
	var shallow []call // other's prefetcher, of depth 1
	e.SetPrefetcher(other, 1, func(_ int32, j int64, level int) {
		shallow = append(shallow, call{j, level, int64(len(ran))})
	})
	e.SetPrefetcher(k, prefetchLevels, func(i int32, j int64, level int) {
		if i != 7 {
			t.Errorf("prefetcher got i = %d, want 7", i)
		}
		calls = append(calls, call{j, level, int64(len(ran))})
	})
	const n = 3 * prefetchStep * prefetchLevels
	for j := range int64(n) {
		kind := k
		if j%5 == 4 {
			kind = other
		}
		e.Schedule(10, kind, 7, j)
	}
	e.Schedule(20, k, 7, n) // a later instant: never prefetched from the first
	e.Run(Never)
	want, wantShallow := 0, 0
	for j := range int64(n) {
		if ahead := j - prefetchStep*prefetchLevels; ahead >= 0 && j%5 == 4 {
			wantShallow++
			if !slices.Contains(shallow, call{j, 0, ahead}) {
				t.Errorf("event %d of depth 1 not prefetched at level 0 before event %d ran", j, ahead)
			}
		}
		for l := range prefetchLevels {
			if ahead := j - int64(prefetchStep*(prefetchLevels-l)); ahead >= 0 && j%5 != 4 {
				want++
				if !slices.Contains(calls, call{j, l, ahead}) {
					t.Errorf("event %d not prefetched at level %d before event %d ran", j, l, ahead)
				}
			}
		}
	}
	if len(calls) != want || len(shallow) != wantShallow || len(ran) != n+1 {
		t.Errorf("%d and %d prefetcher calls, want %d and %d; %d events ran, want %d",
			len(calls), len(shallow), want, wantShallow, len(ran), n+1)
	}
}

// EventMark changes when an event is scheduled or run, and only then.
func TestEventMark(t *testing.T) {
	var marks []EventMark
	steps := map[Time]func(rt *Runtime){
		Millisecond: func(rt *Runtime) {
			a := rt.EventMark()
			b := rt.EventMark()
			rt.SetTimer(0, 2*Millisecond, 1, 0)
			marks = append(marks, a, b, rt.EventMark())
		},
		3 * Millisecond: func(rt *Runtime) { marks = append(marks, rt.EventMark()) },
	}
	rt, err := New(testConfig(1), &scriptWL{n: 1, total: 1}, &atProto{steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	rt.Run()
	if len(marks) != 4 || marks[0] != marks[1] || marks[1] == marks[2] || marks[2] == marks[3] {
		t.Errorf("marks %+v: want the first two equal (nothing happened), then a change at the timer set, then one at the events run", marks)
	}
}
