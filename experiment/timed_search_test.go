package experiment

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"ftsim/scenarios"
	"ftsim/sim"
)

// TestFailureBurstsEveryProtocol runs every workload under the variants of
// both random searches, on searchClusters, through bursts of failures at
// given times (burstPlans): up to three failures, of application nodes or
// spares, close enough to strike during the recovery of the one before,
// and at times that fall in the middle of a transfer or of a recovery's
// steps. Every run must end with the reference answer (or report, and
// restart from scratch, a pattern its protocol cannot survive). By default
// one plan per case; FTSIM_SEARCH=1 runs 60.
func TestFailureBurstsEveryProtocol(t *testing.T) {
	plans := 1
	if os.Getenv("FTSIM_SEARCH") != "" {
		plans = 60
	}
	runs, failures, i := 0, 0, uint64(0)
	searchCases(append(slices.Clone(searchProtocols), optionProtocols...), searchClusters, func(c searchCase) {
		i++
		// the plan is set after the fault-free run, which sets the times
		p, ff := c.prepare(t, 1, `failures.distribution="scripted"`, `failures.scripted=[{node=0, at="1s"}]`)
		rng := rand.New(rand.NewPCG(i, 0x6275727374))
		for _, plan := range burstPlans(rng, ff, p.Scenario.Cluster.Nodes+p.Scenario.Cluster.Spares, plans) {
			p.Scenario.Failures.Scripted = plan
			runs++
			failures += runSearch(t, fmt.Sprintf("%s, failures %v", c, plan), p).Failures
		}
	})
	if failures == 0 {
		t.Fatal("no failure struck: the search tests nothing")
	}
	t.Logf("%d runs, %d failures", runs, failures)
}

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
//   - "spare fails before placing": the spare taking a failed node's place
//     failed while it fetched the checkpoints (before restoring anything);
//     its replacement was given only the objects lost with it, none, and
//     the failed node's objects were never restored.
//   - "detected after the restart it struck": without multi_failure, a node
//     that failed during another node's restart, before resending to the
//     restored objects, and was detected after that restart completed, was
//     recovered as a single failure; the restored objects never got its
//     messages. The pattern is now reported, and the run restarts from
//     scratch, as for a failure detected during the restart.
//   - "re-created before the detection": a restart from scratch re-created
//     elsewhere, live, objects of a node whose failure was not reported
//     yet; the report still listed them, and message logging reset and
//     restored running objects (sim.TestDetectionReportsOnlyLostObjects).
//   - "result after the failure": dps on the farm retired a lost worker
//     (Shrink) and handed its outstanding tasks to the survivors; a result
//     the worker had sent before its node failed then arrived, and the
//     master answered it with the worker's next task, which waited at the
//     lost worker for ever. The split now hands such tasks on too.
//   - "workers onto a replaced node": mpift-ia, out of spares, re-created
//     a dead node's workers round robin over the slots, among them the
//     slot of a failed node whose spare was still booting: the runtime
//     aborts such a placement. Those slots are now skipped.
//   - "TN not learned again": without multi_failure, a ticket (the TN a
//     receiver gave a message) is kept by the sender's log and the
//     receiver's table. A sender restored after a failure learns the TNs of
//     its lost life again as its re-execution asks for tickets; a failure of
//     the receiver before that lost the TN with both, the receiver handed
//     it out again to another message, re-executed in another order and
//     stood idle. The pattern is now reported, and the run restarts from
//     scratch.
func TestFailureBurstRegressions(t *testing.T) {
	us := func(node int, at float64) scenarios.ScriptedFailure {
		return scenarios.ScriptedFailure{Node: node, At: scenarios.Duration(at * float64(sim.Microsecond))}
	}
	mlogFastMulti, mlogBasic := searchProtocols[8], searchProtocols[9]
	mlogMaxLog, mlogFullLog := optionProtocols[11], optionProtocols[12]
	cases := []struct {
		name, workload string
		protocol       searchProtocol
		cluster        []string
		plan           []scenarios.ScriptedFailure
	}{
		{"buddy changed, multi_failure", "life", mlogFastMulti, searchClusters[0], []scenarios.ScriptedFailure{us(3, 6.183), us(0, 94.479), us(1, 182.775)}},
		{"buddy changed, local tuple", "dp", mlogMaxLog, searchClusters[0], []scenarios.ScriptedFailure{us(2, 357.45), us(1, 400.685), us(0, 409.332)}},
		{"buddy changed, after a restart from scratch", "farm", mlogFullLog, searchClusters[0], []scenarios.ScriptedFailure{us(0, 471.81), us(3, 474.603), us(2, 530.478)}},
		{"after a restart from scratch", "stencil", mlogBasic, searchClusters[0], []scenarios.ScriptedFailure{us(0, 68.935), us(2, 69.076)}},
		{"spare fails before placing", "life", mlogFastMulti, searchClusters[1], []scenarios.ScriptedFailure{us(0, 283.318), us(4, 283.671)}},
		{"detected after the restart it struck", "stencil", mlogFullLog, searchClusters[3], []scenarios.ScriptedFailure{us(1, 2.753), us(0, 16.83)}},
		{"re-created before the detection", "stencil", optionProtocols[9], searchClusters[2], []scenarios.ScriptedFailure{us(0, 106.499), us(1, 109.192)}},
		{"result after the failure", "farm", searchProtocols[6], searchClusters[0], []scenarios.ScriptedFailure{us(3, 35.585)}},
		{"workers onto a replaced node", "farm", optionProtocols[3], searchClusters[3], []scenarios.ScriptedFailure{us(2, 1535.133), us(1, 1545.143), us(3, 1547.145)}},
		{"TN not learned again", "farm", optionProtocols[9], searchClusters[0], []scenarios.ScriptedFailure{us(1, 244.561), us(0, 258.529), us(2, 272.497)}},
		{"TN not learned again, pida", "pida", optionProtocols[9], searchClusters[2], []scenarios.ScriptedFailure{us(1, 326.184), us(4, 767.408)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			i := slices.IndexFunc(searchWorkloads, func(w searchWorkload) bool { return w.kind == tc.workload })
			w := searchWorkloads[i]
			keys := w.keys
			if w.kind == "pida" {
				if korfFile == "" {
					t.Skip("the shared Korf instances are not there")
				}
				keys = append(keys[:len(keys):len(keys)], `korf_file="`+korfFile+`"`)
			}
			c := searchCase{w.kind, w.period, keys, tc.protocol, tc.cluster}
			p, _ := c.prepare(t, 1, `failures.distribution="scripted"`, `failures.scripted=[{node=0, at="1s"}]`)
			p.Scenario.Failures.Scripted = tc.plan
			runSearch(t, fmt.Sprintf("%s, failures %v", c, tc.plan), p)
		})
	}
}
