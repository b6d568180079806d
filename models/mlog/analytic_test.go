package mlog

import (
	"math"
	"testing"
)

func relClose(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

func TestRuntimes(t *testing.T) {
	tests := []struct {
		name                     string
		alpha, t0, d, c, v, m    float64
		kc, kml                  float64
		wantC, wantML, wantAlpha float64
	}{
		// t_c = 1000(1 + 10/100) = 1100; 1 − (100+20)/1200 = 0.9 → t'_c = 1222.2…;
		// 1 − (100/8 + 30)/1200 = 1 − 42.5/1200 → t'_ml = 1.1·1100/(1157.5/1200);
		// α* = (1200 − 42.5)/(1200 − 120) = 1157.5/1080.
		{"paper_like", 1.1, 1000, 10, 100, 8, 1200, 20, 30,
			1100 / 0.9, 1.1 * 1100 * 1200 / 1157.5, 1157.5 / 1080},
		// v = 1, k_ml = k_c: only α differs, threshold 1.
		{"one_object", 1.05, 500, 5, 50, 1, 600, 10, 10,
			550 / 0.9, 1.05 * 550 / 0.9, 1},
		// m ≤ c + k_c: checkpointing diverges, fast restart does not.
		{"ckpt_diverges", 2, 100, 1, 100, 10, 110, 20, 5,
			math.Inf(1), 2 * 101 / (1 - 15.0/110), math.Inf(1)},
		// m ≤ c/v + k_ml: message logging diverges.
		{"ml_diverges", 1.2, 100, 1, 10, 2, 50, 1, 45,
			110 / (1 - 11.0/50), math.Inf(1), 0}, // t_c = 100(1 + 1/10)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CheckpointRuntime(tc.t0, tc.d, tc.c, tc.m, tc.kc); !relClose(got, tc.wantC, 1e-14) {
				t.Errorf("CheckpointRuntime = %.15g, want %.15g", got, tc.wantC)
			}
			if got := MessageLoggingRuntime(tc.alpha, tc.t0, tc.d, tc.c, tc.v, tc.m, tc.kml); !relClose(got, tc.wantML, 1e-14) {
				t.Errorf("MessageLoggingRuntime = %.15g, want %.15g", got, tc.wantML)
			}
			if got := AlphaThreshold(tc.c, tc.v, tc.m, tc.kc, tc.kml); !relClose(got, tc.wantAlpha, 1e-14) {
				t.Errorf("AlphaThreshold = %.15g, want %.15g", got, tc.wantAlpha)
			}
		})
	}
}

func TestAlphaThresholdEqualises(t *testing.T) {
	// At α = threshold the two runtimes are equal; slightly below ML wins, above it loses.
	for _, p := range []struct{ t0, d, c, v, m, kc, kml float64 }{
		{1000, 10, 100, 8, 1200, 20, 30},
		{3600, 60, 600, 16, 7200, 120, 5},
		{1e5, 30, 1800, 4, 2e4, 300, 400},
	} {
		a := AlphaThreshold(p.c, p.v, p.m, p.kc, p.kml)
		tc := CheckpointRuntime(p.t0, p.d, p.c, p.m, p.kc)
		tml := MessageLoggingRuntime(a, p.t0, p.d, p.c, p.v, p.m, p.kml)
		if !relClose(tml, tc, 1e-12) {
			t.Errorf("%+v: α*=%g gives t'_ml %.15g vs t'_c %.15g", p, a, tml, tc)
		}
		if MessageLoggingRuntime(a*0.999, p.t0, p.d, p.c, p.v, p.m, p.kml) >= tc ||
			MessageLoggingRuntime(a*1.001, p.t0, p.d, p.c, p.v, p.m, p.kml) <= tc {
			t.Errorf("%+v: threshold %g does not separate the regimes", p, a)
		}
	}
}

func TestFaultFreeAndLimits(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"t_c", CheckpointFaultFree(1000, 10, 100), 1100},
		{"t_ml", MessageLoggingFaultFree(1.2, 1000, 10, 100), 1320},
		// With m → ∞ the runtimes tend to the fault-free ones.
		{"t'_c_no_failures", CheckpointRuntime(1000, 10, 100, math.Inf(1), 20), 1100},
		{"t'_ml_no_failures", MessageLoggingRuntime(1.2, 1000, 10, 100, 8, math.Inf(1), 30), 1320},
		{"min_mtbf_c", CheckpointMinMTBF(100, 20), 120},
		{"min_mtbf_ml", MessageLoggingMinMTBF(100, 8, 30), 42.5},
	}
	for _, tc := range tests {
		if !relClose(tc.got, tc.want, 1e-14) {
			t.Errorf("%s = %.15g, want %.15g", tc.name, tc.got, tc.want)
		}
	}
	// Divergence exactly at the limits.
	if !math.IsInf(CheckpointRuntime(1, 1, 100, 120, 20), 1) || !math.IsInf(MessageLoggingRuntime(1, 1, 1, 100, 8, 42.5, 30), 1) {
		t.Error("runtimes must diverge at m = c + k_c and m = c/v + k_ml")
	}
}
