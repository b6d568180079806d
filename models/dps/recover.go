package dps

// This file is recovery (§4, §6): re-activating the backups of a failed node's
// threads, re-execution in sequence-number order, re-created stateless
// threads and the split's resent tasks, shrinking onto fewer nodes, and
// regenerating the backups a failure consumed.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"ftsim/internal/peermap"
	"ftsim/sim"
)

// OnFailure re-activates the backups of the failed node's threads, re-creates
// its stateless threads, resends the split's tasks and regenerates backups.
func (p *Protocol) OnFailure(f sim.Failure) {
	p.memFailed(f.Node)
	for _, id := range f.Objects {
		if p.th[id].tick.node == f.Node {
			p.stopTick(id, f.At) // the timer died with its node
		}
	}
	if p.fallback {
		p.scratch.OnFailure(f)
		return
	}
	if f.WasSpare {
		return
	}
	if d := p.RT.Config().Downtime; d > 0 {
		p.RT.At(p.RT.Now()+d, func() { p.recover(f) })
		return
	}
	p.recover(f)
}

func (p *Protocol) recover(f sim.Failure) {
	rt := p.RT
	if p.fallback {
		p.scratch.OnFailure(f)
		return
	}
	// every lost stateful object needs a live, ready backup
	var lost []sim.ObjID
	for i := range p.th {
		if id := sim.ObjID(i); rt.Lost(id) && rt.NodeOf(id) == f.Node {
			lost = append(lost, id)
		}
	}
	// the backups are chosen from the state at the failure: activating one
	// thread voids the outputs its lost incarnation held back, which
	// complete counts on for another lost thread (re-execution sends them
	// again)
	sources := map[sim.ObjID]*backup{}
	inFlight := map[sim.ObjID]map[msgKey]bool{}
	for _, id := range lost {
		if p.th[id].stateless {
			continue
		}
		if sources[id] = p.source(id); sources[id] == nil {
			p.giveUp(f, id)
			return
		}
		if !p.logging(&p.th[id]) {
			inFlight[id] = p.inFlight(id, sources[id])
		}
	}
	rt.RemoveSlot(f.Node)
	if len(rt.Slots()) == 0 {
		p.giveUp(f, sim.None)
		return
	}
	p.forgetLostSenders()
	// drop the backups that died
	for i := range p.th {
		t := &p.th[i]
		t.backups = slices.DeleteFunc(t.backups, func(bk *backup) bool { return !p.valid(bk) })
	}
	// the stateless threads first: a split activated from its initial state
	// runs Start at once, and its tasks must find the workers it re-creates
	// (the resend after it skips them, since Start handed them their tasks)
	var workers []sim.ObjID
	for _, id := range lost {
		if p.th[id].stateless {
			if p.canShrink() {
				p.C.Retired++
				p.th[id].retired = true
				p.releaseCopies(id) // kept again for the threads its tasks go to
			} else {
				p.recreate(id)
			}
			workers = append(workers, id)
		}
	}
	splitLost := false
	for _, id := range lost {
		if bk := sources[id]; bk != nil {
			p.activate(id, bk, inFlight[id])
			if id == p.split {
				splitLost = true
			}
		}
	}
	if s := p.split; s != sim.None && !splitLost && !rt.Lost(s) {
		st := &p.th[s]
		// a split still re-executing resends when it is done, to every
		// worker, or only to those lost then (lostOnly) when it restarted
		// from its initial state: a worker re-created after that Start ran
		// (lost in another failure, detected later) missed its tasks
		if !st.resendDue && st.replaying == 0 || st.resendDue && p.lostOnly && rt.Started(s) {
			for _, w := range workers {
				p.resend(w) // to w re-created, or to the survivors
			}
		}
	}
	for i := range p.th {
		p.regenerate(sim.ObjID(i))
	}
}

