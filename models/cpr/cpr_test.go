package cpr

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"ftsim/sim"
	"ftsim/sim/simtest"
	"ftsim/workloads/dp"
	"ftsim/workloads/life"
	"ftsim/workloads/stencil"
	"ftsim/workloads/synthetic"
)

// compute-only synthetic job: 4 objects × 10 steps of 0.1 s, 25 MB of state each.
func job(t *testing.T, exchange int64) *synthetic.Workload {
	t.Helper()
	w, err := synthetic.New(synthetic.Params{Steps: 10, StepOps: 1e8, Exchange: exchange, State: 25e6}, 4)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func cluster() sim.Config {
	c := sim.DefaultConfig()
	c.Nodes, c.Spares = 4, 50
	c.PFSBandwidth, c.PFSLatency = 1e9, 0 // 4 × 25 MB share 1 GB/s: 0.1 s per checkpoint
	c.DiskBandwidth, c.MemBandwidth = 500e6, 5e9
	c.Bandwidth = 1e9
	return c
}

func run(t *testing.T, cfg sim.Config, w sim.Workload, pc Config) (sim.Result, *Protocol) {
	t.Helper()
	p, err := New(pc)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sim.New(cfg, w, p)
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run()
	if !res.Finished {
		t.Fatalf("run did not finish: %+v", res.Stats)
	}
	if !res.Outcome.OK {
		t.Fatalf("wrong answer: %+v", res.Outcome)
	}
	simtest.AuditMemory(t, "cpr", p)
	return res, p
}

// Without failures the only cost is the checkpoints: makespan = T + count × C,
// exactly, for each tier.
func TestFaultFreeOverheadIsCheckpointTimeTimesCount(t *testing.T) {
	cases := []struct {
		name  string
		level Level
		image int64
		c     sim.Time
	}{
		{"pfs", Level{PFS, 1}, 0, 100 * sim.Millisecond},  // 4 × 25 MB through 1 GB/s
		{"disk", Level{Disk, 1}, 0, 50 * sim.Millisecond}, // 25 MB at 500 MB/s
		{"memory", Level{Memory, 1}, 0, 5 * sim.Millisecond},
		{"buddy", Level{Buddy, 1}, 0, 25*sim.Millisecond + sim.Microsecond}, // 25 MB at 1 GB/s + latency
		{"pfs-image", Level{PFS, 1}, 15e6, 160 * sim.Millisecond},           // system-level: 4 × (25 + 15) MB
	}
	for _, c := range cases {
		for _, pol := range []Config{{Policy: PolicyFixed, Period: 200 * sim.Millisecond}, {Policy: PolicyIterations, Every: 3}} {
			t.Run(fmt.Sprintf("%s/%s", c.name, pol.Policy), func(t *testing.T) {
				pol.Levels, pol.Image = []Level{c.level}, c.image
				res, p := run(t, cluster(), job(t, 0), pol)
				n := res.Stats.Checkpoints
				want := sim.Second + sim.Time(n)*c.c
				if n == 0 || res.Makespan != want || res.Stats.CheckpointTime != sim.Time(n)*c.c {
					t.Fatalf("%d checkpoints, makespan %v, checkpoint time %v; want makespan %v", n, res.Makespan, res.Stats.CheckpointTime, want)
				}
				// bytes count every checkpoint written, also one the run's end
				// leaves uncommitted
				if per := 4 * (25e6 + c.image); res.Stats.CheckpointBytes%per != 0 || res.Stats.CheckpointBytes/per-int64(n) > 1 {
					t.Fatalf("%d checkpoint bytes for %d checkpoints, want %d per checkpoint", res.Stats.CheckpointBytes, n, per)
				}
				if est := p.EstimateCost(); est != c.c {
					t.Fatalf("estimated cost %v, want %v", est, c.c)
				}
			})
		}
	}
}

// MPI/FT's middleware cost per application message at each end lengthens
// every exchange step of two objects by 3d: the sender pays d before each
// of its two messages leaves, and the receiver d for the second one before
// its next step (it handled the first one while the second travelled).
// Without it the second message waited for the interface, x = 1 ns behind
// the first, so the difference is 3d − x. Latency 100 µs > d; no
// checkpoint is taken.
func TestMiddlewareCPU(t *testing.T) {
	const steps, d = 10, 10 * sim.Microsecond
	cfg := cluster()
	cfg.Nodes, cfg.Bandwidth, cfg.Latency = 2, 1e10, 100*sim.Microsecond
	makespan := func(mw sim.Time) sim.Time {
		w, err := synthetic.New(synthetic.Params{Objects: 2, Steps: steps, StepOps: 1e8, Exchange: 1, State: 1000}, 2)
		if err != nil {
			t.Fatal(err)
		}
		res, _ := run(t, cfg, w, Config{Policy: PolicyIterations, Every: 1000, MiddlewareCPU: mw})
		if res.Stats.Checkpoints != 0 {
			t.Fatalf("%d checkpoints", res.Stats.Checkpoints)
		}
		return res.Makespan
	}
	x := sim.TransferTime(1, cfg.Bandwidth)
	if got, want := makespan(d)-makespan(0), (3*d-x)*(steps-1); x != 1 || got != want {
		t.Fatalf("the middleware adds %v, want %v", got, want)
	}
	if _, err := New(Config{Policy: PolicyIterations, Every: 1, MiddlewareCPU: -1}); err == nil || !strings.Contains(err.Error(), "protocol.middleware_cpu") {
		t.Fatalf("a negative middleware cost: %v", err)
	}
}

// max_live defers a due checkpoint while the live state is larger, for at
// most max_wait. Under the iterations policy every object waits at the
// boundary meanwhile, so each checkpoint costs exactly its time plus the
// wait; with a bound the state meets, nothing waits.
func TestMaxLiveDefersCheckpoint(t *testing.T) {
	const c = 100 * sim.Millisecond // 4 × 25 MB through 1 GB/s
	cases := []struct {
		name    string
		maxLive int64
		wait    sim.Time
	}{
		{"live state above the bound: the whole wait", 50e6, 300 * sim.Millisecond},
		{"live state within the bound: no wait", 200e6, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := run(t, cluster(), job(t, 0), Config{Policy: PolicyIterations, Every: 3, Levels: []Level{{PFS, 1}},
				MaxLive: tc.maxLive, MaxWait: 300 * sim.Millisecond})
			n := res.Stats.Checkpoints
			if want := sim.Second + sim.Time(n)*(c+tc.wait); n == 0 || res.Makespan != want {
				t.Fatalf("%d checkpoints, makespan %v, want %v", n, res.Makespan, want)
			}
		})
	}
}

