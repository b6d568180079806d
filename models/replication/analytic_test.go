package replication

import (
	"math"
	"testing"

	"ftsim/sim"
	"ftsim/workloads/synthetic"
)

// TestMNFTIReference checks the closed form against VALIDATION.md's values
// and against the Markov chain it solves (k pairs degraded; a failure hits a
// dead processor, a degraded pair's survivor, or an intact pair).
func TestMNFTIReference(t *testing.T) {
	for _, c := range []struct {
		b    int
		want float64
	}{{1, 3}, {2, 11.0 / 3}, {10, 6.6755}} {
		if got := MNFTI(c.b); math.Abs(got-c.want) > 5e-5 {
			t.Errorf("MNFTI(%d) = %.6f, want %.4f", c.b, got, c.want)
		}
	}
	for b := 1; b <= 60; b++ {
		e := 1 / (1 - 0.5) // E(b): half the processors are dead, the other half interrupt
		for k := b - 1; k >= 0; k-- {
			e = (1 + float64(b-k)/float64(b)*e) / (1 - float64(k)/float64(2*b))
		}
		if got := MNFTI(b); math.Abs(got-e) > 1e-9*e {
			t.Errorf("MNFTI(%d) = %.12g, the chain gives %.12g", b, got, e)
		}
		// the failures of dead processors add exactly one on average
		if got := MNFTIRunning(b); math.Abs(got-(e-1)) > 1e-9*e {
			t.Errorf("MNFTIRunning(%d) = %.12g, want MNFTI − 1 = %.12g", b, got, e-1)
		}
	}
	if got := MNFTIRunning(2); math.Abs(got-8.0/3) > 1e-12 {
		t.Errorf("MNFTIRunning(2) = %v, want 8/3", got)
	}
	// b = 5000 (the 10,000-node machine): about 1 + √(πb)
	if got, approx := MNFTI(5000), 1+math.Sqrt(math.Pi*5000); math.Abs(got-approx) > 0.01*approx {
		t.Errorf("MNFTI(5000) = %v, want about %v", got, approx)
	}
}

// firstInterruption stops the run at the first interruption.
type firstInterruption struct{ *Protocol }

func (p firstInterruption) OnFailure(f sim.Failure) {
	p.Protocol.OnFailure(f)
	if p.C.Interruptions > 0 {
		p.RT.Abort("interrupted")
	}
}

// TestMTTIMonteCarlo runs b replica pairs on 2b nodes with exponential
// failures until the first interruption: its mean time is μ·MNFTI/(2b)
// (VALIDATION.md) and the mean number of node failures until then MNFTI^rp,
// each within 4 standard errors.
func TestMTTIMonteCarlo(t *testing.T) {
	reps := 3000
	if testing.Short() {
		reps = 600
	}
	const mtbf = 100 * sim.Second
	for _, b := range []int{1, 2, 10} {
		var tSum, tSq, fSum, fSq float64
		for r := range reps {
			w, err := synthetic.New(synthetic.Params{Steps: 100, StepOps: 1e11, State: 1}, 2*b)
			if err != nil {
				t.Fatal(err)
			}
			cfg := sim.DefaultConfig()
			cfg.Nodes = 2 * b
			cfg.Failures, cfg.NodeMTBF = sim.Exponential, mtbf
			cfg.Seed = uint64(r + 1)
			p := newProtocol(t, Config{})
			rt, err := sim.New(cfg, w, firstInterruption{p})
			if err != nil {
				t.Fatal(err)
			}
			if res := rt.Run(); res.Finished {
				t.Fatalf("b=%d rep %d finished before an interruption", b, r)
			}
			if p.C.Interruptions != 1 {
				t.Fatalf("b=%d rep %d: %d interruptions", b, r, p.C.Interruptions)
			}
			x, f := p.C.InterruptedAt[0].Seconds(), float64(p.C.AppFailures)
			tSum, tSq, fSum, fSq = tSum+x, tSq+x*x, fSum+f, fSq+f*f
		}
		n := float64(reps)
		check := func(what string, sum, sq, want float64) {
			mean := sum / n
			se := math.Sqrt((sq/n - mean*mean) / (n - 1))
			t.Logf("b=%d %s: %.4f ± %.4f (want %.4f)", b, what, mean, se, want)
			if math.Abs(mean-want) > 4*se {
				t.Errorf("b=%d %s: mean %.4f, want %.4f (4 standard errors: %.4f)", b, what, mean, want, 4*se)
			}
		}
		check("time to interruption (s)", tSum, tSq, MTTI(mtbf, b).Seconds())
		check("failures to interruption", fSum, fSq, MNFTIRunning(b))
	}
}
