package dp

// The critical data of the three DP objects (thesis 004 §4.3.1, §5.3): what
// an object produced at one stage that an ABFT protocol replicates on its
// peers, and how an object is rebuilt from those copies at the start of a
// stage (the "locally consistent state" of §4.3.2) without any other object
// rolling back. The methods here implement models/abft's Critical interface
// (the interface lives there so that this package does not depend on the
// protocol).
//
//	LCS       the bottom row of the row block just computed (the local
//	          solution the next block starts from) and the 2-bit direction of
//	          each of the block's cells, the one input of eq. 4.7 that gave the
//	          cell its value; the directions are the DP table, rebuilt from the
//	          copies (eq. 4.10)
//	knapsack  the block's flag bits of the item just computed, one bit per
//	          column (§5.3); the values are rebuilt by eq. 5.5, back-tracking
//	          each column to the last item whose bit is 1 and reading the one
//	          remote value f(j-1, m-w_j) from the message its owner sent then
//	TSP       each cell's cost and predecessor city for the subsets just
//	          computed: the one value c_{s-1}[S-{j}, i] + d_ij of eq. 4.9 that
//	          won the minimum

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"ftsim/sim"
)

// Sources is what a rebuild may read besides the critical data: the
// messages the object was sent (from their senders' logs), and, for the
// knapsack, any value of the DP table that its owner can still produce by
// back-tracking its own flag bits (§5.4: the DP table holds the remote
// critical data). Either may be nil.
type Sources struct {
	// Received returns the payload of the data message src sent the object
	// for tag, or nil.
	Received func(tag int, src sim.ObjID) []byte
	// Value returns f(item, column) of the knapsack table, or false.
	Value func(item, col int) (int64, bool)
}

// ErrUnavailable is wrapped by RestoreCritical when a message the rebuild
// needs is not available; a protocol then restores at an earlier stage
// (thesis §5.4 cases 1.2.2 and 2).
var ErrUnavailable = errors.New("a message the rebuild needs is not available")

// restart resets the driver state for a rebuild at stage s: nothing
// buffered, nothing promised, the requests of stage s still to be sent.
func (s *stager) restart(stage int) {
	s.stage, s.in, s.wants, s.outbox, s.asked = stage, nil, nil, nil, stage
}

// checkCritical validates a rebuild request.
func checkCritical(kind string, id sim.ObjID, stage, stages int, cds [][]byte) error {
	if stage < 0 || stage > stages || len(cds) < stage {
		return fmt.Errorf("dp: %s object %d: rebuild at stage %d of %d from %d stages of critical data", kind, id, stage, stages, len(cds))
	}
	return nil
}

// CriticalData implements abft.Critical for the stage completed last: the
// block's bottom row t[r1][lo..hi], in request-reply mode its right edge
// t[r0+1..r1][hi] (the reply its right neighbour may still ask for), and its
// cells' directions, packed 2 bits a cell. modeled is its size in the
// modeled problem.
func (o *LCSObject) CriticalData() (data []byte, modeled int64) {
	if o.stage == 0 || o.hi == o.lo {
		return nil, 0
	}
	wd := o.hi - o.lo
	r0, r1 := o.w.rows(o.stage - 1)
	cells := (r1 - r0) * wd
	data = appendInt32s(make([]byte, 0, 4*len(o.row)+4*(r1-r0)+(cells+3)/4), o.row)
	modeled = o.w.cost.bytes(wd+1, true) + int64(math.Ceil(float64(cells)*o.w.cost.scale/4))
	if o.edge != nil {
		data = appendInt32s(data, o.edge[r0+1:r1+1])
		modeled += o.w.cost.bytes(r1-r0, false)
	}
	packed := make([]byte, (cells+3)/4)
	for c := range cells {
		g := r0*wd + c
		d := o.dirs[g>>2] >> (2 * (g & 3)) & 3
		packed[c>>2] |= d << (2 * (c & 3))
	}
	return append(data, packed...), modeled
}

