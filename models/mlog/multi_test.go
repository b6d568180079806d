package mlog

import (
	"strings"
	"testing"

	"ftsim/sim"
)

// With multi_failure, messages to other nodes go out at once with their SN;
// the receiver hands out every TN and logs one tuple per such message on its
// buddy before processing it, and tells the sender the TN (which garbage
// collection needs). The answer is unchanged.
func TestMultiFailureForwardPath(t *testing.T) {
	cases := []struct {
		name string
		wl   func() sim.Workload
	}{
		{"stencil/2 per node", func() sim.Workload { return stencilJob(t, 4, 2, 30) }},
		{"life/2 per node", func() sim.Workload { return lifeJob(t, 4, 2) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testCluster(4)
			base := runWith(t, cfg, c.wl(), &plain{})
			pc := DefaultConfig()
			pc.Period, pc.MultiFailure = base.Makespan/5, true
			p := mustNew(t, pc)
			if !p.cfg.FullLog {
				t.Fatal("multi_failure does not imply full_log")
			}
			res := runWith(t, cfg, c.wl(), p)
			st, ps := res.Stats, p.Stats
			remote := st.AppMsgs - ps.LocalMessages
			if res.Outcome.Digest != base.Outcome.Digest || ps.Tickets != st.AppMsgs || ps.ReceiverTuples != remote || ps.Duplicates != 0 {
				t.Fatalf("digest %s (want %s), tickets %d, receiver tuples %d for %d application messages (%d remote), duplicates %d",
					res.Outcome.Digest, base.Outcome.Digest, ps.Tickets, ps.ReceiverTuples, st.AppMsgs, remote, ps.Duplicates)
			}
			// remote: tuple + acknowledgement + TN to the sender; local: tuple + acknowledgement
			if min := 3*remote + 2*ps.LocalMessages; st.ExtraMsgs < min {
				t.Fatalf("extra messages %d < %d", st.ExtraMsgs, min)
			}
			t.Logf("makespan %v vs %v without protocol, extra msgs %d", res.Makespan, base.Makespan, st.ExtraMsgs)
		})
	}
}

// Section 3.4's case: node H fails and restarts, and G, whose buddy is H,
// fails right after: once G has checkpointed on H's replacement (it does so
// at once) and H's restart is over, while H's objects still re-execute. G's
// objects need messages H's objects had sent them before H's checkpoint
// (without the extension, not in H's checkpoint) and the TNs they had given
// to messages H's objects sent after it (with only its first half, full_log,
// those died with G's tables and H's logs): both are reported unrecoverable
// and the run restarts from scratch. With the whole extension the TNs are in
// the remote log on G's buddy and the run survives, re-executing in the
// pre-failure TN order. A failure of G during H's restart, as H's replacement
// takes its slot, is reported in both modes: without the extension because
// restarts do not overlap, with it because G's checkpoint died with H (the
// one pattern the section says the extension cannot survive). Every run ends
// with the reference answer.
func TestBuddyRestartThenFailure(t *testing.T) {
	cases := []struct {
		name    string
		fullLog bool // the first half of the extension only
		multi   bool
		during  bool // G fails when H's replacement takes its slot
		survive bool
		note    string // in the unrecoverable note
	}{
		{"during the restart/single", false, false, true, false, "in progress"},
		{"during the restart/multi_failure", false, true, true, false, "the checkpoint of object 0 on node 1 is lost"},
		// H's log of messages to G before H's checkpoint is not in it
		{"right after the restart/single", false, false, false, false, "log was lost"},
		// the first half keeps that log; the TNs are still lost
		{"right after the restart/full_log", true, false, false, false, "still re-executing"},
		{"right after the restart/multi_failure", false, true, false, true, ""},
	}
	const h, g = 1, 0 // g's buddy is h (the next node in rank order)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, base, pc := failAt45(t, h)
			pc.Restart, pc.FullLog, pc.MultiFailure = RestartBasic, c.fullLog, c.multi
			pr := mustNew(t, pc)
			var replaced, recheckpointed, restarted, replaying, struck bool
			pr.hook = func(ev string, a, _, _ sim.NodeID) {
				if struck {
					return
				}
				switch {
				case ev == "replaced" && a == h:
					replaced = true
				case ev == "committed" && a == g && replaced:
					recheckpointed = true
				case ev == "restarted" && a == h:
					restarted = true
				default:
					return
				}
				if (c.during && replaced) || (recheckpointed && restarted) {
					struck = true
					for _, o := range pr.objs {
						replaying = replaying || o.replayTo > 0
					}
					pr.RT.FailNow(g)
				}
			}
			w := newWatch(pr)
			res := runWith(t, cfg, stencilJob(t, 4, 2, 60), w)
			st, ps := res.Stats, pr.Stats
			if !struck || st.Failures != 2 {
				t.Fatalf("struck %v, %d failures", struck, st.Failures)
			}
			if !c.during && !replaying {
				t.Fatal("H's objects had re-executed when G failed: not the case under test")
			}
			if c.survive {
				if st.Unrecoverable != 0 || st.Restarts != 0 || ps.Restarts != 2 || w.rollbacks != 0 || ps.OrderMismatches != 0 || ps.Reprocessed == 0 {
					t.Fatalf("unrecoverable %d (%s), restarts from scratch %d, mlog restarts %d, survivor rollbacks %d, TN order mismatches %d, reprocessed %d",
						st.Unrecoverable, st.UnrecoverableNote, st.Restarts, ps.Restarts, w.rollbacks, ps.OrderMismatches, ps.Reprocessed)
				}
			} else if st.Unrecoverable != 1 || st.Restarts != 1 || !strings.Contains(st.UnrecoverableNote, c.note) {
				t.Fatalf("unrecoverable %d (%q, want it to mention %q), restarts from scratch %d", st.Unrecoverable, st.UnrecoverableNote, c.note, st.Restarts)
			}
			t.Logf("makespan %v (no failure, no protocol %v); %s", res.Makespan, base, st.UnrecoverableNote)
		})
	}
}

