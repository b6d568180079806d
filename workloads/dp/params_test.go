package dp

import (
	"strings"
	"testing"

	"ftsim/sim"
)

// Each bad configuration is refused with an error naming the offending key.
func TestParamsErrors(t *testing.T) {
	cases := []struct {
		name string
		set  func(p *Params)
		want string // in the error
	}{
		{"unknown problem", func(p *Params) { p.Problem = "mcm" }, "workload.problem"},
		{"a/b and fasta", func(p *Params) { p.A, p.B, p.FASTA = "AC", "CA", "x.fa" }, "fasta"},
		{"a/b and random", func(p *Params) { p.A, p.RandomB = "AC", 5 }, "random_a"},
		{"fasta and random", func(p *Params) { p.FASTA, p.RandomA = "x.fa", 5 }, "random_a"},
		{"missing fasta", func(p *Params) { p.FASTA = "/nonexistent/x.fa" }, "workload.fasta"},
		{"huge lcs", func(p *Params) { p.RandomA, p.RandomB = 1<<20, 1<<20 }, "random_a"},
		{"foreign key", func(p *Params) { p.Weights = []int64{1} }, "workload.weights is a knapsack key"},
		{"foreign key tsp", func(p *Params) { p.Problem, p.A = "tsp", "AC" }, "workload.a is a lcs key"},
		{"weights/profits", func(p *Params) {
			p.Problem, p.Capacity, p.Weights, p.Profits = "knapsack", 5, []int64{1, 2}, []int64{3}
		}, "workload.weights has 2 entries but workload.profits 1"},
		{"weight too big", func(p *Params) { p.Problem, p.Weights, p.Profits = "knapsack", []int64{1 << 40}, []int64{3} }, "workload.weights: entry 1 is 1099511627776"},
		{"weights and file", func(p *Params) { p.Problem, p.Weights, p.Profits, p.File = "knapsack", []int64{1}, []int64{1}, "k.txt" }, "file"},
		{"missing file", func(p *Params) { p.Problem, p.File, p.Instance = "knapsack", "/nonexistent/k.txt", "P01" }, "workload.file"},
		{"instance without file", func(p *Params) { p.Problem, p.Instance = "knapsack", "P01" }, "workload.instance"},
		{"random and weights", func(p *Params) {
			p.Problem, p.RandomItems, p.Weights, p.Profits = "knapsack", 5, []int64{1}, []int64{1}
		}, "random_items"},
		{"missing tsplib", func(p *Params) { p.Problem, p.TSPLIB = "tsp", "/nonexistent/a.tsp" }, "workload.tsplib"},
		{"tsplib and random", func(p *Params) { p.Problem, p.TSPLIB, p.RandomCities = "tsp", "a.tsp", 5 }, "random_cities"},
		{"too many cities", func(p *Params) { p.Problem, p.RandomCities = "tsp", 40 }, "workload.random_cities"},
		{"objects", func(p *Params) { p.Objects = 1 << 30 }, "workload.objects"},
		{"negative objects", func(p *Params) { p.Objects = -2 }, "workload.objects"},
		{"negative length", func(p *Params) { p.RandomA = -2 }, "workload.random_a must not be negative"},
		{"negative block", func(p *Params) { p.BlockRows = -1 }, "workload.block_rows"},
		{"negative cities", func(p *Params) { p.Problem, p.RandomCities = "tsp", -3 }, "workload.random_cities"},
		{"negative profit", func(p *Params) { p.Problem, p.Weights, p.Profits = "knapsack", []int64{1}, []int64{-3} }, "workload.profits: entry 1"},
		{"big capacity", func(p *Params) {
			p.Problem, p.Capacity, p.Weights, p.Profits = "knapsack", 1<<33, []int64{1}, []int64{3}
		}, "workload.capacity"},
		{"objects per node", func(p *Params) { p.ObjectsPerNode = 0 }, "workload.objects_per_node"},
		// 4 × 2^62 wraps to 0 objects in int64
		{"objects per node overflow", func(p *Params) { p.ObjectsPerNode = 1 << 62 }, "workload.objects_per_node: 4 × 4611686018427387904 (cluster.nodes × objects_per_node) is too many objects"},
		{"too many objects", func(p *Params) { p.Objects = 1<<22 + 1 }, "workload.objects: 4194305 is too many objects (at most 4194304)"},
		{"cell ops", func(p *Params) { p.CellOps = -1 }, "workload.cell_ops"},
		{"modeled scale", func(p *Params) { p.ModeledScale = 0 }, "workload.modeled_scale"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			c.set(&p)
			_, err := New(p, 4, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

// Shared-file errors name the key and what is wrong with the file.
func TestParamsFileErrors(t *testing.T) {
	path := sharedPath(t, "knapsack01.txt")
	p := DefaultParams()
	p.Problem, p.File = "knapsack", path
	if _, err := New(p, 2, nil); err == nil || !strings.Contains(err.Error(), "workload.instance") || !strings.Contains(err.Error(), "P01") {
		t.Fatalf("file with several instances and none named: %v", err)
	}
	p.Instance = "P99"
	if _, err := New(p, 2, nil); err == nil || !strings.Contains(err.Error(), `no instance "P99"`) {
		t.Fatalf("unknown instance: %v", err)
	}
	p.Instance, p.Capacity = "P01", 7
	if _, err := New(p, 2, nil); err == nil || !strings.Contains(err.Error(), "workload.capacity") {
		t.Fatalf("capacity with a file: %v", err)
	}
	q := DefaultParams()
	q.Problem, q.TSPLIB = "tsp", path // not a TSPLIB file
	if _, err := New(q, 2, nil); err == nil || !strings.Contains(err.Error(), "workload.tsplib") {
		t.Fatalf("knapsack file as TSPLIB: %v", err)
	}
}

// With no instance given, each problem runs a documented default instance;
// the object count follows the nodes unless objects is set.
func TestParamsDefaults(t *testing.T) {
	for _, c := range []struct {
		problem string
		stages  int
	}{{"lcs", 16}, {"knapsack", defaultItems}, {"tsp", defaultCities - 1}} {
		p := DefaultParams()
		p.Problem = c.problem
		w := build(t, p, 4)
		if w.NumObjects() != 4 || w.Stages() != c.stages || w.Problem() != c.problem {
			t.Fatalf("%s: %d objects, %d stages", c.problem, w.NumObjects(), w.Stages())
		}
		_, res := runDP(t, w, 4, sim.DefaultConfig(), &sim.BaseProtocol{})
		if !res.Outcome.OK {
			t.Fatalf("%s: outcome %+v", c.problem, res.Outcome)
		}
	}
	p := DefaultParams()
	p.ObjectsPerNode = 3
	if w := build(t, p, 5); w.NumObjects() != 15 {
		t.Fatalf("%d objects, want 5 nodes × 3", w.NumObjects())
	}
	p.Objects = 7
	if w := build(t, p, 5); w.NumObjects() != 7 {
		t.Fatalf("%d objects, want 7", w.NumObjects())
	}
	p = DefaultParams()
	p.Problem, p.RandomItems = "knapsack", 10
	w := build(t, p, 2).(*KnapsackWorkload)
	total := 0
	for _, x := range w.Instance().Weights {
		total += x
	}
	if w.Instance().Capacity != total/2 {
		t.Fatalf("capacity %d, want half of %d", w.Instance().Capacity, total)
	}
}
