package dps

import (
	"fmt"
	"math"
	"testing"

	"ftsim/sim"
	"ftsim/workloads/life"
)

// EveryProgress checkpoints each thread every k generations (the paper's
// iterations per checkpoint, Fig. 12): 8 Life tiles over 30 generations
// checkpoint 30/k times each (the last may be cut by the end of the run), each
// checkpoint carrying the tile's whole state; with a failure, recovery still
// ends with the reference answer.
func TestEveryProgress(t *testing.T) {
	for _, c := range []struct {
		name string
		k    int64
		plan []sim.ScriptedFailure
	}{
		{"every 5 generations", 5, nil},
		{"every 10 generations", 10, nil},
		{"every 3 generations, failure", 3, []sim.ScriptedFailure{{Node: 2, Progress: 0.5, ByProgress: true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := baseConfig()
			cfg.Failures = sim.ScriptedFailures
			cfg.Planned = c.plan
			pc := DefaultConfig()
			pc.Every, pc.EveryProgress = 0, c.k
			res, p := runDPS(t, cfg, lifeJob(t, "overlap"), pc)
			checkClean(t, c.name, res, p)
			tiles := int64(p.RT.NumObjects())
			state := metric(t, res, MetricStateBytes)
			if c.plan != nil {
				if p.C.Recovered != 2 || p.C.Checkpoints == 0 {
					t.Fatalf("%d recovered, %d checkpoints", p.C.Recovered, p.C.Checkpoints)
				}
				return
			}
			lo, hi := tiles*(30/c.k-1), tiles*(30/c.k)
			if p.C.Checkpoints < lo || p.C.Checkpoints > hi {
				t.Fatalf("%d checkpoints, want %d..%d", p.C.Checkpoints, lo, hi)
			}
			// no entries: the processed lists are EntryBytes each on top of the states
			if float64(p.C.CheckpointBytes) < float64(p.C.Checkpoints)*state/float64(tiles) {
				t.Fatalf("%d checkpoint bytes for %d checkpoints of %g-byte tiles", p.C.CheckpointBytes, p.C.Checkpoints, state/float64(tiles))
			}
		})
	}
}

// The measured checkpoint overhead against the §7 model (Fig. 12): a
// 4000×4000 modeled world at 2 bytes per cell (the paper's 32 MB checkpoint)
// in 4 bands on the paper's testbed, each band checkpointing its 8 MB every k
// generations. Against the same protocol without checkpoints, the overhead is
// CheckpointOverhead(8 MB, no lock, k) with c_b = 0.5/BW (cpu_load 0.25 at
// each end), scaled by the checkpoints that delay the run: the one due at the
// last generation starts as the run ends.
func TestCheckpointOverheadMatchesModel(t *testing.T) {
	const gens = 20
	job := func(t *testing.T) (*life.Workload, sim.Config) {
		p := life.DefaultParams()
		p.Width, p.Height, p.Generations, p.Graph = 64, 64, gens, "overlap"
		p.Boundary, p.Tiles = "dead", []int64{1, 4}
		p.ModeledWidth, p.ModeledHeight = 4000, 4000
		p.BytesPerCell, p.CellOps = 2, 400
		w, err := life.New(p, 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg := sim.DefaultConfig()
		cfg.Rate, cfg.Bandwidth, cfg.CPULoad, cfg.Latency = 360e6, PaperBandwidth, 0.25, 100*sim.Microsecond
		return w, cfg
	}
	run := func(t *testing.T, k int64) (sim.Result, *Protocol) {
		w, cfg := job(t)
		pc := DefaultConfig()
		pc.Every, pc.EveryProgress = 0, k
		res, p := runDPS(t, cfg, w, pc)
		checkClean(t, "life", res, p)
		return res, p
	}
	base, _ := run(t, 0)
	tcomp := 4000 * 1000 * 400 / 360e6 // a band's generation
	m := OverheadModel{ComputePerIteration: tcomp, Bandwidth: PaperBandwidth,
		CPUPerByte: CPUPerByteFromLoad(2*0.25, PaperBandwidth), Regime: ComputeBound}
	for _, k := range []int64{1, 2, 5, 10} {
		t.Run(fmt.Sprint("every ", k), func(t *testing.T) {
			res, p := run(t, k)
			measured := res.Makespan.Seconds()/base.Makespan.Seconds() - 1
			// the checkpoint of the last generation starts as the run ends
			if p.C.Checkpoints != 4*gens/k {
				t.Fatalf("%d checkpoints, want %d", p.C.Checkpoints, 4*gens/k)
			}
			model := m.CheckpointOverhead(8e6, 0, float64(k)) * float64(gens/k-1) / float64(gens/k)
			t.Logf("k = %d: measured %.4f, model %.4f", k, measured, model)
			if math.Abs(measured/model-1) > 0.05 {
				t.Fatalf("measured %.4f, model %.4f: more than 5%% apart", measured, model)
			}
		})
	}
}