// RestoreCritical implements abft.Critical: the object at the start of
// stage, from the critical data of stages 0..stage-1. LCS needs no message.
func (o *LCSObject) RestoreCritical(stage int, cds [][]byte, _ Sources) error {
	if err := checkCritical("lcs", o.id, stage, o.w.stages, cds); err != nil {
		return err
	}
	if o.hi == o.lo {
		o.restart(o.w.stages)
		return nil
	}
	wd := o.hi - o.lo
	dirs := make([]byte, len(o.dirs))
	row := make([]int32, len(o.row))
	var edge []int32
	if o.edge != nil {
		edge = make([]int32, len(o.edge))
	}
	for s := range stage {
		r0, r1 := o.w.rows(s)
		cells := (r1 - r0) * wd
		ne := 0
		if edge != nil {
			ne = r1 - r0
		}
		if len(cds[s]) != 4*len(row)+4*ne+(cells+3)/4 {
			return fmt.Errorf("dp: lcs object %d: critical data of stage %d has %d bytes", o.id, s, len(cds[s]))
		}
		if edge != nil {
			copy(edge[r0+1:r1+1], decodeInt32s(cds[s][4*len(row):4*len(row)+4*ne], ne))
		}
		packed := cds[s][4*len(row)+4*ne:]
		for c := range cells {
			d := packed[c>>2] >> (2 * (c & 3)) & 3
			g := r0*wd + c
			dirs[g>>2] |= d << (2 * (g & 3))
		}
		if s == stage-1 {
			row = decodeInt32s(cds[s][:4*len(row)], len(row))
		}
	}
	o.dirs, o.row, o.edge = dirs, row, edge
	o.restart(stage)
	return nil
}

// CriticalData implements abft.Critical: the flag bits of the item
// completed last, one per column of the block.
func (o *KnapsackObject) CriticalData() (data []byte, modeled int64) {
	if o.stage == 0 || o.hi == o.lo {
		return nil, 0
	}
	wd := o.hi - o.lo
	data = make([]byte, (wd+7)/8)
	for m := o.lo; m < o.hi; m++ {
		if o.Flag(o.stage-1, m) {
			data[(m-o.lo)>>3] |= 1 << ((m - o.lo) & 7)
		}
	}
	return data, int64(math.Ceil(float64(wd) * o.w.cost.scale / 8))
}

// RestoreCritical implements abft.Critical: the flag bits of items
// 0..stage-1 from cds, and the values f(stage-1, m) by eq. 5.5: a column
// keeps its value back to the last item j whose bit is 1 (case 1.2), where
// it is f(j-1, m-w_j) + p_j (case 1.1), f(j-1, m-w_j) coming from the own
// block (recursively), from the message the owner of m-w_j sent for item
// j (src.Received), or else from that owner's own back-tracking
// (src.Value); ErrUnavailable if none has it.
func (o *KnapsackObject) RestoreCritical(stage int, cds [][]byte, src Sources) error {
	w := o.w
	if err := checkCritical("knapsack", o.id, stage, w.stages, cds); err != nil {
		return err
	}
	if o.hi == o.lo {
		o.restart(w.stages)
		return nil
	}
	wd := o.hi - o.lo
	flags := make([]uint64, len(o.flags))
	for s := range stage {
		if len(cds[s]) != (wd+7)/8 {
			return fmt.Errorf("dp: knapsack object %d: critical data of item %d has %d bytes", o.id, s, len(cds[s]))
		}
		for c := range wd {
			if cds[s][c>>3]>>(c&7)&1 != 0 {
				b := s*wd + c
				flags[b>>6] |= 1 << (b & 63)
			}
		}
	}
	flag := func(i, m int) bool { b := i*wd + m - o.lo; return flags[b>>6]>>(b&63)&1 != 0 }
	remote := map[int][]int64{} // item j → its remote range [rlo, rhi) of row j-1
	fetch := func(j, m int) (int64, error) {
		rlo, rhi := w.remote(j, o.id)
		if m < rlo || m >= rhi {
			return 0, fmt.Errorf("dp: knapsack object %d: column %d of item %d is not remote", o.id, m, j)
		}
		if v, ok := remote[j]; ok {
			return v[m-rlo], nil
		}
		v := make([]int64, 0, rhi-rlo)
		for _, q := range w.ReceiverSet(j, o.id) {
			a, b := w.Transfer(j, q, o.id)
			var p []byte
			if src.Received != nil {
				p = src.Received(j, q)
			}
			if p == nil {
				v = nil
				break
			}
			v = append(v, decodeInt64s(p, b-a)...)
		}
		if v != nil {
			remote[j] = v
			return v[m-rlo], nil
		}
		if src.Value != nil {
			if x, ok := src.Value(j-1, m); ok {
				return x, nil
			}
		}
		return 0, fmt.Errorf("dp: knapsack object %d: f(%d, %d): %w", o.id, j-1, m, ErrUnavailable)
	}
	memo := map[[2]int]int64{}
	var value func(i, m int) (int64, error)
	value = func(i, m int) (int64, error) {
		if v, ok := memo[[2]int{i, m}]; ok {
			return v, nil
		}
		var v int64
		for j := i; j >= 0; j-- {
			if !flag(j, m) {
				continue // case 1.2: unchanged since item j-1
			}
			src := m - w.k.Weights[j]
			v = int64(w.k.Profits[j])
			var base int64
			var err error
			switch {
			case j == 0: // row -1 is zero
			case src >= o.lo:
				base, err = value(j-1, src)
			default:
				base, err = fetch(j, src)
			}
			if err != nil {
				return 0, err
			}
			v += base
			break
		}
		memo[[2]int{i, m}] = v
		return v, nil
	}
	vals := make([]int64, wd)
	for m := o.lo; m < o.hi; m++ {
		v, err := value(stage-1, m)
		if err != nil {
			return err
		}
		vals[m-o.lo] = v
	}
	o.flags, o.vals = flags, vals
	o.restart(stage)
	return nil
}

