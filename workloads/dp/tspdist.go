package dp

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"slices"

	"ftsim/sim"
)

// TSPWorkload is Held-Karp with stage s computing the subsets of size s+1
// (thesis 004 Algorithm 1, Fig. 4.4). The subsets of a stage, in increasing
// mask order (which is colex order, the order of HeldKarpTable.Stage), are
// dealt round-robin by rank: the subset of rank r belongs to object r mod
// P, which computes its whole row C[S][j], j in S. A cell needs the row of
// S\{j} from the previous stage, so after stage s-1 every object sends each
// other object, in one message, the rows it owns that the other's subsets
// need (the all-to-all of Fig. 4.5c). The object holding the full set (rank
// 0, object 0) closes the tour at the last stage. Each cell records its
// predecessor city, the critical data of eq. 4.9.
type TSPWorkload struct {
	base
	tsp       *TSP
	n         int       // cities
	d         []int32   // n×n distances
	binom     [][]int64 // binom[p][i] = C(p, i) for p <= n
	refLength int64
	refDigest string
}

func newTSP(t *TSP, objects int, cost costModel) (*TSPWorkload, error) {
	h, err := NewHeldKarpTable(t)
	if err != nil {
		return nil, err
	}
	n := t.N
	w := &TSPWorkload{tsp: t, n: n, d: make([]int32, n*n)}
	w.objects, w.cost = objects, cost
	if n > 1 {
		w.stages = n - 1
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			w.d[i*n+j] = int32(t.Dist(i, j))
		}
	}
	w.binom = make([][]int64, n+1)
	for p := range w.binom {
		w.binom[p] = make([]int64, n+1)
		w.binom[p][0] = 1
		for i := 1; i <= p; i++ {
			w.binom[p][i] = w.binom[p-1][i-1] + w.binom[p-1][i]
		}
	}
	w.refLength, w.refDigest = tspReference(h)
	return w, nil
}

// tspReference fills the Held-Karp table stage by stage as FillStage does,
// hashing each cell and its predecessor (what Check hashes from the
// objects), and closes the tour.
func tspReference(h *HeldKarpTable) (int64, string) {
	n := h.Cities()
	d := fnv.New64a()
	digestHeader(d, "tsp", n)
	var buf []byte
	for k := 1; k < n; k++ {
		buf = buf[:0]
		for _, S := range h.Stage(k) {
			for r := S; r != 0; r &= r - 1 {
				j := bits.TrailingZeros32(r)
				c, pred := h.Relax(S, j)
				h.Set(S, j, c)
				buf = binary.LittleEndian.AppendUint32(buf, uint32(c))
				buf = append(buf, byte(pred))
			}
		}
		d.Write(buf)
	}
	length, _ := h.Tour()
	return int64(length), digestString(d)
}

// Problem implements StagedWorkload.
func (w *TSPWorkload) Problem() string { return "tsp" }

// Instance returns the instance being solved.
func (w *TSPWorkload) Instance() *TSP { return w.tsp }

// size is the number of subsets of stage s.
func (w *TSPWorkload) size(s int) int { return int(w.binom[w.n-1][s+1]) }

// rank is the colex rank of set S (bits 1..n-1) among the sets of its size.
func (w *TSPWorkload) rank(S uint32) int {
	r, i := int64(0), 1
	for x := S >> 1; x != 0; x &= x - 1 {
		r += w.binom[bits.TrailingZeros32(x)][i]
		i++
	}
	return int(r)
}

// unrank is the set of size k with colex rank r.
func (w *TSPWorkload) unrank(k, r int) uint32 {
	var S uint32
	rr, p := int64(r), w.n-1
	for i := k; i >= 1; i-- {
		p--
		for w.binom[p][i] > rr {
			p--
		}
		rr -= w.binom[p][i]
		S |= 1 << (p + 1)
	}
	return S
}

// ownerOf is the object computing set S's row.
func (w *TSPWorkload) ownerOf(S uint32) sim.ObjID { return sim.ObjID(w.rank(S) % w.objects) }

// Subsets are the sets of stage s that object obj owns, in increasing
// order: ranks obj, obj+P, obj+2P, ...
func (w *TSPWorkload) Subsets(stage int, obj sim.ObjID) []uint32 {
	if stage < 0 || stage >= w.stages {
		return nil
	}
	var out []uint32
	for r := int(obj); r < w.size(stage); r += w.objects {
		out = append(out, w.unrank(stage+1, r))
	}
	return out
}

// tspPlan is one side of the all-to-all before a stage: for each peer, the
// rows of the previous stage exchanged with it, in increasing mask order
// (the order of the message's payload).
type tspPlan struct {
	peers []sim.ObjID
	rows  [][]uint32
}

