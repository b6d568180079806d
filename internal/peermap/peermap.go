// Package peermap provides Map, a map for small per-object tables keyed by a
// peer (a sender, a receiver, an edge), which a simulation holds one or more
// of for each of tens of thousands of objects.
package peermap

// Map is a map for the per-object tables keyed by a peer. A stencil block has
// a handful of peers, and with 20,000 objects a Go map per table is a cache
// miss and a hash per lookup: up to LinearMax keys a lookup scans a short
// slice instead. An object with many peers (a task farm's master) gets an
// index. Iteration (Key, At, Keys) is in insertion order, but for the
// deletions that move the last key into the deleted one's place: it is
// deterministic. The zero Map is empty and ready to use.
type Map[K comparable, V any] struct {
	keys  []K
	vals  []V
	index map[K]int32 // nil until there are more than LinearMax keys
}

// LinearMax is the number of keys up to which a lookup scans: a scan of 48
// keys of 8-16 bytes (at most 12 cache lines, read in order) costs less than
// hashing and a cache miss in a map. A backup queue of the 10,000-node
// stencil under DPS holds more than 16 duplicates between checkpoints: 48
// rather than 16 took 5-10% off its DPS runs.
const LinearMax = 48

// Find returns the position of k (for At and Key), or -1 if it is absent.
func (m *Map[K, V]) Find(k K) int {
	if m.index != nil {
		if i, ok := m.index[k]; ok {
			return int(i)
		}
		return -1
	}
	for i, x := range m.keys {
		if x == k {
			return i
		}
	}
	return -1
}

// Get returns the value of k, or the zero value.
func (m *Map[K, V]) Get(k K) V {
	if i := m.Find(k); i >= 0 {
		return m.vals[i]
	}
	var zero V
	return zero
}

// Lookup returns a pointer to the value of k, or nil if k is absent. The
// pointer is valid until the next insertion.
func (m *Map[K, V]) Lookup(k K) *V {
	if i := m.Find(k); i >= 0 {
		return &m.vals[i]
	}
	return nil
}

// Ptr returns a pointer to the value of k, adding k with the zero value if it
// is absent. The pointer is valid until the next insertion.
func (m *Map[K, V]) Ptr(k K) *V {
	if i := m.Find(k); i >= 0 {
		return &m.vals[i]
	}
	var zero V
	m.keys = append(m.keys, k)
	m.vals = append(m.vals, zero)
	n := len(m.keys)
	if m.index != nil {
		m.index[k] = int32(n - 1)
	} else if n > LinearMax {
		m.index = make(map[K]int32, 2*n)
		for i, x := range m.keys {
			m.index[x] = int32(i)
		}
	}
	return &m.vals[n-1]
}

// Len returns the number of keys.
func (m *Map[K, V]) Len() int { return len(m.keys) }

// Key returns the key at position i (0 ≤ i < Len()).
func (m *Map[K, V]) Key(i int) K { return m.keys[i] }

// At returns a pointer to the value at position i (0 ≤ i < Len()), valid
// until the next insertion.
func (m *Map[K, V]) At(i int) *V { return &m.vals[i] }

// Keys returns the keys in iteration order. The slice is the map's own: the
// caller must not modify it, and it is valid until the next insertion or
// deletion.
func (m *Map[K, V]) Keys() []K { return m.keys }

// Clone returns a copy whose values are copied with cp.
func (m *Map[K, V]) Clone(cp func(V) V) Map[K, V] {
	c := Map[K, V]{keys: append([]K(nil), m.keys...), vals: make([]V, len(m.vals))}
	for i, v := range m.vals {
		c.vals[i] = cp(v)
	}
	if m.index != nil {
		c.index = make(map[K]int32, len(m.index))
		for k, i := range m.index {
			c.index[k] = i
		}
	}
	return c
}

// Del removes k, moving the last key into its place.
func (m *Map[K, V]) Del(k K) {
	i := m.Find(k)
	if i < 0 {
		return
	}
	last := len(m.keys) - 1
	if m.index != nil {
		delete(m.index, k)
		if i != last {
			m.index[m.keys[last]] = int32(i)
		}
	}
	m.keys[i], m.vals[i] = m.keys[last], m.vals[last]
	var zero V
	m.vals[last] = zero // drop the reference
	m.keys, m.vals = m.keys[:last], m.vals[:last]
}
