package mlog

// This file holds the migration protocol of fast restart (section 3.5,
// Figure 2) and what it guarantees when the restarting node crashes while it
// spreads the restored objects: every migrating object is recreated, and
// exactly one copy of it survives.
//
// C (the restarting node) sends object W to E. C tells its buddy D, which
// marks W as potentially migrated and acknowledges; C then sends W's
// checkpoint to E and to E's buddy F; F stores it as part of E's checkpoint and
// acknowledges to C, D and E; E restores W once it has both the state and F's
// acknowledgement, and acknowledges to C and D. If C crashes before D heard
// from both E and F, D asks E whether it has W and F whether it has W's
// checkpoint: if both do, W stays on E; otherwise W is recreated on C's
// replacement from D's copy and E and F throw theirs away.

import (
	"fmt"
	"maps"
	"slices"

	"ftsim/sim"
)

// migration is the state of one object sent by the restarting node C to E.
type migration struct {
	o         *object
	e, f      sim.NodeID
	atE       bool     // E holds W's state
	atF       bool     // F holds W's checkpoint as part of E's
	acked     bool     // F's acknowledgement reached E
	restored  bool     // E restored W
	heardE    bool     // D got E's acknowledgement
	heardF    bool     // D got F's acknowledgement: with E's, D marks W migrated
	discarded bool     // D decided to recreate W on C's replacement: E and F dropped their copies
	dCkpt     *objCkpt // W's checkpoint on D, its only copy until F holds one
	fCkpt     *objCkpt // the copy F stored
	finc      uint32   // F's incarnation when it stored W's checkpoint and remote message log
	finish    func()   // E restores W if it has the state and F's acknowledgement
	done      func()   // tells the placement W is placed
}

