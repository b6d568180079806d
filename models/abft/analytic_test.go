package abft

import (
	"math"
	"math/bits"
	"testing"
)

func relClose(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

func TestTimingModels(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		// T_c = 1000 + 10·(0.01·100 + 5) = 1060.
		{"T_c", TimeCheckpointFaultFree(1000, 0.01, 100, 5, 100), 1060},
		// T_cf = 1000·(1 + 6/100)/(1 − 150/1000) = 1060/0.85.
		{"T_cf", TimeCheckpointFT(1000, 0.01, 100, 5, 100, 1000, 0.5), 1060 / 0.85},
		// T_p = 1000·(1 + 1/100) = 1010.
		{"T_p", TimeProtocolFaultFree(1000, 1, 100), 1010},
		// T_pf = 1010/(1 − 102/1000) = 1010/0.898.
		{"T_pf", TimeProtocolFT(1000, 1, 100, 1000, 2), 1010 / 0.898},
		// Eq. 4.19 (DP): T_o/(1 − (t_i + δ)/m) with t_i = 2, δ = 0.1, m = 400.
		{"T_pf_DP_eq4.19", TimeProtocolFT(500, 0, 2, 400, 0.1), 500 / (1 - 2.1/400)},
		// Thesis §3.5 setting: MTTF 400 s, CP/R every 400 s → diverges.
		{"T_cf_diverges", TimeCheckpointFT(1000, 0.01, 48, 5, 400, 400, 0.1), math.Inf(1)},
		{"T_pf_diverges", TimeProtocolFT(1000, 0, 390, 400, 10), math.Inf(1)},
		// No failures (m → ∞): T_cf → T_c, T_pf → T_p.
		{"T_cf_no_failures", TimeCheckpointFT(1000, 0.01, 100, 5, 100, math.Inf(1), 0.5), 1060},
		{"T_pf_no_failures", TimeProtocolFT(1000, 1, 100, math.Inf(1), 2), 1010},
	}
	for _, tc := range tests {
		if !relClose(tc.got, tc.want, 1e-14) {
			t.Errorf("%s = %.15g, want %.15g", tc.name, tc.got, tc.want)
		}
	}
	// Fixed points of the derivations: T_cf = T_c + (T_cf/m)(c + βN), T_pf = T_p + (T_pf/m)(c + δ).
	To, alpha, N, d, c, m, beta, gamma, delta := 3600.0, 0.02, 64, 30.0, 600.0, 7200.0, 2.0, 0.5, 5.0
	tcf := TimeCheckpointFT(To, alpha, N, d, c, m, beta)
	if rhs := TimeCheckpointFaultFree(To, alpha, N, d, c) + tcf/m*(c+beta*float64(N)); !relClose(tcf, rhs, 1e-12) {
		t.Errorf("T_cf %g does not satisfy its defining equation (%g)", tcf, rhs)
	}
	tpf := TimeProtocolFT(To, gamma, c, m, delta)
	if rhs := TimeProtocolFaultFree(To, gamma, c) + tpf/m*(c+delta); !relClose(tpf, rhs, 1e-12) {
		t.Errorf("T_pf %g does not satisfy its defining equation (%g)", tpf, rhs)
	}
	if tpf >= tcf {
		t.Errorf("with βN ≫ δ expected T_pf < T_cf, got %g ≥ %g", tpf, tcf)
	}
}

// noThreeConsecutive is the ring rule of Lemma 3.4, coded independently of Survivable:
// some window {i, i+1, i+2} (mod N) entirely failed is fatal.
func noThreeConsecutive(N int, failed []bool) bool {
	for i := 0; i < N; i++ {
		if failed[i] && failed[(i+1)%N] && failed[(i+2)%N] {
			return false
		}
	}
	return true
}

func TestSurvivableBruteForce(t *testing.T) {
	for N := 3; N <= 12; N++ {
		best := 0
		failed := make([]bool, N)
		for mask := uint(0); mask < 1<<N; mask++ {
			for i := range failed {
				failed[i] = mask&(1<<i) != 0
			}
			s := Survivable(N, failed)
			if s != noThreeConsecutive(N, failed) {
				t.Fatalf("N=%d mask=%b: Survivable=%v disagrees with the three-consecutive rule", N, mask, s)
			}
			if s {
				best = max(best, bits.OnesCount(mask))
			}
		}
		if best != MaxTolerated(N) {
			t.Errorf("N=%d: brute-force max survivable %d, MaxTolerated %d", N, best, MaxTolerated(N))
		}
		if best != 2*N/3 {
			t.Errorf("N=%d: max %d ≠ ⌊2N/3⌋", N, best)
		}
	}
}

func TestSurvivableSmallRings(t *testing.T) {
	tests := []struct {
		name   string
		N      int
		failed []bool
		want   bool
	}{
		{"empty_ring", 0, nil, true},
		{"one_alive", 1, []bool{false}, true},
		{"one_failed", 1, []bool{true}, false}, // no neighbour holds its data
		{"two_none", 2, []bool{false, false}, true},
		{"two_one", 2, []bool{true, false}, true}, // the other process holds its data
		{"two_both", 2, []bool{true, true}, false},
		{"three_all", 3, []bool{true, true, true}, false},
		{"three_two", 3, []bool{true, false, true}, true},
		{"length_mismatch", 3, []bool{true}, false},
		{"negative", -1, nil, false},
		// Six processes, failures at 1,2 and 4,5: the paper's pattern of two out of three.
		{"six_2of3", 6, []bool{false, true, true, false, true, true}, true},
		{"six_wrap", 6, []bool{true, false, false, false, true, true}, false}, // 4,5,0 consecutive
	}
	for _, tc := range tests {
		if got := Survivable(tc.N, tc.failed); got != tc.want {
			t.Errorf("%s: Survivable = %v, want %v", tc.name, got, tc.want)
		}
	}
	for N, want := range map[int]int{-3: 0, 0: 0, 1: 0, 2: 1, 3: 2, 4: 2, 5: 3, 6: 4, 7: 4, 8: 5, 24: 16, 100: 66} {
		if got := MaxTolerated(N); got != want {
			t.Errorf("MaxTolerated(%d) = %d, want %d", N, got, want)
		}
	}
	// N = 1, 2 by brute force too.
	if MaxTolerated(1) != 0 || !Survivable(2, []bool{false, true}) || Survivable(2, []bool{true, true}) {
		t.Error("small rings disagree with MaxTolerated")
	}
}

