package farm

import (
	"encoding/binary"
	"fmt"
	"math"

	"ftsim/sim"
	"ftsim/workloads/internal/limits"
)

// Params configure the task-farm workload (scenario keys under [workload]).
type Params struct {
	Width          int64     `toml:"width"`            // image size in pixels
	Height         int64     `toml:"height"`           //
	MaxIter        int64     `toml:"max_iter"`         // Mandelbrot iteration cap, 1..65535
	Tile           int64     `toml:"tile"`             // side of a (square) tile in pixels: the unit of work
	Window         []float64 `toml:"window"`           // [x0, y0, x1, y1] of the complex plane; default: the whole set
	Workers        int64     `toml:"workers"`          // worker objects; 0 = nodes × objects_per_node − 1 (at least 1)
	ObjectsPerNode int64     `toml:"objects_per_node"` // objects per node, the master included, when workers is not given
	IterOps        float64   `toml:"iter_ops"`         // modeled operations per Mandelbrot iteration
	TaskBytes      int64     `toml:"task_bytes"`       // modeled size of a task message
	BytesPerPixel  float64   `toml:"bytes_per_pixel"`  // modeled bytes per pixel in results and in the master's state
}

// DefaultParams is a 512×512 image of the whole set, 1000 iterations at
// most, in 32×32 tiles, one object per node.
func DefaultParams() Params {
	return Params{Width: 512, Height: 512, MaxIter: 1000, Tile: 32, ObjectsPerNode: 1,
		IterOps: 10, TaskBytes: 64, BytesPerPixel: 2}
}

// maxPixels bounds the image the master assembles (and the reference holds).
const maxPixels = 1 << 28

// Workload is the master/worker Mandelbrot farm of MPI/FT's pmandel and the
// DPS task farm: object 0, the master, hands out tiles one at a time to the
// workers, objects 1..N−1, and gives a worker a new tile when it returns one
// (self-scheduling) until every tile is done.
//
// By default there are nodes × objects_per_node objects with the master
// among them, as pmandel's rank 0: with one object per node the master's node
// computes nothing, and the farm has nodes − 1 workers (at least one: on a
// single node the master shares it with its worker).
type Workload struct {
	p         Params
	im        Image
	tiles     []Tile
	n         int // objects, the master included
	refDigest string
	refTotal  uint64
}

// New builds the workload for a cluster of nodes nodes. resolve is unused
// (the farm reads no file) and kept for the uniform constructor shape.
func New(p Params, nodes int, resolve func(string) string) (*Workload, error) {
	_ = resolve
	switch {
	case p.Width < 1 || p.Height < 1:
		return nil, fmt.Errorf("workload.width and height must be at least 1, got %d×%d", p.Width, p.Height)
	case p.MaxIter < 1 || p.MaxIter > math.MaxUint16:
		return nil, fmt.Errorf("workload.max_iter must be in [1, %d] (counts are 16-bit), got %d", math.MaxUint16, p.MaxIter)
	case p.Tile < 1:
		return nil, fmt.Errorf("workload.tile must be at least 1 pixel, got %d", p.Tile)
	case p.Workers < 0:
		return nil, fmt.Errorf("workload.workers must not be negative (0 = from objects_per_node), got %d", p.Workers)
	case p.ObjectsPerNode < 1:
		return nil, fmt.Errorf("workload.objects_per_node must be at least 1, got %d", p.ObjectsPerNode)
	case !(p.IterOps >= 0) || math.IsInf(p.IterOps, 0):
		return nil, fmt.Errorf("workload.iter_ops must be a finite number ≥ 0, got %g", p.IterOps)
	case p.TaskBytes < 0:
		return nil, fmt.Errorf("workload.task_bytes must not be negative, got %d", p.TaskBytes)
	case !(p.BytesPerPixel >= 0) || math.IsInf(p.BytesPerPixel, 0):
		return nil, fmt.Errorf("workload.bytes_per_pixel must be a finite number ≥ 0, got %g", p.BytesPerPixel)
	case nodes < 1:
		return nil, fmt.Errorf("workload: %d nodes, need at least 1", nodes)
	}
	if err := limits.Grid(maxPixels, "pixels", limits.Dim{Key: "width", N: p.Width}, limits.Dim{Key: "height", N: p.Height}); err != nil {
		return nil, err
	}
	im := DefaultImage(int(p.Width), int(p.Height), int(p.MaxIter))
	if len(p.Window) != 0 {
		if len(p.Window) != 4 {
			return nil, fmt.Errorf("workload.window must be [x0, y0, x1, y1], got %d numbers", len(p.Window))
		}
		im.X0, im.Y0, im.X1, im.Y1 = p.Window[0], p.Window[1], p.Window[2], p.Window[3]
	}
	if err := im.Validate(); err != nil {
		return nil, fmt.Errorf("workload.window: %w", err)
	}
	w := &Workload{p: p, im: im, tiles: im.Tiles(int(p.Tile), int(p.Tile))}
	if p.Workers > 0 {
		// the master is one more object
		if err := limits.AtMost("workers", p.Workers, limits.MaxObjects-1, "workers besides the master"); err != nil {
			return nil, err
		}
		w.n = int(p.Workers) + 1
	} else {
		n, err := limits.Objects("objects_per_node", "cluster.nodes × objects_per_node", int64(nodes), p.ObjectsPerNode)
		if err != nil {
			return nil, err
		}
		w.n = max(2, n)
	}
	ref := im.ComputeAll()
	w.refDigest = Digest(im.W, im.H, ref)
	w.refTotal = TotalIterations(ref)
	return w, nil
}

