package pida

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"ftsim/models/none"
	"ftsim/sim"
)

// parRun runs the workload to completion and returns the result with the
// final workers.
func parRun(t *testing.T, p Params, nodes int, cfg sim.Config, proto sim.Protocol) (*Workload, sim.Result, []sim.Object) {
	t.Helper()
	w, err := New(p, nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Nodes = nodes
	rt, err := sim.New(cfg, w, proto)
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run()
	objs := make([]sim.Object, w.NumObjects())
	for i := range objs {
		objs[i] = rt.Object(sim.ObjID(i))
	}
	if !res.Finished {
		for _, o := range objs {
			if k, ok := o.(*Worker); ok {
				t.Log(k)
			}
		}
		t.Fatalf("run did not finish: %+v", res.Outcome)
	}
	return w, res, objs
}

// Several workers on one core of one node find the optimum. Before, two
// idle workers there handed a last untried move back and forth without end
// (each got the other's request before its own slice, at no cost in time):
// the run stalls, which the stall limit reports at once.
func TestParallelOneNode(t *testing.T) {
	loadKorf(t)
	for _, id := range []int{12, 94} {
		for _, workers := range []int{2, 3, 4} {
			for _, victim := range []string{"random", "round_robin"} {
				cfg := sim.DefaultConfig()
				cfg.StallEvents = 1_000_000
				_, res, _ := parRun(t, korfParams(id, workers, victim), 1, cfg, &sim.BaseProtocol{})
				if want := strconv.Itoa(korfByID(t, id).Optimal); !res.Outcome.OK || res.Outcome.Answer != want {
					t.Fatalf("korf %d, %d workers, %s: outcome %+v, want optimal length %s", id, workers, victim, res.Outcome, want)
				}
			}
		}
	}
}

func korfParams(id int, workers int, victim string) Params {
	p := DefaultParams()
	p.Korf, p.KorfFile = int64(id), korfPath
	p.Workers, p.Victim = int64(workers), victim
	return p
}

// The published optimal lengths come out for every worker count and victim
// policy; the iterations before the last expand exactly the reference's
// nodes (the same trees, partitioned); with several workers the work is
// spread.
func TestParallelKorfOptimal(t *testing.T) {
	loadKorf(t) // skip without the shared data
	makespan := map[int]sim.Time{}
	for _, id := range []int{12, 55, 79, 94} {
		in := korfByID(t, id)
		for _, workers := range []int{1, 2, 4, 7} {
			for _, victim := range []string{"random", "round_robin"} {
				name := fmt.Sprintf("korf%d/w%d/%s", id, workers, victim)
				t.Run(name, func(t *testing.T) {
					w, res, objs := parRun(t, korfParams(id, workers, victim), workers, sim.DefaultConfig(), &sim.BaseProtocol{})
					if !res.Outcome.OK || res.Outcome.Answer != strconv.Itoa(in.Optimal) {
						t.Fatalf("outcome %+v, want optimal length %d", res.Outcome, in.Optimal)
					}
					st := w.SearchStats(objs)
					total, before := w.ReferenceExpanded()
					if st.BeforeLast != before {
						t.Errorf("iterations before the last expanded %d nodes, sequential %d", st.BeforeLast, before)
					}
					if st.Iterations != len(w.Bounds()) || st.Anomalies != 0 {
						t.Errorf("%d iterations (reference %d), %d anomalies", st.Iterations, len(w.Bounds()), st.Anomalies)
					}
					// The last iteration stops where the goal is found, which
					// differs from the sequential order but not wildly.
					lastPar, lastSeq := st.Expanded-st.BeforeLast, total-before
					if lastPar > 8*lastSeq+uint64(workers)*uint64(DefaultParams().Budget) {
						t.Errorf("last iteration expanded %d nodes, sequential %d", lastPar, lastSeq)
					}
					busy := 0
					for _, e := range st.PerWorker {
						if e > 0 {
							busy++
						}
					}
					if workers > 1 && busy < 2 {
						t.Errorf("only %d of %d workers expanded nodes: %v", busy, workers, st.PerWorker)
					}
					if victim == "random" {
						makespan[workers] += res.Makespan
					}
					t.Logf("makespan %v, expanded %d (seq %d), per worker %v, %d requests, %d splits, %d events",
						res.Makespan, st.Expanded, total, st.PerWorker, st.Requests, st.Given, res.Events)
				})
			}
		}
	}
	// Parallel search has speedup anomalies either way on single instances
	// (the last iteration stops wherever a worker meets the goal), so the
	// speedup is asserted over the set.
	for _, workers := range []int{4, 7} {
		if s := float64(makespan[1]) / float64(makespan[workers]); s < 0.5*float64(workers) {
			t.Errorf("%d workers: speedup %.2f over the four instances", workers, s)
		} else {
			t.Logf("%d workers: speedup %.2f over the four instances", workers, s)
		}
	}
}

// Check accepts a run only if, besides the length and the final bound, its
// iterations before the last expanded the reference's nodes and no worker
// saw an impossible message: a subtree lost (or searched twice) before the
// last iteration changes no answer, since those iterations hold no solution.
func TestCheckCountsTheEarlierIterations(t *testing.T) {
	loadKorf(t)
	w, res, objs := parRun(t, korfParams(94, 4, "round_robin"), 4, sim.DefaultConfig(), &sim.BaseProtocol{})
	if !res.Outcome.OK {
		t.Fatalf("fault-free run: %+v", res.Outcome)
	}
	_, before := w.ReferenceExpanded()
	k := objs[1].(*Worker)
	for _, tc := range []struct {
		name         string
		change, undo func()
		detail       string
	}{
		{"a subtree lost", func() { k.iterStart-- }, func() { k.iterStart++ },
			fmt.Sprintf("expanded %d nodes before the last iteration, the sequential reference %d", before-1, before)},
		{"a subtree twice", func() { k.iterStart += 5 }, func() { k.iterStart -= 5 },
			fmt.Sprintf("expanded %d nodes before the last iteration, the sequential reference %d", before+5, before)},
		{"a stale message", func() { k.anomalies++ }, func() { k.anomalies-- }, "; 1 protocol anomalies (stale work, duplicate credit)"},
	} {
		tc.change()
		out := w.Check(objs)
		tc.undo()
		if out.OK || !strings.Contains(out.Detail, tc.detail) || out.Answer != "53" {
			t.Errorf("%s: %+v, want not OK with %q", tc.name, out, tc.detail)
		}
	}
	if out := w.Check(objs); !out.OK {
		t.Fatalf("restored: %+v", out)
	}
}

// The trace behind progress and the digest is the sequential reference.
func TestReferenceTraceMatchesSequential(t *testing.T) {
	boards := map[string]string{
		"goal":     "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15",
		"one move": "1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15",
		"korf94":   defaultPuzzle,
	}
	for _, in := range loadKorf(t) {
		if in.ID == 12 || in.ID == 55 || in.ID == 79 {
			boards[fmt.Sprint("korf", in.ID)] = in.Board.String()
		}
	}
	for name, s := range boards {
		b := mustBoard(t, s)
		bounds, exp, length := referenceTrace(b)
		wantLen, wantExp := SolveSequential(b)
		var sum uint64
		for _, e := range exp {
			sum += e
		}
		if length != wantLen || sum != wantExp || bounds[len(bounds)-1] != length || bounds[0] != Manhattan(b) {
			t.Errorf("%s: trace length %d, %d expanded, bounds %v; SolveSequential %d, %d", name, length, sum, bounds, wantLen, wantExp)
		}
	}
}

// Trivial instances: the start is the goal, or one move from it.
func TestParallelTrivial(t *testing.T) {
	for _, c := range []struct {
		board string
		want  string
	}{
		{"0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15", "0"},
		{"1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15", "1"},
		{"4 1 2 3 0 5 6 7 8 9 10 11 12 13 14 15", "1"},
		{"1 2 0 3 4 5 6 7 8 9 10 11 12 13 14 15", "2"},
	} {
		b := mustBoard(t, c.board)
		for _, workers := range []int{1, 3} {
			p := DefaultParams()
			p.Puzzle = make([]int64, Cells)
			for i, v := range b {
				p.Puzzle[i] = int64(v)
			}
			p.Workers = int64(workers)
			_, res, _ := parRun(t, p, workers, sim.DefaultConfig(), &sim.BaseProtocol{})
			if !res.Outcome.OK || res.Outcome.Answer != c.want {
				t.Errorf("%s on %d workers: %+v, want %s", c.board, workers, res.Outcome, c.want)
			}
		}
	}
}

// Same scenario and seed, same run; the seed drives the victims.
func TestParallelDeterministic(t *testing.T) {
	loadKorf(t)
	p := korfParams(12, 5, "random")
	_, a, _ := parRun(t, p, 5, sim.DefaultConfig(), &sim.BaseProtocol{})
	_, b, _ := parRun(t, p, 5, sim.DefaultConfig(), &sim.BaseProtocol{})
	if a.Makespan != b.Makespan || a.Events != b.Events || a.Stats != b.Stats || a.Outcome != b.Outcome {
		t.Fatalf("two runs differ: %v/%d vs %v/%d", a.Makespan, a.Events, b.Makespan, b.Events)
	}
	differ := false
	for seed := int64(2); seed < 5 && !differ; seed++ {
		p.Seed = seed
		_, c, _ := parRun(t, p, 5, sim.DefaultConfig(), &sim.BaseProtocol{})
		if !c.Outcome.OK {
			t.Fatalf("seed %d: %+v", seed, c.Outcome)
		}
		differ = c.Makespan != a.Makespan || c.Events != a.Events
	}
	if !differ {
		t.Error("the victim seed changes nothing")
	}
}

// reorder delays every message between workers by a random time, so that
// credit returns overtake work, bound broadcasts arrive after work of the
// new iteration, replies cross: termination detection must not care.
type reorder struct {
	sim.BaseProtocol
	rng uint64
	max sim.Time
}

func (r *reorder) OnSend(m *sim.Message) bool {
	if m.Src == m.Dst {
		return true
	}
	var x uint64
	r.rng, x = splitmixNext(r.rng)
	at := max(m.SentAt, r.RT.Now()) + sim.Time(x%uint64(r.max))
	r.RT.At(at, func() { r.RT.Transmit(m) })
	return false
}

func TestParallelUnderReordering(t *testing.T) {
	loadKorf(t)
	for _, c := range []struct{ id, nodes, perNode int }{{12, 6, 1}, {55, 6, 1}, {79, 4, 4}} {
		for seed := uint64(1); seed <= 3; seed++ {
			p := korfParams(c.id, 0, "random")
			p.ObjectsPerNode = int64(c.perNode)
			p.Budget = 500 // more slices, more messages, more chances to go wrong
			w, res, objs := parRun(t, p, c.nodes, sim.DefaultConfig(), &reorder{rng: seed, max: 300 * sim.Microsecond})
			st := w.SearchStats(objs)
			_, before := w.ReferenceExpanded()
			if !res.Outcome.OK || st.BeforeLast != before || st.Anomalies != 0 || len(st.PerWorker) != c.nodes*c.perNode {
				t.Errorf("%+v seed %d: %+v, before last %d (want %d), %d anomalies", c, seed, res.Outcome, st.BeforeLast, before, st.Anomalies)
			}
		}
	}
}

// aheadNotices makes every work request and "no work" answer claim the
// iteration after its sender's, with a larger bound: what a worker sends
// from a state a fault-tolerance protocol then rolls back, since such a
// protocol holds back only the messages that carry work or credit (FTPIDA*).
type aheadNotices struct{ sim.BaseProtocol }

func (*aheadNotices) OnSend(m *sim.Message) bool {
	if m.Tag == tagRequest || m.Tag == tagNoWork {
		d := decoder{data: m.Payload}
		iter, bound := d.uvarint("iteration"), d.uvarint("bound")
		head := binary.AppendUvarint(binary.AppendUvarint(nil, iter+1), bound+2)
		m.Payload = append(head, d.data...)
	}
	return true
}

// Only bound and solution broadcasts and work move a worker to a newer
// iteration. Before, any message did: under FTPIDA*, a "no work" answer the
// coordinator sent in an iteration it started just before it failed took
// the others there, and then its restored self, still collecting the last
// iteration's credit, which it dropped; nobody held the new iteration's
// root, and the workers asked each other for work without end.
func TestIterationOnlyFromBroadcastsAndWork(t *testing.T) {
	loadKorf(t)
	for _, id := range []int{12, 55} {
		w, res, objs := parRun(t, korfParams(id, 4, "random"), 4, sim.DefaultConfig(), &aheadNotices{})
		st := w.SearchStats(objs)
		_, before := w.ReferenceExpanded()
		if want := strconv.Itoa(korfByID(t, id).Optimal); !res.Outcome.OK || res.Outcome.Answer != want || st.BeforeLast != before || st.Anomalies != 0 {
			t.Errorf("korf %d: %+v (want length %s), before last %d (want %d), %d anomalies", id, res.Outcome, want, st.BeforeLast, before, st.Anomalies)
		}
	}
}

// progressProbe records the run's progress after every handler.
type progressProbe struct {
	sim.BaseProtocol
	last      int64
	decreased bool
	early     bool // the total was reached before the run finished
	at30      sim.Time
	seen30    bool
}

func (p *progressProbe) OnHandled(sim.ObjID) {
	done, total := p.RT.Progress()
	if done < p.last {
		p.decreased = true
	}
	p.last = done
	if done >= total && !p.RT.Finished() {
		p.early = true
	}
	if !p.seen30 && float64(done) >= 0.3*float64(total) {
		p.seen30, p.at30 = true, p.RT.Now()
	}
}

// Progress never decreases without failures, reaches the total only when
// every worker knows the answer, and 30% of it comes at a sensible fraction
// of the run (it counts expansions, which is what takes time).
func TestParallelProgress(t *testing.T) {
	loadKorf(t)
	for _, id := range []int{12, 55, 79, 94} {
		probe := &progressProbe{}
		_, res, _ := parRun(t, korfParams(id, 4, "random"), 4, sim.DefaultConfig(), probe)
		frac := float64(probe.at30) / float64(res.Makespan)
		if probe.decreased || probe.early || !probe.seen30 || frac < 0.1 || frac > 0.8 {
			t.Errorf("korf %d: decreased %v, early %v, 30%% reached at %.2f of the makespan", id, probe.decreased, probe.early, frac)
		}
		t.Logf("korf %d: 30%% progress at %.2f of the makespan", id, frac)
	}
}

// Under the restart-from-scratch baseline, failures scripted by progress
// strike, the search restarts and still ends with the optimal length.
func TestParallelRestartUnderFailures(t *testing.T) {
	loadKorf(t)
	cfg := sim.DefaultConfig()
	cfg.Spares = 2
	cfg.Failures = sim.ScriptedFailures
	cfg.Planned = []sim.ScriptedFailure{{Node: 1, Progress: 0.3, ByProgress: true}, {Node: 3, Progress: 0.6, ByProgress: true}}
	_, clean, _ := parRun(t, korfParams(55, 4, "random"), 4, sim.DefaultConfig(), &sim.BaseProtocol{})
	_, res, _ := parRun(t, korfParams(55, 4, "random"), 4, cfg, none.New())
	if !res.Outcome.OK || res.Outcome.Answer != "41" || res.Stats.Restarts < 1 || res.Stats.Failures != 2 {
		t.Fatalf("outcome %+v, restarts %d, failures %d", res.Outcome, res.Stats.Restarts, res.Stats.Failures)
	}
	if res.Makespan <= clean.Makespan {
		t.Errorf("restarts cost nothing: %v vs fault-free %v", res.Makespan, clean.Makespan)
	}
}

// midRunWorkers stops a run part-way and returns its workers, whose states
// then hold stacks, credit, outstanding requests and the coordinator's sum.
func midRunWorkers(t *testing.T) (*Workload, []*Worker) {
	t.Helper()
	loadKorf(t)
	w, res, _ := parRun(t, korfParams(12, 4, "round_robin"), 4, sim.DefaultConfig(), &sim.BaseProtocol{})
	cfg := sim.DefaultConfig()
	cfg.Nodes = 4
	cfg.Limit = res.Makespan * 2 / 3
	rt, err := sim.New(cfg, w, &sim.BaseProtocol{})
	if err != nil {
		t.Fatal(err)
	}
	if rt.Run().Finished {
		t.Fatal("the run finished before the limit")
	}
	ks := make([]*Worker, 4)
	for i := range ks {
		ks[i] = rt.Object(sim.ObjID(i)).(*Worker)
	}
	return w, ks
}

func TestWorkerStateRoundTrip(t *testing.T) {
	w, ks := midRunWorkers(t)
	withStack := false
	for i, k := range ks {
		data, err := k.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back := w.NewObject(sim.ObjID(i)).(*Worker)
		if err := back.UnmarshalBinary(data); err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
		again, _ := back.MarshalBinary()
		if !bytes.Equal(again, data) || back.String() != k.String() || back.Progress() != k.Progress() ||
			back.ModeledSize() != k.ModeledSize() {
			t.Fatalf("worker %d: round trip changed the state:\n%v\n%v", i, k, back)
		}
		if k.Stack().Len() > 0 {
			withStack = true
			// Both stacks continue the search identically.
			ra, rb := k.stack.Run(k.bound, 5000), back.stack.Run(back.bound, 5000)
			if ra != rb || k.stack.Expanded != back.stack.Expanded || k.stack.MinExceeded != back.stack.MinExceeded {
				t.Fatalf("worker %d: restored stack diverged", i)
			}
		}
		for n := 0; n < len(data); n++ {
			if err := back.UnmarshalBinary(data[:n]); err == nil {
				t.Fatalf("worker %d: state truncated to %d of %d bytes accepted", i, n, len(data))
			}
		}
		if err := back.UnmarshalBinary(append(data, 0)); err == nil {
			t.Fatalf("worker %d: trailing byte accepted", i)
		}
		bad := bytes.Clone(data)
		bad[0] = 99
		if err := back.UnmarshalBinary(bad); err == nil || !strings.Contains(err.Error(), "version") {
			t.Fatalf("worker %d: bad version: %v", i, err)
		}
	}
	if !withStack {
		t.Error("no worker held a stack mid-run: the test exercised nothing")
	}
}

// The coordinator's credit sum is exact: credit split any number of times
// and returned in any order reaches 1 with the last piece and not before,
// and a duplicated piece is caught.
func TestCreditSum(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := seed
		next := func(n int) int {
			var x uint64
			rng, x = splitmixNext(rng)
			return int(x % uint64(n))
		}
		held := []int{0} // exponents of the pieces, as donors halve them
		for i := 0; i < 300; i++ {
			j := next(len(held))
			held[j]++
			held = append(held, held[j])
		}
		k := &Worker{}
		for len(held) > 0 {
			j := next(len(held))
			e := held[j]
			held = append(held[:j], held[j+1:]...)
			if !k.addCredit(e) {
				t.Fatalf("seed %d: returning 2^-%d overflowed", seed, e)
			}
			if full := k.acc[0]&1 != 0; full != (len(held) == 0) {
				t.Fatalf("seed %d: sum is 1: %v with %d pieces out", seed, full, len(held))
			}
		}
		for i, x := range k.acc {
			if x != 0 && (i != 0 || x != 1) {
				t.Fatalf("seed %d: sum 1 left other bits: %x", seed, k.acc)
			}
		}
		if k.addCredit(5) {
			t.Errorf("seed %d: more than the whole credit was accepted", seed)
		}
		k2 := &Worker{}
		if !k2.addCredit(2) || !k2.addCredit(1) || k2.addCredit(1) || k2.acc[0] != 1 {
			t.Errorf("1/4 + 1/2 + 1/2 was accepted or not capped at 1: %x", k2.acc)
		}
	}
}

