package dp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

type tspOptimum struct {
	name               string
	n                  int
	optimal, canonical int
}

// tspOptima parses tsplib/optima.tsv: '#' comments, a header row, then
// name, n, edge_weight_type, edge_weight_format, optimal, independent_check,
// canonical_1..n.
func tspOptima(t *testing.T) []tspOptimum {
	var out []tspOptimum
	for i, line := range strings.Split(readShared(t, "tsplib/optima.tsv"), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' || strings.HasPrefix(line, "name\t") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 7 {
			t.Fatalf("optima.tsv:%d: %d columns, want 7", i+1, len(cols))
		}
		var o tspOptimum
		var errs [3]error
		o.name = cols[0]
		o.n, errs[0] = strconv.Atoi(cols[1])
		o.optimal, errs[1] = strconv.Atoi(cols[4])
		o.canonical, errs[2] = strconv.Atoi(cols[6])
		for _, err := range errs {
			if err != nil {
				t.Fatalf("optima.tsv:%d: %v", i+1, err)
			}
		}
		out = append(out, o)
	}
	return out
}

func parseShared(t *testing.T, name string) *TSP {
	t.Helper()
	rel := "tsplib/" + name + ".tsp.txt"
	tsp, err := ParseTSPLIB(strings.NewReader(readShared(t, rel)), rel)
	if err != nil {
		t.Fatal(err)
	}
	return tsp
}

func TestTSPLIBOptima(t *testing.T) {
	optima := tspOptima(t)
	if len(optima) != 3 {
		t.Fatalf("optima.tsv lists %d instances, want burma14, ulysses16, gr17", len(optima))
	}
	for _, o := range optima {
		tsp := parseShared(t, o.name)
		if tsp.N != o.n {
			t.Fatalf("%s: DIMENSION %d, optima.tsv says %d", o.name, tsp.N, o.n)
		}
		canonical := make([]int, tsp.N)
		for i := range canonical {
			canonical[i] = i
		}
		if got, err := tsp.TourLength(canonical); err != nil || got != o.canonical {
			t.Errorf("%s: tour 1..n = %d (%v), optima.tsv %d", o.name, got, err, o.canonical)
		}
		start := time.Now()
		length, tour, err := HeldKarp(tsp)
		elapsed := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: Held-Karp %d in %v (table %d MB)", o.name, length, elapsed.Round(time.Millisecond), HeldKarpTableBytes(tsp.N)>>20)
		if length != o.optimal {
			t.Errorf("%s: Held-Karp %d, published optimum %d", o.name, length, o.optimal)
		}
		if got, err := tsp.TourLength(tour); err != nil || got != length || tour[0] != 0 {
			t.Errorf("%s: returned tour %v has length %d (%v), Held-Karp said %d", o.name, tour, got, err, length)
		}
		// ~15 ms here on one core; not asserted, since a loaded CI
		// machine or the race detector can stretch it arbitrarily.
	}
}

// TestGEOTruncation checks the GEO variant against TSPLIB's published
// ulysses16 optimal tour (6859 with truncation, 6917 with nint, per
// GEO_DISTANCE_NOTES.txt).
func TestGEOTruncation(t *testing.T) {
	tsp := parseShared(t, "ulysses16")
	if tsp.Type != GEO {
		t.Fatalf("ulysses16 type %s", tsp.Type)
	}
	opt := []int{1, 14, 13, 12, 7, 6, 15, 5, 11, 9, 10, 16, 3, 2, 4, 8}
	for i := range opt {
		opt[i]--
	}
	if got, err := tsp.TourLength(opt); err != nil || got != 6859 {
		t.Errorf("ulysses16 TSPLIB opt tour = %d (%v), want 6859", got, err)
	}
	if tsp.Dist(3, 3) != 0 || tsp.Dist(0, 1) != tsp.Dist(1, 0) {
		t.Error("GEO distance not zero on the diagonal or not symmetric")
	}
}

