package mlog

// This file holds the restart protocols of sections 3.3 and 3.5: a replacement
// node fetches the failed node's checkpoint and remote message log from the
// buddy, restores the objects (basic: all on the replacement; fast: spread over
// other nodes with the migration protocol of Figure 2), and every node resends
// the logged messages they need, with their TN or after a new ticket. Restored
// objects hand out no new TN before every node has resent, so that the TNs
// handed out before the crash that never reached their requesters are handed
// out again first. With the multiple-failure extension (section 3.4) restarts
// overlap: a failure during a restart's placement joins it (migrate.go), and
// one after it starts a restart of its own while the first still waits for
// its resends (detach).

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"ftsim/sim"
)

// recovery is the restart of one failed node.
type recovery struct {
	failed    sim.NodeID
	objs      []*object  // by id
	node      sim.NodeID // the restarting node C; None while its spare boots
	notBefore sim.Time
	gen       int
	open      int // objects whose gate is still closed
	dead      bool

	// placement (fast restart's migrations) and what survives a crash of the
	// restarting node during it
	placing bool                     // objects are being restored and spread; no resend yet
	attempt int                      // placements begun: a crash of the restarting node starts another
	buddy   sim.NodeID               // D: the buddy of the restarting node, holding the checkpoints
	migs    map[sim.ObjID]*migration // objects sent to other nodes in this attempt
	redo    []*object                // objects to recreate on the new restarting node (attempt > 0)
	ready   int                      // steps the new placement still waits for (queries, fetch)
	placed  bool                     // the restarting node's objects are placed
	hold    int                      // groups of a crashed destination still being restored
	extra   []*object                // objects of those groups, resent to with the others
	down    []sim.NodeID             // crashed destinations whose slot is not filled yet
}

// OnFailure restarts the failed node's objects from their buddy checkpoints.
// With multi_failure a failure during a restart joins it while it places its
// objects (a crash of its restarting node or of a destination, any failure
// while its spare boots) and, once it has placed them, gets a restart of its
// own beside it. Patterns the protocol cannot survive fall back to
// restarting the application from scratch, reported as unrecoverable.
func (p *Protocol) OnFailure(f sim.Failure) {
	rt := p.RT
	if p.Probe != nil {
		p.Probe.failed(f)
	}
	if p.fallen {
		p.scratch.OnFailure(f)
		return
	}
	delete(p.ckBusy, f.Node)
	delete(p.prio, f.Node)
	if f.WasSpare {
		if r := p.booting[f.Node]; r != nil {
			delete(p.booting, f.Node)
			p.replace(r)
		}
		if g, ok := p.bootingGroup[f.Node]; ok {
			delete(p.bootingGroup, f.Node)
			g.again()
		}
		return
	}
	ids := slices.Clone(f.Objects)
	slices.Sort(ids)
	objs := make([]*object, 0, len(ids))
	for _, id := range ids {
		objs = append(objs, p.objs[id])
	}
	w, lostTN, lostK := p.unordered(objs) // before their tables go
	if p.cfg.MultiFailure {
		// detach now, before the objects' gates go with their reset; the
		// gates it releases open once the failure is handled, since their
		// objects may then talk to the failed node's at once
		defer p.openGates(p.detach(f.Node, objs))
	}
	for _, o := range objs {
		o.reset() // the log, the tables and the held messages died with the node
	}
	if len(p.recs) > 0 {
		if !p.cfg.MultiFailure {
			if r := p.recs[0]; len(p.recs) == 1 && p.sourceCrash(r, f, objs) {
				return
			}
			p.fallback(f, fmt.Sprintf("node %d failed while the restart of node %d was in progress (the single-failure protocol needs a failure to come after the previous recovery)",
				f.Node, p.recs[0].failed))
			return
		}
		if r := p.placing(); r != nil {
			if p.sourceCrash(r, f, objs) {
				return
			}
			ok, loss := p.destinationCrash(r, f, objs)
			if ok {
				return
			}
			if loss == "" {
				loss = "the multiple-failure extension survives a failure of the restarting node then, of a destination of its objects, or of any node while its spare boots"
			}
			p.fallback(f, fmt.Sprintf("node %d failed while the restart of node %d placed its objects: %s", f.Node, r.failed, loss))
			return
		}
		// every restart in progress has placed its objects and waits for
		// resends: this one runs beside them
	}
	if !p.cfg.MultiFailure && f.At < p.restarted {
		// detected after a restart it struck: the node resent nothing to
		// the restored objects, which may wait for it forever
		p.fallback(f, fmt.Sprintf("node %d failed at %v, before the previous restart completed at %v, and was detected after it (the single-failure protocol needs a failure to come after the previous recovery)",
			f.Node, f.At, p.restarted))
		return
	}
	if len(objs) == 0 {
		// a node that held nothing leaves the ring: left in the slots, it
		// would return to the spare pool when repaired while still
		// counted as the application's, and a restart from scratch would
		// place objects on it
		rt.RemoveSlot(f.Node)
		p.afterTopology()
		return
	}
	floors, note := p.recoverable(objs)
	if note != "" {
		p.fallback(f, fmt.Sprintf("node %d failed: %s", f.Node, note))
		return
	}
	if h, w := p.replaying(objs); h != nil {
		p.fallback(f, fmt.Sprintf("node %d failed while object %d, restored after an earlier failure, was still re-executing: the TNs object %d had handed out to its messages died with both (the multiple-failure extension, multi_failure, logs them on the receiver's buddy)",
			f.Node, h.id, w.id))
		return
	}
	if w != nil {
		p.fallback(f, fmt.Sprintf("node %d failed: object %d had processed message %d of object %d, TN %d, after its checkpoint, and no surviving log holds that TN (the sender's log died with the receiver's table, or the sender, restored after an earlier failure, had not learned it again): the re-execution cannot follow the order the other objects saw (the multiple-failure extension, multi_failure, logs every TN on the receiver's buddy)",
			f.Node, w.id, lostK.sn, lostK.src, lostTN))
		return
	}
	maps.Copy(p.floors, floors)
	if len(p.recs) > 0 {
		p.Stats.Concurrent++
	}
	p.gen++
	// no restarting node until its spare has booted (replace)
	r := &recovery{failed: f.Node, objs: objs, node: sim.None, gen: p.gen, notBefore: rt.Now() + rt.Config().Downtime, placing: true}
	p.recs = append(p.recs, r)
	p.replace(r)
}

