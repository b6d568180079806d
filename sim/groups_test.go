package sim

import (
	"slices"
	"testing"
)

// groupDraws returns the first k intervals of failure domain g's clock for
// seed: the draws of its own stream times the domain MTBF, as the runtime
// must make them.
func groupDraws(seed uint64, g, k int, mtbf Time) []Time {
	s := NewStream(seed, "group-failure", uint64(g))
	out := make([]Time, k)
	for i := range out {
		out[i] = Time(s.ExpFloat64() * float64(mtbf))
	}
	return out
}

// With no repair, each node fails once: at its own failure time, the same as
// without group failures, or at its domain's first failure if that comes
// first. Both are computed here from the streams' definitions; a domain's
// failure takes every node of it at the same instant, and the run ends once
// every node has failed (a domain with nothing powered on stops its clock).
func TestGroupFailuresAddToNodeFailures(t *testing.T) {
	const nodes, size = 10, 4 // domains {0-3}, {4-7}, {8, 9}
	failAt := func(groupMTBF Time) map[NodeID]Time {
		cfg := testConfig(nodes)
		cfg.Failures, cfg.NodeMTBF = Exponential, 100*Hour
		cfg.GroupSize, cfg.GroupMTBF = size, 30*Hour
		if groupMTBF == 0 {
			cfg.GroupSize, cfg.GroupMTBF = 0, 0
		}
		cfg.Limit = Never - 1
		p := &recordProto{}
		rt, err := New(cfg, idle(1), p)
		if err != nil {
			t.Fatal(err)
		}
		rt.Run()
		at := map[NodeID]Time{}
		for _, f := range p.failures {
			if _, twice := at[f.Node]; twice {
				t.Fatalf("node %d failed twice", f.Node)
			}
			at[f.Node] = f.At
		}
		if len(at) != nodes {
			t.Fatalf("%d nodes failed, want %d", len(at), nodes)
		}
		return at
	}
	own, with := failAt(0), failAt(30*Hour)
	bursts := 0
	for g := range (nodes + size - 1) / size {
		first := groupDraws(1, g, 1, 30*Hour)[0]
		hit := 0
		for n := g * size; n < min(g*size+size, nodes); n++ {
			want := min(own[NodeID(n)], first)
			if got := with[NodeID(n)]; got != want {
				t.Errorf("node %d failed at %v, want %v (its own failure %v, its domain's %v)", n, got, want, own[NodeID(n)], first)
			}
			if first < own[NodeID(n)] {
				hit++
			}
		}
		if hit > 0 {
			bursts++
		}
	}
	if bursts == 0 {
		t.Fatal("no domain failed before all its nodes had: the test checks nothing of group failures")
	}
}

// A domain's failure spares the powered-off spares of the pool, and its clock
// stops once nothing of it is powered on; taking a spare of the domain starts
// the clock again, with the stream's next draw, and the next failure of the
// domain takes the booting spare.
func TestGroupFailureSparesThePool(t *testing.T) {
	cfg := testConfig(3)
	cfg.Spares = 3 // nodes 3, 4, 5; one domain of all six
	cfg.SpareBoot = Hour
	cfg.Failures, cfg.NodeMTBF = Exponential, MaxDuration-1
	cfg.GroupSize, cfg.GroupMTBF = 6, 10*Hour
	cfg.Limit = Never - 1
	var rt *Runtime
	var takenAt Time = -1
	p := &recordProto{}
	p.onFail = func(f Failure) {
		if takenAt < 0 {
			takenAt = rt.Now()
			rt.TakeSpare(func(NodeID) {})
		}
	}
	rt, _ = New(cfg, idle(1), p)
	rt.Run()
	d := groupDraws(1, 0, 2, 10*Hour)
	type failure struct {
		n  NodeID
		at Time
	}
	var got []failure
	for _, f := range p.failures {
		got = append(got, failure{f.Node, f.At})
	}
	want := []failure{{0, d[0]}, {1, d[0]}, {2, d[0]}, {3, takenAt + d[1]}}
	if !slices.Equal(got, want) {
		t.Fatalf("failures %+v, want %+v", got, want)
	}
}

// Without failures (the fault-free runs), group failures are off too.
func TestNoFailuresMeansNoGroupFailures(t *testing.T) {
	cfg := testConfig(4)
	cfg.GroupSize, cfg.GroupMTBF = 2, Second
	cfg.Limit = Hour
	p := &recordProto{}
	rt, _ := New(cfg, idle(1), p)
	if res := rt.Run(); len(p.failures) != 0 || res.Stats.Failures != 0 {
		t.Fatalf("%d failures without a failure process", res.Stats.Failures)
	}
}

func TestSlotPartner(t *testing.T) {
	rt, _ := New(testConfig(5), idle(1), &recordProto{})
	one, _ := New(testConfig(1), idle(1), &recordProto{})
	for _, tc := range []struct {
		rt     *Runtime
		n      NodeID
		offset int
		want   NodeID
	}{
		{rt, 0, 1, 1}, {rt, 4, 1, 0}, {rt, 3, 2, 0}, {rt, 1, 4, 0},
		{rt, 2, 0, 3}, {rt, 2, 5, 3}, {rt, 2, 10, 3}, {rt, 2, 7, 4}, {rt, 2, -1, 3},
		{rt, 5, 1, None}, {rt, None, 1, None}, {one, 0, 1, None},
	} {
		if got := tc.rt.SlotPartner(tc.n, tc.offset); got != tc.want {
			t.Errorf("SlotPartner(%d, %d) among %d slots = %d, want %d", tc.n, tc.offset, len(tc.rt.Slots()), got, tc.want)
		}
	}
}
