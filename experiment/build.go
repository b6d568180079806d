// Package experiment wires a scenario to a cluster, a workload and a protocol,
// runs replications (in parallel, with common random numbers) and turns the
// runs into records and summaries.
package experiment

import (
	"fmt"
	"sort"
	"strings"

	"ftsim/models/cpr"
	"ftsim/models/none"
	"ftsim/scenarios"
	"ftsim/sim"
	"ftsim/workloads/dp"
	"ftsim/workloads/farm"
	"ftsim/workloads/life"
	"ftsim/workloads/pida"
	"ftsim/workloads/stencil"
	"ftsim/workloads/synthetic"
)

// WorkloadKinds lists the workloads a scenario can name.
func WorkloadKinds() []string {
	return []string{"life", "stencil", "pida", "dp", "farm", "synthetic"}
}

// ProtocolKinds lists the protocols a scenario can name.
func ProtocolKinds() []string {
	return []string{"none", "cpr", "mlog", "dps", "mpift-ia", "abft", "replication"}
}

// buildWorkload decodes the [workload] section and builds the workload for
// the scenario's cluster.
func buildWorkload(s *scenarios.Scenario) (sim.Workload, error) {
	sec := s.Workload
	nodes := s.Cluster.Nodes
	switch sec.Kind() {
	case "life":
		p := life.DefaultParams()
		if err := sec.Decode(&p); err != nil {
			return nil, err
		}
		w, err := life.New(p, nodes, s.Resolve)
		if err != nil {
			return nil, sec.Errorf("", "%v", err)
		}
		return w, nil
	case "stencil":
		p := stencil.DefaultParams()
		if err := sec.Decode(&p); err != nil {
			return nil, err
		}
		w, err := stencil.New(p, nodes, s.Resolve)
		if err != nil {
			return nil, sec.Errorf("", "%v", err)
		}
		return w, nil
	case "pida":
		p := pida.DefaultParams()
		if err := sec.Decode(&p); err != nil {
			return nil, err
		}
		w, err := pida.New(p, nodes, s.Resolve)
		if err != nil {
			return nil, sec.Errorf("", "%v", err)
		}
		return w, nil
	case "dp":
		p := dp.DefaultParams()
		if err := sec.Decode(&p); err != nil {
			return nil, err
		}
		w, err := dp.New(p, nodes, s.Resolve)
		if err != nil {
			return nil, sec.Errorf("", "%v", err)
		}
		return w, nil
	case "farm":
		p := farm.DefaultParams()
		if err := sec.Decode(&p); err != nil {
			return nil, err
		}
		w, err := farm.New(p, nodes, s.Resolve)
		if err != nil {
			return nil, sec.Errorf("", "%v", err)
		}
		return w, nil
	case "synthetic":
		p := synthetic.DefaultParams()
		if err := sec.Decode(&p); err != nil {
			return nil, err
		}
		w, err := synthetic.New(p, nodes)
		if err != nil {
			return nil, sec.Errorf("", "%v", err)
		}
		return w, nil
	}
	return nil, sec.Errorf("kind", "unknown workload %q (known: %s)", sec.Kind(), strings.Join(WorkloadKinds(), ", "))
}

// protocolMaker makes a fresh protocol instance per run (protocols hold run state).
type protocolMaker func() sim.Protocol

// buildProtocol decodes the [protocol] section.
func buildProtocol(s *scenarios.Scenario) (protocolMaker, error) {
	sec := s.Protocol
	switch sec.Kind() {
	case "none":
		var p struct{}
		if err := sec.Decode(&p); err != nil {
			return nil, err
		}
		return buildNone, nil
	case "cpr":
		return buildCPR(s)
	case "abft":
		return buildABFT(s)
	case "dps":
		return buildDPS(s)
	case "mlog":
		return buildMlog(s)
	case "replication":
		return buildReplication(s)
	case "mpift-ia":
		var p struct{}
		if err := sec.Decode(&p); err != nil {
			return nil, err
		}
		if s.Workload.Kind() != "farm" {
			return nil, sec.Errorf("kind", "protocol mpift-ia (master/worker task resubmission) needs workload.kind = \"farm\", not %q", s.Workload.Kind())
		}
		return func() sim.Protocol { return cpr.NewModelIa() }, nil
	}
	return nil, sec.Errorf("kind", "unknown protocol %q (known: %s)", sec.Kind(), strings.Join(ProtocolKinds(), ", "))
}