// recoverable checks that every object of a failed node can be restored and
// every message it needs is still logged somewhere; it returns the loss floors
// the restore creates (entries its senders logged before their checkpoint and
// did not keep in it), or a note saying what is lost.
func (p *Protocol) recoverable(objs []*object) (map[pairKey]uint64, string) {
	restored, note := p.lostOf(objs)
	if note != "" {
		return nil, note
	}
	floors := map[pairKey]uint64{}
	for _, o := range objs {
		ck := o.ckpt
		for _, x := range ck.sn {
			k := pairKey{o.id, x.dst}
			if !ck.includes(x.dst) && x.sn > max(floors[k], p.floors[k]) {
				floors[k] = x.sn
			}
		}
	}
	all := maps.Clone(p.floors)
	maps.Copy(all, floors)
	keys := slices.SortedFunc(maps.Keys(all), func(a, b pairKey) int {
		if a.src != b.src {
			return int(a.src - b.src)
		}
		return int(a.dst - b.dst)
	})
	for _, k := range keys {
		fl := all[k]
		if !restored[k.src] && !restored[k.dst] {
			continue
		}
		// a receiver lost too, with this node or another whose restart
		// has not restored it yet (a chassis), restarts from its
		// checkpoint: its tables died with it
		w := p.objs[k.dst]
		live := !restored[k.dst] && !p.RT.Lost(k.dst)
		d := w.done.Lookup(k.src)
		if !live {
			d = w.ckpt.doneOf(k.src)
		}
		var low uint64
		if d != nil {
			low = d.Low()
		}
		for sn := low + 1; sn <= fl; sn++ {
			if d.has(sn) || (live && p.present(w, k.src, sn)) {
				continue
			}
			return nil, fmt.Sprintf("message %d from object %d to object %d is needed but its log was lost with an earlier failure of its sender's node", sn, k.src, k.dst)
		}
		if live && d != nil && d.Low() >= fl {
			delete(p.floors, k) // nothing below the floor is needed any more
		}
	}
	return floors, ""
}

// lostOf drops from the remote logs of objs, about to be restored together,
// the tuples whose TN a sender still knows (forgetResent), and says what is
// lost of what one of them needs ("" when nothing is); it returns the set
// of objs.
func (p *Protocol) lostOf(objs []*object) (restoring map[sim.ObjID]bool, note string) {
	restoring = map[sim.ObjID]bool{}
	for _, o := range objs {
		restoring[o.id] = true
	}
	for _, o := range objs {
		p.forgetResent(o, restoring)
		if note := p.restorable(o, o.ckpt); note != "" {
			return restoring, note
		}
	}
	return restoring, ""
}

