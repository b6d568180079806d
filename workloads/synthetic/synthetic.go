// Package synthetic is a workload for validating models: N objects on a ring
// each perform Steps equal steps of work and, when Exchange > 0, swap a message
// of that many bytes with both ring neighbours between steps (a tunable
// communication/computation ratio, like the MPI/FT thesis's "Simul"). The
// messages carry real values folded into a checksum, so a run that loses or
// duplicates a message is caught.
package synthetic

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"

	"ftsim/sim"
	"ftsim/workloads/internal/limits"
)

// Params configure the workload (scenario keys under [workload]).
type Params struct {
	Objects  int64   `toml:"objects"`  // number of objects; 0 = one per node
	Steps    int64   `toml:"steps"`    // steps per object
	StepOps  float64 `toml:"step_ops"` // modeled operations per step
	Exchange int64   `toml:"exchange"` // modeled bytes sent to each neighbour per step; 0 = none
	State    int64   `toml:"state"`    // modeled state size per object in bytes
}

// DefaultParams is 10 steps of 10⁸ operations (0.1 s at 1 Gop/s), no exchange.
func DefaultParams() Params { return Params{Steps: 10, StepOps: 1e8, State: 1 << 20} }

// Workload is the synthetic application.
type Workload struct {
	p Params
	n int
}

// maxSteps keeps step·2 + side, the tag of an exchange message, within an
// int32.
const maxSteps = 1<<30 - 1

// New builds the workload for a cluster of nodes nodes.
func New(p Params, nodes int) (*Workload, error) {
	desc := ""
	if p.Objects == 0 {
		p.Objects, desc = int64(nodes), "one per node, cluster.nodes"
	}
	switch {
	case p.Objects < 1:
		return nil, errors.New("workload.objects must be at least 1")
	case p.Steps < 1:
		return nil, errors.New("workload.steps must be at least 1")
	case p.StepOps < 0:
		return nil, errors.New("workload.step_ops must not be negative")
	}
	n, err := limits.Objects("objects", desc, p.Objects)
	if err != nil {
		return nil, err
	}
	if err := limits.AtMost("steps", p.Steps, maxSteps, "steps for a 32-bit message tag"); err != nil {
		return nil, err
	}
	return &Workload{p: p, n: n}, nil
}

// NumObjects implements sim.Workload.
func (w *Workload) NumObjects() int { return w.n }

// TotalProgress implements sim.Workload: one unit per step per object.
func (w *Workload) TotalProgress() int64 { return int64(w.n) * w.p.Steps }

// NewObject implements sim.Workload.
func (w *Workload) NewObject(id sim.ObjID) sim.Object { return &object{w: w, id: id} }

// value is what object src sends at step s: any deterministic function works.
func value(src sim.ObjID, s int64) uint64 { return uint64(src)*1_000_003 + uint64(s)*7919 + 1 }

// reference computes every object's checksum without the simulator.
func (w *Workload) reference() []uint64 {
	sums := make([]uint64, w.n)
	if w.p.Exchange == 0 {
		return sums
	}
	for id := range sums {
		left := sim.ObjID((id + w.n - 1) % w.n)
		right := sim.ObjID((id + 1) % w.n)
		for s := int64(0); s < w.p.Steps-1; s++ {
			sums[id] = mix(mix(sums[id], value(left, s)), value(right, s))
		}
	}
	return sums
}

func mix(h, v uint64) uint64 { return (h ^ v) * 0x100000001b3 }

// Check implements sim.Workload.
func (w *Workload) Check(objs []sim.Object) sim.Outcome {
	ref := w.reference()
	h := fnv.New64a()
	ok := true
	detail := ""
	for i, o := range objs {
		ob := o.(*object)
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], ob.sum)
		h.Write(b[:])
		if ob.sum != ref[i] || ob.step != w.p.Steps {
			ok = false
			detail = fmt.Sprintf("object %d: step %d checksum %x, want step %d checksum %x", i, ob.step, ob.sum, w.p.Steps, ref[i])
		}
	}
	return sim.Outcome{Digest: fmt.Sprintf("%016x", h.Sum64()), Answer: fmt.Sprint(w.TotalProgress()), OK: ok, Detail: detail}
}

type object struct {
	w    *Workload
	id   sim.ObjID
	step int64  // steps completed
	sum  uint64 // checksum of values received
	// values received for the current step (and at most one step ahead) from left (0) and right (1)
	have [2][2]bool
	val  [2][2]uint64
}

const tagContinue = -1

func (o *object) Start(c *sim.Ctx) { o.work(c) }

// work performs one step and announces it.
func (o *object) work(c *sim.Ctx) {
	c.Compute(o.w.p.StepOps)
	if o.w.p.Exchange == 0 || o.step == o.w.p.Steps-1 {
		o.step++
		if o.step < o.w.p.Steps {
			c.Send(o.id, tagContinue, 0, nil)
		}
		return
	}
	n := o.w.n
	left := sim.ObjID((int(o.id) + n - 1) % n)
	right := sim.ObjID((int(o.id) + 1) % n)
	v := binary.LittleEndian.AppendUint64(nil, value(o.id, o.step))
	// tag: step*2 + side the receiver sees it from (0 = from its left)
	c.Send(right, int32(o.step*2), o.w.p.Exchange, v)
	c.Send(left, int32(o.step*2+1), o.w.p.Exchange, v)
}

func (o *object) Handle(c *sim.Ctx, m *sim.Message) {
	if m.Tag == tagContinue {
		o.work(c)
		return
	}
	s, side := int64(m.Tag/2), m.Tag%2
	if s < o.step {
		return // a duplicate a protocol re-sent: its step is done
	}
	slot := s % 2
	o.have[slot][side] = true
	o.val[slot][side] = binary.LittleEndian.Uint64(m.Payload)
	// a protocol may deliver a neighbour's value of the next step before its
	// value of this one (message logging hands out the order of messages
	// that reach a restarted object again as their tickets come in): the
	// next step may be complete once this one is
	for cur := o.step % 2; o.step < o.w.p.Steps && o.have[cur][0] && o.have[cur][1]; cur = o.step % 2 {
		o.sum = mix(mix(o.sum, o.val[cur][0]), o.val[cur][1])
		o.have[cur] = [2]bool{}
		o.step++
		o.work(c)
	}
}

func (o *object) Progress() int64    { return o.step }
func (o *object) ModeledSize() int64 { return o.w.p.State }

func (o *object) MarshalBinary() ([]byte, error) {
	b := binary.AppendVarint(nil, o.step)
	b = binary.LittleEndian.AppendUint64(b, o.sum)
	for s := 0; s < 2; s++ {
		for d := 0; d < 2; d++ {
			f := byte(0)
			if o.have[s][d] {
				f = 1
			}
			b = append(b, f)
			b = binary.LittleEndian.AppendUint64(b, o.val[s][d])
		}
	}
	return b, nil
}

func (o *object) UnmarshalBinary(b []byte) error {
	step, n := binary.Varint(b)
	if n <= 0 || len(b) < n+8+4*9 {
		return errors.New("synthetic: truncated state")
	}
	o.step = step
	b = b[n:]
	o.sum = binary.LittleEndian.Uint64(b)
	b = b[8:]
	for s := 0; s < 2; s++ {
		for d := 0; d < 2; d++ {
			o.have[s][d] = b[0] == 1
			o.val[s][d] = binary.LittleEndian.Uint64(b[1:])
			b = b[9:]
		}
	}
	return nil
}
