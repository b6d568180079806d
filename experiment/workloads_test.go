package experiment

import (
	"fmt"
	"slices"
	"testing"

	"ftsim/scenarios"
	"ftsim/sim"
	"ftsim/sim/simtest"
)

// Every workload, under every general-purpose protocol, with failures
// striking at 30% and 65% of progress, ends with its reference answer.
func TestEveryWorkloadSurvivesFailures(t *testing.T) {
	workloads := map[string][]string{
		"life":      {"width=48", "height=48", "generations=30", "objects_per_node=2"},
		"stencil":   {"nx=12", "ny=10", "nz=8", "iterations=20", "blocks_per_node=2"},
		"pida":      {"korf=94", `korf_file="` + korfFile + `"`, "objects_per_node=2"},
		"dp":        {`problem="lcs"`, "random_a=300", "random_b=200"},
		"farm":      {"width=96", "height=96", "tile=16", "max_iter=300"},
		"synthetic": {"steps=20", "exchange=4096", "objects=8"},
	}
	// a checkpoint period of about an eighth of each fault-free run
	periods := map[string]string{"life": "30us", "stencil": "8us", "pida": "1ms", "dp": "40us", "farm": "300us", "synthetic": "500ms"}
	for _, wk := range WorkloadKinds() {
		args, ok := workloads[wk]
		if !ok {
			t.Fatalf("workload %q has no case in this test", wk)
		}
		if wk == "pida" && korfFile == "" {
			continue
		}
		for _, pk := range []string{"none", "cpr", "dps", "mlog", "replication"} {
			if pk == "replication" && !slices.Contains(replicatedWorkloads, wk) {
				continue
			}
			t.Run(wk+"/"+pk, func(t *testing.T) {
				over := []string{"workload.kind=" + wk, "protocol.kind=" + pk, "cluster.nodes=4", "cluster.spares=3",
					"failures.distribution=scripted",
					"failures.scripted=[{node=1, progress=0.3}, {node=2, progress=0.65}]",
					"detection.mode=oracle"}
				for _, a := range args {
					over = append(over, "workload."+a)
				}
				switch pk {
				case "cpr":
					over = append(over, `protocol.interval="fixed"`, `protocol.tier="buddy"`, "protocol.period="+periods[wk])
				case "dps":
					over = append(over, "protocol.every=5")
				case "mlog":
					over = append(over, "protocol.period="+periods[wk])
				}
				r := runKeys(t, over)
				if !r.Finished || !r.DigestOK || r.Failures == 0 {
					t.Fatalf("finished %v digest_ok %v failures %d: %s", r.Finished, r.DigestOK, r.Failures, r.Note)
				}
				if (pk == "cpr" || pk == "mlog") && r.Checkpoints == 0 {
					t.Fatalf("no checkpoint was taken (fault-free %.6g s)", r.FaultFreeS)
				}
				t.Logf("makespan %.6g s, baseline %.6g s, failures %d, restarts %d, checkpoints %d",
					r.MakespanS, r.BaselineS, r.Failures, r.Restarts, r.Checkpoints)
			})
		}
	}
}

// Every workload of the searches ends with its reference answer when messages
// arrive out of order (simtest.Reorder: every other message of a pair after
// the pair's next one), as message logging may deliver them to a restarted
// object: a workload must not count on the order of its messages.
func TestWorkloadsOutOfOrder(t *testing.T) {
	for _, wl := range searchWorkloads {
		keys, ok := wl.fullKeys()
		if !ok {
			continue
		}
		for _, nodes := range []int{4, 6} {
			t.Run(fmt.Sprintf("%s/%d nodes", wl.kind, nodes), func(t *testing.T) {
				over := []string{"workload.kind=" + wl.kind, fmt.Sprintf("cluster.nodes=%d", nodes), "failures.distribution=none"}
				for _, k := range keys {
					over = append(over, "workload."+k)
				}
				s, err := scenarios.Parse("reorder.toml", []byte(`name = "reorder"`), over)
				if err != nil {
					t.Fatal(err)
				}
				w, err := buildWorkload(s)
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := clusterConfig(s, 1)
				if err != nil {
					t.Fatal(err)
				}
				proto := &simtest.Reorder{Wait: sim.Second}
				res := simtest.Run(t, cfg, w, proto)
				if !res.Outcome.OK {
					t.Fatalf("outcome %+v", res.Outcome)
				}
				if proto.Swapped == 0 && wl.kind != "farm" {
					t.Fatal("no message was delivered out of order: the test tests nothing")
				}
			})
		}
	}
}

// pida's last iteration stops when a worker finds the solution, so its work
// depends on the schedule: here two failures (at 30% and 60% of the work,
// recovered by abft) leave the search on a path that finds it sooner, and
// the run ends before the fault-free one, with the same exact count of the
// iterations before the last (the README's figures).
func TestPidaFailuresCanShortenTheRun(t *testing.T) {
	if korfFile == "" {
		t.Skip("no shared Korf instances")
	}
	text := `[cluster]
nodes = 4
spares = 1
rate = 1e3
[failures]
distribution = "scripted"
scripted = [{node = 1, progress = 0.3}, {node = 2, progress = 0.6}]
[workload]
kind = "pida"
korf = 94
objects_per_node = 2
korf_file = "` + korfFile + `"
[protocol]
kind = "abft"
`
	for _, tc := range []struct {
		name     string
		over     []string
		failures int
		makespan sim.Time
		detail   string
	}{
		{"two failures", nil, 2, 7648_000_085_944, // 2 h 7 min 28 s: 33,133 nodes in the last iteration
			"expanded 103010 nodes in 5 iterations (sequential 121126), 69877 before the last (sequential 69877)"},
		{"fault-free", []string{`failures.distribution="none"`}, 0, 10845_600_075_804, // 3 h 0 min 45.6 s: 103,773
			"expanded 173650 nodes in 5 iterations (sequential 121126), 69877 before the last (sequential 69877)"},
	} {
		s, err := scenarios.Parse("pida.toml", []byte(text), tc.over)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Prepare(s)
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.runRep(0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Makespan != tc.makespan || res.Stats.Failures != tc.failures || !res.Outcome.OK || res.Outcome.Detail != tc.detail {
			t.Errorf("%s: makespan %d ns, %d failures, %+v; want %d ns, %d and %q",
				tc.name, res.Makespan, res.Stats.Failures, res.Outcome, tc.makespan, tc.failures, tc.detail)
		}
	}
}
