package stencil

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"ftsim/models/none"
	"ftsim/sim"
	"ftsim/sim/simtest"
)

func run(t *testing.T, p Params, nodes int, cfg sim.Config, proto sim.Protocol) sim.Result {
	t.Helper()
	cfg.Nodes = nodes
	return simtest.Run(t, cfg, mustNew(t, p, nodes), proto)
}

// mustNew is New, ending the test on an error.
func mustNew(t *testing.T, p Params, nodes int) *Workload {
	t.Helper()
	w, err := New(p, nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Every decomposition, given or chosen, ends with the sequential sweep's
// values bit for bit, and with its sum as the answer.
func TestDistributedMatchesReference(t *testing.T) {
	cases := []struct {
		nx, ny, nz, iters int
		blocks            []int64
		perNode           int64
		nodes             int
		want              [3]int // decomposition
	}{
		{6, 6, 6, 5, []int64{1, 1, 1}, 1, 1, [3]int{1, 1, 1}},
		{5, 4, 3, 4, nil, 1, 1, [3]int{1, 1, 1}}, // one block, chosen
		{8, 6, 5, 6, []int64{2, 1, 1}, 1, 2, [3]int{2, 1, 1}},
		{8, 8, 8, 6, []int64{2, 2, 2}, 1, 4, [3]int{2, 2, 2}},
		{7, 5, 3, 7, []int64{3, 2, 1}, 1, 3, [3]int{3, 2, 1}}, // uneven blocks
		{3, 2, 2, 4, []int64{3, 2, 2}, 1, 4, [3]int{3, 2, 2}}, // one point per block
		{12, 12, 12, 5, nil, 2, 2, [3]int{1, 2, 2}},
		{12, 12, 12, 5, nil, 4, 3, [3]int{2, 2, 3}},
		{10, 9, 8, 5, nil, 8, 2, [3]int{4, 2, 2}},
		{16, 16, 4, 5, nil, 1, 4, [3]int{2, 2, 1}}, // flat grid: cut across the long axes
		{9, 7, 6, 0, []int64{2, 2, 1}, 1, 2, [3]int{2, 2, 1}},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%dx%dx%d-i%d-%v-bpn%d-n%d", c.nx, c.ny, c.nz, c.iters, c.blocks, c.perNode, c.nodes)
		t.Run(name, func(t *testing.T) {
			p := DefaultParams()
			p.NX, p.NY, p.NZ, p.Iterations = int64(c.nx), int64(c.ny), int64(c.nz), int64(c.iters)
			p.Blocks, p.BlocksPerNode, p.Seed = c.blocks, c.perNode, 7
			w, err := New(p, c.nodes, nil)
			if err != nil {
				t.Fatal(err)
			}
			if bx, by, bz := w.Blocks(); [3]int{bx, by, bz} != c.want {
				t.Fatalf("decomposition %d×%d×%d, want %v", bx, by, bz, c.want)
			}
			res := run(t, p, c.nodes, sim.DefaultConfig(), &sim.BaseProtocol{})
			ref := NewGrid3(c.nx, c.ny, c.nz, 7)
			ref.Run(c.iters)
			if !res.Outcome.OK || res.Outcome.Digest != ref.Digest() || res.Outcome.Answer != fmt.Sprintf("%.17g", ref.Sum()) {
				t.Fatalf("outcome %+v, reference digest %s sum %.17g", res.Outcome, ref.Digest(), ref.Sum())
			}
		})
	}
}

// The defaults run on a small cluster and match the reference.
func TestDefaults(t *testing.T) {
	res := run(t, DefaultParams(), 4, sim.DefaultConfig(), &sim.BaseProtocol{})
	if !res.Outcome.OK {
		t.Fatalf("outcome %+v", res.Outcome)
	}
}

// The fault-free makespan follows from the model by hand: per iteration a
// face crosses the network (1 µs + bytes / 10 GB/s, rounded up to a
// nanosecond) and then the block computes (points × point_ops / 1 Gop/s).
func TestMakespanByHand(t *testing.T) {
	cases := []struct {
		name    string
		n       int64   // real points per axis
		modeled int64   // modeled points per axis, 0 = real
		blocks  []int64 // on one node each unless nodes says otherwise
		nodes   int
		want    sim.Time
	}{
		// 2 blocks of 2×4×4 = 32 points: compute 32×8 = 256 ns; a face is
		// 4×4×8 = 128 B: 1000 + 12.8↑13 ns. Three iterations, no face after
		// the last: 3 × (1013 + 256).
		{"two nodes", 4, 0, []int64{2, 1, 1}, 2, 3 * (1013 + 256)},
		// The same with every axis ×100: 32e6 points × 8 = 0.256 s of compute;
		// faces of 16e4 points × 8 B = 1.28 MB take 128 µs.
		{"two nodes modeled", 4, 400, []int64{2, 1, 1}, 2, 3 * (1000 + 128_000 + 256_000_000)},
		// A lone block ticks itself: same-node messages take no time.
		{"one block", 4, 0, []int64{1, 1, 1}, 1, 3 * 64 * 8},
		// Two blocks sharing one core: the core never idles.
		{"one node", 4, 0, []int64{2, 1, 1}, 1, 3 * 2 * 256},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			p.NX, p.NY, p.NZ, p.Iterations, p.Blocks = c.n, c.n, c.n, 3, c.blocks
			p.ModeledNX, p.ModeledNY, p.ModeledNZ = c.modeled, c.modeled, c.modeled
			res := run(t, p, c.nodes, sim.DefaultConfig(), &sim.BaseProtocol{})
			if !res.Outcome.OK || res.Makespan != c.want {
				t.Fatalf("makespan %d ns, want %d; outcome %+v", res.Makespan, c.want, res.Outcome)
			}
		})
	}
}

