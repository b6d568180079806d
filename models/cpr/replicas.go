package cpr

// This file holds what cpr does under the replication protocol: a
// checkpoint holds one piece per process of replicated objects, and a
// failure the application survives while a checkpoint is being written has
// the pieces it lost written again by the survivors.

import (
	"slices"

	"ftsim/sim"
)

// Replicas is what cpr needs to checkpoint an application whose objects run
// as several replicas (the replication protocol runs cpr under it): one
// piece per process, written by the node of one live replica, and every
// replica of the process restored from it.
type Replicas interface {
	// Writer is the replica whose state the checkpoint holds for replica
	// id: id itself, or another replica of its process while id is lost;
	// None when every replica of the process is lost. The checkpoint writes
	// the state once, from the entry of the writer itself.
	Writer(id sim.ObjID) sim.ObjID
}

// ReplicaRestarter is a Replicas that re-creates lost replicas after each
// checkpoint (the restart strategy of Benoit, Herault, Le Fèvre and Robert,
// SC'19): cpr calls RestartReplicas once the checkpoint is committed, with
// the application still paused, and resumes the application when it calls
// resume (unless a failure's recovery has begun meanwhile).
type ReplicaRestarter interface {
	Replicas
	RestartReplicas(resume func())
}

// Adopt takes over spare s, booting for failed node failed on behalf of a
// protocol that runs cpr under it: the recovery that starts now puts s in
// failed's place once booted rather than boot a second spare
// (none.Replacer.Adopt). Call it before OnFailure.
func (p *Protocol) Adopt(s, failed sim.NodeID) { p.nodes.Adopt(s, failed) }

// Replicated makes the checkpoints hold one piece per process of
// replicated objects (call it before the run).
func (p *Protocol) Replicated(r Replicas) { p.replicas = r }

// writer is the object whose state the checkpoint holds for object id
// (Replicas.Writer), None if there is none now.
func (p *Protocol) writer(id sim.ObjID) sim.ObjID {
	if p.replicas != nil {
		return p.replicas.Writer(id)
	}
	if p.RT.Lost(id) {
		return sim.None
	}
	return id
}

// Recovering reports whether a failure's recovery is in progress.
func (p *Protocol) Recovering() bool { return p.busy && p.recovering }

// Survived tells cpr of node n's failure, which the application survives
// without rolling back (one replica of a replicated object). A checkpoint
// being written that n had not finished its part of has lost it: the pieces
// n was writing are written again from the other replicas of its objects
// (their states are still those of the cut: the application is paused),
// and the buddy copies n held or was receiving are sent, whole, to another
// node. One that has not reached its cut yet takes its pieces from the
// survivors anyway.
func (p *Protocol) Survived(n sim.NodeID) {
	w := p.run
	if !p.busy || p.recovering || w == nil || w.gen != p.gen || w.pending == 0 {
		return // no checkpoint being written: p.run is the last one, committed
	}
	var lost, resend []*writeOp
	for _, o := range w.ops {
		switch {
		case o.settled:
		case o.owner == n:
			lost = append(lost, o)
		case o.to == n:
			resend = append(resend, o)
		}
	}
	// the buddy copies first: a piece moved below may go to the same owner,
	// whose copy must then go to its new buddy too. Every copy n held is
	// gone, those it had received whole included, so each goes whole to its
	// owner's next buddy (a part that followed it to n would reach a dead
	// node and never be settled). An owner known to be dead sends nothing:
	// its transfer could never be settled either.
	rt := p.RT
	buddies := w.cp.copies[Buddy]
	for i, locs := range buddies {
		if owner := sim.NodeID(i); !rt.FailureDetected(owner) && len(locs) > 1 && locs[1].holder == n {
			to := p.buddy(owner) // n is known dead now: another node
			locs[1] = copyLoc{holder: to, inc: rt.Incarnation(to)}
			b := w.cp.bytes[owner]
			rt.Transfer(owner, to, b, sim.TagTransfer, p.op(w, owner, to, b))
		}
	}
	if len(lost) > 0 && !p.rewrite(w, n) {
		// a piece has no live replica left: the failure that took it
		// interrupts the application; until it is detected, the checkpoint
		// is taken again
		p.gen++
		p.Retaken++
		p.request()
		return
	}
	// the ops redone are settled last, so that the run does not end early
	for _, o := range append(lost, resend...) {
		o.settled = true
		w.finish(true)
	}
}

// rewrite moves node n's piece of run w's checkpoint to the nodes of the
// other replicas of its objects and writes what each gets to every tier of
// the checkpoint; false if an object has no live replica.
func (p *Protocol) rewrite(w *writeRun, n sim.NodeID) bool {
	rt := p.RT
	cp := w.cp
	extra := map[sim.NodeID]int64{}
	for i, owner := range cp.owner {
		if owner != n {
			continue
		}
		id := sim.ObjID(i)
		wr := p.writer(id)
		if wr == sim.None {
			return false
		}
		if p.piece(cp, id, wr) != nil {
			return false
		}
		if wr == id {
			extra[cp.owner[i]] += cp.size[i]
		}
	}
	cp.bytes[n] = 0
	owners := make([]sim.NodeID, 0, len(extra))
	for o, b := range extra {
		owners = append(owners, o)
		cp.bytes[o] += b
	}
	slices.Sort(owners)
	st := rt.Stats()
	for _, l := range p.cfg.Levels {
		locs, ok := cp.copies[l.Tier]
		if !ok {
			continue // not a level of this checkpoint
		}
		locs[n] = nil
		for _, o := range owners {
			st.CheckpointBytes += extra[o]
			p.writePiece(w, l.Tier, o, extra[o])
		}
	}
	p.Rewritten++
	return true
}

// readdressed returns copies of another replica's waiting messages addressed
// to replica id.
func readdressed(in []*sim.Message, id sim.ObjID) []*sim.Message {
	out := make([]*sim.Message, len(in))
	for i, m := range in {
		out[i] = m.Clone()
		out[i].Dst = id
	}
	return out
}
