package stencil

import (
	"encoding/binary"
	"fmt"
	"math"

	"ftsim/sim"
	"ftsim/workloads/internal/limits"
)

// Params configure the stencil workload (scenario keys under [workload]).
type Params struct {
	NX            int64   `toml:"nx"` // real interior size, each axis
	NY            int64   `toml:"ny"`
	NZ            int64   `toml:"nz"`
	Iterations    int64   `toml:"iterations"`      // Jacobi sweeps
	Blocks        []int64 `toml:"blocks"`          // [bx, by, bz]; default: blocks_per_node per node, least cut area
	BlocksPerNode int64   `toml:"blocks_per_node"` // over-decomposition (virtual processors per processor) when blocks is not given
	Seed          int64   `toml:"seed"`            // seed of the initial field (the instance, not the run)
	PointOps      float64 `toml:"point_ops"`       // modeled operations per point update
	BytesPerPoint float64 `toml:"bytes_per_point"` // modeled bytes per point in faces and state
	ModeledNX     int64   `toml:"modeled_nx"`      // modeled problem size; 0 = the real size
	ModeledNY     int64   `toml:"modeled_ny"`
	ModeledNZ     int64   `toml:"modeled_nz"`
	// Reduce adds a global sum of every iterate (a residual norm, a
	// time-step size), over a binary tree of the blocks, that the next
	// sweep waits for: a delay anywhere then holds every block back at the
	// next iteration, as in a code that reduces every time step.
	Reduce bool `toml:"reduce"`
	// Coupled (with Reduce) makes the global sum one of every time step
	// the macro-step stands for: a failed block holds every other at once
	// until it has caught up with where it was (sim.Coupler), instead of at
	// the end of their macro-step, where the delays of two failures in one
	// macro-step would overlap.
	Coupled bool `toml:"coupled"`
}

// DefaultParams is a 48³ interior relaxed for 50 sweeps, one block per node.
func DefaultParams() Params {
	return Params{NX: 48, NY: 48, NZ: 48, Iterations: 50, BlocksPerNode: 1, Seed: 1,
		PointOps: 8, BytesPerPoint: 8}
}

// Limits that keep user input from exhausting memory or overflowing a tag.
const (
	maxPoints     = 1 << 27            // 1 GiB of float64 per copy of the grid
	maxIterations = math.MaxInt32 >> 3 // the iteration lives in the tag, beside a 3-bit direction
)

// Workload is the 3-D 7-point Jacobi relaxation split into bx×by×bz blocks,
// one object per block, each exchanging its six faces with its face
// neighbours every iteration.
type Workload struct {
	p          Params
	bx, by, bz int
	initial    *Grid3
	refDigest  string
	refAnswer  string
	sx, sy, sz float64 // modeled points per real point, each axis
	refSums    uint64  // with Reduce: sumsDigest of the reference's global sums
}

