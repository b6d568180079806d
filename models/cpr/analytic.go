// Package cpr implements coordinated checkpoint/restart and its closed-form models.
package cpr

// This file holds the closed-form (analytical) models that the checkpoint/restart
// simulation is validated against. All times are float64 seconds (any consistent unit
// works: the formulas are homogeneous), rates are per second.
//
// Common failure model of the exact formulas (see ../shared/VALIDATION.md): failures form
// a Poisson process of rate λ = 1/μ that may strike during work, checkpoint and recovery
// but not during the downtime D; a failure during a checkpoint loses the whole segment;
// the recovery R is paid only after a failure, and a failure during R costs D again and
// restarts R. Under these rules successive segments are independent, so expectations and
// variances of consecutive segments add up.

import "math"

// Segment is one block of work W followed by a checkpoint of duration C, with the
// downtime D and recovery time R that every failure inside the block costs. A final
// segment that is not checkpointed has C = 0. All fields are seconds and must be ≥ 0.
type Segment struct {
	W float64 // work in the segment
	C float64 // checkpoint duration at the end of the segment (0: no checkpoint)
	D float64 // downtime after each failure (failure-free)
	R float64 // recovery (restore) time after each failure (failures may strike it)
}

// invalid reports whether any argument is negative or NaN.
func invalid(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || x < 0 {
			return true
		}
	}
	return false
}

// SegmentMean is the exact expected wall time of one segment,
//
//	E[T] = e^{λR} (1/λ + D) (e^{λ(W+C)} − 1),
//
// from Bougeret, Casanova, Rabie, Robert & Vivien (SC'11) and Hérault & Robert,
// "Fault-Tolerance Techniques for HPC" (2015), under the failure rules of this file
// (Poisson failures at rate lambda striking work, checkpoint and recovery but not the
// downtime; a failure anywhere in W+C restarts the whole segment after D and R).
// lambda = 0 gives W + C. Negative or NaN inputs give NaN.
func SegmentMean(lambda float64, s Segment) float64 {
	if invalid(lambda, s.W, s.C, s.D, s.R) {
		return math.NaN()
	}
	a := s.W + s.C
	if lambda == 0 {
		return a
	}
	return math.Exp(lambda*s.R) * (1/lambda + s.D) * math.Expm1(lambda*a)
}

// SegmentVariance is the exact variance of the wall time of one segment under the same
// rules as SegmentMean (VALIDATION.md, "Variance of one segment").
//
// Derivation. Let a = W + C and p = e^{−λa} the probability that an attempt at the block
// survives. The number of failed attempts N_f is geometric on {0, 1, ...} with success
// probability p, so E[N_f] = (1−p)/p = e^{λa} − 1 and Var[N_f] = (1−p)/p² =
// e^{λa}(e^{λa} − 1). Failed attempt i costs U_i = Y_i + D + Z_i where
//   - Y_i is the time lost in the block: the failure time conditioned on being < a, a
//     truncated exponential with E[Y] = 1/λ − a/(e^{λa} − 1) and
//     E[Y²] = [2/λ² − e^{−λa}(a² + 2a/λ + 2/λ²)] / (1 − e^{−λa});
//   - D is deterministic;
//   - Z_i is the recovery episode: R is attempted, a failure inside R loses the elapsed
//     part Y' (truncated exponential on [0, R)), costs D and restarts R. Z is therefore
//     the same recipe with a = R and per-failure cost Y' + D (no nested recovery term:
//     restarting R is already the recovery), i.e.
//     E[Z] = R + E[M](E[Y'] + D), Var[Z] = E[M]Var[Y'] + Var[M](E[Y'] + D)², with M
//     geometric of parameter e^{−λR}.
//
// The U_i are i.i.d. and independent of N_f: the memoryless Poisson process restarts at
// every attempt, and the value Y_i of a failed attempt does not depend on how many
// attempts failed. Y_i and Z_i are independent because they are functions of the
// failure process on disjoint time intervals (the block attempt, and the recovery that
// follows it after the failure-free D). Hence Var(U) = Var(Y) + Var(D) + Var(Z) =
// Var(Y) + Var(Z), and for the compound sum T = a + Σ_{i=1}^{N_f} U_i (Blackwell–Girshick)
//
//	E[T]   = a + E[N_f] E[U],
//	Var[T] = E[N_f] Var(U) + Var(N_f) E[U]².
//
// lambda = 0 gives 0. Negative or NaN inputs give NaN.
func SegmentVariance(lambda float64, s Segment) float64 {
	if invalid(lambda, s.W, s.C, s.D, s.R) {
		return math.NaN()
	}
	if lambda == 0 {
		return 0
	}
	// Recovery episode Z.
	enR, vnR, eyR, vyR := blockStats(lambda, s.R)
	eUz := eyR + s.D
	ez := s.R + enR*eUz
	vz := enR*vyR + vnR*eUz*eUz
	// Main block.
	en, vn, ey, vy := blockStats(lambda, s.W+s.C)
	eU := ey + s.D + ez
	vU := vy + vz
	return en*vU + vn*eU*eU
}

