package cpr

// This file holds the recovery: after a detected failure every object rolls
// back to the newest checkpoint whose pieces all survive, on the spares or
// on the survivors, and the buddy tier is rebuilt.

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"ftsim/sim"
)

// OnFailure aborts any checkpoint or recovery in progress (and their storage
// operations), stops the application, and recovers once the replacements
// have booted.
func (p *Protocol) OnFailure(f sim.Failure) {
	rt := p.RT
	p.gen++
	p.busy, p.due, p.recovering = true, false, true
	rt.PauseApp()
	rt.NewEpoch()
	// the application is killed everywhere: the checkpoint writes and the
	// recovery reads it had in flight stop with it
	for _, n := range rt.Slots() {
		rt.CancelStorage(n)
	}
	p.notBef = max(p.notBef, rt.Now()+rt.Config().Downtime)
	if p.nodes.Failed(f) && len(rt.Slots()) > 0 {
		rt.Place() // restart on fewer nodes: objects are spread over the survivors
	}
	p.maybeRecover()
}

// maybeRecover recovers, after the downtime, once the node set is ready:
// no spare booting, no wait for repaired nodes. With no node left and none
// to come (no repairs), the run cannot go on.
func (p *Protocol) maybeRecover() {
	rt := p.RT
	if p.nodes.Pending() {
		return
	}
	if len(rt.Slots()) == 0 {
		st := rt.Stats()
		st.Unrecoverable++
		st.UnrecoverableNote = "every node failed and no spare is left"
		return
	}
	gen := p.gen
	rt.At(p.notBef, func() {
		if gen == p.gen && !p.nodes.Pending() {
			p.recover(gen)
		}
	})
}

// recover rolls every object back to the newest surviving checkpoint.
func (p *Protocol) recover(gen int) {
	rt := p.RT
	var cp *checkpoint
	tier := Tier(-1)
	for i := len(p.cps) - 1; i >= 0 && cp == nil; i-- {
		for _, l := range p.cfg.Levels { // levels are listed cheapest first
			if p.survives(p.cps[i], l.Tier) {
				cp, tier = p.cps[i], l.Tier
				break
			}
		}
	}
	// The relaunched job counts its checkpoints on from the one it restores
	// (from 0 after a restart from scratch), as SCR and FTI restore their
	// checkpoint id: the levels' schedule (every) follows that count.
	if cp == nil {
		// nothing survives: start again from the initial state
		p.RestoredFrom = append(p.RestoredFrom, "scratch")
		p.passed, p.seq = 0, 0
		rt.RestartAll()
		p.resume()
		return
	}
	p.RestoredFrom = append(p.RestoredFrom, tier.String())
	p.passed, p.seq = cp.boundary, cp.n
	began := rt.Now()
	// every object is read onto its (possibly new) node from where its
	// piece lives, as many bytes as were written
	type route struct {
		from, to sim.NodeID
	}
	reads := map[route]int64{}
	for i := range cp.snaps {
		to := rt.NodeOf(sim.ObjID(i))
		loc, _ := p.source(cp, tier, cp.owner[i], to)
		reads[route{loc.holder, to}] += cp.size[i]
	}
	routes := make([]route, 0, len(reads))
	for r := range reads {
		routes = append(routes, r)
	}
	sort.Slice(routes, func(i, j int) bool {
		if routes[i].to != routes[j].to {
			return routes[i].to < routes[j].to
		}
		return routes[i].from < routes[j].from
	})
	restore := func() {
		for _, n := range rt.Slots() {
			rt.Span(n, began, rt.Now(), "recovery")
		}
		p.RestoreTime = append(p.RestoreTime, rt.Now()-began)
		for i, s := range cp.snaps {
			id := sim.ObjID(i)
			if err := rt.Restore(id, rt.NodeOf(id), s); err != nil {
				rt.Abort(fmt.Sprintf("restore: %v", err))
				return
			}
		}
		p.resume()
	}
	pending := 1
	done := func(bool) {
		pending--
		if pending > 0 || gen != p.gen {
			return
		}
		if tier == Buddy && !p.cfg.NoRebuild {
			p.rebuild(cp, gen, restore)
			return
		}
		restore()
	}
	for _, r := range routes {
		pending++
		switch {
		case tier == PFS:
			rt.StorageRead(r.to, sim.PFS, reads[r], done)
		case r.from == r.to:
			t := sim.Disk
			if tier != Disk {
				t = sim.Memory
			}
			rt.StorageRead(r.to, t, reads[r], done)
		default:
			rt.Transfer(r.from, r.to, reads[r], sim.TagTransfer, done)
		}
	}
	done(true)
}

