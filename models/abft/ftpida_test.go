package abft

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"ftsim/models/none"
	"ftsim/sim"
	"ftsim/sim/simtest"
	"ftsim/workloads/life"
	"ftsim/workloads/pida"
)

const korfPath = "../../../shared/testdata/korf15.tsv"

// published optimal lengths (Korf 1985, shared/testdata/korf15.tsv).
var korfOptimal = map[int]int{12: 45, 55: 41, 79: 42, 94: 53}

func korfParams(t *testing.T, id, workers int) pida.Params {
	t.Helper()
	if _, err := os.Stat(korfPath); err != nil {
		t.Skipf("no Korf table: %v", err)
	}
	p := pida.DefaultParams()
	p.Korf, p.KorfFile, p.Workers = int64(id), korfPath, int64(workers)
	return p
}

// smallParams is a quick instance (a short random walk from the goal) for the
// exhaustive failure-subset test.
func smallParams(workers int) pida.Params {
	p := pida.DefaultParams()
	p.Puzzle = []int64{5, 1, 3, 7, 4, 2, 6, 11, 8, 9, 10, 15, 12, 13, 14, 0} // length 18, 1168 expansions
	p.Workers = int64(workers)
	p.Budget, p.ExpandOps = 20, 2e4 // few real expansions, milliseconds of modeled search
	return p
}

type runSpec struct {
	params  pida.Params
	nodes   int
	spares  int
	planned []sim.ScriptedFailure
	proto   sim.Protocol
	tune    func(*sim.Config) // changes to the cluster below, if set
}

