package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"ftsim/experiment"
	"ftsim/plots"
	"ftsim/scenarios"
)

// executeSweep runs the CLI with the sweep, plot and merge commands, whether
// or not newRoot registers them yet.
func executeSweep(args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	root := newRoot()
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
	}
	for _, c := range []*cobra.Command{newSweepCmd(), newPlotCmd(), newMergeCmd()} {
		if !slices.Contains(names, c.Name()) {
			root.AddCommand(c)
		}
	}
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errb.String(), err
}

// tinyFailing is tiny with enough modeled work (about 1 s) for failures
// to strike, and spares to replace failed nodes.
var tinyFailing = strings.Replace(tiny, "nodes = 2\n", "nodes = 2\nspares = 4\nspare_boot = \"100ms\"\n", 1) + `cell_ops = 2e6
[failures]
distribution = "exponential"
node_mtbf = "4s"
[detection]
period = "10ms"
timeout = "30ms"
`

var sweepArgs = []string{"--vary", "cluster.nodes=1,2", "--vary", "protocol.kind=none,cpr", "--reps", "2"}

func mustRun(t testing.TB, args ...string) string {
	t.Helper()
	out, _, err := executeSweep(args...)
	if err != nil {
		t.Fatalf("ftsim %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSweepCommand(t *testing.T) {
	p := writeScenario(t, tiny)
	dir := filepath.Join(t.TempDir(), "out")
	out := mustRun(t, append([]string{"sweep", p, "--out", dir, "--plots"}, sweepArgs...)...)
	for _, want := range []string{
		"4 points × 2 replications = 8 runs",
		"cluster.nodes=1;protocol.kind=none", "cluster.nodes=2;protocol.kind=cpr",
		"paired makespan ratios", "cluster.nodes=1  cpr/none",
		"wrote " + filepath.Join(dir, "plots", "overhead-vs-nodes.png"),
		"wrote " + filepath.Join(dir, "plots", "speedup.svg"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if rows := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "runs.csv"))), "\n"); len(rows) != 9 ||
		!strings.HasPrefix(rows[0], "point,scenario,") || !strings.HasPrefix(rows[8], "cluster.nodes=2;protocol.kind=cpr,tiny,life,cpr,2,1,") {
		t.Fatalf("runs.csv:\n%s", strings.Join(rows, "\n"))
	}
	csv := readFile(t, filepath.Join(dir, "runs.csv"))
	// a finished sweep is not overwritten, and resuming it runs nothing
	if _, _, err := executeSweep(append([]string{"sweep", p, "--out", dir}, sweepArgs...)...); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("rerun without --resume: %v", err)
	}
	out = mustRun(t, append([]string{"sweep", p, "--out", dir, "--resume"}, sweepArgs...)...)
	if !strings.Contains(out, "8 already stored") || readFile(t, filepath.Join(dir, "runs.csv")) != csv {
		t.Fatalf("resume of a finished sweep:\n%s", out)
	}
	if _, _, err := executeSweep("sweep", p, "--out", dir, "--resume", "--vary", "cluster.nodes=1,2,4", "--reps", "2"); err == nil ||
		!strings.Contains(err.Error(), "another sweep") {
		t.Fatalf("resume with other varies: %v", err)
	}

	// no store: the summary only
	out = mustRun(t, "sweep", p, "--vary", "protocol.kind=none,cpr", "--reps", "2")
	if !strings.Contains(out, "cpr/none") || strings.Contains(out, "cluster.nodes") {
		t.Fatalf("sweep without --out:\n%s", out)
	}
}

