package dps

import (
	"math"
	"testing"
)

func relClose(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

var paperCPUPerByte = CPUPerByteFromLoad(PaperCPULoad, PaperBandwidth) // 0.5/9e6 s/B

func TestDuplicationHandComputed(t *testing.T) {
	tests := []struct {
		name                   string
		m                      OverheadModel
		wantIter, wantDT, want float64
	}{
		// Game of Life with 1 MB extra borders to each of 2 neighbours (Fig. 10 setup,
		// 10⁶-byte MB): each border object is also sent to the backup, B_dup = 2·10⁶ B.
		// CPU cost 2e6·0.5/9e6 = 1/9 s per 1 s iteration.
		{"compute_bound", OverheadModel{CommCompRatio: 2.0 / 9, ComputePerIteration: 1,
			Bandwidth: PaperBandwidth, CPUPerByte: paperCPUPerByte, DuplicateBytesPerIteration: 2e6, Regime: ComputeBound},
			1, 1.0 / 9, 1.0 / 9},
		// Communication-bound, ρ = 1.5: the iteration lasts 1.5 s and the full transfer
		// 2e6/9e6 = 2/9 s is added: O = (2/9)/1.5 = 4/27.
		{"comm_bound", OverheadModel{CommCompRatio: 1.5, ComputePerIteration: 1,
			Bandwidth: PaperBandwidth, CPUPerByte: paperCPUPerByte, DuplicateBytesPerIteration: 2e6, Regime: CommunicationBound},
			1.5, 2.0 / 9, 4.0 / 27},
		// Overlapped, CPU path dominant throughout: same as compute-bound.
		{"overlapped_cpu", OverheadModel{CommCompRatio: 2.0 / 9, ComputePerIteration: 1,
			Bandwidth: PaperBandwidth, CPUPerByte: paperCPUPerByte, DuplicateBytesPerIteration: 2e6, Regime: Overlapped},
			1, 1.0 / 9, 1.0 / 9},
		// Overlapped, network dominant throughout: same as communication-bound.
		{"overlapped_net", OverheadModel{CommCompRatio: 1.5, ComputePerIteration: 1,
			Bandwidth: PaperBandwidth, CPUPerByte: paperCPUPerByte, DuplicateBytesPerIteration: 2e6, Regime: Overlapped},
			1.5, 2.0 / 9, 4.0 / 27},
		// Overlapped crossover: T_comp = 1, ρ = 0.9, BW = 10⁶, c_b = 0.5e-6, B_dup = 3·10⁵:
		// CPU path 1 + 0.15, network path 0.9 + 0.3 → 1.2 − 1 = 0.2 added (compute-bound
		// would predict 0.15, communication-bound 0.3).
		{"overlapped_crossover", OverheadModel{CommCompRatio: 0.9, ComputePerIteration: 1,
			Bandwidth: 1e6, CPUPerByte: 0.5e-6, DuplicateBytesPerIteration: 3e5, Regime: Overlapped},
			1, 0.2, 0.2},
		// A cost per message (ftsim's, not the paper's): 20 duplicates of
		// 10⁵ B at c_m = 2·500 µs add 20 ms of CPU to the compute-bound 1/9 s.
		{"compute_bound_per_message", OverheadModel{CommCompRatio: 2.0 / 9, ComputePerIteration: 1,
			Bandwidth: PaperBandwidth, CPUPerByte: paperCPUPerByte, DuplicateBytesPerIteration: 2e6,
			CPUPerMessage: 1e-3, DuplicatesPerIteration: 20, Regime: ComputeBound},
			1, 1.0/9 + 0.02, 1.0/9 + 0.02},
		// ... and nothing to the communication-bound transfer time.
		{"comm_bound_per_message", OverheadModel{CommCompRatio: 1.5, ComputePerIteration: 1,
			Bandwidth: PaperBandwidth, CPUPerByte: paperCPUPerByte, DuplicateBytesPerIteration: 2e6,
			CPUPerMessage: 1e-3, DuplicatesPerIteration: 20, Regime: CommunicationBound},
			1.5, 2.0 / 9, 4.0 / 27},
		// Overlapped crossover again: 15 messages at 10 ms make the CPU path
		// 1 + 0.15 + 0.15, longer than the network path's 0.9 + 0.3: 0.3 added.
		{"overlapped_crossover_per_message", OverheadModel{CommCompRatio: 0.9, ComputePerIteration: 1,
			Bandwidth: 1e6, CPUPerByte: 0.5e-6, DuplicateBytesPerIteration: 3e5,
			CPUPerMessage: 0.01, DuplicatesPerIteration: 15, Regime: Overlapped},
			1, 0.3, 0.3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.IterationTime(); !relClose(got, tc.wantIter, 1e-14) {
				t.Errorf("IterationTime = %.15g, want %.15g", got, tc.wantIter)
			}
			if got := tc.m.DuplicationTime(); !relClose(got, tc.wantDT, 1e-12) {
				t.Errorf("DuplicationTime = %.15g, want %.15g", got, tc.wantDT)
			}
			if got := tc.m.DuplicationOverhead(); !relClose(got, tc.want, 1e-12) {
				t.Errorf("DuplicationOverhead = %.15g, want %.15g", got, tc.want)
			}
		})
	}
}

