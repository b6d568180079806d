package farm

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"ftsim/models/none"
	"ftsim/sim"
	"ftsim/sim/simtest"
)

func build(t *testing.T, p Params, nodes int) *Workload {
	t.Helper()
	w, err := New(p, nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func run(t *testing.T, w *Workload, nodes int, cfg sim.Config, proto sim.Protocol) sim.Result {
	t.Helper()
	cfg.Nodes = nodes
	return simtest.Run(t, cfg, w, proto)
}

func small() Params {
	p := DefaultParams()
	p.Width, p.Height, p.MaxIter, p.Tile = 64, 48, 200, 16
	return p
}

// Every farm shape ends with the sequential image and its total iterations.
func TestDistributedMatchesReference(t *testing.T) {
	cases := []struct {
		name        string
		w, h, tile  int64
		workers     int64
		perNode     int64
		nodes       int
		window      []float64
		wantObjects int
	}{
		{"one worker per node", 64, 48, 16, 0, 1, 4, nil, 4},
		{"one node", 64, 48, 16, 0, 1, 1, nil, 2},
		{"one worker", 64, 48, 16, 1, 1, 4, nil, 2},
		{"more workers than tiles", 32, 32, 32, 5, 1, 3, nil, 6},
		{"uneven tiles", 50, 30, 16, 0, 1, 3, nil, 3},
		{"three objects per node", 40, 40, 8, 0, 3, 2, nil, 6},
		{"pixel tasks", 10, 10, 1, 7, 1, 4, nil, 8},
		{"window", 48, 48, 12, 0, 1, 4, []float64{-0.75, 0.05, -0.7, 0.15}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := small()
			p.Width, p.Height, p.Tile, p.Workers, p.ObjectsPerNode, p.Window = c.w, c.h, c.tile, c.workers, c.perNode, c.window
			w := build(t, p, c.nodes)
			if w.NumObjects() != c.wantObjects {
				t.Fatalf("%d objects, want %d", w.NumObjects(), c.wantObjects)
			}
			res := run(t, w, c.nodes, sim.DefaultConfig(), &sim.BaseProtocol{})
			ref := w.Image().ComputeAll()
			if !res.Outcome.OK || res.Outcome.Digest != Digest(int(c.w), int(c.h), ref) ||
				res.Outcome.Answer != fmt.Sprint(TotalIterations(ref)) {
				t.Fatalf("outcome %+v", res.Outcome)
			}
			if res.Stats.AppMsgs != 2*int64(w.NumTiles()) {
				t.Fatalf("%d messages for %d tiles, want a task and a result each", res.Stats.AppMsgs, w.NumTiles())
			}
		})
	}
}

// The fault-free makespan follows from the model by hand. Every pixel of the
// window around 0 lies in the main cardioid, so each of the two 4×4 tiles
// costs 16 × 100 iterations × 10 ops = 16 µs at 1 Gop/s. A task of 64 B
// takes 1000 + 6.4↑7 ns, a result of 16 × 2 B takes 1000 + 3.2↑4 ns.
func TestMakespanByHand(t *testing.T) {
	cases := []struct {
		name  string
		nodes int
		want  sim.Time
	}{
		// One worker does both tiles in turn.
		{"one worker", 2, 2 * (1007 + 16_000 + 1004)},
		// Two workers in parallel; the master's interface sends the second
		// task 7 ns after the first.
		{"two workers", 3, 7 + 1007 + 16_000 + 1004},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			p.Width, p.Height, p.MaxIter, p.Tile = 8, 4, 100, 4
			p.Window = []float64{-0.1, -0.1, 0.1, 0.1}
			w := build(t, p, c.nodes)
			if TotalIterations(w.Image().ComputeAll()) != 32*100 {
				t.Fatal("the window is not inside the set")
			}
			res := run(t, w, c.nodes, sim.DefaultConfig(), &sim.BaseProtocol{})
			if !res.Outcome.OK || res.Makespan != c.want {
				t.Fatalf("makespan %d ns, want %d; outcome %+v", res.Makespan, c.want, res.Outcome)
			}
		})
	}
}