// bruteTSP tries every tour starting at city 0.
func bruteTSP(tsp *TSP) int {
	perm := make([]int, tsp.N)
	for i := range perm {
		perm[i] = i
	}
	best := -1
	var rec func(k, length int)
	rec = func(k, length int) {
		if k == len(perm) {
			if total := length + tsp.Dist(perm[k-1], perm[0]); best < 0 || total < best {
				best = total
			}
			return
		}
		for i := k; i < len(perm); i++ {
			perm[k], perm[i] = perm[i], perm[k]
			rec(k+1, length+tsp.Dist(perm[k-1], perm[k]))
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	rec(1, 0)
	return best
}

func TestHeldKarpAgainstBruteForce(t *testing.T) {
	var tests []*TSP
	for n := 1; n <= 8; n++ {
		tests = append(tests, RandomTSP(n, uint64(n)))
	}
	// Asymmetric matrices: Held-Karp must respect direction.
	r := rand.New(rand.NewPCG(1, 2))
	for n := 2; n <= 7; n++ {
		d := make([][]int, n)
		for i := range d {
			d[i] = make([]int, n)
			for j := range d[i] {
				d[i][j] = r.IntN(100)
			}
		}
		tsp, err := NewExplicitTSP(fmt.Sprintf("asym%d", n), d)
		if err != nil {
			t.Fatal(err)
		}
		tests = append(tests, tsp)
	}
	// Thesis 004 Fig. 4.4: four cities A-D, asymmetric.
	fig, _ := NewExplicitTSP("fig4.4", [][]int{{0, 12, 5, 7}, {11, 0, 13, 6}, {4, 9, 0, 18}, {10, 3, 2, 0}})
	tests = append(tests, fig)
	for _, tsp := range tests {
		length, tour, err := HeldKarp(tsp)
		if err != nil {
			t.Fatal(err)
		}
		if want := bruteTSP(tsp); length != want {
			t.Errorf("%s: Held-Karp %d, brute force %d", tsp.Name, length, want)
		}
		if got, err := tsp.TourLength(tour); err != nil || got != length {
			t.Errorf("%s: tour %v has length %d (%v), want %d", tsp.Name, tour, got, err, length)
		}
	}
}

// TestHeldKarpBuildingBlocks fills the table the way a distributed run
// would: stage by stage, each stage's cells in a scrambled order through
// Stage, Relax and Set, and checks the result and the critical-data claim
// (the predecessor alone reproduces the cell).
func TestHeldKarpBuildingBlocks(t *testing.T) {
	tsp := RandomTSP(11, 77)
	want, _, err := HeldKarp(tsp)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHeldKarpTable(tsp)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for k := 1; k < h.Cities(); k++ {
		sets := h.Stage(k)
		if want := binomial(h.Cities()-1, k); len(sets) != want {
			t.Fatalf("stage %d has %d sets, want C(%d,%d) = %d", k, len(sets), h.Cities()-1, k, want)
		}
		r.Shuffle(len(sets), func(i, j int) { sets[i], sets[j] = sets[j], sets[i] })
		for _, S := range sets {
			if S&1 != 0 {
				t.Fatalf("stage %d set %b contains the start city", k, S)
			}
			for j := 1; j < h.Cities(); j++ {
				if S&(1<<j) == 0 {
					continue
				}
				c, pred := h.Relax(S, j)
				base := int32(0)
				if pred != 0 {
					base = h.Get(S&^(1<<j), pred)
				}
				if base+int32(tsp.Dist(pred, j)) != c {
					t.Fatalf("cell (%b, %d): predecessor %d does not reproduce %d", S, j, pred, c)
				}
				h.Set(S, j, c)
			}
		}
	}
	if got, _ := h.Tour(); got != want {
		t.Errorf("building blocks give %d, HeldKarp %d", got, want)
	}
}

func binomial(n, k int) int {
	b := 1
	for i := 1; i <= k; i++ {
		b = b * (n - k + i) / i
	}
	return b
}

func TestSubsets(t *testing.T) {
	for n := 0; n <= 10; n++ {
		for k := 0; k <= n; k++ {
			subs := SubsetsOfSize(n, k)
			if len(subs) != binomial(n, k) {
				t.Fatalf("SubsetsOfSize(%d, %d): %d sets, want %d", n, k, len(subs), binomial(n, k))
			}
			for i, s := range subs {
				if s >= 1<<n || popcount(s) != k || (i > 0 && s <= subs[i-1]) {
					t.Fatalf("SubsetsOfSize(%d, %d)[%d] = %b: wrong size, range or order", n, k, i, s)
				}
				if i > 0 && NextSubset(subs[i-1]) != s {
					t.Fatalf("NextSubset(%b) = %b, want %b", subs[i-1], NextSubset(subs[i-1]), s)
				}
			}
		}
	}
	if SubsetsOfSize(3, 4) != nil || SubsetsOfSize(33, 1) != nil || SubsetsOfSize(3, -1) != nil {
		t.Error("invalid sizes did not give nil")
	}
}

func popcount(s uint32) int {
	n := 0
	for ; s != 0; s &= s - 1 {
		n++
	}
	return n
}

func TestHeldKarpLimits(t *testing.T) {
	if _, _, err := HeldKarp(RandomTSP(MaxHeldKarpCities+1, 1)); err == nil || !strings.Contains(err.Error(), "cities") {
		t.Errorf("oversized instance: %v", err)
	}
	huge, _ := NewExplicitTSP("huge", [][]int{{0, MaxTSPWeight}, {MaxTSPWeight, 0}})
	if _, _, err := HeldKarp(huge); err == nil || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("overflowing weights: %v", err)
	}
	if got := HeldKarpTableBytes(17); got != 16<<16*4 {
		t.Errorf("HeldKarpTableBytes(17) = %d", got)
	}
}

// writeExplicit renders a symmetric matrix in a TSPLIB EXPLICIT format,
// wrapping numbers at odd places as real files do.
func writeExplicit(d [][]int, format string) string {
	n := len(d)
	var nums []int
	for i := 0; i < n; i++ {
		lo, hi := 0, n
		switch format {
		case "UPPER_ROW":
			lo = i + 1
		case "UPPER_DIAG_ROW":
			lo = i
		case "LOWER_ROW":
			hi = i
		case "LOWER_DIAG_ROW":
			hi = i + 1
		}
		for j := lo; j < hi; j++ {
			nums = append(nums, d[i][j])
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "NAME : m%d\nTYPE : TSP\nDIMENSION : %d\nEDGE_WEIGHT_TYPE : EXPLICIT\nEDGE_WEIGHT_FORMAT : %s\nEDGE_WEIGHT_SECTION\n", n, n, format)
	for k, v := range nums {
		fmt.Fprintf(&sb, " %d", v)
		if k%4 == 2 {
			sb.WriteString("\n")
		}
	}
	sb.WriteString("\nEOF\n")
	return sb.String()
}

func TestExplicitFormats(t *testing.T) {
	const n = 6
	r := rand.New(rand.NewPCG(5, 6))
	d := make([][]int, n)
	for i := range d {
		d[i] = make([]int, n)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d[i][j] = 1 + r.IntN(500)
			d[j][i] = d[i][j]
		}
	}
	for _, format := range []string{"FULL_MATRIX", "UPPER_ROW", "LOWER_ROW", "UPPER_DIAG_ROW", "LOWER_DIAG_ROW"} {
		tsp, err := ParseTSPLIB(strings.NewReader(writeExplicit(d, format)), format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if tsp.Dist(i, j) != d[i][j] {
					t.Fatalf("%s: Dist(%d,%d) = %d, want %d", format, i, j, tsp.Dist(i, j), d[i][j])
				}
			}
		}
	}
}

