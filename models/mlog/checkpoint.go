package mlog

// This file holds the buddy checkpoint of section 3.2 and the garbage
// collection of the message logs it allows.

import (
	"cmp"
	"fmt"
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
	unstarted   bool // taken before the object's Start ran: the restore runs it
	state       []byte
	size        int64
	tnProcessed uint64
	sn          []snCount    // the last SN sent to each receiver (any order)
	done        []doneSet    // the SNs processed from each sender, sorted by sender
	log         []entry      // copies, sorted by receiver then SN
	included    []sim.ObjID  // receivers whose log entries are all in log, sorted
	senders     []sim.ObjID  // senders processed since the previous checkpoint (any order)
	cut         *sim.CutTask // what a cut left of its handler (Config.Substep; nil: none)
}

// snCount is a checkpointed entry of an object's sn table. A checkpoint keeps
// its tables as slices, one allocation each, rather than as maps: they are
// written once per checkpoint and only read at a restart.
type snCount struct {
	dst sim.ObjID
	sn  uint64
}

// doneSet is a checkpointed entry of an object's done table.
type doneSet struct {
	src sim.ObjID
	set snSet
}

// doneOf returns the SNs from src the checkpoint had processed (nil: none).
func (ck *objCkpt) doneOf(src sim.ObjID) *snSet {
	i, ok := slices.BinarySearchFunc(ck.done, src, func(d doneSet, src sim.ObjID) int { return cmp.Compare(d.src, src) })
	if !ok {
		return nil
	}
	return &ck.done[i].set
}

// logTo returns the checkpoint's log entries to dst, in SN order (the log
// is sorted by receiver, then SN).
func (ck *objCkpt) logTo(dst sim.ObjID) []entry {
	i, _ := slices.BinarySearchFunc(ck.log, dst, func(e entry, dst sim.ObjID) int { return cmp.Compare(e.dst, dst) })
	j := i
	for j < len(ck.log) && ck.log[j].dst == dst {
		j++
	}
	return ck.log[i:j]
}

// includes reports whether every log entry to dst is in the checkpoint.
func (ck *objCkpt) includes(dst sim.ObjID) bool {
	_, ok := slices.BinarySearch(ck.included, dst)
	return ok
}

// valid reports whether the copy still exists.
func (p *Protocol) valid(ck *objCkpt) bool {
	return ck.initial || p.RT.Holds(ck.holder, ck.inc)
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
	r := &ckptRun{p: p, n: n, inc: rt.Incarnation(n), life: p.life, objs: objs, left: len(objs)}
	for _, o := range objs {
		p.hold(o.id)
	}
	idle := r.idle // one func for all the objects: it does not depend on which
	for _, o := range objs {
		rt.CutObject(o.id) // with Substep: at the end of its handler's current step
		rt.WhenObjectIdle(o.id, idle)
	}
}

var _ sim.CutReturner = (*Protocol)(nil)

// CutStep implements sim.Cutter: checkpoints cut handlers at Substep.
func (p *Protocol) CutStep() sim.Time { return p.cfg.Substep }

// ReturnCut implements sim.CutReturner: the messages object id's cut
// handler logged but has not sent yet leave its log, and their SNs its SN
// counts, so that the rest of the handler logs them again, with the same
// SNs, when it sends them; a checkpoint taken meanwhile has them in its cut
// instead of its log. A handler re-executing sends its receivers had
// ticketed before (a restart's) keeps them logged, to leave at their time.
func (p *Protocol) ReturnCut(id sim.ObjID) []*sim.Message {
	s := p.objs[id]
	now := p.RT.Now()
	p.Stats.Cuts++
	es := s.unsent
	s.unsent = s.unsent[:0]
	var back []*entry
	for _, e := range es {
		if e.m.SentAt <= now || !p.live(s, e) {
			continue
		}
		if e.tn != 0 || e.old || e.asking || e.given {
			return nil
		}
		back = append(back, e)
	}
	// each is the last entry of its log (a log is in SN order, and the
	// handler sent them last): undo them from the last one sent
	for i := len(back) - 1; i >= 0; i-- {
		e := back[i]
		sn := s.sn.Ptr(e.dst)
		if *sn != e.sn {
			p.RT.Abort(fmt.Sprintf("mlog: object %d's cut gives back SN %d to %d, but its last SN there is %d", id, e.sn, e.dst, *sn))
			return nil
		}
		*sn--
		p.prune(s, e) // its first-send timer finds it done
	}
	p.Stats.Returned += int64(len(back))
	msgs := make([]*sim.Message, len(back))
	for i, e := range back {
		msgs[i] = e.m
	}
	return msgs
}

