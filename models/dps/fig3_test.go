package dps

import (
	"cmp"
	"slices"
	"testing"

	"ftsim/sim"
)

// The flow graph of Gerlach & Hersch Fig. 3: split 1 → 2a, 2b; each 2x splits
// into 3x1..3x3; merges 4x collect them; merge 5 collects 4a and 4b. Each
// operation is one object here.
var fig3Names = []string{"1", "2a", "2b", "3a1", "3a2", "3a3", "3b1", "3b2", "3b3", "4a", "4b", "5"}

var fig3Edges = map[string][]string{
	"1": {"2a", "2b"}, "2a": {"3a1", "3a2", "3a3"}, "2b": {"3b1", "3b2", "3b3"},
	"3a1": {"4a"}, "3a2": {"4a"}, "3a3": {"4a"}, "3b1": {"4b"}, "3b2": {"4b"}, "3b3": {"4b"},
	"4a": {"5"}, "4b": {"5"},
}

// fig3Valid reports whether order executes every operation after all its predecessors.
func fig3Valid(order []string) bool {
	pos := map[string]int{}
	for i, o := range order {
		pos[o] = i
	}
	if len(pos) != len(fig3Names) {
		return false
	}
	for u, vs := range fig3Edges {
		for _, v := range vs {
			if pos[u] >= pos[v] {
				return false
			}
		}
	}
	return true
}

type fig3Workload struct{ ids map[string]sim.ObjID }

func (w *fig3Workload) NumObjects() int                { return len(fig3Names) }
func (w *fig3Workload) TotalProgress() int64           { return 1 }
func (w *fig3Workload) Check([]sim.Object) sim.Outcome { return sim.Outcome{OK: true} }
func (w *fig3Workload) NewObject(id sim.ObjID) sim.Object {
	name := fig3Names[id]
	preds := 0
	for _, vs := range fig3Edges {
		for _, v := range vs {
			if v == name {
				preds++
			}
		}
	}
	return &fig3Op{w: w, name: name, preds: preds}
}

// fig3Op runs when all its inputs have arrived, computes for a time that
// depends on its name (so that branches interleave) and posts its outputs.
type fig3Op struct {
	w          *fig3Workload
	name       string
	preds, got int
	done       bool
}

func (o *fig3Op) run(c *sim.Ctx) {
	c.Compute(float64(1e5 * (1 + 7*len(o.name) + int(o.name[len(o.name)-1])%5)))
	for _, v := range fig3Edges[o.name] {
		c.Send(o.w.ids[v], 0, 100, nil)
	}
	o.done = true
}
func (o *fig3Op) Start(c *sim.Ctx) {
	if o.preds == 0 {
		o.run(c)
	}
}
func (o *fig3Op) Handle(c *sim.Ctx, _ *sim.Message) {
	o.got++
	if o.got == o.preds {
		o.run(c)
	}
}
func (o *fig3Op) Progress() int64 {
	if o.done && o.name == "5" {
		return 1
	}
	return 0
}
func (o *fig3Op) ModeledSize() int64             { return 8 }
func (o *fig3Op) MarshalBinary() ([]byte, error) { return []byte{byte(o.got)}, nil }
func (o *fig3Op) UnmarshalBinary(b []byte) error {
	o.got = int(b[0])
	return nil
}

// recorder keeps every data object the protocol stamped.
type recorder struct {
	*Protocol
	sent []*sim.Message
}

func (r *recorder) OnSend(m *sim.Message) bool {
	ok := r.Protocol.OnSend(m)
	r.sent = append(r.sent, m)
	return ok
}

// Sequence numbers give a valid execution order on the paper's Fig. 3 example:
// the two orders the paper lists are valid, and executing the operations
// sorted by the largest sequence number of their inputs (what a backup thread
// does with its queue) is valid too, whatever the placement.
func TestFig3SequenceOrder(t *testing.T) {
	paper := [][]string{
		{"1", "2a", "3a1", "3a2", "3a3", "4a", "2b", "3b1", "3b2", "3b3", "4b", "5"},
		{"1", "2b", "3b3", "2a", "3b2", "3a1", "3b1", "3a3", "4b", "3a2", "4a", "5"},
	}
	for _, o := range paper {
		if !fig3Valid(o) {
			t.Fatalf("paper order %v judged invalid", o)
		}
	}
	if fig3Valid([]string{"1", "2a", "3a1", "3a2", "4a", "3a3", "2b", "3b1", "3b2", "3b3", "4b", "5"}) {
		t.Fatal("an order running 4a before 3a3 judged valid")
	}
	for nodes := 1; nodes <= 4; nodes++ {
		w := &fig3Workload{ids: map[string]sim.ObjID{}}
		for i, n := range fig3Names {
			w.ids[n] = sim.ObjID(i)
		}
		cfg := baseConfig()
		cfg.Nodes = nodes
		cfg.Placement = sim.RoundRobin
		p, _ := New(DefaultConfig())
		r := &recorder{Protocol: p}
		rt, _ := sim.New(cfg, w, r)
		if res := rt.Run(); !res.Finished {
			t.Fatalf("%d nodes: the graph did not finish", nodes)
		}
		key := map[string]uint64{}
		for _, m := range r.sent {
			dst := fig3Names[m.Dst]
			key[dst] = max(key[dst], m.Hdr.Seq)
			// SeqOut exceeds the sequence number of every input of its operation
			if m.Hdr.Seq <= key[fig3Names[m.Src]] {
				t.Fatalf("%d nodes: %s→%s has seq %d, not above its inputs' %d", nodes, fig3Names[m.Src], dst, m.Hdr.Seq, key[fig3Names[m.Src]])
			}
		}
		order := slices.Clone(fig3Names)
		slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(key[a], key[b]) })
		if !fig3Valid(order) {
			t.Fatalf("%d nodes: sequence order %v is not valid", nodes, order)
		}
	}
}
