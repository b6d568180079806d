package dps

// This file holds the threads' checkpoints: the timer of each thread (every
// Period), the checkpoint itself, its installation at the backups, and the
// duplicates a backup stores until a checkpoint makes them obsolete (or hands
// to its thread, OnControl, when the backup has become the active thread).

import (
	"cmp"
	"slices"

	"ftsim/internal/peermap"
	"ftsim/sim"
)

// tickState is where a thread's checkpoint timer (every Period) stands.
//
// A tick at which the checkpoint would be skipped (see OnTimer) does not
// re-arm the timer: it parks it, and every tick after it would be skipped
// too until something the skip depends on changes: the thread starts a
// handler (OnDispatch), one of its checkpoints reaches a backup, or the
// checkpoint a tick waits for is taken. unpark then re-arms the timer at the
// next tick of the same grid. The ticks in between are counted as skipped,
// not executed: with a period far shorter than a checkpoint's transfer or
// than the gaps between handlers (1 ns, say), running them kept the run
// crawling at its first percent and, while the thread ran, gave each tick a
// waiting closure, gigabytes of them.
type tickState struct {
	last    sim.Time   // the time of the latest tick: the grid is last + k·Period
	node    sim.NodeID // the node the timer lives on
	waiting bool       // the latest tick's checkpoint waits for the thread to settle
	parked  bool       // the timer is stopped at last (see above)
}

// armTimer starts thread id's checkpoint timer on its node: the first tick is
// a Period from now.
func (p *Protocol) armTimer(id sim.ObjID) {
	t := &p.th[id]
	t.tick = tickState{last: p.RT.Now(), node: p.RT.NodeOf(id)}
	p.schedTick(id, p.RT.Now()+p.cfg.Period)
}

// schedTick sets thread id's timer at time at; a timer set before is void.
func (p *Protocol) schedTick(id sim.ObjID, at sim.Time) {
	t := &p.th[id]
	t.timerGen++
	p.RT.SetTimer(t.tick.node, at, tagTimer, int64(t.timerGen)<<32|int64(id))
}

// unpark re-arms a parked timer at the next tick of its grid after now,
// counting the ticks it passed over as skipped.
func (p *Protocol) unpark(id sim.ObjID) {
	t := &p.th[id]
	if !t.tick.parked || t.tick.waiting || !p.tickAlive(id) {
		return // while a tick waits, the ticks after it are skipped: it unparks when it is done
	}
	now := p.RT.Now()
	next := t.tick.last + ((now-t.tick.last)/p.cfg.Period+1)*p.cfg.Period
	p.stopTick(id, now+1) // the ticks up to now were skipped
	p.schedTick(id, next)
}

// tickAlive reports whether the next tick of thread id's timer would still
// find the thread where the timer lives: a timer whose tick would find its
// thread lost or moved, or the protocol fallen back, would stop there.
func (p *Protocol) tickAlive(id sim.ObjID) bool {
	return !p.fallback && !p.RT.Lost(id) && p.RT.NodeOf(id) == p.th[id].tick.node
}

// stopTick ends thread id's parked timer at time at, counting its ticks
// before then as skipped, as they would have been had they run. (The ticks
// after one that waits for the thread to settle are counted when it is done,
// and not at all if it never is.)
func (p *Protocol) stopTick(id sim.ObjID, at sim.Time) {
	t := &p.th[id]
	if t.tick.parked && !t.tick.waiting && at > t.tick.last {
		p.C.SkippedCheckpoints += int64((at - t.tick.last - 1) / p.cfg.Period)
	}
	t.tick.parked = false
}

