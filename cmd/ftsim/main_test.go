package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"ftsim/experiment"
	"ftsim/models/cpr"
	"ftsim/scenarios"
)

// newRoot is the ftsim command, for the tests that do not look at the
// profiles its flags ask for (TestProfiles uses newRootProfiled).
func newRoot() *cobra.Command {
	root, _ := newRootProfiled()
	return root
}

func execute(args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errb.String(), err
}

func writeScenario(t testing.TB, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const tiny = `name = "tiny"
reps = 2
[cluster]
nodes = 2
[workload]
kind = "life"
width = 16
height = 16
generations = 5
`

// Bad input gives an error naming the file, line and key, never a panic.
func TestRunErrors(t *testing.T) {
	cases := []struct {
		name string
		text string
		args []string
		want string
	}{
		{"unknown key", tiny + "widht = 3\n", nil, `s.toml:10: unknown key "workload.widht"`},
		{"negative nodes", strings.Replace(tiny, "nodes = 2", "nodes = -2", 1), nil, "cluster.nodes"},
		{"negative mtbf", tiny + "[failures]\ndistribution = \"exponential\"\nnode_mtbf = \"-5y\"\n", nil, "failures.node_mtbf"},
		{"bad format", tiny, []string{"--format", "xml"}, "--format"},
		{"bad override", tiny, []string{"--set", "cluster.nodez=3"}, "cluster.nodez"},
		{"unknown workload", tiny, []string{"--set", "workload.kind=chess"}, "chess"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeScenario(t, c.text)
			_, _, err := execute(append([]string{"run", p}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, _, err := execute("run", "no-such-file.toml"); err == nil || !strings.Contains(err.Error(), "no-such-file.toml") {
		t.Fatalf("missing file: %v", err)
	}
}

// The table's header says what the machine does with no spare left when
// it waits for repairs, and nothing of it when it shrinks (the default).
func TestRunHeaderNoSpare(t *testing.T) {
	p := writeScenario(t, tiny)
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, "2 nodes + 0 spares, failures none"},
		{[]string{"--set", "cluster.repair=90s", "--set", "cluster.no_spare=wait"}, "2 nodes + 0 spares (then waiting for nodes repaired in 90s), failures none"},
	} {
		out, _, err := execute(append([]string{"run", p}, c.sets...)...)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("%v: error %v, output %q; want it to contain %q", c.sets, err, out, c.want)
		}
	}
}

func TestRunFormats(t *testing.T) {
	p := writeScenario(t, tiny)
	out, _, err := execute("run", p, "--format", "json", "--seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"seed":3`) || !strings.Contains(lines[1], `"rep":1`) {
		t.Fatalf("json output:\n%s", out)
	}
	out, _, err = execute("run", p, "--format", "csv", "--reps", "3")
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Split(strings.TrimSpace(out), "\n"); len(rows) != 4 || !strings.HasPrefix(rows[0], "scenario,workload,protocol") {
		t.Fatalf("csv output:\n%s", out)
	}
	dir := t.TempDir()
	out, _, err = execute("run", p, "--out", dir)
	if err != nil || !strings.Contains(out, "2 with the reference answer") {
		t.Fatalf("table output (%v):\n%s", err, out)
	}
	for _, f := range []string{"runs.csv", "runs.jsonl"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || len(b) == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
}

func TestRunTrace(t *testing.T) {
	p := writeScenario(t, tiny)
	path := filepath.Join(t.TempDir(), "run.json")
	if _, _, err := execute("run", p, "--trace", path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(b), `{"displayTimeUnit"`) || !strings.HasSuffix(string(b), "]}\n") {
		t.Fatalf("trace file: %v\n%.200s", err, b)
	}
}

// A resumed run whose runs are all in the store still writes the trace (its
// point is prepared for it alone); a trace that cannot be written (into a
// missing directory, or onto a directory) is an error naming its path,
// before anything runs.
func TestRunTraceResumedAndUnwritable(t *testing.T) {
	p := writeScenario(t, tiny)
	dir := filepath.Join(t.TempDir(), "out")
	if _, _, err := execute("run", p, "--out", dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if _, _, err := execute("run", p, "--out", dir, "--resume", "--trace", path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(b), `{"displayTimeUnit"`) || !strings.HasSuffix(string(b), "]}\n") {
		t.Fatalf("trace file after a resume: %v\n%.200s", err, b)
	}
	for _, bad := range []string{filepath.Join(t.TempDir(), "no-such-dir", "run.json"), t.TempDir()} {
		out, _, err := execute("run", p, "--trace", bad)
		if err == nil || !strings.Contains(err.Error(), bad) || out != "" {
			t.Fatalf("trace into %s: error %v and output %q, want an error naming it and no run", bad, err, out)
		}
	}
}

func TestScenariosAndVersion(t *testing.T) {
	out, _, err := execute("scenarios")
	if err != nil || !strings.Contains(out, "default") {
		t.Fatalf("scenarios: %v\n%s", err, out)
	}
	out, _, err = execute("version")
	if err != nil || !strings.HasPrefix(out, "ftsim ") {
		t.Fatalf("version: %v %q", err, out)
	}
}

// A scenario listing several protocols runs them all on the same failure
// traces and ranks them; its published figures are printed beside the
// simulated ones.
func TestRunCompares(t *testing.T) {
	p := writeScenario(t, tiny+`[failures]
distribution = "exponential"
node_mtbf = "20ms"
[[protocols]]
kind = "none"
[[protocols]]
label = "cpr-mem"
kind = "cpr"
tier = "memory"
period = "1ms"
[[published]]
source = "Table 9"
point = "protocol=cpr-mem"
metric = "checkpoints"
value = 4
`)
	out, _, err := execute("run", p, "--set", "cluster.spares=2", "--reps", "4")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"protocols compared at the scenario's settings", "winner: ", "published vs simulated:", "Table 9  protocol=cpr-mem  checkpoints  4"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = execute("run", p, "--set", "cluster.spares=2", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], `{"point":"protocol=none"`) || !strings.HasPrefix(lines[3], `{"point":"protocol=cpr-mem"`) {
		t.Errorf("json output:\n%s", out)
	}
	if _, _, err := execute("run", p, "--trace", filepath.Join(t.TempDir(), "x.json")); err == nil {
		t.Error("--trace of several protocols was accepted")
	}
}

// Counts no run can use are refused before anything runs, naming the flag:
// --reps was taken as "the scenario's" when 0 or negative and accepted
// beyond what a sweep can list, a negative --workers meant all cores.
func TestCountFlags(t *testing.T) {
	p := writeScenario(t, tiny)
	huge := strconv.Itoa(scenarios.MaxReps + 1)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", p, "--reps", "0"}, "--reps: must be between 1 and 1048576, got 0"},
		{[]string{"run", p, "--reps", "-2"}, "--reps: must be between 1 and 1048576, got -2"},
		{[]string{"run", p, "--reps", huge}, "--reps: must be between 1 and 1048576, got " + huge},
		{[]string{"run", p, "--workers", "-1"}, "--workers: must be ≥ 0"},
		{[]string{"run", p, "--seed", "-5"}, "--seed: must be ≥ 0, got -5"},
		{[]string{"run", p, "--set", "seed=-1"}, "--set seed: must be ≥ 0, got -1"},
		{[]string{"run", p, "--trace-messages", "-1", "--trace", filepath.Join(t.TempDir(), "t.json")}, "--trace-messages: must be ≥ 0"},
		{[]string{"sweep", p, "--reps", "0"}, "--reps: must be between 1 and 1048576, got 0"},
		{[]string{"sweep", p, "--reps", huge}, "--reps: must be between 1 and 1048576, got " + huge},
		{[]string{"sweep", p, "--workers", "-4"}, "--workers: must be ≥ 0"},
	}
	for _, c := range cases {
		t.Run(c.args[0]+" "+strings.Join(c.args[2:4], " "), func(t *testing.T) {
			if _, _, err := executeSweep(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// 'ftsim run --out' writes a result store, the one 'ftsim sweep --out'
// writes: plot and merge read it, a store holding runs is refused without
// --resume, and --resume runs only what is missing, giving the same table
// and files as a run that was never interrupted.
func TestRunStore(t *testing.T) {
	p := writeScenario(t, tinyFailing)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "run")
	table := mustRun(t, "run", p, "--reps", "4", "--out", dir)
	if plain := mustRun(t, "run", p, "--reps", "4"); table != plain {
		t.Fatalf("the table differs with --out:\n%s\n---\n%s", table, plain)
	}
	res, err := experiment.ReadStore(dir)
	if err != nil || len(res.Records) != 4 || len(res.Points) != 1 || res.Points[0].Kind != "none" {
		t.Fatalf("store: %v, %+v", err, res)
	}
	if rows := strings.Split(readFile(t, filepath.Join(dir, "runs.csv")), "\n"); !strings.HasPrefix(rows[0], "point,scenario,") || !strings.HasPrefix(rows[1], ",tiny,") {
		t.Fatalf("runs.csv:\n%s", strings.Join(rows, "\n"))
	}
	if _, _, err := executeSweep("run", p, "--reps", "4", "--out", dir); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("a second run into the store: %v", err)
	}
	if _, _, err := executeSweep("run", p, "--resume"); err == nil || !strings.Contains(err.Error(), "--resume needs --out") {
		t.Fatalf("--resume without --out: %v", err)
	}
	if out := mustRun(t, "run", p, "--reps", "4", "--out", dir, "--resume"); out != table {
		t.Fatalf("resuming a finished run:\n%s", out)
	}
	// an interrupted run: two runs stored, one partial line
	cut := filepath.Join(tmp, "cut")
	mustRun(t, "run", p, "--reps", "4", "--out", cut)
	lines := strings.SplitAfter(readFile(t, filepath.Join(cut, "runs.jsonl")), "\n")
	if err := os.WriteFile(filepath.Join(cut, "runs.jsonl"), []byte(lines[0]+lines[1]+lines[2][:20]), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, "run", p, "--reps", "4", "--out", cut, "--resume", "--format", "json"); strings.Count(out, "\n") != 2 {
		t.Fatalf("resume ran again what was stored:\n%s", out)
	}
	for _, f := range []string{"runs.csv", "runs.jsonl", "points.jsonl", "meta.json"} {
		if readFile(t, filepath.Join(dir, f)) != readFile(t, filepath.Join(cut, f)) {
			t.Errorf("%s: the resumed store differs from the uninterrupted one", f)
		}
	}
	if out := mustRun(t, "merge", filepath.Join(tmp, "merged"), dir); !strings.Contains(out, "merged 4 runs from 1 stores") {
		t.Fatalf("merge:\n%s", out)
	}
	if out := mustRun(t, "plot", dir); !strings.Contains(out, "no figure to draw") {
		t.Fatalf("plot:\n%s", out)
	}
}

// A scenario of one point prints its published figures too, and a
// published metric no run reports is refused before anything runs.
func TestRunPublishedOnePoint(t *testing.T) {
	pub := `[[published]]
source = "Table 1"
metric = "%s"
value = 2e-5
unit = "s"
`
	p := writeScenario(t, tiny+fmt.Sprintf(pub, "baseline_s"))
	out := mustRun(t, "run", p)
	if !strings.Contains(out, "published vs simulated:") || !strings.Contains(out, "Table 1  (base)  baseline_s  2e-05 s") {
		t.Fatalf("output:\n%s", out)
	}
	p = writeScenario(t, tiny+fmt.Sprintf(pub, "baseline"))
	for _, cmd := range []string{"run", "sweep"} {
		dir := filepath.Join(t.TempDir(), "out")
		_, _, err := executeSweep(cmd, p, "--out", dir)
		if err == nil || !strings.Contains(err.Error(), `s.toml:12: published[0].metric: unknown metric "baseline"`) {
			t.Errorf("%s: error %v", cmd, err)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s: the store was created before the error", cmd)
		}
	}
}

// predict prints each point's predictions, aligned, without trailing blanks;
// the Daly interval it prints is Daly's formula of the checkpoint cost and
// platform MTBF it prints beside it.
func TestPredict(t *testing.T) {
	out, _, err := execute("predict", "--set", "protocol.kind=cpr", "--set", "protocol.interval=daly")
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string) float64 {
		t.Helper()
		for line := range strings.Lines(out) {
			if f, ok := strings.CutPrefix(strings.TrimSpace(line), name); ok {
				v, err := strconv.ParseFloat(strings.Fields(f)[0], 64)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return v
			}
		}
		t.Fatalf("no %q line in:\n%s", name, out)
		return 0
	}
	c, mu, daly := value("checkpoint cost C"), value("platform MTBF μ"), value("Daly interval")
	if mu != 900 || c <= 0 {
		t.Fatalf("C = %g s, μ = %g s; want μ = 900 s (4 h / 16 nodes) and C > 0", c, mu)
	}
	if want := cpr.DalyHigher(c, mu); math.Abs(daly/want-1) > 1e-5 {
		t.Errorf("Daly interval printed %g s, the formula of the printed C and μ gives %g s", daly, want)
	}
	p := writeScenario(t, tiny+`[[protocols]]
kind = "none"
[[protocols]]
kind = "cpr"
`)
	several, _, err := execute("predict", p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"point protocol=none\n", "point protocol=cpr\n"} {
		if !strings.Contains(several, want) {
			t.Errorf("output lacks %q:\n%s", want, several)
		}
	}
	for line := range strings.Lines(out + several) {
		if strings.HasSuffix(strings.TrimSuffix(line, "\n"), " ") {
			t.Errorf("trailing blanks: %q", line)
		}
	}
	if _, _, err := execute("predict", p, "--set", "failures.node_mtbf=-1h"); err == nil || !strings.Contains(err.Error(), "failures.node_mtbf") {
		t.Errorf("a negative MTBF: error %v, want one naming failures.node_mtbf", err)
	}
}

// --cpuprofile and --memprofile are written when the command has returned,
// after a failure too (the profile of what ran); a path that cannot be
// written is an error before the command runs, and leaves no other file.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	root, prof := newRootProfiled()
	root.SetOut(io.Discard)
	root.SetArgs([]string{"--cpuprofile", cpu, "--memprofile", mem, "run", filepath.Join(dir, "missing.toml")})
	if err := root.Execute(); err == nil {
		t.Fatal("a run of a missing scenario succeeded")
	}
	if err := prof.finish(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{cpu, mem} {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("%s after a failed command: %v, want a profile", f, err)
		}
	}

	dir = t.TempDir()
	mem = filepath.Join(dir, "mem.pprof")
	root, prof = newRootProfiled()
	root.SetArgs([]string{"--memprofile", mem, "--cpuprofile", filepath.Join(dir, "no-such-dir", "cpu.pprof"), "scenarios"})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "--cpuprofile: cannot write") {
		t.Fatalf("a CPU profile into a missing directory: %v", err)
	}
	if err := prof.finish(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the failed start left %d files", len(entries))
	}
}

// With network jitter a late heartbeat fences live nodes: the run's header
// gives the expected interval between them, the summary how many runs
// met, the sweep's table a column of them, and only then.
func TestRunFalseSuspicions(t *testing.T) {
	p := writeScenario(t, tinyFailing)
	jitter := []string{"--set", "network.jitter=500us", "--reps", "4"}
	out, _, err := execute(append([]string{"run", p, "--set", "detection.timeout=12ms"}, jitter...)...)
	// 2 nodes at ½e^{−4} per 10 ms heartbeat: one every 1/(2 × 0.9158) s
	if err != nil || !strings.Contains(out, "a live node fenced every 0.546 s by a late heartbeat") || !strings.Contains(out, "of them fenced") {
		t.Fatalf("table output (%v):\n%s", err, out)
	}
	for _, tc := range []struct {
		timeouts string
		want     bool
	}{{"12ms,30ms", true}, {"30ms,40ms", false}} {
		out, _, err := executeSweep(append([]string{"sweep", p, "--vary", "detection.timeout=" + tc.timeouts}, jitter...)...)
		if err != nil || strings.Contains(out, "fenced/run") != tc.want {
			t.Errorf("timeouts %s: want a fenced/run column %v (%v):\n%s", tc.timeouts, tc.want, err, out)
		}
	}
}

// The table says how many planned failures struck nothing, and says nothing
// when every one struck.
func TestRunIgnoredFailures(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{`{node = 1, at = "1us"}, {node = 1, at = "2us"}, {node = 2, at = "3us"}`,
			"2 planned failures ignored: their node was already down or an idle spare (ignored_failures)"},
		{`{node = 1, at = "1us"}, {node = 2, at = "3us"}`,
			"1 planned failure ignored: its node was already down or an idle spare (ignored_failures)"},
		{`{node = 1, at = "1us"}`, ""},
	} {
		p := writeScenario(t, tiny+`[failures]
distribution = "scripted"
scripted = [`+tc.script+`]
`)
		out, _, err := execute("run", p, "--reps", "1", "--set", "cluster.spares=1")
		if err != nil || (tc.want != "") != strings.Contains(out, "planned failure") || !strings.Contains(out, tc.want) {
			t.Errorf("%s: want %q (%v):\n%s", tc.script, tc.want, err, out)
		}
	}
}

// With Weibull failures the header names the shape and how the nodes start,
// and says the platform MTBF is the long run's; the predictions say which
// MTBF over the run they took.
func TestRunWeibullHeader(t *testing.T) {
	for start, want := range map[string]string{"new": "nodes new at the start", "in_service": "nodes in service at the start"} {
		p := writeScenario(t, tiny+"[failures]\ndistribution = \"weibull\"\nnode_mtbf = \"1h\"\nweibull_shape = 0.6\nstart = \""+start+"\"\n")
		out, _, err := execute("run", p, "--reps", "1")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"failures weibull (node MTBF 1h, shape 0.6, " + want + ", platform MTBF 1800 s in the long run)",
			"platform MTBF over the run μ_T"} {
			if !strings.Contains(out, w) {
				t.Errorf("start %s: output lacks %q:\n%s", start, w, out)
			}
		}
	}
}
