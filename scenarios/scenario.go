package scenarios

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Scenario is one simulated experiment: the machine, its failures, how
// failures are detected, the workload and the fault-tolerance protocol.
// Its TOML form is documented field by field; Default gives every value a
// key takes when absent.
type Scenario struct {
	Name          string   `toml:"name"`           // short identifier, used in results
	Description   string   `toml:"description"`    // free text
	Seed          int64    `toml:"seed"`           // run seed; replication r uses streams derived from it
	Reps          int      `toml:"reps"`           // replications, ≥ 1
	DurationLimit Duration `toml:"duration_limit"` // cap on simulated time, 0 = none

	Cluster   Cluster   `toml:"cluster"`
	Network   Network   `toml:"network"`
	Storage   Storage   `toml:"storage"`
	Failures  Failures  `toml:"failures"`
	Detection Detection `toml:"detection"`

	// Workload and Protocol hold kind-specific keys that the owning
	// packages decode with Section.Decode.
	Workload *Section `toml:"workload"`
	Protocol *Section `toml:"protocol"`

	// Protocols, when not empty, replaces Protocol: the [[protocols]]
	// entries are compared on the same failure traces (see WithProtocol).
	Protocols []*Section `toml:"protocols"`
	// Sweep declares the points the scenario is run at.
	Sweep Sweep `toml:"sweep"`
	// Published are figures from the literature that results print beside
	// the simulated ones.
	Published []Published `toml:"published"`

	// File is the name the scenario was loaded or parsed from; errors
	// found later (Validate) name it.
	File string `toml:"-"`
	// Dir is the directory of the scenario file, against which relative
	// paths in it resolve (see Resolve). Empty for Parse.
	Dir string `toml:"-"`

	// origins maps a dotted key to where its value was set, so that
	// validation errors point at the right file and line.
	origins map[string]origin
}

// Cluster is the machine: compute nodes, spares and their speed.
type Cluster struct {
	Nodes     int      `toml:"nodes"`      // compute nodes, ≥ 1
	Spares    int      `toml:"spares"`     // spare nodes, ≥ 0
	Cores     int      `toml:"cores"`      // cores per node, ≥ 1
	Rate      float64  `toml:"rate"`       // operations per second per core, > 0
	Memory    Size     `toml:"memory"`     // memory per node
	SpareBoot Duration `toml:"spare_boot"` // time for a spare to take a failed node's place
	Repair    Duration `toml:"repair"`     // a failed node rejoins the spare pool after this; 0 = never
	// NoSpare is what a job relaunched as a whole (none, cpr, every
	// protocol's restart from scratch) does when the pool is empty:
	// "shrink" restarts it on the survivors, "wait" holds it until
	// repaired nodes refill its allocation (needs repair > 0).
	NoSpare   string `toml:"no_spare"`
	Placement string `toml:"placement"` // initial object placement: "block" or "round_robin"
}

// Network is the interconnect.
type Network struct {
	Latency   Duration `toml:"latency"`   // per message
	Bandwidth Rate     `toml:"bandwidth"` // per node interface and direction, > 0
	// Jitter is the mean of a random exponential delay added to every
	// message's latency; 0 = none.
	Jitter Duration `toml:"jitter"`
	// CPULoad is the fraction of one core kept busy by a transfer at full
	// bandwidth, charged on both ends, in [0, 1].
	CPULoad float64 `toml:"cpu_load"`
	// MessageCPU is the CPU time every message costs at each end whatever
	// its size (LogP's overhead o), on top of cpu_load's share.
	MessageCPU Duration `toml:"message_cpu"`
	// Topology is "flat" (a full crossbar: latency between any two
	// nodes), "torus" or "fat_tree".
	Topology string `toml:"topology"`
	// HopLatency is added per hop beyond the shortest path, which takes
	// latency: per torus link beyond the first, per switch beyond a fat
	// tree's leaf.
	HopLatency Duration `toml:"hop_latency"`
	// TorusDims are the torus's extents, "25x20x20" (1 to MaxTorusDims
	// dimensions, at most TorusRoom positions); "" is the 3-D torus
	// closest to a cube with room for nodes + spares.
	TorusDims string `toml:"torus_dims"`
	// SwitchPorts is the number of nodes per fat-tree leaf switch.
	SwitchPorts int `toml:"switch_ports"`
	// Oversubscription is a leaf's down-link bandwidth over its up-link
	// bandwidth, in [1, 1e6]: 1 is a full fat tree.
	Oversubscription float64 `toml:"oversubscription"`
}