// OnTimer checkpoints an object at the end of its period, once its running
// operation has ended.
func (p *Protocol) OnTimer(node sim.NodeID, tag int32, arg int64) {
	if p.fallback || tag != tagTimer {
		return
	}
	rt := p.RT
	id := sim.ObjID(arg & 0xffffffff)
	t := &p.th[id]
	if uint32(arg>>32) != t.timerGen || rt.NodeOf(id) != node || rt.Lost(id) {
		return
	}
	if t.tick.waiting {
		// Skipped, as is every tick until the waiting one is done, which
		// counts them (its closure would have run theirs after its own).
		t.tick.parked = true
		return
	}
	t.tick.last = rt.Now()
	if p.settled(id) && p.skipTick(t) {
		// Skipped, and so is every tick until unpark.
		p.C.SkippedCheckpoints++
		t.tick.parked = true
		return
	}
	p.schedTick(id, rt.Now()+p.cfg.Period)
	t.tick.waiting = true
	gen := t.timerGen
	p.whenSettled(id, func() {
		ours := t.timerGen == gen // the timer has not been re-armed by another path since
		if ours {
			t.tick.waiting = false
		}
		if p.fallback || rt.Lost(id) || rt.NodeOf(id) != node {
			if ours {
				t.tick.parked = false // so would the ticks after it have returned: the timer is dead
			}
			return
		}
		if p.skipTick(t) {
			p.C.SkippedCheckpoints++
		} else {
			p.checkpoint(id)
		}
		if ours {
			p.unpark(id)
		}
	})
}

// skipTick reports whether a tick finding thread t settled skips its
// checkpoint. It does while the previous checkpoint has not reached every
// backup: with a period shorter than a checkpoint's transfer, checkpoints
// would queue on the link, and the memory they hold grow, without bound (a
// checkpointing library skips a tick while a checkpoint is in progress). It
// does too when the thread has handled nothing since: the state is the one
// saved. On a node whose protocol CPU work already exceeds its cores, that
// work goes ahead of the application's, which would never run again if every
// tick added more. (A schedule by handled objects slows down with the
// application its checkpoints delay: it needs no such rule.)
func (p *Protocol) skipTick(t *thread) bool { return t.ckSending > 0 || t.handled == 0 }

// checkpoint sends object id's state, protocol state and processed list to its
// backups. The object is not running.
func (p *Protocol) checkpoint(id sim.ObjID) {
	rt := p.RT
	t := &p.th[id]
	if len(t.backups) == 0 || rt.Lost(id) || rt.Running(id) {
		return
	}
	ck, _, ok := p.takeState(id)
	if !ok {
		return
	}
	wire := ck.size + p.cfg.EntryBytes*t.since
	t.since, t.handled, t.ckProg = 0, 0, rt.ObjectProgress(id)
	from := rt.NodeOf(id)
	p.charge(from, wire)
	for _, bk := range t.backups {
		if !bk.ready {
			// Being regenerated: only its regeneration state carries the
			// objects queued at the thread before it was registered; a
			// checkpoint arriving first would make it ready without them.
			continue
		}
		p.C.Checkpoints++
		p.C.CheckpointBytes += wire
		st := rt.Stats()
		st.Checkpoints++
		st.CheckpointBytes += wire
		t.ckSending++
		rt.Transfer(from, bk.node, wire, tagCkpt, func(ok bool) {
			p.th[id].ckSending--
			p.unpark(id)
			if ok && !p.fallback {
				p.charge(bk.node, wire)
				p.install(id, bk, ck)
			}
		})
	}
}

// takeState copies what a backup of object id needs: its state, protocol
// state and processed list, stamped; and the objects queued at it. ok is
// false when the state did not serialise, which aborts the run.
func (p *Protocol) takeState(id sim.ObjID) (ck *ckptData, inbox []*sim.Message, ok bool) {
	rt := p.RT
	s, err := rt.Snapshot(id)
	if err != nil {
		rt.Abort(err.Error())
		return nil, nil, false
	}
	t := &p.th[id]
	p.stamp++
	inbox = s.Inbox
	ck = &ckptData{stamp: p.stamp, act: t.ord.act, count: t.ord.dispN, unstarted: !s.Started, state: s.State, size: rt.ModeledSize(id),
		pst: t.pst.clone(), processed: t.processed.clone()}
	if p.cfg.Audit {
		ck.hist = slices.Clone(t.hist)
	}
	return ck, inbox, true
}

// registered reports whether bk is still one of object id's backups.
func (p *Protocol) registered(id sim.ObjID, bk *backup) bool {
	return slices.Contains(p.th[id].backups, bk)
}