// New builds the workload for a cluster of nodes nodes. resolve is unused
// (the stencil reads no file) and kept for the uniform constructor shape.
func New(p Params, nodes int, resolve func(string) string) (*Workload, error) {
	_ = resolve
	if p.NX < 1 || p.NY < 1 || p.NZ < 1 {
		return nil, fmt.Errorf("workload.nx, ny and nz must be at least 1, got %d×%d×%d", p.NX, p.NY, p.NZ)
	}
	if err := limits.Grid(maxPoints, "points", limits.Dim{Key: "nx", N: p.NX}, limits.Dim{Key: "ny", N: p.NY}, limits.Dim{Key: "nz", N: p.NZ}); err != nil {
		return nil, err
	}
	if p.Iterations < 0 || p.Iterations > maxIterations {
		return nil, fmt.Errorf("workload.iterations must be in [0, %d], got %d", maxIterations, p.Iterations)
	}
	if !(p.PointOps >= 0) || math.IsInf(p.PointOps, 0) {
		return nil, fmt.Errorf("workload.point_ops must be a finite number ≥ 0, got %g", p.PointOps)
	}
	if !(p.BytesPerPoint >= 0) || math.IsInf(p.BytesPerPoint, 0) {
		return nil, fmt.Errorf("workload.bytes_per_point must be a finite number ≥ 0, got %g", p.BytesPerPoint)
	}
	if p.Coupled && !p.Reduce {
		return nil, fmt.Errorf("workload.coupled: couples the blocks through the global sum of every time step: set reduce = true")
	}
	w := &Workload{p: p, sx: 1, sy: 1, sz: 1}
	for _, m := range []struct {
		key   string
		v, n  int64
		scale *float64
	}{{"modeled_nx", p.ModeledNX, p.NX, &w.sx}, {"modeled_ny", p.ModeledNY, p.NY, &w.sy}, {"modeled_nz", p.ModeledNZ, p.NZ, &w.sz}} {
		if m.v < 0 {
			return nil, fmt.Errorf("workload.%s must not be negative (0 = the real size), got %d", m.key, m.v)
		}
		if m.v > 0 {
			*m.scale = float64(m.v) / float64(m.n)
		}
	}
	if err := w.layout(nodes); err != nil {
		return nil, err
	}
	w.initial = NewGrid3(int(p.NX), int(p.NY), int(p.NZ), uint64(p.Seed))
	ref := NewGrid3(int(p.NX), int(p.NY), int(p.NZ), uint64(p.Seed))
	if p.Reduce {
		w.refSums = w.referenceSums(ref)
	} else {
		ref.Run(int(p.Iterations))
	}
	w.refDigest = ref.Digest()
	w.refAnswer = formatSum(ref.Sum())
	return w, nil
}

// formatSum prints the interior sum with every bit of the float64 visible, so
// that two answers are equal as strings exactly when the sums are.
func formatSum(s float64) string { return fmt.Sprintf("%.17g", s) }

// layout chooses the decomposition: the one given, or the factorisation of
// nodes × blocks_per_node into bx·by·bz that fits the grid and cuts the least
// area (every cut plane is a face exchanged each iteration). On a cube that is
// the near-cubic factorisation; on a flat grid it cuts across the long axes.
func (w *Workload) layout(nodes int) error {
	p := w.p
	if len(p.Blocks) != 0 {
		if len(p.Blocks) != 3 || p.Blocks[0] < 1 || p.Blocks[1] < 1 || p.Blocks[2] < 1 {
			return fmt.Errorf("workload.blocks must be [bx, by, bz] with each at least 1, got %v", p.Blocks)
		}
		if _, err := limits.Objects("blocks", "bx × by × bz", p.Blocks...); err != nil {
			return err
		}
		if p.Blocks[0] > p.NX || p.Blocks[1] > p.NY || p.Blocks[2] > p.NZ {
			return fmt.Errorf("workload.blocks %v do not fit a %d×%d×%d grid (at most one block per point along each axis)", p.Blocks, p.NX, p.NY, p.NZ)
		}
		w.bx, w.by, w.bz = int(p.Blocks[0]), int(p.Blocks[1]), int(p.Blocks[2])
		return nil
	}
	if p.BlocksPerNode < 1 {
		return fmt.Errorf("workload.blocks_per_node must be at least 1, got %d", p.BlocksPerNode)
	}
	if nodes < 1 {
		return fmt.Errorf("workload: %d nodes, need at least 1", nodes)
	}
	objects, err := limits.Objects("blocks_per_node", "cluster.nodes × blocks_per_node", int64(nodes), p.BlocksPerNode)
	if err != nil {
		return err
	}
	n := int64(objects)
	if n > p.NX*p.NY*p.NZ {
		return fmt.Errorf("workload: %d nodes × blocks_per_node %d = %d blocks exceed the %d points of the grid (set workload.blocks or a larger grid)",
			nodes, p.BlocksPerNode, n, p.NX*p.NY*p.NZ)
	}
	best := -1.0
	for bx := int64(1); bx <= n && bx <= p.NX; bx++ {
		if n%bx != 0 {
			continue
		}
		for by := int64(1); by <= n/bx && by <= p.NY; by++ {
			if (n/bx)%by != 0 {
				continue
			}
			bz := n / bx / by
			if bz > p.NZ {
				continue
			}
			cut := float64(bx-1)*float64(p.NY*p.NZ) + float64(by-1)*float64(p.NX*p.NZ) + float64(bz-1)*float64(p.NX*p.NY)
			if best < 0 || cut < best {
				best = cut
				w.bx, w.by, w.bz = int(bx), int(by), int(bz)
			}
		}
	}
	if best < 0 {
		return fmt.Errorf("workload: no decomposition of %d blocks (nodes × blocks_per_node) fits a %d×%d×%d grid (set workload.blocks)", n, p.NX, p.NY, p.NZ)
	}
	return nil
}

