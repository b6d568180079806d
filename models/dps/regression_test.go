package dps

import (
	"testing"

	"ftsim/sim"
	"ftsim/workloads/pida"
)

// Interleavings of checkpoints and failures that a search over failure plans
// found (models/dps had no test reaching any); each run must end with the
// reference answer and no protocol anomaly. Since pida's donors keep their
// last move the plan of the lost forward no longer reaches its interleaving;
// it stays as a plain failure case, its second failure at 93% of the
// progress since session 41 (97% before: once re-activated threads stopped
// taking copies of their own objects ahead of their re-execution,
// ownRepost, the run ended before 97%). The lost forward and the lost
// object in flight are one check now (complete), which "lost in flight"
// reaches. No plan of failurePlans, whose failures strike when progress
// reaches a value, reaches the stale checkpoint any more; failures at given
// times do (a search of timedPlans found 13 of 6,840 that fail without the
// check), and its case is one of them. Each of the others was found again
// and fails without its fix.
//
//   - stale checkpoint: node 0 fails, its thread is re-activated from one
//     backup while a checkpoint its dead incarnation sent is still on the way
//     to the other. Installed, that state (ahead of the re-activated thread)
//     pruned the surviving backup's queue and log of objects the new thread
//     had not handled again; when node 1 failed, re-activation from it waited
//     for them forever.
//   - early checkpoint: a backup being regenerated received an ordinary
//     checkpoint before its regeneration state. The checkpoint made it ready
//     without the objects queued at the thread, which only the regeneration
//     state carries; re-activated from it, the thread waited for them forever.
//   - stale determinant: the same, for the handling order a dead
//     incarnation sent: a surviving backup logged it, while the re-activated
//     thread handled that object at another rank; the log listed it twice, and
//     re-activation from that backup waited for it a second time.
//   - lost forward: node 3 fails; its thread, re-activated on node 0, takes
//     a duplicate that arrived there late (the only copy of the final
//     broadcast besides the one the dead thread handled) and forwards it to
//     its regenerated backup on node 1, but node 0 fails with the forward
//     still queued behind the regeneration transfers. The backup on node 1
//     was ready and re-activated, without the broadcast: the thread never
//     learnt the search was over and searched alone until the limit. The
//     thread and every complete copy of it were lost: DPS must report the
//     pattern and restart from scratch.
//   - lost in flight: node 1 fails; a work message (a quarter of the
//     termination credit) is sent to its thread 2, the original to the dead
//     node and the duplicate to the backup on node 2, where it waits behind
//     other transfers. Thread 2 is re-activated on node 2 and its new backup
//     on node 3 gets a copy of the consumed one, without the object still
//     on its way; node 2 fails before it arrives. Re-activated from node 3,
//     the thread never got the work and the credit never came back: the
//     thread and every complete copy were lost, and DPS must restart from
//     scratch.
//   - backup ahead: node 3 fails; its thread 7 had handled an object from
//     thread 6 (both on node 3) and checkpointed, and the checkpoint reached
//     its backup on node 1, which pruned the object from its queue, but not
//     the one on node 0. Re-activated from node 0, the thread's first
//     checkpoint (from before that object) replaced node 1's state: node 1
//     now needed the object and no longer had it, and thread 6, re-executed
//     from a checkpoint after sending it, would never send it again. When
//     node 0 failed, re-activation from node 1 waited for it forever. Node 1
//     now keeps its state, which is ahead (found by timedPlans with a
//     bandwidth of 10 MB/s).
//   - overtaken original: a data object was still on the wire when its
//     sender's node failed; the sender, re-activated on the receiver's node,
//     re-posted it at once, and the original arrived second. Dropping it is
//     right, but the audit counted it as a wrong drop.
func TestDPSRegressions(t *testing.T) {
	type fail = sim.ScriptedFailure
	at := func(node sim.NodeID, p float64) fail { return fail{Node: node, Progress: p, ByProgress: true} }
	for _, c := range []struct {
		name          string
		detect        sim.Time
		plan          []fail
		every         int64
		backups       int
		seed          int64
		bytesPerFrame int64
		bandwidth     float64 // 0: baseConfig's
		overtaken     bool    // an original arrives after its re-post
		unrecoverable bool    // DPS restarts from scratch once
		stale         bool    // a backup disagrees with a re-activation's order (StaleBackups)
	}{
		{"stale checkpoint", sim.Microsecond, []fail{{Node: 0, At: 8463966}, {Node: 1, At: 8584879}}, 2, 2, 1, 0, 0, false, false, false},
		{"early checkpoint", sim.Millisecond, []fail{at(1, 0.1), at(0, 0.25)}, 2, 1, 1, 2048, 0, false, false, false},
		{"stale determinant", sim.Microsecond, []fail{at(1, 0.5), at(2, 0.7)}, 0, 2, 1, 32, 0, false, false, false},
		// with 16 KB frames (a fault-free run of 373 ms; the case of 2 KB
		// frames no longer occurs since pida's donors keep their last move)
		{"overtaken original", sim.Microsecond, []fail{at(0, 0.45), at(3, 0.5)}, 2, 2, 3, 16384, 0, true, false, false},
		{"lost forward", sim.Microsecond, []fail{at(3, 0.9), at(0, 0.93)}, 2, 1, 3, 2048, 0, false, true, false},
		{"lost in flight", sim.Millisecond, []fail{at(1, 0.05), at(2, 0.1)}, 2, 1, 2, 2048, 0, false, true, false},
		{"backup ahead", sim.Microsecond, []fail{{Node: 3, At: 9381900}, {Node: 0, At: 9757176}}, 1, 2, 2, 0, 1e7, false, false, false},
		{"backup missing a rank", sim.Microsecond, []fail{{Node: 0, At: 3497556}, {Node: 1, At: 3555848}}, 1, 2, 1, 0, 0, false, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := baseConfig()
			if c.bandwidth > 0 {
				cfg.Bandwidth = c.bandwidth
			}
			cfg.DetectDelay = c.detect
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = c.plan
			cfg.Limit = 200 * sim.Millisecond // fault-free 8 ms: a hang fails fast
			if c.bytesPerFrame > 2048 {
				cfg.Limit = 4 * sim.Second
			}
			pc := DefaultConfig()
			pc.Every, pc.Backups, pc.LogOrder = c.every, c.backups, true
			pp := pida.DefaultParams()
			pp.Workers, pp.Seed = 8, c.seed
			if c.bytesPerFrame > 0 {
				pp.BytesPerFrame = c.bytesPerFrame
			}
			wl, err := pida.New(pp, 4, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, p := runDPS(t, cfg, wl, pc)
			checkClean(t, c.name, res, p)
			if got := res.Stats.Unrecoverable > 0; got != c.unrecoverable {
				t.Fatalf("unrecoverable %v, want %v (%s)", got, c.unrecoverable, res.Stats.UnrecoverableNote)
			}
			if p.C.Recovered == 0 {
				t.Fatalf("no thread was re-activated: the plan no longer exercises recovery")
			}
			if c.stale != (p.C.StaleBackups > 0) {
				t.Fatalf("%d backups stale at a re-activation, want some: %v", p.C.StaleBackups, c.stale)
			}
			if c.overtaken != (p.C.OvertakenOriginals > 0) {
				t.Fatalf("%d originals overtaken by their re-post, want some: %v", p.C.OvertakenOriginals, c.overtaken)
			}
		})
	}
}
