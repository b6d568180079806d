package experiment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"ftsim/scenarios"
)

func smallScenario(t *testing.T, overrides ...string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Parse("small.toml", []byte(small), overrides)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runEmbedded runs the sweep of embedded scenario name with overrides, one
// replication per point, checking that every run finished with the
// reference answer, and returns the runs by point.
func runEmbedded(t *testing.T, name string, overrides ...string) map[string]Record {
	t.Helper()
	s, _, err := scenarios.LoadEmbedded(name, overrides)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := NewSweep(s, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Record{}
	err = sw.Run(context.Background(), RunOptions{Workers: 2}, func(r SweepRecord) error {
		if !r.Finished || !r.DigestOK {
			t.Errorf("%s: finished %v, answer ok %v (%s)", r.Point, r.Finished, r.DigestOK, r.Note)
		}
		got[r.Point] = r.Record
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestNewSweep(t *testing.T) {
	base := smallScenario(t)
	// protocol.period comes first but must survive protocol.kind=cpr, which
	// drops the protocol keys set before it
	sw, err := NewSweep(base, []Vary{{"protocol.period", []string{"1s", "2s"}}, {"protocol.kind", []string{"cpr"}},
		{"cluster.nodes", []string{"2", "4"}}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if sw.Runs() != 12 || len(sw.Points) != 4 {
		t.Fatalf("%d runs, %d points", sw.Runs(), len(sw.Points))
	}
	for i, p := range sw.Points {
		s := p.Scenario
		if p.Index != i || s.Protocol.Kind() != "cpr" || !s.Protocol.Has("period") {
			t.Errorf("point %d %s: kind %s, period set %v", i, p.ID, s.Protocol.Kind(), s.Protocol.Has("period"))
		}
		if want := []int{2, 4}[i%2]; s.Cluster.Nodes != want {
			t.Errorf("point %s: %d nodes, want %d", p.ID, s.Cluster.Nodes, want)
		}
	}
	if base.Protocol.Kind() != "none" || base.Cluster.Nodes != 4 {
		t.Fatal("NewSweep changed the base scenario")
	}
	bad := []struct {
		varies []Vary
		reps   int
		want   string
	}{
		{[]Vary{{"cluster.nodez", []string{"1"}}}, 1, `--vary cluster.nodez=1: unknown key "cluster.nodez" (did you mean "nodes"?)`},
		{[]Vary{{"cluster.nodes", []string{"2", "-1"}}}, 1, "--vary cluster.nodes=-1: must be ≥ 1, got -1"},
		{[]Vary{{"cluster.nodes", []string{"0"}}}, 1, "--vary cluster.nodes=0: must be ≥ 1, got 0"},
		{[]Vary{{"cluster.nodes", []string{"many"}}}, 1, "--vary cluster.nodes=many: want an integer, got a string"},
		{[]Vary{{"cluster.nodes", []string{"1"}}, {"cluster.nodes", []string{"2"}}}, 1, "varied twice"},
		{[]Vary{{"cluster.nodes|seed", []string{"1"}}, {"cluster.nodes", []string{"2"}}}, 1, "varied twice"},
		{nil, 0, "reps"},
	}
	for _, c := range bad {
		if _, err := NewSweep(base, c.varies, c.reps); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to mention %q", c.varies, err, c.want)
		}
	}
}

// A sweep lists its runs up front, so the library refuses a replication
// count the scenario would refuse, however it is given.
func TestNewSweepReps(t *testing.T) {
	for _, c := range []struct {
		reps int
		ok   bool
	}{{1, true}, {scenarios.MaxReps, true}, {0, false}, {-3, false}, {scenarios.MaxReps + 1, false}, {1 << 40, false}} {
		sw, err := NewSweep(smallScenario(t), nil, c.reps)
		switch {
		case c.ok && (err != nil || sw.Reps != c.reps):
			t.Errorf("reps %d: %v", c.reps, err)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), "reps must be between 1 and 1048576")):
			t.Errorf("reps %d: error %v", c.reps, err)
		}
	}
}

// Errors about a scenario's [sweep] vary entries name the entry, sweep.vary[i],
// with its file and line, whether the entry is malformed or one of its values
// is wrong for the scenario (found building the sweep or preparing a point),
// rather than a "--set" or "--vary" the user never wrote. A value given on
// the command line is reported as the --vary flag's, not as a "--set".
func TestSweepVaryErrorsLocated(t *testing.T) {
	line := strings.Count(small, "\n") + 2 // small, then [sweep], then vary
	at := func(i int, msg string) string { return fmt.Sprintf("v.toml:%d: sweep.vary[%d]: %s", line, i, msg) }
	for _, c := range []struct {
		vary string
		cli  []Vary
		want string
	}{
		{`"cluster.nodes=2,2"`, nil, at(0, `"cluster.nodes=2,2": value "2" given twice`)},
		{`"cluster.nodes=2,"`, nil, at(0, `"cluster.nodes=2,": empty value`)},
		{`"cluster.nodes=2", "seed=1", "cluster.nodes=4"`, nil, at(2, "cluster.nodes is varied twice")},
		{`"seed=1,2", "cluster.nodez=2"`, nil, at(1, `cluster.nodez=2: unknown key "cluster.nodez"`)},
		{`"cluster.nodes=2,-1"`, nil, at(0, "cluster.nodes=-1: must be ≥ 1, got -1")},
		{`"protocol.kind=none,magic"`, nil, at(0, `protocol.kind=magic: unknown protocol "magic"`)},
		{`"protocol.kind=cpr", "protocol.period=1s,soon"`, nil, at(1, `protocol.period=soon: invalid duration "soon"`)},
		// found when the point is prepared, not when the sweep is built
		{`"seed=1", "workload.width=32,0"`, nil, at(1, "workload.width=0: workload.width and height must be")},
		{`"cluster.nodes=2"`, []Vary{{"cluster.nodes", []string{"-1"}}}, "--vary cluster.nodes=-1: must be ≥ 1, got -1"},
		// each linked key is located at its entry
		{`"seed=1", "cluster.nodes|workload.width=2|32,4|0"`, nil, at(1, "workload.width=0: workload.width and height must be")},
		{`"seed|cluster.nodes=1|2,2|-1"`, nil, at(0, "cluster.nodes=-1: must be ≥ 1, got -1")},
		{`"seed|cluster.nodes=1|2", "cluster.nodes=4"`, nil, at(1, "cluster.nodes is varied twice")},
		{`"seed|cluster.nodes=1|2"`, []Vary{{"cluster.nodes", []string{"4"}}}, "--vary cluster.nodes: key varied twice"},
	} {
		t.Run(c.vary, func(t *testing.T) {
			s, err := scenarios.Parse("v.toml", []byte(small+"[sweep]\nvary = ["+c.vary+"]\n"), []string{"reps=1"})
			if err != nil {
				t.Fatal(err)
			}
			sw, err := NewSweep(s, c.cli, 1)
			if err == nil {
				err = sw.Run(context.Background(), RunOptions{}, func(SweepRecord) error { return nil })
			}
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v\nwant it to start with %s", err, c.want)
			}
		})
	}
}

// Every run belongs to exactly one shard, whatever the number of shards.
func TestShardsPartitionRuns(t *testing.T) {
	sw, err := NewSweep(smallScenario(t), []Vary{{"cluster.nodes", []string{"2", "3", "4"}}}, 7)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 6; n++ {
		seen := make([]int, sw.Runs())
		for i := 0; i < n; i++ {
			for _, k := range sw.Pending(Shard{i, n}, nil) {
				seen[k]++
			}
		}
		for k, c := range seen {
			if c != 1 {
				t.Fatalf("%d shards: run %d in %d shards", n, k, c)
			}
		}
	}
	if got := sw.Pending(Shard{}, nil); len(got) != sw.Runs() {
		t.Fatalf("the zero shard has %d runs, want all %d", len(got), sw.Runs())
	}
	skip := func(k RunKey) bool { return k.Rep%2 == 0 }
	if got := sw.Pending(Shard{}, skip); len(got) != 9 {
		t.Fatalf("skipping even reps leaves %d runs, want 9", len(got))
	}
	for _, in := range []string{"0/1", "3/4", " 1 / 2 "} {
		if _, err := ParseShard(in); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
	for _, in := range []string{"4/4", "-1/2", "1", "a/b", "0/0"} {
		if _, err := ParseShard(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// FuzzParseShard checks that ParseShard never panics and that an accepted
// shard is in range, reads back from the text meta.json stores, and owns
// exactly one run in each block of N consecutive runs.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "3/16", " 1 / 2 ", "+1/2", "4/4", "-1/2", "0/0", "1/9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.N < 1 || sh.I < 0 || sh.I >= sh.N {
			t.Fatalf("ParseShard(%q) accepted %+v", s, sh)
		}
		text, _ := sh.MarshalText()
		var again Shard
		if err := again.UnmarshalText(text); err != nil || again != sh {
			t.Fatalf("ParseShard(%q) = %+v reads back from %q as %+v, %v", s, sh, text, again, err)
		}
		if !sh.Has(sh.I) {
			t.Fatalf("shard %v does not own run %d", sh, sh.I)
		}
		if sh.N <= 64 {
			owned := 0
			for k := range sh.N {
				if sh.Has(k) {
					owned++
				}
			}
			if owned != 1 {
				t.Fatalf("shard %v owns %d of the first %d runs, want 1", sh, owned, sh.N)
			}
		}
	})
}

// collect runs a sweep and returns its records as JSON lines.
func collect(t *testing.T, sw *Sweep, o RunOptions) ([]SweepRecord, []byte) {
	t.Helper()
	var recs []SweepRecord
	var out bytes.Buffer
	err := sw.Run(context.Background(), o, func(r SweepRecord) error {
		recs = append(recs, r)
		out.Write(r.JSON())
		out.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, out.Bytes()
}

// A panic in a worker outside a simulation (here in the Prepared hook; in
// a workload's construction, which computes its reference, alike) is the
// sweep's error, naming it a bug, not the end of the process.
func TestSweepJobPanicIsAnError(t *testing.T) {
	sw, err := NewSweep(smallScenario(t, "reps=1"), []Vary{{"protocol.kind", []string{"none", "cpr"}}, {"cluster.nodes", []string{"2", "4"}}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	o := RunOptions{Workers: 2, Prepared: func(sp *SweepPoint, _ *Point) error {
		if sp.ID == sw.Points[len(sw.Points)-1].ID {
			panic("broken point")
		}
		return nil
	}}
	err = sw.Run(context.Background(), o, func(SweepRecord) error { return nil })
	for _, want := range []string{"internal error, a bug in ftsim", "broken point", "experiment.TestSweepJobPanicIsAnError"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want one containing %q", err, want)
		}
	}
}

// Records come in run order whatever the number of workers, each point is
// prepared once, and the shards together give the whole sweep.
func TestSweepRun(t *testing.T) {
	sw, err := NewSweep(smallScenario(t, "reps=1"), []Vary{{"protocol.kind", []string{"none", "cpr"}}, {"cluster.nodes", []string{"2", "4"}}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	prepared := map[string]int{}
	o := RunOptions{Workers: 1, Prepared: func(sp *SweepPoint, p *Point) error {
		mu.Lock()
		defer mu.Unlock()
		prepared[sp.ID]++
		if p.Scenario != sp.Scenario {
			t.Errorf("point %s prepared from another scenario", sp.ID)
		}
		return nil
	}}
	recs, one := collect(t, sw, o)
	if len(recs) != 16 || len(prepared) != 4 {
		t.Fatalf("%d records, %d points prepared", len(recs), len(prepared))
	}
	for id, n := range prepared {
		if n != 1 {
			t.Errorf("point %s prepared %d times", id, n)
		}
	}
	for k, r := range recs {
		p := sw.Points[k/4]
		if r.Point != p.ID || r.Rep != k%4 || r.Protocol != p.Scenario.Protocol.Kind() || r.Nodes != p.Scenario.Cluster.Nodes || !r.DigestOK {
			t.Fatalf("record %d: %s rep %d %s %d nodes, want point %s", k, r.Point, r.Rep, r.Protocol, r.Nodes, p.ID)
		}
		if r.Seed != recs[k%4].Seed {
			t.Fatalf("record %d: seed %d, replication %d of the first point has %d", k, r.Seed, k%4, recs[k%4].Seed)
		}
	}
	_, many := collect(t, sw, RunOptions{Workers: 3})
	if !bytes.Equal(one, many) {
		t.Fatal("1 and 3 workers give different output")
	}
	var union []SweepRecord
	for i := 0; i < 3; i++ {
		part, _ := collect(t, sw, RunOptions{Shard: Shard{i, 3}})
		union = append(union, part...)
	}
	sortRuns(union, pointOrder(sw.Varies))
	var u bytes.Buffer
	for _, r := range union {
		u.Write(r.JSON())
		u.WriteByte('\n')
	}
	if !bytes.Equal(one, u.Bytes()) {
		t.Fatal("the union of 3 shards differs from the unsharded sweep")
	}
}

func TestSweepRunStops(t *testing.T) {
	// A bad protocol is reported before any run.
	_, err := NewSweep(smallScenario(t), []Vary{{"protocol.kind", []string{"none", "magic"}}}, 2)
	if err == nil || !strings.Contains(err.Error(), "protocol.kind=magic") {
		t.Fatalf("a point whose protocol cannot be built: error %v", err)
	}
	sw, err := NewSweep(smallScenario(t), nil, 6)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	err = sw.Run(context.Background(), RunOptions{}, func(SweepRecord) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Fatalf("emit error: %v after %d records", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sw.Run(ctx, RunOptions{}, func(SweepRecord) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// Each group's run without protocol comes before the group's first job. A
// point without duration_limit has its fault-free run queued one point ahead
// of its failure runs; a point with one, after its first failure run.
func TestSweepJobOrder(t *testing.T) {
	base := func(p int) sweepJob { return sweepJob{kind: baseJob, point: p} }
	ff := func(p int) sweepJob { return sweepJob{kind: faultFreeJob, point: p} }
	run := func(slot int) sweepJob { return sweepJob{kind: runJob, slot: slot} }
	proto := func(label string) Setting { return Setting{Key: ProtocolKey, Value: label} }
	nodes := func(n string) Setting { return Setting{Key: "cluster.nodes", Value: n} }
	cases := []struct {
		name   string
		limits []scenarios.Duration // duration_limit of each point
		sets   [][]Setting          // settings of each point (nil: one group)
		todo   []int                // pending run indices
		order  []int
		want   []sweepJob
	}{
		{"all", []scenarios.Duration{0, 0, 0}, nil, []int{0, 1, 2, 3, 4, 5}, []int{0, 1, 2},
			[]sweepJob{base(0), ff(0), ff(1), run(0), run(1), ff(2), run(2), run(3), run(4), run(5)}},
		{"resumed", []scenarios.Duration{0, 0, 0}, nil, []int{3, 5}, []int{1, 2},
			[]sweepJob{base(1), ff(1), ff(2), run(0), run(1)}},
		{"one point", []scenarios.Duration{0, 0, 0}, nil, []int{4}, []int{2},
			[]sweepJob{base(2), ff(2), run(0)}},
		{"duration limits", []scenarios.Duration{scenarios.Hour, scenarios.Hour, scenarios.Hour}, nil, []int{0, 1, 2, 3, 4, 5}, []int{0, 1, 2},
			[]sweepJob{base(0), run(0), ff(0), run(1), run(2), ff(1), run(3), run(4), ff(2), run(5)}},
		{"mixed", []scenarios.Duration{0, scenarios.Hour, 0}, nil, []int{0, 1, 2, 3, 4, 5}, []int{0, 1, 2},
			[]sweepJob{base(0), ff(0), run(0), run(1), run(2), ff(1), run(3), ff(2), run(4), run(5)}},
		{"two groups", []scenarios.Duration{0, 0, 0},
			[][]Setting{{nodes("8"), proto("a")}, {nodes("8"), proto("b")}, {nodes("16"), proto("a")}},
			[]int{0, 1, 2, 3, 4, 5}, []int{0, 1, 2},
			[]sweepJob{base(0), ff(0), ff(1), run(0), run(1), base(2), ff(2), run(2), run(3), run(4), run(5)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sw := &Sweep{Reps: 2}
			for i, lim := range tc.limits {
				sp := SweepPoint{Index: i, Scenario: &scenarios.Scenario{DurationLimit: lim}}
				if tc.sets != nil {
					sp.Settings = tc.sets[i]
				}
				sw.Points = append(sw.Points, sp)
			}
			if got := sweepJobs(sw, tc.todo, tc.order); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// A sweep's records carry the fault-free time and overhead of a point
// prepared on its own, whether its runs waited for the fault-free run (no
// duration_limit) or ran beside it.
func TestSweepFaultFreeFigures(t *testing.T) {
	for _, limit := range []string{"", `duration_limit="1h"`} {
		t.Run("limit="+limit, func(t *testing.T) {
			var over []string
			if limit != "" {
				over = append(over, limit)
			}
			base := smallScenario(t, over...)
			sw, err := NewSweep(base, []Vary{{"protocol.kind", []string{"cpr", "none"}}}, 2)
			if err != nil {
				t.Fatal(err)
			}
			recs, _ := collect(t, sw, RunOptions{Workers: 2})
			for _, r := range recs {
				p, err := Prepare(sw.Points[pointIndex(sw, r.Point)].Scenario)
				if err != nil {
					t.Fatal(err)
				}
				if r.FaultFreeS != p.FaultFree.Seconds() || r.BaselineS != p.Baseline.Seconds() {
					t.Errorf("%s rep %d: fault-free %v s, baseline %v s; prepared alone %v s, %v s", r.Point, r.Rep, r.FaultFreeS, r.BaselineS, p.FaultFree.Seconds(), p.Baseline.Seconds())
				}
				if r.Protocol == "cpr" && !(r.Overhead > 0) {
					t.Errorf("%s: overhead %v, want > 0", r.Point, r.Overhead)
				}
			}
		})
	}
}

// The progress bar counts every simulation of a sweep: its runs, a
// fault-free run per point with a protocol and a run without protocol per
// group of points that differ only in their protocol.
func TestSweepSimulations(t *testing.T) {
	sw, err := NewSweep(smallScenario(t), []Vary{{"protocol.kind", []string{"none", "cpr"}}, {"cluster.nodes", []string{"2", "4"}}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		todo, order []int
		groups      int
		want        int
	}{
		{"all", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, []int{0, 1, 2, 3}, 2, 12 + 2 + 2},
		{"one group left", []int{7, 8}, []int{2}, 1, 2 + 1 + 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bases := newBaseCache(sw, tc.todo)
			if bases.n != tc.groups {
				t.Errorf("%d groups, want %d", bases.n, tc.groups)
			}
			if got := simulations(sw, tc.todo, tc.order, bases.n); got != tc.want {
				t.Errorf("%d simulations, want %d", got, tc.want)
			}
		})
	}
}

// With a duration_limit the run without protocol is a job that no other job
// waits for; when it fails (here the limit is too short for the work), the
// sweep still stops with its error and writes no record. (That records carry
// the baseline once it has run is TestSweepFaultFreeFigures' check.) The
// limit stops cpr's fault-free run too: on one worker the baseline runs
// first, so its error is the one reported; on two, the two jobs run at once
// and the sweep reports whichever error comes first.
func TestSweepBaselineErrorWithDurationLimit(t *testing.T) {
	const (
		baseErr = "the fault-free run without protocol did not reproduce the reference"
		cprErr  = "the fault-free run with protocol cpr did not reproduce the reference"
	)
	for _, c := range []struct {
		workers int
		want    []string // the errors the sweep may stop with
	}{
		{1, []string{baseErr}},
		{2, []string{baseErr, cprErr}},
	} {
		t.Run(fmt.Sprint(c.workers, " workers"), func(t *testing.T) {
			sw, err := NewSweep(smallScenario(t, `duration_limit="1s"`), []Vary{{"protocol.kind", []string{"cpr", "none"}}}, 2)
			if err != nil {
				t.Fatal(err)
			}
			var finished, emitted int
			o := RunOptions{Workers: c.workers, Finished: func(SweepRecord) error { finished++; return nil }}
			err = sw.Run(context.Background(), o, func(SweepRecord) error { emitted++; return nil })
			if err == nil || !slices.ContainsFunc(c.want, func(w string) bool { return strings.Contains(err.Error(), w) }) {
				t.Fatalf("error %v, want one of %q", err, c.want)
			}
			if finished != 0 || emitted != 0 {
				t.Errorf("%d records finished, %d emitted, want none", finished, emitted)
			}
		})
	}
}

func pointIndex(sw *Sweep, id string) int {
	for i, p := range sw.Points {
		if p.ID == id {
			return i
		}
	}
	return -1
}

// A bar cut short by an interruption ends its line, so that the error after
// it starts a line of its own; a finished bar, or none, adds nothing.
func TestProgressStop(t *testing.T) {
	for _, c := range []struct {
		name      string
		tty       bool
		done, tot int
		want      bool // a newline
	}{
		{"interrupted bar", true, 3, 10, true},
		{"finished bar", true, 10, 10, false},
		{"plain lines", false, 3, 10, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			p := NewProgress(&b, c.tot)
			p.tty, p.interval = c.tty, 0
			p.Add(c.done)
			n := b.Len()
			p.Stop()
			if got := b.Len() > n && strings.HasSuffix(b.String(), "\n"); got != c.want {
				t.Fatalf("newline on Stop %v, want %v: %q", got, c.want, b.String())
			}
		})
	}
}

// A run that finishes while an earlier one is held up reaches Finished at
// once, rather than waiting in memory (where a kill would lose it) for the
// earlier one; emit still gets every record in run order, after Finished.
func TestSweepRunFinishedAtOnce(t *testing.T) {
	sw, err := NewSweep(smallScenario(t), []Vary{{"protocol.kind", []string{"none", "cpr"}}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	later := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	finished := map[RunKey]bool{}
	o := RunOptions{Workers: 4, // ff0, ff1 and point 0's two runs: a worker is left for point 1's
		Prepared: func(sp *SweepPoint, _ *Point) error {
			if sp.Index > 0 {
				return nil
			}
			select { // hold up the first point until a run of the second is recorded
			case <-later:
				return nil
			case <-time.After(20 * time.Second):
				return errors.New("no run of the second point was recorded while the first was held up")
			}
		},
		Finished: func(r SweepRecord) error {
			mu.Lock()
			finished[r.Key()] = true
			mu.Unlock()
			if r.Point == sw.Points[1].ID {
				once.Do(func() { close(later) })
			}
			return nil
		},
	}
	var emitted []RunKey
	err = sw.Run(context.Background(), o, func(r SweepRecord) error {
		mu.Lock()
		defer mu.Unlock()
		if !finished[r.Key()] {
			t.Errorf("%v emitted before Finished got it", r.Key())
		}
		emitted = append(emitted, r.Key())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []RunKey
	for _, p := range sw.Points {
		for rep := 0; rep < sw.Reps; rep++ {
			want = append(want, RunKey{p.ID, rep})
		}
	}
	if !slices.Equal(emitted, want) || len(finished) != len(want) {
		t.Fatalf("emitted %v, want %v; %d finished", emitted, want, len(finished))
	}
}
