package cpr

import (
	"math"
	"math/rand/v2"
	"testing"
)

func relClose(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Max(math.Abs(want), 1e-300)
}

func TestScratchReference(t *testing.T) {
	// VALIDATION.md reference: λ = 1, T = 1 → mean 1.718282, SD 0.975957.
	tests := []struct {
		name             string
		lambda, T, D, R  float64
		wantMean, wantSD float64
		tol              float64
	}{
		{"lambda1_T1", 1, 1, 0, 0, 1.718282, 0.975957, 5e-7},
		// e−1 exactly and √(e²−2e−1).
		{"closed_e", 1, 1, 0, 0, math.E - 1, math.Sqrt(math.E*math.E - 2*math.E - 1), 1e-14},
		// With downtime and restart: e^{λR}(1/λ + D)(e^{λT}−1) = e^{0.5}·1.2·(e−1).
		{"with_D_R", 1, 1, 0.2, 0.5, math.Exp(0.5) * 1.2 * (math.E - 1), math.NaN(), 1e-14},
		// Eq. 1.1 of MPI/FT with λ = 1/h, T = 1 h (Figure 1.3's one-hour application).
		{"mpift_1h", 1.0 / 3600, 3600, 0, 0, 3600 * (math.E - 1), math.NaN(), 1e-14},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := ScratchMean(tc.lambda, tc.T, tc.D, tc.R)
			if !relClose(m, tc.wantMean, tc.tol) {
				t.Errorf("ScratchMean = %.9g, want %.9g", m, tc.wantMean)
			}
			if !math.IsNaN(tc.wantSD) {
				sd := math.Sqrt(ScratchVariance(tc.lambda, tc.T))
				if !relClose(sd, tc.wantSD, tc.tol) {
					t.Errorf("SD = %.9g, want %.9g", sd, tc.wantSD)
				}
			}
		})
	}
}

func TestScratchVarianceMatchesSegmentVariance(t *testing.T) {
	for _, lambda := range []float64{1e-9, 1e-4, 0.01, 0.3, 1, 2.5} {
		for _, T := range []float64{1e-3, 0.5, 1, 3, 10} {
			sv := ScratchVariance(lambda, T)
			gv := SegmentVariance(lambda, Segment{W: T})
			if !relClose(sv, gv, 1e-9) {
				t.Errorf("λ=%g T=%g: ScratchVariance %.15g, SegmentVariance %.15g", lambda, T, sv, gv)
			}
			// And the mean: eq. 1.1 = segment mean with C = D = R = 0.
			if m, g := ScratchMean(lambda, T, 0, 0), math.Expm1(lambda*T)/lambda; !relClose(m, g, 1e-14) {
				t.Errorf("λ=%g T=%g: ScratchMean %.15g, eq. 1.1 %.15g", lambda, T, m, g)
			}
		}
	}
	// Small λT: the series must agree with λT³/3 to leading order.
	if v := ScratchVariance(1e-6, 1); !relClose(v, 1e-6/3, 1e-5) {
		t.Errorf("ScratchVariance(1e-6, 1) = %g, want ≈ %g", v, 1e-6/3)
	}
}

func TestSegmentMeanRecipe(t *testing.T) {
	// E[T] = a + E[N_f]E[U] (the variance ingredients) must equal the closed form.
	segs := []Segment{
		{W: 1, C: 0.1, D: 0.2, R: 0.3},
		{W: 0.01, C: 0.001, D: 0, R: 0.05},
		{W: 5, C: 1, D: 2, R: 3},
		{W: 100, C: 10, D: 0, R: 0},
	}
	for _, lambda := range []float64{1e-6, 0.01, 0.5, 1, 2} {
		for _, s := range segs {
			if a, b := SegmentMean(lambda, s), segmentMeanRecipe(lambda, s); !relClose(a, b, 1e-10) {
				t.Errorf("λ=%g %+v: closed %.15g recipe %.15g", lambda, s, a, b)
			}
		}
	}
}