// blockStats returns, for a block of length a exposed to Poisson failures of rate
// lambda > 0, the mean and variance of the number of failed attempts before the first
// success (E[N] = e^{λa} − 1, Var[N] = e^{λa}(e^{λa} − 1)) and the mean and variance of
// the time lost by one failed attempt (exponential truncated to [0, a)).
func blockStats(lambda, a float64) (en, vn, ey, vy float64) {
	x := lambda * a
	en = math.Expm1(x)
	vn = math.Exp(x) * en
	ey, vy = truncExpMoments(lambda, a)
	return en, vn, ey, vy
}

// truncExpMoments returns the mean and variance of an exponential of rate lambda
// conditioned on being < a. For λa < 1 it sums the power series of the moments
// m_j(x) = ∫₀¹ u^j e^{−xu} du = Σ_k (−x)^k / (k! (k+j+1)), which avoids the
// cancellation of the closed forms when λa is small; otherwise it uses
// E[Y] = 1/λ − a/(e^{λa} − 1), E[Y²] = [2/λ² − e^{−λa}(a² + 2a/λ + 2/λ²)]/(1 − e^{−λa}).
func truncExpMoments(lambda, a float64) (mean, variance float64) {
	if a == 0 {
		return 0, 0
	}
	x := lambda * a
	if x < 1 {
		var m0, m1, m2 float64
		term := 1.0 // (−x)^k / k!
		for k := 0; k < 40; k++ {
			fk := float64(k)
			m0 += term / (fk + 1)
			m1 += term / (fk + 2)
			m2 += term / (fk + 3)
			term *= -x / (fk + 1)
			if math.Abs(term) < 1e-20 {
				break
			}
		}
		r1 := m1 / m0
		r2 := m2 / m0
		return a * r1, a * a * (r2 - r1*r1)
	}
	mean = 1/lambda - a/math.Expm1(x)
	l2 := 1 / (lambda * lambda)
	second := (2*l2 - math.Exp(-x)*(a*a+2*a/lambda+2*l2)) / (-math.Expm1(-x))
	return mean, second - mean*mean
}

// ScratchMean is the expected completion time of a job of T seconds of work that is
// never checkpointed and restarts from scratch after every failure,
//
//	E = e^{λR} (1/λ + D) (e^{λT} − 1),
//
// the segment formula with W = T and C = 0. With D = R = 0 it is (e^{λT} − 1)/λ, eq. 1.1
// of the MPI/FT thesis (Batchu; "terminate-and-restart", Poisson faults of rate λ, the
// mean time to wait for a fault-free window of length T plus T itself).
func ScratchMean(lambda, T, D, R float64) float64 {
	return SegmentMean(lambda, Segment{W: T, D: D, R: R})
}

