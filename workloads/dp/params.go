package dp

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"ftsim/sim"
	"ftsim/workloads/internal/limits"
)

// Params configure the distributed DP workload (scenario keys under
// [workload], kind "dp"). Keys that belong to another problem than the one
// selected are errors, so a typo in problem cannot silently run a default
// instance.
type Params struct {
	Problem        string  `toml:"problem"`          // "lcs", "knapsack" or "tsp"
	Objects        int64   `toml:"objects"`          // processes; 0 = nodes × objects_per_node
	ObjectsPerNode int64   `toml:"objects_per_node"` // over-decomposition when objects is 0
	CellOps        float64 `toml:"cell_ops"`         // modeled operations per cell (TSP: per term of the min)
	BytesPerCell   float64 `toml:"bytes_per_cell"`   // modeled bytes per value in messages and state
	// ModeledScale is the number of modeled columns each real column stands
	// for: compute, state and the column-wise messages scale by it (LCS
	// edges run down the real rows and do not). 1 = the real problem.
	ModeledScale float64 `toml:"modeled_scale"`
	Seed         int64   `toml:"seed"` // seed of random instances (the instance, not the run)
	// Requests selects request-reply messaging (thesis algorithms 4.1,
	// 5.1): every data message is preceded by a request from its receiver.
	Requests     bool  `toml:"requests"`
	RequestBytes int64 `toml:"request_bytes"` // modeled size of a request (requests = true)

	// LCS: give a and b, or fasta, or random_a/random_b; none of them means
	// two random 1000-base strings.
	A         string `toml:"a"`          // rows
	B         string `toml:"b"`          // columns
	FASTA     string `toml:"fasta"`      // file with exactly two records: rows, then columns
	RandomA   int64  `toml:"random_a"`   // length of a random DNA string for the rows
	RandomB   int64  `toml:"random_b"`   // and for the columns
	BlockRows int64  `toml:"block_rows"` // rows per stage; 0 = about four stages per object

	// Knapsack: give capacity with weights and profits, or file with
	// instance, or random_items (with capacity; 0 = half the items' total
	// weight); none of them means 100 random items.
	Capacity    int64   `toml:"capacity"`
	Weights     []int64 `toml:"weights"`
	Profits     []int64 `toml:"profits"`
	File        string  `toml:"file"`     // instance file in the layout of knapsack01.txt
	Instance    string  `toml:"instance"` // the record's name in file, e.g. "P01"
	RandomItems int64   `toml:"random_items"`

	// TSP: give tsplib or random_cities; neither means 12 random cities.
	TSPLIB       string `toml:"tsplib"`        // TSPLIB file
	RandomCities int64  `toml:"random_cities"` // EUC_2D cities uniform in 0..1000
}

// DefaultParams is the LCS of two random 1000-base strings, one object per
// node, 20 operations and 4 bytes per cell.
func DefaultParams() Params {
	return Params{Problem: "lcs", ObjectsPerNode: 1, CellOps: 20, BytesPerCell: 4, ModeledScale: 1, Seed: 1, RequestBytes: 8}
}

// Limits on the real problem, so that a scenario cannot ask for more memory
// than a test machine has: the LCS directions take a quarter byte per cell,
// the knapsack flags an eighth. Objects are bounded by limits.MaxObjects,
// as in every workload.
const (
	maxLCSCells      = 1 << 30
	maxKnapsackCells = 1 << 31
	defaultLCSLength = 1000
	defaultItems     = 100
	defaultCities    = 12
)

