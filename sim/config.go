package sim

// FailureDist selects the failure process of the nodes.
type FailureDist int

// The failure processes.
const (
	NoFailures FailureDist = iota
	Exponential
	Weibull
	TraceFailures
	ScriptedFailures
)

// Placement maps objects onto the application's nodes.
type Placement int

// The placement policies.
const (
	// Block gives each node a contiguous range of object ids (neighbours share a node).
	Block Placement = iota
	// RoundRobin deals objects to nodes in turn.
	RoundRobin
)

// ScriptedFailure is one planned failure: of Node at time At, or when the
// workload's progress first reaches Progress (a fraction in [0, 1]).
type ScriptedFailure struct {
	Node       NodeID
	At         Time
	Progress   float64
	ByProgress bool
}

// Config is the cluster in simulator units. The experiment layer builds it from a
// scenario; tests build it directly.
type Config struct {
	Nodes, Spares, Cores int
	Rate                 float64 // operations per second per core
	Memory               int64   // bytes per node (for reporting memory pressure)
	SpareBoot            Time    // a spare is usable this long after it is taken
	Repair               Time    // a failed node rejoins the spare pool after this (not before its failure is detected, nor while it is in the slots); 0 = never
	// WaitForRepair has a job relaunched as a whole (Replacer: none, cpr,
	// every protocol's restart from scratch) wait, when the pool holds no
	// spare, for repaired nodes to refill its allocation rather than
	// restart on the survivors, as a resource manager requeueing the job
	// would. It needs Repair > 0, or the job would wait for ever.
	WaitForRepair bool
	Placement     Placement

	Latency   Time
	Bandwidth float64 // bytes/s per interface and direction
	CPULoad   float64 // fraction of a core a transfer at full bandwidth keeps busy, each end
	// MessageCPU is the CPU time a message costs at each end whatever its
	// size (LogP's overhead o), on top of CPULoad's share of its bytes.
	MessageCPU Time
	Topology   Topology // nil: flat, Latency between any two nodes
	// Jitter is the mean of an exponentially distributed delay added to the
	// head of every message and transfer between two nodes (operating
	// system and switch noise); 0 = none. A node's messages keep their
	// order: a head never arrives before that of one its sender sent
	// earlier. With heartbeats it delays each heartbeat (the period must
	// then be at least HBJitterMargin mean jitters): the last one a failed
	// node sent, and so the failure's detection, and in a run with failures
	// one that comes too late makes the monitor suspect and fence a live
	// node (heartbeat.go).
	Jitter Time

	MemBandwidth, DiskBandwidth    float64
	PFSBandwidth, PFSNodeBandwidth float64 // aggregate, and per-writer cap (0 = none)
	PFSLatency                     Time

	Failures     FailureDist
	NodeMTBF     Time
	WeibullShape float64
	// InService makes the application's nodes start as nodes in service
	// rather than new: each one's first Weibull lifetime is the residual life
	// of a stationary failure process, met at a random time. Spares, and
	// the replacements they become, are new (their clock starts when they
	// are taken). Exponential lifetimes have no age, so it changes nothing
	// there.
	InService bool
	Planned   []ScriptedFailure // the trace or the script
	Downtime  Time              // after a detection, recovery waits at least this long (reboot, reconfiguration)
	// GroupSize and GroupMTBF add correlated failures: nodes are grouped in
	// failure domains of GroupSize consecutive nodes (a chassis, a rack,
	// a power domain), and each domain fails as a whole, taking every one
	// of its powered-on nodes at once, at exponential intervals of mean
	// GroupMTBF, on top of the nodes' own failures. 0 = no group failures;
	// none either when Failures is NoFailures.
	GroupSize int
	GroupMTBF Time

	OracleDetection bool // fixed detection delay instead of heartbeats
	DetectDelay     Time
	HBPeriod        Time
	HBTimeout       Time
	HBBytes         int64

	Limit Time   // stop the simulation at this time if the workload has not finished; 0 = never
	Seed  uint64 // the run seed all random streams derive from
	// StallEvents ends the run, reported unfinished, when this many events
	// run at one simulated instant: handlers that answer each other at no
	// cost in time would otherwise loop without end, and Limit never comes.
	// 0 = DefaultStallEvents.
	StallEvents uint64
	// MaxFailures ends the run, reported unrecoverable, when this many
	// failures have struck: failures faster than any recovery (spares that
	// fail while they boot, a monitor that fences every node within a few
	// heartbeats) would otherwise run to Limit, holding a record of each.
	// 0 = DefaultMaxFailures.
	MaxFailures int
}

// DefaultStallEvents is the default Config.StallEvents, far above what a
// legitimate instant holds: every object of a 100,000-node run acting at
// once makes a few hundred thousand events.
const DefaultStallEvents = 100_000_000

// DefaultMaxFailures is the default Config.MaxFailures, far above what a
// run that can finish meets: the 100,000-node exascale day has 85
// failures, a year of it at its one-hour platform MTBF 8,760.
const DefaultMaxFailures = 1_000_000

// HBJitterMargin is how many mean network jitters a heartbeat period must
// be at least. The detector times each heartbeat's delay on its own (no
// heartbeat is held behind a late one, as messages between two nodes are),
// which holds while a delay beyond the next heartbeat has a chance of
// e^{−20} or less.
const HBJitterMargin = 20

// DefaultConfig is a small, fast cluster: 4 single-core nodes at 1 Gop/s on a
// 10 GB/s, 1 µs network, no failures, oracle detection.
func DefaultConfig() Config {
	return Config{
		Nodes: 4, Cores: 1, Rate: 1e9, Memory: 64 << 30,
		Latency: Microsecond, Bandwidth: 10e9,
		MemBandwidth: 10e9, DiskBandwidth: 500e6, PFSBandwidth: 100e9, PFSLatency: Millisecond,
		OracleDetection: true, HBPeriod: Second, HBTimeout: 3 * Second, HBBytes: 64,
		Seed: 1,
	}
}
