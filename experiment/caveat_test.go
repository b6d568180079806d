package experiment

import (
	"fmt"
	"testing"

	"ftsim/scenarios"
)

// TestCaveat checks both what Caveat says and that it is true: node 0 fails
// halfway through the fault-free run, and the run takes at least the failure
// time plus a whole run without protocol exactly when a caveat says every
// failure restarts the run from scratch (a protocol that recovers redoes
// less).
func TestCaveat(t *testing.T) {
	life := []string{"workload.kind=life", "workload.width=48", "workload.height=48", "workload.generations=30", "workload.objects_per_node=2"}
	lcs := []string{"workload.kind=dp", `workload.problem="lcs"`, "workload.random_a=300", "workload.random_b=200"}
	for _, c := range []struct {
		name     string
		nodes    int
		workload []string
		protocol []string
		caveat   string
	}{
		{"cpr pfs", 1, life, []string{"protocol.kind=cpr", `protocol.tier="pfs"`, `protocol.period="30us"`}, ""},
		{"cpr buddy", 1, life, []string{"protocol.kind=cpr", `protocol.tier="buddy"`, `protocol.period="30us"`},
			"cpr: on one node every checkpoint copy is on the node that fails; every failure restarts the run from scratch"},
		{"cpr buddy", 2, life, []string{"protocol.kind=cpr", `protocol.tier="buddy"`, `protocol.period="30us"`}, ""},
		{"cpr memory", 2, life, []string{"protocol.kind=cpr", `protocol.tier="memory"`, `protocol.period="30us"`},
			"cpr: disk and memory checkpoints are lost with their node; every failure restarts the run from scratch"},
		{"cpr disk and pfs", 2, life, []string{"protocol.kind=cpr", `protocol.levels=[{tier="disk", every=1}, {tier="pfs", every=2}]`, `protocol.period="30us"`}, ""},
		{"dps", 1, life, []string{"protocol.kind=dps", "protocol.every=3"},
			"dps: on one node a thread has no backup on another node; every failure restarts the run from scratch"},
		{"dps", 2, life, []string{"protocol.kind=dps", "protocol.every=3"}, ""},
		{"mlog", 1, life, []string{"protocol.kind=mlog", `protocol.period="30us"`},
			"mlog: on one node there is no buddy to hold checkpoints and logs; every failure restarts the run from scratch"},
		{"mlog", 2, life, []string{"protocol.kind=mlog", `protocol.period="30us"`}, ""},
		{"abft", 1, lcs, []string{"protocol.kind=abft"},
			"abft: on one node no neighbour holds a copy of the critical data; every failure restarts the run from scratch"},
		{"abft", 2, lcs, []string{"protocol.kind=abft"}, ""},
	} {
		over := append([]string{"cluster.spares=1", "detection.mode=oracle", `failures.distribution="scripted"`,
			"failures.scripted=[{node=0, at=\"1s\"}]", `storage.pfs_latency="1us"`, fmt.Sprintf("cluster.nodes=%d", c.nodes)}, c.workload...)
		s, err := scenarios.Parse("caveat.toml", []byte(`name = "caveat"`), append(over, c.protocol...))
		if err != nil {
			t.Fatal(err)
		}
		if got := Caveat(s); got != c.caveat {
			t.Errorf("%s on %d nodes: caveat %q, want %q", c.name, c.nodes, got, c.caveat)
		}
		p, err := Prepare(s)
		if err != nil {
			t.Fatalf("%s on %d nodes: %v", c.name, c.nodes, err)
		}
		failedAt := p.FaultFree / 2
		p.Scenario.Failures.Scripted = []scenarios.ScriptedFailure{{Node: 0, At: scenarios.Duration(failedAt)}}
		r, err := p.Run(0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Failures != 1 || !r.DigestOK {
			t.Fatalf("%s on %d nodes: %d failures, digest_ok %v: %s", c.name, c.nodes, r.Failures, r.DigestOK, r.Note)
		}
		scratch := r.MakespanS >= (failedAt + p.Baseline).Seconds()
		if scratch != (c.caveat != "") {
			t.Errorf("%s on %d nodes: failure at %v s, makespan %v s, baseline %v s: restarted from scratch %v, caveat %q",
				c.name, c.nodes, failedAt.Seconds(), r.MakespanS, p.Baseline.Seconds(), scratch, c.caveat)
		}
	}
}