// RepairWait is the expected time from a failure until a job of nodes
// nodes with no spare left, which waits for its failed nodes to be repaired
// (cluster.no_spare = "wait"), has them all back: each node is back window
// seconds after it failed (its repair, or its detection if that is later),
// and meanwhile the survivors fail at lambdaNode each, every failure
// pushing the end to window after it. With k nodes down the next failure
// comes at rate μ_k = (nodes − k)·lambdaNode, so the remaining wait after
// the k-th failure is
//
//	E_k = (1 − e^{−μ_k w})/μ_k + (1 − e^{−μ_k w}) E_{k+1},  E_nodes = w,
//
// the expected time to the next failure or the window's end, plus the wait
// after that failure if it comes within the window; RepairWait is E_1. (The
// repaired nodes wait cold in the pool, failing only once taken.) One node,
// or lambdaNode = 0, gives w.
func RepairWait(lambdaNode float64, nodes int, window float64) float64 {
	e := window
	for k := nodes - 1; k >= 1 && lambdaNode > 0; k-- {
		mu := float64(nodes-k) * lambdaNode
		q := -math.Expm1(-mu * window) // another failure within the window
		e = q/mu + q*e
	}
	return e
}

// ScratchVariance is the variance of the completion time of restart-from-scratch with
// D = R = 0: (e^{2λT} − 2λT e^{λT} − 1)/λ² (VALIDATION.md; the compound-geometric
// variance of SegmentVariance with C = D = R = 0). For λT < 1 it is evaluated by its
// power series Σ_{n≥3} (2ⁿ − 2n) (λT)ⁿ / n! / λ² to avoid cancellation. lambda = 0
// gives 0.
func ScratchVariance(lambda, T float64) float64 {
	if invalid(lambda, T) {
		return math.NaN()
	}
	if lambda == 0 {
		return 0
	}
	x := lambda * T
	if x < 1 {
		sum := 0.0
		pow := x * x * x / 6 // xⁿ/n! for n = 3
		p2 := 8.0            // 2ⁿ
		for n := 3; n < 60; n++ {
			t := (p2 - 2*float64(n)) * pow
			sum += t
			if t < 1e-18*sum {
				break
			}
			pow *= x / float64(n+1)
			p2 *= 2
		}
		return sum / (lambda * lambda)
	}
	return (math.Exp(2*x) - 2*x*math.Exp(x) - 1) / (lambda * lambda)
}

// PeriodicSplit splits Wtot seconds of work checkpointed every tau seconds of work into
// `full` checkpointed segments of length tau and one final segment of length `last`
// that is not checkpointed (a checkpoint after the last piece of work protects nothing).
// When Wtot is a multiple of tau (to a relative 1e-12, so that W/K·K round-off does not
// create a spurious sliver) the final segment is a whole tau without checkpoint.
func PeriodicSplit(Wtot, tau float64) (full, last float64) {
	if Wtot <= tau {
		return 0, Wtot
	}
	n := math.Floor(Wtot / tau)
	rem := Wtot - n*tau
	if rem <= 1e-12*Wtot {
		return n - 1, tau
	}
	if tau-rem <= 1e-12*Wtot { // Wtot/tau rounded down just below an integer
		return n, tau
	}
	return n, rem
}

// PeriodicMean is the exact expected wall time of Wtot seconds of work checkpointed
// after every tau seconds of work: the sum of the SegmentMean of ⌈Wtot/τ⌉ − 1 segments
// {W: tau, C} and of one final segment of the remaining work (a whole tau when Wtot is a
// multiple of tau) without checkpoint (C = 0). Assumptions are those of SegmentMean
// (Bougeret et al. SC'11; Hérault & Robert 2015), segments being independent. tau ≤ 0
// or negative inputs give NaN.
func PeriodicMean(lambda, Wtot, tau, C, D, R float64) float64 {
	if invalid(lambda, Wtot, tau, C, D, R) || tau == 0 {
		return math.NaN()
	}
	full, last := PeriodicSplit(Wtot, tau)
	m := SegmentMean(lambda, Segment{W: last, D: D, R: R})
	if full > 0 {
		m += full * SegmentMean(lambda, Segment{W: tau, C: C, D: D, R: R})
	}
	return m
}