func TestDuplicationProportionalToRatio(t *testing.T) {
	// Fig. 10: with every application object duplicated (f = 1), the compute-bound
	// overhead is f·ρ·load = 0.5·ρ on the paper's testbed, whatever T_comp is.
	for _, tcomp := range []float64{0.1, 1, 7} {
		for _, rho := range []float64{0.003, 0.05, 0.1, 0.2, 0.4, 0.8} {
			m := OverheadModel{
				CommCompRatio:              rho,
				ComputePerIteration:        tcomp,
				Bandwidth:                  PaperBandwidth,
				CPUPerByte:                 paperCPUPerByte,
				DuplicateBytesPerIteration: DuplicateBytesForRatio(rho, tcomp, PaperBandwidth, 1),
				Regime:                     ComputeBound,
			}
			if got := m.DuplicationOverhead(); !relClose(got, PaperCPULoad*rho, 1e-12) {
				t.Errorf("T_comp=%g ρ=%g: overhead %g, want %g", tcomp, rho, got, PaperCPULoad*rho)
			}
			// Doubling the ratio doubles the overhead.
			m2 := m
			m2.CommCompRatio = 2 * rho
			m2.DuplicateBytesPerIteration = 2 * m.DuplicateBytesPerIteration
			if a, b := m2.DuplicationOverhead(), 2*m.DuplicationOverhead(); !relClose(a, b, 1e-12) {
				t.Errorf("T_comp=%g ρ=%g: overhead(2ρ) %g vs 2·overhead(ρ) %g", tcomp, rho, a, b)
			}
		}
	}
	// Communication-bound limit: duplicating everything adds the fraction f itself.
	m := OverheadModel{CommCompRatio: 3, ComputePerIteration: 1, Bandwidth: 1e8, CPUPerByte: 1e-9,
		DuplicateBytesPerIteration: DuplicateBytesForRatio(3, 1, 1e8, 0.5), Regime: CommunicationBound}
	if got := m.DuplicationOverhead(); !relClose(got, 0.5, 1e-12) {
		t.Errorf("communication-bound overhead %g, want f = 0.5", got)
	}
	if got := CommCompRatio(2e6, PaperBandwidth, 1); !relClose(got, 2.0/9, 1e-14) {
		t.Errorf("CommCompRatio = %g, want 2/9", got)
	}
}

