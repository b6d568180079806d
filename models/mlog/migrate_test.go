package mlog

import (
	"strings"
	"testing"

	"ftsim/sim"
)

// A crash of the restarting node C while it spreads the restored objects:
// D's queries leave exactly one live copy of every migrating object — on E
// when both E and F had it, else recreated on C's replacement — and the run
// ends with the reference answer, re-executing in the pre-failure TN order,
// without restarting from scratch.
func TestSourceCrashDuringMigration(t *testing.T) {
	cases := []struct {
		name         string
		step         string   // the migration step at which C crashes
		detect       sim.Time // detection delay
		kept, undone int64
		migrations   int64 // objects restored on another node than the replacement
	}{
		{"before sending", "send", 10 * sim.Millisecond, 0, 3, 0},   // nothing arrived anywhere
		{"state at E only", "at E", 10 * sim.Millisecond, 0, 3, 0},  // F does not have it: recreated on the replacement
		{"state at E and F", "at F", 10 * sim.Millisecond, 0, 2, 1}, // D heard from E and F before the detection: it lives on E, no query
		{"detected at once", "at F", 0, 1, 2, 1},                    // D asks before the acknowledgements: E and F have the first, which stays on E
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testCluster(4)
			cfg.DetectDelay = c.detect
			base := runWith(t, cfg, stencilJob(t, 4, 4, 60), &plain{})
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = []sim.ScriptedFailure{{Node: 1, Progress: 0.45, ByProgress: true}}
			pc := DefaultConfig()
			pc.Period, pc.Restart, pc.TraceOrder = base.Makespan/6, RestartFast, true
			pr := mustNew(t, pc)
			struck := false
			pr.hook = func(step string, src, e, f sim.NodeID) {
				if step == c.step && !struck && f != src { // (F = C would die with C)
					struck = true
					pr.RT.FailNow(src)
				}
			}
			w := newWatch(pr)
			res := runWith(t, cfg, stencilJob(t, 4, 4, 60), w)
			st, ps := res.Stats, pr.Stats
			if !struck || st.Failures != 2 || st.Unrecoverable != 0 || st.Restarts != 0 {
				t.Fatalf("struck %v, %d failures, unrecoverable %d (%s), restarts from scratch %d", struck, st.Failures, st.Unrecoverable, st.UnrecoverableNote, st.Restarts)
			}
			if ps.SourceCrashes != 1 || ps.MigrationsKept != c.kept || ps.MigrationsUndone != c.undone || ps.MigrationQueries != c.kept+c.undone || ps.Migrations != c.migrations {
				t.Fatalf("source crashes %d, queries %d, kept %d, undone %d, migrations %d; want kept %d, undone %d, migrations %d",
					ps.SourceCrashes, ps.MigrationQueries, ps.MigrationsKept, ps.MigrationsUndone, ps.Migrations, c.kept, c.undone, c.migrations)
			}
			checkOneCopy(t, pr, w)
			t.Logf("makespan %v (no failure, no protocol %v), migrations %d, queries %d, kept %d, undone %d",
				res.Makespan, base.Makespan, ps.Migrations, ps.MigrationQueries, ps.MigrationsKept, ps.MigrationsUndone)
		})
	}
}