// Every 3 iterations of 10 with a neighbour exchange: checkpoints after
// iterations 3 and 6. (The synthetic job's last step needs no exchange and
// completes in the handler that completes step 9, so there is no state after
// step 9 alone to checkpoint.)
func TestIterationPolicyCount(t *testing.T) {
	res, _ := run(t, cluster(), job(t, 64), Config{Policy: PolicyIterations, Every: 3})
	if res.Stats.Checkpoints != 2 {
		t.Fatalf("%d checkpoints, want 2", res.Stats.Checkpoints)
	}
}

// On one node of one core a handler's end leaves the application quiet but
// not stuck (the next object waits for the core): watchStuck watched again
// at once, found the same moment, and recursed until the stack overflowed.
// The checkpoints are those of the same job on four nodes.
func TestIterationPolicyOneNode(t *testing.T) {
	cfg := cluster()
	cfg.Nodes, cfg.Spares = 1, 0
	res, _ := run(t, cfg, job(t, 64), Config{Policy: PolicyIterations, Every: 3})
	if res.Stats.Checkpoints != 2 {
		t.Fatalf("%d checkpoints, want 2", res.Stats.Checkpoints)
	}
	p := dp.DefaultParams()
	p.Requests, p.CellOps, p.ModeledScale, p.RandomA, p.RandomB, p.BlockRows = true, 1e6, 64, 60, 40, 4
	w, err := dp.New(p, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, _ = run(t, cfg, w, Config{Policy: PolicyIterations, Every: 1, Levels: []Level{{Disk, 1}}})
	if want := w.(dp.StagedWorkload).Stages() - 1; res.Stats.Checkpoints != want {
		t.Fatalf("lcs (request-reply): %d checkpoints, want %d", res.Stats.Checkpoints, want)
	}
}

// In a request-reply program an object held at a boundary cannot answer the
// objects behind it, so they never reach the boundary: the checkpoint is then
// taken when the application is stuck, once per boundary, and the run ends
// with the right answer, also after a rollback to such a checkpoint.
func TestIterationPolicyRequestReply(t *testing.T) {
	cases := []struct {
		name string
		p    func(*dp.Params)
	}{
		{"lcs", func(p *dp.Params) { p.RandomA, p.RandomB, p.BlockRows = 60, 40, 4 }},
		{"knapsack", func(p *dp.Params) { p.Problem, p.RandomItems, p.Capacity = "knapsack", 12, 400 }},
		{"tsp", func(p *dp.Params) { p.Problem, p.RandomCities = "tsp", 9 }},
	}
	for _, c := range cases {
		for _, every := range []int64{1, 2} {
			for _, failures := range []int{0, 1, 2} {
				t.Run(fmt.Sprintf("%s/every=%d/failures=%d", c.name, every, failures), func(t *testing.T) {
					p := dp.DefaultParams()
					p.Requests, p.CellOps, p.ModeledScale = true, 1e6, 64
					c.p(&p)
					w, err := dp.New(p, 4, nil)
					if err != nil {
						t.Fatal(err)
					}
					cfg := cluster()
					cfg.Spares = 2
					cfg.Failures = sim.ScriptedFailures
					cfg.Planned = []sim.ScriptedFailure{{Node: 1, Progress: 0.6, ByProgress: true}, {Node: 3, Progress: 0.3, ByProgress: true}}[:failures]
					res, pr := run(t, cfg, w, Config{Policy: PolicyIterations, Every: every, Levels: []Level{{Buddy, 1}}})
					stages := int64(w.(dp.StagedWorkload).Stages())
					if want := (stages - 1) / every; failures == 0 && res.Stats.Checkpoints != int(want) {
						t.Fatalf("%d checkpoints in %d stages, want %d", res.Stats.Checkpoints, stages, want)
					}
					if len(pr.RestoredFrom) != failures {
						t.Fatalf("restored from %v after %d failures", pr.RestoredFrom, failures)
					}
					for _, from := range pr.RestoredFrom {
						if from != "buddy" {
							t.Fatalf("restored from %v after %d checkpoints", pr.RestoredFrom, res.Stats.Checkpoints)
						}
					}
				})
			}
		}
	}
}

// Recovery from each tier, with the failure at various points, ends with the
// reference answer; the tier restored from is the one that survives.
func TestRecoveryPaths(t *testing.T) {
	fail := func(node sim.NodeID, at sim.Time) sim.ScriptedFailure { return sim.ScriptedFailure{Node: node, At: at} }
	cases := []struct {
		name   string
		levels []Level
		fails  []sim.ScriptedFailure
		spares int
		want   []string
	}{
		{"pfs", []Level{{PFS, 1}}, []sim.ScriptedFailure{fail(1, 650*sim.Millisecond)}, 5, []string{"pfs"}},
		{"disk copy of the failed node is gone", []Level{{Disk, 1}}, []sim.ScriptedFailure{fail(1, 650*sim.Millisecond)}, 5, []string{"scratch"}},
		{"multi-level falls back to pfs", []Level{{Disk, 1}, {PFS, 2}}, []sim.ScriptedFailure{fail(2, 700*sim.Millisecond)}, 5, []string{"pfs"}},
		{"buddy survives one failure", []Level{{Buddy, 1}}, []sim.ScriptedFailure{fail(1, 650*sim.Millisecond)}, 5, []string{"buddy"}},
		{"buddy lost with its partner", []Level{{Buddy, 1}}, []sim.ScriptedFailure{fail(1, 650*sim.Millisecond), fail(2, 650*sim.Millisecond)}, 5, []string{"scratch"}},
		{"failure during a checkpoint", []Level{{PFS, 1}}, []sim.ScriptedFailure{fail(3, 420*sim.Millisecond)}, 5, []string{"pfs"}},
		{"failure during recovery", []Level{{PFS, 1}}, []sim.ScriptedFailure{fail(1, 650*sim.Millisecond), fail(0, 720*sim.Millisecond)}, 5, []string{"pfs", "pfs"}},
		{"no spare: restart on fewer nodes", []Level{{PFS, 1}}, []sim.ScriptedFailure{fail(1, 650*sim.Millisecond)}, 0, []string{"pfs"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := cluster()
			cfg.Spares = c.spares
			cfg.SpareBoot = 50 * sim.Millisecond
			cfg.Failures, cfg.Planned = sim.ScriptedFailures, c.fails
			res, p := run(t, cfg, job(t, 1000), Config{Policy: PolicyFixed, Period: 200 * sim.Millisecond, Levels: c.levels})
			if fmt.Sprint(p.RestoredFrom) != fmt.Sprint(c.want) {
				t.Fatalf("restored from %v, want %v (failures %d)", p.RestoredFrom, c.want, res.Stats.Failures)
			}
		})
	}
}

// The levels' schedule counts the checkpoints of the current history: a job
// restarted from scratch counts from 1 again, as SCR and FTI restore their
// checkpoint id. Checkpoints 1 and 2 go to disk only; node 1's failure loses
// its disk copy and the job restarts from scratch; its next checkpoint is
// number 1 again, on disk only, and node 2's failure restarts it from scratch
// once more. Counting on, that checkpoint was number 3, also on the PFS, and
// the second failure rolled back to it (found by the random-machine search:
// every attempt after a restart from scratch began with a PFS checkpoint
// that took longer than the platform MTBF, and the run never finished).
func TestLevelsCountFromTheRestart(t *testing.T) {
	fail := func(node sim.NodeID, at sim.Time) sim.ScriptedFailure { return sim.ScriptedFailure{Node: node, At: at} }
	cfg := cluster()
	cfg.Failures, cfg.Planned = sim.ScriptedFailures, []sim.ScriptedFailure{fail(1, 600*sim.Millisecond), fail(2, 1000*sim.Millisecond)}
	_, p := run(t, cfg, job(t, 1000), Config{Policy: PolicyFixed, Period: 200 * sim.Millisecond, Levels: []Level{{Disk, 1}, {PFS, 3}}})
	if fmt.Sprint(p.RestoredFrom) != "[scratch scratch]" {
		t.Fatalf("restored from %v, want [scratch scratch]", p.RestoredFrom)
	}
}

// A rollback takes back the nodes the set lost once they are in the pool
// again: nodes 1 and 2 fail at once with no spare, and the rollback to the
// PFS checkpoint runs on 2 nodes; both are repaired 10 ms later, and at node
// 0's failure one replaces it and the other regrows the set to 3, over which
// every object is placed again and read back from the PFS.
func TestRollbackRegrowsFromThePool(t *testing.T) {
	fail := func(node sim.NodeID, at sim.Time) sim.ScriptedFailure { return sim.ScriptedFailure{Node: node, At: at} }
	cfg := cluster()
	cfg.Spares, cfg.Repair = 0, 10*sim.Millisecond
	cfg.Failures, cfg.Planned = sim.ScriptedFailures, []sim.ScriptedFailure{fail(1, 650*sim.Millisecond), fail(2, 650*sim.Millisecond), fail(0, 900*sim.Millisecond)}
	_, p := run(t, cfg, job(t, 1000), Config{Policy: PolicyFixed, Period: 200 * sim.Millisecond, Levels: []Level{{PFS, 1}}})
	if fmt.Sprint(p.RestoredFrom) != "[pfs pfs]" || len(p.RT.Slots()) != 3 {
		t.Fatalf("restored from %v, %d slots at the end; want [pfs pfs] and 3", p.RestoredFrom, len(p.RT.Slots()))
	}
	used := map[sim.NodeID]bool{}
	for id := range p.RT.NumObjects() {
		used[p.RT.NodeOf(sim.ObjID(id))] = true
	}
	for _, n := range p.RT.Slots() {
		if !used[n] {
			t.Fatalf("node %d of the slots %v holds no object", n, p.RT.Slots())
		}
	}
}

// With cluster.no_spare = "wait" and no spare, a rollback waits for the
// failed nodes' repair and restores onto the whole allocation. Waiting 50 ms
// for a repair that boots at once costs what a spare booting in 50 ms does
// (the same makespan, to the nanosecond), and beats rolling back on 3
// nodes at once. With every node failed, the job that would shrink to
// nothing waits for the first repaired nodes (here all four at once) and
// restores from the PFS as the one that waits does; without repairs it is
// unrecoverable.
func TestRollbackWaitsForRepair(t *testing.T) {
	pc := Config{Policy: PolicyFixed, Period: 200 * sim.Millisecond, Levels: []Level{{PFS, 1}}}
	config := func(spares int, wait bool, failed ...sim.NodeID) sim.Config {
		cfg := cluster()
		cfg.Spares, cfg.WaitForRepair = spares, wait
		if spares == 0 {
			cfg.Repair = 50 * sim.Millisecond
		} else {
			cfg.SpareBoot = 50 * sim.Millisecond
		}
		cfg.Failures = sim.ScriptedFailures
		for _, n := range failed {
			cfg.Planned = append(cfg.Planned, sim.ScriptedFailure{Node: n, At: 650 * sim.Millisecond})
		}
		return cfg
	}
	waited, p := run(t, config(0, true, 1), job(t, 1000), pc)
	spare, _ := run(t, config(1, false, 1), job(t, 1000), pc)
	shrunk, _ := run(t, config(0, false, 1), job(t, 1000), pc)
	if fmt.Sprint(p.RestoredFrom) != "[pfs]" || len(p.RT.Slots()) != 4 {
		t.Fatalf("restored from %v onto %d slots; want [pfs] and 4", p.RestoredFrom, len(p.RT.Slots()))
	}
	if waited.Makespan != spare.Makespan || !(waited.Makespan < shrunk.Makespan) {
		t.Fatalf("makespan %v waiting for the repair, %v with a spare, %v on the survivors", waited.Makespan, spare.Makespan, shrunk.Makespan)
	}

	for _, wait := range []bool{true, false} {
		all, p := run(t, config(0, wait, 0, 1, 2, 3), job(t, 1000), pc)
		if fmt.Sprint(p.RestoredFrom) != "[pfs]" || len(p.RT.Slots()) != 4 || all.Makespan != waited.Makespan || all.Stats.Unrecoverable != 0 {
			t.Fatalf("every node failed, wait %v: restored from %v onto %d slots, makespan %v, unrecoverable %d; want [pfs], 4, %v and 0",
				wait, p.RestoredFrom, len(p.RT.Slots()), all.Makespan, all.Stats.Unrecoverable, waited.Makespan)
		}
	}
	cp, err := New(pc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(0, false, 0, 1, 2, 3)
	cfg.Repair = 0
	rt, err := sim.New(cfg, job(t, 1000), cp)
	if err != nil {
		t.Fatal(err)
	}
	if res := rt.Run(); res.Finished || res.Stats.Unrecoverable != 1 {
		t.Fatalf("every node failed, no repair: finished %v, unrecoverable %d; want false, 1", res.Finished, res.Stats.Unrecoverable)
	}
}

// The LuNA-style checkpoint records messages in flight instead of draining,
// and Life restarts from it with the right answer, on fewer nodes too.
func TestNoDrainCheckpointOfLife(t *testing.T) {
	p := life.DefaultParams()
	p.Width, p.Height, p.Generations, p.ObjectsPerNode = 64, 64, 60, 2
	p.ModeledWidth, p.ModeledHeight, p.CellOps = 6400, 6400, 50
	w, err := life.New(p, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, spares := range []int{2, 0} {
		cfg := cluster()
		cfg.Spares = spares
		cfg.Bandwidth = 100e6 // slow network: messages are in flight at checkpoints
		cfg.Failures = sim.ScriptedFailures
		cfg.Planned = []sim.ScriptedFailure{{Node: 3, Progress: 0.7, ByProgress: true}}
		res, pr := run(t, cfg, w, Config{Policy: PolicyFixed, Period: 500 * sim.Millisecond, NoDrain: true, Levels: []Level{{PFS, 1}}})
		if res.Stats.Checkpoints == 0 || len(pr.RestoredFrom) != 1 || pr.RestoredFrom[0] != "pfs" {
			t.Fatalf("spares %d: checkpoints %d, restored from %v", spares, res.Stats.Checkpoints, pr.RestoredFrom)
		}
	}
}

// Young and Daly intervals are the formulas applied to the estimated cost.
func TestOptimalIntervals(t *testing.T) {
	for _, pol := range []string{PolicyYoung, PolicyDaly} {
		cfg := cluster()
		pc := Config{Policy: pol, PlatformMTBF: 10 * sim.Second, Levels: []Level{{PFS, 1}}}
		_, p := run(t, cfg, job(t, 0), pc)
		want := Young(0.1, 10)
		if pol == PolicyDaly {
			want = DalyHigher(0.1, 10)
		}
		if got := p.Interval().Seconds(); math.Abs(got-want) > 1e-9 {
			t.Fatalf("%s interval %g s, want %g s", pol, got, want)
		}
	}
}

// A restore reads back the bytes the checkpoint wrote, the process image
// included: 4 pieces of 25,002,000 B (state and two 1,000 B messages saved
// with it) plus the image share the file system's 1 GB/s.
func TestRestoreReadsWhatWasWritten(t *testing.T) {
	for _, c := range []struct {
		image int64
		want  sim.Time
	}{
		{0, 100008 * sim.Microsecond},   // 4 × 25,002,000 B at 1 GB/s
		{5e6, 120008 * sim.Microsecond}, // 4 × 30,002,000 B
	} {
		t.Run(fmt.Sprint(c.image), func(t *testing.T) {
			cfg := cluster()
			cfg.SpareBoot = 50 * sim.Millisecond
			cfg.Failures, cfg.Planned = sim.ScriptedFailures, []sim.ScriptedFailure{{Node: 1, At: 650 * sim.Millisecond}}
			_, p := run(t, cfg, job(t, 1000), Config{Policy: PolicyFixed, Period: 200 * sim.Millisecond, Levels: []Level{{PFS, 1}}, Image: c.image})
			if fmt.Sprint(p.RestoreTime) != fmt.Sprint([]sim.Time{c.want}) {
				t.Fatalf("restores took %v, want [%v]", p.RestoreTime, c.want)
			}
		})
	}
}

// A failure during a restore from the parallel file system restarts it, and
// the reads of the attempt it ended stop: the second attempt takes what a
// restore alone takes (100,008 µs); the survivors' reads of the first,
// a third done, going on beside it, made it take 135,014 µs.
func TestRestoreRestartedWithoutStaleReads(t *testing.T) {
	cfg := cluster()
	cfg.SpareBoot = 10 * sim.Millisecond
	cfg.Failures, cfg.Planned = sim.ScriptedFailures, []sim.ScriptedFailure{{Node: 1, At: 650 * sim.Millisecond}, {Node: 2, At: 700 * sim.Millisecond}}
	res, p := run(t, cfg, job(t, 1000), Config{Policy: PolicyFixed, Period: 200 * sim.Millisecond, Levels: []Level{{PFS, 1}}})
	if !res.Finished || !res.Outcome.OK {
		t.Fatalf("finished %v, outcome %+v", res.Finished, res.Outcome)
	}
	if fmt.Sprint(p.RestoredFrom) != "[pfs pfs]" || fmt.Sprint(p.RestoreTime) != fmt.Sprint([]sim.Time{100008 * sim.Microsecond}) {
		t.Fatalf("restored from %v in %v, want two attempts from the PFS, the second in 100.008ms", p.RestoredFrom, p.RestoreTime)
	}
}

// After a restore from the buddy tier, the pieces that lost a copy get it
// back before the application resumes, so a second failure before the next
// checkpoint (at 950 ms) of the failed node's buddy (2) or of the node whose
// buddy it was (0) is survived; without the rebuild it restarts the run.
// The rebuild costs the restore one more piece over the network (node 0's
// to the spare in node 1's place, 25,002,000 B at 1 GB/s and 1 µs) while the
// spare keeps the piece it read (a memory write); without spares the 4
// objects regroup on 3 nodes, then 2, and each new piece is written twice.
func TestRebuild(t *testing.T) {
	const piece = 25002000
	cases := []struct {
		name      string
		spares    int
		second    sim.NodeID
		noRebuild bool
		from      []string
		restore   sim.Time // the first restore
		rebuilt   int64    // by both rebuilds
	}{
		{"spare, then the buddy", 5, 2, false, []string{"buddy", "buddy"}, 50006 * sim.Microsecond, 4 * piece},
		{"spare, then the partner", 5, 0, false, []string{"buddy", "buddy"}, 50006 * sim.Microsecond, 4 * piece},
		{"spare, then another node", 5, 3, false, []string{"buddy", "buddy"}, 50006 * sim.Microsecond, 4 * piece},
		{"no rebuild, then the buddy", 5, 2, true, []string{"buddy", "scratch"}, 25003 * sim.Microsecond, 0},
		{"no rebuild, then the partner", 5, 0, true, []string{"buddy", "scratch"}, 25003 * sim.Microsecond, 0},
		{"no rebuild, then another node", 5, 3, true, []string{"buddy", "buddy"}, 25003 * sim.Microsecond, 0},
		{"fewer nodes, then one", 0, 2, false, []string{"buddy", "buddy"}, 75008 * sim.Microsecond, 10 * piece},
		{"fewer nodes, no rebuild", 0, 2, true, []string{"buddy", "scratch"}, 25003 * sim.Microsecond, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := cluster()
			cfg.Spares = c.spares
			cfg.SpareBoot = 50 * sim.Millisecond
			cfg.Failures, cfg.Planned = sim.ScriptedFailures, []sim.ScriptedFailure{{Node: 1, At: 650 * sim.Millisecond}, {Node: c.second, At: 800 * sim.Millisecond}}
			_, p := run(t, cfg, job(t, 1000), Config{Policy: PolicyFixed, Period: 200 * sim.Millisecond, Levels: []Level{{Buddy, 1}}, NoRebuild: c.noRebuild})
			if fmt.Sprint(p.RestoredFrom) != fmt.Sprint(c.from) {
				t.Fatalf("restored from %v, want %v", p.RestoredFrom, c.from)
			}
			if p.RestoreTime[0] != c.restore {
				t.Errorf("first restore took %v, want %v", p.RestoreTime[0], c.restore)
			}
			if p.RebuiltBytes != c.rebuilt {
				t.Errorf("rebuilds wrote %d B, want %d", p.RebuiltBytes, c.rebuilt)
			}
		})
	}
}

// A restore costs about a checkpoint, and a second one when it rebuilds the
// buddy tier it read from.
func TestRestoreCost(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want float64
	}{
		{"pfs", Config{Levels: []Level{{PFS, 1}}}, 3},
		{"buddy", Config{Levels: []Level{{Buddy, 1}}}, 6},
		{"buddy without rebuild", Config{Levels: []Level{{Buddy, 1}}, NoRebuild: true}, 3},
		{"buddy first, then pfs", Config{Levels: []Level{{Buddy, 1}, {PFS, 8}}}, 6},
		{"disk first", Config{Levels: []Level{{Disk, 1}, {Buddy, 4}}}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := (&Protocol{cfg: c.cfg}).RestoreCost(3); got != c.want {
				t.Fatalf("RestoreCost(3) = %v, want %v", got, c.want)
			}
		})
	}
}

