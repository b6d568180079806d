package dp

import (
	"fmt"
	"testing"

	"ftsim/sim"
)

// P01-P04 of knapsack01.txt, over 1, 2, 3 and 5 objects and over more
// objects than capacity columns, give the published optimum.
func TestKnapsackDistributedPublished(t *testing.T) {
	path := sharedPath(t, "knapsack01.txt")
	want := map[string]int{"P01": 309, "P02": 51, "P03": 150, "P04": 107}
	for _, name := range []string{"P01", "P02", "P03", "P04"} {
		for _, objects := range []int{1, 2, 3, 5, 60} {
			t.Run(fmt.Sprintf("%s-%d", name, objects), func(t *testing.T) {
				p := DefaultParams()
				p.Problem, p.File, p.Instance, p.Objects = "knapsack", path, name, int64(objects)
				w := build(t, p, nodesFor(objects))
				_, res := runDP(t, w, nodesFor(objects), sim.DefaultConfig(), &sim.BaseProtocol{})
				if !res.Outcome.OK || res.Outcome.Answer != fmt.Sprint(want[name]) {
					t.Fatalf("outcome %+v, published %d", res.Outcome, want[name])
				}
			})
		}
	}
}

// Random instances (with zero weights and a zero capacity among them) end
// with Knapsack.Solve's value, and every object's flag bits and values are
// Knapsack.Row's.
func TestKnapsackDistributedRandom(t *testing.T) {
	cases := []struct {
		k       Knapsack
		objects int
	}{
		{RandomKnapsack(30, 4000, 1), 1},
		{RandomKnapsack(30, 4000, 2), 4},
		{RandomKnapsack(40, 20000, 3), 7},
		{RandomKnapsack(25, 3000, 4), 13},
		{RandomKnapsack(5, 6, 5), 10}, // more objects than columns
		{Knapsack{Capacity: 0, Weights: []int{0, 1}, Profits: []int{4, 9}}, 3},
		{Knapsack{Capacity: 10, Weights: []int{0, 3, 0, 10, 11}, Profits: []int{1, 5, 0, 7, 100}}, 4},
		{Knapsack{Capacity: 10}, 3}, // no items, no stages
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			p := DefaultParams()
			p.Problem, p.Objects, p.Capacity = "knapsack", int64(c.objects), int64(c.k.Capacity)
			p.Weights, p.Profits = make([]int64, len(c.k.Weights)), make([]int64, len(c.k.Weights))
			for j := range c.k.Weights {
				p.Weights[j], p.Profits[j] = int64(c.k.Weights[j]), int64(c.k.Profits[j])
			}
			w := build(t, p, nodesFor(c.objects)).(*KnapsackWorkload)
			rt, res := runDP(t, w, nodesFor(c.objects), sim.DefaultConfig(), &sim.BaseProtocol{})
			value, _ := c.k.Solve()
			if !res.Outcome.OK || res.Outcome.Answer != fmt.Sprint(value) {
				t.Fatalf("outcome %+v, Solve %d", res.Outcome, value)
			}
			n, cols := len(c.k.Weights), c.k.Capacity+1
			prev, cur := make([]int, cols), make([]int, cols)
			flags := make([][]uint64, n)
			for i := range flags {
				flags[i] = make([]uint64, c.k.FlagWords())
				c.k.Row(i, prev, cur, 0, cols, flags[i])
				prev, cur = cur, prev
			}
			for k := 0; k < c.objects; k++ {
				o := rt.Object(sim.ObjID(k)).(*KnapsackObject)
				lo, hi := o.Columns()
				for m := lo; m < hi; m++ {
					if o.Values()[m-lo] != int64(prev[m]) {
						t.Fatalf("object %d: f[n-1][%d] = %d, want %d", k, m, o.Values()[m-lo], prev[m])
					}
					for i := 0; i < n; i++ {
						if want := flags[i][m>>6]>>(m&63)&1 != 0; o.Flag(i, m) != want {
							t.Fatalf("object %d: flag (%d, %d) = %v, want %v", k, i, m, o.Flag(i, m), want)
						}
					}
				}
			}
		})
	}
}

