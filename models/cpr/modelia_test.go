package cpr

import (
	"testing"

	"ftsim/models/none"
	"ftsim/sim"
	"ftsim/workloads/farm"
	"ftsim/workloads/life"
)

func farmJob(t *testing.T) *farm.Workload {
	t.Helper()
	p := farm.DefaultParams()
	p.Width, p.Height, p.MaxIter, p.Tile = 128, 128, 500, 16
	p.IterOps = 1e4 // make tasks take milliseconds
	w, err := farm.New(p, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A worker's node dies at various points of progress: Model-Ia re-creates the
// worker and resubmits its task; nobody restarts, the image is right, and the
// run is faster than restarting from scratch. The master's node dying is
// reported as unrecoverable by design and handled by a restart.
func TestModelIaResubmits(t *testing.T) {
	cases := []struct {
		name          string
		node          sim.NodeID
		spares        int
		unrecoverable int
	}{
		{"worker, spare", 2, 1, 0},
		{"worker, no spare", 3, 0, 0},
		{"master", 0, 1, 1},
	}
	for _, c := range cases {
		for _, at := range []float64{0.1, 0.5, 0.9} {
			cfg := sim.DefaultConfig()
			cfg.Spares = c.spares
			cfg.SpareBoot = sim.Millisecond
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = []sim.ScriptedFailure{{Node: c.node, Progress: at, ByProgress: true}}
			p := NewModelIa()
			rt, _ := sim.New(cfg, farmJob(t), p)
			res := rt.Run()
			if !res.Finished || !res.Outcome.OK {
				t.Fatalf("%s at %.0f%%: finished %v outcome %+v", c.name, 100*at, res.Finished, res.Outcome)
			}
			if res.Stats.Unrecoverable != c.unrecoverable {
				t.Fatalf("%s at %.0f%%: unrecoverable %d, want %d", c.name, 100*at, res.Stats.Unrecoverable, c.unrecoverable)
			}
			if c.unrecoverable == 0 && (res.Stats.Restarts != 0 || p.Resubmitted == 0) {
				t.Fatalf("%s at %.0f%%: restarts %d, resubmitted %d", c.name, 100*at, res.Stats.Restarts, p.Resubmitted)
			}
			if c.unrecoverable == 0 {
				rt2, _ := sim.New(cfg, farmJob(t), none.New())
				base := rt2.Run()
				if res.Makespan >= base.Makespan {
					t.Fatalf("%s at %.0f%%: Model-Ia %v, restart from scratch %v", c.name, 100*at, res.Makespan, base.Makespan)
				}
			}
		}
	}
}

// Model-Ia on a workload that is not a task farm ends the run with a clear note.
func TestModelIaNeedsAFarm(t *testing.T) {
	p := life.DefaultParams()
	p.Width, p.Height, p.Generations = 16, 16, 2
	w, _ := life.New(p, 4, nil)
	rt, _ := sim.New(sim.DefaultConfig(), w, NewModelIa())
	res := rt.Run()
	if res.Finished || res.Stats.UnrecoverableNote == "" {
		t.Fatalf("finished %v, note %q", res.Finished, res.Stats.UnrecoverableNote)
	}
}

// The master's node dies while the spare replacing a worker's node boots
// (or, without spare, before the failure is detected): the restart from
// scratch takes over the worker node's replacement, the spare booted for it
// is not used, and the run ends with the right image. Before, the booted
// spare re-created the worker and asked the lost master to resubmit, which
// aborted the run.
func TestModelIaMasterDiesDuringReplacement(t *testing.T) {
	cfg := sim.DefaultConfig()
	rt, _ := sim.New(cfg, farmJob(t), none.New())
	ff := rt.Run().Makespan
	for _, c := range []struct {
		name   string
		spares int
		detect sim.Time
	}{
		{"spare booting", 2, 0},
		{"no spare, master's failure undetected", 0, ff / 10},
	} {
		cfg := sim.DefaultConfig()
		cfg.Spares, cfg.SpareBoot, cfg.DetectDelay = c.spares, ff/4, c.detect
		cfg.Failures = sim.ScriptedFailures
		cfg.Planned = []sim.ScriptedFailure{{Node: 2, At: ff / 3}, {Node: 0, At: ff/3 + ff/20}}
		rt, _ := sim.New(cfg, farmJob(t), NewModelIa())
		res := rt.Run()
		if !res.Finished || !res.Outcome.OK || res.Stats.Restarts != 1 {
			t.Fatalf("%s: finished %v, outcome %+v, %d restarts, note %q", c.name, res.Finished, res.Outcome, res.Stats.Restarts, res.Stats.UnrecoverableNote)
		}
	}
}
