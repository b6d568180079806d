package replication

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
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

// TestPeriodicMeanReference checks Periodic.Mean against closed forms: one
// segment of one pair, ∫₀ᴸ(2e^{−λt} − e^{−2λt})dt = 2(1 − e^{−λL})/λ −
// (1 − e^{−2λL})/(2λ), the same under both strategies, with the recovery
// started again by failures, (e^{2λR} − 1)/(2λ); W plus the checkpoints
// without failures; independent segments under the restart strategy with
// replacements ready at once; and that RestartPeriod is where the model is
// least when failures are rare.
func TestPeriodicMeanReference(t *testing.T) {
	const lambda, L, R = 1e-3, 500.0, 20.0
	up := 2*(1-math.Exp(-lambda*L))/lambda - (1-math.Exp(-2*lambda*L))/(2*lambda)
	s := 2*math.Exp(-lambda*L) - math.Exp(-2*lambda*L)
	rec := math.Expm1(2*lambda*R) / (2 * lambda)
	want := (up + (1-s)*rec) / s
	for _, restart := range []bool{false, true} {
		m := Periodic{Lambda: lambda, Pairs: 1, Work: L, Tau: L, R: R, Restart: restart, Ready: 50}
		if got := m.Mean(); math.Abs(got-want) > 1e-9*want {
			t.Errorf("one pair, one segment, restart %v: %.12g, closed form %.12g", restart, got, want)
		}
		// two segments of 500 s and one of 200 s, no failures: W + 2C
		m = Periodic{Pairs: 64, Work: 1200, Tau: 500, C: 30, R: R, Restart: restart, Ready: 100}
		if got := m.Mean(); math.Abs(got-1260) > 1e-9 {
			t.Errorf("without failures, restart %v: %v, want 1260", restart, got)
		}
	}
	// replacements ready at once: every segment starts with whole pairs
	const b, tau, C = 8, 400.0, 25.0
	seg := func(l float64) float64 {
		m := Periodic{Lambda: lambda, Pairs: b, Work: l, Tau: l, R: R}
		return m.Mean()
	}
	independent := 3*seg(tau+C) + seg(100)
	if got := (Periodic{Lambda: lambda, Pairs: b, Work: 3*tau + 100, Tau: tau, C: C, R: R, Restart: true}).Mean(); math.Abs(got-independent) > 1e-9*got {
		t.Errorf("restarts ready at once: %.9g, independent segments %.9g", got, independent)
	}
	for _, bad := range []Periodic{
		{Lambda: -1, Pairs: 4, Work: 1, Tau: 1},
		{Lambda: 1e-3, Pairs: 4, Work: 1, Tau: 0},
		{Lambda: 1e-3, Pairs: 0, Work: 1, Tau: 1},
		{Lambda: 1e-3, Pairs: 4, Work: 1, Tau: 1, R: -1},
		{Lambda: 1e-3, Pairs: 4, Work: 10, Tau: 1, C: 1, Restart: true, Ready: 3}, // ready after more than a period
	} {
		if got := bad.Mean(); !math.IsNaN(got) {
			t.Errorf("%+v: %v, want NaN", bad, got)
		}
	}
	// b = 512 pairs of nodes failing every 5 years, a 10-minute checkpoint,
	// 30 days of work: the first-order period is within 1% of the exact
	// model's best, and well above Young's at the MTTI
	const pairs, cost, W = 512, 600.0, 30 * 86400.0
	lam := 1 / (5 * 365 * 86400.0)
	mean := func(tau float64) float64 {
		return Periodic{Lambda: lam, Pairs: pairs, Work: W, Tau: tau, C: cost, R: R, Restart: true}.Mean()
	}
	tOpt := RestartPeriod(cost, lam, pairs)
	best, bestTau := math.Inf(1), 0.0
	for tau := tOpt / 3; tau < 3*tOpt; tau *= 1.01 {
		if m := mean(tau); m < best {
			best, bestTau = m, tau
		}
	}
	at := mean(tOpt)
	young := math.Sqrt(2 * cost * MTTI(sim.FromSeconds(1/lam), pairs).Seconds())
	t.Logf("period %.0f s (exact best %.0f s, Young at the MTTI %.0f s): %.1f s against %.1f s", tOpt, bestTau, young, at, best)
	if at > 1.01*best || tOpt < 2*young {
		t.Errorf("RestartPeriod %.0f s gives %.1f s, the best period %.0f s gives %.1f s; Young at the MTTI %.0f s", tOpt, at, bestTau, best, young)
	}
}

