package life

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"ftsim/sim"
	"ftsim/workloads/internal/limits"
)

// Params configure the Game of Life workload (scenario keys under [workload]).
type Params struct {
	Width          int64   `toml:"width"`
	Height         int64   `toml:"height"`
	Generations    int64   `toml:"generations"`
	Boundary       string  `toml:"boundary"`         // "torus" or "dead"
	RLE            string  `toml:"rle"`              // inline RLE pattern
	RLEFile        string  `toml:"rle_file"`         // RLE pattern file
	Offset         []int64 `toml:"offset"`           // [x, y] of the pattern's top-left cell; default: centred
	Density        float64 `toml:"density"`          // random fill when no pattern is given
	FillSeed       int64   `toml:"fill_seed"`        // seed of the random fill (the instance, not the run)
	Tiles          []int64 `toml:"tiles"`            // [columns, rows] of tiles; default: objects_per_node per node, near-square
	ObjectsPerNode int64   `toml:"objects_per_node"` // over-decomposition when tiles is not given
	Graph          string  `toml:"graph"`            // "simple" (exchange then compute) or "overlap" (borders first)
	CellOps        float64 `toml:"cell_ops"`         // modeled operations per cell update
	BytesPerCell   float64 `toml:"bytes_per_cell"`   // modeled bytes per cell in halos and state
	ModeledWidth   int64   `toml:"modeled_width"`    // modeled problem size; 0 = the real size
	ModeledHeight  int64   `toml:"modeled_height"`
}

// DefaultParams is a 256×256 torus with a 30% random fill for 100 generations.
func DefaultParams() Params {
	return Params{Width: 256, Height: 256, Generations: 100, Boundary: "torus", Density: 0.3,
		FillSeed: 1, ObjectsPerNode: 1, Graph: "simple", CellOps: 10, BytesPerCell: 1}
}

// Limits that keep user input from exhausting memory or overflowing a tag.
const (
	// maxCells bounds width × height: a cell is a byte, and a run holds
	// several copies of the board (the initial grid, the reference and its
	// next generation, and per replication the tiles' cells, their next
	// generation and the board Check assembles). A 16384×16384 board (2^28
	// cells) peaks at 2.6 GB with two replications in parallel; 2^30 cells
	// took 8.4 GB for one. Larger boards are modeled (modeled_width,
	// modeled_height), not simulated cell by cell.
	maxCells = 1 << 28
	// maxGenerations keeps gen·8 + direction, the tag of a halo message,
	// within an int32.
	maxGenerations = 1<<28 - 1
	// maxRLEFile bounds the rle_file read: a pattern has at most
	// MaxPatternCells live cells, a few MiB of RLE, so a larger file is
	// a wrong path (a disk image, /dev/zero) rather than a pattern.
	maxRLEFile = 16 << 20
)

// Workload is Conway's Game of Life on a grid split into tiles, one object per
// tile, exchanging halos with their 8 neighbours every generation.
type Workload struct {
	p         Params
	torus     bool
	overlap   bool
	tx, ty    int // tiles per row and per column
	initial   *Grid
	refDigest string
	refPop    int
	sx, sy    float64 // modeled cells per real cell, each axis
}

// New builds the workload for a cluster of nodes nodes. resolve maps a file
// name in the scenario to a path (relative to the scenario file).
func New(p Params, nodes int, resolve func(string) string) (*Workload, error) {
	w := &Workload{p: p}
	switch p.Boundary {
	case "torus":
		w.torus = true
	case "dead":
	default:
		return nil, fmt.Errorf("workload.boundary: %q is neither \"torus\" nor \"dead\"", p.Boundary)
	}
	switch p.Graph {
	case "simple":
	case "overlap":
		w.overlap = true
	default:
		return nil, fmt.Errorf("workload.graph: %q is neither \"simple\" nor \"overlap\"", p.Graph)
	}
	if p.Width < 1 || p.Height < 1 {
		return nil, fmt.Errorf("workload.width and height must be at least 1, got %d×%d", p.Width, p.Height)
	}
	if err := limits.Grid(maxCells, "cells", limits.Dim{Key: "width", N: p.Width}, limits.Dim{Key: "height", N: p.Height}); err != nil {
		return nil, err
	}
	if p.Generations < 0 {
		return nil, errors.New("workload.generations must not be negative")
	}
	if err := limits.AtMost("generations", p.Generations, maxGenerations, "generations for a 32-bit message tag"); err != nil {
		return nil, err
	}
	if p.CellOps < 0 || p.BytesPerCell < 0 {
		return nil, errors.New("workload.cell_ops and bytes_per_cell must not be negative")
	}
	if err := w.layout(nodes); err != nil {
		return nil, err
	}
	w.sx, w.sy = 1, 1
	if p.ModeledWidth > 0 {
		w.sx = float64(p.ModeledWidth) / float64(p.Width)
	}
	if p.ModeledHeight > 0 {
		w.sy = float64(p.ModeledHeight) / float64(p.Height)
	}
	g, err := w.initialGrid(resolve)
	if err != nil {
		return nil, err
	}
	w.initial = g
	ref := g.Clone()
	ref.Run(int(p.Generations))
	w.refDigest, w.refPop = ref.Digest(), ref.Population()
	return w, nil
}

