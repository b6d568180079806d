package life

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
)

// randomStream is the second PCG seed word of RandomGrid. It names the
// workload's stream so that the same run seed used by another consumer of
// PCG does not produce the same numbers.
const randomStream = 0x6c6966652d67726e // "life-grn"

// Next is the B3/S23 rule: the state of a cell in the next generation given
// its state (0 dead, anything else alive) and its number of live neighbours
// (0..8). The sequential reference and the distributed tiles both evolve
// cells through this one function, so they cannot disagree on the rule.
func Next(alive uint8, neighbours int) uint8 {
	if neighbours == 3 || (neighbours == 2 && alive != 0) {
		return 1
	}
	return 0
}

// Grid is a finite Life board.
//
// Cells is row-major, cell (x, y) at index y*W+x, y downward, each byte 0
// (dead) or 1 (alive); other values are not allowed, because neighbour
// counts are plain byte sums. With Torus the board wraps around: the
// neighbours of (x, y) are ((x+dx) mod W, (y+dy) mod H) for the eight
// (dx, dy) in {-1,0,1}² other than (0,0), also when W or H is 1 or 2 (a cell
// may then count itself or another cell twice). Without Torus, cells outside
// the board are dead forever.
type Grid struct {
	W, H  int
	Torus bool
	Cells []uint8

	// Scratch kept between steps so that Step does not allocate.
	next []uint8 // the other generation
	pad  []uint8 // three padded rows: the current row and its neighbours
}

// NewGrid returns a dead w×h board. It panics if w or h is negative:
// callers validate user sizes before they get here.
func NewGrid(w, h int, torus bool) *Grid {
	if w < 0 || h < 0 {
		panic(fmt.Sprintf("life.NewGrid: negative size %dx%d", w, h))
	}
	return &Grid{W: w, H: h, Torus: torus, Cells: make([]uint8, w*h)}
}

// RandomGrid returns a w×h board whose cells are alive independently with
// probability density, deterministically in seed. The draw is part of the
// contract: a math/rand/v2 PCG seeded with (seed, randomStream) yields one
// Float64 per cell in row-major order, and the cell is alive iff the value
// is < density.
func RandomGrid(w, h int, torus bool, density float64, seed uint64) *Grid {
	g := NewGrid(w, h, torus)
	r := rand.New(rand.NewPCG(seed, randomStream))
	for i := range g.Cells {
		if r.Float64() < density {
			g.Cells[i] = 1
		}
	}
	return g
}

// Clone returns an independent copy of g.
func (g *Grid) Clone() *Grid {
	return &Grid{W: g.W, H: g.H, Torus: g.Torus, Cells: append([]uint8(nil), g.Cells...)}
}

// Place sets the live cells of p alive with the top-left of p's bounding
// box at (x, y); cells already alive stay alive. It fails, changing
// nothing, if the bounding box does not fit inside the board (also on a
// torus: a pattern that needs wrapping is almost always a mistake in the
// scenario).
func (g *Grid) Place(p Pattern, x, y int) error {
	if p.W < 0 || p.H < 0 || x < 0 || y < 0 || x > g.W-p.W || y > g.H-p.H {
		return fmt.Errorf("life: %dx%d pattern at (%d,%d) does not fit a %dx%d grid", p.W, p.H, x, y, g.W, g.H)
	}
	for _, c := range p.Cells {
		if c[0] < 0 || c[0] >= p.W || c[1] < 0 || c[1] >= p.H {
			return fmt.Errorf("life: pattern cell (%d,%d) outside its %dx%d bounding box", c[0], c[1], p.W, p.H)
		}
	}
	for _, c := range p.Cells {
		g.Cells[(y+c[1])*g.W+x+c[0]] = 1
	}
	return nil
}

// Step advances the board one generation. The new generation is written to
// a second buffer that then becomes Cells, so slices of Cells taken before
// the call describe the old generation and are overwritten by the next Step.
func (g *Grid) Step() {
	w, h := g.W, g.H
	if w == 0 || h == 0 {
		return
	}
	if len(g.next) != w*h {
		g.next = make([]uint8, w*h)
	}
	if len(g.pad) != 3*(w+2) {
		g.pad = make([]uint8, 3*(w+2))
	}
	up, mid, down := g.pad[:w+2], g.pad[w+2:2*(w+2)], g.pad[2*(w+2):]
	g.padRow(up, -1)
	g.padRow(mid, 0)
	for y := range h {
		g.padRow(down, y+1)
		stepRow(g.next[y*w:(y+1)*w], up, mid, down)
		up, mid, down = mid, down, up
	}
	g.Cells, g.next = g.next, g.Cells
}