// source is the backup object id is re-activated from: the first live,
// ready, complete one that is not stale.
func (p *Protocol) source(id sim.ObjID) *backup {
	for _, bk := range p.th[id].backups {
		if bk.ready && !bk.stale && p.valid(bk) && p.complete(id, bk) {
			return bk
		}
	}
	return nil
}

// complete reports whether backup bk of thread id holds every data object
// sent to the thread before bk was registered that its state has not
// handled. The duplicates of those went only to the backups before it; bk
// gets them in its first state or by a gap forward once the thread accepts
// them. One still on its way to the thread's node, or a forward still on its
// way from there, when that node failed may have been lost with the thread
// and its last complete backup (the paper's unrecoverable pattern): bk is
// then incomplete. A forward whose last byte had left would still arrive;
// counting it missing errs on the side of restarting from scratch. An
// object its sender still holds (LogOrder) has not left: its duplicates
// will reach bk.
func (p *Protocol) complete(id sim.ObjID, bk *backup) bool {
	for _, c := range bk.sentBefore {
		n := c.n
		if c.src == id && c.life == bk.ck.pst.life {
			// the objects to itself its state had not sent: re-execution from
			// bk posts them again (ownRepost)
			n = min(n, bk.ck.pst.sent.Get(id))
		}
		for r := range n {
			k := msgKey{c.src, opID(c.life, r)}
			if !bk.ck.processed.has(k.src, k.op) && bk.queue.Find(k) < 0 && !p.holds(c.src, id, k.op) {
				return false
			}
		}
	}
	return true
}

// inFlight lists the data objects that live threads sent to thread id and
// that its backup bk neither stored nor had handled: their duplicates are
// still on their way to bk, and re-execution in sequence order waits for
// them. Before it is registered, bk has all that complete requires; after,
// a live sender duplicates to it whatever it sends, and a duplicate whose
// sender is alive is not lost. A lost sender's counts are not waited for:
// its duplicates in flight may have died with it, and its re-execution
// re-posts what its checkpoint had not sent. Nor are the objects a running
// handler posted that leave later (at the end of its compute): they do not
// exist yet for the backup, and arrive as new input. (An order-logging
// thread's replay waits for its logged objects instead.)
func (p *Protocol) inFlight(id sim.ObjID, bk *backup) map[msgKey]bool {
	var out map[msgKey]bool
	now := p.RT.Now()
	for s := range p.th {
		src := &p.th[s]
		if src.stateless || p.RT.Lost(sim.ObjID(s)) {
			continue
		}
		n := src.pst.sent.Get(id)
		for _, l := range src.later {
			if l.dst == id && l.leaves > now {
				n = min(n, l.rank)
			}
		}
		for r := bk.ck.processed.next(sim.ObjID(s), src.pst.life); r < n; r++ {
			k := msgKey{sim.ObjID(s), opID(src.pst.life, r)}
			if !bk.ck.processed.has(k.src, k.op) && bk.queue.Find(k) < 0 {
				if out == nil {
					out = map[msgKey]bool{}
				}
				out[k] = true
			}
		}
	}
	return out
}

// forgetLostSenders stops the re-executions waiting for duplicates from a
// thread lost since they began: a duplicate whose sender died before its
// last byte left is lost, and the sender's own re-execution, which may need
// the waiting thread's outputs, re-posts it (inFlight's rule for a lost
// sender).
func (p *Protocol) forgetLostSenders() {
	rt := p.RT
	for i := range p.th {
		t, id := &p.th[i], sim.ObjID(i)
		if len(t.ord.wait) == 0 || rt.Lost(id) {
			continue
		}
		n := len(t.ord.wait)
		maps.DeleteFunc(t.ord.wait, func(k msgKey, _ bool) bool { return rt.Lost(k.src) })
		if len(t.ord.wait) < n {
			p.deliverReplay(id, p.advance(id))
		}
	}
}

