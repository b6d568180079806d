package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Topology is the interconnect between the nodes' network interfaces. A nil
// Topology (Config.Topology) is the flat network: a full crossbar in which
// every message takes Config.Latency and contends only at its two ends'
// interfaces. A topology adds, per pair of nodes, the latency of the hops
// beyond the shortest path, and the shared links a message occupies on its
// way. Nodes are numbered as the runtime numbers them: the application's
// nodes 0..Nodes-1, then the spares, so a spare that takes a failed node's
// place may sit far from the failed node's neighbours.
type Topology interface {
	// Name is the topology as scenarios spell it ("torus", "fat_tree").
	Name() string
	// Nodes is the number of nodes the topology connects; it must be at
	// least Config.Nodes + Config.Spares.
	Nodes() int
	// ExtraLatency is the latency a message from a to b (a != b) takes
	// beyond Config.Latency, which is that of the shortest path.
	ExtraLatency(a, b NodeID) Time
	// Links returns the shared links; Route's link numbers index it.
	Links() []Link
	// Route appends to buf (empty scratch space) the shared links a message
	// from a to b (a != b) occupies besides the two ends' interfaces, and
	// returns the result: those it takes when it leaves, with the sender's
	// interface, or, if arriving, those it takes when its head arrives,
	// with the receiver's (as a leaf switch's downlinks are only busy while
	// the receiver takes the message in).
	Route(a, b NodeID, arriving bool, buf []int32) []int32
}

// Link is a shared link of a topology: Lanes parallel channels (a switch's
// ports towards the next level) of Bandwidth bytes/s each. A message goes
// at the pace of the slowest of its interfaces and links, enters the links
// of its path in turn, each once one of its lanes is free, and holds that
// lane for its size over that pace (see Runtime.reserve).
type Link struct {
	Lanes     int
	Bandwidth float64
}

// Torus is a direct network of routers, one per position, each linked to
// its two neighbours in every dimension, with wrap-around links. Node n sits
// at the mixed-radix coordinates of n (the last dimension varying fastest;
// positions beyond the nodes have routers but no node). A message follows
// dimension-order routing: along the first dimension the shorter way round
// (forward on a tie), then the second, and so on. It takes Config.Latency
// between neighbours and HopLatency for each further hop, and takes the
// directed links of its path, each of the interfaces' bandwidth, in turn.
type Torus struct {
	Dims       []int // extent of each dimension
	HopLatency Time  // per hop beyond the first
	// coords holds each node's coordinates, len(Dims) values per node: a
	// message's hops are then a few subtractions, not a division per
	// dimension
	coords []int32
	stride []int // of each dimension in a position's number
	links  []Link
}

// MaxTorusDims bounds a torus's dimensions (Fugaku's Tofu has 6): each
// node keeps its coordinates.
const MaxTorusDims = 8

// MaxTorusPositions bounds a torus's positions: each has a router with two
// links per dimension, whose busy times the runtime keeps.
const MaxTorusPositions = 1 << 24

// TorusRoom is the most positions a torus may have for a cluster of nodes
// nodes: 64 per node, or 4096. A torus far larger than the machine is a
// mistake of extents that would cost memory for links no message takes.
func TorusRoom(nodes int) int { return min(MaxTorusPositions, max(64*nodes, 4096)) }

// NewTorus returns a torus of the given extents that connects nodes nodes
// (at most the product of the extents), with links of bandwidth bytes/s.
func NewTorus(dims []int, hop Time, nodes int, bandwidth float64) (*Torus, error) {
	if len(dims) == 0 || len(dims) > MaxTorusDims {
		return nil, fmt.Errorf("network.torus_dims: a torus needs 1 to %d dimensions, got %d", MaxTorusDims, len(dims))
	}
	positions := 1
	for _, d := range dims {
		if d < 1 || d > TorusRoom(nodes) || positions*d > TorusRoom(nodes) {
			return nil, fmt.Errorf("network.torus_dims: extents must be ≥ 1, with at most %d positions in all for %d nodes; got %v", TorusRoom(nodes), nodes, dims)
		}
		positions *= d
	}
	if positions < nodes {
		return nil, fmt.Errorf("network.torus_dims: %v has room for %d nodes, the cluster has %d (nodes + spares)", dims, positions, nodes)
	}
	if err := CheckDelay("network.hop_latency", hop); err != nil {
		return nil, err
	}
	k := len(dims)
	t := &Torus{Dims: dims, HopLatency: hop, coords: make([]int32, nodes*k), stride: make([]int, k),
		links: slices.Repeat([]Link{{Lanes: 1, Bandwidth: bandwidth}}, positions*k*2)}
	t.stride[k-1] = 1
	for i := k - 2; i >= 0; i-- {
		t.stride[i] = t.stride[i+1] * dims[i+1]
	}
	for p := range nodes {
		r := p
		for i := k - 1; i >= 0; i-- {
			t.coords[p*k+i] = int32(r % dims[i])
			r /= dims[i]
		}
	}
	return t, nil
}

// Name implements Topology.
func (t *Torus) Name() string { return "torus" }

// Nodes implements Topology.
func (t *Torus) Nodes() int { return len(t.coords) / len(t.Dims) }

