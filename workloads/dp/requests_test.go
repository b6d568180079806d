package dp

import (
	"fmt"
	"testing"

	"ftsim/sim"
	"ftsim/sim/simtest"
)

// In request-reply mode every data message is preceded by exactly one
// request from its receiver, the answers are the references, and the state
// (requests, pending replies) survives a round trip after every handler.
func TestRequestReply(t *testing.T) {
	cases := []struct {
		name string
		p    func(*Params)
	}{
		{"lcs", func(p *Params) { p.RandomA, p.RandomB, p.BlockRows = 23, 17, 4 }},
		{"knapsack", func(p *Params) { p.Problem, p.RandomItems, p.Capacity = "knapsack", 9, 300 }},
		{"knapsack-fine", func(p *Params) {
			p.Problem, p.Capacity, p.Weights, p.Profits = "knapsack", 4, []int64{1, 2, 3, 1, 4}, []int64{3, 7, 2, 9, 5}
		}},
		{"tsp", func(p *Params) { p.Problem, p.RandomCities = "tsp", 8 }},
	}
	for _, c := range cases {
		for _, objects := range []int{1, 3, 5} {
			t.Run(fmt.Sprintf("%s-%d", c.name, objects), func(t *testing.T) {
				p := DefaultParams()
				p.Objects, p.Requests = int64(objects), true
				c.p(&p)
				w := build(t, p, nodesFor(objects))
				r := &recorder{}
				_, res := runDP(t, w, nodesFor(objects), sim.DefaultConfig(), r)
				if !res.Outcome.OK {
					t.Fatalf("outcome %+v", res.Outcome)
				}
				type key struct {
					src, dst sim.ObjID
					stage    int
				}
				reqs, data := map[key]int{}, map[key]int{}
				for _, m := range r.msgs {
					if s := RequestStage(m.tag); s >= 0 {
						reqs[key{m.dst, m.src, s}]++ // keyed as the data it asks for
					} else {
						data[key{m.src, m.dst, int(m.tag)}]++
					}
				}
				if len(reqs) != len(data) {
					t.Fatalf("%d requests for %d data messages", len(reqs), len(data))
				}
				for k, n := range data {
					if n != 1 || reqs[k] != 1 {
						t.Fatalf("data %+v sent %d times after %d requests", k, n, reqs[k])
					}
				}
				rt := &simtest.RoundTrip{T: t}
				if _, res := runDP(t, w, nodesFor(objects), sim.DefaultConfig(), rt); !res.Outcome.OK || rt.Restores == 0 {
					t.Fatalf("round trip: outcome %+v after %d restores", res.Outcome, rt.Restores)
				}
			})
		}
	}
}
