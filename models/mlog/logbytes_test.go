package mlog

import (
	"fmt"
	"testing"

	"ftsim/sim"
)

// The log accounting holds after garbage collection, failures, restores and
// their replays, with either restart and either failure mode.
func TestLogBytesMatchTheEntries(t *testing.T) {
	for _, restart := range []string{RestartBasic, RestartFast} {
		for _, multi := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/multi=%v", restart, multi), func(t *testing.T) {
				cfg := testCluster(4)
				base := runWith(t, cfg, stencilJob(t, 4, 2, 40), &plain{})
				cfg.Failures = sim.ScriptedFailures
				cfg.Planned = []sim.ScriptedFailure{
					{Node: 1, Progress: 0.3, ByProgress: true},
					{Node: 2, Progress: 0.7, ByProgress: true},
				}
				pc := DefaultConfig()
				pc.Restart, pc.MultiFailure, pc.Period = restart, multi, base.Makespan/6
				p := mustNew(t, pc)
				res := runWith(t, cfg, stencilJob(t, 4, 2, 40), p) // checks the accounting
				if res.Stats.Failures != 2 || p.Stats.GCMessages == 0 {
					t.Fatalf("%d failures, %d garbage-collection messages: the run does not exercise the log", res.Stats.Failures, p.Stats.GCMessages)
				}
			})
		}
	}
}