// padRow fills dst (length W+2) with row y and one cell either side, as the
// boundary dictates: wrapped on a torus, dead otherwise. Reducing both kinds
// of boundary to padded rows leaves a single kernel, stepRow, for all cells.
func (g *Grid) padRow(dst []uint8, y int) {
	w, h := g.W, g.H
	if y < 0 || y >= h {
		if !g.Torus {
			clear(dst)
			return
		}
		y = (y%h + h) % h
	}
	row := g.Cells[y*w : (y+1)*w]
	copy(dst[1:w+1], row)
	if g.Torus {
		dst[0], dst[w+1] = row[w-1], row[0]
	} else {
		dst[0], dst[w+1] = 0, 0
	}
}

// stepRow computes one row of the next generation: dst[x] from column x+1
// of the padded rows up, mid and down, which are len(dst)+2 long.
func stepRow(dst, up, mid, down []uint8) {
	n := len(dst)
	// Sliding sums of three-cell columns: each cell costs one new column.
	a := up[0] + mid[0] + down[0]
	b := up[1] + mid[1] + down[1]
	// Equal-length views let the compiler drop the bounds checks.
	up2, mid2, down2, mid1 := up[2:n+2], mid[2:n+2], down[2:n+2], mid[1:n+1]
	for x := range dst {
		c := up2[x] + mid2[x] + down2[x]
		m := mid1[x]
		dst[x] = Next(m, int(a+b+c-m))
		a, b = b, c
	}
}

// StepPadded computes one generation of a w×h tile for a distributed
// version: src is (w+2)×(h+2), row-major, the tile surrounded by a one-cell
// halo of its neighbours' cells (dead cells outside a dead boundary), and
// dst (w×h, row-major) receives the tile's next generation. It is the kernel
// of Grid.Step, so tiles and reference agree bit for bit. It panics if the
// lengths do not match w and h.
func StepPadded(dst, src []uint8, w, h int) {
	if w < 0 || h < 0 || len(dst) != w*h || len(src) != (w+2)*(h+2) {
		panic(fmt.Sprintf("life.StepPadded: len(dst)=%d len(src)=%d for a %dx%d tile", len(dst), len(src), w, h))
	}
	sw := w + 2
	for y := range h {
		stepRow(dst[y*w:(y+1)*w], src[y*sw:(y+1)*sw], src[(y+1)*sw:(y+2)*sw], src[(y+2)*sw:(y+3)*sw])
	}
}

// Run advances the board gens generations.
func (g *Grid) Run(gens int) {
	for range gens {
		g.Step()
	}
}

// Population returns the number of live cells.
func (g *Grid) Population() int {
	n := 0
	for _, c := range g.Cells {
		n += int(c)
	}
	return n
}

// LiveCells returns the (x, y) coordinates of the live cells in row-major
// order.
func (g *Grid) LiveCells() [][2]int {
	var cells [][2]int
	for i, c := range g.Cells {
		if c != 0 {
			cells = append(cells, [2]int{i % g.W, i / g.W})
		}
	}
	return cells
}

// Digest returns DigestCells(g.W, g.H, g.Cells). The boundary kind is not
// part of it: it is configuration, not state.
func (g *Grid) Digest() string {
	return DigestCells(g.W, g.H, g.Cells)
}

// DigestCells is the state digest of a w×h board, for comparing a
// distributed run with the reference: the 64-bit FNV-1a hash of w and h,
// each as 8 bytes little-endian (uint64), followed by the w*h cell
// bytes in row-major order (0 dead, 1 alive), printed as 16 lowercase hex
// digits. Tiles assemble their cells into one row-major slice and call it.
// It panics if len(cells) != w*h.
func DigestCells(w, h int, cells []uint8) string {
	if len(cells) != w*h {
		panic(fmt.Sprintf("life.DigestCells: %d cells for %dx%d", len(cells), w, h))
	}
	d := fnv.New64a()
	var dims [16]byte
	binary.LittleEndian.PutUint64(dims[:8], uint64(w))
	binary.LittleEndian.PutUint64(dims[8:], uint64(h))
	d.Write(dims[:])
	d.Write(cells)
	return fmt.Sprintf("%016x", d.Sum64())
}

// String draws the board with '.' and 'O', one line per row, for test
// failures and debugging.
func (g *Grid) String() string {
	b := make([]byte, 0, (g.W+1)*g.H)
	for y := range g.H {
		for _, c := range g.Cells[y*g.W : (y+1)*g.W] {
			b = append(b, ".O"[min(c, 1)])
		}
		b = append(b, '\n')
	}
	return string(b)
}
