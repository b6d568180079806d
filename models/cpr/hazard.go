package cpr

// This file holds the hazard policy: checkpoints placed by the platform's
// current failure rate rather than at a fixed interval. With Weibull
// lifetimes the rate of new nodes falls (shape < 1) or rises (shape > 1)
// with their age, and a spare that replaces a failed node starts its life
// again, so no single MTBF fits the whole run.

import (
	"math"

	"ftsim/sim"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mathext"
)

// FailureLaw is what the hazard policy knows of the failures: the law of a
// node's lifetime and a constant rate on top of the nodes' own.
type FailureLaw struct {
	Shape    float64 // Weibull shape k of a node's lifetime (1: exponential)
	NodeMTBF float64 // a node's mean lifetime, s
	Extra    float64 // failures per second beyond the nodes' own (failure domains, fenced nodes)
}

// NodeRate is the failure rate, per second, of a node at age seconds into its
// life. A new node's is the Weibull hazard (k/η)(age/η)^{k−1}. A node met in
// service, at an unknown point of its life, has the hazard of the stationary
// residual life: S(age)/∫_age^∞ S(u) du, which is 1/MTBF at age 0.
func (l FailureLaw) NodeRate(age float64, inService bool) float64 {
	k := l.Shape
	if k == 1 {
		return 1 / l.NodeMTBF
	}
	eta := WeibullScaleForMean(k, l.NodeMTBF)
	x := age / eta
	newRate := k / eta * math.Pow(x, k-1)
	if !inService {
		return newRate
	}
	// ∫_age^∞ S = (η/k)Γ(1/k)Q(1/k, x^k), in logarithms: both S and Q
	// underflow far in the tail, where the ratio tends to the new node's rate
	q := mathext.GammaIncRegComp(1/k, math.Pow(x, k))
	if !(q > 0) {
		return newRate
	}
	lg, _ := math.Lgamma(1 / k)
	return math.Exp(-math.Pow(x, k) - math.Log(eta/k) - lg - math.Log(q))
}

// hazardQuadrature integrates over [0, 1] with the substitution s = u⁴: the
// density √(Λ/2C) of new nodes with shape k < 1 grows as age^{(k−1)/2} at
// their power-on, and the substitution makes it u^{2k+1}, smooth enough for
// Gauss–Legendre.
type hazardQuadrature struct{ u, w []float64 }

const hazardPoints = 32

func newHazardQuadrature() hazardQuadrature {
	q := hazardQuadrature{u: make([]float64, hazardPoints), w: make([]float64, hazardPoints)}
	quad.Legendre{}.FixedLocations(q.u, q.w, 0, 1)
	return q
}

// integral is ∫_t^{t+tau} f(s) ds.
func (q hazardQuadrature) integral(f func(float64) float64, t, tau float64) float64 {
	sum := 0.0
	for i, u := range q.u {
		u2 := u * u
		sum += q.w[i] * f(t+tau*u2*u2) * 4 * u2 * u
	}
	return sum * tau
}

// HazardInterval is the time τ from t to the next checkpoint under a failure
// rate Λ(s) = rate(s) per second and a checkpoint cost c. Ling, Mi and Lin
// (IEEE Trans. Computers 50(7), 2001) show that the optimal checkpoint
// density is proportional to √Λ; with density √(Λ/2C), which at a constant
// rate 1/μ gives Young's √(2Cμ), the next checkpoint comes when
// ∫_t^{t+τ} √(Λ(s)/2C) ds = 1. τ is at most limit (a rate that falls fast
// enough never reaches 1).
func HazardInterval(c, t, limit float64, rate func(s float64) float64) float64 {
	return solveHazardInterval(newHazardQuadrature(), c, t, limit, rate)
}

func solveHazardInterval(q hazardQuadrature, c, t, limit float64, rate func(float64) float64) float64 {
	density := func(s float64) float64 { return math.Sqrt(rate(s) / (2 * c)) }
	reached := func(tau float64) float64 { return q.integral(density, t, tau) }
	lo, hi := 0.0, math.Min(limit, math.Sqrt(2*c/rate(t+math.Max(c, 1e-9*(1+t)))))
	if !(hi > 0) {
		hi = math.Min(limit, c)
	}
	for reached(hi) < 1 {
		if hi >= limit {
			return limit
		}
		lo, hi = hi, math.Min(2*hi, limit)
	}
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		mid := lo + (hi-lo)/2
		if reached(mid) < 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// cohort is a set of application nodes that began their lives together.
type cohort struct {
	since     float64
	inService bool
	nodes     float64
}

// hazardInterval is the hazard policy's next interval from now: the
// application's nodes, grouped by the start of their lives, fail at the rate
// their ages give them (supposing none fails before), plus the law's
// constant rate.
func (p *Protocol) hazardInterval(c sim.Time) sim.Time {
	rt := p.RT
	law := p.cfg.Law
	if law.Shape == 1 {
		// a constant rate: Young's interval, without quadrature
		return p.optimalAt(c, 1/(float64(len(rt.Slots()))/law.NodeMTBF+law.Extra))
	}
	var groups []cohort
	index := map[cohort]int{}
	for _, n := range rt.Slots() {
		since, inService := rt.NodeLife(n)
		key := cohort{since: since.Seconds(), inService: inService}
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, key)
		}
		groups[i].nodes++
	}
	rate := func(s float64) float64 {
		r := law.Extra
		for _, g := range groups { // in the slots' order: the same sum in every run
			r += g.nodes * law.NodeRate(s-g.since, g.inService)
		}
		return r
	}
	if p.quad.u == nil {
		p.quad = newHazardQuadrature()
	}
	tau := solveHazardInterval(p.quad, c.Seconds(), rt.Now().Seconds(), hazardLimit.Seconds(), rate)
	return max(sim.FromSeconds(tau), sim.Microsecond)
}

// hazardLimit bounds the hazard policy's interval: a law whose rate falls
// fast enough gives an integral that never reaches 1.
const hazardLimit = 100 * 365 * 24 * sim.Hour

// HazardMakespan is the first-order expected makespan of a run of fault-free
// time T under the hazard policy, for a checkpoint cost c and a restart cost
// r. At a failure rate Λ the policy checkpoints √(Λ/2C) times a second, each
// costing C, and a failure costs R and half the interval in effect, so a
// second of the run spends C·√(Λ/2C) + Λ(R + ½√(2C/Λ)) = √(2CΛ) + RΛ:
//
//	E = T + √(2C)·∫₀^E √Λ + R·∫₀^E Λ,
//
// with Λ the platform's expected failure rate at each moment. failures(h)
// returns ∫₀^h Λ (the expected number of failures in [0, h]) and ∫₀^h √Λ. At
// a constant rate 1/μ it is the first-order waste at Young's interval,
// T/(1 − √(2C/μ) − R/μ). NaN when no makespan solves it (the waste reaches
// the whole run).
func HazardMakespan(T, c, r float64, failures func(h float64) (count, root float64)) float64 {
	if c < 0 || r < 0 {
		return math.NaN()
	}
	return solveMakespan(T, func(e float64) float64 {
		count, root := failures(e)
		return T + math.Sqrt(2*c)*root + r*count
	})
}
