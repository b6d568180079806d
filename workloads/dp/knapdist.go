package dp

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/bits"

	"ftsim/sim"
)

// KnapsackWorkload is the 0/1 knapsack DP with the capacity columns 0..C cut
// into one contiguous block per object and one stage per item (thesis 004
// chapter 5, coarse grain). At stage i the cell f[i][m] needs f[i-1][m],
// which its owner holds, and f[i-1][m-w_i], which may lie with an object
// further left: the remote columns object k needs form the single range
// [max(lo_k-w_i, 0), min(hi_k-w_i, lo_k)), and each owner of part of it
// sends exactly that part (Transfer), right after its stage i-1. Every
// object records the flag bit of each of its cells (Knapsack.Row's), the
// critical data of the chapter's ABFT scheme.
type KnapsackWorkload struct {
	base
	k         Knapsack
	cols      int // C+1
	refValue  int64
	refDigest string
}

func newKnapsack(k Knapsack, objects int, cost costModel) *KnapsackWorkload {
	w := &KnapsackWorkload{k: k, cols: k.Capacity + 1}
	w.objects, w.stages, w.cost = objects, len(k.Weights), cost
	v, _ := k.Solve()
	w.refValue = int64(v)
	w.refDigest = knapsackReferenceDigest(k)
	return w
}

// Problem implements StagedWorkload.
func (w *KnapsackWorkload) Problem() string { return "knapsack" }

// Instance returns the knapsack being solved.
func (w *KnapsackWorkload) Instance() Knapsack { return w.k }

// Columns is object k's share of the capacities: [lo, hi).
func (w *KnapsackWorkload) Columns(k sim.ObjID) (lo, hi int) { return split(int(k), w.cols, w.objects) }

// remote is the range of row stage-1 that object k needs from others at
// stage: the columns m-w of its cells m that lie left of its own block.
func (w *KnapsackWorkload) remote(stage int, k sim.ObjID) (lo, hi int) {
	if stage < 1 || stage >= w.stages {
		return 0, 0 // row -1 is zero everywhere: nothing to receive
	}
	wt := w.k.Weights[stage]
	klo, khi := w.Columns(k)
	lo, hi = max(klo-wt, 0), min(khi-wt, klo)
	if hi <= lo {
		return 0, 0
	}
	return lo, hi
}

// Transfer is the range of columns of row stage-1 that object from sends
// object to for stage (empty when it sends nothing): what to's cells m need
// at m-w_stage and from owns.
func (w *KnapsackWorkload) Transfer(stage int, from, to sim.ObjID) (lo, hi int) {
	rlo, rhi := w.remote(stage, to)
	flo, fhi := w.Columns(from)
	lo, hi = max(rlo, flo), min(rhi, fhi)
	if hi <= lo || from == to {
		return 0, 0
	}
	return lo, hi
}

// ReceiverSet implements StagedWorkload: the owners of the remote range.
func (w *KnapsackWorkload) ReceiverSet(stage int, obj sim.ObjID) []sim.ObjID {
	lo, hi := w.remote(stage, obj)
	if hi <= lo {
		return nil
	}
	var ks []int
	for k := owner(lo, w.cols, w.objects); k <= owner(hi-1, w.cols, w.objects); k++ {
		if a, b := w.Transfer(stage, sim.ObjID(k), obj); b > a {
			ks = append(ks, k)
		}
	}
	return objIDs(ks)
}

// SenderSet implements StagedWorkload: the owners of the columns m+w_stage
// of obj's columns m, other than obj.
func (w *KnapsackWorkload) SenderSet(stage int, obj sim.ObjID) []sim.ObjID {
	if stage < 1 || stage >= w.stages {
		return nil
	}
	lo, hi := w.Columns(obj)
	wt := w.k.Weights[stage]
	if hi <= lo || lo+wt >= w.cols {
		return nil
	}
	var ks []int
	for k := owner(lo+wt, w.cols, w.objects); k <= owner(min(hi+wt, w.cols)-1, w.cols, w.objects); k++ {
		if a, b := w.Transfer(stage, obj, sim.ObjID(k)); b > a {
			ks = append(ks, k)
		}
	}
	return objIDs(ks)
}

// SentAfter implements StagedWorkload: row i-1 leaves when it is done.
func (w *KnapsackWorkload) SentAfter(stage int) int { return stage - 1 }

