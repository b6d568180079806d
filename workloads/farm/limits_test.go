package farm

import (
	"strings"
	"testing"
)

// Images and object counts that would exhaust memory or overflow are
// refused with an error that starts with the key at fault.
func TestSizeLimits(t *testing.T) {
	cases := []struct {
		name  string
		nodes int
		set   func(p *Params)
		want  string // the error starts with it
	}{
		{"pixels overflow", 4, func(p *Params) { p.Width, p.Height = 1<<40, 1<<40 }, "workload.width: 1099511627776 × 1099511627776 (width × height) is too many pixels (at most 268435456)"},
		{"longer side", 4, func(p *Params) { p.Height = 1 << 30 }, "workload.height: "},
		{"workers", 4, func(p *Params) { p.Workers = 1 << 22 }, "workload.workers: 4194304 is too many workers besides the master (at most 4194303)"},
		{"objects_per_node overflows", 4, func(p *Params) { p.ObjectsPerNode = 1 << 62 }, "workload.objects_per_node: 4 × 4611686018427387904 (cluster.nodes × objects_per_node) is too many objects"},
		{"nodes × objects_per_node", 1 << 21, func(p *Params) { p.ObjectsPerNode = 4 }, "workload.objects_per_node: 2097152 × 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := small()
			c.set(&p)
			_, err := New(p, c.nodes, nil)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v, want one starting %q", err, c.want)
			}
		})
	}
	// the largest farm: the master and MaxObjects − 1 workers
	p := small()
	p.Workers = 1<<22 - 1
	if w, err := New(p, 4, nil); err != nil || w.NumObjects() != 1<<22 {
		t.Fatalf("%d workers: %v", p.Workers, err)
	}
}