// holds reports whether thread src still holds back its data object op to dst.
func (p *Protocol) holds(src, dst sim.ObjID, op uint64) bool {
	return slices.ContainsFunc(p.th[src].ord.held, func(m *sim.Message) bool { return m.Dst == dst && m.Hdr.Op == op })
}

// giveUp reports an unrecoverable pattern and falls back to restarting from
// scratch.
func (p *Protocol) giveUp(f sim.Failure, id sim.ObjID) {
	rt := p.RT
	st := rt.Stats()
	st.Unrecoverable++
	if id == sim.None {
		st.UnrecoverableNote = "dps: no node is left; the application cannot run"
	} else {
		st.UnrecoverableNote = fmt.Sprintf("dps: object %d and all its backup threads were lost; the application restarted from scratch", id)
	}
	p.fallback = true
	for i := range p.th {
		p.stopTick(sim.ObjID(i), rt.Now()) // ticks stop while the application restarts from scratch
		t := &p.th[i]
		for _, bk := range t.backups {
			if p.valid(bk) {
				p.release(bk)
			}
		}
		t.backups = nil
	}
	p.scratch.OnFailure(f)
}

// activate turns backup bk of object id (its source at the failure) into the
// active thread: its state is restored on the backup's node and its stored
// data objects are re-injected in sequence-number order for re-execution,
// once the duplicates still in flight to bk (inFlight) are there.
func (p *Protocol) activate(id sim.ObjID, bk *backup, inFlight map[msgKey]bool) {
	rt := p.RT
	t := &p.th[id]
	// The new incarnation replays bk's log up to its first gap, then picks
	// its own order: every logged rank after that prefix, at bk or at
	// another backup, is the lost incarnation's (a determinant whose output
	// never left, or the order regenerate foresaw for its inbox) and would
	// list an object a second time once the new one logs it at another rank.
	last := loggedThrough(bk.ck.count, bk.log)
	p.reconcile(t, bk, last)
	p.release(bk)
	ck := bk.ck
	msgs := make([]*sim.Message, 0, bk.queue.Len())
	for _, k := range sortedKeys(&bk.queue) {
		msgs = append(msgs, bk.queue.Get(k).m)
	}
	slices.SortStableFunc(msgs, func(a, b *sim.Message) int { return cmp.Compare(a.Hdr.Seq, b.Hdr.Seq) })
	// a new incarnation: what the lost one sent (checkpoints, held outputs,
	// pending determinants) is void
	t.ord.act++
	// the regenerated backup is a copy of the consumed one, registered before
	// re-execution starts so that its checkpoints follow it: the state and
	// bk.bytes, which counts both the queue and the handling-order log
	p.addBackup(id, bk.node, &ckptData{stamp: ck.stamp, act: t.ord.act, count: ck.count, log: maps.Clone(bk.log), initial: ck.initial,
		unstarted: ck.unstarted, state: ck.state, size: ck.size, pst: ck.pst, processed: ck.processed, queue: slices.Clone(msgs), hist: ck.hist},
		ck.size+bk.bytes)
	if p.cfg.Audit && p.logging(t) {
		p.auditOrder(t, ck, bk.log, last)
	}

	t.pst = ck.pst.clone()
	t.later = t.later[:0]
	t.processed = ck.processed.clone()
	t.received = ck.processed.clone()
	t.since, t.handled = 0, 0
	if t.dispatched != nil {
		t.dispatched = map[msgKey]struct{}{}
	}
	if id == p.split {
		// The farm's master hands tiles out in the order results arrive: it is
		// not a DPS split whose re-execution in sequence order reproduces the
		// original run (a replayed result may precede the hand-out of its own
		// tile, which the master cannot absorb). It restarts from its
		// checkpoint instead, results of the lost generation are void, and
		// every task it holds outstanding is resent (§6: the split resends).
		p.splitGen++
		for w := range p.copies {
			p.copies[w] = nil // they were on the dead node
		}
		msgs = slices.DeleteFunc(msgs, func(m *sim.Message) bool { return p.th[m.Src].stateless })
	}
	// outputs held back by the lost incarnation never left
	t.ord.held, t.ord.need, t.ord.pend = nil, nil, nil
	t.ord.dispN, t.ord.ackN = ck.count, ck.count
	t.replaying = 0 // counted as they are delivered
	// A split restarted from its initial state hands its tasks out again in
	// Start, but to every worker, retired ones included (Shrink): after Start
	// it resends the tasks of the lost ones to the survivors.
	t.resendDue = id == p.split
	p.lostOnly = ck.initial
	p.C.Recovered++
	if ck.initial {
		rt.Recreate(id, bk.node)
	} else if err := rt.Restore(id, bk.node, sim.Snap{State: ck.state, Started: !ck.unstarted}); err != nil {
		rt.Abort(err.Error())
		return
	}
	t.ckProg = rt.ObjectProgress(id) // the backup's state is the last checkpoint
	prefix := prefixOf(ck.count, last, bk.log)
	as := make([]*sim.Message, 0, len(msgs))
	for _, c := range msgs {
		if p.ownRepost(id, c) && !prefix.has[msgKey{c.Src, c.Hdr.Op}] {
			p.C.OwnCopies++
			continue
		}
		a := appCopy(c)
		a.To = bk.node
		a.Hdr.Flags |= flagInjected
		t.received.add(a.Src, a.Hdr.Op)
		as = append(as, a)
	}
	if len(inFlight) > 0 {
		p.C.InFlightWaits++
	}
	p.deliverReplay(id, p.replayOrder(id, prefix, as, inFlight))
	if t.resendDue && !ck.initial && t.replaying == 0 && !t.ord.replay && !rt.Running(id) {
		t.resendDue = false
		p.resendAll()
	}
	if p.cfg.Period > 0 {
		p.armTimer(id)
	}
	if slices.ContainsFunc(t.backups, func(b *backup) bool { return b.stale }) {
		// once the replay is over, whatever the checkpoint schedule (one
		// asked for by an earlier incarnation was void with it)
		p.whenSettled(id, func() {
			if !p.fallback {
				p.checkpoint(id)
			}
		})
	}
}