func (w *Workload) layout(nodes int) error {
	W, H := int(w.p.Width), int(w.p.Height)
	if len(w.p.Tiles) != 0 {
		if len(w.p.Tiles) != 2 || w.p.Tiles[0] < 1 || w.p.Tiles[1] < 1 {
			return errors.New("workload.tiles must be [columns, rows] with both at least 1")
		}
		if _, err := limits.Objects("tiles", "columns × rows", w.p.Tiles[0], w.p.Tiles[1]); err != nil {
			return err
		}
		w.tx, w.ty = int(w.p.Tiles[0]), int(w.p.Tiles[1])
	} else {
		if w.p.ObjectsPerNode < 1 {
			return errors.New("workload.objects_per_node must be at least 1")
		}
		n, err := limits.Objects("objects_per_node", "cluster.nodes × objects_per_node", int64(nodes), w.p.ObjectsPerNode)
		if err != nil {
			return err
		}
		w.ty = 1
		for f := int(math.Sqrt(float64(n))); f >= 1; f-- {
			if n%f == 0 {
				w.ty = f
				break
			}
		}
		w.tx = n / w.ty
		if W < H { // more tiles along the longer side
			w.tx, w.ty = w.ty, w.tx
		}
	}
	if w.tx > W || w.ty > H {
		return fmt.Errorf("workload: %d×%d tiles do not fit a %d×%d grid (set workload.tiles or a larger grid)", w.tx, w.ty, W, H)
	}
	return nil
}

func (w *Workload) initialGrid(resolve func(string) string) (*Grid, error) {
	p := w.p
	W, H := int(p.Width), int(p.Height)
	var src, name string
	switch {
	case p.RLE != "" && p.RLEFile != "":
		return nil, errors.New("workload: give rle or rle_file, not both")
	case p.RLE != "":
		src, name = p.RLE, "workload.rle"
	case p.RLEFile != "":
		path := p.RLEFile
		if resolve != nil {
			path = resolve(path)
		}
		b, err := readLimited(path, maxRLEFile)
		if err != nil {
			return nil, fmt.Errorf("workload.rle_file: %w", err)
		}
		src, name = string(b), path
	default:
		if p.Density < 0 || p.Density > 1 {
			return nil, fmt.Errorf("workload.density must be in [0, 1], got %g", p.Density)
		}
		return RandomGrid(W, H, w.torus, p.Density, uint64(p.FillSeed)), nil
	}
	pat, err := ParseRLE(strings.NewReader(src), name)
	if err != nil {
		if p.RLEFile != "" {
			// name the key as well as the file, so that the error is
			// located at the scenario line that points at the file
			return nil, fmt.Errorf("workload.rle_file: %w", err)
		}
		return nil, err
	}
	x, y := (W-pat.W)/2, (H-pat.H)/2
	if len(p.Offset) != 0 {
		if len(p.Offset) != 2 {
			return nil, errors.New("workload.offset must be [x, y]")
		}
		x, y = int(p.Offset[0]), int(p.Offset[1])
	}
	g := NewGrid(W, H, w.torus)
	if err := g.Place(pat, x, y); err != nil {
		return nil, fmt.Errorf("workload.offset: %w", err)
	}
	return g, nil
}

// readLimited reads the file at path, refusing one over max bytes.
func readLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d MiB, more than any pattern takes", path, max>>20)
	}
	return b, nil
}

// NumObjects implements sim.Workload.
func (w *Workload) NumObjects() int { return w.tx * w.ty }

// TotalProgress implements sim.Workload: one unit per tile per generation.
func (w *Workload) TotalProgress() int64 { return int64(w.tx*w.ty) * w.p.Generations }

