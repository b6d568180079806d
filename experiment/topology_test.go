package experiment

import (
	"fmt"
	"testing"

	"ftsim/scenarios"
	"ftsim/sim"
)

// A topology changes the network's timing and nothing else: every protocol
// still recovers from the same failures to the sequential reference's
// answer, a full fat tree without hop latency is the flat network, so is a
// torus that matches the block grid for the application alone, and hops,
// a mismatched torus and a tapered tree only slow the application down.
func TestTopologies(t *testing.T) {
	base := []string{"workload.kind=stencil", "workload.nx=8", "workload.ny=4", "workload.nz=4", "workload.blocks=[4,4,2]", "workload.iterations=12",
		"workload.modeled_nx=800", "workload.modeled_ny=400", "workload.modeled_nz=400",
		"cluster.nodes=32", "cluster.spares=4", "network.switch_ports=4", "network.bandwidth=1GB/s",
		"failures.distribution=scripted", `failures.scripted=[{node=5, progress=0.4}, {node=17, progress=0.7}]`,
		"detection.mode=oracle", `detection.delay="1ms"`}
	for _, proto := range [][]string{
		{"protocol.kind=cpr", "protocol.tier=buddy", `protocol.interval="iterations"`, "protocol.every=2"},
		{"protocol.kind=mlog", "protocol.multi_failure=true"},
		{"protocol.kind=dps"},
	} {
		run := func(topo ...string) Record {
			r := runKeys(t, append(append(append([]string{}, base...), proto...), topo...))
			if !r.Finished || !r.DigestOK || r.Failures != 2 {
				t.Fatalf("%s on %v: finished %v, answer ok %v, %d failures (%s)", proto[0], topo, r.Finished, r.DigestOK, r.Failures, r.Note)
			}
			return r
		}
		flat := run()
		full := run("network.topology=fat_tree", "network.hop_latency=0s")
		if full.MakespanS != flat.MakespanS || full.FaultFreeS != flat.FaultFreeS {
			t.Errorf("%s: a full fat tree without hop latency took %v (fault-free %v), the flat network %v (%v)",
				proto[0], full.MakespanS, full.FaultFreeS, flat.MakespanS, flat.FaultFreeS)
		}
		// a torus that matches the block grid (x varying fastest): every
		// halo is one hop, on a link of its own
		if r := run("network.topology=torus", `network.torus_dims="3x4x4"`, `network.hop_latency="50us"`); r.BaselineS != flat.BaselineS {
			t.Errorf("%s: the matching torus's baseline is %v, the flat network's %v", proto[0], r.BaselineS, flat.BaselineS)
		}
		for _, topo := range [][]string{
			{"network.topology=fat_tree", `network.hop_latency="50us"`},
			{"network.topology=fat_tree", "network.hop_latency=0s", "network.oversubscription=4"},
			{"network.topology=torus", `network.hop_latency="50us"`},
			{"network.topology=torus", `network.torus_dims="36"`, `network.hop_latency="50us"`},
		} {
			if r := run(topo...); !(r.BaselineS > flat.BaselineS) || !(r.FaultFreeS > flat.FaultFreeS) {
				t.Errorf("%s on %v: baseline %v, fault-free %v; want both above the flat network's %v, %v",
					proto[0], topo, r.BaselineS, r.FaultFreeS, flat.BaselineS, flat.FaultFreeS)
			}
		}
	}
}

// The fat-tree scenario's finding, on 60 of its 100 steps and one
// replication: tapering the tree hardly changes the fault-free overhead of
// coordinated checkpoints to a buddy (the next node, on the same leaf but
// for one node per leaf), adds a little to that of message logging (its
// small messages wait behind the halos between leaves; its checkpoints leave
// after their copy, once the step's halos are through) and multiplies that of
// DPS, whose duplicates cross leaves with the halos.
func TestFatTreeScenario(t *testing.T) {
	overhead := map[string]float64{} // by point
	for id, r := range runEmbedded(t, "fat-tree", "workload.iterations=60", "reps=1") {
		overhead[id] = r.Overhead
	}
	at := func(proto string, over int) float64 {
		o, ok := overhead[fmt.Sprintf("protocol=%s;network.oversubscription=%d", proto, over)]
		if !ok {
			t.Fatalf("no point for %s at %d:1 in %v", proto, over, overhead)
		}
		return o
	}
	for _, p := range []string{"cpr-buddy", "mlog-fast", "dps"} {
		for _, over := range []int{2, 4, 8} {
			if at(p, over) < at(p, over/2) {
				t.Errorf("%s: overhead %.4f at %d:1, below %.4f at %d:1", p, at(p, over), over, at(p, over/2), over/2)
			}
		}
	}
	if grow := at("cpr-buddy", 8) - at("cpr-buddy", 1); grow > 0.02 {
		t.Errorf("cpr-buddy's overhead grew by %.4f from 1:1 to 8:1, want under 0.02", grow)
	}
	if grow := at("mlog-fast", 8) - at("mlog-fast", 1); grow < 0.005 || grow > 0.05 {
		t.Errorf("mlog-fast's overhead grew by %.4f from 1:1 to 8:1, want 0.005 to 0.05", grow)
	}
	if grow := at("dps", 8) - at("dps", 1); grow < 0.2 {
		t.Errorf("dps's overhead grew by %.4f from 1:1 to 8:1, want over 0.2", grow)
	}
}

// The scenario's bounds on a topology are the simulator's: a torus or a fat
// tree the scenario accepts can be built.
func TestTopologyBoundsAgree(t *testing.T) {
	if scenarios.MaxTorusDims != sim.MaxTorusDims || scenarios.MaxSwitchPorts != sim.MaxSwitchPorts {
		t.Errorf("scenarios.MaxTorusDims %d, sim.MaxTorusDims %d; scenarios.MaxSwitchPorts %d, sim.MaxSwitchPorts %d",
			scenarios.MaxTorusDims, sim.MaxTorusDims, scenarios.MaxSwitchPorts, sim.MaxSwitchPorts)
	}
	for _, n := range []int{1, 63, 64, 65, 10_500, 262_144, 262_145, scenarios.MaxNodes} {
		if a, b := scenarios.TorusRoom(n), sim.TorusRoom(n); a != b {
			t.Errorf("TorusRoom(%d): scenarios %d, sim %d", n, a, b)
		}
	}
}
