package dp

import (
	"fmt"
	"math"
	"math/bits"
)

// MaxHeldKarpCities is the largest instance HeldKarp accepts: its table
// then takes HeldKarpTableBytes(24) ≈ 772 MB.
const MaxHeldKarpCities = 24

// HeldKarpTableBytes returns the memory of the cost table for n cities:
// (n-1)·2^(n-1) int32 cells (≈ n·2^(n-1)·4 bytes; 4 MB for n = 17, 38 MB
// for n = 20).
func HeldKarpTableBytes(n int) int64 {
	if n < 2 {
		return 0
	}
	return (int64(n-1) << (n - 1)) * 4
}

// HeldKarpTable is the Held-Karp DP over a TSP with city 0 as the fixed
// start. A set S of cities is a bitmask with bit c standing for city c
// (bit 0 is never set); C[S][j], for j in S, is the length of the shortest
// path that leaves city 0, visits exactly the cities of S and ends at j:
//
//	C[{j}][j] = d(0, j)
//	C[S][j]   = min over k in S\{j} of C[S\{j}][k] + d(k, j)
//	optimum   = min over j of C[{1..n-1}][j] + d(j, 0)
//
// Stage k is the sets of size k; its cells depend only on stage k-1 and are
// independent of each other, which is how the distributed version splits
// the work (thesis 004 Algorithm 1, Fig. 4.4: the process owning column j
// computes C[S][j] for the stage's S containing j). Costs are int32;
// NewHeldKarpTable rejects instances whose tours could overflow.
type HeldKarpTable struct {
	n    int
	d    []int32 // n×n distances, row-major
	cost []int32 // C[S][j] at (S>>1)·(n-1) + j-1
}

// NewHeldKarpTable allocates the table for t (HeldKarpTableBytes(t.N)) and
// caches its distance matrix. Its cells are filled by FillStage or Set.
func NewHeldKarpTable(t *TSP) (*HeldKarpTable, error) {
	n := t.N
	if n < 1 || n > MaxHeldKarpCities {
		return nil, fmt.Errorf("held-karp: %d cities, want 1..%d (memory grows as n·2^n)", n, MaxHeldKarpCities)
	}
	h := &HeldKarpTable{n: n, d: make([]int32, n*n)}
	maxD := 0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := t.Dist(i, j)
			if v < 0 || v > math.MaxInt32 {
				return nil, fmt.Errorf("held-karp: distance %d between cities %d and %d outside 0..%d", v, i+1, j+1, math.MaxInt32)
			}
			maxD = max(maxD, v)
			h.d[i*n+j] = int32(v)
		}
	}
	if int64(maxD)*int64(n) > math.MaxInt32 {
		return nil, fmt.Errorf("held-karp: %d cities with distances up to %d could overflow int32 path costs", n, maxD)
	}
	if n > 1 {
		h.cost = make([]int32, HeldKarpTableBytes(n)/4)
	}
	return h, nil
}

// Cities returns the number of cities.
func (h *HeldKarpTable) Cities() int { return h.n }

// Full returns the set of all cities but the start, the last stage's only
// set.
func (h *HeldKarpTable) Full() uint32 { return uint32(1)<<h.n - 2 }

// Get returns C[S][j]; j must be in S.
func (h *HeldKarpTable) Get(S uint32, j int) int32 {
	return h.cost[int(S>>1)*(h.n-1)+j-1]
}

// Set stores C[S][j], for a worker that receives cells computed elsewhere.
func (h *HeldKarpTable) Set(S uint32, j int, v int32) {
	h.cost[int(S>>1)*(h.n-1)+j-1] = v
}

