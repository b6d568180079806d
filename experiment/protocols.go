package experiment

import (
	"math"

	"ftsim/models/abft"
	"ftsim/models/cpr"
	"ftsim/models/dps"
	"ftsim/models/mlog"
	"ftsim/models/replication"
	"ftsim/scenarios"
	"ftsim/sim"
)

// cprParams are the [protocol] keys of kind "cpr".
type cprParams struct {
	Interval string             `toml:"interval"`     // fixed, iterations, young, daly, auto, hazard
	Period   scenarios.Duration `toml:"period"`       // fixed; first interval of auto
	Every    int64              `toml:"every"`        // iterations between checkpoints
	Tier     string             `toml:"tier"`         // single level: pfs, disk, memory, buddy
	Levels   []cprLevel         `toml:"levels"`       // multi-level, cheapest first
	Drain    bool               `toml:"drain"`        // false: record in-flight messages (LuNA-style)
	MaxLive  scenarios.Size     `toml:"max_live"`     // defer a checkpoint until live state ≤ this
	MaxWait  scenarios.Duration `toml:"max_wait"`     // ... for at most this long
	Image    scenarios.Size     `toml:"image"`        // process image per object saved besides the state (system-level checkpoints)
	Buddy    int64              `toml:"buddy_offset"` // the buddy tier's copy goes this many slots further in rank order
	Rebuild  bool               `toml:"rebuild"`      // after a restore from the buddy tier, copy the pieces that lost a copy again
	// Middleware is the middleware's CPU time per application message at each end (MPI/FT)
	Middleware scenarios.Duration `toml:"middleware_cpu"`
	// Substep is the length of the time steps a handler stands for: a checkpoint cuts handlers there (0: at their end)
	Substep scenarios.Duration `toml:"substep"`
}

type cprLevel struct {
	Tier  string `toml:"tier"`
	Every int64  `toml:"every"`
}

// PlatformMTBF is the mean time between failures of the whole application
// (node MTBF / nodes), or 0 when failures are not a renewal process. With
// group failures, a group's failure is one failure of the platform however
// many nodes it takes (one rollback, one recovery), so the rates of the
// nodes and of the groups that hold application nodes add; so does the rate
// at which the heartbeat monitor suspects, and fences, live nodes.
func PlatformMTBF(s *scenarios.Scenario) sim.Time {
	f, n := s.Failures, s.Cluster.Nodes
	switch f.Distribution {
	case "exponential", "weibull":
		fenced := float64(n) * FalseSuspicionRate(s)
		if f.GroupMTBF <= 0 && fenced == 0 {
			return sim.Time(f.NodeMTBF) / sim.Time(n)
		}
		return sim.Time(math.Round(float64(sim.Second) / (hardwareFailureRate(s) + fenced)))
	}
	return 0
}

// hardwareFailureRate is the rate of the application's node and group
// failures per second, with exponential or Weibull failures (else 0).
func hardwareFailureRate(s *scenarios.Scenario) float64 {
	f := s.Failures
	if f.Distribution != "exponential" && f.Distribution != "weibull" {
		return 0
	}
	return float64(s.Cluster.Nodes)/f.NodeMTBF.Seconds() + groupFailureRate(s)
}

// failureLaw is the law of the application's failures for the hazard
// policy: a node's lifetime (exponential: Weibull of shape 1), and on top of
// the nodes' own failures those of their failure domains and the fencing of
// live nodes, at constant rates (zero without exponential or Weibull
// failures).
func failureLaw(s *scenarios.Scenario) cpr.FailureLaw {
	f := s.Failures
	shape := 1.0
	switch f.Distribution {
	case "exponential":
	case "weibull":
		shape = f.WeibullShape
	default:
		return cpr.FailureLaw{}
	}
	return cpr.FailureLaw{Shape: shape, NodeMTBF: f.NodeMTBF.Seconds(), Extra: groupFailureRate(s) + float64(s.Cluster.Nodes)*FalseSuspicionRate(s)}
}

