package seqset

import "testing"

func TestSet(t *testing.T) {
	for _, tc := range []struct {
		name string
		add  []uint64
		low  uint64
		has  []uint64 // members among 1..10; everything else in 1..10 is absent
	}{
		{"empty", nil, 0, nil},
		{"in order", []uint64{1, 2, 3}, 3, []uint64{1, 2, 3}},
		{"duplicates", []uint64{1, 1, 2, 2, 1}, 2, []uint64{1, 2}},
		{"gap", []uint64{1, 3, 5}, 1, []uint64{1, 3, 5}},
		{"gap filled", []uint64{3, 5, 4, 1, 2}, 5, []uint64{1, 2, 3, 4, 5}},
		{"gap partly filled", []uint64{2, 4, 7, 1}, 2, []uint64{1, 2, 4, 7}},
		{"reverse", []uint64{6, 5, 4, 3, 2, 1}, 6, []uint64{1, 2, 3, 4, 5, 6}},
		{"above only", []uint64{9}, 0, []uint64{9}},
	} {
		var s Set
		for _, q := range tc.add {
			s.Add(q)
		}
		c := s.Clone()
		s.Add(10) // a later change of the original does not reach the copy
		if c.Low() != tc.low {
			t.Errorf("%s: Low = %d, want %d", tc.name, c.Low(), tc.low)
		}
		if !c.Has(0) {
			t.Errorf("%s: 0 absent", tc.name)
		}
		member := map[uint64]bool{}
		for _, q := range tc.has {
			member[q] = true
		}
		for q := uint64(1); q <= 10; q++ {
			if c.Has(q) != member[q] {
				t.Errorf("%s: Has(%d) = %v, want %v", tc.name, q, c.Has(q), member[q])
			}
			if !s.Has(q) && (member[q] || q == 10) {
				t.Errorf("%s: original lost %d", tc.name, q)
			}
		}
		if len(c.above) != len(tc.has)-int(tc.low) {
			t.Errorf("%s: %d numbers kept above the watermark, want %d", tc.name, len(c.above), len(tc.has)-int(tc.low))
		}
	}
}