// Image returns the image the farm computes.
func (w *Workload) Image() Image { return w.im }

// NumTiles is the number of tiles, the tasks of the farm.
func (w *Workload) NumTiles() int { return len(w.tiles) }

// Master is the master's object.
func (w *Workload) Master() sim.ObjID { return 0 }

// NumObjects implements sim.Workload: the master and the workers.
func (w *Workload) NumObjects() int { return w.n }

// TotalProgress implements sim.Workload: one unit per tile, counted by the
// master when the tile's result arrives.
func (w *Workload) TotalProgress() int64 { return int64(len(w.tiles)) }

// NewObject implements sim.Workload: the master (empty image) or a worker.
func (w *Workload) NewObject(id sim.ObjID) sim.Object {
	if id == w.Master() {
		m := &master{w: w, owner: make([]int32, len(w.tiles)), holds: make([]int32, w.n),
			done: make([]bool, len(w.tiles)), counts: make([]uint16, w.im.W*w.im.H)}
		for i := range m.owner {
			m.owner[i] = free
		}
		return m
	}
	return &worker{w: w}
}

// AnswerObjects implements sim.AnswerHolder: the answer is the master's
// image, whatever became of the workers once they had sent their tiles.
func (w *Workload) AnswerObjects() []sim.ObjID { return []sim.ObjID{w.Master()} }

// Check implements sim.Workload: the image the master assembled must equal
// the sequential reference. The workers are not read (nil if lost).
func (w *Workload) Check(objs []sim.Object) sim.Outcome {
	m, ok := objs[w.Master()].(*master)
	if !ok {
		return sim.Outcome{Detail: fmt.Sprintf("object 0 is a %T, not the farm's master", objs[w.Master()])}
	}
	if m.finished != len(w.tiles) {
		return sim.Outcome{Detail: fmt.Sprintf("the master has %d of %d tiles", m.finished, len(w.tiles))}
	}
	d := Digest(w.im.W, w.im.H, m.counts)
	total := TotalIterations(m.counts)
	out := sim.Outcome{Digest: d, Answer: fmt.Sprint(total), OK: d == w.refDigest && total == w.refTotal}
	if !out.OK {
		out.Detail = fmt.Sprintf("digest %s total %d, reference %s total %d", d, total, w.refDigest, w.refTotal)
	}
	return out
}

// Message tags.
const (
	tagTask   int32 = 1 // master → worker: a tile to compute
	tagResult int32 = 2 // worker → master: a tile's counts
)

// TaskMessage describes the message the master sends to hand out tile task:
// its tag, modeled size and payload (the tile number, 4 bytes little-endian).
// A protocol that resubmits a task (MPI/FT Model-Ia) sends it to a worker
// itself, from any node: workers accept tasks from anyone and answer the
// master.
func (w *Workload) TaskMessage(task int) (tag int32, size int64, payload []byte) {
	return tagTask, w.p.TaskBytes, binary.LittleEndian.AppendUint32(nil, uint32(task))
}

// TaskFarm is what a task-resubmitting protocol needs from a farm workload
// (Runtime.Workload() implements it when the workload is a farm).
type TaskFarm interface {
	Master() sim.ObjID
	TaskMessage(task int) (tag int32, size int64, payload []byte)
}

// Resubmitter is implemented by the farm master: the tasks it has handed to worker
// and not yet received back, so that a protocol can hand them to another worker.
// Both are called from outside a handler (a protocol reacting to a failure);
// Reassign only changes the master's records, the protocol then sends
// TaskMessage(task) to the new worker itself.
type Resubmitter interface {
	// Outstanding lists, in increasing order, the tasks the master believes
	// worker holds.
	Outstanding(worker sim.ObjID) []int
	// Reassign records that task, held by from, is now held by to. It does
	// nothing unless from holds task (not yet done) and to is a worker.
	Reassign(task int, from, to sim.ObjID)
}

// free marks a tile no worker holds: not handed out yet, or done.
const free = -1

