package cpr

import (
	"fmt"
	"math"
	"testing"

	"ftsim/sim"

	"gonum.org/v1/gonum/integrate/quad"
)

// At a constant failure rate the hazard policy's interval is Young's.
func TestHazardIntervalConstantRateIsYoung(t *testing.T) {
	for _, c := range []struct{ c, mu, t float64 }{
		{0.1, 10, 0}, {60, 3154, 0}, {60, 3154, 86400}, {1e-3, 1e6, 5}, {300, 900, 1e7},
	} {
		got := HazardInterval(c.c, c.t, 1e12, func(float64) float64 { return 1 / c.mu })
		if want := Young(c.c, c.mu); math.Abs(got-want) > 1e-9*want {
			t.Errorf("C=%g s, μ=%g s, from %g s: interval %.12g s, Young %.12g s", c.c, c.mu, c.t, got, want)
		}
	}
}

// For n new Weibull nodes of one age the density √(Λ/2C) integrates in closed
// form: with a = (k+1)/2, the next checkpoint after t0 (the nodes' age) comes
// at (t0^a + a√(2Cη^k/(nk)))^{1/a}. Shapes below 1 have a rate that is
// infinite at power-on, which the quadrature must integrate too (t0 = 0).
func TestHazardIntervalWeibullClosedForm(t *testing.T) {
	const n, mtbf, c = 10000, 365 * 86400.0, 60.0
	for _, k := range []float64{0.2, 0.5, 0.7, 1.5, 3} {
		law := FailureLaw{Shape: k, NodeMTBF: mtbf}
		eta := WeibullScaleForMean(k, mtbf)
		a := (k + 1) / 2
		for _, t0 := range []float64{0, 60, 3600, 86400} {
			got := HazardInterval(c, t0, 1e12, func(s float64) float64 { return n * law.NodeRate(s, false) })
			want := math.Pow(math.Pow(t0, a)+a*math.Sqrt(2*c*math.Pow(eta, k)/(n*k)), 1/a) - t0
			if math.Abs(got-want) > 1e-6*want {
				t.Errorf("k=%g, age %g s: interval %.9g s, closed form %.9g s", k, t0, got, want)
			}
		}
	}
}

// A node met in service has the hazard of the stationary residual life,
// S(a)/∫_a^∞ S: 1/MTBF at a = 0, falling with a for shapes below 1 and
// rising above 1, towards a new node's hazard in the tail. The integral is
// checked against Gauss–Legendre quadrature of the Weibull survival itself.
func TestNodeRateInService(t *testing.T) {
	const mtbf = 1000.0
	for _, k := range []float64{0.3, 0.7, 1, 2, 5} {
		law := FailureLaw{Shape: k, NodeMTBF: mtbf}
		eta := WeibullScaleForMean(k, mtbf)
		if got := law.NodeRate(0, true); math.Abs(got-1/mtbf) > 1e-9/mtbf {
			t.Errorf("k=%g: rate at age 0 %g, want 1/MTBF %g", k, got, 1/mtbf)
		}
		prev := law.NodeRate(0, true)
		for _, x := range []float64{0.01, 0.1, 0.5, 1, 2, 4} {
			age := x * eta
			// ∫_age^∞ e^{−(u/η)^k} du; for k < 1, with w = (u/η)^k,
			// (η/k) ∫ e^{−w} w^{1/k−1} dw, whose tail is short
			survival := func(u float64) float64 { return math.Exp(-math.Pow(u/eta, k)) }
			tail := quad.Fixed(survival, age, age+20*eta, 1000, nil, 0)
			if lo := math.Pow(x, k); k < 1 {
				tail = quad.Fixed(func(w float64) float64 { return eta / k * math.Exp(-w) * math.Pow(w, 1/k-1) }, lo, lo+60, 400, nil, 0)
			}
			want := survival(age) / tail
			got := law.NodeRate(age, true)
			if math.Abs(got-want) > 1e-6*want {
				t.Errorf("k=%g, age %g η: rate %.9g, quadrature %.9g", k, x, got, want)
			}
			if k < 1 && got > prev || k > 1 && got < prev || k == 1 && got != prev {
				t.Errorf("k=%g, age %g η: rate %g after %g", k, x, got, prev)
			}
			prev = got
		}
		// far in the tail, where the survival underflows, a finite rate
		for _, x := range []float64{30, 1e3, 1e6} {
			if r := law.NodeRate(x*eta, true); !(r > 0) || math.IsInf(r, 0) {
				t.Errorf("k=%g, age %g η: rate %g", k, x, r)
			}
		}
	}
}

// spanEnds records when each checkpoint ended on node 0.
type spanEnds struct{ ends []sim.Time }

func (s *spanEnds) Task(n sim.NodeID, obj sim.ObjID, start, end sim.Time, what string) {
	if n == 0 && what == "checkpoint" {
		s.ends = append(s.ends, end)
	}
}
func (s *spanEnds) Message(*sim.Message, sim.Time)       {}
func (s *spanEnds) Instant(sim.NodeID, sim.Time, string) {}