func planOf(m map[sim.ObjID][]uint32) tspPlan {
	var p tspPlan
	for q := range m {
		p.peers = append(p.peers, q)
	}
	slices.Sort(p.peers)
	for _, q := range p.peers {
		rows := m[q]
		slices.Sort(rows)
		p.rows = append(p.rows, slices.Compact(rows))
	}
	return p
}

// recvPlan is what obj receives for stage: the rows S\{j} of its sets S
// that other objects own.
func (w *TSPWorkload) recvPlan(stage int, obj sim.ObjID) tspPlan {
	if stage < 1 || stage >= w.stages {
		return tspPlan{}
	}
	m := map[sim.ObjID][]uint32{}
	for _, S := range w.Subsets(stage, obj) {
		for r := S; r != 0; r &= r - 1 {
			T := S &^ (r & -r)
			if q := w.ownerOf(T); q != obj {
				m[q] = append(m[q], T)
			}
		}
	}
	return planOf(m)
}

// sendPlan is what obj sends for stage: its rows T of stage-1 whose
// supersets T∪{c} other objects own.
func (w *TSPWorkload) sendPlan(stage int, obj sim.ObjID) tspPlan {
	if stage < 1 || stage >= w.stages {
		return tspPlan{}
	}
	all := uint32(1)<<w.n - 2
	m := map[sim.ObjID][]uint32{}
	for _, T := range w.Subsets(stage-1, obj) {
		for r := all &^ T; r != 0; r &= r - 1 {
			if q := w.ownerOf(T | r&-r); q != obj {
				if l := m[q]; len(l) == 0 || l[len(l)-1] != T {
					m[q] = append(l, T)
				}
			}
		}
	}
	return planOf(m)
}

// ReceiverSet implements StagedWorkload. It enumerates obj's cells of the
// stage, so it costs O(cells of obj in the stage).
func (w *TSPWorkload) ReceiverSet(stage int, obj sim.ObjID) []sim.ObjID {
	return w.recvPlan(stage, obj).peers
}

// SenderSet implements StagedWorkload, at the cost of ReceiverSet.
func (w *TSPWorkload) SenderSet(stage int, obj sim.ObjID) []sim.ObjID {
	return w.sendPlan(stage, obj).peers
}

// Rows is the rows (sets of stage-1) that from sends to for stage, in
// payload order: each row is C[T][i] for i in T, increasing.
func (w *TSPWorkload) Rows(stage int, from, to sim.ObjID) []uint32 {
	p := w.sendPlan(stage, from)
	if i, ok := slices.BinarySearch(p.peers, to); ok {
		return p.rows[i]
	}
	return nil
}

// SentAfter implements StagedWorkload: rows of stage-1 leave when done.
func (w *TSPWorkload) SentAfter(stage int) int { return stage - 1 }

// NewObject implements sim.Workload.
func (w *TSPWorkload) NewObject(id sim.ObjID) sim.Object {
	o := &TSPObject{w: w, tour: -1, planStage: -1, chunkStage: -1}
	o.id = id
	if w.n == 1 && id == 0 {
		o.tour = 0
	}
	return o
}

// Check implements sim.Workload: every object must have completed every
// stage; the answer is the tour object 0 closed, the digest covers every
// cell and its predecessor.
func (w *TSPWorkload) Check(objs []sim.Object) sim.Outcome {
	os := make([]*TSPObject, len(objs))
	for i, x := range objs {
		o, ok := x.(*TSPObject)
		if !ok || o.stage != w.stages {
			return sim.Outcome{Detail: fmt.Sprintf("tsp: object %d is not a finished TSP object", i)}
		}
		os[i] = o
	}
	d := fnv.New64a()
	digestHeader(d, "tsp", w.n)
	var buf []byte
	for s := 0; s < w.stages; s++ {
		buf = buf[:0]
		k := s + 1
		for r := 0; r < w.size(s); r++ {
			o, at := os[r%w.objects], r/w.objects*k
			for c := 0; c < k; c++ {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(o.vals[s][at+c]))
				buf = append(buf, o.preds[s][at+c])
			}
		}
		d.Write(buf)
	}
	return outcome(os[0].tour, digestString(d), w.refLength, w.refDigest)
}

// TSPObject holds the rows of the subsets it owns, for every stage done:
// their costs and predecessors.
type TSPObject struct {
	w *TSPWorkload
	stager
	vals  [][]int32 // per stage s: C[S][j] of its sets S in rank order, j in S increasing
	preds [][]uint8 // the matching predecessor cities
	tour  int64     // the optimal tour length once object 0 closed it, else -1
	// The stage being computed in chunks: its first done subsets' costs and
	// predecessors so far.
	done     int
	cur      []int32
	curPreds []uint8

	planStage int     // scratch, not state: the stage recv was computed for
	recv      tspPlan // scratch

	chunkStage int                // scratch: the stage chunkMine and chunkRows are for
	chunkMine  []uint32           // scratch: the subsets of that stage
	chunkRows  map[uint32][]int32 // scratch: the rows of the stage before that they need
}