// Blocks returns the decomposition, blocks along x, y and z.
func (w *Workload) Blocks() (bx, by, bz int) { return w.bx, w.by, w.bz }

// NumObjects implements sim.Workload: one object per block.
func (w *Workload) NumObjects() int { return w.bx * w.by * w.bz }

// TotalProgress implements sim.Workload: one unit per block per iteration.
func (w *Workload) TotalProgress() int64 { return int64(w.NumObjects()) * w.p.Iterations }

// Coupled implements sim.Coupler: Params.Coupled.
func (w *Workload) Coupled() bool { return w.p.Coupled }

// span is the half-open range of interior points (0-based) of part a of b
// along an axis of n points: parts differ by at most one point.
func span(a, b, n int) (lo, size int) {
	lo = a * n / b
	return lo, (a+1)*n/b - lo
}

// Directions, one per face: a face "from direction d" is data of the
// neighbour lying in direction d. d^1 is the opposite direction.
const (
	xMinus = iota
	xPlus
	yMinus
	yPlus
	zMinus
	zPlus
	// dirSelf is the message a lone block (the only one) sends itself to
	// advance one iteration: every step is a message handler.
	dirSelf
	// dirReduce marks the messages of the global sum (Params.Reduce).
	dirReduce
)

// NewObject implements sim.Workload: block id in its initial state. Blocks
// are numbered x fastest, so the block placement keeps x-neighbours together.
func (w *Workload) NewObject(id sim.ObjID) sim.Object {
	a := int(id) % w.bx
	bb := int(id) / w.bx % w.by
	c := int(id) / (w.bx * w.by)
	m := &blockMem{block: block{w: w, id: id, a: a, b: bb, c: c}}
	b := &m.block
	b.pend = m.pend[:0]
	b.x0, b.cx = span(a, w.bx, int(w.p.NX))
	b.y0, b.cy = span(bb, w.by, int(w.p.NY))
	b.z0, b.cz = span(c, w.bz, int(w.p.NZ))
	b.lx, b.ly = b.cx+2, b.cy+2
	// The padded box, boundary layer included, comes from the initial grid:
	// the layer on the grid's own boundary keeps its fixed values for good
	// (no sweep writes it), the layer facing a neighbour is overwritten by
	// its faces before every sweep.
	g := w.initial
	b.u = make([]float64, b.lx*b.ly*(b.cz+2))
	for k := 0; k < b.cz+2; k++ {
		for j := 0; j < b.ly; j++ {
			at := (k*b.ly + j) * b.lx
			src := g.Index(b.x0, b.y0+j, b.z0+k)
			copy(b.u[at:at+b.lx], g.U[src:src+b.lx])
		}
	}
	b.next = append([]float64(nil), b.u...)
	for d := xMinus; d <= zPlus; d++ {
		if _, ok := b.neighbour(d); ok {
			b.expect |= 1 << d
		}
		_, on, _, in, _ := b.faceGeom(d, false)
		b.facePoints[d] = on * in
	}
	if b.expect == 0 {
		b.expect = 1 << dirSelf
	}
	return b
}

