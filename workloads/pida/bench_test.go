package pida

import "testing"

func TestStepDoesNotAllocate(t *testing.T) {
	b := mustBoard(t, "14 1 9 6 4 8 12 5 7 2 3 0 10 11 13 15") // Korf 12
	s := Stack{Frames: make([]Frame, 0, MaxBound+1)}
	s.Push(b, 0, NoMove)
	allocs := testing.AllocsPerRun(1000, func() {
		if s.Run(44, 100).Status != Running {
			s.Reset()
			s.Push(b, 0, NoMove)
		}
	})
	if allocs != 0 {
		t.Errorf("Run allocates %.1f times per 100 steps", allocs)
	}
}

func BenchmarkSolveKorf12(b *testing.B) {
	board := mustBoard(b, "14 1 9 6 4 8 12 5 7 2 3 0 10 11 13 15")
	var expanded uint64
	for b.Loop() {
		_, expanded = SolveSequential(board)
	}
	b.ReportMetric(float64(expanded)*float64(b.N)/b.Elapsed().Seconds(), "nodes/s")
}
