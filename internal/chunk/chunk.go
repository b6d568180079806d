// Package chunk provides Alloc, which hands out records and short slices cut
// from larger blocks: a simulation that makes one small record per message
// or per object and checkpoint pays one allocation per block instead of one
// per record.
package chunk

import "cmp"

// Alloc cuts zeroed records of type T from blocks of Size records (or of
// the slice asked, if longer). A block stays alive while anything cut from
// it does, so records that die together (a checkpoint's, a period's log
// entries) should come from one Alloc. The zero Alloc cuts blocks of
// DefaultSize records.
type Alloc[T any] struct {
	Size int // records per block (0: DefaultSize)
	rest []T // what is left of the current block
}

// DefaultSize is the block size of an Alloc whose Size is 0.
const DefaultSize = 64

// New returns a pointer to a zeroed record, never handed out before.
func (a *Alloc[T]) New() *T {
	return &a.Slice(1)[0]
}

// Slice returns n zeroed records, never handed out before, as a slice of
// capacity n: an append to it cannot reach into records handed out later.
func (a *Alloc[T]) Slice(n int) []T {
	if len(a.rest) < n {
		a.rest = make([]T, max(cmp.Or(a.Size, DefaultSize), n))
	}
	s := a.rest[:n:n]
	a.rest = a.rest[n:]
	return s
}
