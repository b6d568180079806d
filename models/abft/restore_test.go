package abft

import (
	"fmt"
	"testing"

	"ftsim/sim"
)

// A worker rebuilt on an idle node runs its continue message within
// Restore. It used to do so before its protocol state was installed: when
// the restored stack was exhausted at once, the credit it returned was held
// by the lost worker's state, dropped with it, and the iteration never ended
// (the idle workers then asked each other for work until the time limit).
// Node 3 of 4, holding workers 6 and 7, fails at 600 µs with immediate
// detection and no spare; the run must find Korf's optimum.
func TestRestoredWorkerRunsAtOnce(t *testing.T) {
	p := New(ftConfig(sim.Millisecond))
	res, _ := runPida(t, runSpec{params: korfParams(t, 94, 8), nodes: 4, proto: p,
		planned: []sim.ScriptedFailure{{Node: 3, At: 600 * sim.Microsecond}},
		tune: func(c *sim.Config) {
			c.Latency, c.Bandwidth = 2*sim.Microsecond, 1.25e10
			c.DetectDelay = 0
			c.Limit = 100 * sim.Millisecond // fault-free 8 ms
		}})
	if !res.Finished || !res.Outcome.OK || res.Outcome.Answer != fmt.Sprint(korfOptimal[94]) {
		t.Fatalf("finished %v at %v, outcome %+v", res.Finished, res.Makespan, res.Outcome)
	}
	if p.Counters.Restored != 2 || res.Stats.Unrecoverable != 0 {
		t.Fatalf("restored %d workers, unrecoverable %d: want 2 and 0", p.Counters.Restored, res.Stats.Unrecoverable)
	}
	checkClean(t, "node 3 at 600µs", p)
}
