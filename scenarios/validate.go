package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"ftsim/sim"
)

// Limits that keep a scenario within what one process can simulate, so
// that a typo such as nodes = 1e15 is an error rather than an
// out-of-memory crash.
const (
	MaxNodes = 1 << 24 // nodes + spares
	MaxCores = 1 << 16 // cores per node
	// MaxReps bounds reps: the runner lists every run of a sweep up
	// front, so reps = 99999999999 would exhaust memory before the first
	// run.
	MaxReps = 1 << 20
	// MaxDelay bounds the delays a run adds to its clock (latencies, boot,
	// repair and down times, detection): a run simulates at most 100
	// years (sim.MaxDuration), so a longer delay is a mistake of unit, and
	// added to a late time of the run it would pass the range of the
	// simulator's 64-bit nanoseconds.
	MaxDelay = 100 * Year
	// MaxTorusDims bounds network.torus_dims's dimensions (as
	// sim.MaxTorusDims: each node keeps its coordinates).
	MaxTorusDims = 8
	// MaxSwitchPorts bounds network.switch_ports (as sim.MaxSwitchPorts;
	// the largest switches have 128 ports).
	MaxSwitchPorts = 1024
)

// TorusRoom is the most positions a torus may have for a cluster of nodes
// nodes (as sim.TorusRoom): 64 per node, or 4096, and at most MaxNodes. A
// torus far larger than the machine is a mistake of extents that would cost
// memory for links no message takes.
func TorusRoom(nodes int) int { return min(MaxNodes, max(64*nodes, 4096)) }

// Enumerations of the fixed schema, in the order errors list them.
var (
	placements    = []string{"block", "round_robin"}
	noSpares      = []string{"shrink", "wait"}
	topologies    = []string{"flat", "torus", "fat_tree"}
	distributions = []string{"none", "exponential", "weibull", "trace", "scripted"}
	starts        = []string{"new", "in_service"}
	modes         = []string{"heartbeat", "oracle"}
)

// Validate checks ranges, enumerations and combinations of values. It
// returns the first problem as an *Error located where the offending key
// was set (file and line, or override). Load and Parse call it; call it
// yourself after Set or after changing fields. It does not read files:
// LoadTrace reports problems with the trace itself.
func (s *Scenario) Validate() error {
	v := validator{s: s}
	v.top()
	v.cluster()
	v.network()
	v.storage()
	v.failures()
	v.detection()
	v.sections()
	v.protocols()
	v.sweep()
	v.published()
	if v.err != nil {
		return v.err
	}
	return nil
}

// validator collects the first error found.
type validator struct {
	s   *Scenario
	err *Error
}

// check records an error about key unless ok or an error was already
// found.
func (v *validator) check(ok bool, key, format string, args ...any) {
	if !ok && v.err == nil {
		v.err = v.s.errorf(key, format, args...)
	}
}

// atLeast checks an integer lower bound.
func (v *validator) atLeast(key string, x, lo int) {
	v.check(x >= lo, key, "must be ≥ %d, got %d", lo, x)
}

// duration checks that a duration is not negative (possible only when
// set from Go).
func (v *validator) duration(key string, d Duration) {
	v.check(d >= 0, key, "must be ≥ 0, got %s", d)
}

// delay checks a delay added to the clock: in [0, MaxDelay).
func (v *validator) delay(key string, d Duration) {
	v.check(d >= 0 && d < MaxDelay, key, "must be ≥ 0 and under 100 years, got %s", d)
}

// positive checks that a float (rate, bandwidth) is finite and > 0.
func (v *validator) positive(key string, x float64) {
	v.check(x > 0 && !math.IsInf(x, 0), key, "must be > 0 and finite, got %g", x)
}

// nonNegative checks that a float is finite and ≥ 0.
func (v *validator) nonNegative(key string, x float64) {
	v.check(x >= 0 && !math.IsInf(x, 0), key, "must be ≥ 0 and finite, got %g", x)
}

