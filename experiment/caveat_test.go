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

// TestDomainCaveat checks what Caveat says of copies kept in a node's failure
// domain, and that it is true: failing every node of the domain it names (or
// of node 0's, when it names none) at once, halfway through the fault-free
// run, restarts the run from scratch exactly when it says so.
func TestDomainCaveat(t *testing.T) {
	const msg = "%s: node %d and every node that holds its copies (protocol.%s = %d) are in one failure domain of 4 nodes; that domain's failure restarts the run from scratch"
	for _, c := range []struct {
		protocol []string
		node     int // -1: no caveat
		key      string
		offset   int
	}{
		{[]string{"protocol.kind=cpr", `protocol.tier="buddy"`}, 0, "buddy_offset", 1},
		{[]string{"protocol.kind=cpr", `protocol.tier="buddy"`, "protocol.buddy_offset=3"}, 0, "buddy_offset", 3},
		{[]string{"protocol.kind=cpr", `protocol.tier="buddy"`, "protocol.buddy_offset=4"}, -1, "", 0},
		{[]string{"protocol.kind=cpr", `protocol.tier="buddy"`, "protocol.buddy_offset=6"}, 2, "buddy_offset", 6}, // 2 → 0
		{[]string{"protocol.kind=cpr", `protocol.levels=[{tier="buddy", every=1}, {tier="pfs", every=2}]`}, -1, "", 0},
		{[]string{"protocol.kind=mlog"}, 0, "buddy_offset", 1},
		{[]string{"protocol.kind=mlog", "protocol.multi_failure=true", "protocol.buddy_offset=4"}, -1, "", 0},
		{[]string{"protocol.kind=dps", "protocol.every=3", "protocol.backups=2"}, 0, "backup_offset", 1},
		{[]string{"protocol.kind=dps", "protocol.every=3", "protocol.backups=2", "protocol.backup_offset=3"}, -1, "", 0}, // 0 → 3, 4
		{[]string{"protocol.kind=dps", "protocol.every=3", "protocol.backup_offset=4"}, -1, "", 0},
	} {
		over := []string{"cluster.nodes=8", "cluster.spares=4", "detection.mode=oracle", `storage.pfs_latency="1us"`,
			`failures.distribution="exponential"`, "failures.group_size=4", `failures.group_mtbf="1h"`, "workload.kind=life", "workload.width=48", "workload.height=48",
			"workload.generations=30"}
		s, err := scenarios.Parse("caveat.toml", []byte(`name = "caveat"`), append(append(over, c.protocol...), `protocol.period="30us"`))
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		if c.node >= 0 {
			want = fmt.Sprintf(msg, s.Protocol.Kind(), c.node, c.key, c.offset)
		}
		if got := Caveat(s); got != want {
			t.Errorf("%v: caveat %q, want %q", c.protocol, got, want)
		}
		p, err := Prepare(s)
		if err != nil {
			t.Fatalf("%v: %v", c.protocol, err)
		}
		failedAt := scenarios.Duration(p.FaultFree / 2)
		f := &p.Scenario.Failures
		f.Distribution, f.GroupMTBF, f.Scripted = "scripted", 0, nil
		for n := max(c.node, 0) / 4 * 4; n < max(c.node, 0)/4*4+4; n++ {
			f.Scripted = append(f.Scripted, scenarios.ScriptedFailure{Node: n, At: failedAt})
		}
		r, err := p.Run(0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Failures != 4 || !r.DigestOK {
			t.Fatalf("%v: %d failures, digest_ok %v: %s", c.protocol, r.Failures, r.DigestOK, r.Note)
		}
		if scratch := r.Restarts > 0; scratch != (want != "") {
			t.Errorf("%v: domain of node %d failed: %d restarts from scratch, caveat %q (%s)", c.protocol, c.node, r.Restarts, want, r.Note)
		}
	}
}
