package replication

import (
	"math"
	"slices"

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

// Periodic is replicated work checkpointed periodically, under either
// strategy, on b pairs of nodes failing exponentially; Mean is its exact
// expected makespan.
type Periodic struct {
	Lambda float64 // failure rate of a node (1/s)
	Pairs  int     // b, the node pairs
	Work   float64 // W: seconds of replicated work
	Tau    float64 // seconds of work between checkpoints
	C      float64 // the cost of a checkpoint (s)
	// R is the recovery after an interruption; a failure of any of the 2b
	// nodes before it ends starts it again.
	R float64
	// Restart is the restart strategy: at each checkpoint's commit, a pair
	// that lost a node becomes whole again if a replacement is ready (a
	// spare that has booted and not failed since). Without it a pair stays
	// degraded until an interruption.
	Restart bool
	// Ready is, under the restart strategy, the time from a failure the
	// application survives until its replacement is ready (detection and
	// spare boot); a replacement failing before the commit starts it again.
	// At most Tau + C.
	Ready float64
	// Copy is, under the restart strategy, the pause after a checkpoint
	// that restarts replicas, for their copies (RestartCopyCost); the model
	// takes no failure to interrupt it.
	Copy float64
}

// Recovery is the expected time of the recovery after an interruption, which
// a failure of any of the 2b nodes starts again: (e^{2bλR} − 1)/(2bλ).
func (p Periodic) Recovery() float64 {
	if p.Lambda == 0 {
		return p.R
	}
	rate := 2 * float64(p.Pairs) * p.Lambda
	return math.Expm1(rate*p.R) / rate
}

// Mean is the exact expected makespan: W split into segments of Tau
// seconds of work and a checkpoint (the last one the remainder, without
// checkpoint), each tried again after an interruption until no pair loses
// both nodes within it. Invalid inputs give NaN.
//
// Derivation. The pairs evolve independently but for the interruption that
// ends an attempt, after which every node is replaced: started whole, a
// pair survives to t with probability 2e^{−λt} − e^{−2λt} (both nodes, or
// one, the other having failed), a degraded pair with e^{−λt}; given that
// it has survived, the pair is whole or degraded at the next segment's
// start with probabilities (w, d) that depend only on the number m of
// segments since the last start from whole pairs, so that the attempt at a
// segment of length L survives to t with probability P_m(t)^b, P_m(t) =
// w(2e^{−λt} − e^{−2λt}) + d·e^{−λt}, and takes ∫₀ᴸ P_m^b on average before
// it ends. Without restarts, w' ∝ w·e^{−2λL} and d' ∝ 2w(e^{−λL} − e^{−2λL})
// + d·e^{−λL}. With them, a replacement is ready at a commit if it has been
// booting or up for the last D = Ready seconds without failing (a failure
// of one starts another): with probability r = e^{−λD}, for a pair degraded
// by a failure at s ≤ L − D or at the segment's start, which is then whole
// again; a pair degraded after L − D stays degraded. A failed attempt costs
// the recovery R' (Recovery) and the segment starts again with m = 0, from
// which it takes M0 = (∫₀ᴸ P_0^b + (1 − P_0(L)^b)R')/P_0(L)^b; the next
// segment then has m = 1. The distribution of m is carried from segment to
// segment, up to the state where (w, d) converges (or stateBudget stops
// it). With Ready = 0 a pair is always whole at a segment's start. A commit
// that restarts a replica adds the Copy pause: unless every pair that
// survived either had no failure or stays degraded.
func (p Periodic) Mean() float64 {
	full, _ := cpr.PeriodicSplit(p.Work, p.Tau)
	return p.mean(max(1024, int(stateBudget/max(full, 1))))
}

// stateBudget bounds the work of Mean, the segments times the states (w, d)
// it tells apart: a pair's state that many segments after a rollback stands
// for the later ones. Mean is then exact for up to 2^14 = 16,384 segments,
// and for any number when the states converge sooner: within a few segments
// under the restart strategy, after about 35/(λL) without it. Beyond that,
// the late segments take an earlier state's survival, which underestimates
// their interruptions.
const stateBudget = 1 << 28

// mean is Mean telling apart at most maxStates states.
func (p Periodic) mean(maxStates int) float64 {
	lam, b, D := p.Lambda, p.Pairs, p.Ready
	if !(lam >= 0 && p.Work >= 0 && p.Tau > 0 && p.C >= 0 && p.R >= 0 && D >= 0) || b < 1 ||
		p.Restart && D > p.Tau+p.C {
		return math.NaN()
	}
	recovery := p.Recovery()
	// pairTo is P(t) of a pair whole with probability w, degraded with d
	pairTo := func(w, d, t float64) float64 {
		e := math.Exp(-lam * t)
		return w*e*(2-e) + d*e
	}
	// segment is the expected time of a segment of length l entered in
	// state st, its retries included, and the probability that its first
	// attempt survives; m0 is the expected time of a retry
	segment := func(st [2]float64, l, m0 float64) (float64, float64) {
		f := func(t float64) float64 { return math.Pow(pairTo(st[0], st[1], t), float64(b)) }
		s := f(l)
		return quad.Fixed(f, 0, l, 64, nil, 0) + (1-s)*(recovery+m0), s
	}
	// fresh is M0, the expected time of a segment of length l retried from
	// whole pairs until an attempt survives
	fresh := func(l float64) float64 {
		c, s := segment([2]float64{1, 0}, l, 0)
		return c / s
	}
	L := p.Tau + p.C
	e1, e2, r := math.Exp(-lam*L), math.Exp(-2*lam*L), math.Exp(-lam*D)
	early := 2 * e1 * -math.Expm1(-lam*(L-D)) // one failure by L − D, the other node alive at L
	late := 2 * e1 * (math.Exp(-lam*(L-D)) - e1)
	next := func(st [2]float64) [2]float64 {
		w, d := st[0], st[1]
		var nw, nd float64
		if p.Restart {
			nw = w*(e2+early*r) + d*e1*r
			nd = w*(early*(1-r)+late) + d*e1*(1-r)
		} else {
			nw, nd = w*e2, 2*w*(e1-e2)+d*e1
		}
		return [2]float64{nw / (nw + nd), nd / (nw + nd)}
	}
	// copying is the expected copy pause at the commit of a segment entered
	// in state st whose first attempt survives with probability s: a pair
	// that survived has a replica restarted unless it had no failure or
	// stays degraded
	copying := func(st [2]float64, s float64) float64 {
		if !p.Restart || p.Copy == 0 {
			return 0
		}
		none := func(w, d float64) float64 {
			return math.Pow((w*(e2+early*(1-r)+late)+d*e1*(1-r))/(w*(e2+early+late)+d*e1), float64(b))
		}
		return p.Copy * (s*(1-none(st[0], st[1])) + (1-s)*(1-none(1, 0)))
	}
	full, last := cpr.PeriodicSplit(p.Work, p.Tau)
	// states[m] is a pair's (w, d) m segments after a start from whole
	// pairs, weight[m] the probability that a segment is entered there; once
	// the states converge, the last one takes the weight of those after it
	states, weight := [][2]float64{{1, 0}}, []float64{1}
	converged := false
	total := 0.0
	if full > 0 {
		m0 := fresh(L)
		var cost, survive, nextWeight []float64
		for k := 0.0; k < full; k++ {
			if !converged {
				s, prev := next(states[len(states)-1]), states[len(states)-1]
				if converged = math.Abs(s[1]-prev[1]) <= 1e-15 || len(states) == maxStates; !converged {
					states, weight = append(states, s), append(weight, 0)
				}
			}
			nextWeight = slices.Grow(nextWeight[:0], len(weight))[:len(weight)]
			clear(nextWeight)
			for m, wm := range weight {
				if wm == 0 {
					continue
				}
				for len(cost) <= m {
					st := states[len(cost)]
					c, s := segment(st, L, m0)
					cost, survive = append(cost, c+copying(st, s)), append(survive, s)
				}
				total += wm * cost[m]
				nextWeight[min(m+1, len(weight)-1)] += wm * survive[m]
				nextWeight[min(1, len(weight)-1)] += wm * (1 - survive[m])
			}
			weight, nextWeight = nextWeight, weight
		}
	}
	m0 := fresh(last)
	for m, wm := range weight {
		if wm > 0 {
			c, _ := segment(states[m], last, m0)
			total += wm * c
		}
	}
	return total
}

// BestTau is the period of work, W/n for a whole number n of segments, for
// which Mean is least, and that least makespan: equal segments, as the
// exact model of exponential failures makes best, searched by ternary
// search over n (Mean is unimodal in n where it was checked) between 1 and
// 8 times the segments of the first-order period, RestartPeriod under the
// restart strategy and Young's at the mean time to interruption without it.
// NaN when p is invalid or has no failures.
func (p Periodic) BestTau() (tau, mean float64) {
	if !(p.Lambda > 0 && p.Work > 0 && p.C > 0) || p.Pairs < 1 {
		return math.NaN(), math.NaN()
	}
	hi := int(math.Min(16384, math.Max(1, math.Ceil(8*p.Work/p.firstOrder()))))
	memo := map[int]float64{}
	at := func(n int) float64 {
		if v, ok := memo[n]; ok {
			return v
		}
		q := p
		q.Tau = p.Work / float64(n)
		v := q.Mean()
		if math.IsNaN(v) { // a period too short for the replacements to be ready
			v = math.Inf(1)
		}
		memo[n] = v
		return v
	}
	lo := 1
	for hi-lo > 2 {
		a, b := lo+(hi-lo)/3, hi-(hi-lo)/3
		if at(a) <= at(b) {
			hi = b
		} else {
			lo = a
		}
	}
	best := lo
	for n := lo + 1; n <= hi; n++ {
		if at(n) < at(best) {
			best = n
		}
	}
	return p.Work / float64(best), at(best)
}

// firstOrder is the strategy's first-order period: RestartPeriod under the
// restart strategy, Young's at the mean time to interruption without it.
func (p Periodic) firstOrder() float64 {
	if p.Restart {
		return RestartPeriod(p.C, p.Lambda, p.Pairs)
	}
	return cpr.Young(p.C, MTTI(sim.FromSeconds(1/p.Lambda), p.Pairs).Seconds())
}