// fraction checks that a float is in [0, 1].
func (v *validator) fraction(key string, x float64) {
	v.check(x >= 0 && x <= 1, key, "must be in [0, 1], got %g", x)
}

// oneOf checks an enumeration.
func (v *validator) oneOf(key, x string, allowed []string) {
	v.check(slices.Contains(allowed, x), key, "must be one of %s; got %q", strings.Join(allowed, ", "), x)
}

func (v *validator) top() {
	v.atLeast("reps", v.s.Reps, 1)
	v.check(v.s.Reps <= MaxReps, "reps", "must be ≤ %d, got %d", MaxReps, v.s.Reps)
	v.duration("duration_limit", v.s.DurationLimit)
	// Replication r runs with seed + r as an unsigned stream key; a negative
	// seed would print as a 20-digit number no one wrote.
	v.check(v.s.Seed >= 0, "seed", "must be ≥ 0, got %d", v.s.Seed)
}

func (v *validator) cluster() {
	c := v.s.Cluster
	v.atLeast("cluster.nodes", c.Nodes, 1)
	v.atLeast("cluster.spares", c.Spares, 0)
	v.check(c.Nodes <= MaxNodes-max(c.Spares, 0), v.s.blame("cluster.nodes", "cluster.spares"),
		"nodes + spares must be ≤ %d, got %d + %d", MaxNodes, c.Nodes, c.Spares)
	v.atLeast("cluster.cores", c.Cores, 1)
	v.check(c.Cores <= MaxCores, "cluster.cores", "must be ≤ %d, got %d", MaxCores, c.Cores)
	v.positive("cluster.rate", c.Rate)
	v.check(c.Memory >= 0, "cluster.memory", "must be ≥ 0, got %s", c.Memory)
	v.delay("cluster.spare_boot", c.SpareBoot)
	v.delay("cluster.repair", c.Repair)
	v.oneOf("cluster.no_spare", c.NoSpare, noSpares)
	v.check(c.NoSpare != "wait" || c.Repair > 0, v.s.blame("cluster.no_spare", "cluster.repair"),
		`"wait" needs cluster.repair > 0: with failed nodes never repaired, a job out of spares would wait for ever`)
	v.oneOf("cluster.placement", c.Placement, placements)
}

func (v *validator) network() {
	n := v.s.Network
	v.delay("network.latency", n.Latency)
	v.delay("network.jitter", n.Jitter)
	v.positive("network.bandwidth", float64(n.Bandwidth))
	v.fraction("network.cpu_load", n.CPULoad)
	v.delay("network.message_cpu", n.MessageCPU)
	v.oneOf("network.topology", n.Topology, topologies)
	v.delay("network.hop_latency", n.HopLatency)
	v.check(n.SwitchPorts >= 1 && n.SwitchPorts <= MaxSwitchPorts, "network.switch_ports",
		"must be ≥ 1 and ≤ %d, got %d", MaxSwitchPorts, n.SwitchPorts)
	v.check(n.Oversubscription >= 1 && n.Oversubscription <= 1e6, "network.oversubscription",
		"must be ≥ 1 and ≤ 1e6, got %g", n.Oversubscription)
	if n.TorusDims != "" || n.Topology == "torus" {
		_, err := n.TorusExtents(v.s.Cluster.Nodes + v.s.Cluster.Spares)
		v.check(err == nil, v.s.blame("network.torus_dims", "network.topology"), "%v", err)
	}
}

func (v *validator) storage() {
	st := v.s.Storage
	v.positive("storage.memory_bandwidth", float64(st.MemoryBandwidth))
	v.positive("storage.disk_bandwidth", float64(st.DiskBandwidth))
	v.positive("storage.pfs_bandwidth", float64(st.PFSBandwidth))
	v.nonNegative("storage.pfs_node_bandwidth", float64(st.PFSNodeBandwidth))
	v.delay("storage.pfs_latency", st.PFSLatency)
}