// The hazard policy arms each checkpoint with the interval the nodes' ages
// give at that moment: after a failure, the spare in the failed node's slot
// is a cohort of its own, young and failing more often (shape 0.5). With
// exponential failures it is Young's interval throughout.
func TestHazardPolicy(t *testing.T) {
	for _, k := range []float64{1, 0.5} {
		t.Run(fmt.Sprintf("shape %g", k), func(t *testing.T) {
			cfg := cluster()
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = []sim.ScriptedFailure{{Node: 1, Progress: 0.3, ByProgress: true}}
			law := FailureLaw{Shape: k, NodeMTBF: 0.4}
			p, err := New(Config{Policy: PolicyHazard, Law: law, Levels: []Level{{PFS, 1}}})
			if err != nil {
				t.Fatal(err)
			}
			rt, err := sim.New(cfg, job(t, 0), p)
			if err != nil {
				t.Fatal(err)
			}
			ends := &spanEnds{}
			rt.SetTracer(ends)
			if res := rt.Run(); !res.Finished || !res.Outcome.OK {
				t.Fatalf("finished %v, outcome %+v", res.Finished, res.Outcome)
			}
			if len(ends.ends) < 3 || len(p.RestoredFrom) != 1 {
				t.Fatalf("%d checkpoints, restores %v", len(ends.ends), p.RestoredFrom)
			}
			c := p.EstimateCost().Seconds()
			if k == 1 {
				want := Young(c, law.NodeMTBF/4)
				if got := p.Interval().Seconds(); math.Abs(got-want) > 1e-9 || p.IntervalVaried() {
					t.Fatalf("interval %.12g s (varied %v), Young %.12g s", got, p.IntervalVaried(), want)
				}
				return
			}
			young := 0
			rate := func(s float64) float64 {
				r := 0.0
				for _, n := range rt.Slots() {
					since, inService := rt.NodeLife(n)
					r += law.NodeRate(s-since.Seconds(), inService)
				}
				return r
			}
			for _, n := range rt.Slots() {
				if since, _ := rt.NodeLife(n); since > 0 {
					young++
				}
			}
			last := ends.ends[len(ends.ends)-1].Seconds()
			want := HazardInterval(c, last, 1e12, rate)
			if got := p.Interval().Seconds(); young != 1 || math.Abs(got-want) > 1e-9 || !p.IntervalVaried() {
				t.Fatalf("%d replaced nodes; last interval %.12g s (varied %v), want %.12g s from the checkpoint at %g s",
					young, got, p.IntervalVaried(), want, last)
			}
		})
	}
}

// At a constant rate 1/μ the hazard policy's model is the first-order waste
// at Young's interval, T/(1 − √(2C/μ) − R/μ); a waste that reaches the whole
// run has no makespan.
func TestHazardMakespanConstantRate(t *testing.T) {
	for _, c := range []struct{ T, C, R, mu float64 }{{671, 0.0094, 32.5, 900}, {86400, 60, 300, 3154}, {20, 0.1, 0.15, 10}} {
		constant := func(h float64) (float64, float64) { return h / c.mu, h / math.Sqrt(c.mu) }
		got := HazardMakespan(c.T, c.C, c.R, constant)
		want := c.T / (1 - math.Sqrt(2*c.C/c.mu) - c.R/c.mu)
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("%+v: %.12g s, want %.12g s", c, got, want)
		}
	}
	if got := HazardMakespan(100, 10, 50, func(h float64) (float64, float64) { return h / 40, h / math.Sqrt(40) }); !math.IsNaN(got) {
		t.Errorf("a waste above 1 gives %g s", got)
	}
}

// The renewal density's cells: constant 1/η for exponential lifetimes
// without delay, 1/MTBF for any shape when the nodes start in service (a
// stationary process; at shape 0.5 within 2% in the first cell, 10⁻³ in the
// second and 4·10⁻⁵ beyond the twelfth), and summing to the renewal function.
func TestWeibullRenewalRates(t *testing.T) {
	for _, c := range []struct {
		k, eta, delay, t float64
		stationary       bool
		want             float64 // every cell's rate, or 0 to skip
	}{
		{1, 100, 0, 500, false, 0.01},
		{0.5, 100, 0, 500, true, 1 / WeibullMean(0.5, 100)},
		{2, 100, 0, 500, true, 1 / WeibullMean(2, 100)},
		{0.7, 100, 5, 900, false, 0},
	} {
		rates, w := WeibullRenewalRates(c.k, c.eta, c.delay, c.t, c.stationary)
		sum := 0.0
		for i, r := range rates {
			sum += r * w
			tol := 1e-3
			if i == 0 {
				tol = 0.02 // next to a density that is infinite at 0 (k < 1)
			}
			if c.want > 0 && math.Abs(r-c.want) > tol*c.want {
				t.Fatalf("%+v: a cell's rate %g, want %g", c, r, c.want)
			}
		}
		m := WeibullRenewal(c.k, c.eta, c.delay, c.t)
		if c.stationary {
			m = WeibullRenewalStationary(c.k, c.eta, c.delay, c.t)
		}
		if math.Abs(sum-m) > 1e-9*m {
			t.Errorf("%+v: the cells add up to %g failures, the renewal function %g", c, sum, m)
		}
	}
	if rates, _ := WeibullRenewalRates(1, 100, 0, 1e5, false); rates != nil {
		t.Errorf("beyond the grid's limit: %d cells", len(rates))
	}
}
