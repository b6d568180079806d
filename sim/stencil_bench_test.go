package sim

import (
	"errors"
	"testing"
)

// stencilWL is a 3-D grid of nx×ny×nz objects, one per node, without
// wrap-around (the exascale stencil's shape): each iteration an object
// charges its compute, then sends a face to each of its (up to 6) face
// neighbours and waits for theirs.
type stencilWL struct {
	nx, ny, nz, iters int
	face              int64   // modeled bytes per face
	ops               float64 // modeled operations per iteration
}

type stencilObj struct {
	w          *stencilWL
	iter, got  int
	early      int // faces of the next iteration that arrived first
	neighbours []ObjID
}

func (w *stencilWL) NumObjects() int      { return w.nx * w.ny * w.nz }
func (w *stencilWL) TotalProgress() int64 { return int64(w.NumObjects() * w.iters) }
func (w *stencilWL) Check([]Object) Outcome {
	return Outcome{OK: true}
}
func (w *stencilWL) NewObject(id ObjID) Object {
	x, y, z := int(id)%w.nx, int(id)/w.nx%w.ny, int(id)/(w.nx*w.ny)
	o := &stencilObj{w: w}
	at := func(x, y, z int) {
		if x >= 0 && x < w.nx && y >= 0 && y < w.ny && z >= 0 && z < w.nz {
			o.neighbours = append(o.neighbours, ObjID((z*w.ny+y)*w.nx+x))
		}
	}
	at(x-1, y, z)
	at(x+1, y, z)
	at(x, y-1, z)
	at(x, y+1, z)
	at(x, y, z-1)
	at(x, y, z+1)
	return o
}

func (o *stencilObj) send(c *Ctx) {
	for _, n := range o.neighbours {
		c.Send(n, int32(o.iter), o.w.face, nil)
	}
}
func (o *stencilObj) Start(c *Ctx) { o.send(c) }
func (o *stencilObj) Handle(c *Ctx, m *Message) {
	if int(m.Tag) != o.iter {
		o.early++
		return
	}
	o.got++
	if o.got < len(o.neighbours) {
		return
	}
	o.iter++
	o.got, o.early = o.early, 0
	c.Compute(o.w.ops)
	if o.iter < o.w.iters {
		o.send(c)
	}
}
func (o *stencilObj) Progress() int64                { return int64(o.iter) }
func (o *stencilObj) ModeledSize() int64             { return 0 }
func (o *stencilObj) MarshalBinary() ([]byte, error) { return nil, errors.New("not needed") }
func (o *stencilObj) UnmarshalBinary([]byte) error   { return errors.New("not needed") }

// BenchmarkStencilScale is the exascale scenario's message pattern at its
// size: 10,000 nodes in a 25×20×20 grid, 6 face neighbours, 2 MiB faces, a
// compute phase between exchanges so that every node sends at once (about
// 57,000 messages in flight). At this size the per-message state no longer
// fits in cache: it measures memory traffic as much as the event queue. One
// op is one run of 10 iterations (572,000 messages).
func BenchmarkStencilScale(b *testing.B) {
	cfg, w := stencilScale()
	benchMessages(b, cfg, w)
}

// stencilScale is BenchmarkStencilScale's machine and workload.
func stencilScale() (Config, *stencilWL) {
	w := &stencilWL{nx: 25, ny: 20, nz: 20, iters: 10, face: 2 << 20, ops: 1e6}
	cfg := DefaultConfig()
	cfg.Nodes = w.NumObjects()
	cfg.Bandwidth = 12.5e9
	return cfg, w
}
