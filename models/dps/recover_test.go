package dps

import (
	"testing"

	"ftsim/sim"
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
