package mlog

import "testing"

// A window behaves as a map from dense keys to slots: puts above and below
// its base, drops from below, trimming of empty front slots, and reuse of the
// dropped front keep every key's slot.
func TestWindow(t *testing.T) {
	type op struct {
		kind string // put, drop, trim
		key  uint64
		val  int
	}
	cases := []struct {
		name string
		ops  []op
		want map[uint64]int // keys with a non-zero slot afterwards
		base uint64         // the window's first key afterwards
	}{
		{"dense puts", []op{{"put", 5, 1}, {"put", 6, 2}, {"put", 7, 3}}, map[uint64]int{5: 1, 6: 2, 7: 3}, 5},
		{"gap", []op{{"put", 5, 1}, {"put", 9, 2}}, map[uint64]int{5: 1, 9: 2}, 5},
		{"below the base", []op{{"put", 5, 1}, {"put", 2, 2}}, map[uint64]int{2: 2, 5: 1}, 2},
		{"drop below", []op{{"put", 5, 1}, {"put", 6, 2}, {"put", 7, 3}, {"drop", 7, 0}}, map[uint64]int{7: 3}, 7},
		{"drop all", []op{{"put", 5, 1}, {"drop", 100, 0}, {"put", 101, 4}}, map[uint64]int{101: 4}, 100},
		{"trim", []op{{"put", 5, 1}, {"put", 6, 0}, {"put", 7, 3}, {"put", 5, 0}, {"trim", 0, 0}}, map[uint64]int{7: 3}, 7},
		{"reuse the front", func() []op {
			var ops []op
			for k := uint64(1); k <= 200; k++ {
				ops = append(ops, op{"put", k, int(k)}, op{"drop", k - 1, 0})
			}
			return ops
		}(), map[uint64]int{199: 199, 200: 200}, 199},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var w window[int]
			w.reset(c.ops[0].key)
			for _, o := range c.ops {
				switch o.kind {
				case "put":
					*w.put(o.key) = o.val
				case "drop":
					w.dropBelow(o.key)
				case "trim":
					w.trim()
				}
			}
			if w.base != c.base {
				t.Fatalf("first key %d, want %d", w.base, c.base)
			}
			for k := uint64(0); k < 300; k++ {
				got := 0
				if s := w.at(k); s != nil {
					got = *s
				}
				if got != c.want[k] {
					t.Fatalf("key %d: %d, want %d", k, got, c.want[k])
				}
			}
		})
	}
}
