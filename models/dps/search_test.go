package dps

import (
	"fmt"
	"os"
	"testing"

	"ftsim/sim"
	"ftsim/sim/simtest"
	"ftsim/workloads/pida"
)

// failurePlans enumerates one or two failures of parallel IDA* under DPS
// with order logging over seeds, frame sizes (message sizes decide which
// copy of an object arrives first), checkpoint spacings, backup counts,
// detection delays, failed nodes and the progress at which they fail: 27,360
// runs. The interleavings TestDPSRegressions pins were found this way.
func failurePlans(each func(name string, cfg sim.Config, pc Config, pp pida.Params)) {
	for _, seed := range []int64{1, 2, 3} {
		for _, bpf := range []int64{32, 2048} {
			for _, every := range []int64{0, 2, 8} {
				for _, backups := range []int{1, 2} {
					for _, detect := range []sim.Time{sim.Microsecond, sim.Millisecond} {
						for first := range sim.NodeID(4) {
							for k := 1; k <= 19; k++ {
								for second := -1; second <= 3; second++ {
									at := float64(k) / 20
									plan := []sim.ScriptedFailure{{Node: first, Progress: at, ByProgress: true}}
									if second >= 0 {
										plan = append(plan, sim.ScriptedFailure{Node: (first + 1 + sim.NodeID(second)%3) % 4,
											Progress: min(at+0.05*float64(second+1), 0.97), ByProgress: true})
									}
									cfg := baseConfig()
									cfg.DetectDelay = detect
									cfg.Failures = sim.ScriptedFailures
									cfg.Planned = plan
									cfg.Limit = 200 * sim.Millisecond // fault-free 8 ms: a hang fails fast
									pc := DefaultConfig()
									pc.Every, pc.Backups, pc.LogOrder = every, backups, true
									pp := pida.DefaultParams()
									pp.Workers, pp.Seed, pp.BytesPerFrame = 8, seed, bpf
									name := fmt.Sprintf("seed %d, %d B/frame, every %d, %d backups, detection %v, failures %+v",
										seed, bpf, every, backups, detect, plan)
									each(name, cfg, pc, pp)
								}
							}
						}
					}
				}
			}
		}
	}
}

// timedPlans is failurePlans with failures at given times instead of at
// given progress, and immediate detection: a progress trigger fires between
// two handlers, a time can fall in the middle of a transfer, such as a
// checkpoint still on its way to a backup when its thread's node fails
// (TestDPSRegressions' stale checkpoint). The plans of simtest.TimedPlans
// over seeds, two bandwidths (a slower network
// keeps checkpoints longer on the wire: the backup-ahead case), checkpoint
// spacings and backup counts: 36,480 runs.
func timedPlans(t *testing.T, each func(name string, cfg sim.Config, pc Config, pp pida.Params)) {
	for _, seed := range []int64{1, 2, 3} {
		for _, bw := range []float64{1e8, 1e7} {
			for _, every := range []int64{0, 1, 2, 4} {
				for _, backups := range []int{1, 2} {
					timedPlansOf(t, seed, bw, every, backups, each)
				}
			}
		}
	}
}

// timedPlansOf is timedPlans for one seed, bandwidth, checkpoint spacing and
// backup count.
func timedPlansOf(t *testing.T, seed int64, bw float64, every int64, backups int, each func(name string, cfg sim.Config, pc Config, pp pida.Params)) {
	pc := DefaultConfig()
	pc.Every, pc.Backups, pc.LogOrder = every, backups, true
	pp := pida.DefaultParams()
	pp.Workers, pp.Seed = 8, seed
	wl, err := pida.New(pp, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := baseConfig()
	base.Bandwidth = bw
	res, _ := runDPS(t, base, wl, pc)
	for _, plan := range simtest.TimedPlans(res.Makespan, 4) {
		cfg := base
		cfg.DetectDelay = sim.Microsecond
		cfg.Failures = sim.ScriptedFailures
		cfg.Planned = plan
		cfg.Limit = 300 * sim.Millisecond // fault-free under 30 ms: a hang fails fast
		name := fmt.Sprintf("seed %d, bandwidth %g, every %d, %d backups, failures %+v", seed, bw, every, backups, plan)
		each(name, cfg, pc, pp)
	}
}

// Every failure plan of failurePlans ends with the reference answer and no
// protocol anomaly, unless it took a thread with all its backups (then DPS
// restarts from scratch, which may not end within the limit). By default
// one plan in 97 runs (283 runs, a few seconds); FTSIM_SEARCH=1 runs them
// all (about 8 minutes on 2 cores).
func TestFailurePlanSearch(t *testing.T) {
	searchPlans(t, failurePlans)
}

// TestTimedPlanSearch is TestFailurePlanSearch over timedPlans: by default
// one plan in 97 (377 runs), all with FTSIM_SEARCH=1.
func TestTimedPlanSearch(t *testing.T) {
	searchPlans(t, func(each func(string, sim.Config, Config, pida.Params)) { timedPlans(t, each) })
}

// searchPlans runs the plans of a search: one in 97 by default, all with
// FTSIM_SEARCH=1.
func searchPlans(t *testing.T, plans func(each func(name string, cfg sim.Config, pc Config, pp pida.Params))) {
	stride := 97
	if os.Getenv("FTSIM_SEARCH") != "" {
		stride = 1
	}
	i, runs := 0, 0
	plans(func(name string, cfg sim.Config, pc Config, pp pida.Params) {
		i++
		if (i-1)%stride != 0 {
			return
		}
		runs++
		wl, err := pida.New(pp, 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, p := runDPS(t, cfg, wl, pc)
		simtest.AuditMemory(t, name, p)
		clean := res.Finished && res.Outcome.OK && p.C.WrongDrops == 0 && p.C.DoubleProcessed == 0
		if p.C.OrderConflicts != 0 || !clean && res.Stats.Unrecoverable == 0 {
			t.Errorf("%s: finished %v, outcome %+v, counters %+v", name, res.Finished, res.Outcome, p.C)
		}
	})
	if runs == 0 {
		t.Fatal("no plan ran")
	}
	t.Logf("%d of %d failure plans run", runs, i)
}
