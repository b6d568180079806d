package replication

import (
	"math"

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