// TorusExtents returns the torus's extents for a cluster of nodes nodes
// (spares included): TorusDims parsed, or a 3-D torus as close to a cube as
// holds them.
func (n Network) TorusExtents(nodes int) ([]int, error) {
	if n.TorusDims == "" {
		a := int(math.Ceil(math.Cbrt(float64(nodes)) - 1e-9))
		b := int(math.Ceil(math.Sqrt(float64(nodes)/float64(a)) - 1e-9))
		return []int{a, b, (nodes + a*b - 1) / (a * b)}, nil
	}
	var dims []int
	fields := strings.Split(n.TorusDims, "x")
	room := 1
	for _, f := range fields {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || d < 1 || len(fields) > MaxTorusDims {
			return nil, fmt.Errorf(`want 1 to %d extents ≥ 1 joined by "x", such as "25x20x20"; got %q`, MaxTorusDims, n.TorusDims)
		}
		if most := TorusRoom(nodes); d > most || room*d > most {
			return nil, fmt.Errorf("%s has more than %d positions, the most for %d nodes (nodes + spares): 64 per node, or 4096", n.TorusDims, most, nodes)
		}
		dims = append(dims, d)
		room *= d
	}
	if room < nodes {
		return nil, fmt.Errorf("%s has room for %d nodes, the cluster has %d (nodes + spares)", n.TorusDims, room, nodes)
	}
	return dims, nil
}

// Storage is the set of storage tiers checkpoints and logs can use.
type Storage struct {
	MemoryBandwidth  Rate     `toml:"memory_bandwidth"`   // node memory copy bandwidth
	DiskBandwidth    Rate     `toml:"disk_bandwidth"`     // node-local disk
	PFSBandwidth     Rate     `toml:"pfs_bandwidth"`      // parallel file system, aggregate, shared by concurrent writers
	PFSNodeBandwidth Rate     `toml:"pfs_node_bandwidth"` // per-writer cap on the PFS, 0 = no cap
	PFSLatency       Duration `toml:"pfs_latency"`        // per PFS operation
}

// Failures says how nodes fail.
type Failures struct {
	// Distribution is one of "none", "exponential", "weibull", "trace"
	// or "scripted".
	Distribution string   `toml:"distribution"`
	NodeMTBF     Duration `toml:"node_mtbf"`     // mean time between failures of one node, > 0 for exponential and weibull
	WeibullShape float64  `toml:"weibull_shape"` // Weibull shape k > 0 (k < 1: decreasing hazard, as measured)
	// Start is "new" (the application's nodes are new at time 0) or
	// "in_service" (they have been in service for long: with Weibull
	// lifetimes each one's first failure comes after the residual life of a
	// stationary failure process). Spares are new either way.
	Start string `toml:"start"`
	// TraceFile is the failure trace read by LoadTrace. A relative path in
	// a scenario file is resolved against the file's directory when the
	// file is loaded; from an override it stays relative to the working
	// directory.
	TraceFile string            `toml:"trace_file"`
	Scripted  []ScriptedFailure `toml:"scripted"` // failures for the "scripted" distribution
	Downtime  Duration          `toml:"downtime"` // fixed delay after each failure before recovery starts
	// GroupSize and GroupMTBF add correlated failures to the exponential
	// and weibull distributions: nodes 0, 1, ... form failure domains of
	// GroupSize consecutive nodes (a chassis, a rack), each of which fails
	// as a whole, every powered-on node at once, at exponential intervals
	// of mean GroupMTBF (0 = no group failures).
	GroupSize int      `toml:"group_size"`
	GroupMTBF Duration `toml:"group_mtbf"`
}

