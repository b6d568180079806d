// Package seqset is a set of sequence numbers that arrive nearly in order,
// such as the messages a receiver has processed from one sender: every
// number up to a watermark, plus the few that arrived above it. Membership
// costs a comparison, and the map holds only the numbers past a gap.
package seqset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
)

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

// AppendBinary appends the set's encoding to b: the watermark, then the
// members above it in increasing order, as unsigned varints after their count.
func (s *Set) AppendBinary(b []byte) []byte {
	b = binary.AppendUvarint(b, s.low)
	above := slices.Sorted(maps.Keys(s.above))
	b = binary.AppendUvarint(b, uint64(len(above)))
	for _, q := range above {
		b = binary.AppendUvarint(b, q)
	}
	return b
}

// Decode reads a set AppendBinary encoded at the start of b and returns it
// with the rest of b.
func Decode(b []byte) (Set, []byte, error) {
	var s Set
	var err error
	if s.low, b, err = uvarint(b); err != nil {
		return Set{}, nil, err
	}
	n, b, err := uvarint(b)
	if err != nil {
		return Set{}, nil, err
	}
	if n > uint64(len(b)) { // each member takes a byte at least
		return Set{}, nil, errors.New("seqset: truncated")
	}
	for range n {
		var q uint64
		if q, b, err = uvarint(b); err != nil {
			return Set{}, nil, err
		}
		if q <= s.low+1 {
			return Set{}, nil, fmt.Errorf("seqset: member %d at or below the watermark's successor %d", q, s.low+1)
		}
		s.Add(q)
	}
	return s, b, nil
}

func uvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, errors.New("seqset: truncated")
	}
	return v, b[n:], nil
}