func TestTruncExpSeriesContinuity(t *testing.T) {
	// Series (λa < 1) and closed form (λa ≥ 1) agree around the switch.
	for _, x := range []float64{0.5, 0.9, 0.999999, 1.0} {
		ms, vs := truncExpMoments(1, x)
		l := 1.0
		mc := 1/l - x/math.Expm1(x)
		sc := (2 - math.Exp(-x)*(x*x+2*x+2)) / (-math.Expm1(-x))
		vc := sc - mc*mc
		if !relClose(ms, mc, 1e-12) || !relClose(vs, vc, 1e-9) {
			t.Errorf("x=%g: series (%.15g, %.15g) closed (%.15g, %.15g)", x, ms, vs, mc, vc)
		}
	}
	// Limits: mean a/2, variance a²/12 as λa → 0.
	if m, v := truncExpMoments(1e-12, 2); !relClose(m, 1, 1e-9) || !relClose(v, 4.0/12, 1e-9) {
		t.Errorf("small λa: mean %g var %g", m, v)
	}
}

// simulateSegment draws one segment's wall time under the rules of the package doc.
func simulateSegment(rng *rand.Rand, lambda float64, s Segment) float64 {
	a := s.W + s.C
	total := 0.0
	for {
		if t := rng.ExpFloat64() / lambda; t >= a {
			return total + a
		} else {
			total += t + s.D
		}
		for { // recovery episode: a failure in R costs D and restarts R
			if t := rng.ExpFloat64() / lambda; t >= s.R {
				total += s.R
				break
			} else {
				total += t + s.D
			}
		}
	}
}

func TestSegmentMomentsMonteCarlo(t *testing.T) {
	tests := []struct {
		name   string
		lambda float64
		s      Segment
	}{
		{"all_terms", 1, Segment{W: 0.8, C: 0.2, D: 0.3, R: 0.5}},
		{"no_downtime", 0.5, Segment{W: 2, C: 0.5, D: 0, R: 1}},
		{"long_recovery", 2, Segment{W: 0.3, C: 0.1, D: 0.1, R: 0.6}},
		{"scratch", 1, Segment{W: 1}},
	}
	const n = 200000
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(42, uint64(i)))
			var sum, sum2 float64
			for j := 0; j < n; j++ {
				x := simulateSegment(rng, tc.lambda, tc.s)
				sum += x
				sum2 += x * x
			}
			mean := sum / n
			v := (sum2 - n*mean*mean) / (n - 1)
			wantM := SegmentMean(tc.lambda, tc.s)
			wantV := SegmentVariance(tc.lambda, tc.s)
			if se := math.Sqrt(v / n); math.Abs(mean-wantM) > 4*se {
				t.Errorf("mean %.6g, model %.6g (4 SE = %.3g)", mean, wantM, 4*se)
			}
			if !relClose(v, wantV, 0.03) {
				t.Errorf("variance %.6g, model %.6g", v, wantV)
			}
			t.Logf("MC mean %.6g (model %.6g), var %.6g (model %.6g)", mean, wantM, v, wantV)
		})
	}
}