// Check implements sim.Workload: the blocks, put together, must equal the
// sequential reference after the same number of sweeps, bit for bit.
func (w *Workload) Check(objs []sim.Object) sim.Outcome {
	nx, ny, nz := int(w.p.NX), int(w.p.NY), int(w.p.NZ)
	all := make([]float64, nx*ny*nz)
	for i, o := range objs {
		b, ok := o.(*block)
		if !ok {
			return sim.Outcome{Detail: fmt.Sprintf("object %d is a %T, not a stencil block", i, o)}
		}
		if b.iter != w.p.Iterations {
			return sim.Outcome{Detail: fmt.Sprintf("block %d ended at iteration %d of %d", b.id, b.iter, w.p.Iterations)}
		}
		for k := 1; k <= b.cz; k++ {
			for j := 1; j <= b.cy; j++ {
				at := ((b.z0+k-1)*ny+b.y0+j-1)*nx + b.x0
				src := (k*b.ly+j)*b.lx + 1
				copy(all[at:at+b.cx], b.u[src:src+b.cx])
			}
		}
	}
	// The sum runs in the order of Grid3.Sum, so that it is the same float64.
	s := 0.0
	for _, v := range all {
		s += v
	}
	d := DigestValues(nx, ny, nz, all)
	out := sim.Outcome{Digest: d, Answer: formatSum(s), OK: d == w.refDigest}
	out.OK = out.OK && out.Answer == w.refAnswer
	if !out.OK {
		out.Detail = fmt.Sprintf("digest %s sum %s, reference %s sum %s", d, out.Answer, w.refDigest, w.refAnswer)
		return out
	}
	if w.p.Reduce {
		for _, o := range objs {
			if b := o.(*block); b.sums != w.refSums {
				out.OK = false
				out.Detail = fmt.Sprintf("block %d saw global sums of digest %016x, the reference's are %016x", b.id, b.sums, w.refSums)
				break
			}
		}
	}
	return out
}

// block is one object: a box of the interior with a one-point layer around
// it, and the faces received for iterations it has not computed yet.
type block struct {
	w          *Workload
	id         sim.ObjID
	a, b, c    int    // block coordinates
	x0, y0, z0 int    // first interior point (0-based) of the grid the block holds
	cx, cy, cz int    // interior points of the block, each axis
	lx, ly     int    // padded row and plane widths
	expect     uint8  // bit d set: a face from direction d comes every iteration (dirSelf: the lone block's tick)
	facePoints [6]int // points of face d, for checking payloads
	iter       int64
	u          []float64 // the current iterate, padded, x fastest
	pend       []pending // by increasing iteration, all ≥ iter
	next       []float64 // scratch for the next iterate, not state
	// sums digests the global sums of the iterates swept from so far
	// (Params.Reduce), in order
	sums uint64
}

// blockMem allocates a block together with the buffers of its first
// inlinePending pending iterations, so that the buffer a face is stored in
// lies beside the block's header, which the same delivery reads. A restore
// fills the same buffers; once a block holds more iterations, its buffers
// move to an array of their own for good.
type blockMem struct {
	block
	pend [inlinePending]pending
}

// inlinePending is as many pending iterations as a block waiting for a
// global sum holds: its own and the next, which its neighbours may have
// swept to.
const inlinePending = 2

// pending holds what arrived for one iteration: a face payload per
// direction (bit d of got set when it is there), and with Params.Reduce
// the iteration's share of the global sum.
type pending struct {
	iter  int64
	got   uint8
	faces [6][]byte
	red   reduction
}

// neighbour returns the block in direction d, or false on the grid's boundary.
func (b *block) neighbour(d int) (sim.ObjID, bool) {
	w := b.w
	a, bb, c := b.a, b.b, b.c
	step := 2*(d&1) - 1 // minus side: -1, plus side: +1
	switch d >> 1 {
	case 0:
		a += step
	case 1:
		bb += step
	default:
		c += step
	}
	if a < 0 || a >= w.bx || bb < 0 || bb >= w.by || c < 0 || c >= w.bz {
		return 0, false
	}
	return sim.ObjID((c*w.by+bb)*w.bx + a), true
}