// migrateRestart sends restored object o from the restarting node C to node E
// with the migration protocol, and calls done once E restored it.
func (p *Protocol) migrateRestart(r *recovery, o *object, e sim.NodeID, done func()) {
	rt := p.RT
	c := r.node
	d, f := r.buddy, p.buddy(e)
	tb := p.cfg.TicketBytes
	ck := o.ckpt
	size := max(ck.size, tb)
	// o's remote message log after ck goes to F with the checkpoint: left
	// on D, a failure of D (E itself when E is the node after C, the first
	// destination) would leave o's checkpoint without the TNs it replays
	tuples := int64(0)
	for _, x := range o.rlog {
		if x.tn > ck.tnProcessed {
			tuples++
		}
	}
	fsize := size + tuples*tb
	m := &migration{o: o, e: e, f: f, dCkpt: ck}
	r.migs[o.id] = m
	attempt := r.attempt
	einc := rt.Incarnation(e)
	noop := func(bool) {}
	// C's side belongs to this placement attempt; E's and F's side go on
	// after a crash of C until D's decision
	current := func() bool { return !p.fallen && !r.dead && r.attempt == attempt }
	valid := func() bool { return !p.fallen && !r.dead && !m.discarded && rt.Holds(e, einc) }
	finish := func() {
		if m.restored || !m.atE || !m.acked || !valid() {
			return
		}
		m.restored = true
		if m.atF && m.f != sim.None {
			// o's remote message log is F's now, which holds it since
			// its acknowledgement (D's copy goes: o's tuples have one
			// holder); until E restores o, D's still serves a restart
			// that recreates o elsewhere
			for i := range o.rlog {
				if x := &o.rlog[i]; x.tn > ck.tnProcessed {
					p.memAdd(x.holder, x.inc, sim.MemLog, -tb)
					x.holder, x.inc = m.f, m.finc
					p.memAdd(m.f, m.finc, sim.MemLog, tb)
				}
			}
		}
		p.restoreObj(o, e)
		p.Stats.Migrations++
		rt.Transfer(e, c, tb, tagMigrate, noop)
		if d != sim.None {
			rt.Transfer(e, d, tb, tagMigrate, func(ok bool) { m.heardE = m.heardE || ok })
		}
		if current() {
			done()
		}
	}
	m.finish, m.done = finish, done
	// F failed, and the restart already knows it (its replacement is still
	// booting, so it is still E's buddy): E restores W as if it had no
	// buddy (W's checkpoint stays where it was, and E checkpoints on its new
	// buddy once the topology settles), and D, if C crashes, asks E alone.
	// Waiting for F would wait for ever. A failure of F during the
	// migration is handled when it is detected (destinationCrash).
	fDown := slices.Contains(r.down, f)
	send := func() {
		p.event("send", c, e, f)
		rt.Transfer(c, e, size, tagMigrate, func(ok bool) {
			if !ok || !valid() {
				return
			}
			m.atE = true
			p.event("at E", c, e, f)
			finish()
		})
		if f == sim.None {
			m.atF, m.acked = true, true
			return
		}
		if fDown {
			m.f, m.acked = sim.None, true
			finish()
			return
		}
		rt.Transfer(c, f, fsize, tagMigrate, func(ok bool) {
			if !ok || !valid() {
				return
			}
			m.atF = true
			finc := rt.Incarnation(f)
			if !ck.initial { // F keeps o's checkpoint as part of E's
				nc := *ck
				p.memAdd(ck.holder, ck.inc, sim.MemCheckpoint, -ck.size)
				nc.holder, nc.inc = f, finc
				p.memAdd(f, nc.inc, sim.MemCheckpoint, nc.size)
				o.ckpt = &nc
				m.fCkpt = &nc
			}
			m.finc = finc
			p.event("at F", c, e, f)
			rt.Transfer(f, e, tb, tagMigrate, func(ok bool) {
				if ok {
					m.acked = true
					finish()
				}
			})
			rt.Transfer(f, c, tb, tagMigrate, noop)
			if d != sim.None {
				rt.Transfer(f, d, tb, tagMigrate, func(ok bool) { m.heardF = m.heardF || ok })
			}
		})
	}
	if d == sim.None || slices.Contains(r.down, d) {
		send()
		return
	}
	// D marks o as potentially migrated. A D that failed (known to the
	// restart, its replacement still booting, or failing meanwhile) cannot
	// answer, and a C waiting for it would wait for ever: C sends o without
	// the mark, as when it has no buddy.
	cinc := rt.Incarnation(c)
	cAlive := func() bool { return rt.Holds(c, cinc) }
	rt.Transfer(c, d, tb, tagMigrate, func(ok bool) {
		if !current() || !cAlive() {
			return
		}
		if !ok {
			send()
			return
		}
		rt.Transfer(d, c, tb, tagMigrate, func(ok bool) {
			if current() && cAlive() {
				send() // D's answer, or D failed after marking o
			}
		})
	})
}

// event reports a protocol event to the test hook.
func (p *Protocol) event(name string, a, b, c sim.NodeID) {
	if p.hook != nil {
		p.hook(name, a, b, c)
	}
}

