package sim

// slab stores values addressed by a small integer that an Event can carry, and
// reuses freed slots so that steady-state scheduling does not allocate.
type slab[T any] struct {
	items []T
	free  []int32
}

func (s *slab[T]) put(v T) int32 {
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		s.items[i] = v
		return i
	}
	s.items = append(s.items, v)
	return int32(len(s.items) - 1)
}

// take returns the value in slot i and frees the slot.
func (s *slab[T]) take(i int32) T {
	v := s.items[i]
	var zero T
	s.items[i] = zero
	s.free = append(s.free, i)
	return v
}

func (s *slab[T]) get(i int32) *T { return &s.items[i] }