func TestEUC2D(t *testing.T) {
	const file = "NAME: tri\nTYPE: TSP\nCOMMENT: 3-4-5\nDIMENSION: 3\nCOMMENT: right\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n3 0 4.4\n1 0 0\n2 3 0\nEOF\ntrailing junk ignored\n"
	tsp, err := ParseTSPLIB(strings.NewReader(file), "tri")
	if err != nil {
		t.Fatal(err)
	}
	// Node numbers place coordinates, not line order.
	tests := []struct{ i, j, want int }{{0, 1, 3}, {0, 2, 4}, {1, 2, 5}, {2, 1, 5}, {1, 1, 0}}
	for _, tc := range tests {
		if got := tsp.Dist(tc.i, tc.j); got != tc.want {
			t.Errorf("Dist(%d,%d) = %d, want %d", tc.i, tc.j, got, tc.want)
		}
	}
	if tsp.Name != "tri" || tsp.Comment != "3-4-5\nright" {
		t.Errorf("name %q comment %q", tsp.Name, tsp.Comment)
	}
}

// NewEuclideanTSP builds the instance its coordinates describe, from a copy
// of them, and refuses coordinates that Dist could not use.
func TestNewEuclideanTSP(t *testing.T) {
	x, y := []float64{0, 3, 3, 0}, []float64{0, 0, 4, 4}
	tsp, err := NewEuclideanTSP("rect", x, y)
	if err != nil {
		t.Fatal(err)
	}
	x[1] = 100 // the instance keeps its own copy of the coordinates
	for _, tc := range []struct{ i, j, want int }{{0, 1, 3}, {0, 2, 5}, {1, 3, 5}, {2, 3, 3}, {3, 0, 4}} {
		if got := tsp.Dist(tc.i, tc.j); got != tc.want {
			t.Errorf("Dist(%d,%d) = %d, want %d", tc.i, tc.j, got, tc.want)
		}
	}
	if length, _, err := HeldKarp(tsp); err != nil || length != 14 {
		t.Errorf("HeldKarp = %d, %v; want the rectangle's perimeter 14", length, err)
	}

	for _, tc := range []struct {
		name string
		x, y []float64
		want string
	}{
		{"empty", nil, nil, "0 x and 0 y"},
		{"unequal", []float64{0, 1}, []float64{0}, "2 x and 1 y"},
		{"NaN", []float64{0, math.NaN()}, []float64{0, 0}, "city 2"},
		{"too far", []float64{0, 0}, []float64{0, -2e12}, "city 2"},
	} {
		if _, err := NewEuclideanTSP(tc.name, tc.x, tc.y); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want it to name %q", tc.name, err, tc.want)
		}
	}
}