// NewObject implements sim.Workload.
func (w *KnapsackWorkload) NewObject(id sim.ObjID) sim.Object {
	lo, hi := w.Columns(id)
	o := &KnapsackObject{w: w, lo: lo, hi: hi}
	o.id = id
	o.vals = make([]int64, hi-lo)
	o.flags = make([]uint64, flagWords(w.stages, hi-lo))
	if hi == lo {
		o.stage = w.stages
	}
	return o
}

// Check implements sim.Workload: every object must have completed every
// item; the answer is f[n-1][C], the digest covers every flag bit and the
// last row.
func (w *KnapsackWorkload) Check(objs []sim.Object) sim.Outcome {
	os := make([]*KnapsackObject, len(objs))
	for i, x := range objs {
		o, ok := x.(*KnapsackObject)
		if !ok || o.stage != w.stages {
			return sim.Outcome{Detail: fmt.Sprintf("knapsack: object %d is not a finished knapsack object", i)}
		}
		os[i] = o
	}
	h := fnv.New64a()
	digestHeader(h, "knapsack", w.stages, w.k.Capacity)
	line := make([]byte, w.cols)
	for i := 0; i < w.stages; i++ {
		for _, o := range os {
			for m := o.lo; m < o.hi; m++ {
				line[m] = b2u(o.Flag(i, m))
			}
		}
		h.Write(line)
	}
	last := make([]int64, w.cols)
	for _, o := range os {
		copy(last[o.lo:], o.vals)
	}
	h.Write(appendInt64s(nil, last))
	return outcome(last[w.k.Capacity], digestString(h), w.refValue, w.refDigest)
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// knapsackReferenceDigest computes, with Knapsack.Row over whole rows and
// without the simulator, the digest Check computes from the objects.
func knapsackReferenceDigest(k Knapsack) string {
	h := fnv.New64a()
	digestHeader(h, "knapsack", len(k.Weights), k.Capacity)
	prev, cur := make([]int, k.Capacity+1), make([]int, k.Capacity+1)
	flags := make([]uint64, k.FlagWords())
	line := make([]byte, k.Capacity+1)
	for i := range k.Weights {
		k.Row(i, prev, cur, 0, k.Capacity+1, flags)
		for m := range line {
			line[m] = byte(flags[m>>6] >> (m & 63) & 1)
		}
		h.Write(line)
		prev, cur = cur, prev
	}
	last := make([]int64, len(prev))
	for m, v := range prev {
		last[m] = int64(v)
	}
	h.Write(appendInt64s(nil, last))
	return digestString(h)
}

// KnapsackObject is one block of capacity columns: the values of the last
// row computed and the flag bits of every row computed so far.
type KnapsackObject struct {
	w *KnapsackWorkload
	stager
	lo, hi int
	vals   []int64 // f[stage-1][lo..hi)
	// flags packs the flag bits of the rows computed, bit i·(hi-lo)+m-lo
	// for item i and capacity m, without padding rows to whole words (an
	// object per core times a thousand items would otherwise waste more than
	// the flags take). Bits of rows not computed are zero.
	flags []uint64
}

// flagWords is the number of words holding rows rows of width bits each.
func flagWords(rows, width int) int { return (rows*width + 63) / 64 }

func (o *KnapsackObject) st() *stager                 { return &o.stager }
func (o *KnapsackObject) stages() int                 { return o.w.stages }
func (o *KnapsackObject) common() *base               { return &o.w.base }
func (o *KnapsackObject) receivers(s int) []sim.ObjID { return o.w.ReceiverSet(s, o.id) }
func (o *KnapsackObject) sentAfter(s int) int         { return s - 1 }
func (o *KnapsackObject) need(s int) int {
	return len(o.w.ReceiverSet(s, o.id))
}

// Columns is the object's share of the capacities: [lo, hi).
func (o *KnapsackObject) Columns() (lo, hi int) { return o.lo, o.hi }

// Values returns f[Stage()-1][lo..hi), aliasing the object's state.
func (o *KnapsackObject) Values() []int64 { return o.vals }

// Flag is the critical data of cell (item, m): whether item was taken at
// capacity m, i.e. f[item][m] came from f[item-1][m-w] + p and not from
// f[item-1][m]. item must be below Stage(), m in the object's columns.
func (o *KnapsackObject) Flag(item, m int) bool {
	if item < 0 || item >= o.stage || m < o.lo || m >= o.hi {
		return false
	}
	b := item*(o.hi-o.lo) + m - o.lo
	return o.flags[b>>6]>>(b&63)&1 != 0
}

// Start implements sim.Object.
func (o *KnapsackObject) Start(c *sim.Ctx) { start(c, o) }

// Handle implements sim.Object.
func (o *KnapsackObject) Handle(c *sim.Ctx, m *sim.Message) { handle(c, o, m) }

func (o *KnapsackObject) step(c *sim.Ctx) {
	w := o.w
	i := o.stage
	wt, p := w.k.Weights[i], int64(w.k.Profits[i])
	rlo, rhi := w.remote(i, o.id)
	var remote []int64
	if rhi > rlo {
		remote = make([]int64, 0, rhi-rlo)
		for _, in := range o.in.take(i) {
			a, b := w.Transfer(i, in.src, o.id)
			remote = append(remote, decodeInt64s(in.data, b-a)...)
		}
		if len(remote) != rhi-rlo {
			panic(fmt.Sprintf("dp: knapsack object %d stage %d: %d remote values, want %d", o.id, i, len(remote), rhi-rlo))
		}
	}
	row := i * (o.hi - o.lo)
	// Downwards, so that vals[m-wt-lo] still holds row i-1 when read.
	for m := o.hi - 1; m >= o.lo && m >= wt; m-- {
		src := m - wt
		t := p // row -1 is zero everywhere: no message brings it
		switch {
		case src >= o.lo:
			t += o.vals[src-o.lo]
		case i > 0:
			t += remote[src-rlo]
		}
		if t > o.vals[m-o.lo] {
			o.vals[m-o.lo] = t
			b := row + m - o.lo
			o.flags[b>>6] |= 1 << (b & 63)
		}
	}
	c.Compute(w.cost.ops(o.hi-o.lo, 1))
	o.stage++
	if next := o.stage; next < w.stages {
		for _, k := range w.SenderSet(next, o.id) {
			a, b := w.Transfer(next, o.id, k)
			o.emit(c, &w.base, k, next, w.cost.bytes(b-a, true), appendInt64s(nil, o.vals[a-o.lo:b-o.lo]))
		}
	}
}

// ModeledSize implements sim.Object: the last row, the flag bits computed
// so far and buffered columns.
func (o *KnapsackObject) ModeledSize() int64 {
	width := float64(o.hi-o.lo) * o.w.cost.scale
	flagBytes := int64(o.stage) * int64((width+7)/8)
	return o.w.cost.bytes(o.hi-o.lo, true) + flagBytes + o.w.cost.bytes(o.in.payloadBytes()/8, true) + o.outboxBytes()
}

// MarshalBinary implements sim.Object: the stage, the row values, the flag
// rows computed and the columns received early.
func (o *KnapsackObject) MarshalBinary() ([]byte, error) {
	b := []byte{kindKnapsack}
	b = binary.AppendUvarint(b, uint64(o.stage))
	b = appendInt64s(b, o.vals)
	b = appendUint64s(b, o.flags[:flagWords(o.stage, o.hi-o.lo)])
	b = o.in.appendTo(b)
	if o.w.requests {
		b = o.appendRequests(b)
	}
	return b, nil
}

// UnmarshalBinary implements sim.Object.
func (o *KnapsackObject) UnmarshalBinary(data []byte) error {
	d := &decoder{b: data}
	s := d.header(kindKnapsack, o.w.stages)
	vals := make([]int64, len(o.vals))
	d.int64s(vals)
	flags := make([]uint64, len(o.flags))
	nw := flagWords(s, o.hi-o.lo)
	if d.err == nil {
		d.uint64s(flags[:nw])
	}
	// Bits of rows not computed must be zero: step only sets bits.
	if used := s * (o.hi - o.lo) & 63; d.err == nil && used != 0 && bits.Len64(flags[nw-1]) > used {
		d.fail("flag bits beyond the rows computed")
	}
	in := readInputs(d, s, o.w.stages, o.w.objects)
	if o.w.requests {
		o.readRequests(d, o.w.stages, o.w.objects)
	}
	if err := d.done("knapsack", o.id); err != nil {
		return err
	}
	o.stage, o.vals, o.flags, o.in = s, vals, flags, in
	return nil
}
