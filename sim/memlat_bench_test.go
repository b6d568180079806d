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
			const line = 8 // int64s per 64-byte line
			n := mb << 20 / 64
			next := make([]int64, n*line)
			perm := rand.New(rand.NewPCG(1, 2)).Perm(n)
			for i := range n {
				next[perm[i]*line] = int64(perm[(i+1)%n] * line)
			}
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