func (v *validator) failures() {
	f := v.s.Failures
	v.oneOf("failures.distribution", f.Distribution, distributions)
	v.duration("failures.node_mtbf", f.NodeMTBF)
	v.positive("failures.weibull_shape", f.WeibullShape)
	v.check(f.WeibullShape >= 0.01, "failures.weibull_shape",
		"must be ≥ 0.01 (below, nearly every lifetime is 0 and the mean rests on a few of astronomical length), got %g", f.WeibullShape)
	v.oneOf("failures.start", f.Start, starts)
	v.delay("failures.downtime", f.Downtime)
	switch f.Distribution {
	case "exponential", "weibull":
		v.check(f.NodeMTBF > 0, v.s.blame("failures.node_mtbf", "failures.distribution"),
			"must be > 0 for the %s distribution", f.Distribution)
	case "trace":
		v.check(f.TraceFile != "", v.s.blame("failures.trace_file", "failures.distribution"),
			`the trace distribution needs failures.trace_file`)
	case "scripted":
		v.check(len(f.Scripted) > 0, v.s.blame("failures.scripted", "failures.distribution"),
			`the scripted distribution needs a non-empty failures.scripted list`)
	}
	total := v.s.Cluster.Nodes + v.s.Cluster.Spares
	v.duration("failures.group_mtbf", f.GroupMTBF)
	v.check(f.GroupSize >= 0 && f.GroupSize <= total, "failures.group_size",
		"must be in [0, nodes+spares] = [0, %d] (a group of the whole machine is the largest), got %d", total, f.GroupSize)
	if f.GroupMTBF > 0 {
		v.check(f.GroupSize >= 1, v.s.blame("failures.group_size", "failures.group_mtbf"),
			"group failures (failures.group_mtbf) need a group size ≥ 1")
		v.check(f.Distribution == "exponential" || f.Distribution == "weibull",
			v.s.blame("failures.group_mtbf", "failures.distribution"),
			"group failures add to the exponential and weibull distributions, not to %q", f.Distribution)
	}
	for i, sf := range f.Scripted {
		key := v.s.blame(fmt.Sprintf("failures.scripted[%d]", i), "failures.scripted")
		v.check(sf.Node >= 0 && sf.Node < total, key,
			"node must be in [0, nodes+spares) = [0, %d), got %d", total, sf.Node)
		if sf.ByProgress {
			v.check(sf.Progress >= 0 && sf.Progress <= 1, key, "progress must be in [0, 1], got %g", sf.Progress)
		} else {
			v.check(sf.At >= 0, key, "at must be ≥ 0, got %s", sf.At)
		}
	}
}

func (v *validator) detection() {
	d := v.s.Detection
	v.oneOf("detection.mode", d.Mode, modes)
	v.delay("detection.period", d.Period)
	v.delay("detection.timeout", d.Timeout)
	v.delay("detection.delay", d.Delay)
	v.check(d.HeartbeatBytes >= 0, "detection.heartbeat_bytes", "must be ≥ 0, got %s", d.HeartbeatBytes)
	if d.Mode == "heartbeat" {
		v.check(d.Period > 0, "detection.period", "must be > 0 in heartbeat mode, got %s", d.Period)
		v.check(d.Timeout >= d.Period, v.s.blame("detection.timeout", "detection.period"),
			"timeout (%s) must be ≥ period (%s)", d.Timeout, d.Period)
		j := v.s.Network.Jitter
		v.check(j <= 0 || d.Period/sim.HBJitterMargin >= j, v.s.blame("network.jitter", "detection.period"),
			"with network.jitter = %s, detection.period (%s) must be at least %d jitters: ftsim times each heartbeat's delay on its own, which holds while one is almost never delayed past the next",
			j, d.Period, sim.HBJitterMargin)
	}
}