// Shards merged give the files of the unsharded sweep.
func TestSweepShardsMerge(t *testing.T) {
	p := writeScenario(t, tiny)
	tmp := t.TempDir()
	whole := filepath.Join(tmp, "whole")
	mustRun(t, append([]string{"sweep", p, "--out", whole}, sweepArgs...)...)
	var shards []string
	for _, s := range []string{"0/3", "1/3", "2/3"} {
		d := filepath.Join(tmp, "shard"+s[:1])
		out := mustRun(t, append([]string{"sweep", p, "--out", d, "--shard", s}, sweepArgs...)...)
		if !strings.Contains(out, "shard "+s+": ") {
			t.Fatalf("shard %s:\n%s", s, out)
		}
		shards = append(shards, d)
	}
	merged := filepath.Join(tmp, "merged")
	out := mustRun(t, append([]string{"merge", merged}, shards...)...)
	if !strings.Contains(out, "merged 8 runs from 3 stores") {
		t.Fatalf("merge output:\n%s", out)
	}
	for _, f := range []string{"runs.csv", "runs.jsonl", "points.jsonl", "meta.json"} {
		if readFile(t, filepath.Join(whole, f)) != readFile(t, filepath.Join(merged, f)) {
			t.Errorf("%s: merged shards differ from the unsharded sweep", f)
		}
	}
	out = mustRun(t, "merge", filepath.Join(tmp, "partial"), shards[0])
	if !strings.Contains(out, "runs of the sweep are in none of the stores") {
		t.Fatalf("merging one shard of three:\n%s", out)
	}
}

// Makespan vs MTBF carries the analytical curves the sweep stored.
func TestPlotCommand(t *testing.T) {
	p := writeScenario(t, tinyFailing)
	dir := filepath.Join(t.TempDir(), "mtbf")
	mustRun(t, "sweep", p, "--out", dir, "--reps", "3", "--vary", "failures.node_mtbf=1s,10s,100s",
		"--vary", "protocol.kind=none,cpr")
	out := mustRun(t, "plot", dir, "--format", "svg")
	svg := filepath.Join(dir, "plots", "makespan-vs-mtbf.svg")
	if !strings.Contains(out, "wrote "+svg) || !strings.Contains(out, "efficiency-vs-mtbf.svg") {
		t.Fatalf("plot output:\n%s", out)
	}
	if s := readFile(t, svg); !strings.Contains(s, "none model: restart from scratch") || !strings.Contains(s, "node MTBF (s)") {
		t.Fatalf("makespan vs MTBF lacks the restart-from-scratch curve or its axis label")
	}
	// model curves stay dashed reference lines, measured series do not
	res, err := experiment.ReadStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	curves := 0
	for _, f := range sweepFigures(res) {
		for _, sr := range f.chart.Series {
			if model := strings.Contains(sr.Name, " model: "); sr.Curve != model {
				t.Errorf("%s: series %q drawn as a curve: %v", f.base, sr.Name, sr.Curve)
			} else if model {
				curves++
			}
		}
	}
	if curves == 0 {
		t.Error("no model curve in any figure")
	}
	again := t.TempDir()
	mustRun(t, "plot", dir, "--format", "svg", "--out", again)
	if readFile(t, svg) != readFile(t, filepath.Join(again, "makespan-vs-mtbf.svg")) {
		t.Fatal("the same store gives different figures")
	}
	out = mustRun(t, "plot", dir, "--format", "png", "--out", t.TempDir())
	if strings.Contains(out, ".svg") || !strings.Contains(out, "makespan-vs-mtbf.png") {
		t.Fatalf("--format png:\n%s", out)
	}
}