// faceGeom locates face d in the padded box: the layer the block sends
// (inner, its own outermost interior points) or the layer it receives into
// (its halo). The face is outer rows of inner points; the order (y fastest
// for x faces, x fastest otherwise) is the same on both sides of a cut.
func (b *block) faceGeom(d int, halo bool) (base, outerN, outerStride, innerN, innerStride int) {
	plane := b.lx * b.ly
	layer := func(n int) int {
		switch {
		case d&1 == 0 && halo:
			return 0
		case d&1 == 0:
			return 1
		case halo:
			return n + 1
		}
		return n
	}
	switch d >> 1 {
	case 0:
		return plane + b.lx + layer(b.cx), b.cz, plane, b.cy, b.lx
	case 1:
		return plane + layer(b.cy)*b.lx + 1, b.cz, plane, b.cx, 1
	}
	return layer(b.cz)*plane + b.lx + 1, b.cy, b.lx, b.cx, 1
}

// encodeFace returns the face the neighbour in direction d needs, as
// float64 bits little-endian.
func (b *block) encodeFace(d int) []byte {
	base, on, os, in, is := b.faceGeom(d, false)
	out := make([]byte, 8*on*in)
	n := 0
	for o := 0; o < on; o++ {
		at := base + o*os
		for i := 0; i < in; i++ {
			binary.LittleEndian.PutUint64(out[n:], math.Float64bits(b.u[at+i*is]))
			n += 8
		}
	}
	return out
}

// decodeFace writes the face received from direction d into the halo.
func (b *block) decodeFace(d int, face []byte) {
	base, on, os, in, is := b.faceGeom(d, true)
	n := 0
	for o := 0; o < on; o++ {
		at := base + o*os
		for i := 0; i < in; i++ {
			b.u[at+i*is] = math.Float64frombits(binary.LittleEndian.Uint64(face[n:]))
			n += 8
		}
	}
}

// faceBytes is the modeled size of face d on the wire.
func (b *block) faceBytes(d int) int64 {
	w := b.w
	var n float64
	switch d >> 1 {
	case 0:
		n = float64(b.cy) * w.sy * float64(b.cz) * w.sz
	case 1:
		n = float64(b.cx) * w.sx * float64(b.cz) * w.sz
	default:
		n = float64(b.cx) * w.sx * float64(b.cy) * w.sy
	}
	return int64(math.Ceil(n * w.p.BytesPerPoint))
}

// tag carries the iteration a message is for and the direction the receiver
// files it under, so that it can be buffered until that iteration.
func tag(iter int64, d int) int32 { return int32(iter<<3) | int32(d) }

// sendFaces sends this iteration's faces; the receiver files each under the
// direction it comes from, the opposite of d.
func (b *block) sendFaces(c *sim.Ctx) {
	if b.expect == 1<<dirSelf {
		c.Send(b.id, tag(b.iter, dirSelf), 0, nil)
		return
	}
	for d := xMinus; d <= zPlus; d++ {
		if n, ok := b.neighbour(d); ok {
			c.Send(n, tag(b.iter, d^1), b.faceBytes(d), b.encodeFace(d))
		}
	}
}

// Start sends the faces of the initial iterate (and adds it to its global sum).
func (b *block) Start(c *sim.Ctx) {
	if b.iter < b.w.p.Iterations {
		b.sendFaces(c)
		b.contribute(c)
	}
}

