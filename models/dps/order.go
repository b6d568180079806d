package dps

// Order logging (Config.LogOrder): re-execution of order-dependent threads.
//
// The paper assumes deterministic operations whose result depends on the set
// of their inputs, not on the order in which concurrent inputs arrive (§3);
// re-execution in sequence-number order then reproduces the original outputs.
// A work-stealing search (pida) breaks that assumption: whether a worker
// answers a work request with work or with "no work" depends on whether its
// own continue message or the request came first, and both are concurrent, so
// their sequence numbers do not order them the way the original run did. A
// re-executed worker then re-posts, under an operation identifier its peer
// already received, an object with different content; the peer drops it
// (silent re-execution) and the termination credit or the work it carried is
// lost or doubled, and the search never ends (idle workers keep asking each
// other for work forever).
//
// The fix is the receiver-side determinant of pessimistic message logging,
// kept in the backup thread's volatile storage like everything else in DPS:
// when the active thread handles a data object, it sends the object's identity
// and its handling rank (EntryBytes on the wire) to every backup thread, and
// it holds back the data objects the handler posts until every backup has
// acknowledged the determinants up to that rank. A backup therefore knows the
// handling order of everything whose consequences left the node. Re-execution
// replays the logged objects in that order (waiting for duplicates still in
// flight), then the unlogged ones in sequence-number order, which is safe
// because none of their consequences were seen. A checkpoint records the rank
// it covers, so that the backup prunes its log with its queue; it is taken
// only when no output is held back (the paper's "wait for the running
// operation to end"), so that the state never implies a send that did not
// happen.

import (
	"cmp"
	"slices"

	"ftsim/sim"
)

// tagOrder is the protocol tag of a determinant transfer.
const tagOrder int32 = 5

// orderState is an active thread's order-logging state.
type orderState struct {
	dispN  uint64         // data objects handled (the rank of the last one)
	ackN   uint64         // every determinant up to this rank is at every backup
	pend   map[uint64]int // rank -> determinant transfers outstanding
	held   []*sim.Message // outputs waiting for their determinants, in send order
	need   []uint64       // rank each held output waits for
	act    uint32         // activation counter: voids callbacks of an older incarnation
	replay bool           // re-executing the logged order
	order  []msgKey       // logged objects still to deliver, in handling order
	parked map[msgKey]*sim.Message
	rest   []*sim.Message  // unlogged stored objects, by sequence number, after the log
	wait   map[msgKey]bool // unlogged objects in flight to the backup: rest waits for them
	late   []*sim.Message  // objects that arrived during replay and were not logged
	// settled are actions (checkpoints, backup regeneration) waiting for the
	// thread to be idle, with no output held back and no replay in progress.
	settled []func()
}

// unsettled reports whether the thread holds outputs back or replays its
// log: its settled actions wait.
func (o *orderState) unsettled() bool { return len(o.held) > 0 || o.replay }

// logging reports whether thread t logs its handling order (set in Start).
func (p *Protocol) logging(t *thread) bool { return t.logs }

// hold keeps an output of an order-logging thread back until the
// determinants of everything its sender handled so far are at the backups.
func (p *Protocol) hold(t *thread, m *sim.Message) bool {
	if !p.logging(t) || t.ord.ackN >= t.ord.dispN {
		return false
	}
	t.ord.held = append(t.ord.held, m)
	t.ord.need = append(t.ord.need, t.ord.dispN)
	p.C.Held++
	return true
}