// New builds the workload for a cluster of nodes nodes. resolve maps a file
// name in the scenario to a path (relative to the scenario file); nil uses
// names as given. The result is a *LCSWorkload, *KnapsackWorkload or
// *TSPWorkload, all StagedWorkloads.
func New(p Params, nodes int, resolve func(string) string) (sim.Workload, error) {
	if resolve == nil {
		resolve = func(s string) string { return s }
	}
	objects, err := p.objects(nodes)
	if err != nil {
		return nil, err
	}
	if p.CellOps < 0 || p.BytesPerCell < 0 {
		return nil, errors.New("workload.cell_ops and workload.bytes_per_cell must not be negative")
	}
	if !(p.ModeledScale > 0) {
		return nil, fmt.Errorf("workload.modeled_scale must be positive, got %g", p.ModeledScale)
	}
	if err := p.negative(); err != nil {
		return nil, err
	}
	if err := p.foreignKeys(); err != nil {
		return nil, err
	}
	cost := costModel{cellOps: p.CellOps, bytesPerCell: p.BytesPerCell, scale: p.ModeledScale}
	switch p.Problem {
	case "lcs":
		a, b, err := p.lcsStrings(resolve)
		if err != nil {
			return nil, err
		}
		if int64(len(a))*int64(len(b)) > maxLCSCells {
			return nil, fmt.Errorf("workload: LCS of %d × %d characters is over the %d-cell limit of the real problem (use modeled_scale)", len(a), len(b), int64(maxLCSCells))
		}
		w := newLCS(a, b, objects, int(p.BlockRows), cost)
		w.requests, w.reqBytes = p.Requests, p.RequestBytes
		return w, nil
	case "knapsack":
		k, err := p.knapsack(resolve)
		if err != nil {
			return nil, err
		}
		if int64(len(k.Weights))*int64(k.Capacity+1) > maxKnapsackCells {
			return nil, fmt.Errorf("workload: knapsack of %d items × capacity %d is over the %d-cell limit of the real problem (use modeled_scale)", len(k.Weights), k.Capacity, int64(maxKnapsackCells))
		}
		w := newKnapsack(k, objects, cost)
		w.requests, w.reqBytes = p.Requests, p.RequestBytes
		return w, nil
	case "tsp":
		t, key, err := p.tsp(resolve)
		if err != nil {
			return nil, err
		}
		w, err := newTSP(t, objects, cost)
		if err != nil {
			return nil, fmt.Errorf("workload.%s: %w", key, err)
		}
		w.requests, w.reqBytes = p.Requests, p.RequestBytes
		return w, nil
	}
	return nil, fmt.Errorf("workload.problem: %q is not one of \"lcs\", \"knapsack\", \"tsp\"", p.Problem)
}

func (p Params) objects(nodes int) (int, error) {
	if p.Objects < 0 {
		return 0, fmt.Errorf("workload.objects must not be negative (0 = from objects_per_node), got %d", p.Objects)
	}
	if p.Objects > 0 {
		return limits.Objects("objects", "", p.Objects)
	}
	if p.ObjectsPerNode < 1 {
		return 0, errors.New("workload.objects_per_node must be at least 1")
	}
	if nodes < 1 {
		return 0, fmt.Errorf("workload: %d nodes, need at least 1 (or set workload.objects)", nodes)
	}
	return limits.Objects("objects_per_node", "cluster.nodes × objects_per_node", int64(nodes), p.ObjectsPerNode)
}

// negative rejects negative counts. The scenario decoder already does;
// this covers callers that build Params in code.
func (p Params) negative() error {
	for _, k := range []struct {
		key string
		v   int64
	}{
		{"seed", p.Seed}, {"random_a", p.RandomA}, {"random_b", p.RandomB}, {"block_rows", p.BlockRows},
		{"capacity", p.Capacity}, {"random_items", p.RandomItems}, {"random_cities", p.RandomCities},
		{"request_bytes", p.RequestBytes},
	} {
		if k.v < 0 {
			return fmt.Errorf("workload.%s must not be negative, got %d", k.key, k.v)
		}
	}
	for i := range p.Weights {
		if p.Weights[i] < 0 {
			return fmt.Errorf("workload.weights: entry %d is negative (%d)", i+1, p.Weights[i])
		}
	}
	for i := range p.Profits {
		if p.Profits[i] < 0 {
			return fmt.Errorf("workload.profits: entry %d is negative (%d)", i+1, p.Profits[i])
		}
	}
	return nil
}