// TestPeriodicMeanByDraws checks the model's algebra against draws of the
// process it describes, node by node: b pairs failing exponentially,
// segments tried again after an interruption, a recovery that failures start
// again, and, under the restart strategy, a replacement that is ready at a
// commit if it has been booting for Ready seconds without failing, and a
// Copy pause after a commit that restarts one. Both strategies, 40,000 draws
// each, within 4 standard errors; the strategies differ by far more than
// that.
func TestPeriodicMeanByDraws(t *testing.T) {
	for _, m := range []Periodic{
		{Lambda: 1.0 / 300, Pairs: 3, Work: 260, Tau: 50, C: 5, R: 12},
		{Lambda: 1.0 / 300, Pairs: 3, Work: 260, Tau: 50, C: 5, R: 12, Restart: true, Ready: 20},
		{Lambda: 1.0 / 300, Pairs: 3, Work: 260, Tau: 50, C: 5, R: 12, Restart: true, Ready: 20, Copy: 4},
		{Lambda: 1.0 / 300, Pairs: 3, Work: 260, Tau: 50, C: 5, R: 12, Restart: true, Ready: 55},
		{Lambda: 1.0 / 300, Pairs: 3, Work: 260, Tau: 50, C: 5, R: 12, Restart: true},
	} {
		rng := rand.New(rand.NewPCG(1, uint64(m.Ready)))
		const draws = 40000
		var sum, sq float64
		for range draws {
			x := drawPeriodic(m, rng)
			sum, sq = sum+x, sq+x*x
		}
		mean := sum / draws
		se := math.Sqrt((sq/draws - mean*mean) / (draws - 1))
		want := m.Mean()
		t.Logf("restart %v, ready %g s, copy %g s: %.2f ± %.2f s by draws, %.2f s by the model", m.Restart, m.Ready, m.Copy, mean, se, want)
		if math.Abs(mean-want) > 4*se {
			t.Errorf("%+v: %.2f ± %.2f s by draws, %.2f s by the model", m, mean, se, want)
		}
	}
}

// drawPeriodic draws the makespan of m's process.
func drawPeriodic(m Periodic, rng *rand.Rand) float64 {
	exp := func() float64 { return rng.ExpFloat64() / m.Lambda }
	type pair struct {
		dead  bool    // one node lost
		reset float64 // restart strategy: when the lost node's replacement last started booting
	}
	pairs := make([]pair, m.Pairs)
	full := int(m.Work / m.Tau)
	last := m.Work - float64(full)*m.Tau
	if last == 0 {
		full, last = full-1, m.Tau
	}
	now := 0.0
	for k := 0; k <= full; k++ {
		l := m.Tau + m.C
		if k == full {
			l = last
		}
		for {
			start := now
			// each pair's loss (both nodes) within the segment, if any, and
			// the time its single survivor lost the other, if that is all
			lost, lostAt := false, math.Inf(1)
			next := make([]pair, len(pairs))
			for i, p := range pairs {
				a := exp()
				if p.dead {
					if a < l {
						lost, lostAt = true, math.Min(lostAt, a)
					}
					next[i] = p
					continue
				}
				b := exp()
				if math.Max(a, b) < l {
					lost, lostAt = true, math.Min(lostAt, math.Max(a, b))
				} else if math.Min(a, b) < l {
					next[i] = pair{dead: true, reset: start + math.Min(a, b)}
				}
			}
			if lost {
				now = start + lostAt
				for { // the recovery, started again by any node's failure
					if f := rng.ExpFloat64() / (2 * float64(m.Pairs) * m.Lambda); f < m.R {
						now += f
						continue
					}
					now += m.R
					break
				}
				clear(pairs) // every node replaced
				continue
			}
			now = start + l
			if m.Restart && k < full {
				// the commit: a replacement is ready if it booted for Ready
				// seconds since its node (or it) last failed
				restarted := false
				for i := range next {
					p := &next[i]
					if !p.dead {
						continue
					}
					for f := math.Max(p.reset, start) + exp(); f < now; f += exp() {
						p.reset = f
					}
					if now-p.reset >= m.Ready {
						*p, restarted = pair{}, true
					}
				}
				if restarted {
					now += m.Copy // a pause that no failure interrupts
				}
			}
			pairs = next
			break
		}
	}
	return now
}

