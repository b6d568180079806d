package mlog

import (
	"slices"
	"testing"

	"ftsim/sim"
)

// A checkpoint pauses the node's objects while their package is copied into
// a buffer at memory bandwidth (the duration d of t_ml = αt0(1 + d/c)): the
// pauses add up to the bytes over the bandwidth (each copy rounded up to the
// nanosecond, none queued behind another write), and a slower memory slows
// the run down. Before, a checkpoint cost the application nothing but its
// traffic, while cpr's paid for its copy.
func TestCheckpointPausesForTheCopy(t *testing.T) {
	var makespans []sim.Time
	for _, bw := range []float64{1e11, 1e9} {
		cfg := testCluster(4)
		cfg.MemBandwidth = bw
		base := runWith(t, cfg, stencilJob(t, 4, 2, 40), &plain{})
		pc := DefaultConfig()
		pc.Period = base.Makespan / 5
		p := mustNew(t, pc)
		res := runWith(t, cfg, stencilJob(t, 4, 2, 40), p)
		st := res.Stats
		want := sim.FromSeconds(float64(st.CheckpointBytes) / bw)
		if st.Checkpoints == 0 || st.CheckpointTime < want || st.CheckpointTime > want+sim.Time(st.Checkpoints) {
			t.Errorf("memory at %g B/s: %d checkpoints of %d bytes paused the objects %v, want %v", bw, st.Checkpoints, st.CheckpointBytes, st.CheckpointTime, want)
		}
		makespans = append(makespans, res.Makespan)
	}
	if makespans[1] <= makespans[0] {
		t.Errorf("makespan %v with a slow memory, %v with a fast one", makespans[1], makespans[0])
	}
}

// logTo finds a receiver's entries in a checkpoint's log, sorted by receiver
// then SN, and nothing for a receiver it has none for.
func TestCheckpointLogTo(t *testing.T) {
	ck := &objCkpt{log: []entry{{dst: 1, sn: 1}, {dst: 1, sn: 2}, {dst: 3, sn: 1}, {dst: 3, sn: 4}, {dst: 3, sn: 5}, {dst: 5, sn: 9}}}
	tests := []struct {
		dst sim.ObjID
		sns []uint64
	}{
		{0, nil},
		{1, []uint64{1, 2}},
		{2, nil},
		{3, []uint64{1, 4, 5}},
		{5, []uint64{9}},
		{6, nil},
	}
	for _, tt := range tests {
		var sns []uint64
		for _, e := range ck.logTo(tt.dst) {
			if e.dst != tt.dst {
				t.Fatalf("logTo(%d) has an entry to %d", tt.dst, e.dst)
			}
			sns = append(sns, e.sn)
		}
		if !slices.Equal(sns, tt.sns) {
			t.Errorf("logTo(%d): SNs %v, want %v", tt.dst, sns, tt.sns)
		}
	}
}

// With substep, a node's checkpoint cuts its objects' handlers at their
// next time step instead of waiting for their end, so that a period shorter
// than the handlers is kept: here 0.1 s against handlers of 0.35 s, which
// round the period up to the handler without it. The messages the cut
// handlers had logged but not sent go back with their SNs (the receivers'
// windows of SNs stay dense, and the answer is right), and the run under a
// failure ends with the reference answer too.
func TestSubstepKeepsThePeriod(t *testing.T) {
	run := func(substep sim.Time, fail bool) (sim.Result, Counters) {
		cfg := testCluster(4)
		if fail {
			cfg.Failures, cfg.Planned = sim.ScriptedFailures, []sim.ScriptedFailure{{Node: 2, Progress: 0.5, ByProgress: true}}
		}
		pc := DefaultConfig()
		pc.Period, pc.Substep, pc.MultiFailure = 100*sim.Millisecond, substep, true
		p := mustNew(t, pc)
		res := runWith(t, cfg, longStepJob(t, false, false), p)
		return res, p.Stats
	}
	whole, wc := run(0, false)
	cut, cc := run(sim.Millisecond, false)
	t.Logf("checkpoints %d (cuts %d, %d messages given back) in %v with substep, %d in %v without", cc.Checkpoints, cc.Cuts, cc.Returned, cut.Makespan, wc.Checkpoints, whole.Makespan)
	if wc.Cuts != 0 || cc.Cuts == 0 || cc.Returned == 0 {
		t.Fatalf("cuts: %d without substep, %d (%d messages given back) with it", wc.Cuts, cc.Cuts, cc.Returned)
	}
	// 4 nodes, one checkpoint a period each (less the time a checkpoint takes)
	if want := 4 * int64(cut.Makespan/(100*sim.Millisecond)); cc.Checkpoints < want*8/10 || cc.Checkpoints > want {
		t.Errorf("%d checkpoints with substep in %v, want about %d", cc.Checkpoints, cut.Makespan, want)
	}
	if cc.Checkpoints < 2*wc.Checkpoints {
		t.Errorf("%d checkpoints with substep, %d without: the period was not kept", cc.Checkpoints, wc.Checkpoints)
	}
	res, fc := run(sim.Millisecond, true)
	if res.Stats.Failures != 1 || fc.Restarts != 1 || fc.Cuts == 0 {
		t.Errorf("under a failure: %d failures, %d restarts, %d cuts", res.Stats.Failures, fc.Restarts, fc.Cuts)
	}
}