// Under the baseline protocol, failures of a worker's node and of the
// master's node restart the farm, which still ends with the reference.
func TestRestartUnderFailures(t *testing.T) {
	w := build(t, small(), 4)
	cfg := sim.DefaultConfig()
	cfg.Spares = 2
	cfg.Failures = sim.ScriptedFailures
	cfg.Planned = []sim.ScriptedFailure{{Node: 1, Progress: 0.3, ByProgress: true}, {Node: 0, Progress: 0.6, ByProgress: true}}
	res := run(t, w, 4, cfg, none.New())
	if !res.Outcome.OK || res.Stats.Restarts != 2 || res.Stats.Failures != 2 {
		t.Fatalf("outcome %+v, restarts %d, failures %d", res.Outcome, res.Stats.Restarts, res.Stats.Failures)
	}
}

// resubmit is MPI/FT Model-Ia in miniature: the tasks of a dead worker go to
// a live one, and the dead worker comes back, stateless, on the master's node.
type resubmit struct {
	sim.BaseProtocol
	w     *Workload
	moved int
}

func (p *resubmit) OnFailure(f sim.Failure) {
	rt := p.RT
	farm := rt.Workload().(TaskFarm)
	mst := rt.Object(farm.Master()).(Resubmitter)
	home := rt.NodeOf(farm.Master())
	to := sim.ObjID(sim.None)
	for id := 1; id < rt.NumObjects() && to == sim.None; id++ {
		if !rt.Lost(sim.ObjID(id)) {
			to = sim.ObjID(id)
		}
	}
	for _, o := range f.Objects {
		for _, task := range mst.Outstanding(o) {
			mst.Reassign(task, o, to)
			tag, size, payload := farm.TaskMessage(task)
			rt.Transmit(&sim.Message{Src: farm.Master(), Dst: to, Tag: tag, Size: size, Payload: payload,
				Epoch: rt.Epoch(), From: home})
			p.moved++
		}
		rt.Recreate(o, home)
	}
}

func TestResubmitDeadWorkersTask(t *testing.T) {
	w := build(t, small(), 4)
	cfg := sim.DefaultConfig()
	cfg.Failures = sim.ScriptedFailures
	cfg.Planned = []sim.ScriptedFailure{{Node: 2, Progress: 0.25, ByProgress: true}}
	proto := &resubmit{w: w}
	res := run(t, w, 4, cfg, proto)
	if !res.Outcome.OK || res.Stats.Failures != 1 || res.Stats.Restarts != 0 || proto.moved != 1 {
		t.Fatalf("outcome %+v, failures %d, restarts %d, tasks moved %d", res.Outcome, res.Stats.Failures, res.Stats.Restarts, proto.moved)
	}
}

// duplicate sends every application message twice, as a protocol that
// resends after a false suspicion would: the master must count each tile once.
type duplicate struct{ sim.BaseProtocol }

func (p *duplicate) OnSend(m *sim.Message) bool {
	p.RT.Transmit(m.Clone())
	return true
}

func TestDuplicatesIgnored(t *testing.T) {
	w := build(t, small(), 3)
	res := run(t, w, 3, sim.DefaultConfig(), &duplicate{})
	if !res.Outcome.OK {
		t.Fatalf("outcome %+v", res.Outcome)
	}
}

func TestRestoreAfterEveryHandler(t *testing.T) {
	w := build(t, small(), 4)
	// a master that forgot who holds what would stall, one that forgot counts
	// would fail the check
	proto := &simtest.RoundTrip{T: t}
	res := run(t, w, 4, sim.DefaultConfig(), proto)
	if !res.Outcome.OK || proto.Restores < w.NumTiles() {
		t.Fatalf("outcome %+v, restores %d", res.Outcome, proto.Restores)
	}
}

// masterWith returns a master that handed tiles 0..4 out, got 1 and 3 back,
// and whose worker 1 holds 0 and 4, worker 2 holds 2.
func masterWith(t *testing.T) (*Workload, *master) {
	t.Helper()
	p := small()
	p.Workers = 3
	w := build(t, p, 4)
	m := w.NewObject(0).(*master)
	m.next = 5
	for task, o := range map[int]int32{0: 1, 4: 1, 2: 2} {
		m.owner[task] = o
		m.holds[o]++
	}
	for _, task := range []int{1, 3} {
		tile := w.tiles[task]
		m.done[task] = true
		m.finished++
		m.donePix += int64(tile.W * tile.H)
		m.counts[tile.Y*w.im.W+tile.X] = uint16(task + 7)
	}
	return w, m
}