// ownRepost reports whether data object m (or its copy) is one thread id
// posted to itself in its current life at a rank its re-execution has not
// reached yet: the lost incarnation sent it after the checkpoint the thread
// was re-activated from, and the re-execution posts it again. Handed the
// copy, the thread would get its own output before producing it, which no
// run without failures does: a DP object in request mode, which sends
// itself a tick and notes it in a flag that is not state, took the copy
// for a tick it had not sent, then dropped its own re-post as received and
// waited for ever. (Objects from other threads may come in any order in
// any run.)
func (p *Protocol) ownRepost(id sim.ObjID, m *sim.Message) bool {
	t := &p.th[id]
	return m.Src == id && opLife(m.Hdr.Op) == t.pst.life && opRank(m.Hdr.Op) >= t.pst.sent.Get(id)
}

// reconcile settles, as thread t is re-activated from bk, whose replayed
// prefix ends at rank last, its other backups: it drops bk and those still
// without a state, truncates the logs of the others after the prefix and
// marks stale the ones at odds with it.
func (p *Protocol) reconcile(t *thread, bk *backup, last uint64) {
	t.backups = slices.DeleteFunc(t.backups, func(b *backup) bool {
		switch {
		case b == bk:
			return true
		case !b.ready:
			// Its first state is one the lost incarnation took (install
			// ignores it, or it died with the node) or was to take: it
			// would never be ready, and still count as one of the
			// thread's backups. regenerate replaces it by one registered
			// now, whose state the new incarnation takes.
			p.release(b)
			return true
		}
		p.truncateLog(b, last) // (recover has dropped the dead backups)
		if p.logging(t) && !b.stale && (b.ck.count > last || loggedThrough(b.ck.count, b.log) < last) {
			// b disagrees with the order the new incarnation continues: its
			// state is ahead of that prefix (it handled ranks the new
			// incarnation may fill with other objects), or its log misses
			// ranks the prefix holds in bk's state, which no determinant
			// will bring again. Activated, it would re-execute a history
			// other than the one the new incarnation counts as at every
			// backup, on which the outputs it releases depend. It still stores
			// the duplicates it holds and receives (dropping it would lose
			// those on their way to no other backup), and a checkpoint of
			// the new incarnation that covers its state makes it a source
			// again (install).
			b.stale = true
			p.C.StaleBackups++
		}
		return false
	})
}