// The example of thesis 004 §5.3.1: six fine-grained processes, capacity 5,
// weights 1..4. At iteration 1 (w = 2) the dependencies are exactly those of
// Table 5.1 (P2→P0, P3→P1, P4→P2, P5→P3), and a whole run sends one value
// per column m ≥ w_i at each item after the first: 4 + 3 + 2 messages.
func TestKnapsackThesisExample(t *testing.T) {
	p := DefaultParams()
	p.Problem, p.Objects, p.Capacity = "knapsack", 6, 5
	p.Weights, p.Profits = []int64{1, 2, 3, 4}, []int64{3, 7, 2, 9}
	w := build(t, p, 3).(*KnapsackWorkload)
	for m := 0; m < 6; m++ {
		var want []sim.ObjID
		if m >= 2 {
			want = []sim.ObjID{sim.ObjID(m - 2)}
		}
		if got := w.ReceiverSet(1, sim.ObjID(m)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ReceiverSet(1, P%d) = %v, want %v", m, got, want)
		}
	}
	r := &recorder{}
	_, res := runDP(t, w, 3, sim.DefaultConfig(), r)
	if v, _ := w.Instance().Solve(); !res.Outcome.OK || res.Outcome.Answer != fmt.Sprint(v) {
		t.Fatalf("outcome %+v, want %d", res.Outcome, v)
	}
	perStage := map[int32]int{}
	for _, m := range r.msgs {
		perStage[m.tag]++
		if m.payload != 8 || m.size != 4 || m.dst-m.src != sim.ObjID(p.Weights[m.tag]) {
			t.Errorf("message %+v: want one column from P(m-w) to P(m)", m)
		}
	}
	if len(r.msgs) != 9 || perStage[1] != 4 || perStage[2] != 3 || perStage[3] != 2 {
		t.Fatalf("messages per item %v, want 4, 3, 2 (N - w_i)", perStage)
	}
}

// Coarse grain, by hand: capacity 9 over two objects ([0,5) and [5,10)),
// weights 3, 7, 2. Item 1 (w 7): object 1's columns 5..9 need 0..2, all on
// object 0: one message of 3 values. Item 2 (w 2): columns 5..9 need 3..7,
// of which 3..4 are on object 0: one message of 2 values. Nothing else.
func TestKnapsackTransfersOnlyNeededColumns(t *testing.T) {
	p := DefaultParams()
	p.Problem, p.Objects, p.Capacity, p.BytesPerCell = "knapsack", 2, 9, 3
	p.Weights, p.Profits = []int64{3, 7, 2}, []int64{4, 9, 3}
	w := build(t, p, 2).(*KnapsackWorkload)
	r := &recorder{}
	_, res := runDP(t, w, 2, sim.DefaultConfig(), r)
	if !res.Outcome.OK {
		t.Fatalf("outcome %+v", res.Outcome)
	}
	want := []sent{{0, 1, 1, 9, 24}, {0, 1, 2, 6, 16}}
	if fmt.Sprint(r.msgs) != fmt.Sprint(want) {
		t.Fatalf("messages %v, want %v", r.msgs, want)
	}
	if a, b := w.Transfer(2, 0, 1); a != 3 || b != 5 {
		t.Fatalf("Transfer(2, 0, 1) = [%d, %d), want [3, 5)", a, b)
	}
}

// On random instances the messages carry exactly the columns some cell
// needs from another object, each once: counted cell by cell.
func TestKnapsackCommunicationVolume(t *testing.T) {
	for seed, objects := range []int{2, 3, 5, 8, 17} {
		k := RandomKnapsack(15, 2500+100*seed, uint64(seed+10))
		p := DefaultParams()
		p.Problem, p.Objects, p.Capacity, p.BytesPerCell = "knapsack", int64(objects), int64(k.Capacity), 1
		p.Weights, p.Profits = make([]int64, 15), make([]int64, 15)
		for i := range k.Weights {
			p.Weights[i], p.Profits[i] = int64(k.Weights[i]), int64(k.Profits[i])
		}
		w := build(t, p, nodesFor(objects)).(*KnapsackWorkload)
		// Brute force: the set of (item, column) pairs that cross objects.
		cols := k.Capacity + 1
		var need int64
		for i := 1; i < len(k.Weights); i++ {
			crossed := map[int]bool{}
			for m := k.Weights[i]; m < cols; m++ {
				src := m - k.Weights[i]
				if owner(src, cols, objects) != owner(m, cols, objects) {
					crossed[src*objects+owner(m, cols, objects)] = true
				}
			}
			need += int64(len(crossed))
		}
		r := &recorder{}
		_, res := runDP(t, w, nodesFor(objects), sim.DefaultConfig(), r)
		if !res.Outcome.OK {
			t.Fatalf("objects %d: outcome %+v", objects, res.Outcome)
		}
		var got int64
		for _, m := range r.msgs {
			got += m.size
		}
		if got != need || res.Stats.AppBytes != need {
			t.Fatalf("objects %d: %d values sent (stats %d), %d needed", objects, got, res.Stats.AppBytes, need)
		}
	}
}
