package limits

import (
	"math"
	"strings"
	"testing"
)

// Products are compared with the bound without overflowing, and the error
// names the key, the factors and the bound.
func TestProduct(t *testing.T) {
	cases := []struct {
		name    string
		factors []int64
		want    int64  // the product, when accepted
		err     string // in the error, when refused
	}{
		{"one factor", []int64{1000}, 1000, ""},
		{"at the bound", []int64{1 << 10, 1 << 10}, 1 << 20, ""},
		{"over the bound", []int64{1 << 10, 1<<10 + 1}, 0, "workload.k: 1024 × 1025 (a × b) is too many things (at most 1048576)"},
		{"would overflow int64", []int64{1 << 40, 1 << 40}, 0, "workload.k: 1099511627776 × 1099511627776 (a × b) is too many things"},
		{"max int64", []int64{math.MaxInt64, 2}, 0, "is too many things (at most 1048576)"},
		{"zero after a huge factor", []int64{1 << 40, 0}, 0, "workload.k: 1099511627776 × 0 must be at least 1"},
		{"negative", []int64{-1}, 0, "workload.k: -1 must be at least 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Product("k", 1<<20, "things", "a × b", c.factors...)
			if c.err == "" {
				if err != nil || got != c.want {
					t.Fatalf("got %d, %v; want %d", got, err, c.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want one containing %q", err, c.err)
			}
		})
	}
}

// Objects bounds counts by MaxObjects; AtMost bounds one value.
func TestObjectsAndAtMost(t *testing.T) {
	if n, err := Objects("objects", "", MaxObjects); err != nil || n != MaxObjects {
		t.Fatalf("MaxObjects objects: %d, %v", n, err)
	}
	_, err := Objects("objects_per_node", "cluster.nodes × objects_per_node", 16, 1<<62)
	if want := "workload.objects_per_node: 16 × 4611686018427387904 (cluster.nodes × objects_per_node) is too many objects (at most 4194304)"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if err := AtMost("steps", 10, 10, "steps"); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	err = AtMost("steps", 11, 10, "steps for a tag")
	if want := "workload.steps: 11 is too many steps for a tag (at most 10)"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

// Grid blames the longest dimension and names them all.
func TestGrid(t *testing.T) {
	dims := func(x, y, z int64) []Dim { return []Dim{{"nx", x}, {"ny", y}, {"nz", z}} }
	cases := []struct {
		dims []Dim
		want string // "" = accepted
	}{
		{dims(8, 8, 8), ""},
		{dims(1<<40, 2, 2), "workload.nx: 1099511627776 × 2 × 2 (nx × ny × nz) is too many points (at most 512)"},
		{dims(2, 1<<40, 2), "workload.ny: "},
		{dims(2, 2, 1<<40), "workload.nz: "},
		{dims(9, 9, 9), "workload.nx: 9 × 9 × 9"},
	}
	for _, c := range cases {
		err := Grid(512, "points", c.dims...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.dims, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one starting %q", c.dims, err, c.want)
		}
	}
}