func TestSweepErrors(t *testing.T) {
	p := writeScenario(t, tiny)
	notStore := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sweep", p, "--vary", "cluster.nodes"}, "want key=v1,v2"},
		{[]string{"sweep", p, "--vary", "cluster.nodez=1,2"}, "cluster.nodez"},
		{[]string{"sweep", p, "--vary", "cluster.nodes=1,-2"}, "cluster.nodes"},
		{[]string{"sweep", p, "--vary", "protocol.kind=none,magic"}, "magic"},
		{[]string{"sweep", p, "--shard", "2/2"}, "--shard"},
		{[]string{"sweep", p, "--shard", "3/2"}, "--shard 3/2"},
		{[]string{"sweep", p, "--shard", "0/0"}, "--shard 0/0"},
		{[]string{"sweep", p, "--shard", "a/b"}, "--shard a/b"},
		{[]string{"sweep", p, "--shard", "-1/2"}, "--shard -1/2"},
		{[]string{"sweep", p, "--reps", "-1"}, "--reps"},
		{[]string{"sweep", p, "--vary", "cluster.nodes=1,1"}, "given twice"},
		{[]string{"sweep", p, "--vary", "cluster.nodes=1", "--vary", "cluster.nodes=2"}, "varied twice"},
		{[]string{"sweep", p, "--out", filepath.Join(writeScenario(t, tiny), "x")}, "result store: mkdir "},
		{[]string{"sweep", p, "--resume"}, "need --out"},
		{[]string{"sweep", "no-such.toml"}, "no-such.toml"},
		{[]string{"plot", notStore}, "meta.json"},
		{[]string{"plot", notStore, "--format", "gif"}, "meta.json"},
		{[]string{"merge", filepath.Join(notStore, "x"), notStore}, "meta.json"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[1:], " "), func(t *testing.T) {
			if _, _, err := executeSweep(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
}

// Each varied key draws its figures; other varied keys slice them.
func TestPlotFigureKinds(t *testing.T) {
	cpr := strings.Replace(tinyFailing, "[failures]", "[protocol]\nkind = \"cpr\"\ninterval = \"iterations\"\nevery = 2\n[failures]", 1)
	cases := []struct {
		name     string
		scenario string
		varies   []string
		want     []string
	}{
		{"objects", tinyFailing, []string{"workload.objects_per_node=1,2"}, []string{"recovery-vs-objects.png"}},
		{"every", cpr, []string{"protocol.every=1,4"}, []string{"checkpoint-overhead-vs-every.png"}},
		{"bandwidth", tinyFailing, []string{"network.bandwidth=100MB/s,1GB/s", "protocol.kind=none,cpr"},
			[]string{"overhead-vs-comm-ratio_network.bandwidth.png"}},
		{"other key", tinyFailing, []string{"cluster.cores=1,2"}, []string{"makespan-vs-cluster.cores.png", "overhead-vs-cluster.cores.png"}},
		{"sliced", tinyFailing, []string{"cluster.nodes=1,2", "workload.objects_per_node=1,2"}, []string{
			"overhead-vs-nodes_workload.objects_per_node=1.png", "speedup_workload.objects_per_node=2.png",
			"recovery-vs-objects_cluster.nodes=1.png", "recovery-vs-objects_cluster.nodes=2.png"}},
		{"group mtbf", tinyFailing, []string{"failures.group_size=2", "failures.group_mtbf=0,40s,400s"}, []string{"makespan-vs-group-mtbf_failures.group_size=2.png"}},
		{"heartbeat timeout", tinyFailing, []string{"detection.timeout=12ms,30ms"}, []string{"makespan-vs-timeout.png"}},
		// linked keys are drawn along the first, in one figure each, with
		// the makespan (a weak-scaling sweep's figure)
		{"linked", tinyFailing, []string{"cluster.nodes|cluster.spares=1|1,2|2"}, []string{"overhead-vs-nodes.png", "speedup.png", "makespan-vs-cluster.nodes.png"}},
		{"nothing numeric", tinyFailing, []string{"protocol.kind=none,cpr"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeScenario(t, c.scenario)
			dir := filepath.Join(t.TempDir(), "store")
			args := []string{"sweep", p, "--out", dir, "--reps", "3"}
			for _, v := range c.varies {
				args = append(args, "--vary", v)
			}
			mustRun(t, args...)
			out := mustRun(t, "plot", dir, "--format", "png")
			for _, f := range c.want {
				if !strings.Contains(out, filepath.Join(dir, "plots", f)) {
					t.Errorf("no %s in:\n%s", f, out)
				}
			}
			if c.want == nil && !strings.Contains(out, "no figure to draw") {
				t.Errorf("output:\n%s", out)
			}
		})
	}
}

// Merging overlapping or mismatched stores is refused, naming what is wrong;
// so is resuming a store of another sweep or shard.
func TestMergeAndResumeRefusals(t *testing.T) {
	p := writeScenario(t, tiny)
	other := writeScenario(t, strings.Replace(tiny, "generations = 5", "generations = 6", 1))
	tmp := t.TempDir()
	store := func(name string, args ...string) string {
		d := filepath.Join(tmp, name)
		mustRun(t, append([]string{"sweep", "--out", d}, args...)...)
		return d
	}
	s0 := store("s0", append([]string{p, "--shard", "0/2"}, sweepArgs...)...)
	s1 := store("s1", append([]string{p, "--shard", "1/2"}, sweepArgs...)...)
	t0 := store("t0", append([]string{p, "--shard", "0/3"}, sweepArgs...)...)
	o1 := store("o1", append([]string{other, "--shard", "1/2"}, sweepArgs...)...)
	v1 := store("v1", p, "--vary", "cluster.nodes=1,3", "--vary", "protocol.kind=none,cpr", "--reps", "2", "--shard", "1/2")
	r1 := store("r1", p, "--vary", "cluster.nodes=1,2", "--vary", "protocol.kind=none,cpr", "--reps", "3", "--shard", "1/2")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"shard twice", []string{s0, s1, s0}, "overlap"},
		{"shards of different counts", []string{s0, s1, t0}, "overlap"},
		{"different scenario", []string{s0, o1}, "base scenario differs"},
		{"different --vary", []string{s0, v1}, "--vary keys differ"},
		{"different --reps", []string{s0, r1}, "replications differ"},
		{"into a store", []string{s1, s0}, "already holds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "merged")
			if c.name == "into a store" {
				out = c.args[0]
				c.args = c.args[1:]
			}
			_, _, err := executeSweep(append([]string{"merge", out}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"different scenario", append([]string{other, "--shard", "0/2"}, sweepArgs...), "base scenario differs"},
		{"different shard", append([]string{p, "--shard", "1/2"}, sweepArgs...), "holds shard 0/2"},
		{"different --vary", []string{p, "--vary", "cluster.nodes=1,3", "--vary", "protocol.kind=none,cpr", "--reps", "2", "--shard", "0/2"}, "--vary keys differ"},
	} {
		t.Run("resume "+c.name, func(t *testing.T) {
			_, _, err := executeSweep(append([]string{"sweep", "--out", s0, "--resume"}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
}

// A sweep stopped by a signal says so, not "context canceled".
func TestSweepInterrupted(t *testing.T) {
	p := writeScenario(t, tiny)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"sweep", p, "--out", filepath.Join(t.TempDir(), "out")}, sweepArgs...))
	if err := root.ExecuteContext(ctx); err == nil || !strings.HasPrefix(err.Error(), "interrupted: ") {
		t.Fatalf("error %v, want it to start with \"interrupted: \"", err)
	}
}

// Plotting a store that holds no run is an error saying so, not a
// "no figure to draw" that blames the varied keys, nor an empty figure.
func TestPlotEmptyStore(t *testing.T) {
	p := writeScenario(t, tiny)
	dir := filepath.Join(t.TempDir(), "empty")
	// shard 3 of 4 of a sweep of 2 runs holds none
	mustRun(t, "sweep", p, "--out", dir, "--reps", "1", "--vary", "cluster.nodes=1,2", "--shard", "3/4")
	_, _, err := executeSweep("plot", dir)
	if err == nil || !strings.Contains(err.Error(), dir+": the store is empty") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "plots")); err == nil {
		t.Error("plots/ was created")
	}
}

// A labelled [[protocols]] entry is drawn in its kind's colour, the same
// style in every figure (plots' TestKindStyle checks that entries sharing a
// kind are told apart): the store records each point's kind for that.
func TestPlotStyleByKind(t *testing.T) {
	p := writeScenario(t, tinyFailing+`[[protocols]]
kind = "none"
[[protocols]]
label = "every-2"
kind = "cpr"
interval = "iterations"
every = 2
[[protocols]]
label = "often"
kind = "cpr"
interval = "iterations"
every = 1
`)
	dir := filepath.Join(t.TempDir(), "store")
	mustRun(t, "sweep", p, "--out", dir, "--reps", "2", "--vary", "cluster.nodes=1,2")
	res, err := experiment.ReadStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, pi := range res.Points {
		if want := map[string]string{"none": "none", "every-2": "cpr", "often": "cpr"}[pi.Protocol]; pi.Kind != want {
			t.Errorf("%s: kind %q in points.jsonl, want %q", pi.Point, pi.Kind, want)
		}
	}
	cpr := plots.Style("cpr")
	styles := map[string]plots.SeriesStyle{}
	figs := sweepFigures(res)
	if len(figs) < 2 {
		t.Fatalf("%d figures", len(figs))
	}
	for _, f := range figs {
		for _, sr := range f.chart.Series {
			if sr.Name != "every-2" && sr.Name != "often" {
				continue
			}
			st := plots.KindStyle(sr.Name, sr.Kind)
			if st.Color != cpr.Color {
				t.Errorf("%s: %s is not drawn in cpr's colour (kind %q)", f.base, sr.Name, sr.Kind)
			}
			if old, ok := styles[sr.Name]; ok && old != st {
				t.Errorf("%s: %s changes style between figures", f.base, sr.Name)
			}
			styles[sr.Name] = st
		}
	}
	if len(styles) != 2 {
		t.Errorf("labelled entries drawn: %+v", styles)
	}
}

// A store identifies its base scenario by the digest of its text, for an
// embedded scenario too (an embedded scenario changes with ftsim's version,
// and resuming across the change would mix two experiments), with
// loadScenario's precedence: a file of that name first.
func TestSweepMetaDigest(t *testing.T) {
	digest := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	exa, _ := scenarios.EmbeddedSource("exascale")
	def, _ := scenarios.EmbeddedSource("default")
	file := filepath.Join(t.TempDir(), "x.toml")
	text := []byte("name = \"x\"\n")
	if err := os.WriteFile(file, text, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ given, want string }{
		{"exascale", digest(exa)},
		{"scenarios/exascale.toml", digest(exa)},
		{"", digest(def)},
		{file, digest(text)},
		{"no-such-scenario", ""},
	} {
		m, err := sweepMeta(c.given, nil, nil, 1, experiment.Shard{})
		if err != nil {
			t.Fatal(err)
		}
		if m.BaseSHA256 != c.want {
			t.Errorf("%q: sha256 %q, want %q", c.given, m.BaseSHA256, c.want)
		}
	}
}

// The comparison table has the predictions' columns only when a model
// applies to one of its protocols at least (scripted failures have no MTBF):
// a "-" where it applies to another, nothing where it applies to none. Its
// restore column says "-" for a protocol whose runs restored nothing.
func TestComparisonPredictionColumns(t *testing.T) {
	row := func(name string, mean, predicted float64) experiment.ComparisonRow {
		r := experiment.ComparisonRow{Protocol: name, Predicted: predicted, ToBest: experiment.Estimate{Mean: 1, N: 1}}
		r.Runs, r.DigestOK, r.Makespan = 1, 1, experiment.Estimate{Mean: mean, N: 1}
		if !math.IsNaN(predicted) {
			r.PredictedName = "model " + name
		}
		return r
	}
	// a row whose runs restored lost objects in restore s on average
	restored := func(r experiment.ComparisonRow, restore float64) experiment.ComparisonRow {
		r.Restore = experiment.Estimate{Mean: restore, N: 1}
		return r
	}
	nan := math.NaN()
	for _, tc := range []struct {
		name  string
		rows  []experiment.ComparisonRow
		lines []string // what the table's lines start with, after "  "
	}{
		{"none", []experiment.ComparisonRow{row("a", 10, nan), row("b", 12, nan)}, []string{
			"protocol  ok/runs  makespan_s  95% CI  vs best (paired)  overhead  recovery_s  restore_s  efficiency\n",
			"a         1/1      10          -       1                 0.00%     0           -          0\n"}},
		{"one", []experiment.ComparisonRow{row("a", 10, nan), restored(row("b", 12, 11), 2.5)}, []string{
			"protocol  ok/runs  makespan_s  95% CI  vs best (paired)  overhead  recovery_s  restore_s  efficiency  predicted_s  model\n",
			"a         1/1      10          -       1                 0.00%     0           -          0           -\n",
			"b         1/1      12          -       1                 0.00%     0           2.5        0           11           model b\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			printComparison(&b, experiment.Comparison{Rows: tc.rows, Best: 0})
			for _, l := range tc.lines {
				if !strings.Contains(b.String(), "\n  "+l) {
					t.Errorf("no line %q in\n%s", l, b.String())
				}
			}
		})
	}
}

// Beside the mean of the paired ratios a sweep prints the ratio of the mean
// makespans, the estimate its unpaired interval is about; with failures the
// two differ.
func TestSweepPrintsRatioOfMeans(t *testing.T) {
	text := strings.Replace(tiny, "generations = 5", "generations = 5\ncell_ops = 1e6", 1)
	text = strings.Replace(text, "nodes = 2", "nodes = 2\nspares = 20\nspare_boot = \"10ms\"", 1)
	p := writeScenario(t, text+`[failures]
distribution = "exponential"
node_mtbf = "1s"
[detection]
mode = "oracle"
[[protocols]]
kind = "none"
[[protocols]]
label = "cpr-pfs"
kind = "cpr"
tier = "pfs"
period = "100ms"
`)
	dir := filepath.Join(t.TempDir(), "out")
	out := mustRun(t, "sweep", p, "--out", dir, "--reps", "8")
	mean := func(point string) float64 {
		var sum float64
		var n int
		for _, row := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "runs.csv"))), "\n")[1:] {
			if f := strings.Split(row, ","); f[0] == point {
				x, err := strconv.ParseFloat(f[8], 64)
				if err != nil {
					t.Fatal(err)
				}
				sum, n = sum+x, n+1
			}
		}
		return sum / float64(n)
	}
	want := mean("protocol=cpr-pfs") / mean("protocol=none")
	m := regexp.MustCompile(`cpr-pfs/none +(\S+) .*ratio of means (\S+), unpaired CI`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no paired ratio line:\n%s", out)
	}
	paired, err1 := strconv.ParseFloat(m[1], 64)
	got, err2 := strconv.ParseFloat(m[2], 64)
	if err1 != nil || err2 != nil || math.Abs(got/want-1) > 1e-5 || paired == got {
		t.Errorf("paired %s, ratio of means %s; runs.csv gives %g:\n%s", m[1], m[2], want, out)
	}
}