// Under the baseline protocol with failures the run restarts and still ends
// with the reference answer.
func TestRestartUnderFailures(t *testing.T) {
	p := DefaultParams()
	p.NX, p.NY, p.NZ, p.Iterations, p.BlocksPerNode = 12, 10, 8, 20, 2
	cfg := sim.DefaultConfig()
	cfg.Spares = 2
	cfg.Failures = sim.ScriptedFailures
	cfg.Planned = []sim.ScriptedFailure{{Node: 1, Progress: 0.3, ByProgress: true}, {Node: 3, Progress: 0.6, ByProgress: true}}
	res := run(t, p, 4, cfg, none.New())
	if !res.Outcome.OK || res.Stats.Restarts != 2 || res.Stats.Failures != 2 {
		t.Fatalf("outcome %+v, restarts %d, failures %d", res.Outcome, res.Stats.Restarts, res.Stats.Failures)
	}
}

func TestRestoreAfterEveryHandler(t *testing.T) {
	p := DefaultParams()
	// A chain of four blocks, two per node: block 1's neighbour on its own
	// node answers long before the one across the network, so its face for
	// the next iteration arrives early and must survive the round trip.
	p.NX, p.NY, p.NZ, p.Iterations, p.Blocks = 9, 4, 4, 12, []int64{4, 1, 1}
	early := 0 // round trips of a block holding a face for a later iteration
	proto := &simtest.RoundTrip{T: t, Inspect: func(_ sim.ObjID, o sim.Object) {
		if b := o.(*block); len(b.pend) > 0 && b.pend[len(b.pend)-1].iter > b.iter {
			early++
		}
	}}
	res := run(t, p, 2, sim.DefaultConfig(), proto)
	if !res.Outcome.OK || proto.Restores == 0 || early == 0 {
		t.Fatalf("outcome %+v, restores %d, with early faces %d", res.Outcome, proto.Restores, early)
	}
}

// newBlock is block id of a 6×5×4 grid in 2×2×2 blocks on 4 nodes, with
// the global sum if reduce.
func newBlock(t *testing.T, id sim.ObjID, reduce bool) (*Workload, *block) {
	t.Helper()
	p := DefaultParams()
	p.NX, p.NY, p.NZ, p.Iterations, p.Blocks, p.Reduce = 6, 5, 4, 10, []int64{2, 2, 2}, reduce
	w := mustNew(t, p, 4)
	return w, w.NewObject(id).(*block)
}

// roundTrip encodes b, decodes it into a fresh block of the same id and
// encodes that again.
func roundTrip(t *testing.T, w *Workload, b *block) (data []byte, r *block, again []byte) {
	t.Helper()
	data, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r = w.NewObject(b.id).(*block)
	if err := r.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	again, _ = r.MarshalBinary()
	return data, r, again
}

