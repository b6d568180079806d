package experiment

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"ftsim/sim"
)

// Between run completions, a followed Progress still reports, with the
// share done of each simulation under way, and extrapolates its ETA from the
// simulations done plus those shares; a run-count-only Progress stays quiet.
func TestProgressFollowsMeters(t *testing.T) {
	rt := finishedRuntime(t)
	busy, idle := &meter{}, &meter{}
	busy.done.Store(2)
	busy.spent.Store(int64(2 * time.Second))
	busy.started.Store(time.Now().UnixNano())
	busy.rt.Store(rt) // as if still running: its workload is done
	var b bytes.Buffer
	p := NewProgress(&b, 2)
	p.interval = time.Millisecond
	p.follow([]*meter{busy, idle}, 4)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		p.mu.Lock()
		printed := p.printed
		p.mu.Unlock()
		if printed || time.Now().After(deadline) {
			break
		}
	}
	p.Stop()
	line, _, _ := strings.Cut(b.String(), "\n")
	if !strings.HasPrefix(line, "progress: 0/2 runs (running: 100%), ") || strings.HasSuffix(line, "ETA ?") {
		t.Fatalf("report between completions %q: want 0/2 runs, one simulation at 100%% and an ETA (3 of 4 simulations done)", line)
	}
	n := b.Len()
	time.Sleep(5 * time.Millisecond)
	if b.Len() != n {
		t.Fatal("reports continued after Stop")
	}
}

// Between reports a followed Progress samples the simulations under way, so
// that their gains are seen, and prints nothing.
func TestProgressSamplesBetweenReports(t *testing.T) {
	rt := finishedRuntime(t)
	m := &meter{}
	m.started.Store(time.Now().UnixNano())
	m.rt.Store(rt) // as if still running: its workload is done
	var b bytes.Buffer
	p := NewProgress(&b, 1)
	p.interval, p.every = time.Hour, time.Millisecond
	p.follow([]*meter{m}, 1)
	var gained float64
	for deadline := time.Now().Add(10 * time.Second); gained == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		p.mu.Lock()
		gained = m.gained
		p.mu.Unlock()
	}
	p.Stop()
	if gained != 1 || b.Len() != 0 {
		t.Fatalf("gained %v, printed %q; want the whole workload seen and nothing printed", gained, b.String())
	}
}

func TestEstimateLeft(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name              string
		sims, workers, nf int
		spent             time.Duration
		running           []simUnderWay
		want              time.Duration // -1: no estimate
	}{
		{"nothing known yet", 3, 2, 0, 0, []simUnderWay{{4 * s, 0, 0}}, -1},
		// the old estimate (4 simulations, 1.75 done in 40 s) said 51 s
		{"the longest running one sets the pace", 4, 2, 1, 10 * s, []simUnderWay{{30 * s, 0.25, 0.25}, {10 * s, 0.5, 0.5}}, 90 * s},
		{"those not started take the mean", 5, 2, 2, 20 * s, []simUnderWay{{5 * s, 0.5, 0.5}}, 12500 * time.Millisecond},
		{"a running one without progress takes the mean", 3, 2, 2, 20 * s, []simUnderWay{{4 * s, 0, 0}}, 6 * s},
		// it may be restarting from scratch until its limit (the line said ETA 0s)
		{"one without progress beyond the mean is not known", 3, 2, 2, 20 * s, []simUnderWay{{11 * s, 0, 0}}, -1},
		{"a finished workload leaves nothing", 2, 1, 1, 10 * s, []simUnderWay{{10 * s, 1, 1}}, 0},
		// 0.6 done in 9 s, then back to 0 and 0.15 again in 3 s: 12 s for
		// 0.75, 13.6 s for the 0.85 left (elapsed over share said 68 s)
		{"a rollback keeps the rate", 1, 1, 0, 0, []simUnderWay{{12 * s, 0.15, 0.75}}, 13600 * time.Millisecond},
		// the one rolled back projects 12 + 13.6 s, the mean of it and 10 s
		// is 17.8 s for the one not started; two workers share 31.4 s
		{"a rollback's projection enters the mean", 3, 2, 1, 10 * s, []simUnderWay{{12 * s, 0.15, 0.75}}, 15700 * time.Millisecond},
		// first seen at 0.2% after a rollback: 1 s over 0.002 would say 8 min
		{"a tiny gain takes the mean", 3, 2, 2, 20 * s, []simUnderWay{{1 * s, 0.002, 0.002}}, 9 * s},
	} {
		got, ok := estimateLeft(tc.sims, tc.workers, tc.nf, tc.spent, tc.running)
		if !ok {
			got = -1
		}
		if got != tc.want {
			t.Errorf("%s: %v (%v), want %v", tc.name, got, ok, tc.want)
		}
	}
}

// A meter sums the gains it sees, so a rollback does not undo the work
// before it, and starts again with each simulation.
func TestMeterObserve(t *testing.T) {
	var m meter
	for i, step := range []struct {
		started     int64
		share, want float64
	}{
		{1, 0.25, 0.25},
		{1, 0.5, 0.5},
		{1, 0.125, 0.5}, // rolled back
		{1, 0.375, 0.75},
		{1, 0.375, 0.75},
		{2, 0.125, 0.125}, // the next simulation
	} {
		m.observe(step.started, step.share)
		if m.gained != step.want {
			t.Errorf("step %d: gained %v, want %v", i, m.gained, step.want)
		}
	}
}

// finishedRuntime returns the runtime of a run of the small scenario, run
// to its end: a meter holding it shows a simulation whose workload is done.
func finishedRuntime(t *testing.T) *sim.Runtime {
	t.Helper()
	s := smallScenario(t)
	w, err := buildWorkload(s)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clusterConfig(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sim.New(cfg, w, buildNone())
	if err != nil {
		t.Fatal(err)
	}
	if res := rt.Run(); !res.Finished {
		t.Fatal("the small scenario did not finish")
	}
	return rt
}
