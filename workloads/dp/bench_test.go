package dp

import "testing"

func TestInnerLoopsDoNotAllocate(t *testing.T) {
	h, err := NewHeldKarpTable(RandomTSP(12, 1))
	if err != nil {
		t.Fatal(err)
	}
	k := RandomKnapsack(10, 5000, 1)
	prev, cur, flags := make([]int, 5001), make([]int, 5001), make([]uint64, k.FlagWords())
	a, b := RandomDNA(64, 1), RandomDNA(80, 2)
	top, left, right := make([]int32, len(b)+1), make([]int32, len(a)+1), make([]int32, len(a)+1)
	tests := []struct {
		name string
		f    func()
	}{
		{"HeldKarpTable.FillStage", func() { h.FillStage(5) }},
		{"HeldKarpTable.Relax", func() { h.Relax(0b1011110, 3) }},
		{"Knapsack.Row", func() { k.Row(3, prev, cur, 0, 5001, flags) }},
		{"LCSBlock", func() { LCSBlock(a, b, top, left, top, right) }},
	}
	for _, tc := range tests {
		if n := testing.AllocsPerRun(20, tc.f); n != 0 {
			t.Errorf("%s allocates %.1f times per call", tc.name, n)
		}
	}
}

func BenchmarkHeldKarp17(b *testing.B) {
	tsp := RandomTSP(17, 1)
	for b.Loop() {
		if _, _, err := HeldKarp(tsp); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLCSLength10k(b *testing.B) {
	x, y := RandomDNA(10000, 1), RandomDNA(10000, 2)
	for b.Loop() {
		LCSLength(x, y)
	}
	b.ReportMetric(float64(len(x))*float64(len(y))*float64(b.N)/b.Elapsed().Seconds(), "cells/s")
}

func BenchmarkKnapsackSolve(b *testing.B) {
	k := RandomKnapsack(1000, 100000, 1) // the thesis' size (Table 5.2)
	for b.Loop() {
		k.Solve()
	}
}
