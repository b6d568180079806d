package dp

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"

	"ftsim/sim"
)

// The directions of the LCS table: which of the three inputs of eq. 4.4
// gave a cell its value, the critical data of thesis 004 eq. 4.7. Ties go
// the way LCS walks back: a match first, then the row above.
const (
	LCSNone byte = iota // the cell is not computed yet
	LCSDiag             // a[i-1] == b[j-1]: t[i-1][j-1] + 1
	LCSUp               // t[i-1][j]
	LCSLeft             // t[i][j-1]
)

// LCSWorkload is the longest common subsequence of A (the table's rows) and
// B (its columns) as an anti-diagonal wavefront (thesis 004 §4.2.3): the
// columns are cut into one contiguous block per object, the rows into
// blocks of BlockRows. Stage r of object k is the block (row block r,
// columns of k): it needs the right edge of block (r, left neighbour) and
// sends its own right edge to its right neighbour, so block (r, k) runs at
// anti-diagonal step r + k. Objects whose column block is empty (more
// objects than columns) are skipped by the neighbour links and start
// finished.
type LCSWorkload struct {
	base
	a, b      string
	blockRows int
	lo        []int       // object k owns table columns lo[k]+1..lo[k+1]
	left      []sim.ObjID // nearest non-empty object on each side, or sim.None
	right     []sim.ObjID
	last      sim.ObjID // the non-empty object holding column len(b), or sim.None
	refLen    int64
	refDigest string
}

func newLCS(a, b string, objects, blockRows int, cost costModel) *LCSWorkload {
	n, m := len(a), len(b)
	if blockRows <= 0 {
		// Four row blocks per object keep the pipeline's fill and drain, P-1
		// of R+P-1 steps, to a fifth of the run.
		blockRows = max(1, (n+4*objects-1)/(4*objects))
	}
	w := &LCSWorkload{a: a, b: b, blockRows: blockRows, last: sim.None}
	w.objects, w.cost = objects, cost
	if n > 0 {
		w.stages = (n + blockRows - 1) / blockRows
	}
	w.lo = make([]int, objects+1)
	for k := range objects {
		w.lo[k], w.lo[k+1] = split(k, m, objects)
	}
	w.left, w.right = make([]sim.ObjID, objects), make([]sim.ObjID, objects)
	prev := sim.ObjID(sim.None)
	for k := range objects {
		w.left[k] = prev
		if w.lo[k+1] > w.lo[k] {
			prev = sim.ObjID(k)
		}
	}
	w.last = prev
	next := sim.ObjID(sim.None)
	for k := objects - 1; k >= 0; k-- {
		w.right[k] = next
		if w.lo[k+1] > w.lo[k] {
			next = sim.ObjID(k)
		}
	}
	w.refLen = int64(LCSLength(a, b))
	w.refDigest = lcsReferenceDigest(a, b)
	return w
}

// Problem implements StagedWorkload.
func (w *LCSWorkload) Problem() string { return "lcs" }

// Strings returns the two input strings: A along the rows, B along the
// columns.
func (w *LCSWorkload) Strings() (a, b string) { return w.a, w.b }

// Columns is object k's share of the table: columns lo+1..hi (B[lo:hi]).
func (w *LCSWorkload) Columns(k sim.ObjID) (lo, hi int) { return w.lo[k], w.lo[k+1] }

func (w *LCSWorkload) empty(k sim.ObjID) bool { return w.lo[k+1] == w.lo[k] }

// rows is the table rows of row block r: r0+1..r1.
func (w *LCSWorkload) rows(r int) (r0, r1 int) {
	return r * w.blockRows, min((r+1)*w.blockRows, len(w.a))
}

// ReceiverSet implements StagedWorkload: the left neighbour, if any.
func (w *LCSWorkload) ReceiverSet(stage int, obj sim.ObjID) []sim.ObjID {
	if stage < 0 || stage >= w.stages || w.empty(obj) || w.left[obj] == sim.None {
		return nil
	}
	return []sim.ObjID{w.left[obj]}
}

// SenderSet implements StagedWorkload: the right neighbour, if any.
func (w *LCSWorkload) SenderSet(stage int, obj sim.ObjID) []sim.ObjID {
	if stage < 0 || stage >= w.stages || w.empty(obj) || w.right[obj] == sim.None {
		return nil
	}
	return []sim.ObjID{w.right[obj]}
}

// SentAfter implements StagedWorkload: the right edge of a block leaves
// when the block is done, for the same stage of the right neighbour.
func (w *LCSWorkload) SentAfter(stage int) int { return stage }

// NewObject implements sim.Workload.
func (w *LCSWorkload) NewObject(id sim.ObjID) sim.Object {
	lo, hi := w.Columns(id)
	o := &LCSObject{w: w, lo: lo, hi: hi}
	o.id = id
	o.row = make([]int32, hi-lo+1)
	o.dirs = make([]byte, (len(w.a)*(hi-lo)+3)/4)
	if w.requests && hi > lo {
		o.edge = make([]int32, len(w.a)+1)
	}
	if hi == lo {
		o.stage = w.stages // nothing to compute
	}
	return o
}

