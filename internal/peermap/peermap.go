// Package peermap provides Map, a map for small per-object tables keyed by a
// peer (a sender, a receiver, an edge), which a simulation holds one or more
// of for each of tens of thousands of objects.
package peermap

// Map is a map for the per-object tables keyed by a peer. A stencil block has
// a handful of peers, and with 20,000 objects a Go map per table is a cache
// miss and a hash per lookup: up to LinearMax keys a lookup scans a short
// slice instead. Each key sits beside its value, so that a lookup's first
// touch of the table also brings in the value it finds. An object with many
// peers (a task farm's master) gets an index. Iteration (Key, At, AppendKeys)
// is in insertion order, but for the deletions that move the last key into
// the deleted one's place: it is deterministic. The zero Map is empty and
// ready to use.
type Map[K comparable, V any] struct {
	es    []kv[K, V]
	index map[K]int32 // nil until there are more than LinearMax keys
}

// kv is a key and its value.
type kv[K comparable, V any] struct {
	k K
	v V
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
	for i := range m.es {
		if m.es[i].k == k {
			return i
		}
	}
	return -1
}

// Get returns the value of k, or the zero value.
func (m *Map[K, V]) Get(k K) V {
	if i := m.Find(k); i >= 0 {
		return m.es[i].v
	}
	var zero V
	return zero
}

// Lookup returns a pointer to the value of k, or nil if k is absent. The
// pointer is valid until the next insertion.
func (m *Map[K, V]) Lookup(k K) *V {
	if i := m.Find(k); i >= 0 {
		return &m.es[i].v
	}
	return nil
}

// Ptr returns a pointer to the value of k, adding k with the zero value if it
// is absent. The pointer is valid until the next insertion.
func (m *Map[K, V]) Ptr(k K) *V {
	if i := m.Find(k); i >= 0 {
		return &m.es[i].v
	}
	m.es = append(m.es, kv[K, V]{k: k})
	n := len(m.es)
	if m.index != nil {
		m.index[k] = int32(n - 1)
	} else if n > LinearMax {
		m.index = make(map[K]int32, 2*n)
		for i := range m.es {
			m.index[m.es[i].k] = int32(i)
		}
	}
	return &m.es[n-1].v
}

// Len returns the number of keys.
func (m *Map[K, V]) Len() int { return len(m.es) }

// Key returns the key at position i (0 ≤ i < Len()).
func (m *Map[K, V]) Key(i int) K { return m.es[i].k }

// At returns a pointer to the value at position i (0 ≤ i < Len()), valid
// until the next insertion.
func (m *Map[K, V]) At(i int) *V { return &m.es[i].v }

// AppendKeys appends the keys, in iteration order, to dst and returns it.
func (m *Map[K, V]) AppendKeys(dst []K) []K {
	for i := range m.es {
		dst = append(dst, m.es[i].k)
	}
	return dst
}

// Clone returns a copy whose values are copied with cp.
func (m *Map[K, V]) Clone(cp func(V) V) Map[K, V] {
	c := Map[K, V]{es: make([]kv[K, V], len(m.es))}
	for i, e := range m.es {
		c.es[i] = kv[K, V]{e.k, cp(e.v)}
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
	last := len(m.es) - 1
	if m.index != nil {
		delete(m.index, k)
		if i != last {
			m.index[m.es[last].k] = int32(i)
		}
	}
	m.es[i] = m.es[last]
	m.es[last] = kv[K, V]{} // drop the references
	m.es = m.es[:last]
}