// restorable says what is lost of what object o needs to be restored from
// checkpoint ck: the checkpoint itself, or the part of its remote message
// log (the tuples of the messages it processed after ck) on a failed node;
// "" when nothing is. recoverable first drops the lost tuples whose TN a
// sender still knows (forgetResent), which are not lost.
func (p *Protocol) restorable(o *object, ck *objCkpt) string {
	if !p.valid(ck) {
		return fmt.Sprintf("the checkpoint of object %d on node %d is lost (its buddy failed too, or failed earlier and the node had not checkpointed again)", o.id, ck.holder)
	}
	for _, x := range o.rlog {
		if x.tn > ck.tnProcessed && !p.held(x) {
			return fmt.Sprintf("the remote message log of object %d on node %d is lost", o.id, x.holder)
		}
	}
	return ""
}

// forgetResent drops from the remote message log of object o, about to be
// restored with the objects in restoring, the tuples after its checkpoint
// whose holder failed but whose TN the message's sender still knows: the
// sender resends the message with that TN, and o takes it from there, as it
// would have from the tuple. The tuples whose TN nobody else knows stay,
// for restorable to report their loss.
func (p *Protocol) forgetResent(o *object, restoring map[sim.ObjID]bool) {
	keep := o.rlog[:0]
	for _, x := range o.rlog {
		if x.tn > o.ckpt.tnProcessed && !p.held(x) && p.senderKnowsTN(p.objs[x.src], o, x.sn, x.tn, restoring[x.src]) {
			continue
		}
		keep = append(keep, x)
	}
	clear(o.rlog[len(keep):])
	o.rlog = keep
}

// held reports whether tuple x's holder still holds it.
func (p *Protocol) held(x tuple) bool {
	return p.RT.Holds(x.holder, x.inc)
}

// unordered returns, for objects lost together, one of them (w) that had
// processed a message (k, TN tn) after the checkpoint it restarts from whose
// TN no surviving record holds: a tuple in w's remote log, the live log of
// a surviving sender, or the checkpoint of a sender lost with it. w's
// re-execution would hand the TN to another message, and process its
// messages in another order than the one the surviving objects saw (or
// than a surviving tuple pins). It returns nil when every TN survives, or
// when no object survives them (any order is then a valid execution).
func (p *Protocol) unordered(lost []*object) (w *object, tn uint64, k pair) {
	rt := p.RT
	gone := map[sim.ObjID]bool{}
	for _, o := range lost {
		gone[o.id] = true
	}
	if !slices.ContainsFunc(p.objs, func(o *object) bool { return !gone[o.id] && !rt.Lost(o.id) }) {
		return nil, 0, pair{}
	}
	for _, w := range lost {
		if w.tnProcessed <= w.ckpt.tnProcessed {
			continue
		}
		tuples := map[uint64]pair{}
		for _, x := range w.rlog {
			if p.held(x) {
				tuples[x.tn] = pair{x.src, x.sn}
			}
		}
		for tn := w.ckpt.tnProcessed + 1; tn <= w.tnProcessed; tn++ {
			k, ok := w.byTNAt(tn)
			if !ok {
				continue
			}
			if x, ok := tuples[tn]; !(ok && x == k) && !p.senderKnowsTN(p.objs[k.src], w, k.sn, tn, gone[k.src]) {
				return w, tn, k
			}
		}
	}
	return nil, 0, pair{}
}

// senderKnowsTN reports whether sender s still knows that its message sn to
// w has TN tn: in its checkpoint's log when it is lost with w (lostWith), in
// its live log otherwise.
func (p *Protocol) senderKnowsTN(s, w *object, sn, tn uint64, lostWith bool) bool {
	if lostWith {
		l := s.ckpt.logTo(w.id) // in SN order
		i, _ := slices.BinarySearchFunc(l, sn, func(e entry, sn uint64) int { return cmp.Compare(e.sn, sn) })
		for ; i < len(l) && l[i].sn == sn; i++ {
			if l[i].tn == tn {
				return true
			}
		}
		return false
	}
	if p.RT.Lost(s.id) {
		return false
	}
	l := s.log.Get(w.id) // in SN order
	i, _ := slices.BinarySearchFunc(l, sn, func(e *entry, sn uint64) int { return cmp.Compare(e.sn, sn) })
	for ; i < len(l) && l[i].sn == sn; i++ {
		if l[i].tn == tn {
			return true
		}
	}
	return false
}