func TestStateRoundTrip(t *testing.T) {
	w, b := newBlock(t, 1, false) // block (1, 0, 0): neighbours at x−, y+, z+
	if b.expect != 1<<xMinus|1<<yPlus|1<<zPlus {
		t.Fatalf("expected faces %06b", b.expect)
	}
	b.iter = 3
	b.u[b.lx*b.ly+b.lx+1] = 0.25
	face := func(d int, v byte) []byte { return bytes.Repeat([]byte{v}, 8*b.facePoints[d]) }
	b.pend = []pending{
		{iter: 3, got: 1 << yPlus, faces: [6][]byte{yPlus: face(yPlus, 1)}},
		{iter: 4, got: 1<<xMinus | 1<<zPlus, faces: [6][]byte{xMinus: face(xMinus, 2), zPlus: face(zPlus, 3)}},
	}
	data, r, again := roundTrip(t, w, b)
	if !bytes.Equal(data, again) || r.iter != 3 || len(r.pend) != 2 || !bytes.Equal(r.pend[1].faces[zPlus], face(zPlus, 3)) ||
		r.u[b.lx*b.ly+b.lx+1] != 0.25 || r.ModeledSize() != b.ModeledSize() {
		t.Fatal("round trip changed the state")
	}
	bad := map[string][]byte{"empty": nil, "one byte": data[:1], "one byte short": data[:len(data)-1],
		"trailing byte": append(bytes.Clone(data), 0)}
	for name, d := range bad {
		if err := w.NewObject(1).UnmarshalBinary(d); err == nil {
			t.Errorf("%s: state accepted", name)
		}
	}
	for cut := 0; cut < len(data); cut += 7 {
		if err := w.NewObject(1).UnmarshalBinary(data[:cut]); err == nil {
			t.Fatalf("state truncated to %d of %d bytes accepted", cut, len(data))
		}
	}
	// A state for another block (different faces) is rejected too.
	if err := w.NewObject(0).UnmarshalBinary(data); err == nil {
		t.Error("block 1's state accepted by block 0")
	}
}

// Messages a handler must ignore change nothing and touch no context: a
// face of a past iteration (a protocol's duplicate), of a direction the
// block has no neighbour in, of the wrong size, or past the last iteration.
func TestIgnoredMessages(t *testing.T) {
	_, b := newBlock(t, 1, false)
	b.iter = 3
	before, _ := b.MarshalBinary()
	ok := make([]byte, 8*b.facePoints[xMinus])
	for name, m := range map[string]*sim.Message{
		"past iteration":  {Tag: tag(2, xMinus), Payload: ok},
		"no neighbour":    {Tag: tag(3, xPlus), Payload: ok},
		"wrong size":      {Tag: tag(3, xMinus), Payload: ok[:8]},
		"after the last":  {Tag: tag(10, xMinus), Payload: ok},
		"not a face":      {Tag: -1},
		"lone block tick": {Tag: tag(3, dirSelf)},
	} {
		b.Handle(nil, m)
		if after, _ := b.MarshalBinary(); !bytes.Equal(before, after) {
			t.Fatalf("%s: state changed", name)
		}
	}
}

func TestParamErrors(t *testing.T) {
	cases := []struct {
		key string // the error must name it
		f   func(p *Params)
	}{
		{"nx", func(p *Params) { p.NX = 0 }},
		{"nz", func(p *Params) { p.NZ = -3 }},
		{"nx", func(p *Params) { p.NX, p.NY, p.NZ = 1<<10, 1<<10, 1<<10 }},
		{"iterations", func(p *Params) { p.Iterations = -1 }},
		{"iterations", func(p *Params) { p.Iterations = 1 << 40 }},
		{"blocks", func(p *Params) { p.Blocks = []int64{2, 2} }},
		{"blocks", func(p *Params) { p.Blocks = []int64{2, 0, 1} }},
		{"blocks", func(p *Params) { p.Blocks = []int64{49, 1, 1} }},
		{"blocks_per_node", func(p *Params) { p.BlocksPerNode = 0 }},
		{"blocks_per_node", func(p *Params) { p.NX, p.NY, p.NZ, p.BlocksPerNode = 2, 2, 2, 3 }}, // 12 blocks > 8 points
		{"blocks", func(p *Params) { p.NX, p.NY, p.NZ, p.BlocksPerNode = 3, 3, 3, 5 }},          // 20 = 2·2·5 fits no 3×3×3 box
		{"point_ops", func(p *Params) { p.PointOps = -1 }},
		{"bytes_per_point", func(p *Params) { p.BytesPerPoint = -1 }},
		{"modeled_ny", func(p *Params) { p.ModeledNY = -1 }},
		{"coupled", func(p *Params) { p.Coupled = true }}, // without reduce
	}
	for i, c := range cases {
		p := DefaultParams()
		c.f(&p)
		_, err := New(p, 4, nil)
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("case %d: error %v, want one naming %s", i, err, c.key)
		}
	}
}