// Node H fails; node S, which had sent H's objects messages that H processed
// after its checkpoint, fails while H restarts, before H's resend phase, and
// is detected only after H's restart is over. H's resend request finds S
// dead, so H's objects do not get S's logged messages then; S's checkpoint
// has them (multi_failure keeps the whole log) but S's restored objects do not
// send them again by re-executing (they were sent before that checkpoint).
// Unless S's restart resends its restored log to the objects not restored
// with it, H's objects wait for them for ever and the run stalls. S is H's
// predecessor, struck once it has checkpointed on H's replacement (fast
// restart's migrations leave it the time), or another node, struck when H's
// replacement is in (basic restart resends at once). Every run ends with the
// reference answer, in the TN order of before the failures, with both
// restarts done and nothing unrecoverable.
func TestUndetectedSenderFailureDuringResend(t *testing.T) {
	cases := []struct {
		name     string
		restart  string
		priority bool
		s        sim.NodeID
		when     string // the event of S (committed) or H (replaced) at which S fails
	}{
		{"basic", RestartBasic, true, 3, "replaced"},
		{"fast", RestartFast, true, 0, "committed"},
		{"fast without priority", RestartFast, false, 0, "committed"},
	}
	const h = 1
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testCluster(4)
			base := runWith(t, cfg, stencilJob(t, 4, 2, 60), &plain{})
			// the failure of S is detected well after H's restart is over
			cfg.DetectDelay = base.Makespan / 10
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = []sim.ScriptedFailure{{Node: h, Progress: 0.45, ByProgress: true}}
			pc := DefaultConfig()
			pc.Period, pc.Restart, pc.Priority, pc.TraceOrder, pc.MultiFailure = base.Makespan/6, c.restart, c.priority, true, true
			pr := mustNew(t, pc)
			var replaced, struck, resentAfter, restartedFirst bool
			var struckAt sim.Time
			pr.hook = func(ev string, a, _, _ sim.NodeID) {
				switch {
				case ev == "replaced" && a == h:
					replaced = true
				case ev == "resend" && a == h:
					resentAfter = struck
				case ev == "restarted" && a == h:
					restartedFirst = struck && pr.RT.Now() < struckAt+cfg.DetectDelay
				}
				if !struck && replaced && (c.when == "replaced" || ev == "committed" && a == c.s) {
					struck, struckAt = true, pr.RT.Now()
					pr.RT.FailNow(c.s)
				}
			}
			w := newWatch(pr)
			rt, err := sim.New(cfg, stencilJob(t, 4, 2, 60), w)
			if err != nil {
				t.Fatal(err)
			}
			res := rt.Run()
			st, ps := res.Stats, pr.Stats
			if !struck || !resentAfter || !restartedFirst || st.Failures != 2 {
				t.Fatalf("S struck %v, before H's resend phase %v, H restarted before S's failure was detected %v, %d failures: not the case under test",
					struck, resentAfter, restartedFirst, st.Failures)
			}
			if !res.Finished || !res.Outcome.OK {
				t.Fatalf("stalled: finished %v at %v (no failure, no protocol %v), answer %+v", res.Finished, res.Makespan, base.Makespan, res.Outcome)
			}
			if st.Unrecoverable != 0 || st.Restarts != 0 || ps.Restarts != 2 || w.rollbacks != 0 || ps.OrderMismatches != 0 || ps.ResentOthers == 0 {
				t.Fatalf("unrecoverable %d (%s), restarts from scratch %d, mlog restarts %d, survivor rollbacks %d, TN order mismatches %d, resent to objects not restored %d",
					st.Unrecoverable, st.UnrecoverableNote, st.Restarts, ps.Restarts, w.rollbacks, ps.OrderMismatches, ps.ResentOthers)
			}
			t.Logf("makespan %v (no failure, no protocol %v), resent %d (%d to objects not restored), duplicates %d",
				res.Makespan, base.Makespan, ps.Resent, ps.ResentOthers, ps.Duplicates)
		})
	}
}