// logDispatch sends the determinant of the object thread id is about to
// handle to each of its backups.
func (p *Protocol) logDispatch(id sim.ObjID, m *sim.Message) {
	rt := p.RT
	t := &p.th[id]
	t.ord.dispN++
	idx, key, act := t.ord.dispN, msgKey{m.Src, m.Hdr.Op}, t.ord.act
	if p.cfg.Audit {
		t.hist = append(t.hist, key)
	}
	if t.ord.pend == nil {
		t.ord.pend = map[uint64]int{}
	}
	from := rt.NodeOf(id)
	n := 0
	for _, bk := range t.backups {
		if !p.valid(bk) {
			continue
		}
		n++
		p.C.Determinants++
		p.C.DeterminantBytes += p.cfg.EntryBytes
		p.charge(from, p.cfg.EntryBytes)
		rt.Transfer(from, bk.node, p.cfg.EntryBytes, tagOrder, func(ok bool) {
			// a determinant of an incarnation lost since is void like its
			// checkpoints: the re-activated thread may handle that object
			// at another rank, and the log would list it twice
			if ok && !p.fallback && act == t.ord.act && p.registered(id, bk) && p.valid(bk) && (bk.ck == nil || idx > bk.ck.count) {
				p.logEntry(bk, idx, key)
			}
			p.ackOrder(id, act, idx)
		})
	}
	t.ord.pend[idx] = n
	if n == 0 {
		p.ackOrder(id, act, 0)
	}
}

// logEntry records at backup bk that the data object key was handled with
// rank idx; each entry takes EntryBytes of the backup's memory.
func (p *Protocol) logEntry(bk *backup, idx uint64, key msgKey) {
	if bk.log == nil {
		bk.log = map[uint64]msgKey{}
	}
	if _, ok := bk.log[idx]; !ok {
		bk.bytes += p.cfg.EntryBytes
		p.memAdd(bk.node, memQueue, p.cfg.EntryBytes)
	}
	bk.log[idx] = key
}

// ackOrder counts one determinant transfer of rank idx as over (arrived, or
// lost with its backup, which regeneration replaces by a full copy) and
// releases the outputs whose determinants are all in place.
func (p *Protocol) ackOrder(id sim.ObjID, act uint32, idx uint64) {
	rt := p.RT
	t := &p.th[id]
	if p.fallback || act != t.ord.act || rt.Lost(id) || !rt.Alive(rt.NodeOf(id)) {
		return
	}
	if idx > 0 {
		t.ord.pend[idx]--
	}
	for {
		r, ok := t.ord.pend[t.ord.ackN+1]
		if !ok || r > 0 {
			break
		}
		delete(t.ord.pend, t.ord.ackN+1)
		t.ord.ackN++
	}
	if p.cfg.Audit && t.ord.ackN > uint64(len(t.acked)) {
		t.acked = append(t.acked, t.hist[len(t.acked):t.ord.ackN]...)
	}
	i := 0
	for i < len(t.ord.held) && t.ord.need[i] <= t.ord.ackN {
		m := t.ord.held[i]
		m.SentAt = rt.Now()
		m.From = rt.NodeOf(id)
		p.duplicate(m)
		rt.Transmit(m)
		i++
	}
	if i > 0 {
		t.ord.held = slices.Delete(t.ord.held, 0, i)
		t.ord.need = slices.Delete(t.ord.need, 0, i)
	}
	p.runSettled(id)
}

// settled reports whether whenSettled would run a function at once.
func (p *Protocol) settled(id sim.ObjID) bool {
	return !p.RT.Running(id) && !p.th[id].ord.unsettled()
}

// whenSettled runs fn once thread id is idle, holds no output back and is not
// replaying (a thread that does not log its order holds nothing back, and
// replays only while it waits for duplicates in flight).
func (p *Protocol) whenSettled(id sim.ObjID, fn func()) {
	rt := p.RT
	t := &p.th[id]
	if t.ord.unsettled() {
		t.ord.settled = append(t.ord.settled, fn)
		return
	}
	// a running handler may still post outputs, which are then held
	rt.WhenObjectIdle(id, func() {
		if t.ord.unsettled() {
			t.ord.settled = append(t.ord.settled, fn)
			return
		}
		fn()
	})
}

func (p *Protocol) runSettled(id sim.ObjID) {
	t := &p.th[id]
	if len(t.ord.settled) == 0 || t.ord.unsettled() {
		return
	}
	fns := t.ord.settled
	t.ord.settled = nil
	for _, fn := range fns {
		p.whenSettled(id, fn)
	}
}

