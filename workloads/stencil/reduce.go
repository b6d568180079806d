package stencil

// The global sum of Params.Reduce. Every iterate's interior sum is reduced
// over a binary tree of the blocks (block i's children are 2i+1 and 2i+2)
// to block 0, which sends the total back down the tree; a block sweeps
// from an iterate once it holds that iterate's total. Each block adds its
// own sum first, then its children's partial sums in index order, so the
// total is one float64, which the reference computes the same way
// (referenceSums) and every block digests (block.sums) for Check.

import (
	"encoding/binary"
	"math"

	"ftsim/sim"
)

// reduction is one iteration's share of a block in the global sum: its own
// interior sum, its children's partial sums, and the total.
type reduction struct {
	flags uint8 // redOwn, redKid << k, redSent, redTotal
	own   float64
	kids  [2]float64
	total float64
}

const (
	redOwn   uint8 = 1 << iota // own is the block's sum of the iterate
	redKid                     // kids[0] came (redKid << 1: kids[1])
	_                          // redKid << 1
	redSent                    // the partial sum went up (or, at the root, down as the total)
	redTotal                   // total came down (or, at the root, was summed)
	redAll   = redOwn | redKid | redKid<<1 | redSent | redTotal
)

func (r *reduction) has(f uint8) bool { return r.flags&f == f }

// Kinds of reduction message, the first byte of the payload.
const (
	reduceUp   = 0 // a child's partial sum
	reduceDown = 1 // the total, from the parent
)

// reduceBytes is the modeled size of a reduction message: one float64.
const reduceBytes = 8

// children returns the bits redKid << k of the tree children block id has.
func (w *Workload) children(id sim.ObjID) uint8 {
	var f uint8
	for k := range 2 {
		if int(2*id)+1+k < w.NumObjects() {
			f |= redKid << k
		}
	}
	return f
}

// contribute adds the block's current iterate to its global sum.
func (b *block) contribute(c *sim.Ctx) {
	if !b.w.p.Reduce {
		return
	}
	p := b.pendingFor(b.iter)
	p.red.own = b.localSum()
	p.red.flags |= redOwn
	b.pushUp(c, p)
}

// localSum is the sum of the block's interior, x fastest.
func (b *block) localSum() float64 {
	s := 0.0
	for k := 1; k <= b.cz; k++ {
		for j := 1; j <= b.cy; j++ {
			at := (k*b.ly+j)*b.lx + 1
			for _, v := range b.u[at : at+b.cx] {
				s += v
			}
		}
	}
	return s
}

// pushUp sends p's partial sum to the parent once the block's own sum and
// its children's are there; at the root, the partial sum is the total.
func (b *block) pushUp(c *sim.Ctx, p *pending) {
	r := &p.red
	if !r.has(redOwn|b.w.children(b.id)) || r.has(redSent) {
		return
	}
	r.flags |= redSent
	v := r.own
	for k := range 2 {
		if r.has(redKid << k) {
			v += r.kids[k]
		}
	}
	if b.id == 0 {
		b.setTotal(c, p, v)
		return
	}
	c.Send((b.id-1)/2, tag(p.iter, dirReduce), reduceBytes, reducePayload(reduceUp, v))
	if r.has(redTotal) {
		b.sendDown(c, p) // it came first (see setTotal)
	}
}

// setTotal records iteration p's total and, once the block's partial sum
// has gone up, sends it down to the children. Alone, a block always sends
// its partial sum before the total exists; but the total can come first
// where the tree runs twice (process replication: the twin's partial sum
// completed it). Sending it on only after the block's own partial sum, as
// sweeping from the iterate only then (advance), keeps the block's messages
// on every edge in one order whatever arrives first, so that both replicas
// of a block send the same k-th message on each edge.
func (b *block) setTotal(c *sim.Ctx, p *pending, v float64) {
	p.red.total = v
	p.red.flags |= redTotal
	if p.red.has(redSent) {
		b.sendDown(c, p)
	}
}

// sendDown sends iteration p's total down to the children.
func (b *block) sendDown(c *sim.Ctx, p *pending) {
	v := p.red.total
	for k := range 2 {
		if b.w.children(b.id)&(redKid<<k) != 0 {
			c.Send(2*b.id+1+sim.ObjID(k), tag(p.iter, dirReduce), reduceBytes, reducePayload(reduceDown, v))
		}
	}
}