// groupFailureRate is the rate of the failures of the application's failure
// domains per second (0 without failures.group_mtbf).
func groupFailureRate(s *scenarios.Scenario) float64 {
	if f := s.Failures; f.GroupMTBF > 0 {
		return float64(appDomains(s)) / f.GroupMTBF.Seconds()
	}
	return 0
}

// FalseSuspicionRate is how often the heartbeat monitor suspects a live
// node, per node and second, in a run with failures: a heartbeat comes
// more than timeout − period later than the one before with a chance of
// ½·e^{−(timeout − period)/jitter} (sim/heartbeat.go). It is 0 without
// jitter, with an oracle detector, or without failures.
func FalseSuspicionRate(s *scenarios.Scenario) float64 {
	d, j := s.Detection, s.Network.Jitter
	if d.Mode != "heartbeat" || j <= 0 || s.Failures.Distribution == "none" {
		return 0
	}
	q := 0.5 * math.Exp(-float64(d.Timeout-d.Period)/float64(j))
	return q / d.Period.Seconds()
}

// appDomains is the number of failure domains that hold application nodes
// (the last one may hold spares too), or 0 without domains.
func appDomains(s *scenarios.Scenario) int {
	if size := s.Failures.GroupSize; size > 0 {
		return (s.Cluster.Nodes + size - 1) / size
	}
	return 0
}

func buildCPR(s *scenarios.Scenario) (protocolMaker, error) {
	cfg, err := cprConfig(s)
	if err != nil {
		return nil, err
	}
	return validMaker(cfg, cpr.New), nil
}

// validMaker is the maker of protocols newProto builds from cfg. The
// builder has already called newProto on cfg without error, so each call
// here succeeds too.
func validMaker[C any, P sim.Protocol](cfg C, newProto func(C) (P, error)) protocolMaker {
	return func() sim.Protocol {
		p, _ := newProto(cfg)
		return p
	}
}

// cprConfig decodes and validates a [protocol] section of kind "cpr".
func cprConfig(s *scenarios.Scenario) (cpr.Config, error) {
	sec := s.Protocol
	p := cprParams{Interval: "daly", Period: scenarios.Duration(10 * sim.Minute), Every: 10, Tier: "pfs", Drain: true, Buddy: 1, Rebuild: true}
	if err := sec.Decode(&p); err != nil {
		return cpr.Config{}, err
	}
	if err := checkOffset(s, "buddy_offset", p.Buddy); err != nil {
		return cpr.Config{}, err
	}
	if err := cprIntervalKeys(sec, p.Interval); err != nil {
		return cpr.Config{}, err
	}
	if !sec.Has("interval") {
		// A period or an iteration count alone says which policy is meant.
		switch {
		case sec.Has("period"):
			p.Interval = cpr.PolicyFixed
		case sec.Has("every"):
			p.Interval = cpr.PolicyIterations
		}
	}
	cfg := cpr.Config{Policy: p.Interval, Period: sim.Time(p.Period), Every: p.Every, NoDrain: !p.Drain,
		MaxLive: int64(p.MaxLive), MaxWait: sim.Time(p.MaxWait), PlatformMTBF: PlatformMTBF(s), Image: int64(p.Image),
		BuddyOffset: int(p.Buddy), NoRebuild: !p.Rebuild, MiddlewareCPU: sim.Time(p.Middleware), Substep: sim.Time(p.Substep)}
	if cfg.Policy == cpr.PolicyIterations && sec.Has("substep") {
		return cpr.Config{}, sec.Errorf("substep", "checkpoints at iteration boundaries (interval \"iterations\") wait for no handler: substep cuts handlers for checkpoints at times")
	}
	var err error
	if cfg.Levels, err = cprLevels(sec, p.Tier, p.Levels); err != nil {
		return cpr.Config{}, err
	}
	cfg.Law = failureLaw(s)
	if (cfg.Policy == cpr.PolicyYoung || cfg.Policy == cpr.PolicyDaly || cfg.Policy == cpr.PolicyAuto || cfg.Policy == cpr.PolicyHazard) && cfg.PlatformMTBF == 0 {
		// no failure rate to optimise for (no failures, a trace or a script):
		// fall back to the fixed period
		cfg.Policy = cpr.PolicyFixed
	}
	if _, err := cpr.New(cfg); err != nil {
		return cpr.Config{}, sec.Errorf("", "%v", err) // located at the key the message starts with
	}
	return cfg, nil
}