// foreignKeys rejects keys of a problem other than the selected one.
func (p Params) foreignKeys() error {
	keys := []struct {
		key, problem string
		set          bool
	}{
		{"a", "lcs", p.A != ""}, {"b", "lcs", p.B != ""}, {"fasta", "lcs", p.FASTA != ""},
		{"random_a", "lcs", p.RandomA != 0}, {"random_b", "lcs", p.RandomB != 0}, {"block_rows", "lcs", p.BlockRows != 0},
		{"capacity", "knapsack", p.Capacity != 0}, {"weights", "knapsack", p.Weights != nil},
		{"profits", "knapsack", p.Profits != nil}, {"file", "knapsack", p.File != ""},
		{"instance", "knapsack", p.Instance != ""}, {"random_items", "knapsack", p.RandomItems != 0},
		{"tsplib", "tsp", p.TSPLIB != ""}, {"random_cities", "tsp", p.RandomCities != 0},
	}
	switch p.Problem {
	case "lcs", "knapsack", "tsp":
	default:
		return nil // New reports the unknown problem
	}
	for _, k := range keys {
		if k.set && k.problem != p.Problem {
			return fmt.Errorf("workload.%s is a %s key, but workload.problem is %q", k.key, k.problem, p.Problem)
		}
	}
	return nil
}

func (p Params) lcsStrings(resolve func(string) string) (a, b string, err error) {
	strs := p.A != "" || p.B != ""
	random := p.RandomA != 0 || p.RandomB != 0
	switch {
	case strs && p.FASTA != "":
		return "", "", errors.New("workload: give a and b, or fasta, not both")
	case strs && random:
		return "", "", errors.New("workload: give a and b, or random_a and random_b, not both")
	case p.FASTA != "" && random:
		return "", "", errors.New("workload: give fasta, or random_a and random_b, not both")
	case strs:
		return p.A, p.B, nil
	case p.FASTA != "":
		path := resolve(p.FASTA)
		f, err := os.Open(path)
		if err != nil {
			return "", "", fmt.Errorf("workload.fasta: %w", err)
		}
		defer f.Close()
		recs, err := ParseFASTA(f, path)
		if err != nil {
			return "", "", fmt.Errorf("workload.fasta: %w", err)
		}
		if len(recs) != 2 {
			return "", "", fmt.Errorf("workload.fasta: %s holds %d records, want 2 (rows, then columns)", path, len(recs))
		}
		return recs[0].Seq, recs[1].Seq, nil
	}
	na, nb := p.RandomA, p.RandomB
	if !random {
		na, nb = defaultLCSLength, defaultLCSLength
	}
	if na > maxLCSCells || nb > maxLCSCells || na*nb > maxLCSCells {
		return "", "", fmt.Errorf("workload.random_a × random_b must be at most %d cells, got %d × %d", int64(maxLCSCells), na, nb)
	}
	// Different seeds for the two strings: equal ones would be identical.
	return RandomDNA(int(na), uint64(p.Seed)), RandomDNA(int(nb), uint64(p.Seed)+0x9e3779b97f4a7c15), nil
}

