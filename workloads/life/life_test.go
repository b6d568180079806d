package life

import (
	"fmt"
	"testing"

	"ftsim/models/none"
	"ftsim/sim"
	"ftsim/sim/simtest"
)

func run(t *testing.T, p Params, nodes int, cfg sim.Config, proto sim.Protocol) sim.Result {
	t.Helper()
	w, err := New(p, nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Nodes = nodes
	return simtest.Run(t, cfg, w, proto)
}

// Every tiling, boundary and graph ends with the sequential reference.
func TestDistributedMatchesReference(t *testing.T) {
	cases := []struct {
		w, h, gens int
		boundary   string
		graph      string
		tiles      []int64
		nodes      int
	}{
		{32, 32, 20, "torus", "simple", []int64{4, 4}, 4},
		{32, 32, 20, "dead", "simple", []int64{4, 4}, 4},
		{33, 17, 15, "torus", "overlap", []int64{3, 2}, 3},
		{33, 17, 15, "dead", "overlap", []int64{3, 2}, 2},
		{10, 10, 12, "torus", "simple", []int64{1, 1}, 1},
		{10, 10, 12, "dead", "simple", []int64{1, 1}, 1},
		{12, 9, 10, "torus", "simple", []int64{2, 1}, 2},
		{12, 9, 10, "torus", "overlap", []int64{12, 9}, 4}, // one cell per tile
		{40, 24, 25, "torus", "simple", nil, 6},            // automatic layout
	}
	for _, c := range cases {
		name := fmt.Sprintf("%dx%d-%s-%s-%v", c.w, c.h, c.boundary, c.graph, c.tiles)
		t.Run(name, func(t *testing.T) {
			p := DefaultParams()
			p.Width, p.Height, p.Generations = int64(c.w), int64(c.h), int64(c.gens)
			p.Boundary, p.Graph, p.Tiles = c.boundary, c.graph, c.tiles
			res := run(t, p, c.nodes, sim.DefaultConfig(), &sim.BaseProtocol{})
			if !res.Outcome.OK {
				t.Fatalf("outcome %+v", res.Outcome)
			}
		})
	}
}

// Borders delivered out of generation order (the next generation's before
// this one's) still give the reference.
func TestBordersOutOfOrder(t *testing.T) {
	for _, graph := range []string{"simple", "overlap"} {
		t.Run(graph, func(t *testing.T) {
			p := DefaultParams()
			p.Width, p.Height, p.Generations, p.Graph, p.Tiles = 32, 32, 20, graph, []int64{4, 4}
			proto := &simtest.Reorder{Wait: sim.Second}
			res := run(t, p, 4, sim.DefaultConfig(), proto)
			if !res.Outcome.OK || proto.Swapped == 0 {
				t.Fatalf("outcome %+v, %d messages swapped", res.Outcome, proto.Swapped)
			}
		})
	}
}

// The glider on a torus: after 4 generations it has moved by (+1, +1), and the
// distributed run reports the same population as the published fact (5).
func TestGliderAcrossTiles(t *testing.T) {
	p := DefaultParams()
	p.Width, p.Height, p.Generations = 16, 16, 4*16 // a full lap of the torus
	p.RLE = "x = 3, y = 3, rule = B3/S23\nbob$2bo$3o!"
	p.Offset = []int64{2, 2}
	p.Tiles = []int64{4, 4}
	w, err := New(p, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.initial.Digest() != w.refDigest {
		t.Fatal("after 64 generations on a 16×16 torus the glider must be back where it started")
	}
	res := run(t, p, 4, sim.DefaultConfig(), &sim.BaseProtocol{})
	if !res.Outcome.OK || res.Outcome.Answer != "5" {
		t.Fatalf("outcome %+v", res.Outcome)
	}
}

// The R-pentomino facts (populations at given generations) hold for the
// distributed run on a board large enough to be unbounded for that long.
func TestRPentominoPopulations(t *testing.T) {
	for _, c := range []struct{ gens, pop int }{{1, 6}, {2, 7}, {3, 9}, {4, 8}, {5, 9}, {10, 11}, {50, 64}, {100, 121}} {
		p := DefaultParams()
		p.Width, p.Height, p.Generations = 120, 120, int64(c.gens)
		p.Boundary = "dead"
		p.RLE = "x = 3, y = 3, rule = B3/S23\nb2o$2o$bo!"
		p.Tiles = []int64{3, 3}
		res := run(t, p, 3, sim.DefaultConfig(), &sim.BaseProtocol{})
		if !res.Outcome.OK || res.Outcome.Answer != fmt.Sprint(c.pop) {
			t.Fatalf("generation %d: outcome %+v, want population %d", c.gens, res.Outcome, c.pop)
		}
	}
}

// Real and modeled sizes are independent: scaling the modeled problem changes
// times and bytes, not the answer.
func TestModeledSize(t *testing.T) {
	p := DefaultParams()
	p.Width, p.Height, p.Generations, p.Tiles = 64, 64, 10, []int64{2, 2}
	small := run(t, p, 4, sim.DefaultConfig(), &sim.BaseProtocol{})
	p.ModeledWidth, p.ModeledHeight = 6400, 6400
	big := run(t, p, 4, sim.DefaultConfig(), &sim.BaseProtocol{})
	if !big.Outcome.OK || big.Outcome.Digest != small.Outcome.Digest {
		t.Fatalf("outcomes differ: %+v vs %+v", big.Outcome, small.Outcome)
	}
	if big.Stats.AppBytes < 90*small.Stats.AppBytes || big.Makespan < 9000*small.Makespan/1000 {
		t.Fatalf("modeled size not charged: bytes %d vs %d, makespan %v vs %v",
			big.Stats.AppBytes, small.Stats.AppBytes, big.Makespan, small.Makespan)
	}
}

// The overlapped graph hides communication behind the centre's computation.
func TestOverlapIsFaster(t *testing.T) {
	p := DefaultParams()
	p.Width, p.Height, p.Generations, p.Tiles = 256, 256, 20, []int64{2, 2}
	p.ModeledWidth, p.ModeledHeight = 4000, 4000
	cfg := sim.DefaultConfig()
	cfg.Bandwidth = 10e6 // slow network: the borders take long
	simple := run(t, p, 4, cfg, &sim.BaseProtocol{})
	p.Graph = "overlap"
	overlap := run(t, p, 4, cfg, &sim.BaseProtocol{})
	if overlap.Makespan >= simple.Makespan || overlap.Outcome.Digest != simple.Outcome.Digest {
		t.Fatalf("overlap %v, simple %v", overlap.Makespan, simple.Makespan)
	}
}

// Under the baseline protocol with failures, the run restarts and still ends
// with the reference answer.
func TestRestartUnderFailures(t *testing.T) {
	p := DefaultParams()
	p.Width, p.Height, p.Generations, p.ObjectsPerNode = 48, 48, 30, 2
	cfg := sim.DefaultConfig()
	cfg.Spares = 2
	cfg.Failures = sim.ScriptedFailures
	cfg.Planned = []sim.ScriptedFailure{{Node: 1, Progress: 0.3, ByProgress: true}, {Node: 3, Progress: 0.6, ByProgress: true}}
	res := run(t, p, 4, cfg, none.New())
	if !res.Outcome.OK || res.Stats.Restarts < 1 || res.Stats.Failures != 2 {
		t.Fatalf("outcome %+v, restarts %d, failures %d", res.Outcome, res.Stats.Restarts, res.Stats.Failures)
	}
}

func TestTileStateRoundTrip(t *testing.T) {
	p := DefaultParams()
	p.Width, p.Height, p.Tiles = 20, 20, []int64{2, 2}
	w, _ := New(p, 4, nil)
	a := w.NewObject(1).(*tile)
	a.gen = 3
	a.halo[1][2], a.got[1] = []uint8{1, 0, 1}, 1<<2
	for _, g := range []int{7, 5} { // inserted in generation order
		l := a.laterFor(g)
		l.halo[0], l.got = []uint8{byte(g)}, 1
	}
	b, _ := a.MarshalBinary()
	r := w.NewObject(1).(*tile)
	if err := r.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	b2, _ := r.MarshalBinary()
	if string(b) != string(b2) || r.gen != 3 || len(r.later) != 2 || r.later[0].gen != 5 || r.later[1].gen != 7 {
		t.Fatal("round trip changed the state")
	}
	for _, cut := range []int{0, 1, len(b) - 1} {
		if err := w.NewObject(1).UnmarshalBinary(b[:cut]); err == nil {
			t.Fatalf("truncated state (%d bytes) accepted", cut)
		}
	}
	// the later generations out of order, or one without a halo
	later := len(b) - 1 - 2*4 // the count, then two entries: distance, got, length, one cell
	for _, tail := range [][]byte{{2, 2, 1, 1, 7, 0, 1, 1, 5}, {1, 0, 0}} {
		bad := append(append([]byte(nil), b[:later]...), tail...)
		if err := w.NewObject(1).UnmarshalBinary(bad); err == nil {
			t.Fatalf("later halos %v accepted", tail)
		}
	}
	if err := w.NewObject(1).UnmarshalBinary(append(b[:later:later], 2, 0, 1, 1, 5, 2, 1, 1, 7)); err != nil {
		t.Fatalf("the same halos re-encoded: %v", err)
	}
}

func TestParamErrors(t *testing.T) {
	cases := []func(p *Params){
		func(p *Params) { p.Boundary = "klein" },
		func(p *Params) { p.Graph = "x" },
		func(p *Params) { p.Width = 0 },
		func(p *Params) { p.Tiles = []int64{300, 1} },
		func(p *Params) { p.Tiles = []int64{2} },
		func(p *Params) { p.RLE = "x = 3, y = 3\nbo$2bo$3o!"; p.Offset = []int64{254, 0} },
		func(p *Params) { p.RLE = "zz" },
		func(p *Params) { p.RLEFile = "/nonexistent.rle" },
		func(p *Params) { p.Density = 2 },
	}
	for i, f := range cases {
		p := DefaultParams()
		f(&p)
		if _, err := New(p, 4, nil); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}