func TestPeriodic(t *testing.T) {
	lambda, C, D, R := 0.1, 0.5, 0.2, 0.3
	full := Segment{W: 2, C: C, D: D, R: R}
	tests := []struct {
		name       string
		Wtot, tau  float64
		wantM      float64
		wantV      float64
		relTol     float64
		checkValue bool
	}{
		// 7 = 3·2 + 1: three checkpointed segments and a last one of 1 without checkpoint.
		{"partial_last", 7, 2,
			3*SegmentMean(lambda, full) + SegmentMean(lambda, Segment{W: 1, D: D, R: R}),
			3*SegmentVariance(lambda, full) + SegmentVariance(lambda, Segment{W: 1, D: D, R: R}), 1e-14, true},
		// 8 = 4·2: the fourth segment is the end of the job and is not checkpointed.
		{"exact_multiple", 8, 2,
			3*SegmentMean(lambda, full) + SegmentMean(lambda, Segment{W: 2, D: D, R: R}),
			3*SegmentVariance(lambda, full) + SegmentVariance(lambda, Segment{W: 2, D: D, R: R}), 1e-14, true},
		// tau ≥ Wtot: restart from scratch.
		{"tau_ge_W", 1.5, 2, ScratchMean(lambda, 1.5, D, R),
			SegmentVariance(lambda, Segment{W: 1.5, D: D, R: R}), 1e-14, true},
		// Round-off: 0.3 = 3·0.1 in floating point is not exact.
		{"roundoff", 0.3, 0.1,
			2*SegmentMean(lambda, Segment{W: 0.1, C: C, D: D, R: R}) + SegmentMean(lambda, Segment{W: 0.1, D: D, R: R}),
			2*SegmentVariance(lambda, Segment{W: 0.1, C: C, D: D, R: R}) + SegmentVariance(lambda, Segment{W: 0.1, D: D, R: R}), 1e-9, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if m := PeriodicMean(lambda, tc.Wtot, tc.tau, C, D, R); !relClose(m, tc.wantM, tc.relTol) {
				t.Errorf("PeriodicMean = %.15g, want %.15g", m, tc.wantM)
			}
			if v := PeriodicVariance(lambda, tc.Wtot, tc.tau, C, D, R); !relClose(v, tc.wantV, tc.relTol) {
				t.Errorf("PeriodicVariance = %.15g, want %.15g", v, tc.wantV)
			}
		})
	}
	if m := PeriodicMean(0, 10, 3, 1, 5, 5); m != 10+3*1 {
		t.Errorf("λ = 0: PeriodicMean = %g, want 13 (work + 3 checkpoints)", m)
	}
	if !math.IsNaN(PeriodicMean(1, 10, 0, 1, 0, 0)) {
		t.Error("tau = 0 must give NaN")
	}
}

// simulateFatal draws one run of the process PeriodicMeanFatal describes:
// blocks of a each (the last one last), failures at rate lambda, each fatal
// with probability rho (back to block 0 after recoveries of R0) or not (back
// to the failed block after recoveries of R); a failure in a recovery costs D
// and restarts it, as a restart from the beginning if it is fatal.
func simulateFatal(rng *rand.Rand, lambda, rho float64, blocks []float64, D, R, R0 float64) float64 {
	total, k := 0.0, 0
	for k < len(blocks) {
		if t := rng.ExpFloat64() / lambda; t >= blocks[k] {
			total += blocks[k]
			k++
			continue
		} else {
			total += t + D
		}
		rec := R
		if rng.Float64() < rho {
			rec, k = R0, 0
		}
		for {
			if t := rng.ExpFloat64() / lambda; t >= rec {
				total += rec
				break
			} else {
				total += t + D
			}
			if rng.Float64() < rho {
				rec, k = R0, 0
			}
		}
	}
	return total
}