// replayOrder is the re-execution of a thread from a backup: the logged
// objects of prefix in handling order (LogOrder), then the stored rest by
// sequence number, which also waits for the objects in inFlight. It returns
// the messages deliverable now; the thread stays in replay until the
// missing logged objects and those in inFlight arrive (their duplicates are
// on their way).
func (p *Protocol) replayOrder(id sim.ObjID, prefix loggedPrefix, queue []*sim.Message, inFlight map[msgKey]bool) []*sim.Message {
	t := &p.th[id]
	t.ord.order = prefix.order
	t.ord.parked = map[msgKey]*sim.Message{}
	t.ord.rest, t.ord.late = nil, nil
	for _, m := range queue {
		k := msgKey{m.Src, m.Hdr.Op}
		if prefix.has[k] {
			t.ord.parked[k] = m
		} else {
			t.ord.rest = append(t.ord.rest, m)
		}
	}
	t.ord.wait = inFlight
	t.ord.replay = true
	return p.advance(id)
}

// loggedPrefix is the part of a backup's log a re-execution replays in its
// logged order: the objects of its ranks after the checkpoint's count
// through the first gap (loggedThrough), in order and as a set.
type loggedPrefix struct {
	order []msgKey
	has   map[msgKey]bool
}

// prefixOf is the loggedPrefix of log's ranks after count through last.
func prefixOf(count, last uint64, log map[uint64]msgKey) loggedPrefix {
	p := loggedPrefix{order: make([]msgKey, 0, last-count), has: make(map[msgKey]bool, last-count)}
	for r := count + 1; r <= last; r++ {
		p.order = append(p.order, log[r])
		p.has[log[r]] = true
	}
	return p
}

// loggedThrough is the last rank of the unbroken run of log entries after
// count: a re-execution replays that run, and nothing handled after its first
// gap had visible consequences.
func loggedThrough(count uint64, log map[uint64]msgKey) uint64 {
	for {
		if _, ok := log[count+1]; !ok {
			return count
		}
		count++
	}
}

// advance returns the logged objects that can be delivered now, in order, and
// ends the replay once the log is exhausted.
func (p *Protocol) advance(id sim.ObjID) []*sim.Message {
	t := &p.th[id]
	var out []*sim.Message
	for len(t.ord.order) > 0 {
		m, ok := t.ord.parked[t.ord.order[0]]
		if !ok {
			p.C.ReplayWaits++
			return out
		}
		delete(t.ord.parked, t.ord.order[0])
		t.ord.order = t.ord.order[1:]
		out = append(out, m)
	}
	if len(t.ord.wait) > 0 {
		return out
	}
	slices.SortStableFunc(t.ord.rest, func(a, b *sim.Message) int { return cmp.Compare(a.Hdr.Seq, b.Hdr.Seq) })
	out = append(out, t.ord.rest...)
	out = append(out, t.ord.late...)
	t.ord.rest, t.ord.late, t.ord.parked, t.ord.wait = nil, nil, nil, nil
	t.ord.replay = false
	return out
}

// park takes an application object that reached a replaying thread; it
// returns what can be delivered now.
func (p *Protocol) park(id sim.ObjID, m *sim.Message) []*sim.Message {
	t := &p.th[id]
	k := msgKey{m.Src, m.Hdr.Op}
	if slices.Contains(t.ord.order, k) {
		t.ord.parked[k] = m
		return p.advance(id)
	}
	if t.ord.wait[k] {
		delete(t.ord.wait, k)
		t.ord.rest = append(t.ord.rest, m)
		return p.advance(id)
	}
	t.ord.late = append(t.ord.late, m)
	return nil
}

// deliverReplay hands re-execution input to thread id; stored objects
// (flagInjected) count as replayed.
func (p *Protocol) deliverReplay(id sim.ObjID, msgs []*sim.Message) {
	rt := p.RT
	t := &p.th[id]
	for _, m := range msgs {
		if m.Hdr.Flags&flagInjected != 0 {
			m.To = rt.NodeOf(id)
			t.replaying++
			p.C.Replayed++
		}
		rt.Deliver(m)
	}
	if !t.ord.replay {
		p.runSettled(id)
	}
}
