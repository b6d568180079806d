// Package abft implements algorithm-based fault tolerance (FTPIDA* ring replication,
// DP critical data, knapsack flag bits) and its closed-form models.
package abft

// This file holds the closed-form models of Kabir's ABFT thesis: the timing models of
// blocking coordinated checkpoint/restart (T_cf) and of the ABFT protocols (T_pf)
// (§3.4.1 for FTPIDA*, §4.4.3 eqs. 4.14-4.19 for dynamic programming), the failure
// tolerance of FTPIDA*'s ring replication (Lemma 3.4), the extra-message counts of the DP
// protocols (§4.4.2 eqs. 4.11-4.13, §5.5.1 eqs. 5.6-5.8) and the storage gains of saving
// only critical data (§4.4.1).
//
// Timing symbols (thesis §3.4.1 / §4.4.3): T_o runtime without fault tolerance; m MTTF;
// c the coordination (checkpoint) interval; d (t_c in chapter 4) the checkpoint time of a
// process; αN the coordination time of N processes; βN the cost of restarting all N
// processes; γ the cost of building and sending the fault-recovery message once per
// interval; δ the cost of restarting one failed process. Both models are worst case: each
// failure loses a whole interval c, and the number of failures is n = T/m over the
// failure-stretched run T. Times in seconds (any consistent unit).

import "math"

// TimeCheckpointFaultFree is the worst-case fault-free runtime of blocking coordinated
// checkpoint/restart, T_c = T_o + (T_o/c)(αN + d) (Kabir, §3.4.1; eq. 4.14 with d = t_c):
// one coordination of cost αN plus one checkpoint of duration d every c units of work.
func TimeCheckpointFaultFree(To, alpha float64, N int, d, c float64) float64 {
	return To + To/c*(alpha*float64(N)+d)
}

// TimeCheckpointFT is the worst-case runtime of blocking coordinated checkpoint/restart
// with failures (Kabir, §3.4.1 and eq. 4.16):
//
//	T_cf = T_o (1 + (αN + d)/c) / (1 − (c + βN)/m),
//
// from T_cf = T_c + n(c + βN) with n = T_cf/m: every failure rolls all N processes back
// by a whole interval c and restarts them all (βN). It returns +Inf when m ≤ c + βN.
func TimeCheckpointFT(To, alpha float64, N int, d, c, m, beta float64) float64 {
	den := 1 - (c+beta*float64(N))/m
	if den <= 0 {
		return math.Inf(1)
	}
	return To * (1 + (alpha*float64(N)+d)/c) / den
}

// TimeProtocolFaultFree is the fault-free runtime of FTPIDA*, T_p = T_o(1 + γ/c) (Kabir,
// §3.4.1): a fault-recovery message of cost γ every c units. The thesis notes γ is
// negligible (asynchronous sends) so T_p ≈ T_o; it is also the best-case runtime with
// failures, when no failed process's stack leads to the goal.
func TimeProtocolFaultFree(To, gamma, c float64) float64 {
	return To * (1 + gamma/c)
}

// TimeProtocolFT is the worst-case runtime of the ABFT protocol with failures (Kabir,
// §3.4.1 for FTPIDA*):
//
//	T_pf = T_o (1 + γ/c) / (1 − (c + δ)/m),
//
// from T_pf = T_p + n(c + δ) with n = T_pf/m: every failure is a single-process failure
// whose lost work (up to one interval c) lies on the path to the goal, plus the restart δ
// of that process only. The DP version, eq. 4.19, is T_o/(1 − (t_i + δ)/m), i.e. this
// function with γ = 0 and c = t_i (one iteration). It returns +Inf when m ≤ c + δ.
func TimeProtocolFT(To, gamma, c, m, delta float64) float64 {
	den := 1 - (c+delta)/m
	if den <= 0 {
		return math.Inf(1)
	}
	return To * (1 + gamma/c) / den
}

// MaxTolerated is the largest number of simultaneous process failures FTPIDA* survives
// in a ring of N processes (Kabir, Lemma 3.4): ⌊N/3⌋·2 + ⌊(N mod 3)/2⌋, which equals
// ⌊2N/3⌋. Each process replicates its critical data to both ring neighbours, so a failure
// set is survivable iff no three ring-consecutive processes fail (Survivable); the bound
// is attained by failing two processes out of every three. N ≤ 0 gives 0.
func MaxTolerated(N int) int {
	if N <= 0 {
		return 0
	}
	return N/3*2 + (N%3)/2
}

// Survivable reports whether FTPIDA* recovers from the simultaneous failure of the
// processes marked in failed, in a ring of N processes (Kabir, §3.3 and Lemma 3.4): every
// failed process must have at least one surviving ring neighbour, which holds its
// critical data (FRM/FRI). For N ≥ 3 this is "no three ring-consecutive processes fail";
// for N = 2 both neighbours of a process are the other process, so only the failure of
// both is fatal; for N = 1 the process has no one to hold its data, so its failure is
// fatal. len(failed) must equal N (otherwise, or for N < 0, false).
func Survivable(N int, failed []bool) bool {
	if N < 0 || len(failed) != N {
		return false
	}
	for i, f := range failed {
		if !f {
			continue
		}
		left, right := (i+N-1)%N, (i+1)%N
		if (failed[left] || left == i) && (failed[right] || right == i) {
			return false
		}
	}
	return true
}

// LCSMessagesPerIteration is the number of messages per iteration of the fine-grained
// (one column per process) non-fault-tolerant LCS wavefront on N processes (Kabir,
// eq. 4.12): every process but the leftmost sends a request to its left neighbour and
// gets a reply, 2(N − 1). N < 2 gives 0.
func LCSMessagesPerIteration(N int) int {
	if N < 2 {
		return 0
	}
	return 2 * (N - 1)
}

