package dps

import (
	"fmt"
	"testing"

	"ftsim/sim"
	"ftsim/workloads/pida"
)

// pidaJob is Korf's instance 94 searched by workers workers on 4 nodes.
func pidaJob(t *testing.T, workers int) *pida.Workload {
	t.Helper()
	p := pida.DefaultParams()
	p.Workers = int64(workers)
	w, err := pida.New(p, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Parallel IDA* under DPS with order logging finds the reference solution
// under single, simultaneous and successive failures, with and without
// checkpoints. Without order logging and without checkpoints the re-executed
// worker diverged from its original run and the search never ended (the
// regression this guards against); here every run must finish well within
// the limit, with no protocol anomaly in the search.
func TestPidaFailures(t *testing.T) {
	type fail = sim.ScriptedFailure
	at := func(node sim.NodeID, p float64) fail { return fail{Node: node, Progress: p, ByProgress: true} }
	for _, c := range []struct {
		name      string
		every     int64
		backups   int
		plan      []fail
		recovered int // threads re-activated from a backup
	}{
		{"fault-free", 8, 1, nil, 0},
		{"single", 8, 1, []fail{at(1, 0.3)}, 2},
		{"single, coordinator's node", 8, 1, []fail{at(0, 0.3)}, 2},
		{"single, no checkpoint", 0, 1, []fail{at(1, 0.3)}, 2},
		{"single late, no checkpoint", 0, 1, []fail{at(2, 0.7)}, 2},
		{"simultaneous, disjoint", 8, 1, []fail{at(1, 0.4), at(3, 0.4)}, 4},
		{"simultaneous, no checkpoint", 0, 1, []fail{at(0, 0.4), at(2, 0.4)}, 4},
		{"simultaneous, thread and one of 2 backups", 8, 2, []fail{at(1, 0.4), at(2, 0.4)}, 4},
		{"successive", 8, 1, []fail{at(1, 0.2), at(2, 0.6)}, 6}, // node 2 hosts 4 threads by then
		{"successive, no checkpoint", 0, 1, []fail{at(3, 0.2), at(0, 0.5)}, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := baseConfig()
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = c.plan
			cfg.Limit = 200 * sim.Millisecond // fault-free 8 ms: a livelock fails fast
			pc := DefaultConfig()
			pc.Every, pc.Backups, pc.LogOrder = c.every, c.backups, true
			wl := pidaJob(t, 8)
			res, p := runDPS(t, cfg, wl, pc)
			if !res.Finished || !res.Outcome.OK {
				for i := range p.RT.NumObjects() {
					t.Log(fmt.Sprint(p.RT.Object(sim.ObjID(i))))
				}
				t.Fatalf("finished %v at %v, outcome %+v, counters %+v", res.Finished, res.Makespan, res.Outcome, p.C)
			}
			if p.C.WrongDrops != 0 || p.C.DoubleProcessed != 0 || p.C.OrderConflicts != 0 {
				t.Fatalf("%d wrong drops, %d objects handled twice, %d order conflicts", p.C.WrongDrops, p.C.DoubleProcessed, p.C.OrderConflicts)
			}
			if p.C.Recovered != c.recovered || res.Stats.Unrecoverable != 0 {
				t.Fatalf("%d threads recovered, want %d; %d unrecoverable", p.C.Recovered, c.recovered, res.Stats.Unrecoverable)
			}
			objs := make([]sim.Object, p.RT.NumObjects())
			for i := range objs {
				objs[i] = p.RT.Object(sim.ObjID(i))
			}
			st := wl.SearchStats(objs)
			if st.Anomalies != 0 {
				t.Fatalf("%d search anomalies (duplicated credit or stale work)", st.Anomalies)
			}
			// the final states count exactly the reference's expansions before the
			// last iteration: re-execution neither lost work nor gave it out twice
			if _, before := wl.ReferenceExpanded(); st.BeforeLast != before {
				t.Fatalf("expanded %d nodes before the last iteration, the reference %d", st.BeforeLast, before)
			}
			if p.C.Determinants == 0 || p.C.Held == 0 {
				t.Fatalf("order logging inactive: %d determinants, %d outputs held", p.C.Determinants, p.C.Held)
			}
		})
	}
}

// Without order logging, re-execution in sequence-number order is not the
// original order for pida's workers: a run without checkpoints and one
// failure does not finish. This pins the diagnosis (the fix is order
// logging, not a change in sequence numbering). The failure is node 0's
// since donors keep their last move (pida.Stack.Split); node 1's at the
// same point no longer made the run diverge.
func TestPidaNeedsOrderLog(t *testing.T) {
	cfg := baseConfig()
	cfg.Failures = sim.ScriptedFailures
	cfg.Planned = []sim.ScriptedFailure{{Node: 0, Progress: 0.3, ByProgress: true}}
	cfg.Limit = 50 * sim.Millisecond
	pc := DefaultConfig()
	pc.Every = 0
	res, p := runDPS(t, cfg, pidaJob(t, 8), pc)
	if res.Finished {
		t.Fatalf("finished without order logging (makespan %v): the diagnosis no longer holds", res.Makespan)
	}
	if p.C.SeqMismatches == 0 {
		t.Fatal("re-execution reproduced every sequence number: it did not diverge")
	}
}

// Every node failing at every tenth of the search, with and without
// checkpoints, and a second failure later: the search always ends with the
// reference answer (recovery must not depend on a lucky failure point).
func TestPidaFailureSweep(t *testing.T) {
	for _, every := range []int64{0, 8} {
		for node := range sim.NodeID(4) {
			for k := 1; k <= 9; k++ {
				at := float64(k) / 10
				plan := []sim.ScriptedFailure{{Node: node, Progress: at, ByProgress: true},
					{Node: (node + 2) % 4, Progress: min(at+0.25, 0.95), ByProgress: true}}
				cfg := baseConfig()
				cfg.Failures = sim.ScriptedFailures
				cfg.Planned = plan
				cfg.Limit = 200 * sim.Millisecond // fault-free 8 ms: a livelock fails fast
				pc := DefaultConfig()
				pc.Every, pc.LogOrder = every, true
				wl := pidaJob(t, 8)
				res, p := runDPS(t, cfg, wl, pc)
				objs := make([]sim.Object, p.RT.NumObjects())
				for i := range objs {
					objs[i] = p.RT.Object(sim.ObjID(i))
				}
				st := wl.SearchStats(objs)
				_, before := wl.ReferenceExpanded()
				if !res.Finished || !res.Outcome.OK || p.C.WrongDrops != 0 || p.C.DoubleProcessed != 0 || p.C.OrderConflicts != 0 || res.Stats.Unrecoverable != 0 ||
					st.Anomalies != 0 || st.BeforeLast != before {
					t.Errorf("every %d, node %d at %.1f then node %d: finished %v, outcome %+v, %d anomalies, %d expanded before the last iteration (reference %d), counters %+v",
						every, node, at, (node+2)%4, res.Finished, res.Outcome, st.Anomalies, st.BeforeLast, before, p.C)
				}
			}
		}
	}
}
