package replication

import (
	"math"

	"gonum.org/v1/gonum/integrate/quad"

	"ftsim/models/cpr"
	"ftsim/sim"
)

// MNFTI is the mean number of failures to interruption of b replica pairs
// when every failure strikes one of the 2b processors uniformly, dead ones
// included (Casanova et al.'s MNFTI^ah): 1 + 4^b / C(2b, b). b = 1 gives 3,
// b = 2 11/3. Computed through log-gamma, so that b in the thousands does not
// overflow.
func MNFTI(b int) float64 {
	if b < 1 {
		return math.NaN()
	}
	fb := float64(b)
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	lnC := lg(2*fb+1) - 2*lg(fb+1)
	return 1 + math.Exp(fb*math.Ln2*2-lnC)
}

// MNFTIRunning is the mean number of failures of live processors to
// interruption (MNFTI^rp), which a simulation counts: with k pairs degraded,
// a failure strikes one of the 2b−k live processors, the survivor of a
// degraded pair with probability k/(2b−k).
func MNFTIRunning(b int) float64 {
	if b < 1 {
		return math.NaN()
	}
	e := 1.0 // E(b): every pair degraded, the next failure interrupts
	for k := b - 1; k >= 0; k-- {
		live := float64(2*b - k)
		e = 1 + 2*float64(b-k)/live*e
	}
	return e
}

// MTTI is the mean time to interruption of b replica pairs on 2b nodes whose
// failures are exponential with mean nodeMTBF each: MNFTI platform MTBFs.
// (Failures of dead nodes, which MNFTI counts, do not happen, but thinning a
// Poisson process by the nodes that are dead leaves its interruption time as it
// is.)
func MTTI(nodeMTBF sim.Time, b int) sim.Time {
	return sim.Time(float64(nodeMTBF) * MNFTI(b) / float64(2*b))
}

// PairReliability is the probability that b replica pairs, all intact at
// time 0, have not lost both nodes of any pair by time t when every node
// fails exponentially at rate lambda, with no repair: (1 − (1 − e^{−λt})²)^b.
func PairReliability(lambda, t float64, b int) float64 {
	f := -math.Expm1(-lambda * t) // a node has failed by t
	return math.Exp(float64(b) * math.Log1p(-f*f))
}

// RestartPeriod is the first-order optimal checkpoint period (of work) of
// the restart strategy, where every lost replica is re-created after each
// checkpoint, so that each period starts with b intact pairs: (3C/(4bλ²))^⅓
// for a checkpoint cost C and node failure rate λ.
//
// Derivation. A pair loses both nodes within a period T with probability
// (1 − e^{−λT})² ≈ λ²T², at the later of two failures uniform over the
// period, 2T/3 on average; the waste per unit of work is then about
// C/T + b·λ²T²·(2T/3)/T, least where C/T² = (4/3)bλ²T. Benoit, Herault, Le
// Fèvre and Robert (SC'19) show the period of this strategy grows as
// λ^{−2/3}, against λ^{−1/2} for Young/Daly at the mean time to
// interruption.
func RestartPeriod(c, lambda float64, b int) float64 {
	return math.Cbrt(3 * c / (4 * float64(b) * lambda * lambda))
}

// RestartMean is the exact expected makespan of W seconds of replicated work
// checkpointed after every tau seconds of work at cost C under the restart
// strategy, with b pairs of nodes failing exponentially at rate lambda: each
// segment (tau + C, the last one W's remainder without checkpoint) starts
// with every pair intact (a checkpoint restarts the lost replicas, a
// rollback replaces every dead node) and is tried again, after a recovery R
// that no failure interrupts, until no pair loses both nodes within it. A
// segment of length L takes (∫₀ᴸ S(t)dt + (1 − S(L))R)/S(L), S the pairs'
// reliability (PairReliability). The restarts' copies are not counted: they
// take a piece's transfer over the network, after the checkpoints that
// follow failures only. Invalid inputs give NaN.
func RestartMean(lambda float64, b int, W, tau, C, R float64) float64 {
	if !(lambda >= 0 && W >= 0 && tau > 0 && C >= 0 && R >= 0) || b < 1 {
		return math.NaN()
	}
	seg := func(l float64) float64 {
		s := PairReliability(lambda, l, b)
		up := quad.Fixed(func(t float64) float64 { return PairReliability(lambda, t, b) }, 0, l, 64, nil, 0)
		return (up + (1-s)*R) / s
	}
	full, last := cpr.PeriodicSplit(W, tau)
	m := seg(last)
	if full > 0 {
		m += full * seg(tau+C)
	}
	return m
}