// present reports whether message (src, sn) waits at w (held, or delivered and
// not yet handled).
func (p *Protocol) present(w *object, src sim.ObjID, sn uint64) bool {
	tn := w.tnOf(pair{src, sn})
	return tn != 0 && (tn <= w.delivered || w.heldAt(tn) != nil)
}

// replace finds the node that takes the failed node's place: a spare after its
// boot or, when the pool is empty, the next surviving node.
func (p *Protocol) replace(r *recovery) {
	rt := p.RT
	spare, ok := rt.TakeSpare(func(s sim.NodeID) {
		if p.fallen || r.dead {
			return
		}
		delete(p.booting, s)
		rt.ReplaceSlot(r.failed, s)
		r.node = s
		p.event("replaced", r.failed, s, sim.None)
		p.arm(s)
		p.afterTopology()
		p.replaced(r)
	})
	if ok {
		p.booting[spare] = r
		return
	}
	slots := rt.Slots()
	i := slices.Index(slots, r.failed)
	r.node = sim.None
	for k := 1; k < len(slots) && i >= 0; k++ {
		if c := slots[(i+k)%len(slots)]; rt.Alive(c) {
			r.node = c
			break
		}
	}
	rt.RemoveSlot(r.failed)
	if r.node == sim.None {
		p.fallback(sim.Failure{Node: r.failed}, "every node failed and no spare is left")
		return
	}
	p.afterTopology()
	p.replaced(r)
}

// afterTopology reacts to a change of the node ring: tuples waiting for a
// buddy are logged, and nodes whose checkpoint was lost with their buddy (or
// whose buddy changed) checkpoint at once, to shorten the window in which a
// failure is unrecoverable.
func (p *Protocol) afterTopology() {
	rt := p.RT
	p.flushRetries()
	for _, n := range slices.Clone(rt.Slots()) {
		if !rt.Alive(n) {
			continue
		}
		for _, o := range p.objectsOn(n) {
			if ck := o.ckpt; !ck.initial && (!p.valid(ck) || ck.holder != p.buddy(n)) {
				p.checkpoint(n)
				break
			}
		}
	}
}

// fetch brings the checkpoints and the remote message log to the replacement
// node, after the downtime.
func (p *Protocol) fetch(r *recovery) {
	rt := p.RT
	attempt := r.attempt
	rt.At(max(rt.Now(), r.notBefore), func() {
		if p.fallen || r.dead || r.attempt != attempt {
			return
		}
		objs := r.objs
		if attempt > 0 {
			objs = r.redo
			// the crash that made this attempt may have taken what an object
			// to recreate needs, its tuples on the crashed node: no
			// detection will come to decide on the fetch, so decide now
			if _, note := p.lostOf(objs); note != "" {
				p.fallback(sim.Failure{Node: r.failed}, fmt.Sprintf("node %d failed while it restored the objects of a failed node: %s", r.failed, note))
				return
			}
		}
		bytes := map[sim.NodeID]int64{}
		for _, o := range objs {
			ck := o.ckpt
			if !ck.initial {
				bytes[ck.holder] += ck.size
			}
			for _, x := range o.rlog {
				if x.tn > ck.tnProcessed {
					bytes[x.holder] += p.cfg.TicketBytes
				}
			}
		}
		pending, lost := 1, false
		done := func(ok bool) {
			lost = lost || !ok // a holder failed: its detection decides
			pending--
			if !lost && pending == 0 && !p.fallen && !r.dead && r.attempt == attempt {
				if attempt > 0 {
					p.placeRedo(r)
					return
				}
				p.place(r)
			}
		}
		for _, h := range slices.Sorted(maps.Keys(bytes)) {
			pending++
			rt.Transfer(h, r.node, bytes[h], tagFetch, done)
		}
		done(true)
	})
}

// place restores the objects: all on the replacement (basic), or spread over
// other nodes (fast), then starts the resend phase.
func (p *Protocol) place(r *recovery) {
	targets := p.spread(r)
	r.buddy = p.buddy(r.node)
	r.migs = map[sim.ObjID]*migration{}
	attempt := r.attempt
	pending := 1
	done := func() {
		pending--
		if pending == 0 && !p.fallen && !r.dead && r.attempt == attempt {
			r.placed = true
			p.tryResend(r)
		}
	}
	for i, o := range r.objs {
		pending++
		if targets[i] == r.node {
			p.restoreObj(o, r.node)
			done()
			continue
		}
		p.migrateRestart(r, o, targets[i], done)
	}
	done()
}

