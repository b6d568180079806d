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
