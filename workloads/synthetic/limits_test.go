package synthetic

import (
	"strings"
	"testing"
)

// Object and step counts that would exhaust memory or wrap the int32
// message tag are refused with an error that starts with the key at fault.
func TestSizeLimits(t *testing.T) {
	cases := []struct {
		name  string
		nodes int
		set   func(p *Params)
		want  string // the error starts with it; "" = accepted
	}{
		{"objects", 4, func(p *Params) { p.Objects = 1 << 40 }, "workload.objects: 1099511627776 is too many objects (at most 4194304)"},
		{"one per node", 1 << 23, func(p *Params) {}, "workload.objects: 8388608 (one per node, cluster.nodes) is too many objects"},
		{"steps", 4, func(p *Params) { p.Steps = 1 << 30 }, "workload.steps: 1073741824 is too many steps for a 32-bit message tag (at most 1073741823)"},
		{"most objects and steps", 4, func(p *Params) { p.Objects, p.Steps = 1<<22, 1<<30-1 }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			c.set(&p)
			_, err := New(p, c.nodes)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Fatalf("error %v, want one starting %q", err, c.want)
			}
		})
	}
}
