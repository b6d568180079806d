package dps

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"ftsim/sim"
	"ftsim/workloads/synthetic"
)

// degradedRun follows the load model along one failure trace: failures (in
// time order) of nodes on a ring of n, each making the longest run of dead
// nodes, plus one, the pace of the work T; maxLevel caps that load (0: no
// cap). It returns the makespan.
func degradedRun(T float64, n int, times []float64, nodes []int, maxLevel int) float64 {
	dead := make([]bool, n)
	now, work, level := 0.0, 0.0, 1
	for i, at := range times {
		if work+(at-now)/float64(level) >= T {
			break
		}
		work += (at - now) / float64(level)
		now = at
		dead[nodes[i]] = true
		run := 1 // the run of dead nodes through the new one
		for j := 1; j < n && dead[(nodes[i]+j)%n]; j++ {
			run++
		}
		for j := 1; j < n && dead[(nodes[i]-j+n)%n]; j++ {
			run++
		}
		level = max(level, 1+run)
		if maxLevel > 0 {
			level = min(level, maxLevel)
		}
	}
	return now + (T-work)*float64(level)
}

// The model's expectation against draws of the load process, node by node:
// with the load capped at 3 the draws are what Mean integrates (but for the
// declining number of live nodes, which the model leaves out, as it does the
// runs of three and more that the uncapped draws include); without failures
// or with them too rare to meet, the first-order form.
func TestDegradedMeanByDraws(t *testing.T) {
	const draws = 20000
	for _, c := range []struct {
		name      string
		n         int
		failures  float64 // Nλ·T
		maxLevel  int
		tolerance float64 // allowed bias beside 4 standard errors, as a fraction of T
	}{
		{"2,000 nodes, 15 failures per T, load capped at 3", 2000, 15, 3, 0.003},
		{"2,000 nodes, 15 failures per T", 2000, 15, 0, 0.008},
		{"10,000 nodes, 27 failures per T (the exascale scenario's)", 10000, 27, 0, 0.003},
		{"200 nodes, 0.5 failures per T", 200, 0.5, 0, 0.002},
	} {
		t.Run(c.name, func(t *testing.T) {
			const T = 1.0
			lambda := c.failures / T / float64(c.n)
			m := Degraded{Work: T, Nodes: c.n, Lambda: lambda}
			want := m.Mean()
			rng := rand.New(rand.NewPCG(1, uint64(c.n)))
			var sum, sq float64
			var times []float64
			var nodes []int
			for range draws {
				times, nodes = times[:0], nodes[:0]
				live := make([]int, c.n)
				for i := range live {
					live[i] = i
				}
				// the makespan is at most T·(1 + the failures' count)
				for now := 0.0; len(live) > 1 && now < 3*T*float64(c.n); {
					now += rng.ExpFloat64() / (lambda * float64(len(live)))
					k := rng.IntN(len(live))
					times, nodes = append(times, now), append(nodes, live[k])
					live = slices.Delete(live, k, k+1)
					if len(times) > 4*int(c.failures)+40 {
						break
					}
				}
				x := degradedRun(T, c.n, times, nodes, c.maxLevel)
				sum += x
				sq += x * x
			}
			mean := sum / draws
			se := math.Sqrt((sq/draws - mean*mean) / draws)
			t.Logf("model %.5f, draws %.5f ± %.5f (%.2f SE)", want, mean, se, (mean-want)/se)
			if math.Abs(mean-want) > 4*se+c.tolerance*T {
				t.Errorf("model %.5f, draws %.5f ± %.5f", want, mean, se)
			}
		})
	}
	// no failures: the fault-free time; two nodes far apart: first order
	if got := (Degraded{Work: 100, Nodes: 8}).Mean(); got != 100 {
		t.Errorf("without failures Mean = %g, want 100", got)
	}
	m := Degraded{Work: 100, Nodes: 1 << 30, Lambda: 1e-2 / (1 << 30)}
	first := 2*m.Work + math.Expm1(-1)/1e-2
	if got := m.Mean(); math.Abs(got-first) > 1e-6*first {
		t.Errorf("on a huge ring Mean = %.9g, want the first-order %.9g", got, first)
	}
	for _, bad := range []Degraded{{Work: -1, Nodes: 4, Lambda: 1}, {Work: 1, Nodes: 1, Lambda: 1}, {Work: 1, Nodes: 4, Lambda: math.NaN()}} {
		if got := bad.Mean(); !math.IsNaN(got) {
			t.Errorf("%+v: Mean = %g, want NaN", bad, got)
		}
	}
}

// The simulator against the load model, run by run: the DPS protocol on a
// ring of synthetic objects, one per node, with no spare, takes the same
// time as the model along the run's own failures, to within the recoveries'
// stalls.
func TestDegradedAlongTrace(t *testing.T) {
	const n, steps = 16, 400
	job := func() sim.Workload {
		w, err := synthetic.New(synthetic.Params{Steps: steps, StepOps: 1e10, Exchange: 1000, State: 1 << 20}, n)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	cfg := baseConfig()
	cfg.Nodes, cfg.Spares = n, 0
	pc := DefaultConfig()
	pc.Period = 100 * sim.Second
	ff, _ := runDPS(t, cfg, job(), pc)
	T := ff.Makespan.Seconds()
	levels := 0
	for seed := range uint64(12) {
		cfg := cfg
		cfg.Failures, cfg.NodeMTBF, cfg.Seed = sim.Exponential, sim.Time(n/4*steps*10)*sim.Second, seed+1
		res, p := runDPS(t, cfg, job(), pc)
		checkClean(t, "failures", res, p)
		var times []float64
		var nodes []int
		for _, r := range res.Recoveries {
			times, nodes = append(times, r.FailedAt.Seconds()), append(nodes, int(r.Node))
		}
		want := degradedRun(T, n, times, nodes, 0)
		got := res.Makespan.Seconds()
		t.Logf("seed %d: %d failures, simulated %.1f s, model %.1f s", seed+1, len(times), got, want)
		// each recovery may stall the run for its detection and a
		// checkpoint period of re-execution; and the objects that a new
		// load slows may be ahead of the slowest, by at most the ring's
		// radius in steps
		stall := float64(len(times)) * (cfg.DetectDelay.Seconds() + pc.Period.Seconds())
		if ahead := n / 2 * T / steps; got < want-ahead || got > want+stall {
			t.Errorf("seed %d: simulated %.1f s, model along the trace %.1f s (+ at most %.1f s of stalls)", seed+1, got, want, stall)
		}
		if want > 2*T {
			levels++
		}
	}
	if levels == 0 {
		t.Error("no run reached a load of three: the test does not exercise runs of dead nodes")
	}
}
