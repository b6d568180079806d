package experiment

import (
	"fmt"

	"ftsim/scenarios"
	"ftsim/sim"
)

// Point is one scenario ready to run: its workload built (and its sequential
// reference computed) once, its fault-free times measured once.
type Point struct {
	Scenario  *scenarios.Scenario
	workload  sim.Workload
	protocol  protocolMaker
	Baseline  sim.Time // no protocol, no failures
	FaultFree sim.Time // this protocol, no failures
	// FaultFreeStats are the counters of the fault-free run with the protocol
	// (checkpoint count and time feed the predictions).
	FaultFreeStats sim.Stats
	ffProto        sim.Protocol
}

// Prepare builds a scenario's workload and protocol and runs its two
// fault-free references. Errors name the scenario file, line and key.
func Prepare(s *scenarios.Scenario) (_ *Point, err error) {
	defer recoverAsError(&err, nil) // building a workload computes its reference
	if _, err := buildProtocol(s); err != nil {
		return nil, err // before the costly fault-free run
	}
	b, err := prepareBase(s, nil)
	if err != nil {
		return nil, err
	}
	p, err := pointOn(s, b)
	if err != nil {
		return nil, err
	}
	p.setBase(b)
	return p, p.runFaultFree(nil)
}

// base is what points differing only in their protocol share: the workload
// (with its sequential reference) and the fault-free run without protocol.
type base struct {
	workload sim.Workload
	baseline sim.Time // 0 until run has run
	stats    sim.Stats
}

// prepareBase builds the workload and runs it without protocol or failures,
// on meter m (nil: none).
func prepareBase(s *scenarios.Scenario, m *meter) (*base, error) {
	b, err := newBase(s)
	if err == nil {
		err = b.run(s, m)
	}
	return b, err
}

// newBase builds s's workload, without running it.
func newBase(s *scenarios.Scenario) (*base, error) {
	if len(s.Protocols) > 0 {
		return nil, s.Errorf("protocols", "a scenario with [[protocols]] runs as a sweep, one point per entry")
	}
	w, err := buildWorkload(s)
	if err != nil {
		return nil, err
	}
	return &base{workload: w}, nil
}

// run runs the workload of s without protocol or failures, on meter m (nil:
// none), and records its makespan and counters.
func (b *base) run(s *scenarios.Scenario, m *meter) error {
	cfg, err := clusterConfig(s, 0)
	if err != nil {
		return err
	}
	cfg.Failures, cfg.Planned = sim.NoFailures, nil
	rt, err := sim.New(cfg, b.workload, buildNone())
	if err != nil {
		return err
	}
	res, err := m.run(rt)
	if err != nil {
		return fmt.Errorf("%s: the fault-free run without protocol: %w", s.Name, err)
	}
	if !res.Finished || !res.Outcome.OK {
		return fmt.Errorf("%s: the fault-free run without protocol did not reproduce the reference: %s", s.Name, res.Outcome.Detail)
	}
	b.baseline, b.stats = res.Makespan, res.Stats
	return nil
}

// pointOn builds s's protocol on a base built for a scenario that differs
// from s at most in its protocol. The point has no baseline until setBase.
func pointOn(s *scenarios.Scenario, b *base) (*Point, error) {
	mk, err := buildProtocol(s)
	if err != nil {
		return nil, err
	}
	return &Point{Scenario: s, workload: b.workload, protocol: mk}, nil
}

// setBase gives p the baseline of b, which is also p's fault-free time and
// counters until runFaultFree has run (for good, without protocol).
func (p *Point) setBase(b *base) {
	p.Baseline = b.baseline
	if p.ffProto == nil {
		p.FaultFree, p.FaultFreeStats = b.baseline, b.stats
	}
}

// runFaultFree runs the point's protocol without failures and records its
// fault-free time and counters (nothing to run without a protocol), on
// meter m (nil: none).
func (p *Point) runFaultFree(m *meter) error {
	s := p.Scenario
	if s.Protocol.Kind() == "none" {
		return nil
	}
	cfg, err := clusterConfig(s, 0)
	if err != nil {
		return err
	}
	cfg.Failures, cfg.Planned = sim.NoFailures, nil
	if cfg.Limit == 0 {
		// a protocol whose own work leaves the application no progress
		// (protocol CPU work beyond the cores' capacity) would otherwise
		// simulate, and hold its queued work, for ever
		cfg.Limit = safetyLimit(p.Baseline)
	}
	proto := p.protocol()
	rt, err := sim.New(cfg, p.workload, proto)
	if err != nil {
		return err
	}
	ff, err := m.run(rt)
	if err != nil {
		return fmt.Errorf("%s: the fault-free run with protocol %s: %w", s.Name, s.Protocol.Label(), err)
	}
	if ff.AtLimit && s.DurationLimit == 0 {
		return &NoProgressError{Scenario: s.Name, Protocol: s.Protocol.Label(), Limit: cfg.Limit}
	}
	if !ff.Finished || !ff.Outcome.OK {
		return fmt.Errorf("%s: the fault-free run with protocol %s did not reproduce the reference: %s", s.Name, s.Protocol.Label(), ff.Outcome.Detail)
	}
	p.ffProto, p.FaultFree, p.FaultFreeStats = proto, ff.Makespan, ff.Stats
	return nil
}

