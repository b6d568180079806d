package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkPointerChase measures the machine's memory latency: a random
// cycle through one 64-byte line per step over working sets from 1 MB to
// 512 MB, each load depending on the one before (ns/op is ns per load). It is the
// yardstick behind the performance section's diagnosis of the exascale
// scenario (an event's records are first touches across hundreds of MB).
func BenchmarkPointerChase(b *testing.B) {
	for _, mb := range []int{1, 4, 16, 32, 64, 128, 256, 512} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			next, _ := randomCycle(mb << 20 / 64)
			p := int64(0)
			b.ResetTimer()
			for range b.N {
				p = next[p]
			}
			if p < 0 {
				b.Fatal("unreachable: keeps the chase from being optimised away")
			}
		})
	}
}

// BenchmarkParallelChase measures how many cache misses the machine overlaps:
// k independent random cycles through a 256 MB working set, advanced in turn,
// so that k loads are in flight at once (ns/op is ns per load, as for
// BenchmarkPointerChase). With k chains a load costs the latency divided by
// the overlap the memory system reaches, up to the number of misses a core
// can have outstanding. An event of the exascale scenario issues its
// prefetches and loads a few records at a time; this bounds what that
// overlap can give on the host.
func BenchmarkParallelChase(b *testing.B) {
	const n = 256 << 20 / 64
	next, order := randomCycle(n)
	for _, k := range []int{1, 2, 4, 8, 16, 32} {
		b.Run(fmt.Sprintf("chains=%d", k), func(b *testing.B) {
			p := make([]int64, k)
			for c := range p {
				p[c] = order[c*n/k] // k points spread over the one cycle
			}
			b.ResetTimer()
			for i := 0; i < b.N; i += k {
				for c := range p {
					p[c] = next[p[c]]
				}
			}
			for _, x := range p {
				if x < 0 {
					b.Fatal("unreachable: keeps the chase from being optimised away")
				}
			}
		})
	}
}

// randomCycle links n 64-byte lines into one cycle in random order: next[x]
// is the index of the line after the one at index x (indexes are multiples
// of 8, one line apart), and order lists the lines' indexes along the cycle.
func randomCycle(n int) (next []int64, order []int64) {
	const line = 8 // int64s per 64-byte line
	next = make([]int64, n*line)
	order = make([]int64, n)
	for i, l := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		order[i] = int64(l * line)
	}
	for i := range n {
		next[order[i]] = order[(i+1)%n]
	}
	return next, order
}
