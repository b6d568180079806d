package experiment

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
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
	t.Parallel()
	plans := searchSize(1, 60)
	searchBursts(t, searchWorkloads, plans, 0, false)
}

// TestLongFailureBursts is TestFailureBurstsEveryProtocol with longer
// bursts: three to five failures of any node or spare, the same one again
// among them (a failure of a node that is down already does not strike).
// By default one plan per case; FTSIM_SEARCH=1 runs 40. The plans of case
// i are drawn from seed 1000+i, or FTSIM_BURST_SEEDS+i.
func TestLongFailureBursts(t *testing.T) {
	t.Parallel()
	searchBursts(t, searchWorkloads, searchSize(1, 40), burstSeeds(t, 1000), true)
}

// burstSeeds is the first seed of a long-burst search's plans:
// FTSIM_BURST_SEEDS, or def without it.
func burstSeeds(t *testing.T, def uint64) uint64 {
	v := os.Getenv("FTSIM_BURST_SEEDS")
	if v == "" {
		return def
	}
	base, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("FTSIM_BURST_SEEDS=%q: %v", v, err)
	}
	return base
}

// TestLongFailureBurstsOtherWorkloads is TestLongFailureBursts on
// otherWorkloads, with the plans of case i drawn from seed 60000+i (or
// FTSIM_BURST_SEEDS+i): 1 plan per case by default, 40 with FTSIM_SEARCH=1.
func TestLongFailureBurstsOtherWorkloads(t *testing.T) {
	t.Parallel()
	searchBursts(t, otherWorkloads, searchSize(1, 40), burstSeeds(t, 60000), true)
}

// TestBurstRunsRepeat runs a long-burst plan of every case twice: the two
// records must be equal. A run is a function of its scenario and seed only;
// recoveries are where an iteration over a Go map (in random order) could
// make it depend on more, and where such a dependence shows.
func TestBurstRunsRepeat(t *testing.T) {
	t.Parallel()
	i := uint64(40000)
	searchCases(searchWorkloads, append(slices.Clone(searchProtocols), optionProtocols...), searchClusters, func(c searchCase) {
		i++
		p, ff := c.prepare(t, 1, `failures.distribution="scripted"`, `failures.scripted=[{node=0, at="1s"}]`)
		p.Scenario.Failures.Scripted = burstPlans(rand.New(rand.NewPCG(i, 0x6275727374)), ff, p.Scenario.Cluster.Nodes+p.Scenario.Cluster.Spares, 1, true)[0]
		a, errA := p.Run(0)
		b, errB := p.Run(0)
		if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("%s, failures %v: two runs differ:\n%+v (%v)\n%+v (%v)", c, p.Scenario.Failures.Scripted, a, errA, b, errB)
		}
	})
}

// searchBursts runs plans burst plans (long ones with long) per case of
// every workload under the variants of both random searches on
// searchClusters; the plans of the i-th case (from 1) are drawn from seed
// base+i.
func searchBursts(t *testing.T, workloads []searchWorkload, plans int, base uint64, long bool) {
	t.Helper()
	runs, failures, i := 0, 0, base
	searchCases(workloads, append(slices.Clone(searchProtocols), optionProtocols...), searchClusters, func(c searchCase) {
		i++
		// the plan is set after the fault-free run, which sets the times
		p, ff := c.prepare(t, 1, `failures.distribution="scripted"`, `failures.scripted=[{node=0, at="1s"}]`)
		rng := rand.New(rand.NewPCG(i, 0x6275727374))
		for _, plan := range burstPlans(rng, ff, p.Scenario.Cluster.Nodes+p.Scenario.Cluster.Spares, plans, long) {
			p.Scenario.Failures.Scripted = plan
			runs++
			failures += runSearch(t, fmt.Sprintf("%s, failures %v", c, plan), p).Failures
		}
	})
	if failures == 0 {
		t.Fatal("no failure struck: the search tests nothing")
	}
	t.Logf("%d runs, %d failures%s", runs, failures, withoutKorf())
}

// burstGaps are the delays between the failures of a burst, in fractions of
// the fault-free run: at once, then during a detection, a transfer, a
// restart, or a checkpoint period later.
var burstGaps = []float64{0, 0.001, 0.005, 0.02, 0.1, 0.25}

