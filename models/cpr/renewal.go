package cpr

// This file holds what the Poisson formulas need to be applied to Weibull node
// failures: the expected number of failures of a node position over a run (its
// renewal function) and the makespan a model predicts when the failure rate it is
// given is the platform's mean rate over the predicted makespan itself.

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// renewalPoints is the number of intervals of the grid on which WeibullRenewal
// solves the renewal equation: against the exact values for exponential lifetimes
// and against Monte Carlo it is within 10⁻⁴ relative (renewal_test.go).
const renewalPoints = 1000

// renewalAsymptote is the horizon, in mean inter-failure times (lifetime plus
// delay), beyond which WeibullRenewal uses the renewal theorem's asymptote: there
// it is within 10⁻⁴ of the grid's value for shapes 0.5 to 3 (renewal_test.go).
const renewalAsymptote = 60

// WeibullRenewal is the expected number of failures in [0, t] of one node
// position: its node, new at time 0, fails after a Weibull lifetime of shape k
// and scale eta (CDF F(x) = 1 − e^{−(x/η)^k}), and a new node takes its place
// delay after each failure, with a lifetime that starts afresh (ftsim's cold
// spares start their failure clock when they are taken). It solves the renewal
// equation
//
//	M(t) = F(t) + ∫₀^{t−d} M(t − d − x) dF(x)
//
// on a grid of renewalPoints intervals (the integral as a sum over F's
// increments, so the infinite density at 0 of a shape below 1 costs no
// accuracy), and beyond renewalAsymptote mean inter-failure times uses the
// renewal theorem, M(t) ≈ (t + d)/m + (σ²/m² − 1)/2 with m = ηΓ(1 + 1/k) + d and
// σ² the lifetime's variance. With k = 1 and no delay it is t/η exactly; with
// k < 1 (decreasing hazard) it is above t/m, with k > 1 below. Invalid
// arguments (k or eta ≤ 0, a negative delay or t) give NaN.
func WeibullRenewal(k, eta, delay, t float64) float64 {
	return weibullRenewal(k, eta, delay, t, false)
}

// WeibullRenewalStationary is WeibullRenewal for a node position whose first
// node has been in service long enough for its failures to be a stationary
// process: the first failure comes after the residual life of a node met at a
// random time, of density (1 − F(x))/μ (CDF F_e(x) = P(1/k, (x/η)^k), the
// regularized incomplete gamma function), and every replacement is new:
//
//	M_s(t) = F_e(t) + ∫₀^{t−d} M(t − d − x) dF_e(x).
//
// Without delay it is t/μ exactly, whatever the shape; beyond renewalAsymptote
// mean inter-failure times it is 1 + (t − E[X²]/2μ)/m + (σ²/m² − 1)/2.
func WeibullRenewalStationary(k, eta, delay, t float64) float64 {
	return weibullRenewal(k, eta, delay, t, true)
}

func weibullRenewal(k, eta, delay, t float64, stationary bool) float64 {
	if invalid(delay, t) || !(k > 0) || !(eta > 0) || math.IsInf(k+eta+delay+t, 0) {
		return math.NaN()
	}
	mean := WeibullMean(k, eta)
	m := mean + delay
	if t > renewalAsymptote*m {
		v := eta*eta*math.Gamma(1+2/k) - mean*mean
		if stationary {
			residual := (v + mean*mean) / (2 * mean) // the mean residual life E[X²]/2μ
			return 1 + (t-residual)/m + (v/(m*m)-1)/2
		}
		return (t+delay)/m + (v/(m*m)-1)/2
	}
	if t == 0 {
		return 0
	}
	M := renewalGrid(k, eta, delay, t, stationary, false)
	return M[len(M)-1]
}

// WeibullRenewalRates returns the mean failure rate of a node position over
// each of renewalPoints equal cells of [0, t] (the increments of WeibullRenewal's
// grid, or WeibullRenewalStationary's, over the cell width), and that width.
// It needs t ≤ RenewalGridLimit; beyond it the rate is the renewal theorem's
// 1/(mean lifetime + delay).
func WeibullRenewalRates(k, eta, delay, t float64, stationary bool) (rates []float64, width float64) {
	if invalid(delay, t) || !(k > 0) || !(eta > 0) || !(t > 0) || t > RenewalGridLimit(k, eta, delay) {
		return nil, math.NaN()
	}
	M := renewalGrid(k, eta, delay, t, stationary, true)
	width = t / float64(len(M)-1)
	rates = make([]float64, len(M)-1)
	for i := range rates {
		rates[i] = (M[i+1] - M[i]) / width
	}
	return rates, width
}