// CriticalData implements abft.Critical: the costs and predecessors of the
// cells of the stage completed last.
func (o *TSPObject) CriticalData() (data []byte, modeled int64) {
	if o.stage == 0 {
		return nil, 0
	}
	v, p := o.vals[o.stage-1], o.preds[o.stage-1]
	data = binary.AppendUvarint(nil, uint64(len(v)))
	data = appendInt32s(data, v)
	data = append(data, p...)
	return data, o.w.cost.bytes(len(v), true) + int64(math.Ceil(float64(len(p))*o.w.cost.scale))
}

// RestoreCritical implements abft.Critical: every stage's costs and
// predecessors from cds; the tour is closed again if the last stage is
// done. TSP needs no message.
func (o *TSPObject) RestoreCritical(stage int, cds [][]byte, _ Sources) error {
	w := o.w
	if err := checkCritical("tsp", o.id, stage, w.stages, cds); err != nil {
		return err
	}
	vals, preds := make([][]int32, stage), make([][]uint8, stage)
	for s := range stage {
		d := &decoder{b: cds[s]}
		n := (w.size(s) - int(o.id) + w.objects - 1) / w.objects * (s + 1)
		if c := d.uvarint(); d.err == nil && c != uint64(n) {
			d.fail("wrong cell count")
		}
		if n*5 > len(d.b) {
			d.fail("truncated")
		}
		v := make([]int32, n)
		d.int32s(v)
		p := append([]uint8(nil), d.bytes(n)...)
		if err := d.done("tsp", o.id); err != nil {
			return err
		}
		vals[s], preds[s] = v, p
	}
	o.vals, o.preds, o.tour = vals, preds, -1
	if w.n == 1 && o.id == 0 {
		o.tour = 0
	}
	if stage == w.stages && w.n > 1 {
		if mine := w.Subsets(stage-1, o.id); len(mine) == 1 && stage == w.n-1 {
			o.tour = w.close(mine[0], vals[stage-1])
		}
	}
	o.restart(stage)
	o.planStage, o.chunkStage, o.chunkMine, o.chunkRows = -1, -1, nil, nil
	o.done, o.cur, o.curPreds = 0, nil, nil
	return nil
}

// close is the optimal tour length given the last stage's row of the full
// set S: the best path to j plus the way back to city 0.
func (w *TSPWorkload) close(S uint32, row []int32) int64 {
	best := int64(math.MaxInt64)
	for r, i := S, 0; r != 0; r, i = r&(r-1), i+1 {
		j := bits.TrailingZeros32(r)
		best = min(best, int64(row[i])+int64(w.d[j*w.n]))
	}
	return best
}

// Regenerable implements abft.Critical: whether an object at the start of
// stage still holds the data of the message of tag it sent after stage
// SentAfter(tag) < stage: in request-reply mode an LCS block keeps its right
// edge, so every past reply.
func (o *LCSObject) Regenerable(stage, tag int) bool { return o.edge != nil && tag < stage }