// Relax computes cell C[S][j] (j in S, 0 not in S) from stage |S|-1, which
// must be filled. pred is the city before j on the best path (0 when S =
// {j}); the cell's value is C[S\{j}][pred] + d(pred, j), so pred names the
// single predecessor value that is the thesis' critical data for the cell.
// Ties go to the lowest city. It does not allocate.
func (h *HeldKarpTable) Relax(S uint32, j int) (cost int32, pred int) {
	prev := S &^ (1 << j)
	if prev == 0 {
		return h.d[j], 0
	}
	m := h.n - 1
	row := h.cost[int(prev>>1)*m : int(prev>>1)*m+m]
	best, pred := int32(math.MaxInt32), -1
	for r := prev; r != 0; r &= r - 1 {
		k := bits.TrailingZeros32(r)
		if v := row[k-1] + h.d[k*h.n+j]; v < best {
			best, pred = v, k
		}
	}
	return best, pred
}

// FillStage computes every cell of stage k (1 <= k <= n-1) from stage k-1.
func (h *HeldKarpTable) FillStage(k int) {
	m := h.n - 1
	if k < 1 || k > m {
		return
	}
	limit := uint64(1) << m
	for s := uint64(1)<<k - 1; s < limit; s = nextSubset64(s) {
		S := uint32(s) << 1
		for r := S; r != 0; r &= r - 1 {
			j := bits.TrailingZeros32(r)
			c, _ := h.Relax(S, j)
			h.Set(S, j, c)
		}
	}
}

// Stage returns the sets of stage k: the subsets of cities 1..n-1 of size
// k, in increasing mask order (bit c = city c).
func (h *HeldKarpTable) Stage(k int) []uint32 {
	subs := SubsetsOfSize(h.n-1, k)
	for i := range subs {
		subs[i] <<= 1
	}
	return subs
}

// Tour closes the filled table: the optimal tour length and a tour starting
// at city 0, recovered by following Relax's predecessors back from the last
// city (no predecessor table is stored).
func (h *HeldKarpTable) Tour() (length int, tour []int) {
	n := h.n
	tour = make([]int, n)
	if n == 1 {
		return 0, tour
	}
	full := h.Full()
	best, last := int64(math.MaxInt64), -1
	for j := 1; j < n; j++ {
		if v := int64(h.Get(full, j)) + int64(h.d[j*n]); v < best {
			best, last = v, j
		}
	}
	for S, j, pos := full, last, n-1; S != 0; pos-- {
		tour[pos] = j
		_, pred := h.Relax(S, j)
		S &^= 1 << j
		j = pred
	}
	return int(best), tour
}

// HeldKarp solves t exactly, stage by stage: O(n²·2^n) time and
// HeldKarpTableBytes(t.N) memory. The tour starts at city 0 (TSPLIB node 1).
// It fails for more than MaxHeldKarpCities cities or distances that could
// overflow int32 path costs.
func HeldKarp(t *TSP) (length int, tour []int, err error) {
	h, err := NewHeldKarpTable(t)
	if err != nil {
		return 0, nil, err
	}
	for k := 1; k < t.N; k++ {
		h.FillStage(k)
	}
	length, tour = h.Tour()
	return length, tour, nil
}

// SubsetsOfSize returns every subset of {0..n-1} with k elements as a
// bitmask, in increasing order; C(n, k) masks, so keep n small. It returns
// nil unless 0 <= k <= n <= 32.
func SubsetsOfSize(n, k int) []uint32 {
	if k < 0 || n < k || n > 32 {
		return nil
	}
	if k == 0 {
		return []uint32{0}
	}
	var out []uint32
	limit := uint64(1) << n
	for s := uint64(1)<<k - 1; s < limit; s = nextSubset64(s) {
		out = append(out, uint32(s))
	}
	return out
}

// NextSubset returns the next larger mask with as many bits set as s
// (Gosper's hack), for walking a stage without materialising it. s must be
// non-zero; the caller stops when the result reaches 1<<n.
func NextSubset(s uint32) uint32 {
	return uint32(nextSubset64(uint64(s)))
}

func nextSubset64(s uint64) uint64 {
	c := s & -s
	r := s + c
	return ((r^s)>>2)/c | r
}
