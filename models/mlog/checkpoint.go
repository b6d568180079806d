package mlog

// This file holds the buddy checkpoint of section 3.2 and the garbage
// collection of the message logs it allows.

import (
	"fmt"
	"maps"
	"slices"

	"ftsim/sim"
)

// objCkpt is one object's checkpoint: its state, its protocol tables and the
// logged messages it sent to objects on its own node (all of its log with
// FullLog), held in the memory of the buddy (holder, inc).
type objCkpt struct {
	initial     bool // the initial state: re-created, not restored (always available)
	id          sim.ObjID
	gen         uint32
	node        sim.NodeID // where it was taken
	holder      sim.NodeID
	inc         uint32
	state       []byte
	size        int64
	tnProcessed uint64
	sn          map[sim.ObjID]uint64
	done        map[sim.ObjID]*snSet
	log         []*entry           // copies, sorted by receiver then SN
	included    map[sim.ObjID]bool // receivers whose log entries are all in log
	senders     map[sim.ObjID]bool // senders processed since the previous checkpoint
}

// valid reports whether the copy still exists.
func (p *Protocol) valid(ck *objCkpt) bool {
	return ck.initial || (p.RT.Alive(ck.holder) && p.RT.Incarnation(ck.holder) == ck.inc)
}

// objectsOn lists the objects whose state lives on node n, by id.
func (p *Protocol) objectsOn(n sim.NodeID) []*object {
	var out []*object
	for _, id := range p.RT.ObjectsOn(n) {
		if o := p.objs[id]; o.node == n && !p.RT.Lost(id) {
			out = append(out, o)
		}
	}
	return out
}

// checkpoint packs every object of node n (between handlers) and sends the
// package to n's buddy. Other nodes do not stop.
func (p *Protocol) checkpoint(n sim.NodeID) {
	rt := p.RT
	if p.fallen || p.ckBusy[n] || !rt.Alive(n) {
		return
	}
	if b := p.buddy(n); b == sim.None || !rt.Alive(b) {
		return
	}
	objs := p.objectsOn(n)
	if len(objs) == 0 {
		return
	}
	for _, o := range objs {
		if o.gated {
			return // restarting objects checkpoint once their resends are in
		}
	}
	p.ckBusy[n] = true
	inc := rt.Incarnation(n)
	left := len(objs)
	for _, o := range objs {
		p.hold(o.id)
	}
	for _, o := range objs {
		rt.WhenObjectIdle(o.id, func() {
			left--
			if left == 0 { // possibly inside a handler's completion: pack from a fresh event
				rt.At(rt.Now(), func() { p.pack(n, inc, objs) })
			}
		})
	}
}

// pack snapshots the paused objects, resumes them and ships the checkpoint.
func (p *Protocol) pack(n sim.NodeID, inc uint32, objs []*object) {
	rt := p.RT
	if !rt.Alive(n) || rt.Incarnation(n) != inc {
		return
	}
	resume := func() {
		for _, o := range objs {
			p.unhold(o.id)
		}
	}
	b := p.buddy(n)
	ok := !p.fallen && b != sim.None && rt.Alive(b)
	for _, o := range objs {
		ok = ok && !rt.Lost(o.id) && o.node == n && !o.gated && !rt.Running(o.id)
	}
	if !ok {
		delete(p.ckBusy, n)
		resume()
		return
	}
	cks := make([]*objCkpt, 0, len(objs))
	var size int64
	for _, o := range objs {
		ck, err := p.snapshot(o, n)
		if err != nil {
			rt.Abort(fmt.Sprintf("mlog checkpoint: %v", err))
			return
		}
		cks = append(cks, ck)
		size += ck.size
	}
	resume()
	rt.Stats().CheckpointBytes += size
	rt.Transfer(n, b, size, tagCheckpoint, func(ok bool) {
		if !ok {
			delete(p.ckBusy, n)
			p.unsnap(cks)
			return
		}
		// the buddy keeps the new copy and frees the old one
		binc := rt.Incarnation(b)
		for _, ck := range cks {
			o := p.objs[ck.id]
			if o.gen != ck.gen {
				continue
			}
			if old := o.ckpt; !old.initial {
				p.memAdd(old.holder, old.inc, sim.MemCheckpoint, -old.size)
			}
			ck.holder, ck.inc = b, binc
			o.ckpt = ck
			p.memAdd(b, binc, sim.MemCheckpoint, ck.size)
		}
		rt.Stats().Checkpoints++
		p.Stats.Checkpoints++
		rt.Transfer(b, n, p.cfg.TicketBytes, tagAck, func(ok bool) {
			delete(p.ckBusy, n)
			if ok {
				p.event("committed", n, b, sim.None)
				p.committed(n, cks)
			} else {
				p.unsnap(cks)
			}
		})
	})
}