// With the global sum every decomposition still ends with the reference's
// values, and every block saw the reference's sums (Check compares their
// digests).
func TestReduceMatchesReference(t *testing.T) {
	for _, c := range []struct {
		blocks  []int64
		perNode int64
		nodes   int
	}{
		{[]int64{1, 1, 1}, 1, 1}, // the root alone
		{[]int64{2, 1, 1}, 1, 2}, // a root and one child
		{[]int64{3, 2, 1}, 1, 3}, // uneven blocks, a tree of three levels
		{[]int64{2, 2, 2}, 1, 4},
		{nil, 3, 4}, // three blocks per node
	} {
		t.Run(fmt.Sprintf("%v-bpn%d-n%d", c.blocks, c.perNode, c.nodes), func(t *testing.T) {
			p := DefaultParams()
			p.NX, p.NY, p.NZ, p.Iterations, p.Blocks, p.BlocksPerNode, p.Reduce = 7, 6, 5, 6, c.blocks, c.perNode, true
			res := run(t, p, c.nodes, sim.DefaultConfig(), &sim.BaseProtocol{})
			if !res.Outcome.OK {
				t.Fatalf("outcome %+v", res.Outcome)
			}
		})
	}
}

// Two blocks on two nodes (TestMakespanByHand's first case) with the global
// sum: after each sweep block 1 sends its face (13 ns on the interface) and
// its sum (1 ns), which reaches block 0 1,000 ns later; block 0 sends the
// total back down (1,001 ns), and block 1 sweeps again (256 ns). Block 0
// waits for block 1's sum each iteration, so block 1 ends last.
func TestReduceMakespanByHand(t *testing.T) {
	p := DefaultParams()
	p.NX, p.NY, p.NZ, p.Iterations, p.Blocks, p.Reduce = 4, 4, 4, 3, []int64{2, 1, 1}, true
	res := run(t, p, 2, sim.DefaultConfig(), &sim.BaseProtocol{})
	if want := sim.Time(3 * (13 + 1 + 1000 + 1001 + 256)); !res.Outcome.OK || res.Makespan != want {
		t.Fatalf("makespan %d ns, want %d; outcome %+v", res.Makespan, want, res.Outcome)
	}
}

// A block restored after every handler keeps its shares of the sums in
// flight, and the run still ends with the reference's values and sums.
func TestReduceRestoreAfterEveryHandler(t *testing.T) {
	p := DefaultParams()
	p.NX, p.NY, p.NZ, p.Iterations, p.Blocks, p.Reduce = 9, 4, 4, 12, []int64{4, 1, 1}, true
	shares := 0 // round trips of a block holding part of a sum
	proto := &simtest.RoundTrip{T: t, Inspect: func(_ sim.ObjID, o sim.Object) {
		for _, q := range o.(*block).pend {
			if q.red.flags != 0 {
				shares++
			}
		}
	}}
	res := run(t, p, 2, sim.DefaultConfig(), proto)
	if !res.Outcome.OK || proto.Restores == 0 || shares == 0 {
		t.Fatalf("outcome %+v, restores %d, holding shares %d", res.Outcome, proto.Restores, shares)
	}
}