// install replaces a backup's state by a newer checkpoint and prunes its
// queue of the objects processed before it. A state taken by an incarnation
// that has since been lost is ignored: it is ahead of the re-activated
// thread, and pruning by it would drop objects the thread has yet to handle
// again. For the same reason a backup keeps its own state when it is ahead
// of the checkpoint (it handled an object the checkpoint has not): that
// state came from the lost incarnation, which checkpointed on this backup
// but not on the one the thread was re-activated from, and the backup's
// queue no longer holds what the checkpoint would need. The re-executed
// thread catches up with that state, and its later checkpoints replace it.
// (An order-logging thread may re-execute another order than that state's:
// activate marks such a backup stale, and it is no source until a
// checkpoint replaces its state.)
func (p *Protocol) install(id sim.ObjID, bk *backup, ck *ckptData) {
	if !p.registered(id, bk) || !p.valid(bk) || ck.act != p.th[id].ord.act {
		return
	}
	for _, m := range ck.queue {
		p.store(bk, m)
	}
	for r, k := range ck.log {
		if r > ck.count {
			p.logEntry(bk, r, k)
		}
	}
	if bk.ck != nil && bk.ready && (ck.stamp <= bk.ck.stamp || !ck.processed.covers(&bk.ck.processed)) {
		return
	}
	old := int64(0)
	if bk.ck != nil && bk.ready {
		old = bk.ck.size
	}
	p.memAdd(bk.node, memState, ck.size-old)
	bk.ck, bk.processed, bk.ready, bk.stale = ck, ck.processed, true, false
	for _, k := range sortedKeys(&bk.queue) {
		if ck.processed.has(k.src, k.op) {
			p.unstore(bk, k)
		}
	}
	for r := range bk.log {
		if r <= ck.count {
			delete(bk.log, r)
			bk.bytes -= p.cfg.EntryBytes
			p.memAdd(bk.node, memQueue, -p.cfg.EntryBytes)
		}
	}
}

func (p *Protocol) store(bk *backup, m *sim.Message) {
	k := msgKey{m.Src, m.Hdr.Op}
	if bk.processed.has(k.src, k.op) {
		return
	}
	q := bk.queue.Ptr(k)
	if q.m != nil {
		return
	}
	*q = stored{m, m.WireSize()}
	bk.bytes += q.wire
	p.memAdd(bk.node, memQueue, q.wire)
}

func (p *Protocol) unstore(bk *backup, k msgKey) {
	wire := bk.queue.Get(k).wire
	bk.queue.Del(k)
	bk.bytes -= wire
	p.memAdd(bk.node, memQueue, -wire)
}

func sortedKeys(q *peermap.Map[msgKey, stored]) []msgKey {
	ks := q.AppendKeys(nil)
	slices.SortFunc(ks, func(a, b msgKey) int {
		return cmp.Or(cmp.Compare(a.src, b.src), cmp.Compare(a.op, b.op))
	})
	return ks
}

// OnControl stores a duplicate at a backup thread, or hands it to the thread if
// the backup has become the active thread meanwhile.
func (p *Protocol) OnControl(m *sim.Message) {
	if p.fallback || (m.Tag != tagDup && m.Tag != tagFwd) {
		return
	}
	rt := p.RT
	if m.Epoch != rt.Epoch() {
		return // a copy of a data object sent before a restart from scratch
	}
	id := m.Dst
	t := &p.th[id]
	n := m.To
	if rt.NodeOf(id) == n && !rt.Lost(id) {
		if t.received.has(m.Src, m.Hdr.Op) {
			p.C.LateCopies++
			return
		}
		if p.ownRepost(id, m) && !(t.ord.replay && slices.Contains(t.ord.order, msgKey{m.Src, m.Hdr.Op})) {
			p.C.OwnCopies++
			return
		}
		a := appCopy(m)
		t.received.add(a.Src, a.Hdr.Op)
		if p.copyIn != nil {
			p.copyIn[auditKey(a)] = true
		}
		p.forwardGap(t, a, n)
		if t.ord.replay {
			p.deliverReplay(id, p.park(id, a))
			return
		}
		rt.Deliver(a)
		return
	}
	for _, bk := range t.backups {
		if bk.node == n && p.valid(bk) {
			p.charge(n, m.Size)
			p.store(bk, m)
			return
		}
	}
}

// appCopy turns a stored duplicate back into the application message.
func appCopy(c *sim.Message) *sim.Message {
	a := c.Clone()
	a.Control = false
	a.Tag = int32(uint32(c.Hdr.TN))
	a.Hdr.TN = 0
	return a
}