// cprLevels are the checkpoint levels of a [protocol] section: its tier or
// its levels (not both), with buddy_offset and rebuild only for a buddy tier.
func cprLevels(sec *scenarios.Section, tier string, levels []cprLevel) ([]cpr.Level, error) {
	if sec.Has("levels") && sec.Has("tier") {
		return nil, sec.Errorf("tier", "give tier or levels, not both")
	}
	var out []cpr.Level
	if len(levels) == 0 {
		t, err := cpr.ParseTier(tier)
		if err != nil {
			return nil, sec.Errorf("tier", "%v", err)
		}
		out = []cpr.Level{{Tier: t, Every: 1}}
	}
	for _, l := range levels {
		t, err := cpr.ParseTier(l.Tier)
		if err != nil {
			return nil, sec.Errorf("levels", "%v", err)
		}
		out = append(out, cpr.Level{Tier: t, Every: int(l.Every)})
	}
	cfg := cpr.Config{Levels: out}
	for _, key := range []string{"buddy_offset", "rebuild"} {
		if sec.Has(key) && !cfg.HasTier(cpr.Buddy) {
			return nil, sec.Errorf(key, "concerns the copies of the buddy tier, and no level is buddy")
		}
	}
	return out, nil
}

// cprIntervalKeys rejects the interval keys that the policy would ignore:
// only the iterations policy reads every, and every other one reads period
// (fixed and auto as their interval, young and daly as their fallback
// without a failure rate). Without interval, period alone means fixed and
// every alone iterations, so both together say nothing: the default, daly,
// would silently ignore both.
func cprIntervalKeys(sec *scenarios.Section, interval string) error {
	period, every := sec.Has("period"), sec.Has("every")
	switch {
	case !sec.Has("interval"):
		if period && every {
			return sec.Errorf("every", "give period (a checkpoint every period of time) or every (every so many iterations), not both")
		}
	case interval == cpr.PolicyIterations:
		if period {
			return sec.Errorf("period", "interval %q checkpoints every so many iterations (every), not every period of time", interval)
		}
	default:
		if every {
			return sec.Errorf("every", "every counts iterations, which only interval \"iterations\" uses, not %q", interval)
		}
	}
	return nil
}

// abftParams are the [protocol] keys of kind "abft": FTPIDA* on workload
// pida (thesis 004 ch. 3), critical-data replication on workload dp (ch. 4-5).
type abftParams struct {
	Interval    scenarios.Duration `toml:"interval"`     // pida: period c of the fault recovery messages
	FrameBytes  int64              `toml:"frame_bytes"`  // pida: modeled bytes per stack frame in a recovery message
	HeaderBytes int64              `toml:"header_bytes"` // pida: fixed part of a recovery message; dp: per stage of critical data
	AckBytes    int64              `toml:"ack_bytes"`    // pida: backupACK, workACK, "no work" notices
	UseSpares   bool               `toml:"use_spares"`   // false: rebuild a lost process on a survivor (its neighbour's / its copy holder's node)
}

