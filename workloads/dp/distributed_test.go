package dp

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"ftsim/models/none"
	"ftsim/sim"
	"ftsim/sim/simtest"
)

// plain is the do-nothing protocol.

// sent is one application message as its sender emitted it.
type sent struct {
	src, dst sim.ObjID
	tag      int32
	size     int64
	payload  int // real bytes
}

// recorder is a protocol that lets everything through and records the
// application's data messages (not the self-sent ticks).
type recorder struct {
	sim.BaseProtocol
	msgs []sent
}

func (r *recorder) OnSend(m *sim.Message) bool {
	if m.Tag != TagTick {
		r.msgs = append(r.msgs, sent{m.Src, m.Dst, m.Tag, m.Size, len(m.Payload)})
	}
	return true
}

// build makes a workload or fails the test.
func build(t *testing.T, p Params, nodes int) StagedWorkload {
	t.Helper()
	w, err := New(p, nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w.(StagedWorkload)
}

// runDP runs a workload to completion under proto.
func runDP(t *testing.T, w sim.Workload, nodes int, cfg sim.Config, proto sim.Protocol) (*sim.Runtime, sim.Result) {
	t.Helper()
	cfg.Nodes = nodes
	rt, err := sim.New(cfg, w, proto)
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run()
	if !res.Finished {
		t.Fatalf("run did not finish: %+v", res.Outcome)
	}
	return rt, res
}

// nodesFor spreads objects over at most 4 nodes.
func nodesFor(objects int) int { return min(objects, 4) }

// sharedPath returns a shared test file's path relative to the package,
// skipping the test when the shared checkout is absent.
func sharedPath(t *testing.T, rel string) string {
	t.Helper()
	if _, err := os.Stat(testdata + rel); err != nil {
		t.Skipf("shared test data not available: %v", err)
	}
	return testdata + rel
}

// Every kind survives being rebuilt from its bytes after every handler, for
// several object counts, including more objects than columns.
func TestStateRoundTripEveryHandler(t *testing.T) {
	cases := []struct {
		name string
		p    func(*Params)
	}{
		{"lcs", func(p *Params) { p.RandomA, p.RandomB, p.BlockRows = 23, 17, 4 }},
		{"lcs-wide", func(p *Params) { p.A, p.B = "GATTACA", "TAC" }},
		{"knapsack", func(p *Params) { p.Problem, p.RandomItems, p.Capacity = "knapsack", 9, 300 }},
		{"knapsack-narrow", func(p *Params) {
			p.Problem, p.Capacity, p.Weights, p.Profits = "knapsack", 3, []int64{1, 2, 2}, []int64{5, 4, 3}
		}},
		{"tsp", func(p *Params) { p.Problem, p.RandomCities = "tsp", 8 }},
	}
	for _, c := range cases {
		for _, objects := range []int{1, 2, 5} {
			t.Run(fmt.Sprintf("%s-%d", c.name, objects), func(t *testing.T) {
				p := DefaultParams()
				p.Objects = int64(objects)
				c.p(&p)
				w := build(t, p, nodesFor(objects))
				r := &simtest.RoundTrip{T: t}
				_, res := runDP(t, w, nodesFor(objects), sim.DefaultConfig(), r)
				if !res.Outcome.OK || r.Restores == 0 {
					t.Fatalf("outcome %+v after %d restores", res.Outcome, r.Restores)
				}
			})
		}
	}
}

// A state of one kind is refused by another, and by the same kind when
// corrupted.
func TestStateKindsAndCorruption(t *testing.T) {
	mk := func(problem string) sim.Object {
		p := DefaultParams()
		p.Problem, p.Objects = problem, 2
		return build(t, p, 2).NewObject(1)
	}
	objs := []sim.Object{mk("lcs"), mk("knapsack"), mk("tsp")}
	for i, a := range objs {
		state, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		for j, b := range objs {
			if err := b.UnmarshalBinary(state); (err == nil) != (i == j) {
				t.Errorf("state of kind %d into kind %d: error %v", i, j, err)
			}
		}
		if err := a.UnmarshalBinary(append(state, 0)); err == nil {
			t.Errorf("kind %d: trailing byte accepted", i)
		}
		bad := bytes.Clone(state)
		bad[1] = 0x7f // stage beyond the last
		if err := a.UnmarshalBinary(bad); err == nil {
			t.Errorf("kind %d: stage 127 accepted", i)
		}
	}
}

// Under restart-from-scratch with node failures at 30% and 60% progress,
// every problem still ends with the reference answer.
func TestRestartUnderFailures(t *testing.T) {
	cases := []struct {
		name string
		p    func(*Params)
	}{
		{"lcs", func(p *Params) { p.RandomA, p.RandomB = 300, 200 }},
		{"knapsack", func(p *Params) { p.Problem, p.RandomItems, p.Capacity = "knapsack", 60, 5000 }},
		{"tsp", func(p *Params) { p.Problem, p.RandomCities = "tsp", 11 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			p.ObjectsPerNode = 2
			c.p(&p)
			w := build(t, p, 4)
			cfg := sim.DefaultConfig()
			cfg.Spares = 2
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = []sim.ScriptedFailure{{Node: 1, Progress: 0.3, ByProgress: true}, {Node: 3, Progress: 0.6, ByProgress: true}}
			_, res := runDP(t, w, 4, cfg, none.New())
			if !res.Outcome.OK || res.Stats.Restarts < 1 || res.Stats.Failures != 2 {
				t.Fatalf("outcome %+v, restarts %d, failures %d", res.Outcome, res.Stats.Restarts, res.Stats.Failures)
			}
		})
	}
}

// The sender and receiver sets are two views of one relation, and each
// message a run sends is one of its pairs, sent once, with the stage as tag.
func TestSetsMatchMessages(t *testing.T) {
	for _, problem := range []string{"lcs", "knapsack", "tsp"} {
		for _, objects := range []int{1, 3, 6} {
			t.Run(fmt.Sprintf("%s-%d", problem, objects), func(t *testing.T) {
				p := DefaultParams()
				p.Problem, p.Objects = problem, int64(objects)
				switch problem {
				case "lcs":
					p.RandomA, p.RandomB = 40, 31
				case "knapsack":
					p.RandomItems, p.Capacity = 20, 700
				case "tsp":
					p.RandomCities = 9
				}
				w := build(t, p, nodesFor(objects))
				want := map[sent]int{}
				for s := 0; s < w.Stages(); s++ {
					for a := 0; a < objects; a++ {
						for _, b := range w.SenderSet(s, sim.ObjID(a)) {
							if !containsID(w.ReceiverSet(s, b), sim.ObjID(a)) {
								t.Fatalf("stage %d: %d sends to %d, which does not receive from it", s, a, b)
							}
							want[sent{src: sim.ObjID(a), dst: b, tag: int32(s)}]++
						}
						for _, b := range w.ReceiverSet(s, sim.ObjID(a)) {
							if !containsID(w.SenderSet(s, b), sim.ObjID(a)) {
								t.Fatalf("stage %d: %d receives from %d, which does not send to it", s, a, b)
							}
						}
					}
				}
				r := &recorder{}
				_, res := runDP(t, w, nodesFor(objects), sim.DefaultConfig(), r)
				if !res.Outcome.OK {
					t.Fatalf("outcome %+v", res.Outcome)
				}
				got := map[sent]int{}
				for _, m := range r.msgs {
					got[sent{src: m.src, dst: m.dst, tag: m.tag}]++
				}
				if len(got) != len(want) || len(r.msgs) != len(want) {
					t.Fatalf("%d messages (%d distinct), sets give %d", len(r.msgs), len(got), len(want))
				}
				for k := range want {
					if got[k] != 1 {
						t.Fatalf("message %+v sent %d times", k, got[k])
					}
				}
			})
		}
	}
}

func containsID(ids []sim.ObjID, id sim.ObjID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Modeled size scales the charged work, the column-wise bytes and the
// state, never the answer.
func TestModeledScale(t *testing.T) {
	for _, problem := range []string{"lcs", "knapsack", "tsp"} {
		t.Run(problem, func(t *testing.T) {
			p := DefaultParams()
			p.Problem, p.Objects = problem, 3
			switch problem {
			case "lcs":
				p.RandomA, p.RandomB = 200, 200
			case "knapsack":
				p.RandomItems, p.Capacity = 30, 3000
			}
			_, small := runDP(t, build(t, p, 3), 3, sim.DefaultConfig(), &sim.BaseProtocol{})
			p.ModeledScale = 100
			wb := build(t, p, 3)
			_, big := runDP(t, wb, 3, sim.DefaultConfig(), &sim.BaseProtocol{})
			if !big.Outcome.OK || big.Outcome.Digest != small.Outcome.Digest {
				t.Fatalf("outcomes differ: %+v vs %+v", big.Outcome, small.Outcome)
			}
			if big.Makespan < 50*small.Makespan {
				t.Fatalf("work not scaled: makespan %v vs %v", big.Makespan, small.Makespan)
			}
			if problem != "lcs" && big.Stats.AppBytes < 99*small.Stats.AppBytes {
				t.Fatalf("bytes not scaled: %d vs %d", big.Stats.AppBytes, small.Stats.AppBytes)
			}
			if problem == "lcs" && big.Stats.AppBytes != small.Stats.AppBytes {
				t.Fatalf("LCS edges run down the real rows, bytes %d vs %d", big.Stats.AppBytes, small.Stats.AppBytes)
			}
		})
	}
}