// A crash of a destination E (a node with objects of its own) while the
// restarting node C spreads the restored objects: without the
// multiple-failure extension, two nodes' logs and TN tables are lost and the
// pattern is reported (the run restarts from scratch). With it, an object on
// its way to E stays on C unless F (E's buddy) already holds its checkpoint,
// in which case it is restored from F with E's own objects on E's
// replacement, and both restarts share one resend phase. Every run ends with
// the reference answer; with the extension, without rollback of survivors and
// in the pre-failure TN order.
func TestDestinationCrashDuringMigration(t *testing.T) {
	cases := []struct {
		name         string
		step         string // the migration step at which E crashes
		multi        bool
		kept, undone int64
	}{
		{"state at E only/single", "at E", false, 0, 0},
		{"state at E only/multi_failure", "at E", true, 0, 1}, // F does not have it: it continues on C
		{"state at F/multi_failure", "at F", true, 1, 0},      // F has it: restored with E's objects
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testCluster(4)
			base := runWith(t, cfg, stencilJob(t, 4, 4, 60), &plain{})
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = []sim.ScriptedFailure{{Node: 1, Progress: 0.45, ByProgress: true}}
			pc := DefaultConfig()
			pc.Period, pc.Restart, pc.TraceOrder, pc.MultiFailure = base.Makespan/6, RestartFast, true, c.multi
			pr := mustNew(t, pc)
			struck := false
			pr.hook = func(step string, src, e, f sim.NodeID) {
				if step == c.step && !struck && f != src && e != pr.buddy(src) { // (D = E would take the checkpoints along)
					struck = true
					pr.RT.FailNow(e)
				}
			}
			w := newWatch(pr)
			res := runWith(t, cfg, stencilJob(t, 4, 4, 60), w)
			st, ps := res.Stats, pr.Stats
			if !struck || st.Failures != 2 {
				t.Fatalf("struck %v, %d failures", struck, st.Failures)
			}
			if !c.multi {
				if st.Unrecoverable != 1 || st.Restarts != 1 || !strings.Contains(st.UnrecoverableNote, "in progress") {
					t.Fatalf("unrecoverable %d (%q), restarts from scratch %d", st.Unrecoverable, st.UnrecoverableNote, st.Restarts)
				}
				return
			}
			if st.Unrecoverable != 0 || st.Restarts != 0 || ps.DestCrashes != 1 || ps.MigrationsKept != c.kept || ps.MigrationsUndone != c.undone {
				t.Fatalf("unrecoverable %d (%s), restarts from scratch %d, destination crashes %d, kept %d (want %d), undone %d (want %d)",
					st.Unrecoverable, st.UnrecoverableNote, st.Restarts, ps.DestCrashes, ps.MigrationsKept, c.kept, ps.MigrationsUndone, c.undone)
			}
			checkOneCopy(t, pr, w)
			t.Logf("makespan %v (no failure, no protocol %v), migrations %d, kept %d, undone %d",
				res.Makespan, base.Makespan, ps.Migrations, ps.MigrationsKept, ps.MigrationsUndone)
		})
	}
}

// A crash of the restarting node C (a spare) after it placed the restored
// objects, while the objects of a crashed destination E are still being
// restored on E's replacement (found by a search on random machines): the
// restart used to count C's objects as placed, so the end of E's restore
// started the resend phase from C's slot while C's replacement was still
// booting (a transfer from no node). C's objects now count as placed only
// once its replacement has recreated them; the run ends with the reference
// answer without restarting from scratch.
func TestSourceCrashWhileDestinationRestores(t *testing.T) {
	cfg := testCluster(4)
	cfg.SpareBoot = 200 * sim.Millisecond
	base := runWith(t, cfg, stencilJob(t, 4, 4, 60), &plain{})
	cfg.Failures = sim.ScriptedFailures
	cfg.Planned = []sim.ScriptedFailure{{Node: 1, Progress: 0.45, ByProgress: true}}
	pc := DefaultConfig()
	pc.Period, pc.Restart, pc.TraceOrder, pc.MultiFailure = base.Makespan/6, RestartFast, true, true
	pr := mustNew(t, pc)
	struck := false
	pr.hook = func(step string, src, e, f sim.NodeID) {
		if step == "at E" && !struck && f != src && e != pr.buddy(src) {
			struck = true
			pr.RT.FailNow(e)
			// after C placed everything, while E's replacement boots
			pr.RT.At(pr.RT.Now()+cfg.DetectDelay+cfg.SpareBoot/2, func() { pr.RT.FailNow(src) })
		}
	}
	res := runWith(t, cfg, stencilJob(t, 4, 4, 60), pr)
	st, ps := res.Stats, pr.Stats
	if !struck || st.Failures != 3 || st.Restarts != 0 || ps.DestCrashes != 1 || ps.SourceCrashes != 1 {
		t.Fatalf("struck %v, %d failures, restarts from scratch %d (%s), destination crashes %d, source crashes %d",
			struck, st.Failures, st.Restarts, st.UnrecoverableNote, ps.DestCrashes, ps.SourceCrashes)
	}
}

