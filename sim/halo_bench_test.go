package sim

import (
	"errors"
	"testing"
)

// haloWL is a 2-D torus of side×side objects, one per node; each iteration an
// object sends a 64 KiB message to each of its 4 neighbours and waits for theirs.
type haloWL struct {
	side, iters int
}

type haloObj struct {
	w          *haloWL
	id         ObjID
	iter, got  int
	early      int // messages of the next iteration that arrived first
	neighbours [4]ObjID
}

func (w *haloWL) NumObjects() int      { return w.side * w.side }
func (w *haloWL) TotalProgress() int64 { return int64(w.side * w.side * w.iters) }
func (w *haloWL) Check([]Object) Outcome {
	return Outcome{OK: true}
}
func (w *haloWL) NewObject(id ObjID) Object {
	s := w.side
	x, y := int(id)%s, int(id)/s
	o := &haloObj{w: w, id: id}
	o.neighbours = [4]ObjID{
		ObjID((x+1)%s + y*s), ObjID((x+s-1)%s + y*s),
		ObjID(x + ((y+1)%s)*s), ObjID(x + ((y+s-1)%s)*s),
	}
	return o
}

const haloBytes = 64 << 10

func (o *haloObj) send(c *Ctx) {
	c.Compute(1000)
	for _, n := range o.neighbours {
		c.Send(n, int32(o.iter), haloBytes, nil)
	}
}
func (o *haloObj) Start(c *Ctx) { o.send(c) }
func (o *haloObj) Handle(c *Ctx, m *Message) {
	if int(m.Tag) != o.iter {
		o.early++
		return
	}
	o.got++
	if o.got < 4 {
		return
	}
	o.iter++
	o.got, o.early = o.early, 0
	if o.iter < o.w.iters {
		o.send(c)
	}
}
func (o *haloObj) Progress() int64                { return int64(o.iter) }
func (o *haloObj) ModeledSize() int64             { return 0 }
func (o *haloObj) MarshalBinary() ([]byte, error) { return nil, errors.New("not needed") }
func (o *haloObj) UnmarshalBinary([]byte) error   { return errors.New("not needed") }

// BenchmarkHaloExchange: 4,096 nodes on a 2-D torus, 4 neighbours, 64 KiB
// messages through the latency + bandwidth model. One op is one full run of
// 20 iterations (327,680 messages). The sub-benchmarks put the flat network,
// a 3-D torus topology and a 4:1 tapered fat tree of 32-port leaves under it.
func BenchmarkHaloExchange(b *testing.B) {
	w := &haloWL{side: 64, iters: 20}
	n := w.side * w.side
	torus, _ := NewTorus([]int{16, 16, 16}, 100, n, 12.5e9)
	fatTree, _ := NewFatTree(n, 32, 4, 100, 12.5e9)
	for _, tc := range []struct {
		name string
		topo Topology
	}{{"flat", nil}, {"torus", torus}, {"fat_tree", fatTree}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Nodes = n
			cfg.Bandwidth = 12.5e9
			cfg.Topology = tc.topo
			benchMessages(b, cfg, w)
		})
	}
}

// benchMessages runs workload w without protocol on cfg b.N times and
// reports the application messages simulated per second.
func benchMessages(b *testing.B, cfg Config, w Workload) {
	b.ReportAllocs()
	var msgs int64
	for i := 0; i < b.N; i++ {
		_, res := runToEnd(b, cfg, w, &BaseProtocol{})
		msgs += res.Stats.AppMsgs
	}
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
}