func buildABFT(s *scenarios.Scenario) (protocolMaker, error) {
	sec := s.Protocol
	d := abft.DefaultConfig()
	p := abftParams{Interval: scenarios.Duration(d.Interval), FrameBytes: d.FrameBytes, HeaderBytes: d.HeaderBytes,
		AckBytes: d.AckBytes, UseSpares: d.UseSpares}
	if err := sec.Decode(&p); err != nil {
		return nil, err
	}
	switch s.Workload.Kind() {
	case "pida":
	case "dp":
		// Critical data rides on the application's own messages: there is no
		// period, and the stack-frame sizes of FTPIDA* mean nothing.
		for _, k := range []string{"interval", "frame_bytes", "ack_bytes"} {
			if sec.Has(k) {
				return nil, sec.Errorf(k, "protocol abft on workload dp replicates critical data with every iteration; %s applies to workload pida only", k)
			}
		}
		cfg := abft.DefaultDPConfig()
		if sec.Has("header_bytes") {
			cfg.HeaderBytes = p.HeaderBytes
		}
		if sec.Has("use_spares") {
			cfg.UseSpares = p.UseSpares
		}
		if _, err := abft.NewDP(cfg); err != nil {
			return nil, sec.Errorf("header_bytes", "%v", err)
		}
		return validMaker(cfg, abft.NewDP), nil
	default:
		return nil, sec.Errorf("kind", "protocol abft is application-specific: it needs workload.kind = \"pida\" (FTPIDA*) or \"dp\" (LCS, TSP, knapsack critical data), not %q", s.Workload.Kind())
	}
	cfg := abft.Config{Interval: sim.Time(p.Interval), FrameBytes: p.FrameBytes, HeaderBytes: p.HeaderBytes,
		AckBytes: p.AckBytes, UseSpares: p.UseSpares}
	if err := cfg.Validate(); err != nil {
		return nil, sec.Errorf("", "%v", err) // located at the key the message starts with
	}
	return func() sim.Protocol { return abft.New(cfg) }, nil
}

// dpsParams are the [protocol] keys of kind "dps".
type dpsParams struct {
	Backups       int64              `toml:"backups"`        // backup threads per stateful object
	Every         int64              `toml:"every"`          // checkpoint after this many handled messages (0 = off)
	EveryProgress int64              `toml:"every_progress"` // or once an object's progress (Life: generations) advanced this much (0 = off)
	Period        scenarios.Duration `toml:"period"`         // or every this much time (0 = off)
	AutoStateless bool               `toml:"auto_stateless"` // farm workers with no state get no backups
	Stateless     []int64            `toml:"stateless"`      // more stateless object ids
	Shrink        bool               `toml:"shrink"`         // a dead stateless worker's tasks go to the survivors (else it is re-created)
	HeaderBytes   int64              `toml:"header_bytes"`   // sequence number + operation id on every message
	EntryBytes    int64              `toml:"entry_bytes"`    // per entry of a checkpoint's processed list, and per determinant
	LogOrder      bool               `toml:"log_order"`      // log the handling order to the backups (default: on for pida, and for a farm with auto_stateless off)
	Spread        bool               `toml:"spread"`         // back a node's threads up on different nodes
	Offset        int64              `toml:"backup_offset"`  // the first backup is this many slots further in rank order
}

func buildDPS(s *scenarios.Scenario) (protocolMaker, error) {
	cfg, err := dpsConfig(s)
	if err != nil {
		return nil, err
	}
	return validMaker(cfg, dps.New), nil
}