// checkOneCopy fails unless the run had one mlog restart whose re-execution
// followed the pre-failure TN order without rolling any survivor back, and
// exactly one copy of every object is left: where the protocol keeps it is
// where it runs, and its checkpoint lives on a node that is alive.
func checkOneCopy(t *testing.T, pr *Protocol, w *watch) {
	t.Helper()
	ps := pr.Stats
	if ps.Restarts != 1 || w.rollbacks != 0 || ps.OrderMismatches != 0 || ps.Reprocessed == 0 {
		t.Fatalf("restarts %d, survivor rollbacks %d, TN order mismatches %d, reprocessed %d", ps.Restarts, w.rollbacks, ps.OrderMismatches, ps.Reprocessed)
	}
	for _, o := range pr.objs {
		if n := pr.RT.NodeOf(o.id); n != o.node || pr.RT.Lost(o.id) || !pr.valid(o.ckpt) {
			t.Fatalf("object %d: runtime node %d, protocol node %d, lost %v, checkpoint valid %v", o.id, n, o.node, pr.RT.Lost(o.id), pr.valid(o.ckpt))
		}
	}
}

// Fast restart with the multiple-failure extension, when a node the restart
// relies on fails before the restarting node C spreads the restored
// objects (found by a search with failures at given times):
//   - C's buddy D (node 2, which held the failed node's checkpoints), or F,
//     the buddy of destination E (node 3 for E = node 2). Their failures
//     were detected but their replacements still booting, so they were
//     still the buddies of C and E: C waited for ever for D's
//     acknowledgement, and E for F's. C now sends without D's mark and E
//     restores the object without F's copy, as when they have no buddy. (D
//     is down only in a restart that needs nothing of it: both nodes fail
//     before the first message is processed. Otherwise the tuples D held
//     are lost, and the run restarts from scratch, as below.)
//   - D (node 0, the buddy of node 3) while C fetches the failed node's
//     checkpoints and remote message log from it. The crash was taken for a
//     destination's, which the restart survives, although the tuples of the
//     messages the failed node's objects had processed were lost with D; the
//     fetch waited for ever. That pattern is now reported, and the run
//     restarts from scratch.
func TestMigrationBuddyDown(t *testing.T) {
	for _, c := range []struct {
		name          string
		bandwidth     float64
		first, second sim.NodeID
		at, later     float64 // first failure and the second's delay, in fault-free runs
		detect        sim.Time
		unrecoverable bool
	}{
		{"D down", 1e9, 1, 2, 1e-6, 1e-6, sim.Microsecond, false},
		{"D down after processing", 1e9, 1, 2, 0.05, 0.005, sim.Microsecond, true},
		{"F down", 1e9, 1, 3, 0.05, 0.005, sim.Microsecond, false},
		{"D down while C fetches", 1e8, 3, 0, 0.3, 0.02, sim.Millisecond, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testCluster(4)
			cfg.Bandwidth = c.bandwidth
			base := runWith(t, cfg, stencilJob(t, 4, 2, 40), &plain{})
			ff := base.Makespan
			at := sim.Time(c.at * float64(ff))
			cfg.DetectDelay = c.detect
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = []sim.ScriptedFailure{{Node: c.first, At: at}, {Node: c.second, At: at + sim.Time(c.later*float64(ff))}}
			cfg.Limit = 50 * ff
			pc := DefaultConfig()
			pc.Period, pc.Restart, pc.MultiFailure = ff/6, RestartFast, true
			pr := mustNew(t, pc)
			res := runWith(t, cfg, stencilJob(t, 4, 2, 40), pr)
			st := res.Stats
			if st.Failures != 2 || (st.Unrecoverable > 0) != c.unrecoverable {
				t.Fatalf("%d failures, unrecoverable %d (%s), want unrecoverable %v", st.Failures, st.Unrecoverable, st.UnrecoverableNote, c.unrecoverable)
			}
			if c.unrecoverable {
				return
			}
			if pr.Stats.Migrations == 0 {
				t.Fatal("no migration")
			}
			for _, o := range pr.objs {
				if n := pr.RT.NodeOf(o.id); n != o.node || pr.RT.Lost(o.id) {
					t.Fatalf("object %d: runtime node %d, protocol node %d, lost %v", o.id, n, o.node, pr.RT.Lost(o.id))
				}
			}
		})
	}
}