// Section 3.4's headline case: node H fails and restarts, and node X fails
// while H's objects, placed, wait for every node's resends. With the
// multiple-failure extension X's restart runs beside H's: H's gates stop
// waiting for X (what X's objects had logged for H's is resent from their
// checkpoints' logs when they are restored, or regenerated as they
// re-execute), objects of H's restored on X leave H's restart and are restored
// again with X's, and when X is H's restarting node the resend requests it
// had not delivered are sent again by the hosts of H's objects. Without the
// extension the pattern is reported and the run restarts from scratch. X is
// another node (its checkpoint and remote log on a survivor), H's restarting
// node, or the destination of one of H's objects in fast restart. Every run
// ends with the reference answer, survivors never roll back, and the
// re-execution follows the TN order of before the failures.
func TestFailureDuringResends(t *testing.T) {
	const h = 1
	const restarting sim.NodeID = -2 // X is H's restarting node
	cases := []struct {
		name    string
		restart string
		multi   bool
		x       sim.NodeID
		survive bool
		note    string
	}{
		{"another node/basic", RestartBasic, true, 3, true, ""},
		{"another node/fast", RestartFast, true, 3, true, ""},
		{"another node/single", RestartBasic, false, 3, false, "in progress"},
		{"the restarting node/basic", RestartBasic, true, restarting, true, ""},
		{"the restarting node/fast", RestartFast, true, restarting, true, ""},
		{"a destination/fast", RestartFast, true, 2, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, base, pc := failAt45(t, h)
			pc.Restart, pc.MultiFailure = c.restart, c.multi
			pr := mustNew(t, pc)
			var struck sim.NodeID = sim.None
			var gated int
			pr.hook = func(ev string, a, b, _ sim.NodeID) {
				if ev != "resend" || a != h || struck != sim.None {
					return
				}
				struck = c.x
				if c.x == restarting {
					struck = b
				}
				for _, o := range pr.objs {
					if o.gated {
						gated++
					}
				}
				pr.RT.FailNow(struck)
			}
			w := newWatch(pr)
			res := runWith(t, cfg, stencilJob(t, 4, 2, 60), w)
			st, ps := res.Stats, pr.Stats
			if struck == sim.None || gated == 0 || st.Failures != 2 {
				t.Fatalf("struck %v with %d objects gated, %d failures: not the case under test", struck, gated, st.Failures)
			}
			if c.survive {
				if st.Unrecoverable != 0 || st.Restarts != 0 || ps.Restarts != 2 || ps.Concurrent != 1 || w.rollbacks != 0 || ps.OrderMismatches != 0 {
					t.Fatalf("unrecoverable %d (%s), restarts from scratch %d, mlog restarts %d (%d concurrent), survivor rollbacks %d, TN order mismatches %d",
						st.Unrecoverable, st.UnrecoverableNote, st.Restarts, ps.Restarts, ps.Concurrent, w.rollbacks, ps.OrderMismatches)
				}
			} else if st.Unrecoverable != 1 || st.Restarts != 1 || !strings.Contains(st.UnrecoverableNote, c.note) {
				t.Fatalf("unrecoverable %d (%q, want it to mention %q), restarts from scratch %d", st.Unrecoverable, st.UnrecoverableNote, c.note, st.Restarts)
			}
			t.Logf("X = node %d; makespan %v (no failure, no protocol %v), resent %d (%d to objects not restored), reprocessed %d; %s",
				struck, res.Makespan, base, ps.Resent, ps.ResentOthers, ps.Reprocessed, st.UnrecoverableNote)
		})
	}
}

// failAt45 is the set-up of the two-failure cases above: a stencil of 60
// iterations, 2 blocks a node, on the 4-node test cluster with node h failing
// at 45% of its progress; the fault-free makespan without a protocol; and a
// configuration that checkpoints six times in that time and traces the TN
// order.
func failAt45(t *testing.T, h sim.NodeID) (sim.Config, sim.Time, Config) {
	t.Helper()
	cfg := testCluster(4)
	base := runWith(t, cfg, stencilJob(t, 4, 2, 60), &plain{}).Makespan
	cfg.Failures = sim.ScriptedFailures
	cfg.Planned = []sim.ScriptedFailure{{Node: h, Progress: 0.45, ByProgress: true}}
	pc := DefaultConfig()
	pc.Period, pc.TraceOrder = base/6, true
	return cfg, base, pc
}
