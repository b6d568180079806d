package experiment

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"ftsim/scenarios"
	"ftsim/sim"
)

// burstGaps are the delays between the failures of a burst, in fractions of
// the fault-free run: at once, then during a detection, a transfer, a
// restart, or a checkpoint period later.
var burstGaps = []float64{0, 0.001, 0.005, 0.02, 0.1, 0.25}

// burstPlans draws n failure plans for a run of fault-free makespan ff on
// nodes nodes (spares included): one to three failures of distinct nodes,
// the first at a uniform time in the run, each next one a burstGaps delay
// after the one before.
func burstPlans(rng *rand.Rand, ff sim.Time, nodes, n int) [][]scenarios.ScriptedFailure {
	plans := make([][]scenarios.ScriptedFailure, n)
	for i := range plans {
		at := sim.Time(rng.Float64() * float64(ff))
		order := rng.Perm(nodes)
		plan := make([]scenarios.ScriptedFailure, 1+rng.IntN(min(3, nodes)))
		for j := range plan {
			if j > 0 {
				at += sim.Time(burstGaps[rng.IntN(len(burstGaps))] * float64(ff))
			}
			plan[j] = scenarios.ScriptedFailure{Node: order[j], At: scenarios.Duration(at)}
		}
		plans[i] = plan
	}
	return plans
}

// TestFailureBurstRegressions replays plans of TestFailureBurstsEveryProtocol
// that stood idle before the fixes they came with:
//   - "buddy changed": a tuple on its way to a buddy that failed was queued
//     for the next change of the node ring, which the failure's detection
//     had already made; the message waited for it forever. A failed tuple
//     (or acknowledgement) is now logged again at once, to the buddy of now.
//   - "after a restart from scratch": a garbage-collection message of the
//     life before the restart arrived after it and pruned, by the old TNs,
//     log entries of the new life whose tuples were still on their way.
func TestFailureBurstRegressions(t *testing.T) {
	us := func(node int, at float64) scenarios.ScriptedFailure {
		return scenarios.ScriptedFailure{Node: node, At: scenarios.Duration(at * float64(sim.Microsecond))}
	}
	mlogFastMulti, mlogBasic := searchProtocols[8], searchProtocols[9]
	mlogMaxLog, mlogFullLog := optionProtocols[11], optionProtocols[12]
	cases := []struct {
		name, workload string
		protocol       searchProtocol
		plan           []scenarios.ScriptedFailure
	}{
		{"buddy changed, multi_failure", "life", mlogFastMulti, []scenarios.ScriptedFailure{us(3, 6.183), us(0, 94.479), us(1, 182.775)}},
		{"buddy changed, local tuple", "dp", mlogMaxLog, []scenarios.ScriptedFailure{us(2, 357.45), us(1, 400.685), us(0, 409.332)}},
		{"buddy changed, after a restart from scratch", "farm", mlogFullLog, []scenarios.ScriptedFailure{us(0, 471.81), us(3, 474.603), us(2, 530.478)}},
		{"after a restart from scratch", "stencil", mlogBasic, []scenarios.ScriptedFailure{us(0, 68.935), us(2, 69.076)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			i := slices.IndexFunc(searchWorkloads, func(w searchWorkload) bool { return w.kind == tc.workload })
			w := searchWorkloads[i]
			c := searchCase{w.kind, w.period, w.keys, tc.protocol, searchClusters[0]}
			p, _ := c.prepare(t, 1, `failures.distribution="scripted"`, `failures.scripted=[{node=0, at="1s"}]`)
			p.Scenario.Failures.Scripted = tc.plan
			runSearch(t, fmt.Sprintf("%s, failures %v", c, tc.plan), p)
		})
	}
}