// master hands out tiles and assembles the image.
type master struct {
	w        *Workload
	next     int      // first tile never handed out
	owner    []int32  // per tile: the worker holding it, or free
	done     []bool   // per tile: its counts are in counts
	counts   []uint16 // the whole image, valid on done tiles
	finished int      // tiles done (derived from done)
	donePix  int64    // pixels done (derived from done)
	holds    []int32  // per object: tiles it holds (derived from owner), so that a result costs no scan
}

var _ Resubmitter = (*master)(nil)

// Start hands one tile to each worker.
func (m *master) Start(c *sim.Ctx) {
	for wk := 1; wk < m.w.n && m.next < len(m.w.tiles); wk++ {
		m.handOut(c, sim.ObjID(wk))
	}
}

func (m *master) handOut(c *sim.Ctx, wk sim.ObjID) {
	// a master restored from a checkpoint may already hold results for tiles
	// past its next one (computed before the failure): skip them
	for m.next < len(m.w.tiles) && m.done[m.next] {
		m.next++
	}
	if m.next == len(m.w.tiles) {
		return
	}
	t := m.next
	m.next++
	m.owner[t] = int32(wk)
	m.holds[wk]++
	tag, size, payload := m.w.TaskMessage(t)
	c.Send(wk, tag, size, payload)
}

// Handle records a result and gives its worker a new tile if the worker holds
// none. A result for a tile already done (a task a protocol resubmitted, or
// a result delivered twice) adds nothing; the worker still gets a new tile if
// it is idle. Malformed results are dropped: the run then ends without the
// tile and Check says so.
func (m *master) Handle(c *sim.Ctx, msg *sim.Message) {
	if msg.Tag != tagResult || len(msg.Payload) < 4 {
		return
	}
	t := int(binary.LittleEndian.Uint32(msg.Payload))
	if t >= len(m.w.tiles) {
		return
	}
	tile := m.w.tiles[t]
	body := msg.Payload[4:]
	if len(body) != 2*tile.W*tile.H {
		return
	}
	if !m.done[t] {
		im := m.w.im
		for y := range tile.H {
			row := m.counts[(tile.Y+y)*im.W+tile.X:][:tile.W]
			for x := range row {
				row[x] = binary.LittleEndian.Uint16(body[2*(y*tile.W+x):])
			}
		}
		m.done[t] = true
		m.finished++
		m.donePix += int64(tile.W * tile.H)
		if o := m.owner[t]; o != free {
			m.holds[o]--
			m.owner[t] = free
		}
	}
	if wk := msg.Src; wk > 0 && int(wk) < m.w.n && m.holds[wk] == 0 && m.next < len(m.w.tiles) {
		m.handOut(c, wk)
	}
}

// Outstanding implements Resubmitter.
func (m *master) Outstanding(worker sim.ObjID) []int {
	var out []int
	if worker <= 0 || int(worker) >= m.w.n || m.holds[worker] == 0 {
		return nil
	}
	for t, o := range m.owner {
		if o == int32(worker) {
			out = append(out, t)
		}
	}
	return out
}

// Reassign implements Resubmitter.
func (m *master) Reassign(task int, from, to sim.ObjID) {
	if task < 0 || task >= len(m.owner) || from <= 0 || int(from) >= m.w.n || to <= 0 || int(to) >= m.w.n ||
		m.owner[task] != int32(from) {
		return
	}
	m.owner[task] = int32(to)
	m.holds[from]--
	m.holds[to]++
}

// Progress implements sim.Object: the tiles done.
func (m *master) Progress() int64 { return int64(m.finished) }

// ModeledSize implements sim.Object: the pixels done and 8 bytes of
// bookkeeping per tile.
func (m *master) ModeledSize() int64 {
	return int64(math.Ceil(float64(m.donePix)*m.w.p.BytesPerPixel)) + 8*int64(len(m.w.tiles))
}

// MarshalBinary encodes the next tile to hand out, the holder of every tile
// (zig-zag varints, free = −1), a bitmap of the tiles done and the counts of
// the done tiles in tile order.
func (m *master) MarshalBinary() ([]byte, error) {
	nt := len(m.w.tiles)
	out := make([]byte, 0, 10+2*nt+(nt+7)/8+2*int(m.donePix))
	out = binary.AppendUvarint(out, uint64(m.next))
	for _, o := range m.owner {
		out = binary.AppendVarint(out, int64(o))
	}
	bits := make([]byte, (nt+7)/8)
	for t := range nt {
		if m.done[t] {
			bits[t/8] |= 1 << (t % 8)
		}
	}
	out = append(out, bits...)
	im := m.w.im
	for t, tile := range m.w.tiles {
		if !m.done[t] {
			continue
		}
		for y := range tile.H {
			for _, v := range m.counts[(tile.Y+y)*im.W+tile.X:][:tile.W] {
				out = binary.LittleEndian.AppendUint16(out, v)
			}
		}
	}
	return out, nil
}

