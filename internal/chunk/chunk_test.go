package chunk

import "testing"

// Records are zeroed, distinct, and a slice's appends leave the next
// records alone; a slice longer than a block gets a block of its own.
func TestAlloc(t *testing.T) {
	a := Alloc[int]{Size: 4}
	p, q := a.New(), a.New()
	if p == q || *p != 0 || *q != 0 {
		t.Fatalf("New: %p %p, %d %d", p, q, *p, *q)
	}
	s := a.Slice(2) // the block's last two
	r := a.New()    // from a new block
	s = append(s, 7)
	if *r != 0 || len(s) != 3 {
		t.Fatalf("an append reached another record: %d", *r)
	}
	long := a.Slice(9)
	if len(long) != 9 || cap(long) != 9 {
		t.Fatalf("Slice(9): len %d cap %d", len(long), cap(long))
	}
	for i := range long {
		if long[i] != 0 {
			t.Fatalf("record %d not zero", i)
		}
	}
}