// reduceMsg files a reduction message for iteration it (not swept from
// yet): a child's partial sum, or the total from the parent. Duplicates
// (a protocol's re-sends) and messages from blocks that are neither are
// dropped.
func (b *block) reduceMsg(c *sim.Ctx, m *sim.Message, it int64) {
	if len(m.Payload) != 9 {
		return
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(m.Payload[1:]))
	switch m.Payload[0] {
	case reduceUp:
		k := int(m.Src) - int(2*b.id) - 1
		if k < 0 || k > 1 || b.w.children(b.id)&(redKid<<k) == 0 {
			return
		}
		p := b.pendingFor(it)
		if p.red.has(redKid << k) {
			return
		}
		p.red.kids[k] = v
		p.red.flags |= redKid << k
		b.pushUp(c, p)
	case reduceDown:
		if b.id == 0 || m.Src != (b.id-1)/2 {
			return
		}
		if p := b.pendingFor(it); !p.red.has(redTotal) {
			b.setTotal(c, p, v)
		}
	}
}

// appendTo encodes r: its flags, then the values they say are there.
func (r *reduction) appendTo(out []byte) []byte {
	out = append(out, r.flags)
	for _, f := range r.fields() {
		if r.has(f.flag) {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(*f.v))
		}
	}
	return out
}

// read decodes what appendTo encoded from data, for a block whose children
// are kids, and returns the rest of data; ok is false if it does not fit.
func (r *reduction) read(data []byte, kids uint8) (rest []byte, ok bool) {
	if len(data) < 1 {
		return nil, false
	}
	r.flags, data = data[0], data[1:]
	if r.flags&^redAll != 0 || r.flags&(redKid|redKid<<1)&^kids != 0 || (r.has(redSent) && !r.has(redOwn|kids)) {
		return nil, false
	}
	for _, f := range r.fields() {
		if !r.has(f.flag) {
			continue
		}
		if len(data) < 8 {
			return nil, false
		}
		*f.v, data = math.Float64frombits(binary.LittleEndian.Uint64(data)), data[8:]
	}
	return data, true
}

// redField is a value of a reduction and the flag that says it is there.
type redField struct {
	flag uint8
	v    *float64
}

// fields lists r's values in encoding order (an array: a snapshot of every
// block encodes its shares, and a slice would be an allocation each).
func (r *reduction) fields() [4]redField {
	return [4]redField{{redOwn, &r.own}, {redKid, &r.kids[0]}, {redKid << 1, &r.kids[1]}, {redTotal, &r.total}}
}

// reducePayload is a reduction message's payload: its kind, then the value.
func reducePayload(kind byte, v float64) []byte {
	b := make([]byte, 9) // one allocation: appending to []byte{kind} made two
	b[0] = kind
	binary.LittleEndian.PutUint64(b[1:], math.Float64bits(v))
	return b
}

// mixSum adds a global sum to a digest of them (FNV-1a over its bits).
func mixSum(h uint64, v float64) uint64 {
	if h == 0 {
		h = 14695981039346656037
	}
	x := math.Float64bits(v)
	for range 8 {
		h ^= x & 0xff
		h *= 1099511628211
		x >>= 8
	}
	return h
}

// referenceSums runs the reference grid g through the iterations, and
// returns the digest of the global sums of the iterates swept from (0 to
// Iterations−1), each summed over the blocks as the tree sums them.
func (w *Workload) referenceSums(g *Grid3) uint64 {
	n := w.NumObjects()
	partial := make([]float64, n)
	var h uint64
	for range w.p.Iterations {
		for i := n - 1; i >= 0; i-- { // children before parents
			x0, cx := span(i%w.bx, w.bx, int(w.p.NX))
			y0, cy := span(i/w.bx%w.by, w.by, int(w.p.NY))
			z0, cz := span(i/(w.bx*w.by), w.bz, int(w.p.NZ))
			s := 0.0
			for k := 1; k <= cz; k++ {
				for j := 1; j <= cy; j++ {
					at := g.Index(x0+1, y0+j, z0+k)
					for _, v := range g.U[at : at+cx] {
						s += v
					}
				}
			}
			for k := range 2 {
				if c := 2*i + 1 + k; c < n {
					s += partial[c]
				}
			}
			partial[i] = s
		}
		h = mixSum(h, partial[0])
		g.Sweep()
	}
	return h
}
