package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func execute(args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errb.String(), err
}

func writeScenario(t *testing.T, text string) string {
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