func TestCheckpointOverhead(t *testing.T) {
	// Fig. 12 setup: 32 MB of state for the 4000×4000 world, spread over N nodes.
	const tcompTotal = 8.0 // pure computation of one iteration on one node, seconds
	base := OverheadModel{CommCompRatio: 0.01, Bandwidth: PaperBandwidth, CPUPerByte: paperCPUPerByte, Regime: ComputeBound}

	// Hand computed, N = 4, k = 10: S = 8·2²⁰ B costs 8388608·0.5/9e6 = 0.46603378 s of
	// CPU; T_iter = 2 s; O = 0.46603378/20. With a 0.05 s lock: (0.46603378 + 0.05)/20.
	m := base
	m.ComputePerIteration = tcompTotal / 4
	S := float64(PaperCheckpointBytes) / 4
	cpu := 8388608 * 0.5 / 9e6
	tests := []struct {
		name           string
		lock, k        float64
		wantT, wantOvh float64
	}{
		{"no_lock", 0, 10, cpu, cpu / 20},
		{"lock", 0.05, 10, cpu + 0.05, (cpu + 0.05) / 20},
		{"every_iteration", 0.05, 1, cpu + 0.05, (cpu + 0.05) / 2},
	}
	for _, tc := range tests {
		if got := m.CheckpointTime(S, tc.lock); !relClose(got, tc.wantT, 1e-12) {
			t.Errorf("%s: CheckpointTime = %.15g, want %.15g", tc.name, got, tc.wantT)
		}
		if got := m.CheckpointOverhead(S, tc.lock, tc.k); !relClose(got, tc.wantOvh, 1e-12) {
			t.Errorf("%s: CheckpointOverhead = %.15g, want %.15g", tc.name, got, tc.wantOvh)
		}
	}
	// A cost per message adds one c_m: the state goes in one transfer.
	mm := m
	mm.CPUPerMessage = 0.002
	if got := mm.CheckpointTime(S, 0.05); !relClose(got, cpu+0.002+0.05, 1e-12) {
		t.Errorf("CheckpointTime with c_m = %.15g, want %.15g", got, cpu+0.002+0.05)
	}
	// Communication-bound: the full transfer time S/BW.
	mc := m
	mc.Regime = CommunicationBound
	mc.CommCompRatio = 2
	if got := mc.CheckpointTime(S, 0.01); !relClose(got, S/PaperBandwidth+0.01, 1e-12) {
		t.Errorf("communication-bound CheckpointTime = %g", got)
	}

	// Shrinks as 1/k; nearly independent of N (exactly, without a lock term).
	ref := m.CheckpointOverhead(S, 0, 1)
	for _, k := range []float64{2, 5, 50} {
		if got := m.CheckpointOverhead(S, 0, k); !relClose(got, ref/k, 1e-12) {
			t.Errorf("k=%g: %g, want %g", k, got, ref/k)
		}
	}
	for _, n := range []float64{2, 8, 16} {
		mn := base
		mn.ComputePerIteration = tcompTotal / n
		if got := mn.CheckpointOverhead(float64(PaperCheckpointBytes)/n, 0, 10); !relClose(got, m.CheckpointOverhead(S, 0, 10), 1e-12) {
			t.Errorf("N=%g: overhead %g depends on N", n, got)
		}
	}
}

func TestInvalid(t *testing.T) {
	good := OverheadModel{CommCompRatio: 0.1, ComputePerIteration: 1, Bandwidth: 1e6, CPUPerByte: 1e-7, DuplicateBytesPerIteration: 1e3}
	bad := []OverheadModel{}
	for i := 0; i < 8; i++ {
		b := good
		switch i {
		case 6:
			b.CPUPerMessage = -1e-6
		case 7:
			b.DuplicatesPerIteration = math.NaN()
		case 0:
			b.Bandwidth = 0
		case 1:
			b.ComputePerIteration = 0
		case 2:
			b.CPUPerByte = -1
		case 3:
			b.DuplicateBytesPerIteration = math.NaN()
		case 4:
			b.Regime = Regime(7)
		case 5:
			b.CommCompRatio = -0.1
		}
		bad = append(bad, b)
	}
	for i, b := range bad {
		if !math.IsNaN(b.DuplicationOverhead()) || !math.IsNaN(b.CheckpointOverhead(1, 0, 1)) {
			t.Errorf("case %d: want NaN", i)
		}
	}
	if !math.IsNaN(good.CheckpointOverhead(1, 0, 0)) || !math.IsNaN(good.CheckpointTime(-1, 0)) || !math.IsNaN(CPUPerByteFromLoad(0.5, 0)) {
		t.Error("want NaN for k < 1, negative state or zero bandwidth")
	}
}