// ckptRun is one checkpoint of a node, from pausing its objects to the
// buddy's acknowledgement: what the steps share, in one record, which
// TransferTo also reports the checkpoint's arrival and the acknowledgement to
// (instead of a closure for each step and allocations for what they capture).
type ckptRun struct {
	p      *Protocol
	n      sim.NodeID
	inc    uint32     // n's incarnation when the checkpoint began
	life   int64      // p.life then: a restart from scratch voids the run (and its holds)
	b      sim.NodeID // the buddy the package goes to
	objs   []*object
	left   int // objects still running a handler
	cks    []*objCkpt
	one    [1]*objCkpt // cks of a node with one object
	size   int64       // the package's bytes
	paused sim.Time    // when the objects' state began to be copied
}

// idle: one more object is between handlers.
func (r *ckptRun) idle() {
	r.left--
	if r.left == 0 { // possibly inside a handler's completion: pack from a fresh event
		r.p.RT.At(r.p.RT.Now(), r.pack)
	}
}

// pack snapshots the paused objects and copies the package into a buffer in
// the node's memory (Charm++ packs the objects into a checkpoint message):
// the objects stay paused until the copy is done, a write at
// storage.memory_bandwidth queued behind the node's other memory writes, as
// cpr's checkpoint to memory is. That pause is the checkpoint's duration d of
// Chakravorty & Kalé's t_ml = αt0(1 + d/c), reported as CheckpointTime.
func (r *ckptRun) pack() {
	p, n, objs := r.p, r.n, r.objs
	rt := p.RT
	if !rt.Holds(n, r.inc) || r.life != p.life {
		return
	}
	b := p.buddy(n)
	ok := !p.fallen && b != sim.None && rt.Alive(b)
	for _, o := range objs {
		ok = ok && !rt.Lost(o.id) && o.node == n && !o.gated && !rt.Running(o.id)
	}
	if !ok {
		delete(p.ckBusy, n)
		r.resume()
		return
	}
	cks := r.one[:0]
	if len(objs) > len(r.one) {
		cks = make([]*objCkpt, 0, len(objs))
	}
	var size int64
	for _, o := range objs {
		ck, err := p.snapshot(o, n, objs)
		if err != nil {
			rt.Abort(fmt.Sprintf("mlog checkpoint: %v", err))
			return
		}
		cks = append(cks, ck)
		size += ck.size
	}
	r.b, r.cks, r.size, r.paused = b, cks, size, rt.Now()
	rt.Stats().CheckpointBytes += size
	rt.StorageWrite(n, sim.Memory, size, r.copied)
}

func (r *ckptRun) resume() {
	for _, o := range r.objs {
		r.p.unhold(o.id)
	}
}

// copied: the package is in the buffer; the objects resume and it goes to
// the buddy. If the node failed meanwhile, its restart resets the holds.
func (r *ckptRun) copied(ok bool) {
	p := r.p
	rt := p.RT
	if r.life != p.life {
		return
	}
	if !ok {
		p.unsnap(r.cks)
		return
	}
	r.resume()
	rt.Stats().CheckpointTime += rt.Now() - r.paused
	rt.TransferTo(r.n, r.b, r.size, tagCheckpoint, r)
}

// TransferDone: the package reached the buddy (tagCheckpoint), or the
// buddy's acknowledgement reached the node (tagAck).
func (r *ckptRun) TransferDone(tag int32, ok bool) {
	p, n, b, cks := r.p, r.n, r.b, r.cks
	rt := p.RT
	if r.life != p.life {
		return // the node may checkpoint again in the new life: ckBusy is that run's
	}
	if tag == tagAck {
		delete(p.ckBusy, n)
		if ok {
			p.event("committed", n, b, sim.None)
			p.committed(n, cks)
		} else {
			p.unsnap(cks)
		}
		return
	}
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
	rt.TransferTo(b, n, p.cfg.TicketBytes, tagAck, r)
}