// sourceCrash handles a crash of the restarting node of r while it restores
// and spreads the failed node's objects (before any resend), when the node
// held nothing but those objects (a spare). The objects it held are recreated
// on its own replacement from the checkpoints on its buddy D, and D queries
// the destinations of the unfinished migrations. It reports false when the
// pattern is not this one.
func (p *Protocol) sourceCrash(r *recovery, f sim.Failure, lost []*object) bool {
	rt := p.RT
	if f.Node != r.node || !r.placing {
		return false
	}
	for _, o := range lost {
		if !slices.Contains(r.objs, o) {
			return false // it had objects of its own: two nodes' logs are lost
		}
	}
	d := r.buddy
	if r.migs == nil { // it crashed before placing anything
		d = p.buddy(r.node)
	}
	if d == sim.None || !rt.Alive(d) {
		return false
	}
	for _, o := range r.objs {
		ck := o.ckpt
		if m := r.migs[o.id]; m != nil {
			ck = m.dCkpt
		}
		if !p.valid(ck) {
			return false
		}
	}
	p.Stats.SourceCrashes++
	r.attempt++
	// not placed until its replacement has recreated them: a group of a
	// crashed destination restored meanwhile must not start the resends
	r.failed, r.node, r.placed = f.Node, sim.None, false
	// what the crashed node held, and what an earlier attempt had still to
	// recreate on it (a crash of the replacement before it placed them)
	for _, o := range lost {
		if !slices.Contains(r.redo, o) {
			r.redo = append(r.redo, o)
		}
	}
	if r.migs == nil { // nothing was restored yet: every object is to recreate
		r.redo = slices.Clone(r.objs)
	}
	var pend []*migration
	for _, id := range slices.Sorted(maps.Keys(r.migs)) {
		// D marked the others migrated (they live on E); a discarded one is
		// in redo already
		if m := r.migs[id]; (!m.heardE || !m.heardF) && !m.discarded {
			pend = append(pend, m)
		}
	}
	r.ready = len(pend) + 1 // the queries and the replacement
	for _, m := range pend {
		p.query(r, d, m)
	}
	p.replace(r)
	return true
}

// query is D's question to E (does W exist there?) and to F (does W's
// checkpoint?), and its decision once both answered (a dead node answers no).
func (p *Protocol) query(r *recovery, d sim.NodeID, m *migration) {
	rt := p.RT
	tb := p.cfg.TicketBytes
	attempt := r.attempt
	p.Stats.MigrationQueries++
	answers := 0
	var atE, atF bool
	ask := func(to sim.NodeID, has func() bool, set func(bool)) {
		rt.Transfer(d, to, tb, tagMigrate, func(ok bool) {
			if !ok {
				answers++
				p.decide(r, attempt, d, m, answers, atE, atF)
				return
			}
			yes := has() // the answer leaves now: E stops processing W until told
			rt.Transfer(to, d, tb, tagMigrate, func(ok bool) {
				set(ok && yes)
				answers++
				p.decide(r, attempt, d, m, answers, atE, atF)
			})
		})
	}
	ask(m.e, func() bool { return m.atE }, func(v bool) { atE = v })
	if m.f == sim.None {
		atF = true
		answers++
		return
	}
	ask(m.f, func() bool { return m.atF }, func(v bool) { atF = v })
}

// decide applies D's decision on migration m once both answers are in: W
// stays on E, or it is recreated on the restarting node's replacement and E
// and F drop their copies.
func (p *Protocol) decide(r *recovery, attempt int, d sim.NodeID, m *migration, answers int, atE, atF bool) {
	if answers < 2 || p.fallen || r.dead || r.attempt != attempt {
		return
	}
	rt := p.RT
	o := m.o
	if atE && atF && rt.Alive(m.e) {
		p.Stats.MigrationsKept++
		if !m.restored { // D asks E to continue with W
			m.restored = true
			p.restoreObj(o, m.e)
			p.Stats.Migrations++
		}
	} else {
		p.Stats.MigrationsUndone++
		m.discarded = true
		if m.fCkpt != nil && o.ckpt == m.fCkpt { // F throws its copy away; D's is W's again
			p.memAdd(m.fCkpt.holder, m.fCkpt.inc, sim.MemCheckpoint, -m.fCkpt.size)
			p.memAdd(m.dCkpt.holder, m.dCkpt.inc, sim.MemCheckpoint, m.dCkpt.size)
			o.ckpt = m.dCkpt
		}
		r.redo = append(r.redo, o)
	}
	p.stepDone(r)
}

// replaced: the restarting node's replacement is in its slot.
func (p *Protocol) replaced(r *recovery) {
	if r.attempt == 0 {
		p.fetch(r)
		return
	}
	p.stepDone(r)
}