// spread chooses where each restored object re-executes.
func (p *Protocol) spread(r *recovery) []sim.NodeID {
	rt := p.RT
	t := make([]sim.NodeID, len(r.objs))
	for i := range t {
		t[i] = r.node
	}
	if p.cfg.Restart != RestartFast {
		return t
	}
	slots := rt.Slots()
	pos := slices.Index(slots, r.node)
	k := 1
	for i := 1; i < len(t) && pos >= 0; i++ {
		for tries := 0; tries < len(slots); tries++ {
			c := slots[(pos+k)%len(slots)]
			k++
			if c != r.node && rt.Alive(c) {
				t[i] = c
				break
			}
		}
	}
	return t
}

// restoreObj rebuilds object o on node n from its checkpoint: state, tables,
// the logged messages kept in the checkpoint, and the TNTable entries of the
// remote message log. Its gate stays closed until every node has resent.
func (p *Protocol) restoreObj(o *object, n sim.NodeID) {
	rt := p.RT
	ck := o.ckpt
	// the log o had goes with its state; it is still accounted when o's
	// node is alive: a migration whose source crashed recreates o from
	// the restart's copy, discarding the one a live node had restored
	p.memAdd(o.node, o.inc, sim.MemLog, -o.logBytes)
	o.reset()
	o.node, o.inc = n, rt.Incarnation(n)
	for _, x := range ck.sn {
		*o.sn.Ptr(x.dst) = x.sn
	}
	for i := range ck.done {
		*o.done.Ptr(ck.done[i].src) = ck.done[i].set.clone()
	}
	o.tnProcessed, o.delivered, o.ckptTN, o.tnCount = ck.tnProcessed, ck.tnProcessed, ck.tnProcessed, ck.tnProcessed
	for _, e := range ck.log {
		c := e
		c.gen, c.asking, c.done, c.given = o.gen, false, false, true // given: the checkpoint's m may be on the network
		l := o.log.Ptr(c.dst)
		*l = append(*l, &c)
		sz := c.wire
		o.logBytes += sz
		p.memAdd(n, o.inc, sim.MemLog, sz)
	}
	// the tuples after the checkpoint were fetched with it: their TNs hold
	// even if a holder failed since (its failure not yet handled). Such a
	// tuple stays in the remote log, where it is lost: a failure of o
	// before its next checkpoint is then unrecoverable (restorable) unless
	// the sender still knows the TN (forgetResent)
	keep := o.rlog[:0]
	for _, x := range o.rlog {
		held := p.held(x)
		if x.tn <= ck.tnProcessed {
			if held {
				keep = append(keep, x)
			}
			continue
		}
		keep = append(keep, x)
		k := pair{x.src, x.sn}
		o.setTN(k, x.tn)
		if held {
			if o.logged == nil {
				o.logged = map[pair]bool{}
			}
			o.logged[k] = true
		}
	}
	o.rlog = keep
	o.gated = true
	p.holds[o.id] = 0
	if ck.initial {
		rt.Recreate(o.id, n)
		return
	}
	if err := rt.Restore(o.id, n, sim.Snap{State: ck.state, Started: !ck.unstarted, Cut: ck.cut}); err != nil {
		rt.Abort(fmt.Sprintf("mlog restore: %v", err))
		return
	}
	rt.ResumeObject(o.id) // a pause of its earlier life does not survive it
}

// resendPhase asks every node to resend the logged messages to the restored
// objects; each node answers with the messages (or new ticket requests) and
// then a "done" to every node hosting a restored object.
func (p *Protocol) resendPhase(r *recovery) {
	rt := p.RT
	r.placing = false
	p.event("resend", r.failed, r.node, sim.None)
	slots := slices.Clone(rt.Slots())
	var nodes []sim.NodeID
	for _, n := range slots {
		if rt.Alive(n) {
			nodes = append(nodes, n)
		}
	}
	r.open = len(r.objs)
	for _, o := range r.objs {
		o.waitFor = map[sim.NodeID]bool{}
		for _, n := range nodes {
			o.waitFor[n] = true
		}
	}
	for _, m := range nodes {
		p.askResend(r, r.node, m)
	}
}