func (v *validator) sections() {
	for _, sec := range []struct {
		key string
		s   *Section
	}{{"workload.kind", v.s.Workload}, {"protocol.kind", v.s.Protocol}} {
		v.check(sec.s != nil && sec.s.Kind() != "", sec.key, "must be set")
	}
}

// protocols checks the [[protocols]] entries: each has a kind and a label
// no other entry has, and no [protocol] table competes with them.
func (v *validator) protocols() {
	if len(v.s.Protocols) == 0 {
		return
	}
	if p := v.s.Protocol; p.Has("kind") || len(p.Keys()) > 0 {
		key := "kind"
		if !p.Has("kind") {
			key = p.Keys()[0]
		}
		if v.err == nil {
			v.err = asError(p.Errorf(key, "a scenario has either one [protocol] table or [[protocols]] entries to compare, not both"))
		}
	}
	seen := map[string]bool{}
	for i, p := range v.s.Protocols {
		key := fmt.Sprintf("protocols[%d]", i)
		v.check(p.Kind() != "", key, "needs a kind")
		l := p.Label()
		if l == "" || v.err != nil {
			continue
		}
		if strings.ContainsAny(l, ";=, \t") && v.err == nil {
			v.err = asError(p.Errorf("label", "%q: a label must not contain spaces, ';', '=' or ','", l))
		}
		if seen[l] && v.err == nil {
			key := "kind"
			if p.label != "" {
				key = "label"
			}
			v.err = asError(p.Errorf(key, "%q labels two entries: give each entry a distinct label", l))
		}
		seen[l] = true
	}
}

// sweep checks that [sweep] varies have the key=v1,v2 form; their keys and
// values are checked when the sweep is built.
func (v *validator) sweep() {
	for i, x := range v.s.Sweep.Vary {
		key, vals, ok := strings.Cut(x, "=")
		if ok && strings.TrimSpace(key) != "" && strings.TrimSpace(vals) != "" || v.err != nil {
			continue
		}
		// located at the list's line (no line is recorded per element),
		// named by the entry
		v.err = v.s.errorf("sweep.vary", "%q: want key=v1,v2,... such as cluster.nodes=64,128", x)
		v.err.Key = fmt.Sprintf("sweep.vary[%d]", i)
	}
}

// published checks that each [[published]] figure names a metric, a finite
// value and points written as key=value;key=value.
func (v *validator) published() {
	for i, p := range v.s.Published {
		at := func(k string) string {
			return v.s.blame(fmt.Sprintf("published[%d].%s", i, k), fmt.Sprintf("published[%d]", i))
		}
		v.check(p.Metric != "", at("metric"), "needs a metric (a result column such as makespan_s)")
		v.check(!math.IsNaN(p.Value) && !math.IsInf(p.Value, 0), at("value"), "must be finite, got %g", p.Value)
		for _, k := range []string{"point", "ratio_to"} {
			text := p.Point
			if k == "ratio_to" {
				text = p.RatioTo
			}
			_, err := ParsePoint(text)
			v.check(err == nil, at(k), "%v", err)
		}
	}
}

// asError converts the *Error Section.Errorf returns.
func asError(err error) *Error {
	e, _ := err.(*Error)
	return e
}

// ParsePoint parses a point written "key=value;key=value" into its
// settings in the order written; "" is the point with no settings. A key
// given twice is an error: no sweep point has it twice, so the point would
// match nothing, and the message would not say why.
func ParsePoint(text string) ([][2]string, error) {
	var out [][2]string
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	for part := range strings.SplitSeq(text, ";") {
		k, val, ok := strings.Cut(part, "=")
		k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		if !ok || k == "" || val == "" {
			return nil, fmt.Errorf("point %q: want key=value;key=value, such as protocol=cpr;cluster.nodes=64", text)
		}
		for _, kv := range out {
			if kv[0] == k {
				return nil, fmt.Errorf("point %q: key %s is given twice", text, k)
			}
		}
		out = append(out, [2]string{k, val})
	}
	return out, nil
}