// PeriodicMeanFatal is the exact expected wall time of the periodic schedule of
// PeriodicMean when each failure is, independently with probability rho, fatal:
// it destroys every checkpoint (a failure domain that holds a node and the
// partner that keeps its copy), so the run starts again from its beginning
// after a recovery R0 (a restart, with nothing to read back); the other
// failures roll back to the last checkpoint after a recovery R. A failure
// during either recovery costs D and restarts it, a fatal one as a restart
// from the beginning. rho = 0 gives PeriodicMean; rho = 1 with R0 = R gives
// ScratchMean of the work and checkpoints together. Invalid inputs (rho
// outside [0, 1], tau ≤ 0, negative values) give NaN.
//
// Derivation. Let E_k be the expected time from the start of segment k
// (segments 0..K−1, E_K = 0) to the end of the run, a its block W + C,
// p = e^{−λa}, q = e^{−λR}, and Q0 = e^{λR0}(D + 1/λ) − 1/λ the expected time
// from a fatal failure to the start of segment 0 (D, then attempts at R0
// restarted by every failure). From a non-fatal failure in segment k the
// remaining time H_k satisfies, conditioning on the first attempt at R
// (success with probability q, else a failure after E[min(F, R) | F < R],
// fatal with probability rho),
//
//	H_k = D + q(R + E_k) + (1 − q)[E[Y_R] + (1 − ρ)H_k + ρ(Q0 + E_0)],
//
// so with β = q + ρ(1 − q) and qR + (1 − q)E[Y_R] = (1 − q)/λ,
// H_k = [D + (1 − q)/λ + qE_k + (1 − q)ρ(Q0 + E_0)]/β. The segment itself gives
//
//	E_k = (1 − p)/λ + pE_{k+1} + (1 − p)[(1 − ρ)H_k + ρ(Q0 + E_0)],
//
// which is affine: E_k = A + B E_{k+1} + G E_0 with L = 1 − (1 − p)(1 − ρ)q/β,
// A = (1 − p)[1/λ + (1 − ρ)(D + (1 − q)/λ + (1 − q)ρQ0)/β + ρQ0]/L,
// B = p/L and G = (1 − p)[(1 − ρ)(1 − q)ρ/β + ρ]/L. Folding the segments from
// the last one gives E_0 = α + γE_0, so E_0 = α/(1 − γ). (With ρ = 0, L = p and
// B = 1: E_k − E_{k+1} is SegmentMean.)
func PeriodicMeanFatal(lambda, rho, Wtot, tau, C, D, R, R0 float64) float64 {
	if invalid(lambda, rho, Wtot, tau, C, D, R, R0) || tau == 0 || rho > 1 {
		return math.NaN()
	}
	if rho == 0 || lambda == 0 {
		return PeriodicMean(lambda, Wtot, tau, C, D, R)
	}
	q := math.Exp(-lambda * R)
	beta := q + rho*(1-q)
	q0 := math.Exp(lambda*R0)*(D+1/lambda) - 1/lambda
	// step returns A, B and G of a segment of block a
	step := func(a float64) (A, B, G float64) {
		f := -math.Expm1(-lambda * a) // 1 − p
		L := 1 - f*(1-rho)*q/beta
		A = f * (1/lambda + (1-rho)*(D+(1-q)/lambda+(1-q)*rho*q0)/beta + rho*q0) / L
		return A, (1 - f) / L, f * ((1-rho)*(1-q)*rho/beta + rho) / L
	}
	full, last := PeriodicSplit(Wtot, tau)
	alpha, _, gamma := step(last) // the last segment: E_K = 0
	if full > 0 {
		// full identical segments fold as a geometric series: after n of
		// them, α_n = A(1 + B + … + B^{n−1}) + B^n α_0 (γ likewise)
		A, B, G := step(tau + C)
		bn := math.Pow(B, full)
		sum := full
		if 1-B > 1e-12 {
			sum = -math.Expm1(full*math.Log(B)) / (1 - B)
		}
		alpha, gamma = A*sum+bn*alpha, G*sum+bn*gamma
	}
	return alpha / (1 - gamma)
}