// PeriodicMeanFatal is PeriodicMean without fatal failures and ScratchMean of
// the whole schedule when every failure is fatal, and matches a Monte Carlo
// of its process in between within 4 standard errors.
func TestPeriodicMeanFatal(t *testing.T) {
	lambda, C, D, R := 0.1, 0.5, 0.2, 0.3
	if m, want := PeriodicMeanFatal(lambda, 0, 7, 2, C, D, R, 0.1), PeriodicMean(lambda, 7, 2, C, D, R); m != want {
		t.Errorf("ρ = 0: %.15g, want PeriodicMean %.15g", m, want)
	}
	// every failure fatal, R0 = R: one block of all the work and the three
	// checkpoints, restarted from scratch
	if m, want := PeriodicMeanFatal(lambda, 1, 7, 2, C, D, R, R), ScratchMean(lambda, 7+3*C, D, R); !relClose(m, want, 1e-12) {
		t.Errorf("ρ = 1: %.15g, want ScratchMean %.15g", m, want)
	}
	if m, want := PeriodicMeanFatal(lambda, 0.5, 1.5, 2, C, D, R, R), ScratchMean(lambda, 1.5, D, R); !relClose(m, want, 1e-12) {
		t.Errorf("one segment: %.15g, want ScratchMean %.15g", m, want)
	}
	for _, bad := range [][8]float64{{lambda, -0.1, 7, 2, C, D, R, R}, {lambda, 1.1, 7, 2, C, D, R, R}, {lambda, 0.5, 7, 0, C, D, R, R}} {
		if m := PeriodicMeanFatal(bad[0], bad[1], bad[2], bad[3], bad[4], bad[5], bad[6], bad[7]); !math.IsNaN(m) {
			t.Errorf("PeriodicMeanFatal%v = %g, want NaN", bad, m)
		}
	}
	for i, tc := range []struct {
		lambda, rho, Wtot, tau, C, D, R, R0 float64
	}{
		{0.5, 0.2, 7, 1, 0.2, 0.1, 0.3, 0.1},
		{0.2, 0.05, 20, 2, 0.5, 0, 0.4, 0.2},
		{1, 0.5, 3, 0.5, 0.1, 0.2, 0.2, 0.3},
		{0.3, 0.9, 6, 1.5, 0.3, 0, 0.1, 0},
	} {
		var blocks []float64
		full, last := PeriodicSplit(tc.Wtot, tc.tau)
		for range int(full) {
			blocks = append(blocks, tc.tau+tc.C)
		}
		blocks = append(blocks, last)
		rng := rand.New(rand.NewPCG(7, uint64(i)))
		const n = 100000
		var sum, sum2 float64
		for range n {
			x := simulateFatal(rng, tc.lambda, tc.rho, blocks, tc.D, tc.R, tc.R0)
			sum += x
			sum2 += x * x
		}
		mean := sum / n
		se := math.Sqrt((sum2 - n*mean*mean) / (n - 1) / n)
		want := PeriodicMeanFatal(tc.lambda, tc.rho, tc.Wtot, tc.tau, tc.C, tc.D, tc.R, tc.R0)
		if math.Abs(mean-want) > 4*se {
			t.Errorf("%+v: Monte Carlo mean %.6g, model %.6g (4 SE = %.3g)", tc, mean, want, 4*se)
		}
		t.Logf("%+v: Monte Carlo %.6g ± %.3g, model %.6g, without fatal failures %.6g", tc, mean, se, want,
			PeriodicMean(tc.lambda, tc.Wtot, tc.tau, tc.C, tc.D, tc.R))
	}
}

func TestLambertW0(t *testing.T) {
	tests := []struct {
		z, want float64
		tol     float64
	}{
		{0, 0, 0},
		{math.E, 1, 1e-15},
		{-1 / math.E, -1, 1e-15},
		{1, 0.5671432904097838, 1e-15},
		{10, 1.7455280027406994, 1e-15},
		{-0.3, -0.4894022271802149, 1e-14},
		{-0.1, -0.11183255915896297, 1e-14},
		{1e-10, 9.999999999e-11, 1e-12},
		{100, 3.385630140290050, 1e-14},
		{1e300, 684.24720862976085, 1e-15},
	}
	for _, tc := range tests {
		got := LambertW0(tc.z)
		if !relClose(got, tc.want, tc.tol) && math.Abs(got-tc.want) > 1e-16 {
			t.Errorf("W0(%g) = %.17g, want %.17g", tc.z, got, tc.want)
		}
	}
	// Defining identity over the whole domain, including near the branch point.
	for _, z := range []float64{-1/math.E + 1e-14, -1/math.E + 1e-12, -1/math.E + 1e-8, -1/math.E + 1e-4,
		-0.35, -0.2, -1e-5, 0.01, 0.5, 2, 2.718, 2.72, 50, 1e5, 1e100} {
		w := LambertW0(z)
		if w < -1 || !relClose(w*math.Exp(w), z, 1e-9) {
			t.Errorf("W0(%g) = %.17g: w·e^w = %.17g", z, w, w*math.Exp(w))
		}
	}
	if !math.IsNaN(LambertW0(-0.4)) {
		t.Error("W0(-0.4) must be NaN")
	}
}

