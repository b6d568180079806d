package synthetic

import (
	"testing"

	"ftsim/sim"
	"ftsim/sim/simtest"
)

func TestFaultFreeTimeIsExact(t *testing.T) {
	cases := []struct {
		name     string
		p        Params
		nodes    int
		makespan sim.Time
	}{
		{"compute only", Params{Steps: 10, StepOps: 1e8}, 4, sim.Second},
		// each step: compute 0.1 s then 1000 B to each neighbour: the second leaves after the
		// first (1 µs each at 1 GB/s), arrives 1 µs + 2 µs later; the last step sends nothing
		{"with exchange", Params{Steps: 10, StepOps: 1e8, Exchange: 1000}, 4, sim.Second + 9*(4*sim.Microsecond)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := New(c.p, c.nodes)
			if err != nil {
				t.Fatal(err)
			}
			cfg := sim.DefaultConfig()
			cfg.Nodes = c.nodes
			cfg.Bandwidth = 1e9
			cfg.Latency = 2 * sim.Microsecond
			rt, _ := sim.New(cfg, w, &sim.BaseProtocol{})
			res := rt.Run()
			if !res.Finished || !res.Outcome.OK {
				t.Fatalf("finished %v outcome %+v", res.Finished, res.Outcome)
			}
			if res.Makespan != c.makespan {
				t.Fatalf("makespan %v, want %v", res.Makespan, c.makespan)
			}
		})
	}
}

func TestStateRoundTrip(t *testing.T) {
	w, _ := New(Params{Steps: 5, Exchange: 8}, 3)
	o := &object{w: w, id: 1, step: 3, sum: 42}
	o.have[1][0], o.val[1][0] = true, 99
	b, _ := o.MarshalBinary()
	r := &object{w: w, id: 1}
	if err := r.UnmarshalBinary(b); err != nil || *r != *o {
		t.Fatalf("round trip: %+v vs %+v (%v)", r, o, err)
	}
	if err := r.UnmarshalBinary(b[:5]); err == nil {
		t.Fatal("truncated state accepted")
	}
}

// Values delivered out of step order (a neighbour's value of the next step
// before its value of this one) still give the reference.
func TestValuesOutOfOrder(t *testing.T) {
	w, err := New(Params{Steps: 20, StepOps: 1e6, Exchange: 1000}, 4)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.DefaultConfig()
	cfg.Nodes = 4
	proto := &simtest.Reorder{Wait: sim.Second}
	res := simtest.Run(t, cfg, w, proto)
	if !res.Outcome.OK || proto.Swapped == 0 {
		t.Fatalf("outcome %+v, %d messages swapped", res.Outcome, proto.Swapped)
	}
}
