// Package seqset is a set of sequence numbers that arrive nearly in order,
// such as the messages a receiver has processed from one sender: every
// number up to a watermark, plus the few that arrived above it. Membership
// costs a comparison, and the map holds only the numbers past a gap.
package seqset

// Set is a set of numbers from 1 up. The zero Set is empty; 0 always counts as
// present, so a sender's first number is 1.
type Set struct {
	low   uint64              // every number up to low is in the set
	above map[uint64]struct{} // members above low+1, which is not one
}

// Has reports whether q is in the set.
func (s *Set) Has(q uint64) bool {
	if q <= s.low {
		return true
	}
	_, ok := s.above[q]
	return ok
}

// Add puts q in the set.
func (s *Set) Add(q uint64) {
	switch {
	case q <= s.low:
	case q == s.low+1:
		s.low++
		for {
			if _, ok := s.above[s.low+1]; !ok {
				return
			}
			delete(s.above, s.low+1)
			s.low++
		}
	default:
		if s.above == nil {
			s.above = map[uint64]struct{}{}
		}
		s.above[q] = struct{}{}
	}
}

// Low returns the watermark: every number up to it is in the set, and the
// next one is not.
func (s *Set) Low() uint64 { return s.low }

// Covers reports whether every member of o is in s.
func (s *Set) Covers(o *Set) bool {
	for q := s.low + 1; q <= o.low; q++ {
		if _, ok := s.above[q]; !ok {
			return false
		}
	}
	for q := range o.above {
		if !s.Has(q) {
			return false
		}
	}
	return true
}

// Clone returns an independent copy.
func (s *Set) Clone() Set {
	c := Set{low: s.low}
	if len(s.above) > 0 {
		c.above = make(map[uint64]struct{}, len(s.above))
		for q := range s.above {
			c.above[q] = struct{}{}
		}
	}
	return c
}