// bounds is tile (i, j)'s rectangle.
func (w *Workload) bounds(i, j int) (x0, y0, cw, ch int) {
	W, H := int(w.p.Width), int(w.p.Height)
	x0, x1 := i*W/w.tx, (i+1)*W/w.tx
	y0, y1 := j*H/w.ty, (j+1)*H/w.ty
	return x0, y0, x1 - x0, y1 - y0
}

// NewObject implements sim.Workload: tile id in its initial state.
func (w *Workload) NewObject(id sim.ObjID) sim.Object {
	i, j := int(id)%w.tx, int(id)/w.tx
	x0, y0, cw, ch := w.bounds(i, j)
	t := &tile{w: w, id: id, i: i, j: j, x0: x0, y0: y0, cw: cw, ch: ch}
	t.cells = make([]uint8, cw*ch)
	for y := 0; y < ch; y++ {
		copy(t.cells[y*cw:(y+1)*cw], w.initial.Cells[(y0+y)*int(w.p.Width)+x0:])
	}
	return t
}

// Check implements sim.Workload: the tiles, put together, must equal the
// sequential reference after the same number of generations.
func (w *Workload) Check(objs []sim.Object) sim.Outcome {
	W := int(w.p.Width)
	cells := make([]uint8, W*int(w.p.Height))
	pop := 0
	for _, o := range objs {
		t := o.(*tile)
		if t.gen != int(w.p.Generations) {
			return sim.Outcome{Detail: fmt.Sprintf("tile %d ended at generation %d of %d", t.id, t.gen, w.p.Generations)}
		}
		for y := 0; y < t.ch; y++ {
			copy(cells[(t.y0+y)*W+t.x0:], t.cells[y*t.cw:(y+1)*t.cw])
		}
	}
	for _, c := range cells {
		pop += int(c)
	}
	d := DigestCells(W, int(w.p.Height), cells)
	out := sim.Outcome{Digest: d, Answer: fmt.Sprint(pop), OK: d == w.refDigest && pop == w.refPop}
	if !out.OK {
		out.Detail = fmt.Sprintf("digest %s population %d, reference %s population %d", d, pop, w.refDigest, w.refPop)
	}
	return out
}

// Directions, as (dx, dy) with y down. A halo "from direction d" is the data of
// the neighbour lying in direction d.
var dirs = [8][2]int{{0, -1}, {0, 1}, {-1, 0}, {1, 0}, {-1, -1}, {1, -1}, {-1, 1}, {1, 1}}

// tile is one object: a rectangle of cells and the halos received so far.
type tile struct {
	w              *Workload
	id             sim.ObjID
	i, j           int // tile coordinates
	x0, y0, cw, ch int
	gen            int
	cells          []uint8
	halo           [2][8][]uint8 // by generation parity and direction the data comes from
	got            [2]uint8      // bit d set: halo from direction d received
	later          []laterHalos  // halos of the generations beyond the next, in order
	pad, next      []uint8       // scratch, not state
}

// neighbour returns the tile in direction d, or false past a dead boundary.
func (t *tile) neighbour(d int) (sim.ObjID, bool) {
	w := t.w
	i, j := t.i+dirs[d][0], t.j+dirs[d][1]
	if i < 0 || i >= w.tx || j < 0 || j >= w.ty {
		if !w.torus {
			return 0, false
		}
		i, j = (i+w.tx)%w.tx, (j+w.ty)%w.ty
	}
	return sim.ObjID(j*w.tx + i), true
}

func (t *tile) expected() uint8 {
	var m uint8
	for d := range dirs {
		if _, ok := t.neighbour(d); ok {
			m |= 1 << d
		}
	}
	return m
}

// border returns the cells of this tile that the neighbour in direction d needs.
func (t *tile) border(d int) []uint8 {
	cw, ch := t.cw, t.ch
	switch d {
	case 0:
		return bytes.Clone(t.cells[:cw])
	case 1:
		return bytes.Clone(t.cells[(ch-1)*cw:])
	case 2, 3:
		x := 0
		if d == 3 {
			x = cw - 1
		}
		col := make([]uint8, ch)
		for y := range col {
			col[y] = t.cells[y*cw+x]
		}
		return col
	}
	x, y := 0, 0
	if dirs[d][0] > 0 {
		x = cw - 1
	}
	if dirs[d][1] > 0 {
		y = ch - 1
	}
	return []uint8{t.cells[y*cw+x]}
}

