package life

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Sizes that would exhaust memory, overflow an int or wrap the int32
// message tag are refused before anything is allocated, with an error
// that starts with the key at fault, so that the scenario loader can point
// at its line; an rle_file error names the key as well as the file.
func TestSizeLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.rle")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// sparse: the reader must stop at the limit, not read 16 MiB of zeros
	if err := f.Truncate(maxRLEFile + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	exact := filepath.Join(dir, "exact.rle")
	glider := "x = 3, y = 3\nbo$2bo$3o!\n"
	if err := os.WriteFile(exact, []byte(glider+strings.Repeat("#", maxRLEFile-len(glider))), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.rle")
	if err := os.WriteFile(bad, []byte("x = 3, y = 3\nbo$2bo$3q!\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		nodes int
		set   func(p *Params)
		want  string // the error starts with it; "" = accepted
	}{
		{"width overflows the product", 4, func(p *Params) { p.Width, p.Height = 1<<40, 1<<40 }, "workload.width: 1099511627776 × 1099511627776 (width × height) is too many cells (at most 268435456)"},
		{"height alone", 4, func(p *Params) { p.Width, p.Height = 1, 1<<31 }, "workload.height: "},
		{"cells", 4, func(p *Params) { p.Width, p.Height = 1<<14+1, 1<<14 }, "workload.width: "},
		{"generations", 4, func(p *Params) { p.Generations = 1 << 28 }, "workload.generations: 268435456 is too many generations for a 32-bit message tag (at most 268435455)"},
		{"tiles", 4, func(p *Params) { p.Width, p.Height, p.Tiles = 1<<12, 1<<12, []int64{1 << 12, 1 << 11} }, "workload.tiles: 4096 × 2048 (columns × rows) is too many objects (at most 4194304)"},
		{"objects_per_node overflows", 4, func(p *Params) { p.ObjectsPerNode = 1 << 62 }, "workload.objects_per_node: 4 × 4611686018427387904 (cluster.nodes × objects_per_node) is too many objects"},
		{"nodes × objects_per_node", 1 << 21, func(p *Params) { p.ObjectsPerNode = 4 }, "workload.objects_per_node: 2097152 × 4"},
		{"rle_file too large", 4, func(p *Params) { p.RLEFile = big }, "workload.rle_file: " + big + " is larger than 16 MiB"},
		{"rle_file missing", 4, func(p *Params) { p.RLEFile = filepath.Join(dir, "none.rle") }, "workload.rle_file: open "},
		{"rle_file malformed", 4, func(p *Params) { p.RLEFile = bad }, "workload.rle_file: " + bad + ":2: unexpected 'q'"},
		{"rle_file of exactly 16 MiB", 4, func(p *Params) { p.RLEFile = exact }, ""},
		{"a long side within the cells", 1, func(p *Params) { p.Width, p.Height, p.Generations = 1<<20, 1, 0 }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			c.set(&p)
			_, err := New(p, c.nodes, nil)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Fatalf("error %v, want one starting %q", err, c.want)
			}
		})
	}
}