func runPida(t *testing.T, s runSpec) (sim.Result, *pida.Workload) {
	t.Helper()
	w, err := pida.New(s.params, s.nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.DefaultConfig()
	cfg.Nodes, cfg.Spares = s.nodes, s.spares
	cfg.SpareBoot = 100 * sim.Microsecond
	cfg.DetectDelay = 50 * sim.Microsecond
	cfg.Limit = 100 * sim.Second
	if len(s.planned) > 0 {
		cfg.Failures = sim.ScriptedFailures
		cfg.Planned = s.planned
	}
	if s.tune != nil {
		s.tune(&cfg)
	}
	rt, err := sim.New(cfg, w, s.proto)
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run()
	if p, ok := s.proto.(*Protocol); ok {
		simtest.AuditMemory(t, "ftpida", p)
	}
	return res, w
}

func ftConfig(interval sim.Time) Config {
	c := DefaultConfig()
	c.Interval = interval
	return c
}

func checkClean(t *testing.T, name string, p *Protocol) {
	t.Helper()
	if p.Counters.DeltaMismatch != 0 || p.Counters.SurvivalMismatch != 0 {
		t.Errorf("%s: %d delta mismatches, %d survival decisions disagreeing with Survivable", name,
			p.Counters.DeltaMismatch, p.Counters.SurvivalMismatch)
	}
}

// Fault-free, FTPIDA* finds the published optimum on every instance and
// costs little: its extra messages and bytes are reported against the run
// without protocol.
func TestFTPIDAFaultFree(t *testing.T) {
	for _, id := range []int{12, 55, 79, 94} {
		for _, workers := range []int{4, 8} {
			name := fmt.Sprintf("korf%d/w%d", id, workers)
			base, _ := runPida(t, runSpec{params: korfParams(t, id, workers), nodes: workers, proto: &sim.BaseProtocol{}})
			p := New(ftConfig(sim.Millisecond))
			res, wl := runPida(t, runSpec{params: korfParams(t, id, workers), nodes: workers, proto: p})
			if !res.Finished || !res.Outcome.OK || res.Outcome.Answer != fmt.Sprint(korfOptimal[id]) || wl.Optimal() != korfOptimal[id] {
				t.Fatalf("%s: finished %v outcome %+v", name, res.Finished, res.Outcome)
			}
			checkClean(t, name, p)
			if res.Stats.ExtraMsgs == 0 || p.Counters.FRMs == 0 || p.Counters.WorkAcks == 0 {
				t.Fatalf("%s: no protocol traffic: %+v", name, p.Counters)
			}
			if res.Stats.CheckpointBytes != p.Counters.FRMBytes || res.Stats.Checkpoints == 0 || res.Stats.Checkpoints > p.Counters.FRMs {
				t.Fatalf("%s: backups reported as %d checkpoints of %d B, want the FRMs' %d B in at most %d",
					name, res.Stats.Checkpoints, res.Stats.CheckpointBytes, p.Counters.FRMBytes, p.Counters.FRMs)
			}
			over := float64(res.Makespan)/float64(base.Makespan) - 1
			t.Logf("%s: makespan %v vs %v (overhead %.2f%%), app msgs %d, extra msgs %d (%d B), FRMs %d (%d full, %d B)",
				name, res.Makespan, base.Makespan, 100*over, res.Stats.AppMsgs, res.Stats.ExtraMsgs, res.Stats.ExtraBytes,
				p.Counters.FRMs, p.Counters.FullFRMs, p.Counters.FRMBytes)
		}
	}
}

// Single, successive and simultaneous survivable failures, with and without
// spares: the published optimum, no restart, nothing unrecoverable.
func TestFTPIDAFailures(t *testing.T) {
	at := func(n sim.NodeID, x float64) sim.ScriptedFailure {
		return sim.ScriptedFailure{Node: n, Progress: x, ByProgress: true}
	}
	cases := []struct {
		name    string
		workers int
		spares  int
		planned []sim.ScriptedFailure
	}{
		{"single/spare", 4, 1, []sim.ScriptedFailure{at(2, 0.3)}},
		{"single/neighbour", 4, 0, []sim.ScriptedFailure{at(1, 0.5)}},
		{"coordinator/spare", 4, 1, []sim.ScriptedFailure{at(0, 0.4)}},
		{"coordinator/neighbour", 6, 0, []sim.ScriptedFailure{at(0, 0.6)}},
		{"successive/spares", 6, 2, []sim.ScriptedFailure{at(1, 0.2), at(4, 0.5), at(3, 0.8)}},
		{"successive/neighbours", 8, 0, []sim.ScriptedFailure{at(2, 0.2), at(5, 0.4), at(6, 0.7)}},
		{"simultaneous pair/spares", 8, 2, []sim.ScriptedFailure{at(3, 0.5), at(4, 0.5)}},
		{"simultaneous 2 of 3/neighbours", 6, 0, []sim.ScriptedFailure{at(0, 0.4), at(1, 0.4), at(3, 0.4), at(4, 0.4)}},
	}
	for _, id := range []int{12, 55, 79, 94} {
		for _, c := range cases {
			name := fmt.Sprintf("korf%d/%s", id, c.name)
			p := New(ftConfig(sim.Millisecond))
			res, _ := runPida(t, runSpec{params: korfParams(t, id, c.workers), nodes: c.workers, spares: c.spares, planned: c.planned, proto: p})
			if !res.Finished || !res.Outcome.OK || res.Outcome.Answer != fmt.Sprint(korfOptimal[id]) {
				t.Fatalf("%s: finished %v outcome %+v note %q", name, res.Finished, res.Outcome, res.Stats.UnrecoverableNote)
			}
			if res.Stats.Unrecoverable != 0 || res.Stats.Restarts != 0 {
				t.Fatalf("%s: unrecoverable %d (%s), restarts %d", name, res.Stats.Unrecoverable, res.Stats.UnrecoverableNote, res.Stats.Restarts)
			}
			if res.Stats.Failures > 0 && p.Counters.Restored == 0 {
				t.Fatalf("%s: %d failures, nothing restored", name, res.Stats.Failures)
			}
			checkClean(t, name, p)
			if strings.Contains(res.Outcome.Detail, "anomal") {
				t.Fatalf("%s: %s", name, res.Outcome.Detail)
			}
			t.Logf("%s: makespan %v, restored %d (%d on spares), resent %d, duplicates dropped %d",
				name, res.Makespan, p.Counters.Restored, p.Counters.OnSpare, p.Counters.Resent, p.Counters.Duplicates)
		}
	}
}

// Exhaustive: every subset of simultaneously failing nodes of rings of 4 to 8
// workers (one per node) is survived exactly when Survivable says so; the
// others are reported unrecoverable and still end with the right answer
// through the restart from scratch.
func TestFTPIDASurvivalMatchesLemma(t *testing.T) {
	maxN := 8
	if testing.Short() {
		maxN = 6
	}
	for N := 4; N <= maxN; N++ {
		free, _ := runPida(t, runSpec{params: smallParams(N), nodes: N, proto: &sim.BaseProtocol{}})
		strike := free.Makespan * 2 / 5
		maxSurvived := 0
		failed := make([]bool, N)
		for mask := 1; mask < 1<<N; mask++ {
			var planned []sim.ScriptedFailure
			k := 0
			for i := range failed {
				failed[i] = mask&(1<<i) != 0
				if failed[i] {
					planned = append(planned, sim.ScriptedFailure{Node: sim.NodeID(i), At: strike})
					k++
				}
			}
			p := New(ftConfig(strike / 10))
			res, _ := runPida(t, runSpec{params: smallParams(N), nodes: N, spares: N, planned: planned, proto: p})
			name := fmt.Sprintf("N=%d mask=%0*b", N, N, mask)
			if !res.Finished || !res.Outcome.OK {
				t.Fatalf("%s: finished %v outcome %+v note %q", name, res.Finished, res.Outcome, res.Stats.UnrecoverableNote)
			}
			if res.Stats.Failures != k {
				t.Fatalf("%s: %d failures struck, want %d (the run ended first?)", name, res.Stats.Failures, k)
			}
			want := Survivable(N, failed)
			if got := res.Stats.Unrecoverable == 0; got != want {
				t.Fatalf("%s: survived %v, Survivable %v (note %q)", name, got, want, res.Stats.UnrecoverableNote)
			}
			if !want && res.Stats.Restarts == 0 {
				t.Fatalf("%s: unrecoverable but not restarted", name)
			}
			if want {
				maxSurvived = max(maxSurvived, k)
				checkClean(t, name, p)
				if p.Counters.Restored != k || res.Stats.Restarts != 0 {
					t.Fatalf("%s: %d workers restored, %d restarts, want %d and 0", name, p.Counters.Restored, res.Stats.Restarts, k)
				}
				if strings.Contains(res.Outcome.Detail, "anomal") {
					t.Fatalf("%s: %s", name, res.Outcome.Detail)
				}
			}
		}
		if maxSurvived != MaxTolerated(N) {
			t.Errorf("N=%d: survived up to %d simultaneous failures, MaxTolerated %d", N, maxSurvived, MaxTolerated(N))
		}
	}
}

// Three ring-consecutive failures are reported, and the run still ends with
// the optimum by restarting from scratch.
// After the restart from scratch FTPIDA* takes over again: a later single
// failure is recovered from a neighbour's FRI, not by a second restart.
func TestFTPIDAThreeConsecutiveUnrecoverable(t *testing.T) {
	var planned []sim.ScriptedFailure
	for _, n := range []sim.NodeID{2, 3, 4} {
		planned = append(planned, sim.ScriptedFailure{Node: n, Progress: 0.5, ByProgress: true})
	}
	planned = append(planned, sim.ScriptedFailure{Node: 0, Progress: 0.7, ByProgress: true})
	p := New(ftConfig(sim.Millisecond))
	res, _ := runPida(t, runSpec{params: korfParams(t, 94, 6), nodes: 6, spares: 4, planned: planned, proto: p})
	if !res.Finished || !res.Outcome.OK || res.Outcome.Answer != fmt.Sprint(korfOptimal[94]) ||
		res.Stats.Unrecoverable != 1 || res.Stats.Restarts != 1 || res.Stats.UnrecoverableNote == "" {
		t.Fatalf("finished %v outcome %+v unrecoverable %d restarts %d", res.Finished, res.Outcome, res.Stats.Unrecoverable, res.Stats.Restarts)
	}
	// the fresh start ran on 6 nodes (the spare booting for the abandoned
	// recovery took its slot for the restart, as the others' spares did),
	// so node 0 held worker 0 only
	if res.Stats.Failures != 4 || p.Counters.Restored != 1 {
		t.Fatalf("%d failures, %d workers restored after the fresh start, want 4 and 1", res.Stats.Failures, p.Counters.Restored)
	}
	t.Log(res.Stats.UnrecoverableNote)
}

// A spare that fails while the workers of a failed node are being restored
// on it: those already installed are lost with it, the others are still on
// their way. Its failure reports only the former, yet both are recovered
// (on the second spare). The second failure strikes 49 to 52 µs after the
// first, in steps of 100 ns: around the restoring transfers' completions.
func TestFTPIDASpareFailsDuringRestore(t *testing.T) {
	ff, _ := runPida(t, runSpec{params: smallParams(6), nodes: 2, proto: New(ftConfig(sim.Millisecond))})
	fast := func(c *sim.Config) {
		c.SpareBoot, c.DetectDelay, c.Latency, c.Bandwidth = 0, 0, 50*sim.Microsecond, 1e9
	}
	for _, frac := range []float64{0.3, 0.5} {
		first := sim.Time(frac * float64(ff.Makespan))
		for d := 49 * sim.Microsecond; d < 52*sim.Microsecond; d += 100 * sim.Nanosecond {
			p := New(ftConfig(sim.Millisecond))
			planned := []sim.ScriptedFailure{{Node: 1, At: first}, {Node: 2, At: first + d}}
			res, _ := runPida(t, runSpec{params: smallParams(6), nodes: 2, spares: 2, planned: planned, proto: p, tune: fast})
			if !res.Finished || !res.Outcome.OK || res.Stats.Restarts != 0 || res.Stats.Failures != 2 {
				t.Fatalf("failures at %v and %v: finished %v, outcome %+v, %d restarts, %d failures",
					first, first+d, res.Finished, res.Outcome, res.Stats.Restarts, res.Stats.Failures)
			}
			checkClean(t, "spare fails during restore", p)
		}
	}
}

// Recovering one worker beats restarting everyone from scratch.
func TestFTPIDABeatsRestart(t *testing.T) {
	planned := []sim.ScriptedFailure{{Node: 2, Progress: 0.7, ByProgress: true}}
	p := New(ftConfig(sim.Millisecond))
	ft, _ := runPida(t, runSpec{params: korfParams(t, 55, 4), nodes: 4, spares: 1, planned: planned, proto: p})
	scratch, _ := runPida(t, runSpec{params: korfParams(t, 55, 4), nodes: 4, spares: 1, planned: planned, proto: none.New()})
	if !ft.Outcome.OK || !scratch.Outcome.OK || ft.Makespan >= scratch.Makespan {
		t.Fatalf("abft %v (ok %v), restart from scratch %v (ok %v)", ft.Makespan, ft.Outcome.OK, scratch.Makespan, scratch.Outcome.OK)
	}
	t.Logf("failure at 70%%: abft %v, restart from scratch %v", ft.Makespan, scratch.Makespan)
}

// Any other workload is a configuration error.
func TestFTPIDANeedsPida(t *testing.T) {
	lp := life.DefaultParams()
	lp.Width, lp.Height, lp.Generations = 16, 16, 2
	w, _ := life.New(lp, 4, nil)
	rt, _ := sim.New(sim.DefaultConfig(), w, New(DefaultConfig()))
	res := rt.Run()
	if res.Finished || res.Stats.UnrecoverableNote == "" {
		t.Fatalf("finished %v, note %q", res.Finished, res.Stats.UnrecoverableNote)
	}
}

// The worker state rebuilt from an FRI round-trips through pida's decoder.
func TestRebuildWorker(t *testing.T) {
	w, err := pida.New(smallParams(2), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := w.NewObject(1).(*pida.Worker)
	raw, _ := k.MarshalBinary()
	cut, err := stackOffset(raw)
	if err != nil {
		t.Fatal(err)
	}
	var st pida.Stack
	if err := st.UnmarshalBinary(raw[cut:]); err != nil {
		t.Fatal(err)
	}
	state, err := rebuildWorker(raw[:cut], &st)
	if err != nil {
		t.Fatal(err)
	}
	k2 := w.NewObject(1).(*pida.Worker)
	if err := k2.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	if _, err := stackOffset([]byte{2}); err == nil {
		t.Fatal("accepted an unknown version")
	}
}