func TestParseTSPLIBErrors(t *testing.T) {
	const head = "NAME: x\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\n"
	const coords = "NODE_COORD_SECTION\n1 0 0\n2 1 0\n3 0 1\n"
	const exp = "NAME: x\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: UPPER_ROW\nEDGE_WEIGHT_SECTION\n"
	tests := []struct{ in, want string }{
		{head + coords + "EOF\n", ""},
		{exp + "1 2\n3\n", ""},
		{"NAME: x\nTYPE: TSP\nEDGE_WEIGHT_TYPE: EUC_2D\n" + coords, "t.tsp:4: NODE_COORD_SECTION before DIMENSION"},
		{"NAME: x\nEDGE_WEIGHT_TYPE: GEO\n", "t.tsp:2: missing DIMENSION"},
		{"NAME: x\nDIMENSION: 3\n" + coords, "t.tsp:6: missing EDGE_WEIGHT_TYPE"},
		{head, "t.tsp:4: missing NODE_COORD_SECTION for EDGE_WEIGHT_TYPE EUC_2D"},
		{"NAME: x\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: FULL_MATRIX\n", "missing EDGE_WEIGHT_SECTION"},
		{head + "FIXED_EDGES_SECTION\n", "t.tsp:5: section FIXED_EDGES_SECTION is not supported"},
		{head + "FOO_SECTION\n", `t.tsp:5: unknown section "FOO_SECTION"`},
		{head + "CAPACITY: 5\n", `t.tsp:5: unknown keyword "CAPACITY"`},
		{head + "DIMENSION: 4\n", "t.tsp:5: DIMENSION repeated (first at line 3)"},
		{"TYPE: ATSP\n", `t.tsp:1: TYPE "ATSP" is not supported`},
		{"DIMENSION: 0\n", `t.tsp:1: DIMENSION "0" is not an integer`},
		{"DIMENSION: three\n", `t.tsp:1: DIMENSION "three" is not an integer`},
		{"EDGE_WEIGHT_TYPE: ATT\n", `t.tsp:1: EDGE_WEIGHT_TYPE "ATT" is not supported`},
		{"EDGE_WEIGHT_FORMAT: UPPER_COL\n", `EDGE_WEIGHT_FORMAT "UPPER_COL" is not supported`},
		{head + "NODE_COORD_SECTION\n1 0 0\n2 1 0\n", "t.tsp:5: NODE_COORD_SECTION has 2 nodes, DIMENSION is 3"},
		{head + "NODE_COORD_SECTION\n1 0 0\n2 1 0\n3 0 1\n4 1 1\n", "t.tsp:9: more than DIMENSION = 3"},
		{head + "NODE_COORD_SECTION\n1 0 0\n2 1 0\n2 0 1\nEOF\n", "t.tsp:5: NODE_COORD_SECTION lists node 2 twice"},
		{head + "NODE_COORD_SECTION\n1 0 0\n4 1 0\n", `t.tsp:7: node number "4" is not an integer in 1..3`},
		{head + "NODE_COORD_SECTION\n1 0 0\n2 1 zero\n", `t.tsp:7: node 2: coordinate "zero" is not a number`},
		{head + "NODE_COORD_SECTION\n1 0 0\n2 1 NaN\n", `t.tsp:7: node 2: coordinate "NaN"`},
		{head + "NODE_COORD_SECTION\n1 0\n", "t.tsp:6: node coordinate line has 2 fields"},
		{exp + "1 2\n", "t.tsp:5: EDGE_WEIGHT_SECTION has 2 entries, a UPPER_ROW of dimension 3 needs 3"},
		{exp + "1 2 3 4\n", "t.tsp:6: more than the 3 edge weights"},
		{exp + "1 x 3\n", `t.tsp:6: edge weight "x" is not an integer`},
		{exp + "1 -2 3\n", "t.tsp:6: edge weight -2 outside"},
		{exp + "1 2.5 3\n", `edge weight "2.5" is not an integer`},
		{"NAME: x\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_SECTION\n", "t.tsp:4: EDGE_WEIGHT_SECTION needs an EDGE_WEIGHT_FORMAT"},
		{head + "EDGE_WEIGHT_SECTION\n", "t.tsp:5: EDGE_WEIGHT_SECTION needs EDGE_WEIGHT_TYPE: EXPLICIT"},
		{head + "EDGE_WEIGHT_FORMAT: FULL_MATRIX\n" + coords, "t.tsp:5: EDGE_WEIGHT_FORMAT FULL_MATRIX needs EDGE_WEIGHT_TYPE EXPLICIT"},
		{"NAME: x\n1 2 3\n", "t.tsp:2: numbers outside a data section"},
		{"NAME x\n", `t.tsp:1: expected "KEYWORD: value" or a section name`},
		{head + coords + "NODE_COORD_SECTION\n", "t.tsp:9: NODE_COORD_SECTION repeated"},
		{"", "t.tsp:1: missing DIMENSION"},
	}
	for _, tc := range tests {
		tsp, err := ParseTSPLIB(strings.NewReader(tc.in), "t.tsp")
		if tc.want == "" {
			if err != nil || tsp.N != 3 {
				t.Errorf("ParseTSPLIB(%q): %v", tc.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTSPLIB(%q)\n error %v\n want  %q", tc.in, err, tc.want)
		}
	}
}

func TestTourLengthErrors(t *testing.T) {
	tsp := RandomTSP(4, 1)
	for _, tour := range [][]int{{0, 1, 2}, {0, 1, 2, 2}, {0, 1, 2, 4}, {-1, 0, 1, 2}} {
		if _, err := tsp.TourLength(tour); err == nil {
			t.Errorf("TourLength(%v) accepted", tour)
		}
	}
}
