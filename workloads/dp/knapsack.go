package dp

import (
	"fmt"
	"math"
)

// MaxKnapsackValue bounds weights, profits and capacity, so that sums over
// any realistic item count stay far from int64 overflow.
const MaxKnapsackValue = math.MaxInt32

// Knapsack is a 0/1 knapsack instance: choose items, each at most once, to
// maximise total profit with total weight at most Capacity.
//
// The DP table f[i][m] is the best profit from items 0..i with capacity m:
//
//	f[i][m] = max(f[i-1][m], f[i-1][m-w_i] + p_i)   (second term only if w_i <= m)
//
// with f[-1][·] = 0. Rows are the thesis' iterations; a worker owns a range
// of columns m and needs column m-w_i of the previous row (thesis 004
// chapter 5).
type Knapsack struct {
	Capacity int   // C, the weight limit
	Weights  []int // w_i, one per item
	Profits  []int // p_i (v_i in the thesis), one per item
}

// Validate reports why k is not a well-formed instance: lists of different
// lengths, negative or oversized numbers.
func (k Knapsack) Validate() error {
	if len(k.Weights) != len(k.Profits) {
		return fmt.Errorf("knapsack: %d weights but %d profits", len(k.Weights), len(k.Profits))
	}
	if k.Capacity < 0 || k.Capacity > MaxKnapsackValue {
		return fmt.Errorf("knapsack: capacity %d outside 0..%d", k.Capacity, MaxKnapsackValue)
	}
	for i := range k.Weights {
		if w := k.Weights[i]; w < 0 || w > MaxKnapsackValue {
			return fmt.Errorf("knapsack: item %d: weight %d outside 0..%d", i+1, w, MaxKnapsackValue)
		}
		if p := k.Profits[i]; p < 0 || p > MaxKnapsackValue {
			return fmt.Errorf("knapsack: item %d: profit %d outside 0..%d", i+1, p, MaxKnapsackValue)
		}
	}
	return nil
}

// FlagWords returns the number of uint64 words of one row's flag bits: one
// bit per capacity 0..Capacity.
func (k Knapsack) FlagWords() int { return (k.Capacity + 64) / 64 }

// Row computes f[i][m] for m in [lo, hi) into cur from the previous row
// prev (both indexed by capacity, length Capacity+1; only prev[m] and
// prev[m-w_i] are read, so a worker may fill just those). It sets flag bit m
// when item i is taken, i.e. f[i][m] != f[i-1][m], and clears it otherwise:
// these are the thesis' flag bits, enough to rebuild a lost column from the
// surviving ones and to recover the selection. It does not allocate.
func (k Knapsack) Row(i int, prev, cur []int, lo, hi int, flags []uint64) {
	w, p := k.Weights[i], k.Profits[i]
	for m := lo; m < hi; m++ {
		v := prev[m]
		bit := uint64(1) << (m & 63)
		if m >= w {
			if t := prev[m-w] + p; t > v {
				cur[m] = t
				flags[m>>6] |= bit
				continue
			}
		}
		cur[m] = v
		flags[m>>6] &^= bit
	}
}

// Solve returns the optimal profit and one optimal selection, by the
// classic O(n·C) DP. It keeps two value rows plus n rows of flag bits
// (n·(C+1)/8 bytes) and backtracks through the flags from capacity C; on
// ties it leaves an item out, so the selection is deterministic. k must be
// valid (Validate).
func (k Knapsack) Solve() (value int, take []bool) {
	n, c := len(k.Weights), k.Capacity
	prev, cur := make([]int, c+1), make([]int, c+1)
	words := k.FlagWords()
	flags := make([]uint64, n*words)
	for i := 0; i < n; i++ {
		k.Row(i, prev, cur, 0, c+1, flags[i*words:(i+1)*words])
		prev, cur = cur, prev
	}
	take = make([]bool, n)
	for i, m := n-1, c; i >= 0; i-- {
		if flags[i*words+m>>6]&(1<<(m&63)) != 0 {
			take[i] = true
			m -= k.Weights[i]
		}
	}
	return prev[c], take
}

// Evaluate returns the total weight and profit of a selection (items beyond
// len(take) are not taken).
func (k Knapsack) Evaluate(take []bool) (weight, profit int) {
	for i, t := range take {
		if t && i < len(k.Weights) {
			weight += k.Weights[i]
			profit += k.Profits[i]
		}
	}
	return weight, profit
}

// RandomKnapsack returns n items with weights uniform in 10..5000 and
// profits uniform in 20..1000, the ranges of the thesis' experiments
// (Table 5.2), determined by seed alone.
func RandomKnapsack(n, capacity int, seed uint64) Knapsack {
	r := newRand(seed, 0x4b4e4150) // stream "KNAP"
	k := Knapsack{Capacity: capacity, Weights: make([]int, n), Profits: make([]int, n)}
	for i := 0; i < n; i++ {
		k.Weights[i] = uniform(r, 10, 5000)
		k.Profits[i] = uniform(r, 20, 1000)
	}
	return k
}