// Hops is the number of links on a shortest path from a to b.
func (t *Torus) Hops(a, b NodeID) int {
	k := len(t.Dims)
	ca, cb := t.coords[int(a)*k:int(a)*k+k], t.coords[int(b)*k:int(b)*k+k]
	h := 0
	for i, d := range t.Dims {
		x := int(ca[i] - cb[i])
		if x < 0 {
			x = -x
		}
		h += min(x, d-x)
	}
	return h
}

// ExtraLatency implements Topology.
func (t *Torus) ExtraLatency(a, b NodeID) Time {
	return Time(max(t.Hops(a, b)-1, 0)) * t.HopLatency
}

// Links implements Topology: the link from position p forward along
// dimension i is link 2(p·len(Dims)+i), the one backward the next.
func (t *Torus) Links() []Link { return t.links }

// Route implements Topology: the links of the dimension-order path, all
// taken as the message leaves.
func (t *Torus) Route(a, b NodeID, arriving bool, buf []int32) []int32 {
	if arriving {
		return buf
	}
	k := len(t.Dims)
	ca, cb := t.coords[int(a)*k:int(a)*k+k], t.coords[int(b)*k:int(b)*k+k]
	pos := int(a) // a node's number is its position
	for i, d := range t.Dims {
		fwd := (int(cb[i]) - int(ca[i]) + d) % d
		if fwd == 0 {
			continue
		}
		x, step, dir, n := int(ca[i]), 1, 0, fwd
		if d-fwd < fwd {
			step, dir, n = -1, 1, d-fwd
		}
		for range n {
			buf = append(buf, int32(2*(pos*k+i)+dir))
			next := (x + step + d) % d
			pos += (next - x) * t.stride[i]
			x = next
		}
	}
	return buf
}

// MaxSwitchPorts bounds a fat tree's leaf switch ports (the largest
// switches have 128): a message scans its leaf's lanes.
const MaxSwitchPorts = 1024

// FatTree is a two-level fat tree: leaf switches of Ports nodes each, joined
// by a non-blocking spine. Nodes n and m share a leaf when n/Ports ==
// m/Ports; a message between them takes Config.Latency. A message between
// leaves crosses two more switches (2 × HopLatency more), one of its leaf's
// uplinks as it leaves and one of the destination leaf's downlinks as it
// arrives. A leaf has ⌈Ports/Oversubscription⌉ uplinks and as many
// downlinks, together carrying Ports × bandwidth / Oversubscription (≥ 1):
// with an oversubscription of 1 every node of a leaf can send off-leaf at
// full speed at once, with 4 a leaf whose nodes all do gets a quarter of
// their bandwidth, as on a tapered tree.
type FatTree struct {
	Ports            int     // nodes per leaf switch
	Oversubscription float64 // the leaf's down-port bandwidth over its up-port bandwidth
	HopLatency       Time    // per switch beyond the leaf
	nodes            int
	links            []Link
}

// NewFatTree returns a fat tree that connects nodes nodes whose interfaces
// have bandwidth bytes/s.
func NewFatTree(nodes, ports int, oversubscription float64, hop Time, bandwidth float64) (*FatTree, error) {
	switch {
	case ports < 1 || ports > MaxSwitchPorts:
		return nil, fmt.Errorf("network.switch_ports: must be ≥ 1 and ≤ %d, got %d", MaxSwitchPorts, ports)
	case !(oversubscription >= 1) || oversubscription > 1e6:
		return nil, fmt.Errorf("network.oversubscription: must be ≥ 1 and ≤ 1e6, got %g", oversubscription)
	case nodes < 1:
		return nil, errors.New("a fat tree needs at least one node")
	}
	if err := CheckDelay("network.hop_latency", hop); err != nil {
		return nil, err
	}
	up := float64(ports) / oversubscription // in interfaces' worth of bandwidth
	lanes := int(math.Ceil(up - 1e-9))
	l := Link{Lanes: lanes, Bandwidth: bandwidth * up / float64(lanes)}
	return &FatTree{Ports: ports, Oversubscription: oversubscription, HopLatency: hop, nodes: nodes,
		links: slices.Repeat([]Link{l}, 2*((nodes+ports-1)/ports))}, nil
}

// Name implements Topology.
func (f *FatTree) Name() string { return "fat_tree" }

// Nodes implements Topology.
func (f *FatTree) Nodes() int { return f.nodes }

// ExtraLatency implements Topology.
func (f *FatTree) ExtraLatency(a, b NodeID) Time {
	if int(a)/f.Ports == int(b)/f.Ports {
		return 0
	}
	return 2 * f.HopLatency
}

// Links implements Topology: leaf l's uplinks are link 2l, its downlinks
// link 2l+1.
func (f *FatTree) Links() []Link { return f.links }

// Route implements Topology: an uplink of the sender's leaf when the
// message leaves, a downlink of the receiver's when it arrives.
func (f *FatTree) Route(a, b NodeID, arriving bool, buf []int32) []int32 {
	la, lb := int32(int(a)/f.Ports), int32(int(b)/f.Ports)
	switch {
	case la == lb:
		return buf
	case arriving:
		return append(buf, 2*lb+1)
	}
	return append(buf, 2*la)
}