// dpsConfig decodes and checks the [protocol] keys of kind "dps".
func dpsConfig(s *scenarios.Scenario) (dps.Config, error) {
	sec := s.Protocol
	d := dps.DefaultConfig()
	p := dpsParams{Backups: int64(d.Backups), Every: d.Every, Period: scenarios.Duration(d.Period),
		AutoStateless: d.AutoStateless, Shrink: d.Shrink, HeaderBytes: d.HeaderBytes, EntryBytes: d.EntryBytes, Offset: 1}
	if err := sec.Decode(&p); err != nil {
		return dps.Config{}, err
	}
	if !sec.Has("log_order") {
		// Threads whose outputs depend on the arrival order of concurrent
		// inputs, which re-execution in sequence-number order does not
		// reproduce (dps.Config.LogOrder): pida's workers answer work
		// requests by it, and a farm's master hands its next tile to the
		// worker whose result came first. With stateless workers the master
		// is the split, which restarts from its checkpoint and resends
		// instead of re-executing; with stateful ones it re-executes.
		p.LogOrder = s.Workload.Kind() == "pida" || s.Workload.Kind() == "farm" && !p.AutoStateless
	}
	if err := checkOffset(s, "backup_offset", p.Offset); err != nil {
		return dps.Config{}, err
	}
	cfg := dps.Config{Backups: int(p.Backups), Every: p.Every, EveryProgress: p.EveryProgress, Period: sim.Time(p.Period),
		AutoStateless: p.AutoStateless, Shrink: p.Shrink, HeaderBytes: p.HeaderBytes, EntryBytes: p.EntryBytes, LogOrder: p.LogOrder, Spread: p.Spread,
		Offset: int(p.Offset)}
	if len(p.Stateless) > 0 && s.Workload.Kind() != "farm" {
		return dps.Config{}, sec.Errorf("stateless", "stateless threads are a task farm's workers (workload farm), not %s's objects", s.Workload.Kind())
	}
	for i, id := range p.Stateless {
		if id < 0 || id > math.MaxInt32 {
			return dps.Config{}, sec.Errorf("stateless", "entry %d: %d is not an object id (0 to the workload's objects − 1)", i, id)
		}
		cfg.Stateless = append(cfg.Stateless, sim.ObjID(id))
	}
	if _, err := dps.New(cfg); err != nil {
		return dps.Config{}, sec.Errorf("", "%v", err) // located at the key the message starts with
	}
	// Only when asked for: the default single backup on a one-node cluster
	// has nowhere to go and quietly runs without.
	if sec.Has("backups") {
		if err := cfg.CheckNodes(s.Cluster.Nodes); err != nil {
			return dps.Config{}, sec.Errorf("", "%v", err)
		}
	}
	return cfg, nil
}

// mlogParams are the [protocol] keys of kind "mlog".
type mlogParams struct {
	Period      scenarios.Duration `toml:"period"`          // each node's buddy checkpoint period
	Restart     string             `toml:"restart"`         // "basic" or "fast"
	MaxLog      scenarios.Size     `toml:"max_log"`         // checkpoint early when a sender's log exceeds this (0 = off)
	HeaderBytes int64              `toml:"header_bytes"`    // SN/TN header on every application message
	TicketBytes int64              `toml:"ticket_bytes"`    // ticket request/reply, tuple, acknowledgement
	FullLog     bool               `toml:"full_log"`        // the whole log goes into the checkpoint (multiple-failure extension, first half)
	Priority    bool               `toml:"priority"`        // recovering objects run before a host's own objects
	Measure     bool               `toml:"measure_restart"` // report restart_s and iteration_s (the paper's Table 1 measure)
	Multi       bool               `toml:"multi_failure"`   // the whole multiple-failure extension (implies full_log)
	Buddy       int64              `toml:"buddy_offset"`    // the buddy is this many slots further in rank order
	Substep     scenarios.Duration `toml:"substep"`         // a checkpoint cuts handlers at these time steps (0: at their end)
	// the core time of the protocol's steps (mlog.CPUCosts)
	LogCPU           scenarios.Duration `toml:"log_cpu"`
	TicketRequestCPU scenarios.Duration `toml:"ticket_request_cpu"`
	TicketCPU        scenarios.Duration `toml:"ticket_cpu"`
	LocalCPU         scenarios.Duration `toml:"local_cpu"`
}

// checkOffset checks a key that places a node's copies that many slots
// further in rank order: from 1 (the next node) to nodes − 1 (the one before).
func checkOffset(s *scenarios.Scenario, key string, v int64) error {
	if hi := max(1, s.Cluster.Nodes-1); v < 1 || v > int64(hi) {
		return s.Protocol.Errorf(key, "must be in [1, %d] (1 to nodes − 1), got %d", hi, v)
	}
	return nil
}

