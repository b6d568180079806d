package dp

import (
	"slices"
	"strings"
	"testing"
)

func TestKnapsackPublished(t *testing.T) {
	ins, err := ParseKnapsackFile(strings.NewReader(readShared(t, "knapsack01.txt")), "knapsack01.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"P01": 309, "P02": 51, "P03": 150, "P04": 107}
	if len(ins) != len(want) {
		t.Fatalf("%d instances, want %d", len(ins), len(want))
	}
	for _, in := range ins {
		if in.OptimalValue != want[in.Name] {
			t.Errorf("%s: file optimal_value %d, expected %d", in.Name, in.OptimalValue, want[in.Name])
		}
		value, take := in.Solve()
		if value != in.OptimalValue {
			t.Errorf("%s: Solve = %d, published %d", in.Name, value, in.OptimalValue)
		}
		w, p := in.Evaluate(take)
		if p != value || w > in.Capacity {
			t.Errorf("%s: selection worth %d weighing %d (capacity %d), Solve said %d", in.Name, p, w, in.Capacity, value)
		}
		// knapsack01.txt: the optimal selection is unique for n <= 15.
		if len(in.Weights) <= 15 && !slices.Equal(take, in.Selection) {
			t.Errorf("%s: selection %v, published (unique) %v", in.Name, take, in.Selection)
		}
		if len(in.Weights) <= 15 && w != in.OptimalWeight {
			t.Errorf("%s: selection weighs %d, published %d", in.Name, w, in.OptimalWeight)
		}
	}
}

// bruteKnapsack tries every selection (n <= 16).
func bruteKnapsack(k Knapsack) int {
	best := 0
	for mask := 0; mask < 1<<len(k.Weights); mask++ {
		w, p := 0, 0
		for i := range k.Weights {
			if mask&(1<<i) != 0 {
				w += k.Weights[i]
				p += k.Profits[i]
			}
		}
		if w <= k.Capacity && p > best {
			best = p
		}
	}
	return best
}

func TestKnapsackAgainstBruteForce(t *testing.T) {
	tests := []Knapsack{
		{Capacity: 0, Weights: []int{1, 0}, Profits: []int{5, 3}},
		{Capacity: 10},
		{Capacity: 5, Weights: []int{1, 2, 3, 4}, Profits: []int{3, 7, 2, 9}}, // thesis Fig. 5.2
	}
	for seed := uint64(0); seed < 30; seed++ {
		n := int(seed%12) + 1
		k := RandomKnapsack(n, int(seed*997%20000), seed)
		tests = append(tests, k)
	}
	for i, k := range tests {
		want := bruteKnapsack(k)
		got, take := k.Solve()
		if got != want {
			t.Errorf("case %d: Solve = %d, brute force %d", i, got, want)
		}
		if w, p := k.Evaluate(take); p != got || w > k.Capacity {
			t.Errorf("case %d: selection worth %d weighing %d, capacity %d", i, p, w, k.Capacity)
		}
	}
	if v, take := tests[2].Solve(); v != 12 || !slices.Equal(take, []bool{true, false, false, true}) {
		t.Errorf("thesis example: %d %v, want 12 (items 1 and 4)", v, take)
	}
}

// TestKnapsackRowColumns computes each row in column ranges, in reverse
// range order as workers finishing in any order would, and checks values and
// flag bits against whole rows.
func TestKnapsackRowColumns(t *testing.T) {
	k := RandomKnapsack(40, 3001, 9)
	c := k.Capacity
	words := k.FlagWords()
	prevA, curA := make([]int, c+1), make([]int, c+1)
	prevB, curB := make([]int, c+1), make([]int, c+1)
	flagsA, flagsB := make([]uint64, words), make([]uint64, words)
	for m := 0; m <= c; m++ {
		flagsB[m>>6] |= 1 << (m & 63) // stale bits, which Row must clear
	}
	for i := range k.Weights {
		k.Row(i, prevA, curA, 0, c+1, flagsA)
		for hi := c + 1; hi > 0; hi -= 97 {
			k.Row(i, prevB, curB, max(0, hi-97), hi, flagsB)
		}
		if !slices.Equal(curA, curB) || !slices.Equal(flagsA, flagsB) {
			t.Fatalf("row %d differs when computed by column ranges", i)
		}
		for m := 0; m <= c; m++ {
			taken := flagsA[m>>6]&(1<<(m&63)) != 0
			if taken != (curA[m] != prevA[m]) {
				t.Fatalf("row %d column %d: flag %v but f changed %v", i, m, taken, curA[m] != prevA[m])
			}
		}
		prevA, curA = curA, prevA
		prevB, curB = curB, prevB
	}
	if v, _ := k.Solve(); v != prevA[c] {
		t.Errorf("Solve %d, rows %d", v, prevA[c])
	}
}

func TestRandomKnapsack(t *testing.T) {
	a, b, c := RandomKnapsack(1000, 100000, 5), RandomKnapsack(1000, 100000, 5), RandomKnapsack(1000, 100000, 6)
	if !slices.Equal(a.Weights, b.Weights) || !slices.Equal(a.Profits, b.Profits) {
		t.Error("same seed gave different instances")
	}
	if slices.Equal(a.Weights, c.Weights) {
		t.Error("different seeds gave the same weights")
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if slices.Min(a.Weights) < 10 || slices.Max(a.Weights) > 5000 || slices.Min(a.Profits) < 20 || slices.Max(a.Profits) > 1000 {
		t.Errorf("weights %d..%d, profits %d..%d: outside the thesis ranges", slices.Min(a.Weights), slices.Max(a.Weights), slices.Min(a.Profits), slices.Max(a.Profits))
	}
	// Pinned so that generated workloads never change silently.
	pinnedWeights, pinnedProfits := []int{3962, 3591, 2335}, []int{56, 178, 938}
	if got := RandomKnapsack(3, 100, 42); !slices.Equal(got.Weights, pinnedWeights) || !slices.Equal(got.Profits, pinnedProfits) {
		t.Errorf("RandomKnapsack(3, 100, 42) = %v %v, pinned %v %v", got.Weights, got.Profits, pinnedWeights, pinnedProfits)
	}
}

func TestKnapsackValidate(t *testing.T) {
	tests := []struct {
		k    Knapsack
		want string
	}{
		{Knapsack{Capacity: 5, Weights: []int{1}, Profits: []int{1}}, ""},
		{Knapsack{Capacity: -1}, "capacity -1"},
		{Knapsack{Capacity: 5, Weights: []int{1, 2}, Profits: []int{1}}, "2 weights but 1 profits"},
		{Knapsack{Capacity: 5, Weights: []int{-3}, Profits: []int{1}}, "item 1: weight -3"},
		{Knapsack{Capacity: 5, Weights: []int{3}, Profits: []int{-1}}, "item 1: profit -1"},
	}
	for _, tc := range tests {
		err := tc.k.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.k, err, tc.want)
		}
	}
}