// auditOrder checks that the order thread t is re-activated with, ck's and
// then log's up to rank last, extends what its earlier incarnations had
// acknowledged (outputs released since may depend on all of it), and makes
// it the thread's history.
func (p *Protocol) auditOrder(t *thread, ck *ckptData, log map[uint64]msgKey, last uint64) {
	h := slices.Clone(ck.hist)
	for r := ck.count + 1; r <= last; r++ {
		h = append(h, log[r])
	}
	if len(h) < len(t.acked) || !slices.Equal(h[:len(t.acked)], t.acked) {
		p.C.OrderConflicts++
	}
	t.hist = slices.Clone(ck.hist)
	if len(t.acked) < len(t.hist) {
		t.acked = slices.Clone(t.hist) // ackN is ck.count from now on
	}
}

// release frees the memory backup bk holds on its node: its state once it
// is ready, its queue and log.
func (p *Protocol) release(bk *backup) {
	if bk.ready {
		p.memAdd(bk.node, memState, -bk.ck.size)
	}
	p.memAdd(bk.node, memQueue, -bk.bytes)
}

// truncateLog drops the handling ranks after last from backup bk's log.
func (p *Protocol) truncateLog(bk *backup, last uint64) {
	for r := range bk.log {
		if r > last {
			delete(bk.log, r)
			bk.bytes -= p.cfg.EntryBytes
			p.memAdd(bk.node, memQueue, -p.cfg.EntryBytes)
		}
	}
}

// recreate re-creates stateless object id on a surviving node.
func (p *Protocol) recreate(id sim.ObjID) {
	rt := p.RT
	t := &p.th[id]
	live := p.liveSlots()
	if len(live) == 0 {
		return
	}
	node := live[p.next%len(live)]
	p.next++
	p.releaseCopies(id)
	t.pst.life++
	t.pst.seqOut, t.pst.seqIn = 0, 0
	t.pst.sent = peermap.Map[sim.ObjID, uint64]{}
	t.later = t.later[:0]
	t.received, t.processed = idSet{}, idSet{}
	if t.dispatched != nil {
		t.dispatched = map[msgKey]struct{}{}
	}
	p.C.Recreated++
	rt.Recreate(id, node)
}

// resend sends again the tasks the split believes worker w holds: to w, or,
// when w was lost and not re-created (Shrink), to the surviving threads of
// the collection in turn.
func (p *Protocol) resend(w sim.ObjID) {
	rt := p.RT
	if p.split == sim.None || rt.Lost(p.split) {
		return
	}
	rs, ok := rt.Object(p.split).(Resubmitter)
	if !ok {
		return
	}
	var live []sim.ObjID
	if rt.Lost(w) {
		live = p.liveStateless()
		if len(live) == 0 {
			return
		}
	}
	for _, task := range rs.Outstanding(w) {
		to := w
		if live != nil {
			to = live[p.next%len(live)]
			p.next++
			rt.Object(p.split).(Reassigner).Reassign(task, w, to) // p.reassign: it can
			p.C.Reassigned++
		}
		tag, size, payload := p.farm.TaskMessage(task)
		m := rt.SendApp(p.split, to, tag, size, payload, sim.Header{Seq: p.th[p.split].pst.seqOut, Inc: p.splitGen, Flags: flagResend})
		p.keepCopy(m)
		p.C.Resent++
	}
}

