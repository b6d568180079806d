package experiment

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"ftsim/scenarios"
	"ftsim/sim"
)

const small = `
name = "small"
seed = 5
reps = 6
[cluster]
nodes = 4
spares = 6
spare_boot = "1s"
[failures]
distribution = "exponential"
node_mtbf = "8s"
[detection]
mode = "heartbeat"
period = "100ms"
timeout = "300ms"
[workload]
kind = "life"
width = 32
height = 32
generations = 40
modeled_width = 3200
modeled_height = 3200
cell_ops = 10
[protocol]
kind = "none"
`

func runAll(t *testing.T, text string, workers int, overrides ...string) ([]Record, []byte) {
	t.Helper()
	s, err := scenarios.Parse("small.toml", []byte(text), overrides)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := NewSweep(s, nil, s.Reps)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	var out bytes.Buffer
	err = sw.Run(context.Background(), RunOptions{Workers: workers}, func(r SweepRecord) error {
		recs = append(recs, r.Record)
		out.Write(r.Record.JSON())
		out.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, out.Bytes()
}

// Same scenario and seed: byte-identical JSON, whatever the number of workers.
func TestDeterministicOutput(t *testing.T) {
	recs, a := runAll(t, small, 1)
	_, b := runAll(t, small, 3)
	if !bytes.Equal(a, b) {
		t.Fatal("two runs of the same scenario and seed differ")
	}
	failures := 0
	for i, r := range recs {
		if r.Rep != i || !r.DigestOK || !r.Finished {
			t.Fatalf("record %d: %+v", i, r)
		}
		failures += r.Failures
	}
	if failures == 0 {
		t.Fatal("no failure struck: the test does not exercise recovery")
	}
	_, c := runAll(t, small, 2, "seed=6")
	if bytes.Equal(a, c) {
		t.Fatal("a different seed gives the same output")
	}
}

// runKeys parses the scenario of the given keys, prepares it and runs its
// replication 0; any error fails the test.
func runKeys(t *testing.T, keys []string) Record {
	t.Helper()
	s, err := scenarios.Parse("test.toml", []byte(`name = "t"`), keys)
	if err != nil {
		t.Fatal(err)
	}
	return runRep0(t, s)
}

// runRep0 prepares scenario s and runs its replication 0; any error fails
// the test.
func runRep0(t *testing.T, s *scenarios.Scenario) Record {
	t.Helper()
	p, err := Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Run(0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The record carries the fields the issue promises, with their names.
func TestRecordFields(t *testing.T) {
	recs, out := runAll(t, small, 2, "reps=1")
	line := string(out)
	for _, k := range []string{"scenario", "workload", "protocol", "nodes", "seed", "makespan_s", "baseline_s",
		"overhead", "failures", "recovery_s_mean", "app_msgs", "extra_msgs", "app_bytes", "extra_bytes",
		"checkpoint_bytes", "digest_ok", "answer", "unrecoverable"} {
		if !strings.Contains(line, `"`+k+`":`) {
			t.Errorf("JSON lacks %q: %s", k, line)
		}
	}
	if len(Columns()) != len(recs[0].Row()) {
		t.Fatalf("%d columns, %d fields", len(Columns()), len(recs[0].Row()))
	}
	if recs[0].BaselineS <= 0 || recs[0].AppMsgs == 0 {
		t.Fatalf("record %+v", recs[0])
	}
}

// A planned failure (script or trace) of a node that is down, or of a spare
// still powered off in the pool, strikes nothing: it is counted in
// ignored_failures rather than in failures, so that a script naming such a
// node does not look like a failure the simulator lost. Once a spare is taken
// (booting, here: detection takes 3 s and the boot 1 s) it can fail.
func TestIgnoredFailures(t *testing.T) {
	for _, tc := range []struct {
		name, script      string
		failures, ignored int
	}{
		{"idle spare", `{node = 4, at = "1ms"}`, 0, 1},
		{"node already down", `{node = 1, at = "2ms"}, {node = 1, at = "2.5ms"}`, 1, 1},
		{"both", `{node = 4, at = "1ms"}, {node = 1, at = "2ms"}, {node = 1, at = "2.5ms"}`, 1, 2},
		{"spare once taken", `{node = 1, at = "2ms"}, {node = 4, at = "3.5s"}`, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "[cluster]\nnodes = 4\nspares = 1\nspare_boot = \"1s\"\n[protocol]\nkind = \"cpr\"\n" +
				"[failures]\ndistribution = \"scripted\"\nscripted = [" + tc.script + "]\n"
			s, err := scenarios.Parse("ignored.toml", []byte(text), nil)
			if err != nil {
				t.Fatal(err)
			}
			r := runRep0(t, s)
			if !r.DigestOK || r.Failures != tc.failures || r.IgnoredFailures != tc.ignored {
				t.Fatalf("digest_ok %v, failures %d, ignored_failures %d; want true, %d, %d",
					r.DigestOK, r.Failures, r.IgnoredFailures, tc.failures, tc.ignored)
			}
		})
	}
}

// A record splits the recovery of its failures: detection (the oracle's
// delay), restore (until the lost objects are live again: a restart from
// scratch once the spare has booted) and the whole recovery, which for a
// restart from scratch adds the work redone.
func TestRecoveryParts(t *testing.T) {
	text := "[cluster]\nnodes = 4\nspares = 1\nspare_boot = \"1s\"\n[detection]\nmode = \"oracle\"\ndelay = \"10ms\"\n" +
		"[failures]\ndistribution = \"scripted\"\nscripted = [{node = 1, at = \"2ms\"}]\n"
	s, err := scenarios.Parse("parts.toml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := runRep0(t, s)
	if !r.DigestOK || r.Failures != 1 || r.Restored != 1 || r.DetectionSMean != 0.01 || r.RestoreSMean != 1 {
		t.Fatalf("digest_ok %v, %d failures, %d restored, detection %v s, restore %v s; want true, 1, 1, 0.01, 1",
			r.DigestOK, r.Failures, r.Restored, r.DetectionSMean, r.RestoreSMean)
	}
	// then the restart redoes the work of the 2 ms before the failure, up to
	// the last step that ended by then
	if redo := r.RecoverySMean - 1.01; redo <= 0 || redo > 0.002 {
		t.Fatalf("recovery %v s: %v s after the restore, want (0, 2 ms]", r.RecoverySMean, redo)
	}
}

// A record's note says what went wrong: the protocol's note (an
// unrecoverable pattern), the outcome's when there is none, and both when
// the run then reached the duration limit.
func TestRecordNote(t *testing.T) {
	s, err := scenarios.Parse("small.toml", []byte(small), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &Point{Scenario: s}
	limit := "the workload did not finish: stopped at the duration limit (1s) with events still to run"
	const gib = 1 << 30 // small.toml's nodes have cluster.memory's default, 64 GiB
	full := func(peak, state int64) sim.Result {
		r := sim.Result{Finished: true, Outcome: sim.Outcome{OK: true}}
		r.Stats.NodeMemPeak, r.Stats.NodeMemPeakState, r.Stats.NodeMemPeakNode = peak, state, 3
		return r
	}
	over := "memory exceeded: node 3 held 60 GiB of logs, backups and checkpoints beside 4.5 GiB of application state, more than its 64 GiB (cluster.memory)"
	for _, tc := range []struct {
		name, protocol string
		res            sim.Result
		want           string
	}{
		{"memory full", "", full(60*gib, 4*gib), ""},
		{"memory exceeded", "", full(60*gib, 4*gib+gib/2), over},
		{"fell back, memory exceeded", "fell back", full(60*gib, 4*gib+gib/2), "fell back; " + over},
		{"finished", "fell back", sim.Result{Finished: true, Outcome: sim.Outcome{OK: true}}, "fell back"},
		{"wrong answer", "", sim.Result{Finished: true, Outcome: sim.Outcome{Detail: "object 2 lost at completion"}}, "object 2 lost at completion"},
		{"quiet", "fell back", sim.Result{Outcome: sim.Outcome{Detail: "the workload did not finish"}}, "fell back"},
		{"at the limit", "", sim.Result{AtLimit: true, Outcome: sim.Outcome{Detail: limit}}, limit},
		{"fell back, then at the limit", "fell back", sim.Result{AtLimit: true, Outcome: sim.Outcome{Detail: limit}}, "fell back; " + limit},
	} {
		res := tc.res
		res.Stats.UnrecoverableNote = tc.protocol
		if r := newRecord(p, 0, 1, &res); r.Note != tc.want {
			t.Errorf("%s: note %q, want %q", tc.name, r.Note, tc.want)
		}
	}
}

func TestPrepareErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		override, want string
	}{
		{"workload.kind=chess", `unknown workload "chess"`},
		{"protocol.kind=magic", `unknown protocol "magic"`},
		{"workload.boundary=klein", "klein"},
	}
	for _, c := range cases {
		s, err := scenarios.Parse("small.toml", []byte(small), []string{c.override})
		if err == nil {
			_, err = Prepare(s)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.override, err, c.want)
		}
	}
}

func TestEstimate95(t *testing.T) {
	e := Estimate95([]float64{1, 2, 3, 4, 5})
	// mean 3, sd √2.5, t(0.975, 4) = 2.776445
	h := 2.7764451051977987 * 1.5811388300841898 / 2.23606797749979
	if e.Mean != 3 || e.Low < 3-h-1e-9 || e.Low > 3-h+1e-9 || e.N != 5 {
		t.Fatalf("%+v, want 3 ± %g", e, h)
	}
}

// panicProto stands for a protocol with a bug: it panics at the first
// detected failure.
type panicProto struct{ sim.BaseProtocol }

func (p *panicProto) OnFailure(sim.Failure) { panic("broken invariant") }

// A panic in a simulation is a bug, but it must not end the process: it
// comes back as an error naming the scenario, the seed, the panic and the
// simulated time, with the stack, from a traced run (ftsim run --trace) as
// from a plain one.
func TestSimulationPanicIsAnError(t *testing.T) {
	s, err := scenarios.Parse("small.toml", []byte(small), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	p.protocol = func() sim.Protocol { return &panicProto{} }
	for _, run := range []struct {
		name string
		run  func() error
	}{
		{"Run", func() error { _, err := p.Run(0); return err }},
		{"Trace", func() error { _, err := p.Trace(0, io.Discard, 0); return err }},
	} {
		err := run.run()
		for _, want := range []string{"small, seed 5: internal error", "broken invariant, at simulated time ", "experiment.(*panicProto).OnFailure"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%s: error %v, want one containing %q", run.name, err, want)
			}
		}
	}
}

// A protocol whose own work leaves the application (almost) no progress
// used to make the fault-free run simulate, and hold its queued work, until
// memory ran out. Here dps checkpoints a Life block of gigabytes (modeled)
// after each message, on a 50 MB/s network whose transfers keep a core
// busy at each end, while a generation computes in about 0.1 s: the run
// would take more than 1000 times the one without protocol. It stops
// there and says why.
func TestFaultFreeRunWithoutProgress(t *testing.T) {
	s, err := scenarios.Parse("overload.toml", []byte(`name = "overload"`), []string{
		"cluster.nodes=4", "network.bandwidth=\"50MB/s\"", "network.cpu_load=1",
		"workload.kind=life", "workload.width=64", "workload.height=64", "workload.generations=20",
		"workload.modeled_width=200000", "workload.modeled_height=200000", "workload.cell_ops=0.01",
		"protocol.kind=dps", "protocol.every=1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Prepare(s)
	var np *NoProgressError
	if !errors.As(err, &np) || !strings.Contains(err.Error(), "overload: the fault-free run with protocol dps did not end within 38m40.0032s (1000 times the run without protocol") {
		t.Fatalf("Prepare: %v, want a NoProgressError", err)
	}
}

// The scenario's bound on delays is the simulator's on a run: a delay the
// scenario accepts can be added to any time of a run without wrapping.
func TestDelayBoundIsTheRunBound(t *testing.T) {
	if sim.Time(scenarios.MaxDelay) != sim.MaxDuration {
		t.Fatalf("scenarios.MaxDelay %v, sim.MaxDuration %v", sim.Time(scenarios.MaxDelay), sim.MaxDuration)
	}
}

// safetyLimit is SafetyFactor times the fault-free time, at most the
// simulator's bound on a run; the product used to wrap around to a negative
// limit (no limit at all) for fault-free times beyond 106 days.
func TestSafetyLimit(t *testing.T) {
	for _, tc := range []struct{ t, want sim.Time }{
		{sim.Second, SafetyFactor * sim.Second},
		{sim.MaxDuration / SafetyFactor, sim.MaxDuration / SafetyFactor * SafetyFactor},
		{sim.MaxDuration/SafetyFactor + 1, sim.MaxDuration},
		{sim.MaxDuration, sim.MaxDuration},
		{sim.Never / 2, sim.MaxDuration},
	} {
		if got := safetyLimit(tc.t); got != tc.want {
			t.Errorf("safetyLimit(%v) = %v, want %v", tc.t, got, tc.want)
		}
	}
}

// Without duration_limit, a failure run's limit is 1000 times the
// fault-free time plus one failure's detection, boot and downtime: a
// workload of a third of a millisecond, whose failure is detected by
// heartbeats after 3 s, used to stop at 1000 times its fault-free time
// (0.36 s) before the detection, unfinished.
func TestDefaultLimitCoversARecovery(t *testing.T) {
	s, err := scenarios.Parse("short.toml", []byte(`name = "short"`), []string{
		"cluster.nodes=4", `workload.kind="dp"`, `workload.problem="lcs"`, "workload.random_a=300", "workload.random_b=200",
		`protocol.kind="abft"`, `failures.distribution="scripted"`, "failures.scripted=[{node=1, progress=0.5}]"})
	if err != nil {
		t.Fatal(err)
	}
	if r := runRep0(t, s); !r.Finished || !r.DigestOK || r.Failures != 1 || r.MakespanS < 3 {
		t.Fatalf("finished %v, reference answer %v, %d failures, makespan %g s (%s); want the answer after the 3 s detection",
			r.Finished, r.DigestOK, r.Failures, r.MakespanS, r.Note)
	}
}
