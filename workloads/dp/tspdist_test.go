package dp

import (
	"fmt"
	"math/bits"
	"slices"
	"testing"

	"ftsim/sim"
)

// The published TSPLIB optima, over 1, 2, 3 and 5 objects.
func TestTSPDistributedTSPLIB(t *testing.T) {
	for _, c := range []struct {
		name    string
		optimum int
	}{{"burma14", 3323}, {"ulysses16", 6859}, {"gr17", 2085}} {
		path := sharedPath(t, "tsplib/"+c.name+".tsp.txt")
		for _, objects := range []int{1, 2, 3, 5} {
			t.Run(fmt.Sprintf("%s-%d", c.name, objects), func(t *testing.T) {
				p := DefaultParams()
				p.Problem, p.TSPLIB, p.Objects = "tsp", path, int64(objects)
				_, res := runDP(t, build(t, p, nodesFor(objects)), nodesFor(objects), sim.DefaultConfig(), &sim.BaseProtocol{})
				if !res.Outcome.OK || res.Outcome.Answer != fmt.Sprint(c.optimum) {
					t.Fatalf("outcome %+v, published optimum %d", res.Outcome, c.optimum)
				}
			})
		}
	}
}

// Random instances, from one city up, over object counts up to more than
// the widest stage, end with HeldKarp's length; every cell an object holds
// is the sequential table's, with Relax's predecessor.
func TestTSPDistributedRandom(t *testing.T) {
	for _, c := range []struct{ cities, objects int }{
		{1, 1}, {1, 3}, {2, 2}, {3, 1}, {4, 4}, {6, 3}, {8, 7}, {9, 5}, {7, 40}, {10, 16},
	} {
		t.Run(fmt.Sprintf("%d-%d", c.cities, c.objects), func(t *testing.T) {
			p := DefaultParams()
			p.Problem, p.RandomCities, p.Objects, p.Seed = "tsp", int64(c.cities), int64(c.objects), int64(c.cities)
			w := build(t, p, nodesFor(c.objects)).(*TSPWorkload)
			rt, res := runDP(t, w, nodesFor(c.objects), sim.DefaultConfig(), &sim.BaseProtocol{})
			length, _, err := HeldKarp(w.Instance())
			if err != nil {
				t.Fatal(err)
			}
			if !res.Outcome.OK || res.Outcome.Answer != fmt.Sprint(length) {
				t.Fatalf("outcome %+v, HeldKarp %d", res.Outcome, length)
			}
			h, _ := NewHeldKarpTable(w.Instance())
			for k := 1; k < c.cities; k++ {
				for _, S := range h.Stage(k) {
					for r := S; r != 0; r &= r - 1 {
						j := bits.TrailingZeros32(r)
						want, wantPred := h.Relax(S, j)
						h.Set(S, j, want)
						held := 0
						for x := 0; x < c.objects; x++ {
							cost, pred, ok := rt.Object(sim.ObjID(x)).(*TSPObject).Cell(S, j)
							if !ok {
								continue
							}
							held++
							if cost != want || pred != wantPred {
								t.Fatalf("object %d cell (%b, %d) = %d via %d, want %d via %d", x, S, j, cost, pred, want, wantPred)
							}
						}
						if held != 1 {
							t.Fatalf("cell (%b, %d) held by %d objects", S, j, held)
						}
					}
				}
			}
		})
	}
}

// Ranks are colex ranks, unrank inverts them, and the objects' subsets of a
// stage partition it round-robin.
func TestTSPSubsetsRoundRobin(t *testing.T) {
	p := DefaultParams()
	p.Problem, p.RandomCities, p.Objects = "tsp", 11, 4
	w := build(t, p, 4).(*TSPWorkload)
	h, _ := NewHeldKarpTable(w.Instance())
	for s := 0; s < w.Stages(); s++ {
		stage := h.Stage(s + 1)
		for r, S := range stage {
			if w.rank(S) != r || w.unrank(s+1, r) != S {
				t.Fatalf("stage %d: rank(%b) = %d, unrank(%d) = %b, want %d and %b", s, S, w.rank(S), r, w.unrank(s+1, r), r, S)
			}
		}
		var all []uint32
		for x := 0; x < 4; x++ {
			mine := w.Subsets(s, sim.ObjID(x))
			for i, S := range mine {
				if stage[x+4*i] != S {
					t.Fatalf("stage %d object %d: subset %d is %b, want %b", s, x, i, S, stage[x+4*i])
				}
			}
			all = append(all, mine...)
		}
		slices.Sort(all)
		if !slices.Equal(all, stage) {
			t.Fatalf("stage %d: subsets do not partition the stage", s)
		}
	}
}

// The all-to-all carries exactly the rows S\{j} a cell needs from another
// object, each once per receiving object, counted cell by cell; and Rows
// agrees with the messages.
func TestTSPCommunicationVolume(t *testing.T) {
	for _, objects := range []int{2, 3, 7} {
		p := DefaultParams()
		p.Problem, p.RandomCities, p.Objects, p.BytesPerCell = "tsp", 10, int64(objects), 1
		w := build(t, p, nodesFor(objects)).(*TSPWorkload)
		h, _ := NewHeldKarpTable(w.Instance())
		var need int64
		for k := 2; k < 10; k++ {
			crossed := map[[2]uint32]bool{}
			for _, S := range h.Stage(k) {
				for r := S; r != 0; r &= r - 1 {
					T := S &^ (r & -r)
					if w.ownerOf(T) != w.ownerOf(S) {
						crossed[[2]uint32{T, uint32(w.ownerOf(S))}] = true
					}
				}
			}
			need += int64(len(crossed) * (k - 1)) // a row of stage k-1 has k-1 values
		}
		r := &recorder{}
		_, res := runDP(t, w, nodesFor(objects), sim.DefaultConfig(), r)
		if !res.Outcome.OK {
			t.Fatalf("objects %d: outcome %+v", objects, res.Outcome)
		}
		var got int64
		for _, m := range r.msgs {
			got += m.size
			rows := w.Rows(int(m.tag), m.src, m.dst)
			if int64(len(rows)*int(m.tag)*4) != int64(m.payload) {
				t.Fatalf("message %+v: %d rows of %d values", m, len(rows), m.tag)
			}
		}
		if got != need {
			t.Fatalf("objects %d: %d values sent, %d needed", objects, got, need)
		}
	}
}
