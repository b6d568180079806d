package peermap

import (
	"fmt"
	"testing"
)

// Map behaves as a map below and above the size at which it builds an index,
// through deletions that move keys, and its clones are independent.
func TestMap(t *testing.T) {
	tests := []struct {
		keys int
	}{
		{1},
		{LinearMax},
		{LinearMax + 1},
		{5 * LinearMax},
	}
	for _, tt := range tests {
		n := tt.keys
		t.Run(fmt.Sprint(n, " keys"), func(t *testing.T) {
			var m Map[int32, int]
			ref := map[int32]int{}
			for i := range n {
				k := int32(7 * i)
				*m.Ptr(k) = i + 1
				ref[k] = i + 1
			}
			*m.Ptr(0) += 100 // an existing key is updated in place
			ref[0] += 100
			c := m.Clone(func(v int) int { return v })
			for i := 0; i < n; i += 2 { // delete every other key, moving the last ones
				m.Del(int32(7 * i))
				delete(ref, int32(7*i))
			}
			m.Del(-1) // absent: nothing happens
			if m.Len() != len(ref) {
				t.Fatalf("len %d, want %d", m.Len(), len(ref))
			}
			for i := range n + 1 {
				k := int32(7 * i)
				if got, want := m.Get(k), ref[k]; got != want {
					t.Fatalf("Get(%d) = %d, want %d", k, got, want)
				}
				v, ok := ref[k]
				if p := m.Lookup(k); (p != nil) != ok || p != nil && *p != v {
					t.Fatalf("Lookup(%d) = %v, want present %v with %d", k, p, ok, v)
				}
			}
			keys := m.AppendKeys([]int32{-1})
			if len(keys) != m.Len()+1 || keys[0] != -1 {
				t.Fatalf("AppendKeys gave %d keys after the first, want %d", len(keys)-1, m.Len())
			}
			for i := range m.Len() { // positions agree with Find and AppendKeys
				if k := m.Key(i); m.Find(k) != i || *m.At(i) != ref[k] || keys[i+1] != k {
					t.Fatalf("position %d: key %d found at %d, value %d, want %d; AppendKeys has %d", i, k, m.Find(k), *m.At(i), ref[k], keys[i+1])
				}
			}
			last := n // the value of the last key inserted
			if n == 1 {
				last = 101
			}
			if c.Len() != n || c.Get(0) != 101 || c.Get(int32(7*(n-1))) != last {
				t.Fatalf("the clone changed: len %d, Get(0) %d", c.Len(), c.Get(0))
			}
		})
	}
}