func TestResubmitter(t *testing.T) {
	_, m := masterWith(t)
	if got := m.Outstanding(1); !slices.Equal(got, []int{0, 4}) {
		t.Fatalf("worker 1 holds %v", got)
	}
	m.Reassign(4, 1, 3)
	m.Reassign(2, 1, 3) // not held by 1: nothing
	m.Reassign(0, 1, 0) // to the master: nothing
	m.Reassign(1, 1, 2) // done: nothing
	m.Reassign(99, 1, 2)
	for wk, want := range map[sim.ObjID][]int{1: {0}, 2: {2}, 3: {4}, 0: nil, 9: nil} {
		if got := m.Outstanding(wk); !slices.Equal(got, want) {
			t.Errorf("worker %d holds %v, want %v", wk, got, want)
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	w, m := masterWith(t)
	data, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r := w.NewObject(0).(*master)
	if err := r.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	again, _ := r.MarshalBinary()
	if !bytes.Equal(data, again) || r.next != 5 || r.finished != 2 || !slices.Equal(r.holds, m.holds) ||
		!slices.Equal(r.counts, m.counts) || r.ModeledSize() != m.ModeledSize() || r.Progress() != 2 {
		t.Fatal("round trip changed the state")
	}
	for cut := 0; cut < len(data); cut++ {
		if err := w.NewObject(0).UnmarshalBinary(data[:cut]); err == nil {
			t.Fatalf("state truncated to %d of %d bytes accepted", cut, len(data))
		}
	}
	if err := w.NewObject(0).UnmarshalBinary(append(bytes.Clone(data), 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
	// A tile held by the master itself is not a state the master can be in.
	held := bytes.Clone(data)
	held[1] = 0 // tile 0's holder: zig-zag 0 = object 0
	if err := w.NewObject(0).UnmarshalBinary(held); err == nil {
		t.Fatal("tile held by the master accepted")
	}
	// A tile done past next: the result of a tile a lost incarnation handed
	// out after the checkpoint this master was restored from. It used to be
	// rejected, and under dps the master's next restore aborted the run.
	m.done[7] = true
	ahead, _ := m.MarshalBinary()
	r = w.NewObject(0).(*master)
	if err := r.UnmarshalBinary(ahead); err != nil || r.finished != 3 || !r.done[7] || r.next != 5 {
		t.Fatalf("a done tile past next: %v, %d finished", err, r.finished)
	}
	wk := w.NewObject(1)
	if b, _ := wk.MarshalBinary(); len(b) != 0 || wk.UnmarshalBinary(nil) != nil || wk.UnmarshalBinary([]byte{1}) == nil {
		t.Fatal("a worker's state is empty and nothing else")
	}
}

func TestParamErrors(t *testing.T) {
	cases := []struct {
		key string // the error must name it
		f   func(p *Params)
	}{
		{"width", func(p *Params) { p.Width = 0 }},
		{"height", func(p *Params) { p.Height = 1 << 20; p.Width = 1 << 20 }},
		{"max_iter", func(p *Params) { p.MaxIter = 0 }},
		{"max_iter", func(p *Params) { p.MaxIter = 70000 }},
		{"tile", func(p *Params) { p.Tile = 0 }},
		{"window", func(p *Params) { p.Window = []float64{0, 0, 1} }},
		{"window", func(p *Params) { p.Window = []float64{1, 0, 0, 1} }},
		{"workers", func(p *Params) { p.Workers = -1 }},
		{"objects_per_node", func(p *Params) { p.ObjectsPerNode = 0 }},
		{"iter_ops", func(p *Params) { p.IterOps = -1 }},
		{"task_bytes", func(p *Params) { p.TaskBytes = -1 }},
		{"bytes_per_pixel", func(p *Params) { p.BytesPerPixel = -2 }},
	}
	for i, c := range cases {
		p := small()
		c.f(&p)
		_, err := New(p, 4, nil)
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("case %d: error %v, want one naming %s", i, err, c.key)
		}
	}
}