// ScriptedFailure is one failure of the "scripted" distribution, written
// in TOML as {node = 3, at = "10s"} or {node = 5, progress = 0.3}: node is
// required, and exactly one of at and progress.
type ScriptedFailure struct {
	Node int // node that fails, in [0, nodes+spares)
	// ByProgress selects the trigger: false, the node fails at simulated
	// time At; true, it fails when the workload's progress first reaches
	// Progress (in [0, 1]).
	ByProgress bool
	At         Duration
	Progress   float64
}

// Detection says how failures are noticed.
type Detection struct {
	Mode           string   `toml:"mode"`            // "heartbeat" or "oracle"
	Period         Duration `toml:"period"`          // heartbeat period, > 0 in heartbeat mode
	Timeout        Duration `toml:"timeout"`         // heartbeat timeout, ≥ period
	Delay          Duration `toml:"delay"`           // oracle mode: fixed detection delay
	HeartbeatBytes Size     `toml:"heartbeat_bytes"` // size of one heartbeat message
}

// Sweep is the [sweep] table: a scenario run at several points.
type Sweep struct {
	// Vary lists varied keys as the command line's --vary takes them,
	// "key=v1,v2,...": the points are the cartesian product, the first key
	// outermost.
	Vary []string `toml:"vary"`
}

// Published is one [[published]] figure: a value from a paper and where the
// simulation computes the same figure.
type Published struct {
	Source string  `toml:"source"` // where in the paper ("Table 1", "Fig. 10")
	Point  string  `toml:"point"`  // settings of a point, "key=value;key=value" in any order; "" for the only point
	Metric string  `toml:"metric"` // a numeric result column, or a protocol metric
	Value  float64 `toml:"value"`  // the published figure
	Unit   string  `toml:"unit"`   // for display
	// RatioTo, when set, is another point: the simulated figure is then
	// metric(RatioTo) / metric(Point), a speedup when the metric is a time.
	RatioTo string `toml:"ratio_to"`
	Note    string `toml:"note"` // free text (how the value was read)
}

// Default returns the scenario every file starts from: the value of each
// absent key.
func Default() *Scenario {
	return &Scenario{
		Seed: 1,
		Reps: 1,
		Cluster: Cluster{
			Nodes:     64,
			Cores:     1,
			Rate:      1e9,
			Memory:    64 * GiB,
			NoSpare:   "shrink",
			Placement: "block",
		},
		Network: Network{
			Latency:          2 * Microsecond,
			Bandwidth:        12.5e9,
			Topology:         "flat",
			HopLatency:       100 * Nanosecond,
			SwitchPorts:      32,
			Oversubscription: 1,
		},
		Storage: Storage{
			MemoryBandwidth:  10e9,
			DiskBandwidth:    500e6,
			PFSBandwidth:     100e9,
			PFSNodeBandwidth: 2e9,
			PFSLatency:       Millisecond,
		},
		Failures: Failures{
			Distribution: "none",
			NodeMTBF:     5 * Year,
			WeibullShape: 0.7,
			Start:        "new",
		},
		Detection: Detection{
			Mode:           "heartbeat",
			Period:         Second,
			Timeout:        3 * Second,
			HeartbeatBytes: 64,
		},
		Workload: newSection("workload", "life"),
		Protocol: newSection("protocol", "none"),
		origins:  map[string]origin{},
	}
}

// Clone returns a deep copy: changing the copy (Set, field writes, its
// sections) never changes s.
func (s *Scenario) Clone() *Scenario {
	c := *s
	c.Failures.Scripted = slices.Clone(s.Failures.Scripted)
	c.Workload = s.Workload.clone()
	c.Protocol = s.Protocol.clone()
	c.Protocols = slices.Clone(s.Protocols)
	for i, p := range c.Protocols {
		c.Protocols[i] = p.clone()
	}
	c.Sweep.Vary = slices.Clone(s.Sweep.Vary)
	c.Published = slices.Clone(s.Published)
	c.origins = maps.Clone(s.origins)
	return &c
}