// rebuild gives every piece of the current placement its two buddy-tier
// copies of checkpoint cp again, just restored from that tier, and calls
// then when they are written: failures left some pieces with one copy (the
// failed node's, on its buddy; its partner's, at home) and, without spares,
// regrouped the objects into new pieces. A piece that kept copies keeps
// them; the node that holds it now writes any missing copy to its memory and
// sends one to its buddy if no other node has one. SCR rebuilds its cached
// datasets so in SCR_Init, before the application reads them back; without
// it a second failure before the next checkpoint (of the failed node's
// buddy, or of the node whose buddy failed) would lose a piece that the
// first left with a single copy.
func (p *Protocol) rebuild(cp *checkpoint, gen int, then func()) {
	rt := p.RT
	re := &checkpoint{n: cp.n, boundary: cp.boundary, snaps: cp.snaps, size: cp.size,
		owner: make([]sim.NodeID, len(cp.owner)), bytes: make([]int64, rt.NumNodes()), copies: map[Tier]pieceCopies{}}
	was := map[sim.NodeID][]int{} // the objects of each piece of cp, by the node that wrote it
	now := map[sim.NodeID][]int{} // and of each piece of the current placement
	for i, o := range cp.owner {
		n := rt.NodeOf(sim.ObjID(i))
		re.owner[i] = n
		re.bytes[n] += cp.size[i]
		was[o] = append(was[o], i)
		now[n] = append(now[n], i)
	}
	writers := slices.Sorted(maps.Keys(now))
	locs := make(pieceCopies, rt.NumNodes())
	re.copies[Buddy] = locs
	pending := 1
	finish := func(bool) {
		pending--
		if pending > 0 || gen != p.gen {
			return // a failure during the rebuild: its recovery starts again
		}
		p.replaceBuddyTier(cp, re)
		then()
	}
	for _, n := range writers {
		objs := now[n]
		var have []copyLoc
		if old := cp.owner[objs[0]]; slices.Equal(was[old], objs) {
			for _, loc := range cp.copies[Buddy][old] {
				if p.valid(loc) {
					have = append(have, loc)
				}
			}
		}
		b := re.bytes[n]
		if !slices.ContainsFunc(have, func(l copyLoc) bool { return l.holder == n }) {
			have = append(have, copyLoc{holder: n, inc: rt.Incarnation(n)})
			pending++
			p.RebuiltBytes += b
			rt.StorageWrite(n, sim.Memory, b, finish)
		}
		if to := p.buddy(n); to != n && !slices.ContainsFunc(have, func(l copyLoc) bool { return l.holder != n }) {
			have = append(have, copyLoc{holder: to, inc: rt.Incarnation(to)})
			pending++
			p.RebuiltBytes += b
			rt.Transfer(n, to, b, sim.TagTransfer, finish)
		}
		locs[n] = have
	}
	finish(true)
}

// replaceBuddyTier makes re, a rebuild of checkpoint cp, the holder of
// cp's buddy tier; cp stays for its other tiers, if any.
func (p *Protocol) replaceBuddyTier(cp, re *checkpoint) {
	p.accountTier(cp, Buddy, -1)
	delete(cp.copies, Buddy)
	p.account(re, +1)
	i := slices.Index(p.cps, cp)
	if len(cp.copies) == 0 {
		p.cps[i] = re
		return
	}
	p.cps = slices.Insert(p.cps, i+1, re)
}

// RestoreCost is the time a restore after one failure takes, about, when
// a checkpoint costs c: reading it back costs what writing it did, and a
// rebuild of the buddy tier, when the first level is buddy on every
// checkpoint, costs that again (a piece over the network).
func (p *Protocol) RestoreCost(c float64) float64 {
	if l := p.cfg.Levels[0]; l.Tier == Buddy && l.Every == 1 && !p.cfg.NoRebuild {
		return 2 * c
	}
	return c
}