func buildMlog(s *scenarios.Scenario) (protocolMaker, error) {
	cfg, err := mlogConfig(s)
	if err != nil {
		return nil, err
	}
	return validMaker(cfg, mlog.New), nil
}

// mlogConfig decodes and checks the [protocol] keys of kind "mlog".
func mlogConfig(s *scenarios.Scenario) (mlog.Config, error) {
	sec := s.Protocol
	d := mlog.DefaultConfig()
	p := mlogParams{Period: scenarios.Duration(d.Period), Restart: d.Restart, MaxLog: scenarios.Size(d.MaxLog),
		HeaderBytes: d.HeaderBytes, TicketBytes: d.TicketBytes, FullLog: d.FullLog, Priority: d.Priority, Buddy: 1}
	if err := sec.Decode(&p); err != nil {
		return mlog.Config{}, err
	}
	if err := checkOffset(s, "buddy_offset", p.Buddy); err != nil {
		return mlog.Config{}, err
	}
	cfg := mlog.Config{Period: sim.Time(p.Period), Restart: p.Restart, MaxLog: int64(p.MaxLog),
		HeaderBytes: p.HeaderBytes, TicketBytes: p.TicketBytes, FullLog: p.FullLog, Priority: p.Priority,
		MeasureRestart: p.Measure, MultiFailure: p.Multi, BuddyOffset: int(p.Buddy), Substep: sim.Time(p.Substep),
		CPU: mlog.CPUCosts{Log: sim.Time(p.LogCPU), TicketRequest: sim.Time(p.TicketRequestCPU),
			Ticket: sim.Time(p.TicketCPU), Local: sim.Time(p.LocalCPU)}}
	// multi_failure includes full_log (its receivers' tuples and the logs of
	// re-executing objects must outlive a second failure, mlog.Config), and
	// mlog.New turns it on: an explicit false would be overridden silently.
	if p.Multi && sec.Has("full_log") && !p.FullLog {
		return mlog.Config{}, sec.Errorf("full_log", "multi_failure = true needs the full log in every checkpoint: drop full_log = false or multi_failure")
	}
	if _, err := mlog.New(cfg); err != nil {
		return mlog.Config{}, sec.Errorf("", "%v", err) // located at the key the message starts with
	}
	return cfg, nil
}

// replicationParams are the [protocol] keys of kind "replication": the
// message header, and the checkpoints an interruption rolls back to (none
// by default: it restarts from scratch), with cpr's keys.
type replicationParams struct {
	HeaderBytes int64              `toml:"header_bytes"` // the sequence number on every message
	Interval    string             `toml:"interval"`     // none, fixed, young, daly, auto
	Period      scenarios.Duration `toml:"period"`       // fixed; first interval of auto
	Tier        string             `toml:"tier"`
	Levels      []cprLevel         `toml:"levels"`
	Image       scenarios.Size     `toml:"image"`
	Buddy       int64              `toml:"buddy_offset"`
	Rebuild     bool               `toml:"rebuild"`
	Restart     bool               `toml:"restart_replicas"` // Benoit et al.'s restart strategy
}