// Handle files a face (or the lone block's tick, or a share of a global
// sum) under its iteration and computes what it can.
func (b *block) Handle(c *sim.Ctx, m *sim.Message) {
	if m.Tag < 0 {
		return
	}
	it, d := int64(m.Tag>>3), int(m.Tag&7)
	if d == dirReduce {
		if b.w.p.Reduce && it >= b.iter && it < b.w.p.Iterations {
			b.reduceMsg(c, m, it)
			b.advance(c)
		}
		return
	}
	// Faces of a past iteration are duplicates a protocol re-sent; faces in
	// the wrong place or of the wrong size are not ours to use.
	if it < b.iter || it >= b.w.p.Iterations || b.expect&(1<<d) == 0 {
		return
	}
	if d != dirSelf && len(m.Payload) != 8*b.facePoints[d] {
		return
	}
	p := b.pendingFor(it)
	p.got |= 1 << d
	if d != dirSelf {
		p.faces[d] = m.Payload
	}
	b.advance(c)
}

// advance computes every iteration whose faces (and, with Params.Reduce,
// the global sum of whose iterate, after its own partial sum went up: see
// setTotal) are all there: after a neighbour ran ahead, that can be more
// than one.
func (b *block) advance(c *sim.Ctx) {
	for len(b.pend) > 0 && b.pend[0].iter == b.iter && b.pend[0].got == b.expect && (!b.w.p.Reduce || b.pend[0].red.has(redSent|redTotal)) {
		b.step(c)
	}
}

// pendingFor returns the buffer of iteration it, inserting it in order.
func (b *block) pendingFor(it int64) *pending {
	i := 0
	for i < len(b.pend) && b.pend[i].iter < it {
		i++
	}
	if i < len(b.pend) && b.pend[i].iter == it {
		return &b.pend[i]
	}
	b.pend = append(b.pend, pending{})
	copy(b.pend[i+1:], b.pend[i:])
	b.pend[i] = pending{iter: it}
	return &b.pend[i]
}

// step computes the next iterate from the block and the faces of pend[0],
// charges it, and sends the new faces.
func (b *block) step(c *sim.Ctx) {
	p := &b.pend[0]
	for d := xMinus; d <= zPlus; d++ {
		if p.got&(1<<d) != 0 {
			b.decodeFace(d, p.faces[d])
		}
	}
	if b.w.p.Reduce {
		b.sums = mixSum(b.sums, p.red.total)
	}
	// Shift the later iterations down and clear the freed slot, so that no
	// payload stays referenced from beyond the slice's length.
	n := copy(b.pend, b.pend[1:])
	b.pend[n] = pending{}
	b.pend = b.pend[:n]

	sweepInterior(b.u, b.next, b.lx, b.ly, b.cz)
	// Both buffers hold the fixed boundary, so swapping keeps it.
	b.u, b.next = b.next, b.u
	b.iter++

	w := b.w
	c.Compute(float64(b.cx*b.cy*b.cz) * w.sx * w.sy * w.sz * w.p.PointOps)
	if b.iter < w.p.Iterations {
		b.sendFaces(c)
		b.contribute(c)
	}
}

// Progress implements sim.Object: the iterations computed.
func (b *block) Progress() int64 { return b.iter }

// ModeledSize implements sim.Object: the modeled block and the modeled faces
// waiting for a later iteration.
func (b *block) ModeledSize() int64 {
	w := b.w
	n := int64(math.Ceil(float64(b.cx*b.cy*b.cz) * w.sx * w.sy * w.sz * w.p.BytesPerPoint))
	for i := range b.pend {
		for d := xMinus; d <= zPlus; d++ {
			if b.pend[i].got&(1<<d) != 0 {
				n += b.faceBytes(d)
			}
		}
	}
	return n
}

