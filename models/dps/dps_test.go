package dps

import (
	"fmt"
	"testing"

	"ftsim/sim"
	"ftsim/sim/simtest"
	"ftsim/workloads/farm"
	"ftsim/workloads/life"
)

// lifeJob is a 48×48 torus in 8 tiles (2 per node on 4 nodes) for 30
// generations; compute takes long enough for failures to strike mid-run.
func lifeJob(t *testing.T, graph string) *life.Workload {
	t.Helper()
	p := life.DefaultParams()
	p.Width, p.Height, p.Generations, p.Graph = 48, 48, 30, graph
	p.ObjectsPerNode = 2
	p.CellOps = 1000
	w, err := life.New(p, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func farmJob(t *testing.T) *farm.Workload {
	t.Helper()
	p := farm.DefaultParams()
	p.Width, p.Height, p.MaxIter, p.Tile = 96, 96, 300, 16
	p.IterOps = 1e4
	w, err := farm.New(p, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func baseConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Bandwidth = 1e8
	cfg.Latency = 50 * sim.Microsecond
	cfg.DetectDelay = sim.Millisecond
	return cfg
}

func runDPS(t *testing.T, cfg sim.Config, wl sim.Workload, pc Config) (sim.Result, *Protocol) {
	t.Helper()
	pc.Audit = true
	p, err := New(pc)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sim.New(cfg, wl, p)
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run()
	return res, p
}

func checkClean(t *testing.T, name string, res sim.Result, p *Protocol) {
	t.Helper()
	if !res.Finished || !res.Outcome.OK {
		t.Fatalf("%s: finished %v, outcome %+v, note %q", name, res.Finished, res.Outcome, res.Stats.UnrecoverableNote)
	}
	if p.C.WrongDrops != 0 || p.C.DoubleProcessed != 0 || p.C.OrderConflicts != 0 {
		t.Fatalf("%s: %d objects dropped that were not re-posts, %d handled twice, %d re-activations against the acknowledged order",
			name, p.C.WrongDrops, p.C.DoubleProcessed, p.C.OrderConflicts)
	}
	simtest.AuditMemory(t, name, p)
}

// Fault-free, the protocol stamps and duplicates but changes no answer, and
// its only traffic is exactly one duplicate per data object per backup of a
// stateful receiver (no checkpoints configured).
func TestFaultFreeDuplicates(t *testing.T) {
	for _, c := range []struct {
		name    string
		wl      func(*testing.T) sim.Workload
		backups int
		farm    bool
	}{
		{"life simple", func(t *testing.T) sim.Workload { return lifeJob(t, "simple") }, 1, false},
		{"life overlap", func(t *testing.T) sim.Workload { return lifeJob(t, "overlap") }, 1, false},
		{"life simple, 2 backups", func(t *testing.T) sim.Workload { return lifeJob(t, "simple") }, 2, false},
		{"life overlap, 3 backups", func(t *testing.T) sim.Workload { return lifeJob(t, "overlap") }, 3, false},
		{"farm", func(t *testing.T) sim.Workload { return farmJob(t) }, 1, true},
		{"farm, 2 backups", func(t *testing.T) sim.Workload { return farmJob(t) }, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := baseConfig()
			pc := DefaultConfig()
			pc.Backups, pc.Every = c.backups, 0
			wl := c.wl(t)
			res, p := runDPS(t, cfg, wl, pc)
			checkClean(t, c.name, res, p)
			want := res.Stats.AppMsgs * int64(c.backups)
			if c.farm {
				// workers are stateless: only the results sent to the master are duplicated
				tiles := int64(wl.(*farm.Workload).NumTiles())
				if res.Stats.AppMsgs != 2*tiles {
					t.Fatalf("%d application messages, want %d", res.Stats.AppMsgs, 2*tiles)
				}
				want = tiles * int64(c.backups)
			}
			if p.C.Duplicates != want || res.Stats.ExtraMsgs != want {
				t.Fatalf("%d duplicates, %d extra messages; want exactly %d", p.C.Duplicates, res.Stats.ExtraMsgs, want)
			}
			if p.C.Reposted != 0 || p.C.SilentDrops != 0 || p.C.Checkpoints != 0 {
				t.Fatalf("fault-free run re-posted %d, dropped %d, checkpointed %d", p.C.Reposted, p.C.SilentDrops, p.C.Checkpoints)
			}
			if res.Stats.PeakMem[sim.MemBackup] <= 0 {
				t.Fatal("backup memory not accounted")
			}
		})
	}
}

// Backups are placed by rotating indices (the paper's Fig. 4): with one object
// per node, object i's k-th backup is on node (i+1+k) mod N.
func TestRotatedPlacement(t *testing.T) {
	p := life.DefaultParams()
	p.Width, p.Height, p.Generations = 16, 16, 1
	w, _ := life.New(p, 3, nil)
	cfg := baseConfig()
	cfg.Nodes = 3
	pc := DefaultConfig()
	pc.Backups = 2
	pr, _ := New(pc)
	rt, _ := sim.New(cfg, w, pr)
	rt.Run()
	for i := range 3 {
		for k, bk := range pr.th[i].backups {
			if want := sim.NodeID((i + 1 + k) % 3); bk.node != want {
				t.Errorf("object %d backup %d on node %d, want %d", i, k, bk.node, want)
			}
		}
		if len(pr.th[i].backups) != 2 {
			t.Errorf("object %d has %d backups", i, len(pr.th[i].backups))
		}
	}
}

// With Spread and several threads per node, a node's threads back up on
// different nodes, so that after a failure no survivor takes over more than
// its share.
func TestRotatedPlacementSpreads(t *testing.T) {
	p := life.DefaultParams()
	p.Width, p.Height, p.Generations, p.ObjectsPerNode = 32, 32, 1, 4
	w, _ := life.New(p, 4, nil)
	cfg := baseConfig()
	cfg.Nodes = 4
	pc := DefaultConfig()
	pc.Spread = true
	pr, _ := New(pc)
	rt, _ := sim.New(cfg, w, pr)
	rt.Run()
	for n := range sim.NodeID(4) {
		holders := map[sim.NodeID]int{}
		for i := range pr.th {
			if rt.NodeOf(sim.ObjID(i)) == n {
				b := pr.th[i].backups[0].node
				if b == n {
					t.Fatalf("object %d backs up on its own node", i)
				}
				holders[b]++
			}
		}
		// 4 threads over the 3 other nodes: no node holds more than 2
		for b, k := range holders {
			if k > 2 || len(holders) != 3 {
				t.Errorf("node %d's threads back up %v (node %d holds %d)", n, holders, b, k)
			}
		}
	}
}

// Each thread checkpoints on its own every `every` handled messages: a Life
// tile handles its Start plus 8 halos per generation, so it sends
// ⌊(8G+1)/every⌋ checkpoints to each backup, and each prunes its queue.
func TestCheckpointEvery(t *testing.T) {
	const gens = 30
	for _, every := range []int64{1, 8, 50} {
		for _, graph := range []string{"simple", "overlap"} {
			t.Run(fmt.Sprintf("%s every %d", graph, every), func(t *testing.T) {
				wl := lifeJob(t, graph)
				pc := DefaultConfig()
				pc.Every = every
				res, p := runDPS(t, baseConfig(), wl, pc)
				checkClean(t, graph, res, p)
				n := int64(wl.NumObjects())
				want := n * ((8*gens + 1) / every)
				if p.C.Checkpoints != want || int64(res.Stats.Checkpoints) != want {
					t.Fatalf("%d checkpoints, want %d", p.C.Checkpoints, want)
				}
				if res.Stats.ExtraMsgs != p.C.Duplicates+want {
					t.Fatalf("extra messages %d = %d duplicates + %d checkpoints expected", res.Stats.ExtraMsgs, p.C.Duplicates, want)
				}
				// after its last checkpoint a backup holds fewer than every + 8 objects
				for i := range p.th {
					for _, bk := range p.th[i].backups {
						if int64(bk.queue.Len()) >= every+8 && every > 1 {
							t.Fatalf("object %d: backup queue of %d objects", i, bk.queue.Len())
						}
					}
				}
			})
		}
	}
}

// A periodic checkpoint is taken per object, whatever the handled count.
func TestCheckpointPeriod(t *testing.T) {
	wl := lifeJob(t, "overlap")
	pc := DefaultConfig()
	pc.Every, pc.Period = 0, 2*sim.Millisecond
	res, p := runDPS(t, baseConfig(), wl, pc)
	checkClean(t, "period", res, p)
	perObj := int64(res.Makespan / pc.Period)
	n := int64(wl.NumObjects())
	if p.C.Checkpoints < n*(perObj-1) || p.C.Checkpoints > n*perObj {
		t.Fatalf("%d checkpoints over %v, want about %d per object", p.C.Checkpoints, res.Makespan, perObj)
	}
}

// A period shorter than a checkpoint's transfer (which takes at least the
// latency) skips the ticks at which the previous checkpoint has not arrived,
// instead of queueing checkpoints without bound (found by a search on
// random machines: a run ran out of memory): each object has at most one
// on its way, and still checkpoints.
func TestCheckpointPeriodShorterThanTransfer(t *testing.T) {
	wl := lifeJob(t, "overlap")
	cfg := baseConfig()
	pc := DefaultConfig()
	pc.Every, pc.Period = 0, cfg.Latency/5
	res, p := runDPS(t, cfg, wl, pc)
	checkClean(t, "period", res, p)
	n := int64(wl.NumObjects())
	most := n * int64(res.Makespan/cfg.Latency+1)
	if p.C.SkippedCheckpoints == 0 || p.C.Checkpoints < n || p.C.Checkpoints > most {
		t.Fatalf("%d checkpoints (want %d to %d), %d ticks skipped over %v", p.C.Checkpoints, n, most, p.C.SkippedCheckpoints, res.Makespan)
	}
}

// A timer tick at which the object has handled nothing since its last
// checkpoint is skipped: the checkpoint would save the same state again.
// Without the rule, on a machine where a transfer costs as much CPU as it
// takes time (cpu_load = 1, no latency) and the period is short, the
// protocol's CPU work (which goes ahead of the application's) exceeds the
// cores, and the application never runs again (found by the random-machine
// search with failure bursts). With it, checkpoints follow the work done:
// no more than with a checkpoint after every handled message.
func TestTimerSkipsUnchangedState(t *testing.T) {
	wl := lifeJob(t, "overlap")
	cfg := baseConfig()
	each := DefaultConfig()
	each.Every = 1
	_, every := runDPS(t, cfg, wl, each)
	cfg.Latency, cfg.CPULoad = 0, 1
	cfg.Limit = 400 * sim.Millisecond // 20 times the fault-free run
	pc := DefaultConfig()
	pc.Every, pc.Period = 0, 5*sim.Microsecond
	res, p := runDPS(t, cfg, wl, pc)
	checkClean(t, "short period", res, p)
	if p.C.SkippedCheckpoints == 0 || p.C.Checkpoints == 0 || p.C.Checkpoints > every.C.Checkpoints {
		t.Fatalf("%d checkpoints (want 1 to %d, one per handled message at most), %d ticks skipped over %v",
			p.C.Checkpoints, every.C.Checkpoints, p.C.SkippedCheckpoints, res.Makespan)
	}
}

// A period far below everything else (1 ns, on a run whose messages take
// 50 µs) costs what the checkpoints cost, not what the ticks would: a tick
// that would be skipped parks the timer until the thread handles something
// or its checkpoint arrives. Running every tick kept such a run at its first
// percent for ever, and gave each tick during a handler a waiting closure
// (5.7 GB within a minute on the default scenario). The ticks passed over
// are still counted: every tick of every thread either checkpoints or is
// skipped, up to one per thread at the end of the run.
func TestTinyPeriodParksTheTimer(t *testing.T) {
	each := DefaultConfig()
	each.Every = 1
	every, _ := runDPS(t, baseConfig(), lifeJob(t, "overlap"), each)
	for _, period := range []sim.Time{1, 7 * sim.Microsecond} {
		wl := lifeJob(t, "overlap")
		pc := DefaultConfig()
		pc.Every, pc.Period = 0, period
		res, p := runDPS(t, baseConfig(), wl, pc)
		checkClean(t, "tiny period", res, p)
		if most := 2 * every.Events; res.Events > most {
			t.Errorf("period %v: %d events, want at most %d (twice a checkpoint per handled message)", period, res.Events, most)
		}
		n := int64(wl.NumObjects())
		ticks := n * int64(res.Makespan/period)
		if got := p.C.Checkpoints + p.C.SkippedCheckpoints; got < ticks-n || got > ticks {
			t.Errorf("period %v: %d checkpoints + %d skipped ticks, want the %d ticks within %d", period, p.C.Checkpoints, p.C.SkippedCheckpoints, ticks, n)
		}
	}
}

// Parked timers live through failures: with a 1 ns period, threads that
// lose their node, re-activate from a backup and re-execute end with the
// reference answer, without a restart from scratch, as threads that ran
// every tick did.
func TestTinyPeriodUnderFailures(t *testing.T) {
	type fail = sim.ScriptedFailure
	for _, plan := range [][]fail{
		{{Node: 1, Progress: 0.3, ByProgress: true}},
		{{Node: 2, Progress: 0.4, ByProgress: true}, {Node: 0, Progress: 0.7, ByProgress: true}},
		{{Node: 3, At: 3 * sim.Millisecond}},
	} {
		for _, logOrder := range []bool{false, true} {
			cfg := baseConfig()
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = plan
			pc := DefaultConfig()
			pc.Every, pc.Period, pc.LogOrder = 0, 1, logOrder
			res, p := runDPS(t, cfg, lifeJob(t, "overlap"), pc)
			name := fmt.Sprintf("failures %+v, log_order %v", plan, logOrder)
			checkClean(t, name, res, p)
			if res.Stats.Restarts != 0 || p.C.Recovered == 0 || p.C.Checkpoints == 0 {
				t.Errorf("%s: %d restarts from scratch, %d threads recovered, %d checkpoints", name, res.Stats.Restarts, p.C.Recovered, p.C.Checkpoints)
			}
		}
	}
}

// Failures: single, successive and simultaneous ones the backups cover end
// with the reference answer without any restart; survivors never roll back;
// re-posted objects already received are dropped and nothing else is.
func TestRecovery(t *testing.T) {
	type fail = sim.ScriptedFailure
	cases := []struct {
		name   string
		graph  string
		every  int64
		plan   []fail
		nodes  int // application nodes surviving
		unrec  int
		spares int
	}{
		{"single early", "simple", 8, []fail{{Node: 1, Progress: 0.1, ByProgress: true}}, 3, 0, 0},
		{"single late", "overlap", 8, []fail{{Node: 2, Progress: 0.8, ByProgress: true}}, 3, 0, 0},
		{"single, no checkpoint", "simple", 0, []fail{{Node: 3, Progress: 0.5, ByProgress: true}}, 3, 0, 0},
		{"single, sparse checkpoints", "overlap", 50, []fail{{Node: 0, Progress: 0.5, ByProgress: true}}, 3, 0, 0},
		{"successive", "simple", 8, []fail{{Node: 1, Progress: 0.3, ByProgress: true}, {Node: 2, Progress: 0.6, ByProgress: true}}, 2, 0, 0},
		{"successive, backup consumed", "overlap", 16, []fail{{Node: 1, Progress: 0.3, ByProgress: true}, {Node: 2, Progress: 0.35, ByProgress: true}}, 2, 0, 0},
		{"three successive", "overlap", 8, []fail{{Node: 0, Progress: 0.2, ByProgress: true}, {Node: 3, Progress: 0.5, ByProgress: true}, {Node: 1, Progress: 0.8, ByProgress: true}}, 1, 0, 0},
		{"simultaneous, disjoint", "simple", 8, []fail{{Node: 1, Progress: 0.5, ByProgress: true}, {Node: 3, Progress: 0.5, ByProgress: true}}, 2, 0, 0},
		{"simultaneous, thread and backup", "simple", 8, []fail{{Node: 1, Progress: 0.5, ByProgress: true}, {Node: 2, Progress: 0.5, ByProgress: true}}, 0, 1, 2},
		// after the restart from scratch DPS takes over again: the third
		// failure is recovered by re-execution, not by another restart
		{"unrecoverable, then recovered", "simple", 8, []fail{{Node: 1, Progress: 0.5, ByProgress: true}, {Node: 2, Progress: 0.5, ByProgress: true},
			{Node: 3, Progress: 0.7, ByProgress: true}}, 0, 1, 2},
	}
	// order logging (LogOrder) must not change any of this for Life, whose
	// tiles do not depend on the arrival order of their borders
	for _, c := range cases {
		for _, logOrder := range []bool{false, true} {
			name := c.name
			if logOrder {
				name += ", order logged"
			}
			t.Run(name, func(t *testing.T) {
				cfg := baseConfig()
				cfg.Failures = sim.ScriptedFailures
				cfg.Planned = c.plan
				cfg.Spares = c.spares
				pc := DefaultConfig()
				pc.Every, pc.LogOrder = c.every, logOrder
				res, p := runDPS(t, cfg, lifeJob(t, c.graph), pc)
				checkClean(t, c.name, res, p)
				if res.Stats.Unrecoverable != c.unrec {
					t.Fatalf("unrecoverable %d (%q), want %d", res.Stats.Unrecoverable, res.Stats.UnrecoverableNote, c.unrec)
				}
				if c.unrec > 0 {
					if res.Stats.Restarts != 1 || res.Stats.UnrecoverableNote == "" {
						t.Fatalf("fallback: %d restarts, note %q", res.Stats.Restarts, res.Stats.UnrecoverableNote)
					}
					// the failures after the unrecoverable pattern: their node's 2 tiles each
					if later := len(c.plan) - 2; int(p.C.Recovered) != 2*later {
						t.Fatalf("%d threads recovered after the restart from scratch, want %d", p.C.Recovered, 2*later)
					}
					return
				}
				if res.Stats.Restarts != 0 {
					t.Fatalf("%d restarts", res.Stats.Restarts)
				}
				// each failure re-activates the 2 tiles of its node, plus those recovered onto it before
				if p.C.Recovered < 2*len(c.plan) {
					t.Fatalf("%d threads recovered, want at least %d", p.C.Recovered, 2*len(c.plan))
				}
				if p.C.SilentDrops == 0 || p.C.SilentDrops > p.C.Reposted {
					t.Fatalf("%d re-posted, %d dropped", p.C.Reposted, p.C.SilentDrops)
				}
				t.Logf("recovered %d, replayed %d, re-posted %d, dropped %d (seq differed %d), late copies %d, regenerated %d, gap forwards %d",
					p.C.Recovered, p.C.Replayed, p.C.Reposted, p.C.SilentDrops, p.C.SeqMismatches, p.C.LateCopies, p.C.Regenerated, p.C.GapForwards)
				if got := len(p.RT.Slots()); got != c.nodes {
					t.Fatalf("%d application nodes left, want %d", got, c.nodes)
				}
			})
		}
	}
}

// The farm: workers are stateless (no backups, no duplicates); a dead worker is
// re-created and the split resends its outstanding tasks; the master
// (split/merge) is recovered from its backup by re-execution and then resends
// every unconfirmed task.
func TestFarmRecovery(t *testing.T) {
	type fail = sim.ScriptedFailure
	// Node 0 holds the master alone, nodes 1-3 a worker each. With Shrink a
	// dead worker stays dead while another survives (retired); the last one
	// is re-created (the collection cannot be empty).
	cases := []struct {
		name              string
		plan              []fail
		master, worker    bool
		retired, recreate int // with Shrink
	}{
		{"worker", []fail{{Node: 2, Progress: 0.4, ByProgress: true}}, false, true, 1, 0},
		{"master", []fail{{Node: 0, Progress: 0.5, ByProgress: true}}, true, false, 0, 0},
		{"master then worker", []fail{{Node: 0, Progress: 0.3, ByProgress: true}, {Node: 2, Progress: 0.7, ByProgress: true}}, true, true, 1, 0},
		{"worker and master together", []fail{{Node: 3, Progress: 0.5, ByProgress: true}, {Node: 0, Progress: 0.5, ByProgress: true}}, true, true, 1, 0},
		{"every worker together", []fail{{Node: 1, Progress: 0.5, ByProgress: true}, {Node: 2, Progress: 0.5, ByProgress: true}, {Node: 3, Progress: 0.5, ByProgress: true}}, false, true, 2, 1},
	}
	// order logging changes nothing here: workers are stateless and the split
	// restarts from its checkpoint instead of re-executing
	for _, c := range cases {
		for _, v := range []struct {
			every            int64
			logOrder, shrink bool
		}{{0, false, true}, {5, false, true}, {0, true, true}, {5, true, true}, {0, false, false}, {5, false, false}} {
			every := v.every
			t.Run(fmt.Sprintf("%s every %d order logged %v shrink %v", c.name, every, v.logOrder, v.shrink), func(t *testing.T) {
				cfg := baseConfig()
				cfg.Failures = sim.ScriptedFailures
				cfg.Planned = c.plan
				pc := DefaultConfig()
				pc.Every, pc.LogOrder, pc.Shrink = every, v.logOrder, v.shrink
				res, p := runDPS(t, cfg, farmJob(t), pc)
				checkClean(t, c.name, res, p)
				if res.Stats.Unrecoverable != 0 || res.Stats.Restarts != 0 {
					t.Fatalf("unrecoverable %d, restarts %d", res.Stats.Unrecoverable, res.Stats.Restarts)
				}
				if p.C.Resent == 0 && (c.worker && !c.master || every > 0) {
					t.Fatalf("resent %d", p.C.Resent)
				}
				// a dead worker is re-created, or with Shrink retired and its
				// tasks handed to the survivors (the master's node has workers)
				switch {
				case !v.shrink && (c.worker != (p.C.Recreated > 0) || p.C.Retired != 0 || p.C.Reassigned != 0),
					v.shrink && (p.C.Recreated != c.recreate || p.C.Retired != c.retired),
					v.shrink && c.worker && !c.master && p.C.Reassigned == 0:
					t.Fatalf("shrink %v: recreated %d, retired %d, resent %d, reassigned %d", v.shrink, p.C.Recreated, p.C.Retired, p.C.Resent, p.C.Reassigned)
				}
				if c.master != (p.C.Recovered > 0) {
					t.Fatalf("master recovered %d times", p.C.Recovered)
				}
				t.Logf("recreated %d, retired %d, resent %d (reassigned %d), recovered %d, replayed %d, re-posted %d, dropped %d, stale %d",
					p.C.Recreated, p.C.Retired, p.C.Resent, p.C.Reassigned, p.C.Recovered, p.C.Replayed, p.C.Reposted, p.C.SilentDrops, p.C.StaleResults)
			})
		}
	}
}

// A farm whose master and its backup fail together restarts from scratch;
// DPS then takes over again, and a worker that fails later is handled by DPS
// (re-created, or retired with Shrink), not by a second restart.
func TestFarmTakeOver(t *testing.T) {
	plan := []sim.ScriptedFailure{{Node: 0, Progress: 0.4, ByProgress: true}, {Node: 1, Progress: 0.4, ByProgress: true},
		{Node: 2, Progress: 0.8, ByProgress: true}}
	for _, shrink := range []bool{false, true} {
		for _, logOrder := range []bool{false, true} {
			t.Run(fmt.Sprintf("shrink %v order logged %v", shrink, logOrder), func(t *testing.T) {
				cfg := baseConfig()
				cfg.Failures, cfg.Planned, cfg.Spares = sim.ScriptedFailures, plan, 2
				pc := DefaultConfig()
				pc.Every, pc.LogOrder, pc.Shrink = 5, logOrder, shrink
				res, p := runDPS(t, cfg, farmJob(t), pc)
				checkClean(t, "farm take-over", res, p)
				if res.Stats.Unrecoverable != 1 || res.Stats.Restarts != 1 {
					t.Fatalf("unrecoverable %d, restarts %d (%q)", res.Stats.Unrecoverable, res.Stats.Restarts, res.Stats.UnrecoverableNote)
				}
				if p.C.Recreated+p.C.Retired != 1 || p.C.Resent == 0 {
					t.Fatalf("after the fresh start: recreated %d, retired %d, resent %d", p.C.Recreated, p.C.Retired, p.C.Resent)
				}
			})
		}
	}
}

// Checkpoints prune the backup queues: the peak memory held by backups (states
// and stored duplicates) falls when threads checkpoint more often.
func TestCheckpointsBoundBackupMemory(t *testing.T) {
	peak := func(every int64) int64 {
		pc := DefaultConfig()
		pc.Every = every
		res, p := runDPS(t, baseConfig(), lifeJob(t, "overlap"), pc)
		checkClean(t, "memory", res, p)
		return res.Stats.PeakMem[sim.MemBackup]
	}
	never, often := peak(0), peak(8)
	t.Logf("peak backup memory: %d B without checkpoints, %d B with one every 8 objects", never, often)
	if often >= never {
		t.Fatalf("checkpointing every 8 objects holds %d B, no more than without (%d B)", often, never)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{{Backups: -1}, {Every: -1}, {Period: -1}, {HeaderBytes: -1}} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// A backup is gone once its node has left the application's slots, even if
// that node is alive again (repaired, in the spare pool) with the
// incarnation the backup was set up with: a restart from scratch had set
// backups up on a node already dead but not yet detected, the detection
// dropped the node, and after its repair dps re-activated two threads from
// those backups onto the idle spare, where they never ran (a burst search on
// random machines).
func TestBackupOffTheSlotsIsGone(t *testing.T) {
	wl := lifeJob(t, "simple")
	p, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sim.New(baseConfig(), wl, p)
	if err != nil {
		t.Fatal(err)
	}
	rt.Run()
	bk := p.th[0].backups[0]
	if !p.valid(bk) {
		t.Fatal("a backup on a live application node is not valid")
	}
	rt.RemoveSlot(bk.node)
	if p.valid(bk) {
		t.Fatalf("the backup on node %d is still valid after the node left the slots %v", bk.node, rt.Slots())
	}
}
