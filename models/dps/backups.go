package dps

// This file places and registers backup threads: which node a thread's
// backups live on (rotated by Config.Offset) and how their first state is
// shipped there.

import (
	"slices"

	"ftsim/sim"
)

// addBackup registers a new backup on node n and ships it ck from the thread's
// (new) node.
func (p *Protocol) addBackup(id sim.ObjID, from sim.NodeID, ck *ckptData, wire int64) {
	if p.cfg.Backups == 0 {
		return
	}
	// the consumed backup's node is the thread's node from now on
	node, ok := p.placeBackupFrom(id, from)
	if !ok {
		return
	}
	bk := p.register(id, node)
	p.ship(id, bk, from, ck, wire)
}

func (p *Protocol) register(id sim.ObjID, node sim.NodeID) *backup {
	t := &p.th[id]
	t.bkGen++
	bk := &backup{node: node, inc: p.RT.Incarnation(node), gen: t.bkGen}
	for s := range p.th {
		src := &p.th[s]
		if n := src.pst.sent.Get(id); n > 0 && !src.stateless {
			bk.sentBefore = append(bk.sentBefore, sentCount{sim.ObjID(s), src.pst.life, n})
		}
	}
	t.backups = append(t.backups, bk)
	p.C.Regenerated++
	return bk
}

func (p *Protocol) ship(id sim.ObjID, bk *backup, from sim.NodeID, ck *ckptData, wire int64) {
	rt := p.RT
	p.charge(from, wire)
	rt.Transfer(from, bk.node, wire, tagRegen, func(ok bool) {
		if ok && !p.fallback {
			p.charge(bk.node, wire)
			p.install(id, bk, ck)
		}
	})
}

func (p *Protocol) placeBackup(id sim.ObjID) (sim.NodeID, bool) {
	return p.placeBackupFrom(id, p.RT.NodeOf(id))
}

// skip is the number of slots the rotation passes over after a thread's own
// before its first backup: Config.Offset − 1.
func (p *Protocol) skip() int { return max(p.cfg.Offset, 1) - 1 }

// placeBackupFrom picks the next live node after home (Offset nodes after it
// first), by rotation over the surviving slots, that holds neither the thread
// nor another of its backups.
func (p *Protocol) placeBackupFrom(id sim.ObjID, home sim.NodeID) (sim.NodeID, bool) {
	slots := p.RT.Slots()
	start := p.RT.SlotIndex(home)
	if start < 0 {
		start = 0
	}
	for j := 1; j <= len(slots); j++ {
		n := slots[(start+p.skip()+j)%len(slots)]
		if n == home || !p.RT.Alive(n) {
			continue
		}
		if slices.ContainsFunc(p.th[id].backups, func(b *backup) bool { return b.node == n }) {
			continue
		}
		return n, true
	}
	return 0, false
}

// liveSlots returns the application's node slots that are alive, in slot order.
func (p *Protocol) liveSlots() []sim.NodeID {
	var live []sim.NodeID
	for _, n := range p.RT.Slots() {
		if p.RT.Alive(n) {
			live = append(live, n)
		}
	}
	return live
}