func TestParamsErrors(t *testing.T) {
	goal := func() []int64 {
		p := make([]int64, Cells)
		for i := range p {
			p[i] = int64(i)
		}
		return p
	}
	with := func(f func(p *Params)) Params {
		p := DefaultParams()
		f(&p)
		return p
	}
	tests := []struct {
		name    string
		p       Params
		wantErr string
	}{
		{"15 numbers", with(func(p *Params) { p.Puzzle = goal()[:15] }), "puzzle has 15 numbers, want 16"},
		{"17 numbers", with(func(p *Params) { p.Puzzle = append(goal(), 16) }), "puzzle has 17 numbers"},
		{"out of range", with(func(p *Params) { p.Puzzle = goal(); p.Puzzle[3] = 16 }), "position 4: tile 16 out of range"},
		{"negative", with(func(p *Params) { p.Puzzle = goal(); p.Puzzle[0] = -1 }), "tile -1 out of range"},
		{"duplicate", with(func(p *Params) { p.Puzzle = goal(); p.Puzzle[5] = 4 }), "appears twice"},
		{"unsolvable", with(func(p *Params) { p.Puzzle = goal(); p.Puzzle[14], p.Puzzle[15] = 15, 14 }), "cannot reach the goal"},
		{"both", with(func(p *Params) { p.Puzzle = goal(); p.Korf, p.KorfFile = 12, korfPath }), "not both"},
		{"korf without file", with(func(p *Params) { p.Korf = 12 }), "korf_file go together"},
		{"file without korf", with(func(p *Params) { p.KorfFile = korfPath }), "korf_file go together"},
		{"missing file", with(func(p *Params) { p.Korf, p.KorfFile = 12, "no/such/file.tsv" }), "workload.korf_file"},
		{"victim", with(func(p *Params) { p.Victim = "nearest" }), `workload.victim: "nearest"`},
		{"workers", with(func(p *Params) { p.Workers = -1 }), "workers must not be negative"},
		{"objects per node", with(func(p *Params) { p.ObjectsPerNode = 0 }), "objects_per_node must be at least 1"},
		{"budget", with(func(p *Params) { p.Budget = 0 }), "workload.budget"},
		{"ops", with(func(p *Params) { p.ExpandOps = -1 }), "must not be negative"},
	}
	_, statErr := os.Stat(korfPath)
	haveKorf := statErr == nil
	if haveKorf {
		tests = append(tests, struct {
			name    string
			p       Params
			wantErr string
		}{"unknown id", with(func(p *Params) { p.Korf, p.KorfFile = 1000, korfPath }), "instance 1000 is not in"})
	}
	for _, tc := range tests {
		_, err := New(tc.p, 4, nil)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.wantErr)
		}
	}
	// The defaults are a valid instance: Korf 94, and objects_per_node
	// workers per node.
	w, err := New(DefaultParams(), 3, nil)
	if err != nil || w.Optimal() != 53 || w.Workers() != 3 {
		t.Fatalf("defaults: %v, optimal %d, %d workers", err, w.Optimal(), w.Workers())
	}
	// The resolver maps the file name.
	p := with(func(p *Params) { p.Korf, p.KorfFile = 94, "korf15.tsv" })
	if haveKorf {
		w, err := New(p, 2, func(name string) string { return "../../../shared/testdata/" + name })
		if err != nil || w.Optimal() != 53 || w.Board() != mustBoard(t, defaultPuzzle) {
			t.Fatalf("korf 94 through the resolver: %v", err)
		}
	}
}