// modeledBytes is the modeled size of the border sent in direction d.
func (t *tile) modeledBytes(d int) int64 {
	n := 1.0
	switch d {
	case 0, 1:
		n = float64(t.cw) * t.w.sx
	case 2, 3:
		n = float64(t.ch) * t.w.sy
	}
	return int64(math.Ceil(n * t.w.p.BytesPerCell))
}

// sendBorders sends this generation's borders; the receiver files each under
// the direction it comes from, which is the opposite of d.
func (t *tile) sendBorders(c *sim.Ctx) {
	if t.expected() == 0 {
		c.Send(t.id, tagAlone, 0, nil)
		return
	}
	for d := range dirs {
		if n, ok := t.neighbour(d); ok {
			c.Send(n, int32(t.gen*8+reverse(d)), t.modeledBytes(d), t.border(d))
		}
	}
}

// reverse is the direction from which the neighbour in direction d sees us.
func reverse(d int) int {
	return dirIndex(-dirs[d][0], -dirs[d][1])
}

func dirIndex(dx, dy int) int {
	for d, v := range dirs {
		if v[0] == dx && v[1] == dy {
			return d
		}
	}
	panic("no such direction")
}

// tagAlone drives a tile that has no neighbour at all (one tile, dead
// boundary) from one generation to the next.
const tagAlone = -1

func (t *tile) Start(c *sim.Ctx) {
	if t.gen < int(t.w.p.Generations) {
		t.sendBorders(c)
	}
}

func (t *tile) Handle(c *sim.Ctx, m *sim.Message) {
	if m.Tag == tagAlone {
		t.step(c)
		return
	}
	g, d := int(m.Tag)/8, int(m.Tag)%8
	if g < t.gen {
		return // a duplicate a protocol re-sent: its generation is done
	}
	if g >= t.gen+2 {
		// A neighbour can be two or more generations ahead when it runs
		// on borders of this tile sent by another copy of it (process
		// replication's twin, which is ahead): keep them for later, as an
		// MPI library keeps an unexpected message, rather than let them
		// take the parity slot of this generation.
		l := t.laterFor(g)
		l.halo[d] = m.Payload
		l.got |= 1 << d
		return
	}
	par := g % 2
	t.halo[par][d] = m.Payload
	t.got[par] |= 1 << d
	// a protocol may deliver a neighbour's border of the next generation
	// before its border of this one (message logging hands out the order
	// of messages that reach a restarted object again as their tickets
	// come in): the next generation may be complete once this one is
	for t.gen < int(t.w.p.Generations) && t.got[t.gen%2] == t.expected() {
		t.step(c)
	}
}

// laterHalos are the halos received for a generation beyond the next.
type laterHalos struct {
	gen  int
	got  uint8
	halo [8][]uint8
}

// laterFor returns the halos of generation g (≥ gen+2), inserting them in
// order.
func (t *tile) laterFor(g int) *laterHalos {
	i := 0
	for i < len(t.later) && t.later[i].gen < g {
		i++
	}
	if i == len(t.later) || t.later[i].gen != g {
		t.later = slices.Insert(t.later, i, laterHalos{gen: g})
	}
	return &t.later[i]
}

// step computes the next generation from the cells and the halos, charging
// modeled compute; the overlapped graph charges and sends the borders first.
func (t *tile) step(c *sim.Ctx) {
	cw, ch := t.cw, t.ch
	par := t.gen % 2
	pw := cw + 2
	if t.pad == nil {
		t.pad = make([]uint8, pw*(ch+2))
		t.next = make([]uint8, cw*ch)
	}
	clear(t.pad)
	for y := 0; y < ch; y++ {
		copy(t.pad[(y+1)*pw+1:], t.cells[y*cw:(y+1)*cw])
	}
	h := &t.halo[par]
	if b := h[0]; b != nil {
		copy(t.pad[1:], b)
	}
	if b := h[1]; b != nil {
		copy(t.pad[(ch+1)*pw+1:], b)
	}
	for y := 0; y < ch; y++ {
		if b := h[2]; b != nil {
			t.pad[(y+1)*pw] = b[y]
		}
		if b := h[3]; b != nil {
			t.pad[(y+1)*pw+cw+1] = b[y]
		}
	}
	corner := func(d, x, y int) {
		if b := h[d]; b != nil {
			t.pad[y*pw+x] = b[0]
		}
	}
	corner(4, 0, 0)
	corner(5, cw+1, 0)
	corner(6, 0, ch+1)
	corner(7, cw+1, ch+1)
	StepPadded(t.next, t.pad, cw, ch)
	t.cells, t.next = t.next, t.cells
	*h = [8][]uint8{}
	t.got[par] = 0
	t.gen++
	// the freed slot is the new next generation's
	if len(t.later) > 0 && t.later[0].gen == t.gen+1 {
		t.halo[par], t.got[par] = t.later[0].halo, t.later[0].got
		n := copy(t.later, t.later[1:])
		t.later[n] = laterHalos{} // drop the payloads' references
		t.later = t.later[:n]
	}

	ops := t.w.p.CellOps * t.w.sx * t.w.sy
	all := float64(cw * ch)
	more := t.gen < int(t.w.p.Generations)
	if t.w.overlap && more {
		edge := float64(min(all, float64(2*cw+2*ch-4)))
		c.Compute(edge * ops)
		t.sendBorders(c)
		c.Compute((all - edge) * ops)
		return
	}
	c.Compute(all * ops)
	if more {
		t.sendBorders(c)
	}
}