// RenewalFailures describes n node positions of Weibull lifetimes (shape k,
// scale eta, each node replaced delay after it fails, the first ones new or,
// if stationary, in service) with failures at a constant rate extra on top.
// The function it returns gives, for a run of h seconds, the expected number
// of failures ∫₀^h Λ and ∫₀^h √Λ, Λ being the expected failure rate at each
// moment (what HazardMakespan needs).
func RenewalFailures(n, extra, k, eta, delay float64, stationary bool) func(h float64) (count, root float64) {
	renewal := WeibullRenewal
	if stationary {
		renewal = WeibullRenewalStationary
	}
	return func(h float64) (count, root float64) {
		count = n*renewal(k, eta, delay, h) + extra*h
		grid := math.Min(h, RenewalGridLimit(k, eta, delay))
		rates, width := WeibullRenewalRates(k, eta, delay, grid, stationary)
		for _, m := range rates {
			root += math.Sqrt(n*m+extra) * width
		}
		if h > grid { // beyond it, the renewal theorem's rate
			root += (h - grid) * math.Sqrt(n/(WeibullMean(k, eta)+delay)+extra)
		}
		return count, root
	}
}

// RenewalGridLimit is the horizon beyond which WeibullRenewal takes the
// renewal theorem's asymptote rather than its grid.
func RenewalGridLimit(k, eta, delay float64) float64 {
	return renewalAsymptote * (WeibullMean(k, eta) + delay)
}

// renewalGrid is the renewal function at the points of a grid of
// renewalPoints intervals over [0, t]; for a stationary start every point
// only if all (else the last one alone is right).
func renewalGrid(k, eta, delay, t float64, stationary, all bool) []float64 {
	mean := WeibullMean(k, eta)
	n := renewalPoints
	h := t / float64(n)
	scaled := func(x float64) float64 { return math.Pow(x/eta, k) }
	F, w0, w1 := increments(n, h,
		func(x float64) float64 { return -math.Expm1(-scaled(x)) },
		func(x float64) float64 { return mean * mathext.GammaIncReg(1+1/k, scaled(x)) })
	// M[i] = M(t_i); S[i] = M(t_i − d), interpolated: t_i − d lies a fixed
	// fraction frac past grid point i − lag.
	M := make([]float64, n+1)
	S := make([]float64, n+1)
	lag := n + 1 // a delay beyond the horizon: no replacement fails within it
	if delay/h <= float64(n) {
		lag = int(math.Ceil(delay / h))
	}
	frac := float64(lag) - delay/h // weight of M[i−lag+1]
	if delay == 0 {
		frac = 0
	}
	shifted := func(i int) (known, self float64) {
		switch lo := i - lag; {
		case lo < 0:
			return 0, 0
		case lo == i: // no delay: S[i] is M[i]
			return 0, 1
		case frac == 0:
			return M[lo], 0
		case lo+1 == i:
			return M[lo] * (1 - frac), frac
		default:
			return M[lo]*(1-frac) + M[lo+1]*frac, 0
		}
	}
	for i := 1; i <= n; i++ {
		sum := w0[1] * S[i-1]
		for j := 2; j <= i; j++ {
			sum += w1[j]*S[i-j+1] + w0[j]*S[i-j]
		}
		// S[i] may depend on M[i] itself (a delay shorter than a step): solve
		// M[i] = F(t_i) + w1₁(known + self·M[i]) + sum
		known, self := shifted(i)
		M[i] = (F[i] + w1[1]*known + sum) / (1 - w1[1]*self)
		S[i] = known + self*M[i]
	}
	if !stationary {
		return M
	}
	// the first failure after a residual life, then M of a new node: ∫ x dF_e
	// = (η²/kμ)·Γ(2/k)·P(2/k, (x/η)^k)
	Fe, we0, we1 := increments(n, h,
		func(x float64) float64 { return mathext.GammaIncReg(1/k, scaled(x)) },
		func(x float64) float64 {
			return eta * eta / (k * mean) * math.Gamma(2/k) * mathext.GammaIncReg(2/k, scaled(x))
		})
	Ms := make([]float64, n+1)
	first := n
	if all {
		first = 1
	}
	for i := first; i <= n; i++ {
		Ms[i] = Fe[i]
		for j := 1; j <= i; j++ {
			Ms[i] += we1[j]*S[i-j+1] + we0[j]*S[i-j]
		}
	}
	return Ms
}

