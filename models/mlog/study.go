package mlog

import (
	"fmt"

	"ftsim/sim"
)

// RestartMeasure is the outcome of one restart experiment.
type RestartMeasure struct {
	// Restart is the paper's measure: the largest increase in iteration time
	// among the objects of the surviving nodes.
	Restart sim.Time
	// Iteration is the median iteration time before the failure.
	Iteration sim.Time
	Result    sim.Result
	Stats     Counters
}

// MeasureRestart runs workload wl under protocol configuration pc on cluster
// cfg with one failure of node, after the given time past the first periodic
// checkpoint (at pc.Period), and measures the restart time as the paper does
// (Table 1: after = 27 s with a 30 s period). The workload's progress unit
// must be its iteration (the stencil's and Life's are).
func MeasureRestart(cfg sim.Config, wl sim.Workload, pc Config, node sim.NodeID, after sim.Time) (RestartMeasure, error) {
	pc.MeasureRestart = true // the protocol attaches the probe in Init
	p, err := New(pc)
	if err != nil {
		return RestartMeasure{}, err
	}
	cfg.Failures = sim.ScriptedFailures
	cfg.Planned = []sim.ScriptedFailure{{Node: node, At: pc.Period + after}}
	rt, err := sim.New(cfg, wl, p)
	if err != nil {
		return RestartMeasure{}, err
	}
	res := rt.Run()
	m := RestartMeasure{Restart: p.Probe.RestartTime(), Iteration: p.Probe.IterationTime(), Result: res, Stats: p.Stats}
	switch {
	case !res.Finished || !res.Outcome.OK:
		return m, fmt.Errorf("mlog restart experiment: finished %v, outcome %+v", res.Finished, res.Outcome)
	case res.Stats.Failures != 1 || p.Stats.Restarts != 1:
		return m, fmt.Errorf("mlog restart experiment: %d failures, %d restarts (the run must outlast the failure)", res.Stats.Failures, p.Stats.Restarts)
	}
	return m, nil
}