func (p Params) knapsack(resolve func(string) string) (Knapsack, error) {
	explicit := p.Weights != nil || p.Profits != nil
	switch {
	case explicit && p.File != "":
		return Knapsack{}, errors.New("workload: give weights and profits, or file, not both")
	case explicit && p.RandomItems != 0:
		return Knapsack{}, errors.New("workload: give weights and profits, or random_items, not both")
	case p.File != "" && p.RandomItems != 0:
		return Knapsack{}, errors.New("workload: give file, or random_items, not both")
	case p.Instance != "" && p.File == "":
		return Knapsack{}, errors.New("workload.instance needs workload.file")
	case explicit:
		if len(p.Weights) != len(p.Profits) {
			return Knapsack{}, fmt.Errorf("workload.weights has %d entries but workload.profits %d", len(p.Weights), len(p.Profits))
		}
		if p.Capacity > MaxKnapsackValue {
			return Knapsack{}, fmt.Errorf("workload.capacity: %d is over %d", p.Capacity, MaxKnapsackValue)
		}
		k := Knapsack{Capacity: int(p.Capacity), Weights: make([]int, len(p.Weights)), Profits: make([]int, len(p.Profits))}
		for i := range p.Weights {
			for _, v := range []struct {
				key string
				x   int64
				dst *int
			}{{"weights", p.Weights[i], &k.Weights[i]}, {"profits", p.Profits[i], &k.Profits[i]}} {
				if v.x > MaxKnapsackValue {
					return Knapsack{}, fmt.Errorf("workload.%s: entry %d is %d, over %d", v.key, i+1, v.x, MaxKnapsackValue)
				}
				*v.dst = int(v.x)
			}
		}
		return k, nil
	case p.File != "":
		if p.Capacity != 0 {
			return Knapsack{}, errors.New("workload.capacity: the instance file gives the capacity")
		}
		return p.knapsackFile(resolve)
	}
	n := p.RandomItems
	if n == 0 {
		n = defaultItems
	}
	if n > 1<<20 || p.Capacity > MaxKnapsackValue {
		return Knapsack{}, fmt.Errorf("workload.random_items must be at most %d and workload.capacity at most %d", 1<<20, MaxKnapsackValue)
	}
	k := RandomKnapsack(int(n), int(p.Capacity), uint64(p.Seed))
	if p.Capacity == 0 {
		// Half the total weight: about half the items fit, the hard middle.
		total := 0
		for _, w := range k.Weights {
			total += w
		}
		k.Capacity = total / 2
	}
	return k, nil
}

func (p Params) knapsackFile(resolve func(string) string) (Knapsack, error) {
	path := resolve(p.File)
	f, err := os.Open(path)
	if err != nil {
		return Knapsack{}, fmt.Errorf("workload.file: %w", err)
	}
	defer f.Close()
	ins, err := ParseKnapsackFile(f, path)
	if err != nil {
		return Knapsack{}, fmt.Errorf("workload.file: %w", err)
	}
	if p.Instance == "" {
		if len(ins) == 1 {
			return ins[0].Knapsack, nil
		}
		return Knapsack{}, fmt.Errorf("workload.instance: %s holds %d instances (%s), name one", path, len(ins), knapsackNames(ins))
	}
	for _, in := range ins {
		if in.Name == p.Instance {
			return in.Knapsack, nil
		}
	}
	return Knapsack{}, fmt.Errorf("workload.instance: no instance %q in %s (it has %s)", p.Instance, path, knapsackNames(ins))
}

func knapsackNames(ins []KnapsackInstance) string {
	names := make([]string, len(ins))
	for i, in := range ins {
		names[i] = in.Name
	}
	return strings.Join(names, ", ")
}

// tsp returns the instance and the key it came from, for errors.
func (p Params) tsp(resolve func(string) string) (*TSP, string, error) {
	switch {
	case p.TSPLIB != "" && p.RandomCities != 0:
		return nil, "", errors.New("workload: give tsplib, or random_cities, not both")
	case p.TSPLIB != "":
		path := resolve(p.TSPLIB)
		f, err := os.Open(path)
		if err != nil {
			return nil, "", fmt.Errorf("workload.tsplib: %w", err)
		}
		defer f.Close()
		t, err := ParseTSPLIB(f, path)
		if err != nil {
			return nil, "", fmt.Errorf("workload.tsplib: %w", err)
		}
		return t, "tsplib", nil
	}
	n := p.RandomCities
	if n == 0 {
		n = defaultCities
	}
	if n > MaxHeldKarpCities {
		return nil, "", fmt.Errorf("workload.random_cities must be in 1..%d (Held-Karp memory grows as n·2^n), got %d", MaxHeldKarpCities, n)
	}
	return RandomTSP(int(n), uint64(p.Seed)), "random_cities", nil
}
