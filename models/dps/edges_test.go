package dps

import (
	"fmt"
	"testing"
)

// edgeMap behaves as a map below and above the size at which it builds an
// index, through deletions that move keys, and its clones are independent.
func TestEdgeMap(t *testing.T) {
	for _, n := range []int{1, linearMax, linearMax + 1, 5 * linearMax} {
		t.Run(fmt.Sprint(n, " keys"), func(t *testing.T) {
			var m edgeMap[int32, int]
			ref := map[int32]int{}
			for i := range n {
				k := int32(7 * i)
				*m.ptr(k) = i + 1
				ref[k] = i + 1
			}
			*m.ptr(0) += 100 // an existing key is updated in place
			ref[0] += 100
			c := m.clone(func(v int) int { return v })
			for i := 0; i < n; i += 2 { // delete every other key, moving the last ones
				m.del(int32(7 * i))
				delete(ref, int32(7*i))
			}
			m.del(-1) // absent: nothing happens
			if m.len() != len(ref) {
				t.Fatalf("len %d, want %d", m.len(), len(ref))
			}
			for i := range n + 1 {
				k := int32(7 * i)
				if got, want := m.get(k), ref[k]; got != want {
					t.Fatalf("get(%d) = %d, want %d", k, got, want)
				}
			}
			last := n // the value of the last key inserted
			if n == 1 {
				last = 101
			}
			if c.len() != n || c.get(0) != 101 || c.get(int32(7*(n-1))) != last {
				t.Fatalf("the clone changed: len %d, get(0) %d", c.len(), c.get(0))
			}
		})
	}
}