// increments returns, on a grid of n intervals of length h, a distribution's
// CDF at the grid points, F[j] = F(x_j), and the weights that integrate a
// function linear over each interval against it exactly: over (x_{j−1}, x_j]
// the function is taken at the interval's conditional mean x_{j−1} + θ_j·h
// (from partial(x) = ∫₀ˣ u dF(u)), which weighs its value at x_{j−1} by
// w1[j] = dF_j(1 − θ_j) and at x_j by w0[j] = dF_j·θ_j. With a shape below 1
// most of the first interval's mass is near 0, where the trapezoid rule's
// θ = ½ errs by 10⁻³ after 60 lifetimes.
func increments(n int, h float64, cdf, partial func(float64) float64) (F, w0, w1 []float64) {
	F = make([]float64, n+1)
	w0 = make([]float64, n+1)
	w1 = make([]float64, n+1)
	prevMoment := 0.0
	for j := 1; j <= n; j++ {
		x := float64(j) * h
		F[j] = cdf(x)
		moment := partial(x)
		dF := F[j] - F[j-1]
		theta := 0.5
		if dF > 0 {
			theta = min(1, max(0, ((moment-prevMoment)/dF-(x-h))/h))
		}
		w0[j], w1[j] = dF*theta, dF*(1-theta)
		prevMoment = moment
	}
	return F, w0, w1
}

// SolveMakespan returns the makespan E that a model predicts when the failure
// rate it is given is the platform's mean rate over E itself: the root of
// E = f(rate(E)), where rate(h) is the mean number of failures per second in a
// run of length h (for exponential failures a constant; for Weibull ones it
// depends on the horizon). T, the fault-free time, is where the search starts.
// Failures of a rate that changes with the run's age are not memoryless, so this
// is a first-order use of the Poisson formulas: the expected number of failures
// in the run is the right one. If f gives no finite positive value, neither
// does SolveMakespan.
func SolveMakespan(T float64, f func(rate float64) float64, rate func(horizon float64) float64) float64 {
	return solveMakespan(T, func(e float64) float64 { return f(rate(e)) })
}

// solveMakespan returns the root E of model(E) = E, searched from T: a model
// of the makespan whose inputs depend on the makespan itself. If the model
// gives no finite positive value on the way, neither does solveMakespan.
func solveMakespan(T float64, model func(e float64) float64) float64 {
	// a model that gives no positive makespan does not apply there
	g := func(e float64) float64 {
		if x := model(e); x > 0 {
			return x - e
		}
		return math.NaN()
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if !(T > 0) || !finite(T) {
		return math.NaN()
	}
	a, ga := T, g(T)
	if !finite(ga) || ga == 0 {
		return ga + T
	}
	// find b with g(b) of the other sign: upward (by doubling) when the model
	// predicts more than T, downward when less
	step := 2.0
	if ga < 0 {
		step = 0.5
	}
	b, gb := a, ga
	for i := 0; ; i++ {
		b *= step
		// (a model that predicts less than a thousandth of T, or gets no
		// shorter below it, is not a makespan model)
		if gb = g(b); !finite(gb) || i == 1100 || step < 1 && i == 10 {
			return math.NaN()
		}
		if gb == 0 {
			return b
		}
		if (gb < 0) != (ga < 0) {
			break
		}
		a, ga = b, gb
	}
	// Illinois (regula falsi that halves the weight of an end kept twice) on
	// log E, where the bracket may span decades
	la, lb := math.Log(a), math.Log(b)
	side := 0
	for range 200 {
		lc := (la*gb - lb*ga) / (gb - ga)
		c := math.Exp(lc)
		gc := g(c)
		if !finite(gc) {
			return math.NaN()
		}
		if gc == 0 {
			return c
		}
		if (gc < 0) == (gb < 0) {
			lb, gb = lc, gc
			if side == -1 {
				ga /= 2
			}
			side = -1
		} else {
			la, ga = lc, gc
			if side == 1 {
				gb /= 2
			}
			side = 1
		}
		if math.Abs(lb-la) < 1e-13*math.Max(1, math.Abs(lc)) {
			return math.Exp((la + lb) / 2)
		}
	}
	return math.Exp((la + lb) / 2)
}