func TestOptimalChunks(t *testing.T) {
	tests := []struct {
		lambda, W, C float64
	}{
		{1.0 / 86400, 30 * 86400, 600},
		{1.0 / 3600, 48 * 3600, 60},
		{0.01, 1000, 5},
		{1, 0.5, 0.1},  // K₀ < 1: one chunk
		{1, 50, 0.001}, // many small chunks
		{0.2, 10, 3},
	}
	for _, tc := range tests {
		K, x := OptimalChunks(tc.lambda, tc.W, tc.C)
		// x* solves (1 − x) e^{x + λC} = 1.
		if x <= 0 || x >= 1 || !relClose((1-x)*math.Exp(x+tc.lambda*tc.C), 1, 1e-12) {
			t.Errorf("%+v: x* = %g does not solve the optimality condition", tc, x)
		}
		// Brute force over K with the exact expectation (common factor dropped).
		cost := func(k int) float64 { return float64(k) * math.Expm1(tc.lambda*(tc.W/float64(k)+tc.C)) }
		best := 1
		for k := 2; k <= 4*int(tc.lambda*tc.W/x)+10; k++ {
			if cost(k) < cost(best) {
				best = k
			}
		}
		if K != best {
			t.Errorf("%+v: OptimalChunks K = %d, brute force %d", tc, K, best)
		}
		// Consistency with the periodic model: equal chunks of W/K, all checkpointed.
		m := float64(K) * SegmentMean(tc.lambda, Segment{W: tc.W / float64(K), C: tc.C})
		if !relClose(m, cost(K)/tc.lambda, 1e-12) {
			t.Errorf("%+v: K·SegmentMean %g vs cost %g", tc, m, cost(K)/tc.lambda)
		}
	}
	if K, x := OptimalChunks(0, 100, 1); K != 1 || x != 0 {
		t.Errorf("λ = 0: got (%d, %g), want (1, 0)", K, x)
	}
}

func TestDalyWorkedExample(t *testing.T) {
	// Daly, FGCS 22(3) 2006, δ = 5 min, R = 10 min, Ts = 500 h (Figs. 3-5): the published
	// τ_opt are 117 min (μ = 24 h), 57 min (μ = 6 h) and 9.1 min (μ = 15 min). They are
	// reproduced by the higher-order formula (eq. 37), DalyHigher; Young's √(2δμ) gives
	// 120 / 60 / 12.2 min and the first-order √(2δ(μ+R)) 120.4 / 60.8 / 15.8 min.
	const delta, R, Ts = 5.0, 10.0, 500 * 60.0 // minutes
	tests := []struct {
		name                    string
		mu                      float64
		published, publishedTol float64
		young, first            float64
	}{
		{"mu_24h", 24 * 60, 117, 0.5, 120, math.Sqrt(2 * delta * (24*60 + R))},
		{"mu_6h", 6 * 60, 57, 0.5, 60, math.Sqrt(2 * delta * (6*60 + R))},
		{"mu_15min", 15, 9.1, 0.05, math.Sqrt(150), math.Sqrt(2 * delta * (15 + R))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := DalyHigher(delta, tc.mu)
			if math.Abs(h-tc.published) > tc.publishedTol {
				t.Errorf("DalyHigher = %.4g min, published %.3g", h, tc.published)
			}
			if y := Young(delta, tc.mu); !relClose(y, tc.young, 1e-14) || math.Abs(y-tc.published) <= tc.publishedTol {
				t.Errorf("Young = %.4g min (want %.4g, not the published value)", y, tc.young)
			}
			if f := DalyFirst(delta, tc.mu, R); !relClose(f, tc.first, 1e-14) || math.Abs(f-tc.published) <= tc.publishedTol {
				t.Errorf("DalyFirst = %.4g min (want %.4g, not the published value)", f, tc.first)
			}
			// The exact minimiser of T_w(τ) is μ·x* with x* of OptimalChunks (λ = 1/μ,
			// C = δ): d/dτ [(e^{(τ+δ)/μ} − 1)/τ] = 0 ⇔ (1 − τ/μ) e^{(τ+δ)/μ} = 1.
			_, x := OptimalChunks(1/tc.mu, Ts, delta)
			exact := tc.mu * x
			tw := func(tau float64) float64 { return DalyWallTime(tau, delta, tc.mu, R, Ts) }
			if tw(exact) > tw(exact*1.001) || tw(exact) > tw(exact*0.999) {
				t.Errorf("μx* = %g is not a minimiser of DalyWallTime", exact)
			}
			// Eq. 37 is within 1 % of the exact optimum here, and its wall time within 0.01 %.
			if !relClose(h, exact, 0.01) || !relClose(tw(h), tw(exact), 1e-4) {
				t.Errorf("DalyHigher %g vs exact %g (T_w %g vs %g)", h, exact, tw(h), tw(exact))
			}
			t.Logf("μ=%g min: Young %.4g, DalyFirst %.4g, DalyHigher %.4g, exact %.4g min; T_w(exact) = %.6g h",
				tc.mu, Young(delta, tc.mu), DalyFirst(delta, tc.mu, R), h, exact, tw(exact)/60)
		})
	}
	if DalyHigher(10, 4) != 4 {
		t.Error("δ ≥ 2μ must give τ = μ")
	}
	// DalyWallTime = (Ts/τ)·SegmentMean(1/μ, {τ, δ, 0, R}).
	tau, mu := 100.0, 1440.0
	if a, b := DalyWallTime(tau, delta, mu, R, Ts), Ts/tau*SegmentMean(1/mu, Segment{W: tau, C: delta, R: R}); !relClose(a, b, 1e-14) {
		t.Errorf("DalyWallTime %g vs segments %g", a, b)
	}
}