// PeriodicVariance is the variance of the wall time of the periodic schedule of
// PeriodicMean: segments are independent, so it is the sum of their SegmentVariance.
func PeriodicVariance(lambda, Wtot, tau, C, D, R float64) float64 {
	if invalid(lambda, Wtot, tau, C, D, R) || tau == 0 {
		return math.NaN()
	}
	full, last := PeriodicSplit(Wtot, tau)
	v := SegmentVariance(lambda, Segment{W: last, D: D, R: R})
	if full > 0 {
		v += full * SegmentVariance(lambda, Segment{W: tau, C: C, D: D, R: R})
	}
	return v
}

// maxChunks caps the number of chunks OptimalChunks returns (C = 0 makes more chunks
// always better).
const maxChunks = 1 << 31

// OptimalChunks returns the number K of equal chunks, each followed by a checkpoint of
// duration C, that minimises the exact expected time K·e^{λR}(1/λ + D)(e^{λ(Wtot/K + C)} − 1)
// of Wtot seconds of work (Bougeret et al. SC'11; Hérault & Robert 2015, ch. "optimal
// checkpointing"), together with x* = λ·Wtot/K₀, the optimal chunk length in units of
// 1/λ over the reals:
//
//	x* = 1 + W₀(−e^{−λC−1}),  K₀ = λ Wtot / x*,
//
// K* being the better of ⌊K₀⌋ (at least 1) and ⌈K₀⌉ under the exact expectation (ties go
// to the smaller K). D and R only scale the expectation and do not change K*. All chunks
// carry a checkpoint, the last one included, as in the source. lambda = 0 or Wtot = 0
// give (1, 0); C = 0 with lambda > 0 has no finite optimum and is capped at 2³¹ chunks.
// Negative or NaN inputs give (0, NaN).
func OptimalChunks(lambda, Wtot, C float64) (K int, x float64) {
	if invalid(lambda, Wtot, C) {
		return 0, math.NaN()
	}
	if lambda == 0 || Wtot == 0 {
		return 1, 0
	}
	x = 1 + LambertW0(-math.Exp(-lambda*C-1))
	k0 := math.Inf(1)
	if x > 0 {
		k0 = lambda * Wtot / x
	}
	lo := math.Max(1, math.Floor(k0))
	hi := math.Max(1, math.Ceil(k0))
	lo, hi = math.Min(lo, maxChunks), math.Min(hi, maxChunks)
	cost := func(k float64) float64 { return k * math.Expm1(lambda*(Wtot/k+C)) }
	if cost(hi) < cost(lo) {
		return int(hi), x
	}
	return int(lo), x
}

// branchTol is e times two units in the last place of 1/e.
const branchTol = 3e-16