// snapshot takes object o's checkpoint on node n.
func (p *Protocol) snapshot(o *object, n sim.NodeID) (*objCkpt, error) {
	rt := p.RT
	state, _, err := rt.Snapshot(o.id)
	if err != nil {
		return nil, err
	}
	ck := &objCkpt{id: o.id, gen: o.gen, node: n, state: state, tnProcessed: o.tnProcessed,
		sn: maps.Clone(o.sn), done: make(map[sim.ObjID]*snSet, len(o.done)),
		included: map[sim.ObjID]bool{}, senders: o.senders}
	o.senders = map[sim.ObjID]bool{}
	for k, v := range o.done {
		ck.done[k] = v.clone()
	}
	// modeled size: the object, its tables (an SN or a TN each) and the logged messages kept
	ck.size = rt.ModeledSize(o.id) + p.cfg.HeaderBytes*int64(len(o.sn)+len(o.done)+2)
	dsts := slices.Sorted(maps.Keys(o.log))
	for _, d := range dsts {
		if !p.cfg.FullLog && p.objs[d].node != n {
			continue
		}
		ck.included[d] = true
		// a message the receiver on this node has processed is covered by
		// the receiver's checkpoint taken at the same instant: after a
		// restore it never asks for it again (its done set has it), so the
		// copy would only inflate the checkpoint (garbage collection drops it
		// from the live log once the checkpoint commits)
		local := p.objs[d].node == n && !rt.Lost(d)
		for _, e := range o.log[d] {
			if local && p.objs[d].done[o.id].has(e.sn) {
				continue
			}
			c := *e
			c.asking = false
			ck.log = append(ck.log, &c)
			ck.size += e.m.WireSize()
		}
	}
	return ck, nil
}

// unsnap gives back the senders recorded by an aborted checkpoint.
func (p *Protocol) unsnap(cks []*objCkpt) {
	for _, ck := range cks {
		o := p.objs[ck.id]
		if o.gen == ck.gen {
			maps.Copy(o.senders, ck.senders)
		}
	}
}

// committed runs on node n when its buddy acknowledged the checkpoint: every
// object records TNCheckpointed, drops its TNTable entries up to it, and
// garbage-collection messages (lazy control messages) prune the senders' logs
// and the buddy's remote message log.
func (p *Protocol) committed(n sim.NodeID, cks []*objCkpt) {
	rt := p.RT
	type gcItem struct {
		src, dst sim.ObjID
		tn       uint64
	}
	byNode := map[sim.NodeID][]gcItem{}
	var rlogGC []gcItem
	for _, ck := range cks {
		o := p.objs[ck.id]
		if o.gen != ck.gen {
			continue
		}
		t := ck.tnProcessed
		o.ckptTN = t
		for tn, k := range o.byTN {
			if tn <= t {
				delete(o.byTN, tn)
				delete(o.tnTable, k)
			}
		}
		for _, src := range slices.Sorted(maps.Keys(ck.senders)) {
			m := p.objs[src].node
			byNode[m] = append(byNode[m], gcItem{src, o.id, t})
		}
		rlogGC = append(rlogGC, gcItem{sim.None, o.id, t})
	}
	if p.fallen {
		return
	}
	for _, m := range slices.Sorted(maps.Keys(byNode)) {
		items := byNode[m]
		p.Stats.GCMessages++
		rt.Transfer(n, m, p.cfg.TicketBytes*int64(len(items)), tagGC, func(ok bool) {
			if !ok || p.fallen {
				return
			}
			for _, it := range items {
				s := p.objs[it.src]
				if s.node != m || rt.Lost(s.id) {
					continue
				}
				for _, e := range slices.Clone(s.log[it.dst]) {
					if e.tn > 0 && e.tn <= it.tn {
						p.prune(s, e)
					}
				}
			}
		})
	}
	if b := p.buddy(n); b != sim.None && len(rlogGC) > 0 {
		p.Stats.GCMessages++
		rt.Transfer(n, b, p.cfg.TicketBytes*int64(len(rlogGC)), tagGC, func(ok bool) {
			if !ok || p.fallen {
				return
			}
			for _, it := range rlogGC {
				p.pruneRlog(p.objs[it.dst], it.tn)
			}
		})
	}
}

// pruneRlog drops the remote-log tuples of messages to o up to TN t.
func (p *Protocol) pruneRlog(o *object, t uint64) {
	keep := o.rlog[:0]
	for _, x := range o.rlog {
		if x.tn <= t {
			p.memAdd(x.holder, x.inc, sim.MemLog, -p.cfg.TicketBytes)
			continue
		}
		keep = append(keep, x)
	}
	clear(o.rlog[len(keep):])
	o.rlog = keep
}