func (o *TSPObject) st() *stager                 { return &o.stager }
func (o *TSPObject) stages() int                 { return o.w.stages }
func (o *TSPObject) common() *base               { return &o.w.base }
func (o *TSPObject) receivers(s int) []sim.ObjID { return o.plan(s).peers }
func (o *TSPObject) sentAfter(s int) int         { return s - 1 }

func (o *TSPObject) plan(s int) tspPlan {
	if o.planStage != s {
		o.recv, o.planStage = o.w.recvPlan(s, o.id), s
	}
	return o.recv
}

func (o *TSPObject) need(s int) int { return len(o.plan(s).peers) }

// Cell is the critical data of cell C[S][j] for a set S this object owns
// whose stage is done: its cost and predecessor, the city before j on the
// best path (0 when S = {j}).
func (o *TSPObject) Cell(S uint32, j int) (cost int32, pred int, ok bool) {
	k := bits.OnesCount32(S)
	s := k - 1
	w := o.w
	if S&1 != 0 || k == 0 || S>>w.n != 0 || S&(1<<j) == 0 || s >= o.stage {
		return 0, 0, false
	}
	r := w.rank(S)
	if r%w.objects != int(o.id) {
		return 0, 0, false
	}
	at := r/w.objects*k + bits.OnesCount32(S&(1<<j-1))
	return o.vals[s][at], int(o.preds[s][at]), true
}

// Start implements sim.Object.
func (o *TSPObject) Start(c *sim.Ctx) { start(c, o) }

// Handle implements sim.Object.
func (o *TSPObject) Handle(c *sim.Ctx, m *sim.Message) { handle(c, o, m) }

// tspChunkTerms bounds the terms of the minimum one handler computes: a
// stage is computed in chunks of subsets, so that a process answers the
// messages waiting for it (requests, in request-reply mode) between chunks
// instead of after a stage that may take a large share of the run, and the
// messages a handler sends do not hold its network interface for that long.
const tspChunkTerms = 1 << 13

func (o *TSPObject) step(c *sim.Ctx) {
	w := o.w
	s, k, n := o.stage, o.stage+1, w.n
	if o.chunkStage != s {
		// The subsets and the previous rows serve every chunk of the stage.
		o.chunkStage, o.chunkMine, o.chunkRows = s, w.Subsets(s, o.id), nil
		if k > 1 {
			o.chunkRows = o.prevRows(s)
		}
	}
	mine := o.chunkMine
	vals, preds := o.cur, o.curPreds
	if vals == nil {
		vals, preds = make([]int32, 0, len(mine)*k), make([]uint8, 0, len(mine)*k)
	}
	from := o.done
	if k == 1 {
		for _, S := range mine {
			j := bits.TrailingZeros32(S)
			vals, preds = append(vals, w.d[j]), append(preds, 0)
		}
		o.done = len(mine)
	} else {
		prev := o.chunkRows
		terms := 0
		for ; o.done < len(mine) && terms < tspChunkTerms; o.done++ {
			S := mine[o.done]
			terms += k * (k - 1)
			for r := S; r != 0; r &= r - 1 {
				j := bits.TrailingZeros32(r)
				T := S &^ (1 << j)
				row := prev[T]
				best, pred := int32(math.MaxInt32), 0
				idx := 0
				for x := T; x != 0; x &= x - 1 {
					i := bits.TrailingZeros32(x)
					if v := row[idx] + w.d[i*n+j]; v < best {
						best, pred = v, i
					}
					idx++
				}
				vals, preds = append(vals, best), append(preds, uint8(pred))
			}
		}
	}
	c.Compute(w.cost.ops((o.done-from)*k, max(1, k-1)))
	if o.done < len(mine) {
		o.cur, o.curPreds = vals, preds // the next chunk continues the stage
		return
	}
	o.cur, o.curPreds, o.done = nil, nil, 0
	o.chunkStage, o.chunkMine, o.chunkRows = -1, nil, nil
	o.in.take(s) // the stage's inputs are used up
	o.vals, o.preds = append(o.vals, vals), append(o.preds, preds)
	o.stage++
	if o.stage == w.stages && len(mine) == 1 && k == n-1 {
		o.tour = w.close(mine[0], vals)
	}
	if o.stage < w.stages {
		p := w.sendPlan(o.stage, o.id)
		for x, q := range p.peers {
			payload := make([]byte, 0, 4*k*len(p.rows[x]))
			for _, T := range p.rows[x] {
				at := w.rank(T) / w.objects * k
				payload = appendInt32s(payload, vals[at:at+k])
			}
			o.emit(c, &w.base, q, o.stage, w.cost.bytes(k*len(p.rows[x]), true), payload)
		}
	}
}