func TestParseKnapsackErrors(t *testing.T) {
	const rec = "name: A\nn: 2\ncapacity: 10\nweights: 3 4\nprofits: 5 6\n"
	tests := []struct{ in, want string }{
		{rec, ""},
		{rec + "optimal_selection: 1 1\noptimal_value: 11\noptimal_weight: 7\n", ""},
		{"# nothing\n\n", "k.txt:2: no knapsack instances"},
		{"n: 2\n", `k.txt:1: key "n" before the first "name:" line`},
		{"name: A\nsize: 3\n", `k.txt:2: unknown key "size"`},
		{"name: A\nn 2\n", `k.txt:2: expected "key: value"`},
		{"name: A\nn: 2\nn: 3\n", `k.txt:3: key "n" repeated in instance "A" (first at line 2)`},
		{"name: A\nn: 2\ncapacity: 10\nweights: 3 4\n", `k.txt:1: instance "A": missing key "profits"`},
		{"name: A\nn: 2\ncapacity: 10\nweights: 3 4 5\nprofits: 5 6\n", `k.txt:4: instance "A": weights has 3 entries, n is 2`},
		{"name: A\nn: 2\ncapacity: 10\nweights: 3 x\nprofits: 5 6\n", `k.txt:4: weights: entry 2: "x" is not an integer`},
		{"name: A\nn: 2\ncapacity: -10\n", `k.txt:3: capacity: entry 1: -10 outside`},
		{"name: A\nn: 2 3\n", `k.txt:2: n: want one number, got 2`},
		{rec + "optimal_selection: 1 2\n", `k.txt:6: instance "A": optimal_selection entry 2 is 2`},
		{rec + "optimal_selection: 1 1\noptimal_value: 12\n", `k.txt:7: instance "A": optimal_selection is worth 11, optimal_value says 12`},
		{rec + "optimal_selection: 1 1\noptimal_weight: 8\n", `k.txt:7: instance "A": optimal_selection weighs 7, optimal_weight says 8`},
		{"name: A\nn: 2\ncapacity: 5\nweights: 3 4\nprofits: 5 6\noptimal_selection: 1 1\n", "weighs 7, over capacity 5"},
		{rec + rec, `k.txt:6: instance "A" already defined at line 1`},
		{"name:\n", "k.txt:1: empty instance name"},
	}
	for _, tc := range tests {
		ins, err := ParseKnapsackFile(strings.NewReader(tc.in), "k.txt")
		if tc.want == "" {
			if err != nil || len(ins) != 1 {
				t.Errorf("ParseKnapsackFile(%q): %v", tc.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseKnapsackFile(%q) error %v, want %q", tc.in, err, tc.want)
		}
	}
}