// protocolCounts counts, from the steps of protocol 1.1 (Kabir §5.4), the non-FT and
// explicit FT messages at an iteration with dependency distance w on N processes P_1..P_N:
// P_m requests from P_{m−w} when m − w ≥ 1 (request + reply), and sends an explicit
// message in step 1 when its receiver set is empty (m ≤ w) and in step 2 when its sender
// set is empty (m + w > N).
func protocolCounts(N, w int) (nonFT, extra int) {
	for m := 1; m <= N; m++ {
		if m-w >= 1 {
			nonFT += 2
		} else {
			extra++
		}
		if m+w > N {
			extra++
		}
	}
	return nonFT, extra
}

func TestKnapsackMessages(t *testing.T) {
	for N := 2; N <= 40; N++ {
		sumNon, sumExtra := 0, 0
		for w := 1; w <= N-1; w++ {
			non, extra := protocolCounts(N, w)
			if got := KnapsackMessagesPerIteration(N, w); got != non {
				t.Errorf("N=%d w=%d: eq. 5.6 gives %d, protocol count %d", N, w, got, non)
			}
			if got := KnapsackExtraMessages(N, w); got != extra {
				t.Errorf("N=%d w=%d: extra %d, protocol count %d", N, w, got, extra)
			}
			if got := KnapsackFTMessagesPerIteration(N); got != non+extra {
				t.Errorf("N=%d w=%d: eq. 5.8 gives %d, protocol count %d", N, w, got, non+extra)
			}
			sumNon += non
			sumExtra += extra
		}
		// Averages over w uniform on {1..N−1} (eq. 5.7): both equal N.
		if sumNon != KnapsackMessagesAverage(N)*(N-1) || sumExtra != KnapsackExtraMessagesAverage(N)*(N-1) {
			t.Errorf("N=%d: averages %g, %g; want %d", N, float64(sumNon)/float64(N-1), float64(sumExtra)/float64(N-1), N)
		}
	}
	tests := []struct {
		name      string
		got, want int
	}{
		{"best_12", KnapsackExtraMessagesBest(12), 2},
		{"worst_12", KnapsackExtraMessagesWorst(12), 22},
		{"average_12", KnapsackExtraMessagesAverage(12), 12},
		{"best_2", KnapsackExtraMessagesBest(2), 2},
		{"worst_2", KnapsackExtraMessagesWorst(2), 2},
		{"worst_48", KnapsackExtraMessagesWorst(48), 94},
		{"single_process", KnapsackExtraMessagesAverage(1), 0},
		{"clamped_w", KnapsackMessagesPerIteration(10, 15), 0},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

func TestLCSAndTSPMessages(t *testing.T) {
	// The LCS wavefront is the knapsack pattern with w = 1 (left-neighbour dependency).
	for N := 2; N <= 40; N++ {
		non, extra := protocolCounts(N, 1)
		if LCSMessagesPerIteration(N) != non || LCSFTMessagesPerIteration(N) != non+extra {
			t.Errorf("N=%d: LCS counts (%d, %d) vs protocol (%d, %d)", N,
				LCSMessagesPerIteration(N), LCSFTMessagesPerIteration(N), non, non+extra)
		}
		if LCSExtraMessages(N) != 2 {
			t.Errorf("N=%d: LCS extra %d, want 2 (eq. 4.13 − 4.12)", N, LCSExtraMessages(N))
		}
		if TSPExtraMessages(N) != 0 {
			t.Errorf("N=%d: TSP extra must be 0", N)
		}
	}
	if LCSMessagesPerIteration(8) != 14 || LCSFTMessagesPerIteration(8) != 16 || LCSExtraMessages(1) != 0 {
		t.Error("LCS hand values: 2(N−1) = 14, 2N = 16 at N = 8; 0 extra for one process")
	}
}

func TestCriticalGains(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"TSP_s5", TSPCriticalGain(5), 0.8},         // thesis: ≈ 80 %
		{"TSP_s13", TSPCriticalGain(13), 12.0 / 13}, // thesis: ≈ 92.30 %
		{"TSP_s2", TSPCriticalGain(2), 0.5},
		{"TSP_s1", TSPCriticalGain(1), 0},
		{"LCS", LCSCriticalGain(), 2.0 / 3}, // thesis: ≈ 66.6 %
	}
	for _, tc := range tests {
		if !relClose(tc.got, tc.want, 1e-15) {
			t.Errorf("%s = %.15g, want %.15g", tc.name, tc.got, tc.want)
		}
	}
	if math.Abs(TSPCriticalGain(13)*100-92.30) > 0.01 {
		t.Errorf("TSP s=13 gain %.4f %%, thesis 92.30 %%", TSPCriticalGain(13)*100)
	}
	if !math.IsNaN(TSPCriticalGain(0)) {
		t.Error("s = 0 must give NaN")
	}
}