// prevRows maps every set of stage s-1 that object's stage-s cells need to
// its row: its own from the state, the others from the stage's messages.
func (o *TSPObject) prevRows(s int) map[uint32][]int32 {
	w := o.w
	k := s // row length of stage s-1
	rows := map[uint32][]int32{}
	for x, T := range w.Subsets(s-1, o.id) {
		rows[T] = o.vals[s-1][x*k : x*k+k]
	}
	p := o.plan(s)
	in := o.in.peek(s)
	if len(in) != len(p.peers) {
		panic(fmt.Sprintf("dp: tsp object %d stage %d: %d messages, want %d", o.id, s, len(in), len(p.peers)))
	}
	for x, msg := range in {
		if msg.src != p.peers[x] {
			panic(fmt.Sprintf("dp: tsp object %d stage %d: message from %d, want %d", o.id, s, msg.src, p.peers[x]))
		}
		v := decodeInt32s(msg.data, k*len(p.rows[x]))
		for y, T := range p.rows[x] {
			rows[T] = v[y*k : y*k+k]
		}
	}
	return rows
}

// cells is the number of cells the object owns in stages 0..s-1.
func (o *TSPObject) cells(s int) int {
	n := 0
	for t := 0; t < s; t++ {
		n += (o.w.size(t) - int(o.id) + o.w.objects - 1) / o.w.objects * (t + 1)
	}
	return n
}

// ModeledSize implements sim.Object: the cells computed so far, each a
// cost and a one-byte predecessor, and the rows received early.
func (o *TSPObject) ModeledSize() int64 {
	c := o.cells(o.stage) + len(o.cur)
	return o.w.cost.bytes(c, true) + int64(math.Ceil(float64(c)*o.w.cost.scale)) +
		o.w.cost.bytes(o.in.payloadBytes()/4, true) + o.outboxBytes()
}

// MarshalBinary implements sim.Object: the stage, the tour, every stage's
// costs and predecessors, and the rows received early.
func (o *TSPObject) MarshalBinary() ([]byte, error) {
	b := []byte{kindTSP}
	b = binary.AppendUvarint(b, uint64(o.stage))
	b = binary.AppendUvarint(b, uint64(o.tour+1))
	for s := 0; s < o.stage; s++ {
		b = appendInt32s(b, o.vals[s])
		b = append(b, o.preds[s]...)
	}
	b = binary.AppendUvarint(b, uint64(o.done))
	b = appendInt32s(b, o.cur)
	b = append(b, o.curPreds...)
	b = o.in.appendTo(b)
	if o.w.requests {
		b = o.appendRequests(b)
	}
	return b, nil
}

// UnmarshalBinary implements sim.Object.
func (o *TSPObject) UnmarshalBinary(data []byte) error {
	w := o.w
	d := &decoder{b: data}
	st := d.header(kindTSP, w.stages)
	tour := int64(d.uvarint()) - 1
	var vals [][]int32
	var preds [][]uint8
	for s := 0; s < st && d.err == nil; s++ {
		n := (w.size(s) - int(o.id) + w.objects - 1) / w.objects * (s + 1)
		if n*5 > len(d.b) {
			d.fail("truncated")
			break
		}
		v := make([]int32, n)
		d.int32s(v)
		p := append([]uint8(nil), d.bytes(n)...)
		vals, preds = append(vals, v), append(preds, p)
	}
	var cur []int32
	var curPreds []uint8
	done := d.uvarint()
	if d.err == nil && done > 0 {
		mine := (w.size(st) - int(o.id) + w.objects - 1) / w.objects
		n := int(done) * (st + 1)
		switch {
		case st >= w.stages || done >= uint64(mine):
			d.fail("partial stage beyond the stage's subsets")
		case n*5 > len(d.b):
			d.fail("truncated")
		default:
			cur = make([]int32, n)
			d.int32s(cur)
			curPreds = append([]uint8(nil), d.bytes(n)...)
		}
	}
	in := readInputs(d, st, w.stages, w.objects)
	if w.requests {
		o.readRequests(d, w.stages, w.objects)
	}
	if err := d.done("tsp", o.id); err != nil {
		return err
	}
	o.done, o.cur, o.curPreds = int(done), cur, curPreds
	o.stage, o.tour, o.vals, o.preds, o.in = st, tour, vals, preds, in
	o.planStage, o.chunkStage, o.chunkMine, o.chunkRows = -1, -1, nil, nil
	return nil
}
