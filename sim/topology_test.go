package sim

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestTorusHops(t *testing.T) {
	tor, err := NewTorus([]int{4, 4, 4}, 100, 64, 1e9)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		a, b  NodeID
		hops  int
		extra Time
	}{
		{0, 1, 1, 0},    // neighbours in the last dimension
		{0, 3, 1, 0},    // ... across the wrap-around link
		{0, 2, 2, 100},  // half way round
		{0, 4, 1, 0},    // neighbours in the middle dimension
		{0, 16, 1, 0},   // ... and in the first
		{0, 63, 3, 200}, // (3,3,3): one wrap-around hop per dimension
		{0, 42, 6, 500}, // (2,2,2): the diameter
		{42, 0, 6, 500}, // symmetric
		{21, 22, 1, 0},  // (1,1,1) to (1,1,2)
	} {
		if h, x := tor.Hops(tc.a, tc.b), tor.ExtraLatency(tc.a, tc.b); h != tc.hops || x != tc.extra {
			t.Errorf("%d→%d: %d hops, extra %d ns; want %d, %d", tc.a, tc.b, h, x, tc.hops, tc.extra)
		}
	}
	if n, l := tor.Nodes(), tor.Links(); n != 64 || len(l) != 64*3*2 || l[0] != (Link{1, 1e9}) {
		t.Errorf("torus: %d nodes, %d links, the first %v", n, len(l), l[0])
	}
	// dimension-order routes: link 2(p·3+i) leaves position p forward along
	// dimension i, the next one backward
	link := func(p, i, back int) int32 { return int32(2*(p*3+i) + back) }
	for _, tc := range []struct {
		a, b NodeID
		want []int32
	}{
		{0, 1, []int32{link(0, 2, 0)}},
		{0, 3, []int32{link(0, 2, 1)}},                // the wrap-around link, backward
		{0, 2, []int32{link(0, 2, 0), link(1, 2, 0)}}, // a tie: forward
		{2, 0, []int32{link(2, 2, 0), link(3, 2, 0)}}, // forward too, through the wrap-around
		{0, 42, []int32{link(0, 0, 0), link(16, 0, 0), link(32, 1, 0), link(36, 1, 0), link(40, 2, 0), link(41, 2, 0)}},
		{63, 0, []int32{link(63, 0, 0), link(15, 1, 0), link(3, 2, 0)}}, // (3,3,3) → (0,0,0): one wrap per dimension
		{21, 21 + 16, []int32{link(21, 0, 0)}},
		{21, 5, []int32{link(21, 0, 1)}},
	} {
		r, in := tor.Route(tc.a, tc.b, false, nil), tor.Route(tc.a, tc.b, true, nil)
		if !slices.Equal(r, tc.want) || len(in) != 0 || len(r) != tor.Hops(tc.a, tc.b) {
			t.Errorf("%d→%d: route %v then %v, want %v then none", tc.a, tc.b, r, in, tc.want)
		}
	}
}

func TestNewTopologyErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func() (Topology, error)
		want string
	}{
		{"no dimension", func() (Topology, error) { return NewTorus(nil, 0, 4, 1e9) }, "1 to 8 dimensions, got 0"},
		{"nine dimensions", func() (Topology, error) { return NewTorus(slices.Repeat([]int{2}, 9), 0, 4, 1e9) }, "1 to 8 dimensions, got 9"},
		{"zero extent", func() (Topology, error) { return NewTorus([]int{4, 0}, 0, 4, 1e9) }, "extents must be ≥ 1"},
		{"too small", func() (Topology, error) { return NewTorus([]int{2, 2}, 0, 5, 1e9) }, "room for 4 nodes, the cluster has 5"},
		{"huge extents", func() (Topology, error) { return NewTorus([]int{1 << 30, 1 << 30, 1 << 30}, 0, 5, 1e9) }, "at most 4096 positions in all for 5 nodes"},
		{"too many positions", func() (Topology, error) { return NewTorus([]int{64, 64, 2}, 0, 100, 1e9) }, "at most 6400 positions in all for 100 nodes"},
		{"the most positions", func() (Topology, error) { return NewTorus([]int{80, 80}, 0, 100, 1e9) }, ""},
		{"the most positions of all", func() (Topology, error) { return NewTorus([]int{1 << 12, 1 << 12, 2}, 0, 1<<24, 1e9) }, "at most 16777216 positions in all"},
		{"torus hop", func() (Topology, error) { return NewTorus([]int{4}, MaxDuration, 4, 1e9) }, "network.hop_latency"},
		{"ports", func() (Topology, error) { return NewFatTree(8, 0, 1, 0, 1e9) }, "network.switch_ports"},
		{"too many ports", func() (Topology, error) { return NewFatTree(8, 1025, 1, 0, 1e9) }, "≤ 1024, got 1025"},
		{"oversubscription", func() (Topology, error) { return NewFatTree(8, 4, 0.5, 0, 1e9) }, "network.oversubscription"},
		{"fat tree hop", func() (Topology, error) { return NewFatTree(8, 4, 1, -1, 1e9) }, "network.hop_latency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.make()
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A leaf's uplinks carry ports × bandwidth / oversubscription, in whole
// interfaces' worth of lanes where the ratio allows.
func TestFatTreeLinks(t *testing.T) {
	for _, tc := range []struct {
		ports int
		over  float64
		want  Link
	}{
		{4, 1, Link{4, 1e9}},
		{4, 2, Link{2, 1e9}},
		{4, 3, Link{2, 1e9 * 4 / 3 / 2}},
		{4, 8, Link{1, 0.5e9}},
		{64, 4, Link{16, 1e9}}, // a leaf with room for more nodes
	} {
		f, err := NewFatTree(10, tc.ports, tc.over, 0, 1e9)
		if err != nil {
			t.Fatal(err)
		}
		// 10 nodes on 3 leaves (1 with 64 ports): an uplink and a downlink each
		if want := slices.Repeat([]Link{tc.want}, 2*((10+tc.ports-1)/tc.ports)); !reflect.DeepEqual(f.Links(), want) {
			t.Errorf("ports %d, oversubscription %g: links %v, want %v", tc.ports, tc.over, f.Links(), want)
		}
	}
	f, _ := NewFatTree(10, 4, 1, 150, 1e9)
	for _, tc := range []struct {
		a, b          NodeID
		leave, arrive []int32
		extra         Time
	}{
		{0, 3, nil, nil, 0},
		{3, 4, []int32{0}, []int32{3}, 300},
		{9, 0, []int32{4}, []int32{1}, 300},
	} {
		out, in := f.Route(tc.a, tc.b, false, nil), f.Route(tc.a, tc.b, true, nil)
		if x := f.ExtraLatency(tc.a, tc.b); !slices.Equal(out, tc.leave) || !slices.Equal(in, tc.arrive) || x != tc.extra {
			t.Errorf("%d→%d: route %v then %v, extra %d; want %v then %v, %d", tc.a, tc.b, out, in, x, tc.leave, tc.arrive, tc.extra)
		}
	}
}

// Messages on a topology: the hops' latency, and contention on a fat tree's
// shared links. Every object is on its own node; the listed objects each
// send 4000 bytes (4 µs at 1 GB/s) at time 0 to their destination.
func TestTopologyTiming(t *testing.T) {
	const lat, T, hop = 2 * Microsecond, 4000, 100
	torus, _ := NewTorus([]int{8}, hop, 8, 1e9)
	full, _ := NewFatTree(8, 2, 1, hop, 1e9)
	tapered, _ := NewFatTree(8, 2, 2, hop, 1e9)   // one uplink lane per leaf
	starved, _ := NewFatTree(8, 2, 4, hop, 1e9)   // one lane at half the bandwidth
	fourPorts, _ := NewFatTree(8, 4, 2, hop, 1e9) // two lanes per leaf
	for _, tc := range []struct {
		name string
		topo Topology
		send map[ObjID]ObjID
		want map[int32]Time // arrival by sender
	}{
		{"flat", nil, map[ObjID]ObjID{0: 4, 1: 5}, map[int32]Time{0: lat + T, 1: lat + T}},
		{"torus: neighbours", torus, map[ObjID]ObjID{0: 1, 2: 1}, map[int32]Time{0: lat + T, 2: lat + 2*T}},
		{"torus: far and wrapped", torus, map[ObjID]ObjID{0: 4, 1: 7}, map[int32]Time{0: lat + 3*hop + T, 1: lat + hop + T}},
		// 0→2 and 1→3 both take the link 1→2; 0→2 and 3→1 go opposite ways
		{"torus: a shared link", torus, map[ObjID]ObjID{0: 2, 1: 3}, map[int32]Time{0: lat + hop + T, 1: T + lat + hop + T}},
		{"torus: opposite directions", torus, map[ObjID]ObjID{0: 2, 3: 1}, map[int32]Time{0: lat + hop + T, 3: lat + hop + T}},
		{"fat tree: within a leaf", tapered, map[ObjID]ObjID{0: 1, 2: 3}, map[int32]Time{0: lat + T, 2: lat + T}},
		{"full fat tree: no contention", full, map[ObjID]ObjID{0: 2, 1: 3}, map[int32]Time{0: lat + 2*hop + T, 1: lat + 2*hop + T}},
		{"tapered: the uplink is shared", tapered, map[ObjID]ObjID{0: 2, 1: 4}, map[int32]Time{0: lat + 2*hop + T, 1: T + lat + 2*hop + T}},
		{"tapered: the downlink is shared", tapered, map[ObjID]ObjID{0: 4, 2: 5}, map[int32]Time{0: lat + 2*hop + T, 2: T + lat + 2*hop + T}},
		{"tapered: separate leaves", tapered, map[ObjID]ObjID{0: 2, 4: 6}, map[int32]Time{0: lat + 2*hop + T, 4: lat + 2*hop + T}},
		// a downlink is busy only while the receiver takes a message in:
		// three messages queued for node 0 take one lane in turn and leave
		// the other to node 1's
		{"full fat tree: many to one", full, map[ObjID]ObjID{2: 0, 4: 0, 6: 0, 7: 1},
			map[int32]Time{2: lat + 2*hop + T, 4: lat + 2*hop + 2*T, 6: lat + 2*hop + 3*T, 7: lat + 2*hop + T}},
		{"two lanes for three senders", fourPorts, map[ObjID]ObjID{0: 4, 1: 5, 2: 6}, map[int32]Time{0: lat + 2*hop + T, 1: lat + 2*hop + T, 2: T + lat + 2*hop + T}},
		{"a slow link sets the pace", starved, map[ObjID]ObjID{0: 2}, map[int32]Time{0: lat + 2*hop + 2*T}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log []recv
			wl := &scriptWL{n: 8, total: int64(len(tc.send)), log: &log, start: func(c *Ctx) {
				if to, ok := tc.send[c.Self()]; ok {
					c.Send(to, int32(c.Self()), T, nil)
				}
			}}
			cfg := testConfig(8)
			cfg.Topology = tc.topo
			rt, err := New(cfg, wl, &recordProto{})
			if err != nil {
				t.Fatal(err)
			}
			if !rt.Run().Finished {
				t.Fatal("did not finish")
			}
			got := map[int32]Time{}
			for _, r := range log {
				got[r.tag] = r.at
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("arrivals by sender %v, want %v", got, tc.want)
			}
			if len(tc.send) == 1 && tc.topo != nil { // the runtime's latency is the topology's
				for from, to := range tc.send {
					if l := rt.Latency(rt.NodeOf(from), rt.NodeOf(to)); l != lat+tc.topo.ExtraLatency(NodeID(from), NodeID(to)) {
						t.Errorf("Latency = %d", l)
					}
				}
			}
		})
	}
}

// A topology must connect the spares too: a spare that takes a failed
// node's place has a position in it.
func TestTopologyCoversSpares(t *testing.T) {
	cfg := testConfig(8)
	cfg.Spares = 1
	cfg.Topology, _ = NewTorus([]int{8}, 0, 8, 1e9)
	if _, err := New(cfg, &scriptWL{n: 8, total: 1}, &recordProto{}); err == nil || !strings.Contains(err.Error(), "the torus connects 8 nodes, the cluster has 9") {
		t.Errorf("New = %v", err)
	}
}

// A message waiting for a busy link on the way does not hold its sender's
// interface: the sender's next message, to a node of its own leaf, leaves
// as soon as the first has left the interface.
func TestLinkWaitFreesTheInterface(t *testing.T) {
	const lat, T, hop = 2 * Microsecond, 4000, 100
	tapered, _ := NewFatTree(8, 2, 2, hop, 1e9) // one uplink lane per leaf
	var log []recv
	wl := &scriptWL{n: 8, total: 3, log: &log, start: func(c *Ctx) {
		switch c.Self() {
		case 0:
			c.Send(2, 0, T, nil) // takes leaf 0's uplink first
		case 1:
			c.Send(4, 1, T, nil) // waits for it
			c.Send(0, 2, T, nil) // stays on the leaf
		}
	}}
	cfg := testConfig(8)
	cfg.Topology = tapered
	rt, err := New(cfg, wl, &recordProto{})
	if err != nil {
		t.Fatal(err)
	}
	rt.Run()
	got := map[int32]Time{}
	for _, r := range log {
		got[r.tag] = r.at
	}
	want := map[int32]Time{0: lat + 2*hop + T, 1: T + lat + 2*hop + T, 2: T + lat + T}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("arrivals by tag %v, want %v", got, want)
	}
}
