package experiment

import (
	"os"
	"path/filepath"
	"testing"

	"ftsim/scenarios"
)

// A failure trace file drives the failures: the nodes and times it lists are
// the failures that strike (a trace row for a node that is already dead
// changes nothing).
func TestTraceFileFailures(t *testing.T) {
	dir := t.TempDir()
	trace := "# node, time\nnode,time\n1, 0.2ms\n3\t300us\n1 0.4ms\n"
	if err := os.WriteFile(filepath.Join(dir, "failures.txt"), []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	scen := `name = "trace"
[cluster]
nodes = 4
spares = 4
[failures]
distribution = "trace"
trace_file = "failures.txt"
[detection]
mode = "oracle"
[workload]
kind = "synthetic"
steps = 10
step_ops = 1e5
`
	path := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(path, []byte(scen), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := runRep0(t, s)
	// node 1 fails at 0.2 ms and is replaced; the later row for node 1 finds it dead
	if r.Failures != 2 || r.Restarts != 2 || !r.DigestOK {
		t.Fatalf("failures %d restarts %d digest_ok %v", r.Failures, r.Restarts, r.DigestOK)
	}
	if r.MakespanS != 0.0003+0.001 {
		t.Fatalf("makespan %v s, want the restart at 0.3 ms plus the 1 ms job", r.MakespanS)
	}
}