func (t *tile) Progress() int64 { return int64(t.gen) }

func (t *tile) ModeledSize() int64 {
	return int64(math.Ceil(float64(t.cw*t.ch) * t.w.sx * t.w.sy * t.w.p.BytesPerCell))
}

// MarshalBinary encodes the generation, the cells and the halos received for
// the current and the next generation, then, only if there are any, those of
// later generations (a count, then each generation's distance beyond the
// next and its halos).
func (t *tile) MarshalBinary() ([]byte, error) {
	b := binary.AppendUvarint(nil, uint64(t.gen))
	b = append(b, t.cells...)
	for par := 0; par < 2; par++ {
		b = appendHalos(b, t.got[par], &t.halo[par])
	}
	if len(t.later) > 0 {
		b = binary.AppendUvarint(b, uint64(len(t.later)))
		for i := range t.later {
			l := &t.later[i]
			b = binary.AppendUvarint(b, uint64(l.gen-t.gen-2))
			b = appendHalos(b, l.got, &l.halo)
		}
	}
	return b, nil
}

// appendHalos encodes the halos of one generation: the directions received,
// then each one's length and cells.
func appendHalos(b []byte, got uint8, halo *[8][]uint8) []byte {
	b = append(b, got)
	for d := 0; d < 8; d++ {
		if got&(1<<d) != 0 {
			b = binary.AppendUvarint(b, uint64(len(halo[d])))
			b = append(b, halo[d]...)
		}
	}
	return b
}

// readHalos decodes what appendHalos encoded, and returns the rest of b.
func readHalos(b []byte, got *uint8, halo *[8][]uint8) ([]byte, bool) {
	if len(b) < 1 {
		return nil, false
	}
	*got, b = b[0], b[1:]
	for d := 0; d < 8; d++ {
		halo[d] = nil
		if *got&(1<<d) == 0 {
			continue
		}
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return nil, false
		}
		halo[d] = bytes.Clone(b[n : n+int(l)])
		b = b[n+int(l):]
	}
	return b, true
}

// UnmarshalBinary restores what MarshalBinary encoded.
func (t *tile) UnmarshalBinary(b []byte) error {
	bad := fmt.Errorf("life: tile %d: corrupt state", t.id)
	g, n := binary.Uvarint(b)
	if n <= 0 || len(b) < n+len(t.cells) {
		return bad
	}
	t.gen = int(g)
	b = b[n:]
	copy(t.cells, b)
	b = b[len(t.cells):]
	var ok bool
	for par := 0; par < 2; par++ {
		if b, ok = readHalos(b, &t.got[par], &t.halo[par]); !ok {
			return bad
		}
	}
	t.later = nil
	if len(b) == 0 {
		return nil
	}
	count, n := binary.Uvarint(b)
	if n <= 0 || count == 0 || count > uint64(len(b)) {
		return bad
	}
	b = b[n:]
	for range count {
		dist, n := binary.Uvarint(b)
		if n <= 0 || dist > uint64(t.w.p.Generations) {
			return bad
		}
		l := laterHalos{gen: t.gen + 2 + int(dist)}
		if k := len(t.later); k > 0 && t.later[k-1].gen >= l.gen {
			return bad // out of order
		}
		if b, ok = readHalos(b[n:], &l.got, &l.halo); !ok || l.got == 0 {
			return bad
		}
		t.later = append(t.later, l)
	}
	if len(b) != 0 {
		return bad
	}
	return nil
}