// ProtocolLabels returns the labels of the [[protocols]] entries in file
// order, or nil when the scenario has a single [protocol].
func (s *Scenario) ProtocolLabels() []string {
	var ls []string
	for _, p := range s.Protocols {
		ls = append(ls, p.Label())
	}
	return ls
}

// WithProtocol returns a copy of s whose [protocol] is the [[protocols]]
// entry labelled label, and which has no [[protocols]]. Errors about the
// entry's keys still name "protocols[i]" and its line.
func (s *Scenario) WithProtocol(label string) (*Scenario, error) {
	for _, p := range s.Protocols {
		if p.Label() == label {
			c := s.Clone()
			c.Protocol = p.clone()
			c.Protocol.table = "protocol"
			c.Protocols = nil
			return c, nil
		}
	}
	return nil, s.errorf("protocols", "no [[protocols]] entry is labelled %q (have %s)", label, strings.Join(s.ProtocolLabels(), ", "))
}

// Resolve returns path resolved against the scenario file's directory
// when it is relative, so that files named in a scenario are found
// wherever ftsim runs. Absolute paths and scenarios without a directory
// (Parse) are returned unchanged.
func (s *Scenario) Resolve(path string) string {
	if path == "" || s.Dir == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(s.Dir, path)
}

// Errorf returns an *Error about key (a full dotted key such as
// "cluster.nodes") located where that key was last set: the file and line,
// or the override. Other packages use it to report bad values with the
// same precision as Validate.
func (s *Scenario) Errorf(key, format string, args ...any) error {
	return s.errorf(key, format, args...)
}

// errorf is Errorf with a concrete result type.
func (s *Scenario) errorf(key, format string, args ...any) *Error {
	if o, ok := s.origins[key]; ok {
		return o.src.errorf(o.line, key, format, args...)
	}
	return &Error{File: s.File, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// blame returns the first of keys set by a --set override, else the first
// set in a file, so that an error about a combination of values points at
// what the user wrote last (an override of a shipped scenario, not the
// file's line); the first key when none was set.
func (s *Scenario) blame(keys ...string) string {
	for _, k := range keys {
		if o, ok := s.origins[k]; ok && o.src.override != "" {
			return k
		}
	}
	for _, k := range keys {
		if _, ok := s.origins[k]; ok {
			return k
		}
	}
	return keys[0]
}

// UnmarshalTOML implements toml.Unmarshaler strictly: a table with node and
// exactly one of at and progress, and no other key.
func (f *ScriptedFailure) UnmarshalTOML(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf(`want a table such as {node = 3, at = "10s"}, got %s`, tomlTypeOf(v))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // map order is random; errors must not be
	var x ScriptedFailure
	hasNode, hasAt := false, false
	for _, k := range keys {
		switch v := m[k]; k {
		case "node":
			n, ok := v.(int64)
			if !ok {
				return fmt.Errorf("node: want an integer, got %s", tomlTypeOf(v))
			}
			if n < 0 || n > MaxNodes {
				return fmt.Errorf("node: must be in [0, %d], got %d", MaxNodes, n)
			}
			x.Node, hasNode = int(n), true
		case "at":
			if err := x.At.UnmarshalTOML(v); err != nil {
				return fmt.Errorf("at: %w", err)
			}
			hasAt = true
		case "progress":
			switch p := v.(type) {
			case float64:
				x.Progress = p
			case int64:
				x.Progress = float64(p)
			default:
				return fmt.Errorf("progress: want a number in [0, 1], got %s", tomlTypeOf(v))
			}
			x.ByProgress = true
		default:
			return fmt.Errorf("unknown key %q (want node, and at or progress)", k)
		}
	}
	switch {
	case !hasNode:
		return fmt.Errorf("missing node")
	case hasAt == x.ByProgress:
		return fmt.Errorf("want exactly one of at and progress")
	}
	*f = x
	return nil
}