// burstPlans draws n failure plans for a run of fault-free makespan ff on
// nodes nodes (spares included): one to three failures of distinct nodes
// (three to five of any nodes with long), the first at a uniform time in
// the run, each next one a burstGaps delay after the one before.
func burstPlans(rng *rand.Rand, ff sim.Time, nodes, n int, long bool) [][]scenarios.ScriptedFailure {
	plans := make([][]scenarios.ScriptedFailure, n)
	for i := range plans {
		at := sim.Time(rng.Float64() * float64(ff))
		var plan []scenarios.ScriptedFailure
		var order []int
		if long {
			plan = make([]scenarios.ScriptedFailure, 3+rng.IntN(3))
		} else {
			order = rng.Perm(nodes)
			plan = make([]scenarios.ScriptedFailure, 1+rng.IntN(min(3, nodes)))
		}
		for j := range plan {
			if j > 0 {
				at += sim.Time(burstGaps[rng.IntN(len(burstGaps))] * float64(ff))
			}
			if long {
				plan[j] = scenarios.ScriptedFailure{Node: rng.IntN(nodes), At: scenarios.Duration(at)}
			} else {
				plan[j] = scenarios.ScriptedFailure{Node: order[j], At: scenarios.Duration(at)}
			}
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
//
// and plans of TestLongFailureBursts:
//   - "tuple holder failed after the fetch": with multi_failure, a node
//     failed after the restarting node had fetched the remote message log
//     it held, and before the restore; the restore dropped those tuples,
//     handed their TNs to other messages, and dropped as stale the
//     messages resent with them later. Tuples fetched are now restored.
//   - "replacement failed before placing": the spare that replaced a
//     restarting node that failed while placing failed in turn before it
//     placed anything; the objects the first one had to recreate were
//     forgotten (only what the second one held, nothing, was redone).
//   - "next generation first": Game of Life tiles waited for ever when a
//     neighbour's border of the next generation came before its border of
//     this one, which message logging may do for the messages a restarted
//     object receives again (see life's TestBordersOutOfOrder; the
//     synthetic workload had the same flaw, found with other seeds:
//     "next step first", synthetic's TestValuesOutOfOrder).
//   - "TN lost with sender and receiver": without multi_failure, a sender
//     migrated (fast restart) to its receiver's node; a failure of that
//     node lost the TNs of the messages it had sent from its old node,
//     which only its log and the receiver's table held. Any TN a lost
//     object processed after its checkpoint that no surviving record holds
//     is now reported (this also covers "TN not learned again" above).
//   - "checkpoint begun before a restart from scratch": a node checkpoint
//     that waited for its objects across a restart from scratch committed
//     in the new life, leaving out an object re-created on the node
//     meanwhile, but dropping, as covered by that object's checkpoint, the
//     messages to it. Such a checkpoint is now void, and a package counts
//     as covering only the objects in it.
//   - "forced rollback struck" (found by the same search with other seeds):
//     abft on LCS forced live objects back to stage 0; a failure before
//     one of them restarted planned the lost object against the stage the
//     others still showed, not the one they were going back to, and the
//     messages they then needed were never sent again. A forced rebuild
//     not restarted yet is now planned again with the lost objects.
//   - "spare failed under the transfer" (found with other seeds): FTPIDA*
//     put a ready spare in a failed node's slot and sent it the workers'
//     FRIs; the spare failed before they arrived, its failure reported no
//     worker (none was there yet), and nothing recovered them. They are
//     now recovered again when their transfer finds the spare dead.
//   - "backup chosen after another's activation" (found with other seeds):
//     dps with log_order lost four threads with one node; each was
//     complete at the failure, but activating one voided the outputs its
//     lost incarnation held back, which the next one's completeness
//     counted on, and that one was neither activated nor reported. The
//     backups are now all chosen before any is activated.
//   - "TN told before the message left" (FTSIM_BURST_SEEDS=94000): mlog's
//     basic restart with multi_failure. Object 1 sent messages 59 and 60
//     to object 6 and its node failed; object 6 gave the copies that
//     arrived TNs 236 and 238 and told the restored object 1. Object 6's
//     node failed in turn, and its restart's resends came before object 1,
//     re-executing, logged the two messages again; the tell arrived after
//     that and set their TNs, and a send with a TN known was left to a
//     resend that had passed. Object 6 waited for them forever. A logged
//     message with a TN whose copy never left now goes with it.
//   - "TNs resent after the gate opened" (FTSIM_BURST_SEEDS=96000): the
//     same variant on the farm, 4 nodes and 3 spares. A worker was restored
//     from a checkpoint before TN 1, and its gate waited for the resends;
//     the master's node failed after the master had resent its log (the
//     TNs 1 to 4 the worker's lost life had given it), before they arrived.
//     The gate no longer waited for that node, opened as the last other
//     node's resends came, and gave TN 1 to another message; the master's
//     resends arrived 7 ns later, and task 1 with TN 1 was dropped as
//     stale, then again when the restored master resent it: the worker
//     never ran it. A gate now reserves the TNs that the checkpoint logs of
//     lost objects hold for it.
//   - "farm master with stateful workers" (a scratch search of options no
//     search had: dps with auto_stateless = false): the master's node failed
//     and its backup re-executed the results in sequence order, not in the
//     order they had come; it handed the workers other tiles than before
//     under the same operation ids, and they dropped them as received. The
//     master hands a tile to whichever worker answered first, an output
//     that depends on the arrival order: log_order is now on by default
//     for a farm with stateful workers, as for pida.
//   - "knapsack message lost to an undetected failure", with and without
//     spares (a scratch search of abft on every dp workload with three
//     blocks per node): a block rebuilt at an early stage needed a message
//     that its live sender, far ahead, no longer logged; the plan counted
//     on building it from the flag bits, but by the block's restart a node
//     had failed, not yet detected, with blocks whose bits it needed. The
//     message was left unsent, and the round at that failure's detection
//     looked only at the lost blocks' inputs: the block waited for ever.
//     A round now also checks what live blocks wait for from live senders
//     (it sends it again or has the sender compute it anew), and a restart
//     that cannot build a message asks for a round.
//   - "cut of a handler that sent nothing" (TestLongFailureBurstsOtherWorkloads
//     on a checkout without the shared Korf instances, whose pida cases
//     are skipped and the case numbers shift): cpr cutting handlers, on
//     the knapsack with three blocks per node. A cut took back the late
//     messages of the block's previous handler, which had sent some where
//     the running one sent none: the messages in flight went below zero,
//     a checkpoint was taken with a message on the wire, and after the
//     rollback to it the message was lost; the blocks waited for ever,
//     checkpointed every period. A handler's late messages are now reset
//     at every handler.
//   - "sender failed before resending a TN" (the whole
//     TestLongFailureBurstsOtherWorkloads search, session 62): mlog's fast
//     restart with multi_failure and CPU costs, on TSP. Object 3, restored
//     after a failure, lost again with its buddy the tuple of TN 3, which
//     it had given to object 1's SN 1; the restore left it to object 1,
//     which still knew the TN, to resend. Object 1's node failed before it
//     did, and object 1 was restored from a checkpoint that kept the entry;
//     its restart had not resent it when object 3's gate, no longer waiting
//     for the failed node, opened. Object 3 gave TN 3 to another message,
//     re-executed in another order and never regenerated the message that
//     object 4 was replaying to: object 4 waited for ever. A gate now also
//     reserves the TNs that live senders' logs hold for it.
//   - coupled blocks after a restart from scratch (session 71, the coupled
//     stencil, workload.coupled): mlog restarted from scratch after a
//     failure it could not survive, and the catch-ups of the life before
//     stayed; at the next failure every block waited for blocks that, to
//     catch up, needed the stalled ones, and the run never ended. A
//     rollback or a restart from scratch (NewEpoch) now drops them.
func TestFailureBurstRegressions(t *testing.T) {
	us := func(node int, at float64) scenarios.ScriptedFailure {
		return scenarios.ScriptedFailure{Node: node, At: scenarios.Duration(at * float64(sim.Microsecond))}
	}
	// the variants and workloads each case was found with, by their keys:
	// the lists grow, and a case that named a place in them ran another
	// variant once one was inserted before it
	variant := func(kind string, keys ...string) searchProtocol {
		for _, p := range append(slices.Clone(searchProtocols), optionProtocols...) {
			if p.kind == kind && slices.Equal(p.keys, keys) {
				return p
			}
		}
		t.Fatalf("no search variant %s %v", kind, keys)
		return searchProtocol{}
	}
	other := func(kind string, keys ...string) *searchWorkload {
		for i, w := range otherWorkloads {
			if w.kind == kind && slices.Equal(w.keys, keys) {
				return &otherWorkloads[i]
			}
		}
		t.Fatalf("no other workload %s %v", kind, keys)
		return nil
	}
	mlogFastMulti := variant("mlog", `protocol.restart="fast"`, "protocol.multi_failure=true", period)
	mlogBasic := variant("mlog", `protocol.restart="basic"`, period)
	mlogBasicMulti := variant("mlog", `protocol.restart="basic"`, "protocol.multi_failure=true", period)
	mlogMaxLog := variant("mlog", `protocol.restart="fast"`, `protocol.max_log="2KB"`, period)
	mlogFast := variant("mlog", `protocol.restart="fast"`, period)
	mlogFastMultiCPU := variant("mlog", `protocol.restart="fast"`, "protocol.multi_failure=true", `protocol.log_cpu="500ns"`, `protocol.ticket_cpu="300ns"`, `protocol.local_cpu="200ns"`, period)
	farmStateful := variant("dps", "protocol.every=3", "protocol.auto_stateless=false")
	dpsTwoBackups := variant("dps", "protocol.every=3", "protocol.backups=2")
	dpsNoCheckpoints := variant("dps", "protocol.every=0")
	dpsNoCheckpointsPeriod := variant("dps", "protocol.every=0", period)
	dpsLogOrder := variant("dps", "protocol.every=4", "protocol.log_order=true")
	mpiftIA := variant("mpift-ia")
	abft, abftSurvivors := variant("abft"), variant("abft", "protocol.use_spares=false")
	cprBuddyCut := variant("cpr", `protocol.interval="fixed"`, `protocol.tier="buddy"`, `protocol.substep="1ns"`, period)
	pidaRandom := other("pida", "korf=12", "objects_per_node=3", `victim="random"`)
	knapsackRequests := other("dp", `problem="knapsack"`, "random_items=40", "capacity=300", "requests=true", "objects_per_node=2")
	farmTwo := other("farm", "width=64", "height=64", "tile=8", "max_iter=200", "objects_per_node=2")
	knapsackThree := other("dp", `problem="knapsack"`, "random_items=25", "capacity=1500", "objects_per_node=3")
	tsp := other("dp", `problem="tsp"`, "random_cities=9")
	coupledStencil := other("stencil", "nx=12", "ny=12", "nz=6", "iterations=15", "blocks_per_node=2", "reduce=true", "coupled=true")
	mlogFastMultiCut := variant("mlog", `protocol.restart="fast"`, "protocol.multi_failure=true", `protocol.substep="1ns"`, period)
	cases := []struct {
		name, workload string
		protocol       searchProtocol
		cluster        []string
		plan           []scenarios.ScriptedFailure
		other          *searchWorkload // the workload; nil: the search's of that kind
	}{
		{"buddy changed, multi_failure", "life", mlogFastMulti, searchClusters[0], []scenarios.ScriptedFailure{us(3, 6.183), us(0, 94.479), us(1, 182.775)}, nil},
		{"buddy changed, local tuple", "dp", mlogBasicMulti, searchClusters[0], []scenarios.ScriptedFailure{us(2, 357.45), us(1, 400.685), us(0, 409.332)}, nil},
		{"buddy changed, after a restart from scratch", "farm", mlogMaxLog, searchClusters[0], []scenarios.ScriptedFailure{us(0, 471.81), us(3, 474.603), us(2, 530.478)}, nil},
		{"after a restart from scratch", "stencil", mlogBasic, searchClusters[0], []scenarios.ScriptedFailure{us(0, 68.935), us(2, 69.076)}, nil},
		{"spare fails before placing", "life", mlogFastMulti, searchClusters[1], []scenarios.ScriptedFailure{us(0, 283.318), us(4, 283.671)}, nil},
		{"detected after the restart it struck", "stencil", mlogMaxLog, searchClusters[3], []scenarios.ScriptedFailure{us(1, 2.753), us(0, 16.83)}, nil},
		{"re-created before the detection", "stencil", mlogFast, searchClusters[2], []scenarios.ScriptedFailure{us(0, 106.499), us(1, 109.192)}, nil},
		{"result after the failure", "farm", dpsTwoBackups, searchClusters[0], []scenarios.ScriptedFailure{us(3, 35.585)}, nil},
		{"workers onto a replaced node", "farm", mpiftIA, searchClusters[3], []scenarios.ScriptedFailure{us(2, 1535.133), us(1, 1545.143), us(3, 1547.145)}, nil},
		{"TN not learned again", "farm", mlogFast, searchClusters[0], []scenarios.ScriptedFailure{us(1, 244.561), us(0, 258.529), us(2, 272.497)}, nil},
		{"TN not learned again, pida", "pida", mlogFast, searchClusters[2], []scenarios.ScriptedFailure{us(1, 326.184), us(4, 767.408)}, nil},
		{"tuple holder failed after the fetch", "life", mlogFastMulti, searchClusters[3], []scenarios.ScriptedFailure{us(1, 112.129), us(2, 137.462), us(1, 200.796)}, nil},
		{"replacement failed before placing", "stencil", mlogBasicMulti, searchClusters[1], []scenarios.ScriptedFailure{us(2, 41.242), us(4, 44.068), us(5, 44.209)}, nil},
		{"next generation first", "life", mlogBasic, searchClusters[3], []scenarios.ScriptedFailure{us(5, 141.47), us(3, 141.47), us(5, 146.532), us(4, 171.843), us(2, 197.154)}, nil},
		{"next step first", "synthetic", mlogFastMulti, searchClusters[3], []scenarios.ScriptedFailure{us(3, 1148920.995), us(1, 1649079.799), us(2, 1849143.32)}, nil},
		{"TN lost with sender and receiver", "farm", mlogFast, searchClusters[2], []scenarios.ScriptedFailure{us(2, 134.931), us(1, 136.59), us(4, 302.58), us(1, 717.555), us(0, 719.214)}, nil},
		{"forced rollback struck", "dp", abft, searchClusters[1], []scenarios.ScriptedFailure{us(2, 291.699), us(2, 293.514), us(4, 293.877), us(3, 294.24), us(0, 296.055)}, nil},
		{"spare failed under the transfer", "pida", abft, searchClusters[1], []scenarios.ScriptedFailure{us(0, 3049.558), us(4, 3058.293), us(6, 3058.293), us(4, 3058.293)}, nil},
		{"backup chosen after another's activation", "life", dpsLogOrder, searchClusters[0], []scenarios.ScriptedFailure{us(2, 79.398), us(0, 79.398), us(1, 84.055)}, nil},
		{"iteration learned from a no-work answer", "pida", abft, searchClusters[0], []scenarios.ScriptedFailure{us(3, 113.205), us(0, 775.398), us(2, 1035.164)}, nil},
		{"checkpoint begun before a restart from scratch", "synthetic", mlogFastMulti, searchClusters[0], []scenarios.ScriptedFailure{us(0, 2564448.406), us(3, 2568448.406), us(3, 2968448.406), us(3, 3048448.406), us(1, 3128448.406)}, nil},
		{"backup regenerated during a replay", "pida", dpsNoCheckpoints, searchClusters[0], []scenarios.ScriptedFailure{us(2, 12131.508), us(0, 17189.773), us(3, 19213.079)}, pidaRandom},
		{"objects restored on a node that failed at once", "dp", abft, append(slices.Clone(searchClusters[2]), repairQuarter), []scenarios.ScriptedFailure{
			us(0, 1.200), us(1, 2.500), us(4, 3.110), us(2, 5.235), us(0, 11.270), us(3, 17.152), us(1, 20.865), us(4, 59.510), us(2, 60.776), us(3, 77.945), us(5, 90.273),
			us(1, 137.129), us(4, 144.901), us(0, 189.011), us(5, 196.686), us(1, 201.390), us(4, 218.759), us(2, 228.030), us(5, 231.958), us(1, 246.566), us(3, 262.891), us(2, 266.378)},
			knapsackRequests},
		{"TN told before the message left", "life", mlogBasicMulti, searchClusters[0], []scenarios.ScriptedFailure{us(0, 339.802), us(3, 346.878), us(0, 435.335), us(2, 437.104)}, nil},
		{"TNs resent after the gate opened", "farm", mlogBasicMulti, searchClusters[1], []scenarios.ScriptedFailure{us(0, 580.601), us(3, 594.57), us(4, 597.363), us(0, 597.363), us(6, 597.363)}, nil},
		{"farm master with stateful workers", "farm", farmStateful, searchClusters[2], []scenarios.ScriptedFailure{us(0, 926.569)}, nil},
		{"result past the restored master's next", "farm", dpsNoCheckpointsPeriod, searchClusters[0], []scenarios.ScriptedFailure{us(0, 455.251), us(1, 664.765), us(2, 748.57), us(0, 752.76)}, farmTwo},
		{"knapsack message lost to an undetected failure", "dp", abftSurvivors, searchClusters[3], []scenarios.ScriptedFailure{us(0, 52.735), us(3, 53.861), us(2, 59.491)}, knapsackThree},
		{"knapsack message lost to an undetected failure, with spares", "dp", abft, searchClusters[3], []scenarios.ScriptedFailure{us(2, 13.908), us(4, 27.983), us(3, 27.983), us(0, 33.613)}, knapsackThree},
		{"sender failed before resending a TN", "dp", mlogFastMultiCPU, searchClusters[2], []scenarios.ScriptedFailure{us(3, 5.226), us(4, 20.007), us(3, 25.919), us(1, 31.831), us(4, 31.89)}, tsp},
		{"cut of a handler that sent nothing", "dp", cprBuddyCut, searchClusters[0], []scenarios.ScriptedFailure{us(3, 70.628), us(3, 71.684), us(3, 71.895), us(1, 76.119), us(1, 76.119)}, knapsackThree},
		{"coupled blocks after a restart from scratch", "stencil", mlogFastMultiCut, searchClusters[0], []scenarios.ScriptedFailure{us(0, 377.771), us(3, 378.267), us(3, 380.748), us(2, 380.748), us(2, 381.244)}, coupledStencil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			i := slices.IndexFunc(searchWorkloads, func(w searchWorkload) bool { return w.kind == tc.workload })
			w := searchWorkloads[i]
			if tc.other != nil {
				w = *tc.other
			}
			keys, ok := w.fullKeys()
			if !ok {
				t.Skip("the shared Korf instances are not there")
			}
			c := searchCase{w.kind, w.period, keys, tc.protocol, tc.cluster}
			p, _ := c.prepare(t, 1, `failures.distribution="scripted"`, `failures.scripted=[{node=0, at="1s"}]`)
			p.Scenario.Failures.Scripted = tc.plan
			runSearch(t, fmt.Sprintf("%s, failures %v", c, tc.plan), p)
		})
	}
}

// A run of the long-burst search (FTSIM_BURST_SEEDS=21000) that never
// finished: under mlog's multiple-failure extension with the basic restart, a
// worker and the farm's master, restored once already, failed at the same
// instant. The worker was restored first from a checkpoint taken before it
// had processed the master's task of TN 5; the master's re-execution had
// sent that task again, the worker had said it was processed (old), and the
// master's restore, later, skipped the old entry when it resent its log to
// the objects not restored with it: the worker waited for TN 5 for ever. An
// entry is now old only for the receiver's life that said so.
func TestBurstRestoredReceiverNeedsOldEntry(t *testing.T) {
	ran := false
	searchCases(searchWorkloads, append(slices.Clone(searchProtocols), optionProtocols...), searchClusters, func(c searchCase) {
		if c.workload != "farm" || c.protocol.kind != "mlog" || !slices.Contains(c.protocol.keys, `protocol.restart="basic"`) ||
			!slices.Contains(c.protocol.keys, "protocol.multi_failure=true") || !slices.Contains(c.cluster, "cluster.nodes=5") {
			return
		}
		p, _ := c.prepare(t, 1, `failures.distribution="scripted"`, `failures.scripted=[{node=0, at="1s"}]`)
		plan := []scenarios.ScriptedFailure{{Node: 0, At: 1058422}, {Node: 2, At: 1586782}, {Node: 5, At: 1586782}}
		p.Scenario.Failures.Scripted = plan
		ran = true
		runSearch(t, fmt.Sprintf("%s, failures %v", c, plan), p)
	})
	if !ran {
		t.Fatal("no case ran")
	}
}
