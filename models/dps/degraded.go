package dps

// This file models DPS's makespan under failures for bulk-synchronous
// workloads. It is ours, not the paper's: §7 models the fault-free overhead
// only.
//
// A failed node's threads are taken over by their backups on the next live
// node of the rotation, and nothing moves them off it again (DPS uses no
// spare). With the plain rotation (Config.Spread off) a live node then
// carries its own threads and those of the run of dead nodes just before
// it: 1 + r times its load, for a run of r. A bulk-synchronous application
// (every thread the same work per step, steps coupled by their messages)
// goes at the pace of its most loaded node, so the work done by time t is
// ∫ ds / L(s), with L = 1 + the longest run of dead nodes, and with ω_j the
// work done when L first reaches j the makespan is
//
//	M = T + Σ_{j ≥ 2} (T − ω_j)⁺.
//
// The first failure makes L = 2 (ω_2 is the first failure time); L = 3
// comes with the first failure of a live node next to a dead one, while
// at level 2, where time runs at twice the work. The model stops there: it
// leaves out runs of three dead nodes (RunsOfThree says how likely they are),
// the stall of each recovery (detection and re-execution: tens of seconds
// against the hours a slowed machine loses) and the communication a loaded
// node's extra computation hides.

import "math"

// Degraded is the expected makespan of a bulk-synchronous run under DPS on
// Nodes nodes that fail independently at rate Lambda (exponential), whose
// fault-free time is Work.
type Degraded struct {
	Work   float64 // T, seconds
	Nodes  int     // N
	Lambda float64 // failure rate of one node, per second
}

// degradedGrid is the number of intervals of [0, T] over which Mean
// integrates: the integrands are smooth, and 4,096 trapezoids put the
// quadrature error far below the model's own.
const degradedGrid = 4096

// Mean is the expected makespan with L ≤ 3:
//
//	E[M] = T + ∫₀ᵀ P(ω₂ ≤ w) dw + ∫₀ᵀ P(ω₃ ≤ w) dw,
//	P(ω₂ ≤ w) = 1 − e^{−Λw},  Λ = Nλ,
//	P(ω₃ ≤ w) = ∫₀ʷ Λe^{−Λu} (1 − S(2(w − u))) du,
//	S(d) = Σₙ e^{−Λd}(Λd)ⁿ/n! · Πᵢ₌₁ⁿ (1 − 2i/N),
//
// S(d) the chance that none of the failures in a time d after the first
// strikes next to a dead node (the i-th of them finds i dead, isolated
// nodes, with 2i live neighbours among about N). The failure rate is taken
// as constant, Nλ: the live nodes' decline is a relative error of the
// order of the failures over N. It returns NaN for an invalid Degraded.
func (d Degraded) Mean() float64 {
	T, n, lam := d.Work, float64(d.Nodes), d.Lambda
	if !(T >= 0) || math.IsInf(T, 0) || d.Nodes < 2 || !(lam >= 0) || math.IsInf(lam, 0) {
		return math.NaN()
	}
	L := n * lam
	if L == 0 || T == 0 {
		return T
	}
	level2 := T + math.Expm1(-L*T)/L // ∫₀ᵀ (1 − e^{−Λw}) dw
	// level 3, with x = w − u: ∫₀ᵀ Λe^{−Λu} G(T − u) du, G(y) = ∫₀ʸ (1 − S(2x)) dx
	h := T / degradedGrid
	G := make([]float64, degradedGrid+1)
	prev := 1 - d.survival(0)
	for i := 1; i <= degradedGrid; i++ {
		cur := 1 - d.survival(2*float64(i)*h)
		G[i] = G[i-1] + h*(prev+cur)/2
		prev = cur
	}
	level3 := 0.0
	for i := 0; i <= degradedGrid; i++ {
		u := float64(i) * h
		f := L * math.Exp(-L*u) * G[degradedGrid-i]
		if i == 0 || i == degradedGrid {
			f /= 2
		}
		level3 += h * f
	}
	return T + level2 + level3
}

// survival is S(t): the chance that no failure in a time t after the first
// strikes a live neighbour of a dead node.
func (d Degraded) survival(t float64) float64 {
	x := float64(d.Nodes) * d.Lambda * t
	if x == 0 {
		return 1
	}
	// Poisson terms in logs (x may be thousands), over the range that holds
	// all but a negligible part of the mass; the product vanishes once 2i ≥ N
	hi := int(x + 12*math.Sqrt(x) + 20)
	logProd, sum := 0.0, 0.0
	for k := 0; k <= hi; k++ {
		if k > 0 {
			q := 1 - 2*float64(k)/float64(d.Nodes)
			if q <= 0 {
				break
			}
			logProd += math.Log(q)
		}
		lg, _ := math.Lgamma(float64(k + 1))
		sum += math.Exp(float64(k)*math.Log(x) - x - lg + logProd)
	}
	return sum
}

// RunsOfThree is about how many runs of three or more dead nodes there are
// once k nodes have failed at random: N(k/N)³. Mean leaves them out, so it
// holds while this stays well below 1 over the run (k the failures in it).
func (d Degraded) RunsOfThree(k float64) float64 {
	p := k / float64(d.Nodes)
	return float64(d.Nodes) * p * p * p
}