// MarshalBinary encodes the iteration, the interior of the block and every
// face buffered for a later iteration; with Params.Reduce, the digest of the
// global sums and each buffered iteration's share of its sum. The boundary
// layer is not state: it is either fixed or refilled from faces before
// each sweep.
func (b *block) MarshalBinary() ([]byte, error) {
	size := 10 + 8 + 8*b.cx*b.cy*b.cz + 10
	for i := range b.pend {
		size += 11 + 1 + 4*8
		for d := xMinus; d <= zPlus; d++ {
			size += 10 + len(b.pend[i].faces[d])
		}
	}
	out := make([]byte, 0, size)
	out = binary.AppendUvarint(out, uint64(b.iter))
	if b.w.p.Reduce {
		out = binary.LittleEndian.AppendUint64(out, b.sums)
	}
	for k := 1; k <= b.cz; k++ {
		for j := 1; j <= b.cy; j++ {
			at := (k*b.ly+j)*b.lx + 1
			for _, v := range b.u[at : at+b.cx] {
				out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
			}
		}
	}
	out = binary.AppendUvarint(out, uint64(len(b.pend)))
	for i := range b.pend {
		p := &b.pend[i]
		out = binary.AppendUvarint(out, uint64(p.iter))
		out = append(out, p.got)
		for d := xMinus; d <= zPlus; d++ {
			if p.got&(1<<d) != 0 {
				out = append(out, p.faces[d]...) // length known from the geometry
			}
		}
		if b.w.p.Reduce {
			out = p.red.appendTo(out)
		}
	}
	return out, nil
}

// UnmarshalBinary restores what MarshalBinary encoded into a block fresh from
// NewObject, rejecting anything that does not fit this block exactly.
func (b *block) UnmarshalBinary(data []byte) error {
	bad := func(what string) error {
		return fmt.Errorf("stencil: block %d: corrupt state: %s", b.id, what)
	}
	it, n := binary.Uvarint(data)
	if n <= 0 || it > uint64(b.w.p.Iterations) {
		return bad("iteration")
	}
	data = data[n:]
	var sums uint64
	if b.w.p.Reduce {
		if len(data) < 8 {
			return bad("digest of the global sums")
		}
		sums, data = binary.LittleEndian.Uint64(data), data[8:]
	}
	if len(data) < 8*b.cx*b.cy*b.cz {
		return bad("block values")
	}
	// The values are copied in only once everything else has been checked,
	// so that a rejected state leaves the block as it was.
	vals := data[:8*b.cx*b.cy*b.cz]
	data = data[len(vals):]
	np, n := binary.Uvarint(data)
	if n <= 0 || np > uint64(len(data)) {
		return bad("buffered faces")
	}
	data = data[n:]
	// decoded on the stack (on the heap only past inlinePending), then
	// copied into the block's own buffers
	var buf [inlinePending]pending
	pend := buf[:0]
	last := int64(it) - 1
	for range np {
		pi, n := binary.Uvarint(data)
		if n <= 0 || int64(pi) <= last || pi >= uint64(b.w.p.Iterations) || len(data) < n+1 {
			return bad("buffered iteration")
		}
		last = int64(pi)
		p := pending{iter: int64(pi), got: data[n]}
		data = data[n+1:]
		if p.got&^b.expect != 0 || (p.got == 0 && !b.w.p.Reduce) {
			return bad("buffered directions")
		}
		for d := xMinus; d <= zPlus; d++ {
			if p.got&(1<<d) == 0 {
				continue
			}
			l := 8 * b.facePoints[d]
			if len(data) < l {
				return bad("buffered face")
			}
			p.faces[d] = append([]byte(nil), data[:l]...)
			data = data[l:]
		}
		if b.w.p.Reduce {
			var ok bool
			if data, ok = p.red.read(data, b.w.children(b.id)); !ok || (p.got == 0 && p.red.flags == 0) {
				return bad("buffered share of a global sum")
			}
		}
		pend = append(pend, p)
	}
	if len(data) != 0 {
		return bad("trailing bytes")
	}
	for k := 1; k <= b.cz; k++ {
		for j := 1; j <= b.cy; j++ {
			at := (k*b.ly+j)*b.lx + 1
			for i := range b.u[at : at+b.cx] {
				b.u[at+i] = math.Float64frombits(binary.LittleEndian.Uint64(vals))
				vals = vals[8:]
			}
		}
	}
	clear(b.pend) // what a block restored twice held
	b.iter, b.pend, b.sums = int64(it), append(b.pend[:0], pend...), sums
	return nil
}
