package dps

import (
	"testing"

	"ftsim/sim"
)

func metric(t *testing.T, res sim.Result, name string) float64 {
	t.Helper()
	v, ok := res.Stats.Metric(name)
	if !ok {
		t.Fatalf("metric %s not reported (have %v)", name, res.Stats.Metrics())
	}
	return v
}

// The memory metrics: without checkpoints nothing is ever pruned, so the
// queues peak at exactly the duplicate bytes sent and the states at the
// initial copies; checkpoints prune the queues; the farm's split copies are
// all released once every result is merged; the total is the runtime's peak
// of backup memory.
func TestMemoryMetrics(t *testing.T) {
	for _, c := range []struct {
		name    string
		farm    bool
		every   int64
		backups int
		plan    []sim.ScriptedFailure
	}{
		{"life, no checkpoint", false, 0, 1, nil},
		{"life, 2 backups, no checkpoint", false, 0, 2, nil},
		{"life, checkpoints", false, 4, 1, nil},
		{"life, checkpoints, failure", false, 4, 1, []sim.ScriptedFailure{{Node: 1, Progress: 0.5, ByProgress: true}}},
		{"farm", true, 0, 1, nil},
		{"farm, a worker lost", true, 0, 1, []sim.ScriptedFailure{{Node: 2, Progress: 0.4, ByProgress: true}}},
		{"farm, master and a worker lost", true, 3, 1, []sim.ScriptedFailure{{Node: 0, Progress: 0.3, ByProgress: true}, {Node: 2, Progress: 0.6, ByProgress: true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := baseConfig()
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = c.plan
			pc := DefaultConfig()
			pc.Every, pc.Backups = c.every, c.backups
			var wl sim.Workload = lifeJob(t, "overlap")
			if c.farm {
				wl = farmJob(t)
			}
			res, p := runDPS(t, cfg, wl, pc)
			checkClean(t, c.name, res, p)
			all, queue := metric(t, res, MetricBackupPeak), metric(t, res, MetricQueuePeak)
			state, copies := metric(t, res, MetricStatePeak), metric(t, res, MetricCopyPeak)
			if all != float64(res.Stats.PeakMem[sim.MemBackup]) || all <= 0 {
				t.Fatalf("%s = %g, runtime peak of backup memory %d", MetricBackupPeak, all, res.Stats.PeakMem[sim.MemBackup])
			}
			if all > queue+state+copies {
				t.Fatalf("total peak %g above the sum of the kinds' peaks %g", all, queue+state+copies)
			}
			var stateful int64
			for i := range p.RT.NumObjects() {
				if !p.th[i].stateless {
					stateful += p.RT.ModeledSize(sim.ObjID(i))
				}
			}
			switch {
			case c.farm:
				if copies <= 0 || p.memTot[memCopy] != 0 {
					t.Fatalf("split copies: peak %g, %d bytes left after the merge confirmed everything", copies, p.memTot[memCopy])
				}
				// the run ends as the last result is merged: its duplicate may
				// still be on its way to the master's backup
				if queue <= 0 || queue > float64(p.C.DuplicateBytes) {
					t.Fatalf("queue peak %g, duplicate bytes %d", queue, p.C.DuplicateBytes)
				}
			case c.every == 0:
				// nothing pruned, states constant: every peak is exact
				if queue != float64(p.C.DuplicateBytes) || state != float64(stateful*int64(c.backups)) || all != queue+state || copies != 0 {
					t.Fatalf("queue %g (duplicates %d), state %g (want %d), total %g, copies %g",
						queue, p.C.DuplicateBytes, state, stateful*int64(c.backups), all, copies)
				}
			default:
				if queue >= float64(p.C.DuplicateBytes)/2 || copies != 0 {
					t.Fatalf("checkpoints every %d: queue peak %g of %d duplicate bytes; copies %g", c.every, queue, p.C.DuplicateBytes, copies)
				}
			}
		})
	}
}