// LambertW0 is the principal branch W₀ of the Lambert W function, the solution w ≥ −1
// of w·e^w = z, defined for z ≥ −1/e. Near the branch point it starts from the series
// w = −1 + p − p²/3 + 11p³/72 − 43p⁴/540 + 769p⁵/17280 with p = √(2(ez + 1)), elsewhere
// from Winitzki's approximation or ln z − ln ln z, then refines with Halley's iteration
// (Newton on w + ln w = ln z for z > e, to avoid overflow). z < −1/e (beyond one rounding
// unit) or NaN give NaN; +Inf gives +Inf; z within two rounding units of −1/e gives −1.
func LambertW0(z float64) float64 {
	switch {
	case math.IsNaN(z):
		return math.NaN()
	case math.IsInf(z, 1):
		return math.Inf(1)
	case z == 0:
		return 0
	}
	q := math.FMA(math.E, z, 1) // e·z + 1, distance to the branch point
	if q < -branchTol {
		return math.NaN()
	}
	if q <= branchTol {
		// Within two rounding units of −1/e (the float −1/math.E itself lies 1e-17 below
		// the true branch point): the input cannot be told from −1/e, and W₀ is √-singular
		// there, so return the branch value.
		return -1
	}
	var w float64
	switch {
	case q < 0.3:
		p := math.Sqrt(2 * q)
		w = -1 + p*(1+p*(-1.0/3+p*(11.0/72+p*(-43.0/540+p*769.0/17280))))
		if q < 1e-10 { // series error O(p⁶) is below rounding here
			return w
		}
	case z < 3:
		l := math.Log1p(z)
		w = l * (1 - math.Log1p(l)/(2+l))
	default:
		l := math.Log(z)
		w = l - math.Log(l)
	}
	if z > math.E {
		// Newton on f(w) = w + ln w − ln z, f' = 1 + 1/w: no overflow for huge z.
		lz := math.Log(z)
		for i := 0; i < 100; i++ {
			dw := (w + math.Log(w) - lz) / (1 + 1/w)
			w -= dw
			if math.Abs(dw) <= 1e-16*math.Abs(w) {
				break
			}
		}
		return w
	}
	for i := 0; i < 100; i++ {
		ew := math.Exp(w)
		f := w*ew - z
		wp1 := w + 1
		if wp1 == 0 || f == 0 {
			break
		}
		dw := f / (ew*wp1 - (w+2)*f/(2*wp1))
		w -= dw
		if math.Abs(dw) <= 1e-16*(1+math.Abs(w)) {
			break
		}
	}
	return w
}

// Young is Young's first-order optimum checkpoint interval √(2Cμ) (J. W. Young, "A first
// order approximation to the optimum checkpoint interval", CACM 17(9), 1974): C the
// checkpoint time, mu the MTBF; assumes C ≪ μ, exponential failures, and ignores
// failures during checkpoint and restart.
func Young(C, mu float64) float64 {
	return math.Sqrt(2 * C * mu)
}

// DalyFirst is Daly's first-order optimum compute interval τ = √(2δ(μ + R)) (J. T. Daly,
// "A higher order estimate of the optimum checkpoint interval for restart dumps",
// FGCS 22(3), 2006): delta the dump (checkpoint) time, mu the mean time to interrupt,
// R the restart time; Poisson failures.
func DalyFirst(delta, mu, R float64) float64 {
	return math.Sqrt(2 * delta * (mu + R))
}

// DalyHigher is Daly's higher-order optimum compute interval (FGCS 22(3), 2006, eq. 37):
//
//	τ_opt = √(2δμ)[1 + ξ/3 + ξ²/9] − δ  for δ < 2μ, with ξ = √(δ/(2μ)),
//	τ_opt = μ                           for δ ≥ 2μ.
//
// It approximates the minimiser of DalyWallTime (Poisson failures, failures may strike
// dumps and restarts) and does not depend on R. This is the formula that reproduces
// Daly's published values τ_opt ≈ 117 min (μ = 24 h) and ≈ 9.1 min (μ = 15 min) for
// δ = 5 min, R = 10 min.
func DalyHigher(delta, mu float64) float64 {
	if delta < 2*mu {
		xi := math.Sqrt(delta / (2 * mu))
		return math.Sqrt(2*delta*mu)*(1+xi/3+xi*xi/9) - delta
	}
	return mu
}

// DalyWallTime is Daly's expected wall-clock time of a job of Ts seconds of solution
// time checkpointed every tau seconds of compute with dump time delta, restart time R and
// mean time to interrupt mu (FGCS 22(3), 2006):
//
//	T_w(τ) = μ e^{R/μ} (e^{(τ+δ)/μ} − 1) Ts/τ.
//
// It equals (Ts/τ)·SegmentMean(1/μ, Segment{W: τ, C: δ, R: R}) (D = 0, Ts/τ treated as
// a real number of segments, every segment checkpointed).
func DalyWallTime(tau, delta, mu, R, Ts float64) float64 {
	return mu * math.Exp(R/mu) * math.Expm1((tau+delta)/mu) * Ts / tau
}