// Check implements sim.Workload: every object must have completed every
// stage; the answer is the last column's bottom cell, the digest covers
// every cell's direction and the last row.
func (w *LCSWorkload) Check(objs []sim.Object) sim.Outcome {
	os := make([]*LCSObject, len(objs))
	for i, x := range objs {
		o, ok := x.(*LCSObject)
		if !ok || o.stage != w.stages {
			return sim.Outcome{Detail: fmt.Sprintf("lcs: object %d is not a finished LCS object", i)}
		}
		os[i] = o
	}
	h := fnv.New64a()
	digestHeader(h, "lcs", len(w.a), len(w.b))
	line := make([]byte, len(w.b))
	for i := 1; i <= len(w.a); i++ {
		for _, o := range os {
			for j := o.lo + 1; j <= o.hi; j++ {
				line[j-1] = o.Direction(i, j)
			}
		}
		h.Write(line)
	}
	last := make([]int32, len(w.b)+1)
	for _, o := range os {
		copy(last[o.lo+1:], o.row[1:])
	}
	h.Write(appendInt32s(nil, last))
	var answer int64
	if w.last != sim.None {
		answer = int64(last[len(w.b)])
	}
	return outcome(answer, digestString(h), w.refLen, w.refDigest)
}

// lcsReferenceDigest computes, row by row without the simulator, the digest
// Check computes from the objects.
func lcsReferenceDigest(a, b string) string {
	h := fnv.New64a()
	digestHeader(h, "lcs", len(a), len(b))
	row := make([]int32, len(b)+1)
	line := make([]byte, len(b))
	for i := 0; i < len(a); i++ {
		diag := row[0]
		for j := 0; j < len(b); j++ {
			up, left := row[j+1], row[j]
			switch {
			case a[i] == b[j]:
				row[j+1], line[j] = diag+1, LCSDiag
			case up >= left:
				line[j] = LCSUp
			default:
				row[j+1], line[j] = left, LCSLeft
			}
			diag = up
		}
		h.Write(line)
	}
	h.Write(appendInt32s(nil, row))
	return digestString(h)
}

// LCSObject is one column block of the LCS table: the last row computed
// over its columns and the direction of every cell computed so far.
type LCSObject struct {
	w *LCSWorkload
	stager
	lo, hi int
	row    []int32 // t[r0][lo..hi] for the next block's top row r0
	dirs   []byte  // 2 bits per cell, row-major over rows 1..len(A) × columns lo+1..hi
	// edge is t[0..r][hi], the right column of the rows computed, kept in
	// request-reply mode: the data of every reply, so that a process
	// rebuilt after a failure can answer a request for a past stage.
	edge []int32

	left, right []int32 // scratch, not state
}

func (o *LCSObject) st() *stager                 { return &o.stager }
func (o *LCSObject) stages() int                 { return o.w.stages }
func (o *LCSObject) common() *base               { return &o.w.base }
func (o *LCSObject) receivers(s int) []sim.ObjID { return o.w.ReceiverSet(s, o.id) }
func (o *LCSObject) sentAfter(s int) int         { return s }

func (o *LCSObject) need(int) int {
	if o.w.left[o.id] == sim.None {
		return 0
	}
	return 1
}

// Columns is the object's share: table columns lo+1..hi.
func (o *LCSObject) Columns() (lo, hi int) { return o.lo, o.hi }

// Row returns the values t[r][lo..hi] of the last row computed (r =
// rows of the stages completed); it aliases the object's state. An object
// without columns computes nothing and its Row is a meaningless zero.
func (o *LCSObject) Row() []int32 { return o.row }

// Direction is the critical data of cell (i, j): which input gave it its
// value (LCSDiag, LCSUp, LCSLeft), or LCSNone if not computed yet. i is a
// table row 1..len(A), j one of the object's columns lo+1..hi.
func (o *LCSObject) Direction(i, j int) byte {
	if i < 1 || i > len(o.w.a) || j <= o.lo || j > o.hi {
		return LCSNone
	}
	c := (i-1)*(o.hi-o.lo) + j - o.lo - 1
	return o.dirs[c>>2] >> (2 * (c & 3)) & 3
}

// Start implements sim.Object.
func (o *LCSObject) Start(c *sim.Ctx) { start(c, o) }

// Handle implements sim.Object.
func (o *LCSObject) Handle(c *sim.Ctx, m *sim.Message) { handle(c, o, m) }

