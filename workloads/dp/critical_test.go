package dp

import (
	"errors"
	"fmt"
	"testing"

	"ftsim/sim"
)

// capture records, after each handler, the critical data of every stage an
// object completes and a copy of what a rebuild must give back, and every
// data message's payload.
type capture struct {
	sim.BaseProtocol
	cds  map[sim.ObjID][][]byte
	want map[sim.ObjID][]string // per stage: a description of the state at its start
	msgs map[[3]int][]byte      // (dst, tag, src) → payload
	desc func(o sim.Object) string
}

func (p *capture) OnSend(m *sim.Message) bool {
	if m.Tag >= 0 && m.Src != m.Dst {
		p.msgs[[3]int{int(m.Dst), int(m.Tag), int(m.Src)}] = m.Payload
	}
	return true
}

type critical interface {
	Stage() int
	CriticalData() ([]byte, int64)
}

// Start records every object's initial state, the state at stage 0.
func (p *capture) Start() {
	for i := range p.RT.NumObjects() {
		id := sim.ObjID(i)
		if o := p.RT.Object(id); o.(critical).Stage() == 0 {
			p.want[id] = []string{p.desc(o)}
		}
	}
}

// OnHandled records the stage a handler completed (one at most).
func (p *capture) OnHandled(id sim.ObjID) {
	o := p.RT.Object(id)
	c := o.(critical)
	if s := c.Stage(); s > 0 && len(p.cds[id]) < s {
		if len(p.cds[id]) != s-1 {
			panic(fmt.Sprintf("object %d: a handler completed stages %d..%d", id, len(p.cds[id]), s-1))
		}
		data, _ := c.CriticalData()
		if data == nil {
			panic(fmt.Sprintf("object %d stage %d: no critical data", id, s-1))
		}
		p.cds[id] = append(p.cds[id], data)
		p.want[id] = append(p.want[id], p.desc(o))
	}
}

// Every object rebuilt at the start of every stage from the critical data
// of the stages before it holds what the live object held then: LCS its
// row and directions, TSP its cells, the knapsack its flag bits and its
// values (eq. 5.5), whether the knapsack's remote values come from the
// messages (case 1.1), from the owners' flag bits alone (back-tracking,
// case 1.2.2), or, missing both, the rebuild reports ErrUnavailable.
func TestRestoreCriticalEveryStage(t *testing.T) {
	cases := []struct {
		name     string
		p        func(*Params)
		desc     func(o sim.Object) string
		requests bool
	}{
		{"lcs", func(p *Params) { p.RandomA, p.RandomB, p.BlockRows = 23, 17, 4 }, func(o sim.Object) string {
			l := o.(*LCSObject)
			s := fmt.Sprint(l.Row())
			lo, hi := l.Columns()
			r, _ := l.w.rows(l.stage)
			for i := 1; i <= r; i++ {
				for j := lo + 1; j <= hi; j++ {
					s += string('0' + l.Direction(i, j))
				}
			}
			return s
		}, false},
		{"lcs-requests", func(p *Params) { p.RandomA, p.RandomB, p.BlockRows = 23, 17, 4 }, func(o sim.Object) string {
			l := o.(*LCSObject)
			return fmt.Sprint(l.Row(), l.dirs, l.edge[:l.edgeRows(l.stage)])
		}, true},
		{"knapsack", func(p *Params) {
			p.Problem, p.Capacity = "knapsack", 40
			p.Weights, p.Profits = []int64{3, 5, 7, 2, 9, 4, 6, 8, 1, 12}, []int64{4, 9, 3, 8, 7, 6, 2, 11, 5, 10}
		}, func(o sim.Object) string {
			k := o.(*KnapsackObject)
			return fmt.Sprint(k.Values(), k.flags)
		}, true},
		{"tsp", func(p *Params) { p.Problem, p.RandomCities = "tsp", 8 }, func(o sim.Object) string {
			x := o.(*TSPObject)
			return fmt.Sprint(x.vals, x.preds, x.tour)
		}, false},
	}
	for _, c := range cases {
		for _, objects := range []int{1, 3, 4} {
			t.Run(fmt.Sprintf("%s-%d", c.name, objects), func(t *testing.T) {
				p := DefaultParams()
				p.Objects, p.Requests = int64(objects), c.requests
				c.p(&p)
				w := build(t, p, nodesFor(objects))
				cp := &capture{cds: map[sim.ObjID][][]byte{}, want: map[sim.ObjID][]string{},
					msgs: map[[3]int][]byte{}, desc: c.desc}
				rt, res := runDP(t, w, nodesFor(objects), sim.DefaultConfig(), cp)
				if !res.Outcome.OK {
					t.Fatalf("outcome %+v", res.Outcome)
				}
				final := make([]sim.Object, objects)
				for i := range final {
					final[i] = rt.Object(sim.ObjID(i))
				}
				received := func(id sim.ObjID) func(int, sim.ObjID) []byte {
					return func(tag int, src sim.ObjID) []byte { return cp.msgs[[3]int{int(id), tag, int(src)}] }
				}
				var value func(int, int) (int64, bool)
				if kw, ok := w.(*KnapsackWorkload); ok {
					value = kw.Backtrack(func(i, m int) (bool, bool) {
						return final[kw.Owner(m)].(*KnapsackObject).Flag(i, m), true
					})
				}
				unavailable := 0
				for id := range objects {
					obj := sim.ObjID(id)
					for s := 0; s <= w.Stages(); s++ {
						if s >= len(cp.want[obj]) {
							break // an object without columns starts finished
						}
						srcs := []Sources{{Received: received(obj)}}
						if value != nil {
							srcs = append(srcs, Sources{Value: value}, Sources{})
						}
						for k, src := range srcs {
							fresh := w.NewObject(obj)
							type restorer interface {
								RestoreCritical(int, [][]byte, Sources) error
							}
							err := fresh.(restorer).RestoreCritical(s, cp.cds[obj][:min(s, len(cp.cds[obj]))], src)
							if k == 2 && err != nil {
								if !errors.Is(err, ErrUnavailable) {
									t.Fatalf("object %d stage %d without sources: %v", id, s, err)
								}
								unavailable++
								continue
							}
							if err != nil {
								t.Fatalf("object %d stage %d sources %d: %v", id, s, k, err)
							}
							if got, want := c.desc(fresh), cp.want[obj][s]; got != want {
								t.Fatalf("object %d rebuilt at stage %d (sources %d):\n got %s\nwant %s", id, s, k, got, want)
							}
						}
					}
				}
				if value != nil && objects > 1 && unavailable == 0 {
					t.Errorf("no rebuild needed a remote value")
				}
			})
		}
	}
}
