package mlog

import (
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