// Regenerate implements abft.Critical: the edge of row block tag for the
// right neighbour.
func (o *LCSObject) Regenerate(tag int, dst sim.ObjID) (size int64, payload []byte, ok bool) {
	if o.edge == nil || tag < 0 || tag >= o.stage || dst != o.w.right[o.id] {
		return 0, nil, false
	}
	r0, r1 := o.w.rows(tag)
	return o.w.cost.bytes(r1-r0+1, false), appendInt32s(nil, o.edge[r0:r1+1]), true
}

// Regenerable implements abft.Critical: the values of the last row, which
// the data of item stage carry.
func (o *KnapsackObject) Regenerable(stage, tag int) bool { return tag == stage }

// Regenerate implements abft.Critical: the data message of item tag for
// dst, from the current row, if the object is at the start of item tag.
func (o *KnapsackObject) Regenerate(tag int, dst sim.ObjID) (size int64, payload []byte, ok bool) {
	if tag != o.stage || tag < 1 || tag >= o.w.stages {
		return 0, nil, false
	}
	a, b := o.w.Transfer(tag, o.id, dst)
	if b <= a {
		return 0, nil, false
	}
	return o.w.cost.bytes(b-a, true), appendInt64s(nil, o.vals[a-o.lo:b-o.lo]), true
}

// Regenerable implements abft.Critical: every row computed is kept.
func (o *TSPObject) Regenerable(stage, tag int) bool { return tag >= 1 && tag-1 < stage }

// Regenerate implements abft.Critical: the rows of stage tag-1 that dst
// needs for stage tag.
func (o *TSPObject) Regenerate(tag int, dst sim.ObjID) (size int64, payload []byte, ok bool) {
	w := o.w
	if tag < 1 || tag >= w.stages || tag-1 >= o.stage {
		return 0, nil, false
	}
	rows := w.Rows(tag, o.id, dst)
	if len(rows) == 0 {
		return 0, nil, false
	}
	k := tag // row length of stage tag-1
	payload = make([]byte, 0, 4*k*len(rows))
	for _, T := range rows {
		at := w.rank(T) / w.objects * k
		payload = appendInt32s(payload, o.vals[tag-1][at:at+k])
	}
	return w.cost.bytes(k*len(rows), true), payload, true
}

// Backtrack returns f(item, col) of the knapsack table computed from flag
// bits alone by eq. 5.5: a column keeps its value back to the last item whose
// bit is 1, where it is f(j-1, col-w_j) + p_j; f(-1, ·) = 0. flag reports a
// bit and whether it is known. The values are memoised, so a rebuild costs
// at most the cells it visits.
func (w *KnapsackWorkload) Backtrack(flag func(item, col int) (bit, ok bool)) func(item, col int) (int64, bool) {
	memo := map[[2]int]int64{}
	var value func(i, m int) (int64, bool)
	value = func(i, m int) (int64, bool) {
		if i < 0 || m < 0 || m >= w.cols || i >= w.stages {
			return 0, i < 0 && m >= 0 && m < w.cols
		}
		if v, ok := memo[[2]int{i, m}]; ok {
			return v, true
		}
		var v int64
		for j := i; j >= 0; j-- {
			bit, ok := flag(j, m)
			if !ok {
				return 0, false
			}
			if !bit {
				continue
			}
			base, ok := value(j-1, m-w.k.Weights[j])
			if !ok {
				return 0, false
			}
			v = base + int64(w.k.Profits[j])
			break
		}
		memo[[2]int{i, m}] = v
		return v, true
	}
	return value
}

// Owner is the object whose block holds capacity column col.
func (w *KnapsackWorkload) Owner(col int) sim.ObjID { return sim.ObjID(owner(col, w.cols, w.objects)) }

// Message is the data message of item tag that object from sends object to,
// built from table values (value(item, col) = f(item, col), e.g. from
// Backtrack): what a rebuilt or a live object sends again when the original
// is gone.
func (w *KnapsackWorkload) Message(tag int, from, to sim.ObjID, value func(item, col int) (int64, bool)) (size int64, payload []byte, ok bool) {
	a, b := w.Transfer(tag, from, to)
	if b <= a || tag < 1 || tag >= w.stages {
		return 0, nil, false
	}
	vals := make([]int64, 0, b-a)
	for m := a; m < b; m++ {
		v, ok := value(tag-1, m)
		if !ok {
			return 0, nil, false
		}
		vals = append(vals, v)
	}
	return w.cost.bytes(b-a, true), appendInt64s(nil, vals), true
}