// stepDone counts down what a new placement waits for (D's decisions and the
// replacement), then fetches the checkpoints of the objects to recreate.
func (p *Protocol) stepDone(r *recovery) {
	if r.ready--; r.ready == 0 {
		slices.SortFunc(r.redo, func(a, b *object) int { return int(a.id - b.id) })
		p.fetch(r)
	}
}

// placeRedo recreates on the new restarting node the objects that did not
// survive the crash of the previous one, then starts the resend phase.
func (p *Protocol) placeRedo(r *recovery) {
	r.buddy = p.buddy(r.node)
	for _, o := range r.redo {
		p.restoreObj(o, r.node)
	}
	r.redo = nil
	r.placed = true
	p.tryResend(r)
}

// tryResend starts the resend phase once every object is placed: the
// restarting node's, and those of crashed destinations.
func (p *Protocol) tryResend(r *recovery) {
	if !r.placed || r.hold > 0 || !r.placing || p.fallen || r.dead {
		return
	}
	for _, o := range r.extra {
		if !slices.Contains(r.objs, o) {
			r.objs = append(r.objs, o)
		}
	}
	r.extra = nil
	slices.SortFunc(r.objs, func(a, b *object) int { return int(a.id - b.id) })
	p.resendPhase(r)
}

// destinationCrash handles, with the multiple-failure extension, a crash of a
// node E other than the restarting node C while C restores and spreads the
// failed node's objects (before any resend). An object W on its way to E
// whose checkpoint F (E's buddy) holds goes with E's objects; otherwise it
// continues on C, which still has it (D's answer to "does F have W?"). An
// object on its way to another node whose F was E gets its checkpoint back on
// D and is restored on its destination without F's acknowledgement. E's
// objects are restored from F on E's replacement and join the resend phase of
// the first restart: the extension keeps the logs (full_log) and the TNs (on
// the receivers' buddies) that two concurrent restarts need. E may also fail
// before C exists (its spare still booting, nothing placed): several nodes
// failing at once, a chassis. It reports false when the pattern is not this
// one, with what was lost (a checkpoint or a remote message log) when the
// pattern is and that loss makes it unrecoverable.
func (p *Protocol) destinationCrash(r *recovery, f sim.Failure, lost []*object) (ok bool, loss string) {
	rt := p.RT
	if !p.cfg.MultiFailure || !r.placing || r.attempt > 0 {
		return false, ""
	}
	// with no restarting node yet (its spare boots), nothing has been
	// placed: E's objects are restored beside r's, and join its resends
	if r.node == sim.None && len(r.migs) > 0 || r.node != sim.None && (f.Node == r.node || !rt.Alive(r.node)) {
		return false, ""
	}
	e := f.Node
	group := slices.Clone(lost)
	var toC, fixF []*migration
	for _, id := range slices.Sorted(maps.Keys(r.migs)) {
		m := r.migs[id]
		switch {
		case m.e == e && !m.restored && m.atF && m.f != sim.None && rt.Alive(m.f):
			group = append(group, m.o) // F has it: the migration stands, W goes with E's objects
		case m.e == e && !m.restored:
			toC = append(toC, m)
		case m.f == e && !m.restored:
			fixF = append(fixF, m)
		}
	}
	// every object not yet placed anywhere needs a live checkpoint and
	// remote message log (E may have been D, which holds both)
	for _, o := range r.objs {
		ck := o.ckpt
		for _, m := range append(slices.Clone(toC), fixF...) {
			if m.o == o {
				ck = m.dCkpt
			}
		}
		if rt.Lost(o.id) && !slices.Contains(group, o) {
			if note := p.restorable(o, ck); note != "" {
				return false, note
			}
		}
	}
	floors, note := p.recoverable(group)
	if note != "" {
		return false, note
	}
	maps.Copy(p.floors, floors)
	p.Stats.DestCrashes++
	r.hold++                     // before any placement completes below: the resends wait for E's objects
	back := func(m *migration) { // F's copy is gone or thrown away: D's is W's again
		if m.fCkpt != nil && m.o.ckpt == m.fCkpt {
			p.memAdd(m.fCkpt.holder, m.fCkpt.inc, sim.MemCheckpoint, -m.fCkpt.size)
			p.memAdd(m.dCkpt.holder, m.dCkpt.inc, sim.MemCheckpoint, m.dCkpt.size)
			m.o.ckpt = m.dCkpt
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.migs)) {
		if m := r.migs[id]; m.e == e && !m.restored && slices.Contains(group, m.o) {
			p.Stats.MigrationsKept++
			m.discarded = true // E's old life is gone; F's copy restores W with E's objects
			m.done()
		}
	}
	for _, m := range toC { // D confirmed F does not have W: W continues on C
		p.Stats.MigrationsUndone++
		m.discarded = true
		back(m)
		p.restoreObj(m.o, r.node)
		m.done()
	}
	for _, m := range fixF { // E was F: W's destination goes on without F's acknowledgement
		back(m)
		m.fCkpt, m.acked = nil, true
		m.finish()
	}
	r.down = append(r.down, e)
	for _, o := range group {
		if !slices.Contains(r.extra, o) {
			r.extra = append(r.extra, o)
		}
	}
	slices.SortFunc(group, func(a, b *object) int { return int(a.id - b.id) })
	p.restoreGroup(r, e, group)
	return true, ""
}