// NoProgressError reports a fault-free run with a protocol that did not end
// within SafetyFactor times the run without protocol: the protocol's work
// leaves the application (almost) no progress on this machine.
type NoProgressError struct {
	Scenario, Protocol string
	Limit              sim.Time
}

// Error says which protocol left no progress, and the limit it passed.
func (e *NoProgressError) Error() string {
	return fmt.Sprintf("%s: the fault-free run with protocol %s did not end within %v (%d times the run without protocol, at most %d years): "+
		"the protocol's work leaves the application no progress on this machine (checkpoints far costlier than the computation between them?)",
		e.Scenario, e.Protocol, e.Limit, SafetyFactor, sim.MaxYears)
}

// limitFromFaultFree reports whether the runs' duration limit derives from the
// fault-free time (the scenario sets no duration_limit): they cannot start
// before runFaultFree has run.
func (p *Point) limitFromFaultFree() bool { return p.Scenario.DurationLimit == 0 }

// simulate runs p's workload under the protocol mk makes on cfg, on meter m
// (nil: none) and traced to tr (nil: not traced); a panic becomes an error
// naming the scenario and the seed.
func (p *Point) simulate(cfg sim.Config, mk protocolMaker, m *meter, tr sim.Tracer) (sim.Result, error) {
	rt, err := sim.New(cfg, p.workload, mk())
	if err != nil {
		return sim.Result{}, err
	}
	if tr != nil {
		rt.SetTracer(tr)
	}
	res, err := m.run(rt)
	if err != nil {
		return res, fmt.Errorf("%s, seed %d: %w", p.Scenario.Name, cfg.Seed, err)
	}
	return res, nil
}

// Seed is the seed of replication rep: replication r of every point and every
// protocol uses the same seed, hence the same failure trace (common random
// numbers).
func (p *Point) Seed(rep int) uint64 { return uint64(p.Scenario.Seed) + uint64(rep) }

// SafetyFactor bounds a run without duration_limit to this many times the
// fault-free time: a protocol that cannot make progress (or failures so
// frequent that the run would never end) is reported unfinished instead of
// simulating forever.
const SafetyFactor = 1000

// safetyLimit is SafetyFactor times t, or sim.MaxDuration, the most a run
// simulates, if that is less (the product would not even fit a sim.Time).
func safetyLimit(t sim.Time) sim.Time {
	if t > sim.MaxDuration/SafetyFactor {
		return sim.MaxDuration
	}
	return SafetyFactor * t
}

// Run simulates replication rep.
func (p *Point) Run(rep int) (Record, error) {
	res, err := p.runRep(rep, nil)
	if err != nil {
		return Record{}, err
	}
	return newRecord(p, rep, p.Seed(rep), &res), nil
}

// runRep simulates replication rep on meter m (nil: none). It reads the
// fault-free time only when limitFromFaultFree; the record made from its
// result does.
func (p *Point) runRep(rep int, m *meter) (sim.Result, error) {
	cfg, err := p.runConfig(rep)
	if err != nil {
		return sim.Result{}, err
	}
	return p.simulate(cfg, p.protocol, m, nil)
}

// runConfig is the cluster of replication rep, with the duration limit of
// limitFromFaultFree when the scenario sets none.
func (p *Point) runConfig(rep int) (sim.Config, error) {
	cfg, err := clusterConfig(p.Scenario, p.Seed(rep))
	if err == nil && p.limitFromFaultFree() {
		cfg.Limit = safetyLimit(max(p.Baseline, p.FaultFree) + p.recoveryTime())
	}
	return cfg, err
}

// recoveryTime is the least time a failure costs before its recovery can
// start: its detection (at the latest, but for a jitter beyond its mean), a
// spare's boot and the downtime.
// Added to the fault-free time before the safety factor, it keeps runs of
// a short workload from stopping before their first failure is detected.
func (p *Point) recoveryTime() sim.Time {
	s := p.Scenario
	d := s.Detection.Delay
	if s.Detection.Mode != "oracle" {
		d = s.Detection.Timeout + s.Network.Latency + s.Network.Jitter
	}
	return sim.Time(d + s.Cluster.SpareBoot + s.Failures.Downtime)
}
