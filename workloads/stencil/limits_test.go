package stencil

import (
	"strings"
	"testing"
)

// Grids and block counts that would exhaust memory or overflow are refused
// with an error that starts with the key at fault.
func TestSizeLimits(t *testing.T) {
	cases := []struct {
		name  string
		nodes int
		set   func(p *Params)
		want  string // the error starts with it
	}{
		{"points overflow", 4, func(p *Params) { p.NX, p.NY, p.NZ = 1<<30, 1<<30, 1<<30 }, "workload.nx: 1073741824 × 1073741824 × 1073741824 (nx × ny × nz) is too many points (at most 134217728)"},
		{"longest axis ny", 4, func(p *Params) { p.NY = 1 << 40 }, "workload.ny: "},
		{"longest axis nz", 4, func(p *Params) { p.NZ = 1 << 30 }, "workload.nz: "},
		{"blocks", 4, func(p *Params) { p.NX, p.NY, p.NZ, p.Blocks = 1<<9, 1<<9, 1<<9, []int64{1 << 9, 1 << 9, 1 << 5} }, "workload.blocks: 512 × 512 × 32 (bx × by × bz) is too many objects (at most 4194304)"},
		{"blocks_per_node overflows", 4, func(p *Params) { p.BlocksPerNode = 1 << 62 }, "workload.blocks_per_node: 4 × 4611686018427387904 (cluster.nodes × blocks_per_node) is too many objects"},
		{"nodes × blocks_per_node", 1 << 20, func(p *Params) { p.NX, p.NY, p.NZ, p.BlocksPerNode = 1<<9, 1<<9, 1<<9, 8 }, "workload.blocks_per_node: 1048576 × 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			c.set(&p)
			_, err := New(p, c.nodes, nil)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v, want one starting %q", err, c.want)
			}
		})
	}
}
