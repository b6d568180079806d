package mlog

import (
	"testing"

	"ftsim/sim"
	"ftsim/workloads/stencil"
)

// longStepJob is a 4-node stencil of 0.35 s handlers (macro-steps longer
// than the tests' checkpoint periods), with a global sum every iteration
// (reduce), coupled (sim.Coupler) or not.
func longStepJob(t *testing.T, reduce, coupled bool) sim.Workload {
	t.Helper()
	p := stencil.DefaultParams()
	p.NX, p.NY, p.NZ, p.Iterations, p.BlocksPerNode = 24, 24, 24, 12, 1
	p.ModeledNX, p.ModeledNY, p.ModeledNZ = 240, 240, 240
	p.PointOps = 100 // 3.456 M points a block: 0.35 s a handler at 1 Gop/s
	p.Reduce, p.Coupled = reduce, coupled
	w, err := stencil.New(p, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// In a coupled application two failures in the same macro-step cost what
// each costs alone, added up, as they would in the real code whose global
// sum every time step holds every node while a failed one catches up;
// uncoupled, the second hides behind the first (the others wait for both
// only at the macro-step's end).
func TestCoupledFailuresAddUp(t *testing.T) {
	run := func(coupled bool, fails ...sim.ScriptedFailure) sim.Time {
		cfg := testCluster(4)
		if len(fails) > 0 {
			cfg.Failures, cfg.Planned = sim.ScriptedFailures, fails
		}
		pc := DefaultConfig()
		pc.Period, pc.Substep, pc.MultiFailure = 100*sim.Millisecond, sim.Millisecond, true
		res := runWith(t, cfg, longStepJob(t, true, coupled), mustNew(t, pc))
		if res.Stats.Failures != len(fails) {
			t.Fatalf("%d failures, want %d", res.Stats.Failures, len(fails))
		}
		return res.Makespan
	}
	first := sim.ScriptedFailure{Node: 1, At: 1430 * sim.Millisecond}
	second := sim.ScriptedFailure{Node: 2, At: 1650 * sim.Millisecond}
	var bases [2]sim.Time
	for i, coupled := range []bool{false, true} {
		base := run(coupled)
		bases[i] = base
		x1, x2, x12 := run(coupled, first)-base, run(coupled, second)-base, run(coupled, first, second)-base
		t.Logf("coupled %v: fault-free %v, the first failure alone +%v, the second +%v, both +%v", coupled, base, x1, x2, x12)
		sum := float64(x1 + x2)
		if coupled && (float64(x12) < 0.9*sum || x12 > x1+x2+sim.Millisecond) {
			t.Errorf("coupled: both failures cost %v, alone %v and %v: they should add up", x12, x1, x2)
		}
		if !coupled && float64(x12) > 0.85*sum {
			t.Errorf("uncoupled: both failures cost %v, alone %v and %v: the second should hide behind the first", x12, x1, x2)
		}
	}
	if bases[0] != bases[1] {
		t.Errorf("fault-free makespans %v uncoupled, %v coupled: the coupling acts only on failures", bases[0], bases[1])
	}
}