// snapshot takes object o's checkpoint on node n, in one package with the
// checkpoints of objects pkg.
func (p *Protocol) snapshot(o *object, n sim.NodeID, pkg []*object) (*objCkpt, error) {
	rt := p.RT
	s, err := rt.Snapshot(o.id)
	if err != nil {
		return nil, err
	}
	ck := &objCkpt{id: o.id, gen: o.gen, node: n, unstarted: !s.Started, state: s.State, tnProcessed: o.tnProcessed,
		sn: make([]snCount, 0, o.sn.Len()), done: make([]doneSet, 0, o.done.Len()), senders: o.senders, cut: s.Cut}
	o.senders = nil
	if len(ck.senders) > 0 { // room for as many senders as in the period ending
		o.senders = make([]sim.ObjID, 0, len(ck.senders))
	}
	o.sendersMark++ // a new set of senders begins (see snSet.mark)
	for i := range o.sn.Len() {
		ck.sn = append(ck.sn, snCount{o.sn.Key(i), *o.sn.At(i)})
	}
	for i := range o.done.Len() {
		ck.done = append(ck.done, doneSet{o.done.Key(i), o.done.At(i).clone()})
	}
	slices.SortFunc(ck.done, func(a, b doneSet) int { return cmp.Compare(a.src, b.src) })
	// modeled size: the object, its tables (an SN or a TN each) and the logged messages kept
	ck.size = rt.ModeledSize(o.id) + p.cfg.HeaderBytes*int64(o.sn.Len()+o.done.Len()+2)
	if s.Cut != nil { // the messages the rest has to send are in no log
		for _, ps := range s.Cut.Sends {
			ck.size += ps.Msg.WireSize()
		}
	}
	dsts := make([]sim.ObjID, 0, o.log.Len())
	entries := 0
	for i := range o.log.Len() {
		d := o.log.Key(i)
		if !p.cfg.FullLog && p.objs[d].node != n {
			continue
		}
		dsts = append(dsts, d)
		entries += len(*o.log.At(i))
	}
	slices.Sort(dsts)
	ck.included = dsts
	if entries > 0 {
		ck.log = make([]entry, 0, entries) // the copies in one allocation
	}
	for _, d := range dsts {
		// a message the receiver on this node has processed is covered by
		// the receiver's checkpoint taken at the same instant: after a
		// restore it never asks for it again (its done set has it), so the
		// copy would only inflate the checkpoint (garbage collection drops it
		// from the live log once the checkpoint commits). Not so for an
		// object that came to the node (a migration, a restart from
		// scratch) after the checkpoint began: it is not in the package
		local := slices.Contains(pkg, p.objs[d]) && !rt.Lost(d)
		var dd *snSet // what d has processed from o
		if local {
			dd = p.objs[d].done.Lookup(o.id)
		}
		for _, e := range o.log.Get(d) {
			if local && dd.has(e.sn) {
				continue
			}
			ck.log = append(ck.log, *e)
			ck.log[len(ck.log)-1].asking = false
			ck.log[len(ck.log)-1].given = true // the live entry may still give m away
			ck.size += e.wire
		}
	}
	return ck, nil
}

// unsnap gives back the senders recorded by an aborted checkpoint.
func (p *Protocol) unsnap(cks []*objCkpt) {
	for _, ck := range cks {
		o := p.objs[ck.id]
		if o.gen == ck.gen {
			for _, src := range ck.senders {
				o.addSender(src, o.done.Ptr(src))
			}
		}
	}
}