// canShrink reports whether a lost stateless thread may stay lost: Shrink is
// on, the master can reassign tasks and some stateless thread survives.
func (p *Protocol) canShrink() bool {
	return p.cfg.Shrink && p.reassign && len(p.liveStateless()) > 0
}

// unretire re-creates, when the run is over, the stateless threads Shrink
// left lost: the runtime checks the answer only when every object exists,
// and a stateless thread holds nothing the answer depends on. They are
// re-created in their initial state and never run (the engine has stopped);
// the run's figures are those of the shrunken collection.
func (p *Protocol) unretire() {
	rt := p.RT
	if p.fallback {
		return
	}
	live := p.liveSlots()
	if len(live) == 0 {
		return
	}
	for i := range p.th {
		if id := sim.ObjID(i); p.th[i].stateless && rt.Lost(id) {
			rt.Recreate(id, live[0])
		}
	}
}

// liveStateless lists the stateless threads that are not lost, by id.
func (p *Protocol) liveStateless() []sim.ObjID {
	var out []sim.ObjID
	for i := range p.th {
		if p.th[i].stateless && !p.RT.Lost(sim.ObjID(i)) {
			out = append(out, sim.ObjID(i))
		}
	}
	return out
}

// resendRetired hands to the survivors the tasks the split gave retired
// threads after they were retired: a result a thread sent before its node
// failed still arrives, and the split answers it with the thread's next
// task, which would otherwise wait at the lost thread for ever.
func (p *Protocol) resendRetired() {
	for i := range p.th {
		if id := sim.ObjID(i); p.th[i].retired && p.RT.Lost(id) {
			p.releaseCopies(id)
			p.resend(id)
		}
	}
}

// resendAll resends every outstanding task, after the split re-executed.
func (p *Protocol) resendAll() {
	for i := range p.th {
		if p.lostOnly && !p.RT.Lost(sim.ObjID(i)) {
			continue // Start handed it its tasks
		}
		if p.th[i].stateless {
			p.releaseCopies(sim.ObjID(i))
			p.resend(sim.ObjID(i))
		}
	}
}

// regenerate gives object id new backup threads until it has Config.Backups.
func (p *Protocol) regenerate(id sim.ObjID) {
	rt := p.RT
	t := &p.th[id]
	if t.stateless || rt.Lost(id) {
		return
	}
	for len(t.backups) < p.cfg.Backups {
		node, ok := p.placeBackup(id)
		if !ok {
			return
		}
		bk := p.register(id, node)
		p.whenSettled(id, func() {
			if p.fallback || !p.registered(id, bk) || rt.Lost(id) {
				return
			}
			ck, inbox, ok := p.takeState(id)
			if !ok {
				return
			}
			wire := ck.size
			for _, m := range inbox {
				c := m.Clone()
				c.Hdr.TN = uint64(uint32(m.Tag))
				c.Hdr.Flags &^= flagInjected
				ck.queue = append(ck.queue, c)
				wire += m.WireSize()
			}
			if p.logging(t) && len(inbox) > 0 {
				// The inbox of a re-executing thread holds objects whose
				// handling order was logged (the lost incarnation's
				// consequences of them were seen), and the thread handles
				// its inbox in order: the new backup gets that order, or
				// a re-activation from it would replay them by sequence
				// number and re-post other content under operation
				// identifiers already received.
				ck.log = make(map[uint64]msgKey, len(inbox))
				for i, m := range inbox {
					ck.log[ck.count+1+uint64(i)] = msgKey{m.Src, m.Hdr.Op}
				}
				wire += p.cfg.EntryBytes * int64(len(inbox))
			}
			p.ship(id, bk, rt.NodeOf(id), ck, wire)
		})
	}
}
