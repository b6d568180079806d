package cpr

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// erlangRenewal is the exact renewal function of exponential lifetimes of mean
// eta with a delay d before each replacement: the n-th failure comes at the sum
// of n lifetimes plus (n − 1)·d, so M(t) = Σₙ P(Erlang(n) ≤ t − (n − 1)d).
func erlangRenewal(eta, d, t float64) float64 {
	m := 0.0
	for n := 1; ; n++ {
		u := t - float64(n-1)*d
		if u <= 0 {
			return m
		}
		p := mathext.GammaIncReg(float64(n), u/eta)
		if p < 1e-17 {
			return m
		}
		m += p
	}
}

func TestWeibullRenewalExponential(t *testing.T) {
	for _, tc := range []struct{ d, t, tol float64 }{
		{0, 0.01, 1e-12}, {0, 1, 1e-12}, {0, 40, 1e-12}, {0, 500, 1e-12}, // the last by the asymptote
		// with a delay M is interpolated between grid points
		{0.3, 0.2, 1e-5}, {0.3, 1, 1e-5}, {0.3, 5, 1e-5}, {0.3, 70, 1e-5},
		{0.0001, 2, 1e-5}, // a delay shorter than a grid step
		{0.3, 100, 1e-6},  // the asymptote
	} {
		got, want := WeibullRenewal(1, 1, tc.d, tc.t), tc.t
		if tc.d > 0 {
			want = erlangRenewal(1, tc.d, tc.t)
		}
		if !relClose(got, want, tc.tol) {
			t.Errorf("d=%g t=%g: M = %.12g, exact %.12g", tc.d, tc.t, got, want)
		}
	}
}

// The grid and the renewal theorem's asymptote agree where one takes over
// from the other.
func TestWeibullRenewalAsymptote(t *testing.T) {
	for _, k := range []float64{0.5, 0.7, 1.5, 3} {
		for _, d := range []float64{0, 0.1} {
			at := renewalAsymptote * (WeibullMean(k, 1) + d)
			for name, m := range map[string]func(k, eta, delay, t float64) float64{"new": WeibullRenewal, "stationary": WeibullRenewalStationary} {
				grid, asym := m(k, 1, d, at), m(k, 1, d, math.Nextafter(at, math.Inf(1)))
				if !relClose(grid, asym, 1e-4) {
					t.Errorf("%s k=%g d=%g t=%g: grid %.8g, asymptote %.8g", name, k, d, at, grid, asym)
				}
			}
		}
	}
}

// The renewal function is the mean number of failures of a simulated node
// position, within 4 standard errors.
func TestWeibullRenewalMonteCarlo(t *testing.T) {
	const n, d = 100000, 0.05
	rng := rand.New(rand.NewPCG(3, 9))
	for _, k := range []float64{0.5, 0.7, 1.5} {
		for _, horizon := range []float64{0.05, 1, 4} {
			var sum, sum2 float64
			for range n {
				c, at := 0.0, 0.0
				for {
					at += math.Pow(rng.ExpFloat64(), 1/k) // Weibull(k, 1)
					if at > horizon {
						break
					}
					c++
					at += d
				}
				sum += c
				sum2 += c * c
			}
			mean := sum / n
			se := math.Sqrt((sum2/n - mean*mean) / n)
			if got := WeibullRenewal(k, 1, d, horizon); math.Abs(got-mean) > 4*se {
				t.Errorf("k=%g t=%g: M = %.5g, simulated %.5g ± %.2g", k, horizon, got, mean, se)
			}
		}
	}
}

func TestWeibullRenewalInvalid(t *testing.T) {
	for _, a := range [][4]float64{{0, 1, 0, 1}, {1, 0, 0, 1}, {1, 1, -1, 1}, {1, 1, 0, -1}, {math.NaN(), 1, 0, 1}, {1, 1, 0, math.Inf(1)}} {
		if got := WeibullRenewal(a[0], a[1], a[2], a[3]); !math.IsNaN(got) {
			t.Errorf("WeibullRenewal%v = %g, want NaN", a, got)
		}
	}
	if got := WeibullRenewal(0.7, 1, 0, 0); got != 0 {
		t.Errorf("M(0) = %g", got)
	}
	// a delay beyond the horizon (here 10²¹ grid steps): only the first node fails
	if got, want := WeibullRenewal(0.7, 1, 1e9, 1e-9), -math.Expm1(-math.Pow(1e-9, 0.7)); !relClose(got, want, 1e-12) {
		t.Errorf("M = %g with a delay beyond the horizon, want F(t) = %g", got, want)
	}
}