// With a substep the checkpoints fall inside the steps, at the fixed
// period, where without one they wait for the ends of the 100 ms steps: 19
// checkpoints of about 25 ms (buddy tier) in the 1 s of work instead of 9,
// and the fault-free makespan is still T plus the checkpoints' time plus
// the 9 exchanges of 3 µs. A failure at 640 ms rolls back to the checkpoint cut at 575 ms
// (committed at 600 ms): the work lost is the 40 ms since, not the step
// begun at 500 ms, and the restored cut steps finish with the reference
// answer (run checks it).
func TestSubstepCheckpointsInsideSteps(t *testing.T) {
	for _, tc := range []struct {
		substep sim.Time
		n       int
	}{{0, 9}, {sim.Millisecond, 19}} {
		t.Run(fmt.Sprint(tc.substep), func(t *testing.T) {
			pc := Config{Policy: PolicyFixed, Period: 50 * sim.Millisecond, Levels: []Level{{Buddy, 1}}, Substep: tc.substep}
			cfg := cluster()
			ff, _ := run(t, cfg, job(t, 1000), pc)
			if n, ct := ff.Stats.Checkpoints, ff.Stats.CheckpointTime; n != tc.n || ff.Makespan != sim.Second+ct+9*3*sim.Microsecond || ct < sim.Time(n)*25*sim.Millisecond {
				t.Fatalf("%d checkpoints taking %v, makespan %v; want %d of at least 25 ms, and 1 s + their time + 27 µs", n, ct, ff.Makespan, tc.n)
			}
			cfg.SpareBoot = 50 * sim.Millisecond
			cfg.Failures, cfg.Planned = sim.ScriptedFailures, []sim.ScriptedFailure{{Node: 1, At: 640 * sim.Millisecond}}
			res, p := run(t, cfg, job(t, 1000), pc)
			if fmt.Sprint(p.RestoredFrom) != "[buddy]" {
				t.Fatalf("restored from %v, want buddy", p.RestoredFrom)
			}
			if tc.substep == 0 {
				return
			}
			// the failure costs the spare's boot, the restore (read and
			// rebuild) and the work since the application resumed from the
			// last checkpoint: after 8 periods of 50 ms and 8 checkpoints of
			// 25.003 ms, 4 of them begun 3 µs late for an exchange to drain,
			// at 600.036 ms
			lost := res.Makespan - ff.Makespan - cfg.SpareBoot - p.RestoreTime[0]
			if want := 640*sim.Millisecond - (8*(75*sim.Millisecond+3*sim.Microsecond) + 4*3*sim.Microsecond); lost != want {
				t.Fatalf("lost %v, want %v", lost, want)
			}
		})
	}
}