// TestPeriodicMonteCarlo runs replication on b = 2 pairs whose nodes fail
// exponentially every 120 s on average, with a checkpoint every 100 s of
// work: under the restart strategy with spares ready at once (27 replicas
// restarted and 12 interruptions a run) and booting for 20 s, and with pairs
// left degraded. The mean makespan is Periodic.Mean's, within 4 standard
// errors (FTSIM_RESTART_BOOTS adds longer boots). (6,000 runs of the first on other seeds gave 1663.7 ± 3.9 s
// against 1657.6 s; the runs lose a little more than the model, as a
// rollback sets a replica that was a step ahead of its saved twin back by
// that step.)
func TestPeriodicMonteCarlo(t *testing.T) {
	reps := 400
	if v, err := strconv.Atoi(os.Getenv("FTSIM_RESTART_REPS")); err == nil {
		reps = v
	}
	if testing.Short() {
		reps = 100
	}
	const period, mtbf = 100 * sim.Second, 120 * sim.Second
	job := func() sim.Workload {
		w, err := synthetic.New(synthetic.Params{Steps: 2500, StepOps: 2e8, State: 1 << 20}, 4)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	type variant struct {
		name    string
		restart bool
		boot    sim.Time
		spares  int
	}
	cases := []variant{
		{"restart, spares ready at once", true, 0, 400},
		{"restart, spares boot 20 s", true, 20 * sim.Second, 400},
		{"pairs degraded", false, 0, 400},
	}
	// FTSIM_RESTART_BOOTS=50,80 adds the restart strategy with spares that
	// boot that many seconds, from a pool of 20,000 (long boots fail often)
	for _, f := range strings.FieldsFunc(os.Getenv("FTSIM_RESTART_BOOTS"), func(r rune) bool { return r == ',' }) {
		v, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("FTSIM_RESTART_BOOTS: %v", err)
		}
		cases = append(cases, variant{fmt.Sprintf("restart, spares boot %d s", v), true, sim.Time(v) * sim.Second, 20000})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			protocol := func() *Protocol {
				p := withCheckpoints(t, period)
				p.cfg.RestartReplicas = c.restart
				return p
			}
			cfg := sim.DefaultConfig()
			cfg.Spares, cfg.SpareBoot = c.spares, c.boot
			ff := protocol()
			res := run(t, cfg, job(), ff)
			st := res.Stats
			cost := st.CheckpointTime.Seconds() / float64(st.Checkpoints)
			m := Periodic{Lambda: 1 / mtbf.Seconds(), Pairs: 2, Work: res.Makespan.Seconds() - st.CheckpointTime.Seconds(),
				Tau: period.Seconds(), C: cost, Restart: c.restart, Ready: (cfg.DetectDelay + c.boot).Seconds(), Copy: ff.RestartCopyCost(),
				// the spare boots, then both replicas read each piece
				R: (cfg.DetectDelay + c.boot).Seconds() + 2*ff.Checkpointer().RestoreCost(cost)}
			want := m.Mean()
			var sum, sq, restarted, interrupted float64
			for r := range reps {
				cfg := cfg
				cfg.Failures, cfg.NodeMTBF, cfg.Seed = sim.Exponential, mtbf, uint64(r+1)
				p := protocol()
				res := run(t, cfg, job(), p)
				if !res.Finished || !res.Outcome.OK {
					t.Fatalf("rep %d: finished %v, outcome %+v", r, res.Finished, res.Outcome)
				}
				x := res.Makespan.Seconds()
				sum, sq = sum+x, sq+x*x
				restarted, interrupted = restarted+float64(p.C.Restarted), interrupted+float64(p.C.Interruptions)
			}
			n := float64(reps)
			mean := sum / n
			se := math.Sqrt((sq/n - mean*mean) / (n - 1))
			t.Logf("makespan %.1f ± %.1f s, the model %.1f s (%+v); %.1f replicas restarted and %.1f interruptions a run",
				mean, se, want, m, restarted/n, interrupted/n)
			if math.Abs(mean-want) > 4*se {
				t.Errorf("mean makespan %.1f s, want %.1f s (4 standard errors: %.1f s)", mean, want, 4*se)
			}
		})
	}
}

// TestBestTau checks the ternary search against every whole number of
// segments up to 8 times the first-order period's, under both strategies
// and failure rates from rare to one failure per period, and that it beats
// the first-order period.
func TestBestTau(t *testing.T) {
	for _, m := range []Periodic{
		{Lambda: 1 / (25 * 86400.0), Pairs: 256, Work: 28740, C: 176, R: 474},
		{Lambda: 1 / (2 * 86400.0), Pairs: 256, Work: 28740, C: 176, R: 474},
		{Lambda: 1 / (2 * 86400.0), Pairs: 256, Work: 28740, C: 176, R: 474, Restart: true, Ready: 123},
		{Lambda: 1 / (25 * 86400.0), Pairs: 256, Work: 28740, C: 176, R: 474, Restart: true, Ready: 123},
		{Lambda: 1 / 120.0, Pairs: 2, Work: 1000, C: 1, R: 20, Restart: true, Ready: 20},
		{Lambda: 1 / 120.0, Pairs: 2, Work: 1000, C: 1, R: 20},
	} {
		tau, mean := m.BestTau()
		first := m.firstOrder()
		bestN, best := 0, math.Inf(1)
		for n := 1; n <= int(math.Ceil(8*m.Work/first)); n++ {
			q := m
			q.Tau = m.Work / float64(n)
			if v := q.Mean(); v < best {
				bestN, best = n, v
			}
		}
		q := m
		q.Tau = first
		atFirst := q.Mean()
		t.Logf("restart %v, λ = 1/%.0f s: best %.1f s (%.0f s) by search, %.1f s (%d segments) by scan; first-order period %.0f s gives %.1f s",
			m.Restart, 1/m.Lambda, tau, mean, best, bestN, first, atFirst)
		if mean != best || math.Abs(tau-m.Work/float64(bestN)) > 1e-9*tau {
			t.Errorf("%+v: search %.3f s at τ = %.3f s, scan %.3f s at %d segments", m, mean, tau, best, bestN)
		}
		if mean > atFirst {
			t.Errorf("%+v: best %.3f s above the first-order period's %.3f s", m, mean, atFirst)
		}
	}
}
