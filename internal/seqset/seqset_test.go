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

func TestCovers(t *testing.T) {
	set := func(qs ...uint64) *Set {
		var s Set
		for _, q := range qs {
			s.Add(q)
		}
		return &s
	}
	for _, tc := range []struct {
		name string
		s, o *Set
		want bool
	}{
		{"both empty", set(), set(), true},
		{"empty covers nothing else", set(), set(1), false},
		{"anything covers empty", set(3), set(), true},
		{"equal", set(1, 2, 3), set(1, 2, 3), true},
		{"longer run", set(1, 2, 3, 4), set(1, 2), true},
		{"shorter run", set(1, 2), set(1, 2, 3), false},
		{"o's run in s's gaps", set(1, 3, 4), set(1, 2, 3), false},
		{"o's run above s's watermark", set(1, 3, 4, 2), set(1, 2, 3, 4), true},
		{"s's above holds o's run", set(2, 3, 1), set(1, 2), true},
		{"o's above in s's run", set(1, 2, 3, 4, 5), set(1, 4), true},
		{"o's above missing", set(1, 2, 5), set(1, 4), false},
		{"o's above in s's above", set(1, 4, 6), set(4, 6), true},
	} {
		if got := tc.s.Covers(tc.o); got != tc.want {
			t.Errorf("%s: Covers = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A set survives its encoding, and a damaged encoding is an error.
func TestEncoding(t *testing.T) {
	var s Set
	for _, q := range []uint64{1, 2, 3, 7, 5, 1000} {
		s.Add(q)
	}
	b := s.AppendBinary([]byte{0xff})
	got, rest, err := Decode(b[1:])
	if err != nil || len(rest) != 0 {
		t.Fatalf("decode: %v, %d bytes left", err, len(rest))
	}
	if got.Low() != 3 || !got.Covers(&s) || !s.Covers(&got) {
		t.Fatalf("decoded %+v, want %+v", got, s)
	}
	for i := 1; i < len(b)-1; i++ {
		if _, _, err := Decode(b[1:i]); err == nil {
			t.Errorf("%d of %d bytes decoded without error", i-1, len(b)-1)
		}
	}
	// a member the watermark's successor would have absorbed
	if _, _, err := Decode([]byte{3, 1, 4}); err == nil {
		t.Error("member 4 above watermark 3 accepted")
	}
}