// askResend sends node m, from node from, the request to resend to r's
// objects. When the request is lost with its sender (the restarting node,
// failed during the phase: multi_failure), the host of one of r's objects
// still waiting for m asks again.
func (p *Protocol) askResend(r *recovery, from, m sim.NodeID) {
	rt := p.RT
	rt.Transfer(from, m, p.cfg.TicketBytes*int64(len(r.objs)), tagResend, func(ok bool) {
		if p.fallen || r.dead {
			return
		}
		if ok {
			p.resendFrom(m, r)
			return
		}
		if !rt.Alive(m) {
			return // m's failure takes it out of the gates (detach)
		}
		for _, w := range r.objs {
			if w.gated && w.waitFor[m] && rt.Alive(w.node) {
				p.askResend(r, w.node, m)
				return
			}
		}
	})
}

// resendFrom runs at node m: its objects resend what the restored objects need.
func (p *Protocol) resendFrom(m sim.NodeID, r *recovery) {
	rt := p.RT
	// the messages that keep their TN leave in TN order, interleaved over
	// senders and receivers: a restored object can re-execute its first
	// messages while the rest of the resends still stream in, instead of
	// waiting behind everything one sender logged for another receiver
	type resend struct {
		s *object
		w *object
		e *entry
	}
	var out []resend
	for _, s := range p.objectsOn(m) {
		for _, w := range r.objs {
			for _, e := range slices.Clone(s.log.Get(w.id)) {
				switch {
				case e.tn > w.ckptTN:
					out = append(out, resend{s, w, e})
				case e.tn == 0 && !e.old:
					e.asking = false
					if p.cfg.MultiFailure {
						p.sendDirect(s, e)
					} else {
						p.requestTicket(s, e)
					}
				default: // processed before the checkpoint it restarts from
					p.prune(s, e)
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b resend) int { return cmp.Compare(a.e.tn-a.w.ckptTN, b.e.tn-b.w.ckptTN) })
	// a restored object also resends, after those, what its restored log
	// holds for the objects not restored with it: one of them may have lost
	// such a message in an earlier restart whose resend request found this
	// object's node already failed (before its failure was detected), and
	// nothing else would ever send it again (the object does not regenerate
	// what it sent before its checkpoint); a receiver that has the message
	// drops the copy
	restored := map[sim.ObjID]bool{}
	for _, w := range r.objs {
		restored[w.id] = true
	}
	var others []resend
	for _, s := range p.objectsOn(m) {
		if !restored[s.id] {
			continue
		}
		dsts := s.log.AppendKeys(nil)
		slices.Sort(dsts)
		for _, dst := range dsts {
			w := p.objs[dst]
			if restored[dst] || rt.Lost(dst) {
				continue
			}
			for _, e := range slices.Clone(s.log.Get(dst)) {
				switch {
				case e.resentWithTN(w):
					others = append(others, resend{s, w, e})
				case e.old && e.oldGen == w.gen:
					// processed by the receiver's current life; one restored
					// since (while this object was down) needs it again
				case e.tn == 0:
					if p.cfg.MultiFailure {
						p.sendDirect(s, e)
					} else {
						p.requestTicket(s, e)
					}
				default: // the receiver's checkpoint covers it: its garbage collection pruned the log that died
					p.prune(s, e)
				}
			}
		}
	}
	slices.SortStableFunc(others, func(a, b resend) int { return cmp.Compare(a.e.tn-a.w.ckptTN, b.e.tn-b.w.ckptTN) })
	for i, x := range append(out, others...) {
		hdr := x.e.m.Hdr
		hdr.TN = x.e.tn
		rt.SendApp(x.s.id, x.w.id, x.e.m.Tag, x.e.m.Size, x.e.m.Payload, hdr)
		p.Stats.Resent++
		if i >= len(out) {
			p.Stats.ResentOthers++
		}
	}
	var hosts []sim.NodeID
	for _, w := range r.objs {
		if !slices.Contains(hosts, w.node) {
			hosts = append(hosts, w.node)
		}
	}
	slices.Sort(hosts)
	for _, h := range hosts {
		rt.Transfer(m, h, p.cfg.TicketBytes, tagDone, func(ok bool) {
			if !ok || p.fallen || r.dead {
				return
			}
			for _, w := range r.objs {
				if w.node == h && w.gated {
					delete(w.waitFor, m)
					if len(w.waitFor) == 0 {
						p.openGate(r, w)
					}
				}
			}
		})
	}
}

// openGate: every node has resent to w. The TNs between its checkpoint and the
// highest TN known that nobody holds were handed out before the crash and lost
// on the way: they are handed out again first, then TNs continue after.
func (p *Protocol) openGate(r *recovery, w *object) {
	p.reserveTNs(w)
	top := w.ckptTN
	for tn := w.byTN.base; tn < w.byTN.end(); tn++ {
		if _, ok := w.byTNAt(tn); ok {
			top = max(top, tn)
		}
	}
	w.missing = w.missing[:0]
	for t := w.ckptTN + 1; t <= top; t++ {
		if _, ok := w.byTNAt(t); !ok {
			w.missing = append(w.missing, t)
		}
	}
	p.Stats.MissingTNs += int64(len(w.missing))
	w.tnCount = top
	w.gated = false
	// re-execution with priority runs up to the first TN that must be handed
	// out again: what comes after may depend on messages not yet sent
	catch := top
	if len(w.missing) > 0 {
		catch = w.missing[0] - 1
	}
	if catch > w.tnProcessed {
		w.replayTo = catch
		if p.cfg.Priority {
			w.catchUp = catch
			p.prioritize(r, w)
		}
	}
	w.waitFor = nil
	q := w.queued
	w.queued = nil
	for _, x := range q {
		p.answer(w, x)
	}
	ms := w.waiting
	w.waiting = nil
	for _, m := range ms {
		p.arriveDirect(w, m)
	}
	r.open--
	p.finishIfOpen(r)
}

// reserveTNs records in w's TN table the TNs that its senders' logs hold
// for w and w does not know: the checkpoint's log of a sender lost now,
// whose restore resends them with those TNs (resendFrom), and the live log
// of any other, notably a sender restored after an earlier failure whose
// restart has not resent them yet. Either resend may come after w's gate
// opens, since detach opens it when a node it waited for fails, even with
// resends to w on the wire or not yet sent. Handed out to other messages
// meanwhile, the TNs would make those resends stale, and w would never
// process them.
func (p *Protocol) reserveTNs(w *object) {
	for _, s := range p.objs {
		switch {
		case s == w:
		case p.RT.Lost(s.id):
			if s.ckpt != nil {
				l := s.ckpt.logTo(w.id)
				for i := range l {
					w.reserveTN(s.id, &l[i])
				}
			}
		default:
			for _, e := range s.log.Get(w.id) {
				w.reserveTN(s.id, e)
			}
		}
	}
}

// reserveTN records in w's TN table the TN of sender s's logged entry e,
// unless s does not resend it with that TN, w knows its TN, or w gave that
// TN to another message.
func (w *object) reserveTN(s sim.ObjID, e *entry) {
	k := pair{s, e.sn}
	if !e.resentWithTN(w) || w.tnOf(k) != 0 {
		return
	}
	if _, taken := w.byTNAt(e.tn); !taken {
		w.setTN(k, e.tn)
	}
}

// resentWithTN reports whether a restored sender resends logged entry e to
// receiver w, not restored with it, with the TN e holds (resendFrom): w's
// checkpoint does not cover it, and w's current life has not said it
// processed it (old).
func (e *entry) resentWithTN(w *object) bool {
	return e.tn > w.ckptTN && !(e.old && e.oldGen == w.gen)
}

// finishIfOpen ends restart r once every gate of its objects is open.
func (p *Protocol) finishIfOpen(r *recovery) {
	if r.open > 0 || !slices.Contains(p.recs, r) {
		return
	}
	p.Stats.Restarts++
	p.recs = slices.DeleteFunc(p.recs, func(x *recovery) bool { return x == r })
	p.restarted = max(p.restarted, p.RT.Now())
	p.event("restarted", r.failed, r.node, sim.None)
	p.afterTopology()
}

// gate is a restored object whose gate waited only for a node that failed
// (w nil: restart r has no closed gate left).
type gate struct {
	r *recovery
	w *object
}

// placing returns the restart in progress that is still placing its objects
// (with multi_failure there is at most one: a failure then joins it or ends
// in a restart from scratch), or nil.
func (p *Protocol) placing() *recovery {
	for _, r := range p.recs {
		if r.placing {
			return r
		}
	}
	return nil
}

// detach takes failed node n out of the restarts in progress that placed
// their objects (multi_failure): the objects it hosted (lost) leave them to
// be restored with n's own, and their gates no longer wait for n's resends,
// which died with it (what n's objects had logged for them is resent when
// they are restored, from their checkpoints' logs, or regenerated when they
// re-execute). It returns the gates that waited only for n.
func (p *Protocol) detach(n sim.NodeID, lost []*object) []gate {
	var open []gate
	for _, r := range slices.Clone(p.recs) {
		if r.placing {
			continue
		}
		left := r.open
		r.objs = slices.DeleteFunc(r.objs, func(o *object) bool {
			if !slices.Contains(lost, o) {
				return false
			}
			if o.gated {
				r.open--
			}
			return true
		})
		for _, w := range r.objs {
			if w.gated && w.waitFor[n] {
				delete(w.waitFor, n)
				if len(w.waitFor) == 0 {
					open = append(open, gate{r, w})
				}
			}
		}
		if r.open == 0 && left > 0 {
			open = append(open, gate{r, nil}) // every object left was n's
		}
	}
	return open
}

// openGates opens the gates detach returned (and ends the restarts left
// without a closed gate), unless the failure ended in a restart from scratch.
func (p *Protocol) openGates(gates []gate) {
	for _, g := range gates {
		switch {
		case p.fallen || g.r.dead:
		case g.w == nil:
			p.finishIfOpen(g.r)
		case g.w.gated:
			p.openGate(g.r, g.w)
		}
	}
}

// fallback handles a pattern the protocol cannot survive: it is reported, and
// the application restarts from scratch (failures until then restart it
// again); takeOver resumes message logging from the fresh start.
func (p *Protocol) fallback(f sim.Failure, note string) {
	rt := p.RT
	st := rt.Stats()
	st.Unrecoverable++
	st.UnrecoverableNote = "mlog: " + note + "; the application restarted from scratch"
	p.fallen = true
	for _, n := range slices.Sorted(maps.Keys(p.prio)) {
		p.endPriority(n)
	}
	for _, o := range p.objs {
		p.memAdd(o.node, o.inc, sim.MemLog, -o.logBytes)
		if !o.ckpt.initial {
			p.memAdd(o.ckpt.holder, o.ckpt.inc, sim.MemCheckpoint, -o.ckpt.size)
		}
		for _, x := range o.rlog {
			p.memAdd(x.holder, x.inc, sim.MemLog, -p.cfg.TicketBytes)
		}
		o.reset()
		o.rlog = nil
		o.ckpt = &objCkpt{initial: true}
	}
	// the spares booting for failed nodes are the restarter's now, and the
	// failed nodes without one are handed to it to replace
	adopted := map[sim.NodeID]bool{}
	for _, s := range slices.Sorted(maps.Keys(p.booting)) {
		n := p.booting[s].failed
		p.scratch.Adopt(s, n)
		adopted[n] = true
	}
	for _, s := range slices.Sorted(maps.Keys(p.bootingGroup)) {
		n := p.bootingGroup[s].e
		p.scratch.Adopt(s, n)
		adopted[n] = true
	}
	clear(p.booting)
	clear(p.bootingGroup)
	recs := p.recs
	p.recs = nil
	for _, r := range recs {
		r.dead = true
		for _, n := range append([]sim.NodeID{r.failed}, r.down...) {
			if n != f.Node && !adopted[n] && slices.Contains(rt.Slots(), n) {
				p.scratch.OnFailure(sim.Failure{Node: n, At: rt.Now(), DetectedAt: rt.Now()})
			}
		}
	}
	p.scratch.OnFailure(f)
}

// takeOver runs when the restart from scratch is done, before the
// application resumes: every object starts a new life from its initial state
// with empty tables and logs, the checkpoint timers start again, and later
// failures are handled by message logging again.
func (p *Protocol) takeOver() {
	rt := p.RT
	p.fallen = false
	p.life++
	p.restarted = 0 // a node that failed before the fresh start sent nothing in it
	for _, o := range p.objs {
		o.reset()
		o.node, o.inc = rt.NodeOf(o.id), rt.Incarnation(rt.NodeOf(o.id))
		o.ckpt, o.ckptTN, o.rlog = &objCkpt{initial: true}, 0, nil
	}
	clear(p.floors)
	clear(p.ckBusy)
	clear(p.holds)
	clear(p.lastProgress)
	clear(p.armed)
	p.dormant = 0
	for _, n := range rt.Slots() {
		p.arm(n)
	}
}
