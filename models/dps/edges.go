package dps

// edgeMap is a map for the per-thread tables keyed by a peer (a receiver, an
// edge and life). A stencil thread has a handful of peers, and with 20,000
// threads a Go map per table is a cache miss per lookup and most of DPS's
// time at 10,000 nodes: up to linearMax keys a lookup scans a short slice
// instead. A thread with many peers (a task farm's master) gets an index.
// Iteration order is insertion order, which is deterministic.
type edgeMap[K comparable, V any] struct {
	keys  []K
	vals  []V
	index map[K]int32 // nil until there are more than linearMax keys
}

// linearMax is the number of keys up to which a lookup scans: a scan of 48
// keys of 8-16 bytes (at most 12 cache lines, read in order) costs less than
// hashing and a cache miss in a map. A backup queue of the 10,000-node
// stencil holds more than 16 duplicates between checkpoints: 48 rather than
// 16 took 5-10% off its DPS runs.
const linearMax = 48

func (m *edgeMap[K, V]) find(k K) int {
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

// get returns the value of k, or the zero value.
func (m *edgeMap[K, V]) get(k K) V {
	if i := m.find(k); i >= 0 {
		return m.vals[i]
	}
	var zero V
	return zero
}

// ptr returns a pointer to the value of k, adding k with the zero value if it
// is absent. The pointer is valid until the next insertion.
func (m *edgeMap[K, V]) ptr(k K) *V {
	if i := m.find(k); i >= 0 {
		return &m.vals[i]
	}
	var zero V
	m.keys = append(m.keys, k)
	m.vals = append(m.vals, zero)
	n := len(m.keys)
	if m.index != nil {
		m.index[k] = int32(n - 1)
	} else if n > linearMax {
		m.index = make(map[K]int32, 2*n)
		for i, x := range m.keys {
			m.index[x] = int32(i)
		}
	}
	return &m.vals[n-1]
}

// clone returns a copy whose values are copied with cp.
func (m *edgeMap[K, V]) clone(cp func(V) V) edgeMap[K, V] {
	c := edgeMap[K, V]{keys: append([]K(nil), m.keys...), vals: make([]V, len(m.vals))}
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

// del removes k, moving the last key into its place.
func (m *edgeMap[K, V]) del(k K) {
	i := m.find(k)
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

func (m *edgeMap[K, V]) len() int { return len(m.keys) }