// committed runs on node n when its buddy acknowledged the checkpoint: every
// object records TNCheckpointed, drops its TNTable entries up to it, and
// garbage-collection messages (lazy control messages) prune the senders' logs
// and the buddy's remote message log.
func (p *Protocol) committed(n sim.NodeID, cks []*objCkpt) {
	rt := p.RT
	total := 0
	for _, ck := range cks {
		total += len(ck.senders)
	}
	buf := make([]gcItem, 0, total+len(cks)) // both lists in one allocation
	items, rlogGC := buf[:0:total], buf[total:total]
	for _, ck := range cks {
		o := p.objs[ck.id]
		if o.gen != ck.gen {
			continue
		}
		t := ck.tnProcessed
		o.ckptTN = t
		o.forgetTNs(t)
		slices.Sort(ck.senders) // the checkpoint's own slice
		for _, src := range ck.senders {
			items = append(items, gcItem{p.objs[src].node, src, o.id, t})
		}
		rlogGC = append(rlogGC, gcItem{sim.None, sim.None, o.id, t})
	}
	if p.fallen {
		return
	}
	// one message per node, in node order, its items in the order above: a
	// stable sort groups them without a map per checkpoint
	slices.SortStableFunc(items, func(a, b gcItem) int { return cmp.Compare(a.node, b.node) })
	nodes := 0
	for i := range items {
		if i == 0 || items[i].node != items[i-1].node {
			nodes++
		}
	}
	batches := make([]gcBatch, 0, nodes+1) // the records of all the messages in one allocation
	for len(items) > 0 {
		m, j := items[0].node, 1
		for j < len(items) && items[j].node == m {
			j++
		}
		batches = append(batches, gcBatch{p: p, node: m, items: items[:j:j], life: p.life})
		items = items[j:]
		p.Stats.GCMessages++
		rt.TransferTo(n, m, p.cfg.TicketBytes*int64(j), tagGC, &batches[len(batches)-1])
	}
	if b := p.buddy(n); b != sim.None && len(rlogGC) > 0 {
		p.Stats.GCMessages++
		batches = append(batches, gcBatch{p: p, node: b, items: rlogGC, rlog: true, life: p.life})
		rt.TransferTo(n, b, p.cfg.TicketBytes*int64(len(rlogGC)), tagGC, &batches[len(batches)-1])
	}
}

// gcItem tells that object dst has checkpointed up to TN tn: the log entries
// src (on node) holds for it up to tn can go (src None: the remote message
// log of dst).
type gcItem struct {
	node     sim.NodeID
	src, dst sim.ObjID
	tn       uint64
}

// gcBatch is one garbage-collection message of a commit, to node (the
// senders' node, or the buddy holding the remote message log with rlog).
type gcBatch struct {
	p     *Protocol
	node  sim.NodeID
	items []gcItem
	rlog  bool
	life  int64 // p.life when sent: a batch of a life before a restart from scratch is void
}

// TransferDone prunes when the message has arrived.
func (g *gcBatch) TransferDone(_ int32, ok bool) {
	p := g.p
	if !ok || p.fallen || g.life != p.life {
		return // the TNs of a life before a restart from scratch would prune the new life's logs
	}
	if g.rlog {
		for _, it := range g.items {
			p.pruneRlog(p.objs[it.dst], it.tn)
		}
		return
	}
	for _, it := range g.items {
		s := p.objs[it.src]
		if s.node != g.node || p.RT.Lost(s.id) {
			continue
		}
		p.pruneUpTo(s, it.dst, it.tn)
	}
}

// pruneUpTo prunes the entries of s's log to dst with a TN up to t (garbage
// collection after dst's checkpoint): what prune does for each, in one pass
// over the list instead of a copy of it and a search and a shift per entry.
func (p *Protocol) pruneUpTo(s *object, dst sim.ObjID, t uint64) {
	j := s.log.Find(dst)
	if j < 0 {
		return
	}
	lp := s.log.At(j)
	l := *lp
	keep := l[:0]
	for _, e := range l {
		if e.tn > 0 && e.tn <= t && !e.done {
			e.done = true
			sz := e.wire
			s.logBytes -= sz
			p.memAdd(s.node, s.inc, sim.MemLog, -sz)
			continue
		}
		keep = append(keep, e)
	}
	if len(keep) == len(l) {
		return
	}
	clear(l[len(keep):])
	if len(keep) == 0 {
		s.log.Del(dst)
		return
	}
	*lp = keep
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
