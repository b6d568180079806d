package experiment

import (
	"fmt"
	"math"
	"testing"
)

// The MPI/FT Table 5.4 scenario, its sweep as shipped, on a tenth of its
// iterations (a tenth of each runtime: every iteration is the same): the
// runtimes with MPI/Pro and MPI/FT are the published ones to 2%, the
// middleware's overheads to 20%, and the overhead falls from the small
// grids to the largest, as published.
// Three figures of the scenario are calibrated, the rest is simulated
// (README, "MPI/FT middleware overhead without checkpoints").
func TestMPIFTOverheadScenario(t *testing.T) {
	published := []struct {
		grid            int
		pro, ft, overhd float64
	}{{2, 8.84, 9.26, 0.047}, {16, 8.97, 9.43, 0.052}, {100, 10.63, 11.17, 0.050}, {250, 20.75, 21.25, 0.024}}
	// the scenario's own sweep: width and height linked
	got := runEmbedded(t, "mpift-overhead", "workload.generations=1000")
	if len(got) != 2*len(published) {
		t.Fatalf("%d points, want %d", len(got), 2*len(published))
	}
	overhead := map[int]float64{}
	for _, p := range published {
		at := func(protocol string) Record {
			return got[fmt.Sprintf("protocol=%s;workload.width=%d;workload.height=%d", protocol, p.grid, p.grid)]
		}
		pro, ft := 10*at("mpi-pro").MakespanS, 10*at("mpi-ft").MakespanS
		overhead[p.grid] = at("mpi-ft").Overhead
		t.Logf("%d×%d: MPI/Pro %.3f s (published %.2f), MPI/FT %.3f s (%.2f), overhead %.4f (%.3f)",
			p.grid, p.grid, pro, p.pro, ft, p.ft, overhead[p.grid], p.overhd)
		if math.Abs(pro/p.pro-1) > 0.02 || math.Abs(ft/p.ft-1) > 0.02 || math.Abs(overhead[p.grid]/p.overhd-1) > 0.2 {
			t.Errorf("%d×%d: MPI/Pro %.3f s, MPI/FT %.3f s, overhead %.4f; published %.2f s, %.2f s, %.3f",
				p.grid, p.grid, pro, ft, overhead[p.grid], p.pro, p.ft, p.overhd)
		}
	}
	if !(overhead[250] < overhead[2] && overhead[250] < overhead[16]) {
		t.Errorf("overheads %v: the largest grid's is not the smallest", overhead)
	}
}
