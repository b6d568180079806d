package pida

import (
	"strings"
	"testing"
)

// Worker counts that would exhaust memory or overflow are refused with an
// error that starts with the key at fault, before the reference search.
func TestSizeLimits(t *testing.T) {
	cases := []struct {
		name  string
		nodes int
		set   func(p *Params)
		want  string // the error starts with it
	}{
		{"workers", 4, func(p *Params) { p.Workers = 1<<22 + 1 }, "workload.workers: 4194305 is too many objects (at most 4194304)"},
		{"objects_per_node overflows", 4, func(p *Params) { p.ObjectsPerNode = 1 << 62 }, "workload.objects_per_node: 4 × 4611686018427387904 (cluster.nodes × objects_per_node) is too many objects"},
		{"wraps to a small count", 4, func(p *Params) { p.ObjectsPerNode = 1<<62 + 1 }, "workload.objects_per_node: "},
		{"nodes × objects_per_node", 1 << 21, func(p *Params) { p.ObjectsPerNode = 4 }, "workload.objects_per_node: 2097152 × 4"},
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