// FuzzPlotStore checks that 'ftsim plot' on a store whose runs were edited
// by hand, or came from a run that diverged, draws its figures or says why
// it cannot: no panic, no endless loop, whatever the values (a makespan of
// 1e308, a zero baseline, a negative overhead). The fuzzer sets the figures
// of two runs of a real store (any finite number, since JSON holds no
// other); the figures are rendered in memory.
func FuzzPlotStore(f *testing.F) {
	store := filepath.Join(f.TempDir(), "store")
	mustRun(f, "sweep", writeScenario(f, tinyFailing), "--out", store, "--reps", "2", "--vary", "cluster.nodes=1,2",
		"--vary", "failures.node_mtbf=1s,100s", "--vary", "protocol.kind=none,cpr")
	res, err := readPlottable(store)
	if err != nil {
		f.Fatal(err)
	}
	if n := len(sweepFigures(res)); n < 2 {
		f.Fatalf("the store gives %d figures; the fuzzer needs some to draw", n)
	}
	f.Add(uint8(0), uint8(1), 1.0, 1.0, 1.0, 0.0, 1.0, 0.5, true)
	f.Add(uint8(3), uint8(9), 1e308, 0.0, 5e-324, -5.0, 1e300, -1e300, false)
	f.Add(uint8(15), uint8(15), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, true)
	f.Fuzz(func(t *testing.T, a, b uint8, makespan, baseline, faultFree, overhead, efficiency, recovery float64, finished bool) {
		for _, v := range []float64{makespan, baseline, faultFree, overhead, efficiency, recovery} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return
			}
		}
		edited := *res
		edited.Records = slices.Clone(res.Records)
		ra := &edited.Records[int(a)%len(edited.Records)].Record
		ra.MakespanS, ra.BaselineS, ra.FaultFreeS, ra.Finished = makespan, baseline, faultFree, finished
		rb := &edited.Records[int(b)%len(edited.Records)].Record
		rb.Overhead, rb.Efficiency, rb.RecoverySMean = overhead, efficiency, recovery
		for _, fig := range sweepFigures(&edited) {
			if p, err := fig.chart.Plot(); err == nil {
				if _, err := plots.Render(p, "svg"); err != nil {
					t.Fatalf("%s: %v", fig.base, err)
				}
			}
		}
	})
}