// UnmarshalBinary restores what MarshalBinary encoded into a master fresh
// from NewObject, rejecting anything inconsistent with this farm.
func (m *master) UnmarshalBinary(data []byte) error {
	bad := func(what string) error { return fmt.Errorf("farm: master: corrupt state: %s", what) }
	nt := len(m.w.tiles)
	next, k := binary.Uvarint(data)
	if k <= 0 || next > uint64(nt) {
		return bad("next tile")
	}
	data = data[k:]
	owner := make([]int32, nt)
	holds := make([]int32, m.w.n)
	for t := range owner {
		o, k := binary.Varint(data)
		if k <= 0 || o < free || o == 0 || o >= int64(m.w.n) || (o != free && uint64(t) >= next) {
			return bad("tile holder")
		}
		data = data[k:]
		owner[t] = int32(o)
		if o != free {
			holds[o]++
		}
	}
	nb := (nt + 7) / 8
	if len(data) < nb {
		return bad("done tiles")
	}
	bits := data[:nb]
	data = data[nb:]
	done := make([]bool, nt)
	counts := make([]uint16, len(m.counts))
	finished, pix := 0, int64(0)
	im := m.w.im
	for t, tile := range m.w.tiles {
		if bits[t/8]&(1<<(t%8)) == 0 {
			continue
		}
		// a done tile may lie past next: a master restored from a checkpoint
		// gets the results of tiles its lost incarnation handed out later
		// (handOut skips them)
		if owner[t] != free {
			return bad("a done tile is held")
		}
		if len(data) < 2*tile.W*tile.H {
			return bad("counts")
		}
		for y := range tile.H {
			row := counts[(tile.Y+y)*im.W+tile.X:][:tile.W]
			for x := range row {
				row[x] = binary.LittleEndian.Uint16(data)
				data = data[2:]
			}
		}
		done[t] = true
		finished++
		pix += int64(tile.W * tile.H)
	}
	if nt%8 != 0 && bits[nb-1]>>(nt%8) != 0 {
		return bad("done bits past the last tile")
	}
	if len(data) != 0 {
		return bad("trailing bytes")
	}
	m.next, m.owner, m.holds, m.done, m.counts, m.finished, m.donePix = int(next), owner, holds, done, counts, finished, pix
	return nil
}

// worker computes the tiles it is sent. It is stateless: everything it
// knows arrives in the task, so a lost worker loses only its current task.
type worker struct {
	w       *Workload
	scratch []uint16 // reused between tasks, not state
}

// Start does nothing: a worker waits for tasks.
func (wk *worker) Start(*sim.Ctx) {}

// Handle computes the tile of a task, whoever sent it, charges its
// iterations and returns the counts to the master: tile number (4 bytes)
// then counts (2 bytes each, little-endian, row-major in the tile).
// The result's modeled size is the tile's pixels × bytes_per_pixel.
func (wk *worker) Handle(c *sim.Ctx, m *sim.Message) {
	if m.Tag != tagTask || len(m.Payload) != 4 {
		return
	}
	t := int(binary.LittleEndian.Uint32(m.Payload))
	w := wk.w
	if t >= len(w.tiles) {
		return
	}
	tile := w.tiles[t]
	px := tile.W * tile.H
	if cap(wk.scratch) < px {
		wk.scratch = make([]uint16, px)
	}
	counts := wk.scratch[:px]
	w.im.ComputeInto(counts, tile)
	c.Compute(float64(TotalIterations(counts)) * w.p.IterOps)
	out := make([]byte, 4, 4+2*px)
	binary.LittleEndian.PutUint32(out, uint32(t))
	for _, v := range counts {
		out = binary.LittleEndian.AppendUint16(out, v)
	}
	c.Send(w.Master(), tagResult, int64(math.Ceil(float64(px)*w.p.BytesPerPixel)), out)
}

// Progress implements sim.Object: workers report no progress of their own;
// the master counts the tiles.
func (wk *worker) Progress() int64 { return 0 }

// ModeledSize implements sim.Object: a worker has no state.
func (wk *worker) ModeledSize() int64 { return 0 }

// MarshalBinary implements encoding.BinaryMarshaler: the empty state.
func (wk *worker) MarshalBinary() ([]byte, error) { return []byte{}, nil }

// UnmarshalBinary implements encoding.BinaryUnmarshaler: only the empty
// state is a worker's.
func (wk *worker) UnmarshalBinary(data []byte) error {
	if len(data) != 0 {
		return fmt.Errorf("farm: worker: corrupt state: %d bytes, a worker has none", len(data))
	}
	return nil
}