func buildNone() sim.Protocol { return none.New() }

// topology builds the network's topology for nodes nodes (nil when flat).
func topology(n scenarios.Network, nodes int) (sim.Topology, error) {
	switch n.Topology {
	case "torus":
		dims, err := n.TorusExtents(nodes)
		if err != nil {
			return nil, err
		}
		return sim.NewTorus(dims, sim.Time(n.HopLatency), nodes, float64(n.Bandwidth))
	case "fat_tree":
		return sim.NewFatTree(nodes, n.SwitchPorts, n.Oversubscription, sim.Time(n.HopLatency), float64(n.Bandwidth))
	}
	return nil, nil
}

// clusterConfig converts the scenario's machine, failures and detection to
// simulator units for replication seed.
func clusterConfig(s *scenarios.Scenario, seed uint64) (sim.Config, error) {
	c := sim.Config{
		Nodes: s.Cluster.Nodes, Spares: s.Cluster.Spares, Cores: s.Cluster.Cores,
		Rate: s.Cluster.Rate, Memory: int64(s.Cluster.Memory),
		SpareBoot: sim.Time(s.Cluster.SpareBoot), Repair: sim.Time(s.Cluster.Repair), WaitForRepair: s.Cluster.NoSpare == "wait",
		Latency: sim.Time(s.Network.Latency), Jitter: sim.Time(s.Network.Jitter), Bandwidth: float64(s.Network.Bandwidth), CPULoad: s.Network.CPULoad,
		MessageCPU:   sim.Time(s.Network.MessageCPU),
		MemBandwidth: float64(s.Storage.MemoryBandwidth), DiskBandwidth: float64(s.Storage.DiskBandwidth),
		PFSBandwidth: float64(s.Storage.PFSBandwidth), PFSNodeBandwidth: float64(s.Storage.PFSNodeBandwidth),
		PFSLatency: sim.Time(s.Storage.PFSLatency),
		NodeMTBF:   sim.Time(s.Failures.NodeMTBF), WeibullShape: s.Failures.WeibullShape, InService: s.Failures.Start == "in_service",
		Downtime:  sim.Time(s.Failures.Downtime),
		GroupSize: s.Failures.GroupSize, GroupMTBF: sim.Time(s.Failures.GroupMTBF),
		OracleDetection: s.Detection.Mode == "oracle", DetectDelay: sim.Time(s.Detection.Delay),
		HBPeriod: sim.Time(s.Detection.Period), HBTimeout: sim.Time(s.Detection.Timeout),
		HBBytes: int64(s.Detection.HeartbeatBytes),
		Limit:   sim.Time(s.DurationLimit),
		Seed:    seed,
	}
	if s.Cluster.Placement == "round_robin" {
		c.Placement = sim.RoundRobin
	}
	var err error
	if c.Topology, err = topology(s.Network, c.Nodes+c.Spares); err != nil {
		return c, err
	}
	switch s.Failures.Distribution {
	case "none":
	case "exponential":
		c.Failures = sim.Exponential
	case "weibull":
		c.Failures = sim.Weibull
	case "trace":
		c.Failures = sim.TraceFailures
		tr, err := s.Trace()
		if err != nil {
			return c, err
		}
		for _, f := range tr {
			c.Planned = append(c.Planned, sim.ScriptedFailure{Node: sim.NodeID(f.Node), At: sim.Time(f.At)})
		}
	case "scripted":
		c.Failures = sim.ScriptedFailures
		for _, f := range s.Failures.Scripted {
			c.Planned = append(c.Planned, sim.ScriptedFailure{Node: sim.NodeID(f.Node), At: sim.Time(f.At),
				Progress: f.Progress, ByProgress: f.ByProgress})
		}
	default:
		return c, fmt.Errorf("unknown failure distribution %q", s.Failures.Distribution)
	}
	sort.SliceStable(c.Planned, func(i, j int) bool { return c.Planned[i].At < c.Planned[j].At })
	return c, nil
}