func TestSolveMakespan(t *testing.T) {
	const T = 100.0
	periodic := func(rate float64) float64 { return PeriodicMean(rate, T, 10, 1, 0, 5) }
	weibull := func(k float64) func(float64) float64 {
		return func(h float64) float64 { return 50 * WeibullRenewal(k, 2000, 1, h) / h }
	}
	for _, tc := range []struct {
		name string
		f    func(float64) float64
		rate func(float64) float64
	}{
		{"constant rate", periodic, func(float64) float64 { return 0.01 }},
		{"decreasing hazard", periodic, weibull(0.5)},
		{"increasing hazard", periodic, weibull(2)},
		{"restart from scratch", func(r float64) float64 { return ScratchMean(r, T, 0, 5) }, weibull(0.7)},
		{"faster than T", func(r float64) float64 { return MPIFTTime(T, -0.05, r, 5) }, weibull(0.7)},
	} {
		e := SolveMakespan(T, tc.f, tc.rate)
		if want := tc.f(tc.rate(e)); !relClose(e, want, 1e-10) {
			t.Errorf("%s: E = %.12g, f(rate(E)) = %.12g", tc.name, e, want)
		}
	}
	if e := SolveMakespan(T, periodic, func(float64) float64 { return 0.01 }); e != periodic(0.01) {
		t.Errorf("constant rate: E = %.17g, want f(λ) = %.17g exactly", e, periodic(0.01))
	}
	for name, f := range map[string]func(float64) float64{
		"infinite": func(float64) float64 { return math.Inf(1) },
		"NaN":      func(float64) float64 { return math.NaN() },
		"diverges": func(r float64) float64 { return T + 2*T/r }, // rate → 0 as the horizon grows: no fixed point
	} {
		if e := SolveMakespan(T, f, func(h float64) float64 { return 1 / h }); !math.IsNaN(e) && !math.IsInf(e, 0) {
			t.Errorf("%s: E = %g, want no finite value", name, e)
		}
	}
}

// Without delay a stationary position fails t/μ times in [0, t] on average,
// whatever the shape.
func TestWeibullRenewalStationaryRate(t *testing.T) {
	for _, k := range []float64{0.5, 0.7, 1, 2, 3} {
		mu := WeibullMean(k, 1)
		for _, x := range []float64{0.01, 1, 10, 59 * mu, 100 * mu} {
			if got := WeibullRenewalStationary(k, 1, 0, x); !relClose(got, x/mu, 1e-4) {
				t.Errorf("k=%g t=%g: M_s = %.8g, t/μ = %.8g", k, x, got, x/mu)
			}
		}
	}
}

// A position that has been failing and being replaced since long before 0,
// met in service at 0, fails in [0, t] as often as the stationary renewal
// function says, within 4 standard errors.
func TestWeibullRenewalStationaryMonteCarlo(t *testing.T) {
	const n, d = 40000, 0.05
	horizons := []float64{0.05, 1, 4}
	rng := rand.New(rand.NewPCG(5, 11))
	for _, k := range []float64{0.5, 1.5} {
		burnIn := 50 * (WeibullMean(k, 1) + d)
		sum, sum2 := make([]float64, len(horizons)), make([]float64, len(horizons))
		for done := 0; done < n; {
			// the history from −burnIn: lifetimes and delays until time 0
			at := -burnIn
			for {
				at += math.Pow(rng.ExpFloat64(), 1/k)
				if at+d > 0 {
					break
				}
				at += d
			}
			if at <= 0 {
				continue // at 0 the position waits for its replacement: not in service
			}
			c := make([]float64, len(horizons))
			for ; at <= horizons[len(horizons)-1]; at += d + math.Pow(rng.ExpFloat64(), 1/k) {
				for i, h := range horizons {
					if at <= h {
						c[i]++
					}
				}
			}
			for i := range c {
				sum[i] += c[i]
				sum2[i] += c[i] * c[i]
			}
			done++
		}
		for i, h := range horizons {
			mean := sum[i] / n
			se := math.Sqrt((sum2[i]/n - mean*mean) / n)
			if got := WeibullRenewalStationary(k, 1, d, h); math.Abs(got-mean) > 4*se {
				t.Errorf("k=%g t=%g: M_s = %.5g, simulated %.5g ± %.2g", k, h, got, mean, se)
			}
		}
	}
}

// The README's figure: 10,000 nodes with a one-year MTBF and Weibull shape
// 0.7 fail 190.3 times in their first day when new, 27.4 times in service
// (a replacement 25 s after each failure, the exascale scenario's detection).
func TestWeibullRenewalExascaleDay(t *testing.T) {
	const day, year = 86400.0, 365 * 86400.0
	eta := WeibullScaleForMean(0.7, year)
	newNodes, inService := 1e4*WeibullRenewal(0.7, eta, 25, day), 1e4*WeibullRenewalStationary(0.7, eta, 25, day)
	t.Logf("failures in the first day: %.1f new, %.1f in service (long-run rate %.1f)", newNodes, inService, 1e4*day/year)
	if math.Round(newNodes*10) != 1903 || math.Round(inService*10) != 274 {
		t.Errorf("%.2f new, %.2f in service; the README says 190.3 and 27.4", newNodes, inService)
	}
}