func TestSimpleFormulas(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"Young", Young(600, 86400), math.Sqrt(2 * 600 * 86400)},
		{"DalyFirst", DalyFirst(600, 86400, 300), math.Sqrt(2 * 600 * 86700)},
		// ξ = 1/2 at δ/μ = 1/2: √(2·0.5·1)(1 + 1/6 + 1/36) − 0.5.
		{"DalyHigher_xi_half", DalyHigher(0.5, 1), 1 + 1.0/6 + 1.0/36 - 0.5},
		{"DalyWallTime_noR", DalyWallTime(1, 1, 1, 0, 10), math.Expm1(2) * 10},
		// 1 − (1 − 60/3600)(1 − (30 + 120 + 1800)/86400).
		{"FirstOrderWaste", FirstOrderWaste(60, 3600, 30, 120, 86400), 1 - (1-60.0/3600)*(1-1950.0/86400)},
		{"FirstOrderWaste_noCkpt_cost", FirstOrderWaste(0, 100, 0, 0, 1000), 0.05},
		{"FirstOrderOptimalPeriod", FirstOrderOptimalPeriod(60, 30, 120, 86400), math.Sqrt(2 * (86400 - 150) * 60)},
		// Figure 1.3 of the MPI/FT thesis: T = 1 h, O = 100 %, T_rec = 5 min, λ = 1/h.
		{"MPIFTTime_fig1.3", MPIFTTime(3600, 1, 1.0/3600, 300), 3600 * 2 * (1 + 300.0/3600)},
		{"MPIFTTime_10pct", MPIFTTime(1000, 0.1, 0.001, 50), 1000 * 1.1 * 1.05},
		{"PlatformMTBFExp", PlatformMTBFExp(5*365*86400, 10000), 5 * 365 * 86400 / 10000.0},
		{"WeibullMean_k1", WeibullMean(1, 7), 7},
		{"WeibullMean_k2", WeibullMean(2, 2), math.Sqrt(math.Pi)},
		{"WeibullMean_k05", WeibullMean(0.5, 3), 6},
		{"WeibullScaleForMean", WeibullScaleForMean(0.7, 1000), 1000 / math.Gamma(1+1/0.7)},
		{"FirstFailureWeibullScale_k1", FirstFailureWeibullScale(1, 100, 4), 25},
		{"FirstFailureWeibullScale_k05", FirstFailureWeibullScale(0.5, 100, 10), 1},
	}
	for _, tc := range tests {
		if !relClose(tc.got, tc.want, 1e-14) {
			t.Errorf("%s = %.15g, want %.15g", tc.name, tc.got, tc.want)
		}
	}
	// Weibull scale round trip, and the first failure among N nodes with k < 1 comes far
	// earlier than μ/N.
	for _, k := range []float64{0.5, 0.7, 1, 1.5} {
		mu := 5 * 365 * 86400.0
		eta := WeibullScaleForMean(k, mu)
		if !relClose(WeibullMean(k, eta), mu, 1e-14) {
			t.Errorf("k=%g: round trip %g", k, WeibullMean(k, eta))
		}
		first := WeibullMean(k, FirstFailureWeibullScale(k, eta, 10000))
		expo := PlatformMTBFExp(mu, 10000)
		if (k < 1 && first >= expo) || (k > 1 && first <= expo) || (k == 1 && !relClose(first, expo, 1e-12)) {
			t.Errorf("k=%g: first failure mean %g vs μ/N %g", k, first, expo)
		}
	}
}