// A coupled stencil (sim.Coupler) stalls the other blocks while a failed one
// catches up; a coordinated rollback restores every block together, so under
// cpr the coupling changes nothing: the same makespans with failures, at
// buddy checkpoints cutting the 0.35 s steps.
func TestCoupledChangesNoRollback(t *testing.T) {
	stencilJob := func(coupled bool) sim.Workload {
		p := stencil.DefaultParams()
		p.NX, p.NY, p.NZ, p.Iterations, p.BlocksPerNode = 24, 24, 24, 12, 1
		p.ModeledNX, p.ModeledNY, p.ModeledNZ = 240, 240, 240
		p.PointOps, p.Reduce, p.Coupled = 100, true, coupled
		w, err := stencil.New(p, 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	cfg := cluster()
	cfg.SpareBoot = 50 * sim.Millisecond
	cfg.Failures, cfg.Planned = sim.ScriptedFailures, []sim.ScriptedFailure{{Node: 1, At: 1430 * sim.Millisecond}, {Node: 2, At: 2650 * sim.Millisecond}}
	pc := Config{Policy: PolicyFixed, Period: 100 * sim.Millisecond, Levels: []Level{{Buddy, 1}}, Substep: sim.Millisecond}
	plain, _ := run(t, cfg, stencilJob(false), pc)
	coupled, _ := run(t, cfg, stencilJob(true), pc)
	if plain.Stats.Failures != 2 || coupled.Makespan != plain.Makespan || coupled.Stats.Checkpoints != plain.Stats.Checkpoints {
		t.Errorf("coupled: %v, %d checkpoints; uncoupled: %v, %d checkpoints (%d failures)",
			coupled.Makespan, coupled.Stats.Checkpoints, plain.Makespan, plain.Stats.Checkpoints, plain.Stats.Failures)
	}
}