func (o *LCSObject) step(c *sim.Ctx) {
	w := o.w
	r0, r1 := w.rows(o.stage)
	hb := r1 - r0
	if cap(o.left) < hb+1 {
		o.left, o.right = make([]int32, hb+1), make([]int32, hb+1)
	}
	left, right := o.left[:hb+1], o.right[:hb+1]
	if w.left[o.id] == sim.None {
		clear(left) // column 0
	} else {
		in := o.in.take(o.stage)
		copy(left, decodeInt32s(in[0].data, hb+1))
	}
	lcsBlockDirs(w.a[r0:r1], w.b[o.lo:o.hi], o.row, left, right, o.dirs, r0*(o.hi-o.lo))
	if o.edge != nil {
		copy(o.edge[r0+1:r1+1], right[1:])
	}
	c.Compute(w.cost.ops(hb*(o.hi-o.lo), 1))
	// The stage is complete before its edge leaves, so that a protocol
	// seeing the send finds the stage's critical data in the state.
	o.stage++
	if nb := w.right[o.id]; nb != sim.None {
		// The edge runs down the rows, which are real: it is not scaled.
		o.emit(c, &w.base, nb, o.stage-1, w.cost.bytes(hb+1, false), appendInt32s(nil, right))
	}
}

// lcsBlockDirs is LCSBlock with the bottom row written over top (row) and
// each cell's direction recorded: cell (ii, jj) of the block is cell
// cell0 + ii·len(b) + jj of dirs, two bits each.
func lcsBlockDirs(a, b string, row, left, right []int32, dirs []byte, cell0 int) {
	right[0] = row[len(b)]
	for i := 0; i < len(a); i++ {
		diag := row[0]
		row[0] = left[i+1]
		cur := left[i+1]
		ai := a[i]
		c := cell0 + i*len(b)
		for j := 0; j < len(b); j, c = j+1, c+1 {
			up := row[j+1]
			v, d := up, LCSUp
			if ai == b[j] {
				v, d = diag+1, LCSDiag
			} else if cur > v {
				v, d = cur, LCSLeft
			}
			row[j+1] = v
			sh := 2 * (c & 3)
			dirs[c>>2] = dirs[c>>2]&^(3<<sh) | d<<sh
			diag, cur = up, v
		}
		right[i+1] = row[len(b)]
	}
}

// ModeledSize implements sim.Object: the last row and the directions
// computed so far, plus buffered edges.
func (o *LCSObject) ModeledSize() int64 {
	wd := o.hi - o.lo
	if wd == 0 {
		return 0 // no columns: no row, no directions, no edges to receive
	}
	r0, _ := o.w.rows(o.stage)
	if o.stage >= o.w.stages {
		r0 = len(o.w.a)
	}
	dirs := int64(math.Ceil(float64(r0*wd) * o.w.cost.scale / 4)) // 2 bits per cell
	edge := o.w.cost.bytes(len(o.edge), false)
	return o.w.cost.bytes(wd+1, true) + dirs + edge + o.w.cost.bytes(o.in.payloadBytes()/4, false) + o.outboxBytes()
}

// MarshalBinary implements sim.Object: the stage, the row, the directions
// of the rows computed, and the edges received early.
func (o *LCSObject) MarshalBinary() ([]byte, error) {
	b := []byte{kindLCS}
	b = binary.AppendUvarint(b, uint64(o.stage))
	b = appendInt32s(b, o.row)
	b = append(b, o.dirs[:o.dirBytes(o.stage)]...)
	if o.edge != nil {
		b = appendInt32s(b, o.edge[:o.edgeRows(o.stage)])
	}
	b = o.in.appendTo(b)
	if o.w.requests {
		b = o.appendRequests(b)
	}
	return b, nil
}

// edgeRows is the length of the edge prefix t[0..r][hi] after s stages.
func (o *LCSObject) edgeRows(s int) int {
	r, _ := o.w.rows(s)
	if s >= o.w.stages {
		r = len(o.w.a)
	}
	return r + 1
}

// dirBytes is the prefix of dirs holding the cells of stages 0..s-1.
func (o *LCSObject) dirBytes(s int) int {
	r, _ := o.w.rows(s)
	if s >= o.w.stages {
		r = len(o.w.a)
	}
	return (r*(o.hi-o.lo) + 3) / 4
}

// UnmarshalBinary implements sim.Object.
func (o *LCSObject) UnmarshalBinary(data []byte) error {
	d := &decoder{b: data}
	s := d.header(kindLCS, o.w.stages)
	row := make([]int32, len(o.row))
	d.int32s(row)
	dirs := make([]byte, len(o.dirs))
	if d.err == nil {
		copy(dirs, d.bytes(o.dirBytes(s)))
	}
	var edge []int32
	if o.edge != nil {
		edge = make([]int32, len(o.edge))
		if d.err == nil {
			d.int32s(edge[:o.edgeRows(s)])
		}
	}
	in := readInputs(d, s, o.w.stages, o.w.objects)
	if o.w.requests {
		o.readRequests(d, o.w.stages, o.w.objects)
	}
	if err := d.done("lcs", o.id); err != nil {
		return err
	}
	o.stage, o.row, o.dirs, o.in, o.edge = s, row, dirs, in, edge
	return nil
}