// FirstOrderWaste is the first-order waste of periodic checkpointing with period T
// (work plus a checkpoint of duration C), downtime D, recovery R and platform MTBF mu
// (Hérault & Robert, "Fault-Tolerance Techniques for HPC", 2015, ch. 1):
//
//	WASTE = 1 − (1 − C/T)(1 − (D + R + T/2)/μ),
//
// the fraction of time not spent on useful work; first order in T/μ, assumes at most one
// failure per period, a failure losing on average half a period, and C, D, R, T ≪ μ.
func FirstOrderWaste(C, T, D, R, mu float64) float64 {
	return 1 - (1-C/T)*(1-(D+R+T/2)/mu)
}

// FirstOrderOptimalPeriod is the period minimising FirstOrderWaste,
// T_FO = √(2(μ − (D + R))C) (Hérault & Robert 2015), valid when C ≪ μ; it reduces to
// Young's √(2Cμ) when D + R ≪ μ. Returns NaN when μ ≤ D + R.
func FirstOrderOptimalPeriod(C, D, R, mu float64) float64 {
	if mu <= D+R {
		return math.NaN()
	}
	return math.Sqrt(2 * (mu - (D + R)) * C)
}

// MPIFTTime is eq. 1.2 of the MPI/FT thesis (Batchu): the mean runtime of an
// application of fault-free runtime T under a "fall-through" fault-tolerant strategy,
//
//	T_FT = T (1 + O)(1 + λ T_rec),
//
// with O the fault-free overhead as a fraction (0.1 for 10 %), lambda the Poisson fault
// rate and Trec the mean recovery time per fault. It is first order: it charges λ·T
// faults per unit of original runtime and ignores faults during the overhead and during
// recovery itself; compare against simulation and report the departure.
func MPIFTTime(T, O, lambda, Trec float64) float64 {
	return T * (1 + O) * (1 + lambda*Trec)
}

// PlatformMTBFExp is the exact MTBF of a platform of N nodes with independent
// exponential failures of individual MTBF nodeMTBF: the minimum of N exponentials is
// exponential with rate N/μ, so μ_p = μ/N. N ≤ 0 gives NaN.
func PlatformMTBFExp(nodeMTBF float64, N int) float64 {
	if N <= 0 {
		return math.NaN()
	}
	return nodeMTBF / float64(N)
}

// WeibullMean is the mean η·Γ(1 + 1/k) of a Weibull distribution of shape k and scale
// eta (CDF 1 − e^{−(t/η)^k}).
func WeibullMean(k, eta float64) float64 {
	return eta * math.Gamma(1+1/k)
}

// WeibullScaleForMean is the scale η = mean/Γ(1 + 1/k) of the Weibull distribution of
// shape k with the given mean (e.g. a node MTBF).
func WeibullScaleForMean(k, mean float64) float64 {
	return mean / math.Gamma(1+1/k)
}

// FirstFailureWeibullScale is the scale η·N^{−1/k} of the time to the first failure
// among N fresh nodes with independent Weibull(k, η) lifetimes: the minimum of N such
// variables has survival e^{−N(t/η)^k}, again Weibull with shape k. Its mean
// η N^{−1/k} Γ(1+1/k) is much shorter than μ/N when k < 1 (decreasing hazard, as
// Schroeder & Gibson, DSN 2006, observed at LANL); it describes only the first failure
// of fresh nodes, not the platform's inter-failure times. N ≤ 0 gives NaN.
func FirstFailureWeibullScale(k, eta float64, N int) float64 {
	if N <= 0 {
		return math.NaN()
	}
	return eta * math.Pow(float64(N), -1/k)
}
