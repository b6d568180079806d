package dps

import (
	"testing"

	"ftsim/sim"
	"ftsim/workloads/pida"
	"ftsim/workloads/synthetic"
)

// Re-execution waits for the duplicates still on their way to the backup
// when it is activated (InFlightWaits), and only for those: a ring of four
// synthetic objects, one per node, exchanges halos at the end of each 10 ms
// step; node 1 fails and is detected 1 µs later. Failing just as the step's
// halos leave, the duplicate from object 0 to the backup on node 2 is on
// the wire (50 µs of latency), and the replay waits for it. Failing in the
// middle of a step, the neighbours' halos are posted by their running
// handlers but leave only when their compute ends: they are new input, not
// in flight, and the replay starts at once.
func TestInFlightAtActivation(t *testing.T) {
	for _, c := range []struct {
		name  string
		fail  sim.ScriptedFailure
		waits int64
	}{
		{"halos on the wire", sim.ScriptedFailure{Node: 1, Progress: 0.25, ByProgress: true}, 1},
		{"halos not sent yet", sim.ScriptedFailure{Node: 1, At: 55 * sim.Millisecond}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := synthetic.New(synthetic.Params{Steps: 20, StepOps: 1e7, Exchange: 1000, State: 1 << 10}, 4)
			if err != nil {
				t.Fatal(err)
			}
			cfg := baseConfig()
			cfg.Spares = 0
			cfg.DetectDelay = sim.Microsecond
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = []sim.ScriptedFailure{c.fail}
			res, p := runDPS(t, cfg, w, DefaultConfig())
			checkClean(t, c.name, res, p)
			if p.C.Recovered != 1 || p.C.InFlightWaits != c.waits {
				t.Fatalf("%d threads recovered, %d waited for duplicates in flight; want 1 and %d", p.C.Recovered, p.C.InFlightWaits, c.waits)
			}
			t.Logf("makespan %v, replayed %d, late copies %d", res.Makespan, p.C.Replayed, p.C.LateCopies)
		})
	}
}

// A backup still waiting for its first state when its thread is
// re-activated waits for one the lost incarnation took: install ignores a
// state of a lost incarnation, and a transfer from the dead node never
// arrives. It is replaced. Pida under order logging with two backups per
// thread; node 0 fails at 60% of the run (7.80 ms), node 1 at 65% (found by
// failurePlans). Node 0's detection, 1 ms later, re-activates threads 0 and 1
// on node 1 and ships the copy of their consumed backups to node 3; node 1
// fails at that instant, and the copies never arrive. Re-activated on node 2
// when node 1's failure is detected, the threads kept the backups on node 3,
// without a state, for the rest of the run, counted among their backups.
func TestActivationReplacesBackupWithoutState(t *testing.T) {
	cfg := baseConfig()
	cfg.Failures = sim.ScriptedFailures
	cfg.Planned = []sim.ScriptedFailure{{Node: 0, Progress: 0.6, ByProgress: true}, {Node: 1, Progress: 0.65, ByProgress: true}}
	cfg.Limit = 200 * sim.Millisecond
	pc := DefaultConfig()
	pc.Every, pc.Backups, pc.LogOrder = 2, 2, true
	pp := pida.DefaultParams()
	pp.Workers, pp.Seed, pp.BytesPerFrame = 8, 1, 32
	wl, err := pida.New(pp, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, p := runDPS(t, cfg, wl, pc)
	checkClean(t, "two failures", res, p)
	for i := range p.th {
		th := &p.th[i]
		if th.stateless || p.RT.Lost(sim.ObjID(i)) {
			continue
		}
		if len(th.backups) == 0 {
			t.Errorf("thread %d ends without a backup", i)
		}
		for _, bk := range th.backups {
			if !bk.ready || !p.valid(bk) {
				t.Errorf("thread %d ends with a backup on node %d that is not usable: ready %v, valid %v", i, bk.node, bk.ready, p.valid(bk))
			}
		}
	}
}