// A wrong global sum is caught even when the values are right.
func TestReduceCheckCatchesAWrongSum(t *testing.T) {
	p := DefaultParams()
	p.NX, p.NY, p.NZ, p.Iterations, p.Blocks, p.Reduce = 4, 4, 4, 3, []int64{2, 1, 1}, true
	w := mustNew(t, p, 2)
	objs := []sim.Object{w.NewObject(0), w.NewObject(1)}
	for _, o := range objs {
		b := o.(*block)
		g := NewGrid3(4, 4, 4, uint64(p.Seed))
		g.Run(3)
		for k := 1; k <= b.cz; k++ {
			for j := 1; j <= b.cy; j++ {
				at := g.Index(b.x0+1, b.y0+j, b.z0+k)
				copy(b.u[(k*b.ly+j)*b.lx+1:], g.U[at:at+b.cx])
			}
		}
		b.iter, b.sums = 3, w.refSums
	}
	if out := w.Check(objs); !out.OK {
		t.Fatalf("the reference's state rejected: %+v", out)
	}
	objs[1].(*block).sums ^= 1
	if out := w.Check(objs); out.OK || !strings.Contains(out.Detail, "global sums") {
		t.Fatalf("a wrong digest of sums accepted: %+v", out)
	}
}

// The shares of a sum survive a round trip of the state; a share a block
// cannot hold is rejected.
func TestReduceStateRoundTrip(t *testing.T) {
	w, b := newBlock(t, 1, true) // children 3 and 4, parent 0
	b.iter, b.sums = 3, 0xfeed
	b.pend = []pending{
		{iter: 3, red: reduction{flags: redOwn | redKid | redKid<<1 | redSent | redTotal, own: 1.5, kids: [2]float64{2.5, 3.5}, total: 9}},
		{iter: 4, got: 1 << xMinus, faces: [6][]byte{xMinus: bytes.Repeat([]byte{2}, 8*b.facePoints[xMinus])}, red: reduction{flags: redKid << 1, kids: [2]float64{0, 4.25}}},
	}
	data, r, again := roundTrip(t, w, b)
	if !bytes.Equal(data, again) || r.sums != 0xfeed || r.pend[0].red != b.pend[0].red || r.pend[1].red != b.pend[1].red {
		t.Fatalf("round trip changed the state: %+v", r.pend)
	}
	if m := (*blockMem)(unsafe.Pointer(r)); &r.pend[0] != &m.pend[0] {
		t.Errorf("a restored block's pending iterations are not beside it")
	}
	// a restore (cpr's rolls back every block) copies the buffered face and
	// allocates nothing else
	if n := testing.AllocsPerRun(10, func() { _ = r.UnmarshalBinary(data) }); n != 1 {
		t.Errorf("a restore took %v allocations, want 1 (the face)", n)
	}
	// every checkpoint encodes every block: one allocation, the buffer
	if n := testing.AllocsPerRun(10, func() { _, _ = b.MarshalBinary() }); n != 1 {
		t.Errorf("an encoding took %v allocations, want 1", n)
	}
	for cut := 0; cut < len(data); cut += 5 {
		if err := w.NewObject(1).UnmarshalBinary(data[:cut]); err == nil {
			t.Fatalf("state truncated to %d of %d bytes accepted", cut, len(data))
		}
	}
	// block 5, of block 1's shape and with its x− neighbour, has no
	// children: its children's shares are not its to hold
	if err := w.NewObject(5).UnmarshalBinary(data); err == nil || !strings.Contains(err.Error(), "share of a global sum") {
		t.Errorf("block 1's shares accepted by block 5: %v", err)
	}
}

// A new block's first two pending iterations are stored in its own
// allocation, right after its header (blockMem), and a third moves them out.
func TestPendingBuffersBesideTheBlock(t *testing.T) {
	_, b := newBlock(t, 0, true)
	m := (*blockMem)(unsafe.Pointer(b))
	for it := int64(0); it < 2; it++ {
		if p := b.pendingFor(it); p != &m.pend[it] {
			t.Fatalf("iteration %d buffered at %p, not beside the block (%p)", it, p, &m.pend[it])
		}
	}
	if p := b.pendingFor(2); p == &m.pend[0] || p == &m.pend[1] || len(b.pend) != 3 || b.pend[2].iter != 2 {
		t.Fatalf("a third pending iteration: %d buffers, the last for iteration %d", len(b.pend), b.pend[len(b.pend)-1].iter)
	}
}