// replicationConfig decodes and checks the [protocol] keys of kind
// "replication".
func replicationConfig(s *scenarios.Scenario) (replication.Config, error) {
	sec := s.Protocol
	p := replicationParams{Interval: "none", Period: scenarios.Duration(10 * sim.Minute), Tier: "pfs", Buddy: 1, Rebuild: true}
	if err := sec.Decode(&p); err != nil {
		return replication.Config{}, err
	}
	switch k := s.Workload.Kind(); k {
	case "pida", "farm":
		// the first-copy rule needs both replicas of a sender to send the
		// same k-th message on an edge (replication's package comment)
		return replication.Config{}, sec.Errorf("kind", "replication runs deterministic objects twice, and %s's objects answer concurrent messages in their arrival order, so the two replicas of an object would diverge: use life, stencil, dp or synthetic", k)
	}
	if s.Cluster.Nodes < 2 {
		return replication.Config{}, sec.Errorf("kind", "replication puts the two replicas of an object on different nodes: cluster.nodes must be at least 2, not %d", s.Cluster.Nodes)
	}
	cfg := replication.Config{HeaderBytes: p.HeaderBytes, RestartReplicas: p.Restart}
	if !sec.Has("interval") && sec.Has("period") {
		p.Interval = cpr.PolicyFixed // a period alone says which policy is meant
	}
	switch p.Interval {
	case "none", cpr.PolicyFixed, cpr.PolicyYoung, cpr.PolicyDaly, cpr.PolicyAuto, policyBenoit:
	default:
		return replication.Config{}, sec.Errorf("interval", "replication checkpoints at intervals of time: none, fixed, young, daly, auto or benoit, not %q", p.Interval)
	}
	if p.Interval == "none" {
		for _, k := range []string{"period", "tier", "levels", "image", "buddy_offset", "rebuild", "restart_replicas"} {
			if sec.Has(k) {
				return replication.Config{}, sec.Errorf(k, "concerns checkpoints, and interval = \"none\" takes none (an interruption restarts the run from scratch): set interval")
			}
		}
	} else {
		if err := checkOffset(s, "buddy_offset", p.Buddy); err != nil {
			return replication.Config{}, err
		}
		c := cpr.Config{Policy: p.Interval, Period: sim.Time(p.Period), PlatformMTBF: replicationMTTI(s),
			Image: int64(p.Image), BuddyOffset: int(p.Buddy), NoRebuild: !p.Rebuild}
		var err error
		if c.Levels, err = cprLevels(sec, p.Tier, p.Levels); err != nil {
			return replication.Config{}, err
		}
		if c.Policy == policyBenoit {
			if !p.Restart {
				return replication.Config{}, sec.Errorf("interval", "%q is the period of the restart strategy: set restart_replicas = true", policyBenoit)
			}
			c.Policy, c.IntervalFor = cpr.PolicyGiven, benoitInterval(s)
		}
		if (c.Policy == cpr.PolicyYoung || c.Policy == cpr.PolicyDaly || c.Policy == cpr.PolicyAuto || c.Policy == cpr.PolicyGiven) && c.PlatformMTBF == 0 {
			c.Policy = cpr.PolicyFixed // no failure rate to optimise for: the fixed period
		}
		cfg.Checkpoint = &c
	}
	if _, err := replication.New(cfg); err != nil {
		return replication.Config{}, sec.Errorf("", "%v", err) // located at the key the message starts with
	}
	return cfg, nil
}

// policyBenoit is replication's interval policy of the restart strategy
// (replication.RestartPeriod).
const policyBenoit = "benoit"

// benoitInterval is the restart strategy's first-order optimal period for a
// checkpoint cost c on the scenario's b = N/2 node pairs, from the nodes'
// mean time between failures.
func benoitInterval(s *scenarios.Scenario) func(c sim.Time) sim.Time {
	lambda := 1 / sim.Time(s.Failures.NodeMTBF).Seconds()
	b := s.Cluster.Nodes / 2
	return func(c sim.Time) sim.Time {
		return sim.FromSeconds(replication.RestartPeriod(c.Seconds(), lambda, b))
	}
}

// replicationMTTI is the mean time to interruption of the scenario's node
// pairs that young and daly take in place of the platform MTBF: Casanova et
// al.'s, from the nodes' mean time between failures (exact for independent
// exponential failures, an approximation otherwise), or 0 when failures are
// not a renewal process.
func replicationMTTI(s *scenarios.Scenario) sim.Time {
	if PlatformMTBF(s) == 0 || s.Cluster.Nodes < 2 {
		return 0
	}
	return replication.MTTI(sim.Time(s.Failures.NodeMTBF), s.Cluster.Nodes/2)
}

func buildReplication(s *scenarios.Scenario) (protocolMaker, error) {
	cfg, err := replicationConfig(s)
	if err != nil {
		return nil, err
	}
	return validMaker(cfg, replication.New), nil
}