// groupSpare is a spare booting for crashed destination e's group, and what
// to do if it fails while booting.
type groupSpare struct {
	e     sim.NodeID
	again func()
}

// restoreGroup restores the objects of crashed destination e on a spare (or
// the next surviving node) from their checkpoints, then lets the restart of r
// go on.
func (p *Protocol) restoreGroup(r *recovery, e sim.NodeID, group []*object) {
	rt := p.RT
	alive := func() bool { return !p.fallen && !r.dead }
	restore := func(n sim.NodeID) {
		r.down = slices.DeleteFunc(r.down, func(x sim.NodeID) bool { return x == e })
		p.afterTopology()
		bytes := map[sim.NodeID]int64{}
		for _, o := range group {
			if ck := o.ckpt; !ck.initial {
				bytes[ck.holder] += ck.size
			}
			for _, x := range o.rlog {
				if x.tn > o.ckpt.tnProcessed {
					bytes[x.holder] += p.cfg.TicketBytes
				}
			}
		}
		pending, lost := 1, false
		done := func(ok bool) {
			lost = lost || !ok
			if pending--; pending > 0 || !alive() {
				return
			}
			if lost { // a holder died meanwhile: a failure during the restart
				p.fallback(sim.Failure{Node: e}, fmt.Sprintf("a checkpoint of node %d's objects was lost while they were restored", e))
				return
			}
			for _, o := range group {
				p.restoreObj(o, n)
			}
			r.hold--
			p.tryResend(r)
		}
		for _, h := range slices.Sorted(maps.Keys(bytes)) {
			pending++
			rt.Transfer(h, n, bytes[h], tagFetch, done)
		}
		done(true)
	}
	var take func()
	take = func() {
		spare, ok := rt.TakeSpare(func(s sim.NodeID) {
			if !alive() {
				return
			}
			delete(p.bootingGroup, s)
			rt.ReplaceSlot(e, s)
			p.arm(s)
			restore(s)
		})
		if ok {
			p.bootingGroup[spare] = groupSpare{e, take}
			return
		}
		slots := rt.Slots()
		i := slices.Index(slots, e)
		var n sim.NodeID = sim.None
		for k := 1; k < len(slots) && i >= 0; k++ {
			if c := slots[(i+k)%len(slots)]; rt.Alive(c) {
				n = c
				break
			}
		}
		rt.RemoveSlot(e)
		if n == sim.None {
			p.fallback(sim.Failure{Node: e}, "every node failed and no spare is left")
			return
		}
		restore(n)
	}
	take()
}
