package experiment

import (
	"fmt"
	"math"

	"ftsim/models/cpr"
)

// runMTBF is the platform's MTBF as the closed-form models should see it over
// a run of a given length. With exponential failures it is the same at every
// length. With Weibull node failures it is not: a node is new at the start
// (failures.start = "new") and a spare when it is taken, so with a shape below
// 1 (a decreasing hazard, as measured on real machines) a run sees more
// failures than its length over the long-run MTBF, N/MTBF, promises, and with
// a shape above 1 fewer; nodes in service (start = "in_service") fail at the
// long-run rate until they are replaced. The models then take the platform's
// mean failure rate over the run, from the expected number of failures of
// each node position (its renewal function), and each makespan model is
// solved for the run its own prediction lasts (cpr.SolveMakespan).
type runMTBF struct {
	longRun float64 // seconds: PlatformMTBF
	weibull bool
	// Weibull node failures: N positions of shape k and scale eta, their
	// first nodes new or in service, each node replaced delay after it
	// fails, and failures at a constant rate (failure domains, false
	// suspicions) on top
	inService                      bool
	nodes, k, eta, delay, constant float64
}

// runMTBF returns the platform MTBF over a run of the point's scenario, given
// its long-run value mu (seconds) and the mean delay from a failure to its
// detection, when a spare is taken.
func (p *Point) runMTBF(mu, detection float64) runMTBF {
	s := p.Scenario
	r := runMTBF{longRun: mu}
	if f := s.Failures; f.Distribution == "weibull" {
		r.weibull, r.inService = true, f.Start == "in_service"
		r.nodes, r.k = float64(s.Cluster.Nodes), f.WeibullShape
		r.eta = cpr.WeibullScaleForMean(r.k, f.NodeMTBF.Seconds())
		r.delay = detection
		r.constant = r.nodes*FalseSuspicionRate(s) + groupFailureRate(s)
	}
	return r
}

// over is the platform MTBF over a run of h seconds.
func (r runMTBF) over(h float64) float64 {
	if !r.weibull {
		return r.longRun
	}
	renewal := cpr.WeibullRenewal
	if r.inService {
		renewal = cpr.WeibullRenewalStationary
	}
	return 1 / (r.nodes*renewal(r.k, r.eta, r.delay, h)/h + r.constant)
}

// failures returns, for a run of h seconds, the expected number of failures
// ∫₀^h Λ and ∫₀^h √Λ, with Λ the platform's expected failure rate at each
// moment: the nodes' renewal densities and the constant rates on top.
func (r runMTBF) failures(h float64) (count, root float64) {
	if !r.weibull {
		return h / r.longRun, h / math.Sqrt(r.longRun)
	}
	return cpr.RenewalFailures(r.nodes, r.constant, r.k, r.eta, r.delay, r.inService)(h)
}

// solve returns the makespan that model f (a function of the platform MTBF)
// predicts for fault-free time T, and the MTBF over that makespan: f at the
// long-run MTBF with exponential failures, the solution of E = f(MTBF over E)
// with Weibull ones. A model that gives no positive makespan does not apply
// (the first-order waste beyond 1): NaN.
func (r runMTBF) solve(T float64, f func(mu float64) float64) (e, mu float64) {
	if r.weibull {
		e = cpr.SolveMakespan(T, func(rate float64) float64 { return f(1 / rate) }, func(h float64) float64 { return 1 / r.over(h) })
	} else {
		e = f(r.longRun)
	}
	if !(e > 0) {
		e = math.NaN()
	}
	return e, r.over(e)
}

// note is what a prediction's inputs say of the MTBF it used: nothing with
// exponential failures, whose MTBF is the platform MTBF row's.
func (r runMTBF) note(mu float64) string {
	if !r.weibull || math.IsNaN(mu) {
		return ""
	}
	return fmt.Sprintf("μ=%.4g s over the run", mu)
}

// row is the prediction that says what MTBF the models used with Weibull
// failures: the one over a run of h seconds, the duration of the protocol's
// makespan prediction (what), or of its fault-free run.
func (r runMTBF) row(h float64, what string) Prediction {
	start := "new"
	if r.inService {
		start = "in service"
	}
	return Prediction{
		Name:    "platform MTBF over the run μ_T",
		Value:   r.over(h),
		Unit:    "s",
		Formula: "T_w / (N·M(T_w) + T_w·other rates)",
		Inputs: fmt.Sprintf("M: expected failures of a node position (Weibull k=%.4g, η=%.4g s, %s at the start, replaced d=%.4g s later), T_w=%.4g s (%s)",
			r.k, r.eta, start, r.delay, h, what),
	}
}