func TestFirstFailureWeibullMonteCarlo(t *testing.T) {
	// The minimum of N Weibull(k, η) draws has mean η N^{-1/k} Γ(1+1/k).
	const k, eta, N, n = 0.7, 1000.0, 50, 20000
	rng := rand.New(rand.NewPCG(7, 7))
	var sum, sum2 float64
	for i := 0; i < n; i++ {
		m := math.Inf(1)
		for j := 0; j < N; j++ {
			m = math.Min(m, eta*math.Pow(rng.ExpFloat64(), 1/k))
		}
		sum += m
		sum2 += m * m
	}
	mean := sum / n
	sd := math.Sqrt((sum2 - n*mean*mean) / (n - 1))
	want := WeibullMean(k, FirstFailureWeibullScale(k, eta, N))
	if math.Abs(mean-want) > 4*sd/math.Sqrt(n) {
		t.Errorf("MC first-failure mean %g, model %g", mean, want)
	}
}

func TestInvalidInputs(t *testing.T) {
	for _, v := range []float64{
		SegmentMean(-1, Segment{W: 1}),
		SegmentVariance(1, Segment{W: -1}),
		ScratchMean(1, 1, math.NaN(), 0),
		ScratchVariance(-1, 1),
		PeriodicVariance(1, 1, -1, 0, 0, 0),
		PlatformMTBFExp(1, 0),
		FirstOrderOptimalPeriod(1, 5, 5, 10),
	} {
		if !math.IsNaN(v) {
			t.Errorf("want NaN, got %g", v)
		}
	}
	if SegmentMean(0, Segment{W: 3, C: 1, D: 9, R: 9}) != 4 || SegmentVariance(0, Segment{W: 3, C: 1}) != 0 {
		t.Error("λ = 0 must give W + C and variance 0")
	}
}

// RepairWait: its closed forms for one and two nodes, and a Monte Carlo of
// the wait itself (survivors failing at their rate, each failure pushing
// the end a window further) for more.
func TestRepairWait(t *testing.T) {
	q := -math.Expm1(-0.5 * 2) // two nodes: one survivor at λ = 0.5, a window of 2
	for _, tc := range []struct {
		name         string
		lambda       float64
		nodes        int
		window, want float64
	}{
		{"one node", 0.5, 1, 2, 2},
		{"no failures", 0, 8, 2, 2},
		{"two nodes", 0.5, 2, 2, q/0.5 + q*2},
	} {
		if got := RepairWait(tc.lambda, tc.nodes, tc.window); !relClose(got, tc.want, 1e-14) {
			t.Errorf("%s: RepairWait %.15g, want %.15g", tc.name, got, tc.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, nodes := range []int{3, 6} {
		const lambda, window, n = 0.2, 1.5, 200000
		var sum, sq float64
		for range n {
			end, down := window, 1 // the first failure at 0
			for now := 0.0; down < nodes; down++ {
				now += rng.ExpFloat64() / (float64(nodes-down) * lambda)
				if now >= end {
					break
				}
				end = now + window
			}
			sum += end
			sq += end * end
		}
		mean := sum / n
		se := math.Sqrt((sq/n - mean*mean) / n)
		if want := RepairWait(lambda, nodes, window); math.Abs(mean-want) > 4*se {
			t.Errorf("%d nodes: simulated wait %.5f ± %.5f, RepairWait %.5f", nodes, mean, se, want)
		}
	}
}

// segmentMeanRecipe computes E[T] = a + E[N_f] E[U] with the same ingredients as
// SegmentVariance; it equals SegmentMean and is kept to cross-check the derivation.
func segmentMeanRecipe(lambda float64, s Segment) float64 {
	if lambda == 0 {
		return s.W + s.C
	}
	enR, _, eyR, _ := blockStats(lambda, s.R)
	ez := s.R + enR*(eyR+s.D)
	en, _, ey, _ := blockStats(lambda, s.W+s.C)
	return s.W + s.C + en*(ey+s.D+ez)
}