// LCSFTMessagesPerIteration is the number of messages per iteration of the LCS
// wavefront under protocol 1 (Kabir, eq. 4.13): 2(N − 1) + 2 = 2N, the two border
// processes (whose receiver or sender set is empty) sending their critical data in an
// explicit message. N < 2 gives 0.
func LCSFTMessagesPerIteration(N int) int {
	if N < 2 {
		return 0
	}
	return 2 * N
}

// LCSExtraMessages is the number of extra messages per iteration that protocol 1 adds to
// the fine-grained LCS wavefront on N processes: eq. 4.13 − eq. 4.12 = 2, independent of
// N (Kabir §4.4.2), enough to withstand two consecutive process failures. Multiply by
// the number of iterations for a run. N < 2 gives 0 (no other process to replicate to).
func LCSExtraMessages(N int) int {
	return LCSFTMessagesPerIteration(N) - LCSMessagesPerIteration(N)
}

// TSPExtraMessages is the number of extra messages protocol 1 adds to the parallel
// Held-Karp TSP on N processes: 0, because at every iteration s each process already
// exchanges request/reply messages with s others and the critical data is piggybacked on
// them (Kabir §4.4.2, after eq. 4.11).
func TSPExtraMessages(N int) int {
	return 0
}

// clampWeight bounds the dependency distance w to [0, N].
func clampWeight(N, w int) int {
	return min(max(w, 0), N)
}

// KnapsackMessagesPerIteration is the number of messages at an iteration with
// dependency distance (item weight) w of the fine-grained non-FT 0/1 knapsack DP on N
// processes (Kabir, eq. 5.6): the N − w processes P_{w+1}..P_N request f(i−1, m−w) and get
// a reply, 2(N − w). w is clamped to [0, N]; N < 2 gives 0.
func KnapsackMessagesPerIteration(N, w int) int {
	if N < 2 {
		return 0
	}
	return 2 * (N - clampWeight(N, w))
}

// KnapsackFTMessagesPerIteration is the number of messages per iteration of the
// fine-grained 0/1 knapsack DP under protocol 1.1 (Kabir, eq. 5.8): 2(N − w) + 2w = 2N,
// whatever the weight w ∈ [1, N − 1]. N < 2 gives 0.
func KnapsackFTMessagesPerIteration(N int) int {
	if N < 2 {
		return 0
	}
	return 2 * N
}

// KnapsackExtraMessages is the number of explicit messages protocol 1.1 adds at an
// iteration with dependency distance w (Kabir, eq. 5.8 − eq. 5.6): 2w — the w processes
// P_1..P_w with an empty receiver set send their flag bit explicitly (step 1) and the w
// processes P_{N−w+1}..P_N with an empty sender set send flag and value explicitly
// (step 2). The count holds for every w (for w > N/2 some processes send both messages,
// which the thesis's phrase "2w_i processes" glosses over). w is clamped to [0, N];
// N < 2 gives 0.
func KnapsackExtraMessages(N, w int) int {
	if N < 2 {
		return 0
	}
	return 2 * clampWeight(N, w)
}

// KnapsackMessagesAverage is the average number of non-FT messages per iteration of the
// fine-grained 0/1 knapsack DP on N processes, with the weight w uniform on {1, …, N−1}
// (Kabir, eq. 5.7): (1/(N−1)) Σ 2(N − w) = N. N < 2 gives 0.
func KnapsackMessagesAverage(N int) int {
	if N < 2 {
		return 0
	}
	return N
}

// KnapsackExtraMessagesAverage is the average number of extra messages per iteration
// protocol 1.1 adds, with w uniform on {1, …, N−1} (Kabir, eqs. 5.7-5.8: 2N − N): N.
// N < 2 gives 0.
func KnapsackExtraMessagesAverage(N int) int {
	if N < 2 {
		return 0
	}
	return N
}

// KnapsackExtraMessagesBest is the fewest extra messages per iteration protocol 1.1
// adds, at w = 1 (Kabir §5.5.1, from eq. 5.6): 2N − 2(N − 1) = 2. N < 2 gives 0.
func KnapsackExtraMessagesBest(N int) int {
	return KnapsackExtraMessages(N, 1)
}

// KnapsackExtraMessagesWorst is the most extra messages per iteration protocol 1.1 adds,
// at w = N − 1 (Kabir §5.5.1, from eq. 5.6): 2N − 2 = 2(N − 1). N < 2 gives 0.
func KnapsackExtraMessagesWorst(N int) int {
	return KnapsackExtraMessages(N, N-1)
}

// CriticalGain is the fraction of backup storage saved by replicating only the one
// dependency (out of `dependencies`) that produced a subproblem's optimum instead of all
// of them (Kabir §4.4.1): G = (dependencies − 1)/dependencies. dependencies < 1 gives
// NaN.
func CriticalGain(dependencies int) float64 {
	if dependencies < 1 {
		return math.NaN()
	}
	return float64(dependencies-1) / float64(dependencies)
}

// TSPCriticalGain is the backup-size gain of critical data for the Held-Karp TSP at
// subset size s (Kabir §4.4.1): each subproblem depends on s subproblems of the previous
// stage, so G = (R_UB − R_OB)/R_UB = (s − 1)/s (e.g. 4/5 at s = 5, 12/13 at s = 13).
// s < 1 gives NaN.
func TSPCriticalGain(s int) float64 {
	return CriticalGain(s)
}

// LCSCriticalGain is the backup-size gain of critical data for LCS (Kabir §4.4.1): each
// cell depends on three cells, one of which gives its value, G = 2/3.
func LCSCriticalGain() float64 {
	return CriticalGain(3)
}
