package abft

// This file is the recovery of FTPIDA* (Algorithm 3.3): after a failure,
// each failed worker is rebuilt from the newest surviving copy of its fault
// recovery information (FRI), held by a ring neighbour's node, on a spare or
// on that node; what the recovery may have lost is sent again; and a failure
// that leaves a worker no surviving copy is reported unrecoverable, and the
// run restarts from scratch.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"ftsim/sim"
	"ftsim/workloads/pida"
)

// OnFailure runs Algorithm 3.3 for the workers of the failed node.
func (p *Protocol) OnFailure(f sim.Failure) {
	if p.live == nil {
		return
	}
	if p.fallback {
		p.scratch.OnFailure(f)
		return
	}
	if f.WasSpare {
		if pend, ok := p.booting[f.Node]; ok {
			delete(p.booting, f.Node)
			p.recover(f, pend.failed, pend.workers)
		}
		return
	}
	rt := p.RT
	// FRMs waiting for the dead holder commit without it.
	for w, pr := range p.live {
		if pr.inflight && containsNode(pr.waiting, f.Node) {
			pr.waiting = removeNode(pr.waiting, f.Node)
			if len(pr.waiting) == 0 && !rt.Lost(sim.ObjID(w)) {
				p.commit(sim.ObjID(w))
			}
		}
	}
	// The workers lost on the node: those it held (f.Objects) and those on
	// their way to it, restored there from a copy when it failed. Its
	// failure does not report the latter, which were already lost, and
	// their transfers leave them to this recovery.
	var lost []sim.ObjID
	for x := range p.n {
		if w := sim.ObjID(x); rt.Lost(w) && rt.NodeOf(w) == f.Node {
			lost = append(lost, w)
		}
	}
	if len(lost) > 0 {
		p.recover(f, f.Node, lost)
	}
}

// recover rebuilds workers lost with node failed, or gives up when one has no
// surviving FRI.
func (p *Protocol) recover(f sim.Failure, failed sim.NodeID, ws []sim.ObjID) {
	rt := p.RT
	var orphans []sim.ObjID
	for _, w := range ws {
		if p.bestCopy(w) == nil {
			orphans = append(orphans, w)
		}
	}
	p.crossCheck(len(orphans) == 0)
	if len(orphans) > 0 {
		p.giveUp(f, orphans)
		return
	}
	if p.cfg.UseSpares {
		spare, ok := rt.TakeSpare(func(s sim.NodeID) {
			delete(p.booting, s)
			rt.ReplaceSlot(failed, s)
			for _, w := range ws {
				p.restoreOn(f, w, s)
			}
		})
		if ok {
			p.booting[spare] = pendingRecovery{failed: failed, workers: ws}
			return
		}
	}
	rt.RemoveSlot(failed)
	for _, w := range ws {
		p.restoreOn(f, w, sim.None)
	}
}

// crossCheck compares a decision with Lemma 3.4's Survivable when each worker
// has a node of its own (the thesis's setting).
func (p *Protocol) crossCheck(survived bool) {
	rt := p.RT
	p.Counters.SurvivalDecisions++
	seen := map[sim.NodeID]bool{}
	failed := make([]bool, p.n)
	for w := 0; w < p.n; w++ {
		nd := rt.NodeOf(sim.ObjID(w))
		if seen[nd] {
			return
		}
		seen[nd] = true
		failed[w] = rt.Lost(sim.ObjID(w)) || !rt.Alive(nd)
	}
	if Survivable(p.n, failed) != survived {
		p.Counters.SurvivalMismatch++
	}
}

// restoreOn rebuilds worker w from its newest surviving FRI on node target
// (sim.None: the holder's own node, i.e. the detecting neighbour's).
func (p *Protocol) restoreOn(f sim.Failure, w sim.ObjID, target sim.NodeID) {
	rt := p.RT
	if p.fallback || !rt.Lost(w) {
		return
	}
	c := p.bestCopy(w)
	if c == nil {
		p.giveUp(f, []sim.ObjID{w})
		return
	}
	if target == sim.None || target == c.holder {
		p.install(w, c.holder, c)
		p.Counters.OnNeighbour++
		return
	}
	ver := c.ver
	rt.Transfer(c.holder, target, c.size, ctlFRM, func(ok bool) {
		if p.fallback || !rt.Lost(w) {
			return
		}
		if cc := p.bestCopy(w); ok && cc == c && cc.ver >= ver {
			p.install(w, target, c)
			p.Counters.OnSpare++
			return
		}
		if !rt.Alive(target) {
			// the detection of the target's failure recovers w (OnFailure
			// takes the workers on their way to a failed node)
			return
		}
		p.restoreOn(f, w, sim.None)
	})
}

// install restores worker w on node n from FRI c and re-sends what recovery
// may have lost: its own unacknowledged critical messages, the critical
// messages others sent it, and a "no work" notice to everyone (a request to
// the dead worker would otherwise wait forever).
func (p *Protocol) install(w sim.ObjID, n sim.NodeID, c *copyFRI) {
	rt := p.RT
	state, err := rebuildWorker(c.prefix, &c.stack)
	if err != nil {
		rt.Abort(fmt.Sprintf("abft: worker %d: %v", w, err))
		return
	}
	// The protocol state goes in place first: the restored worker may run
	// its continue message within Restore, and what it sends then (the
	// credit of work it exhausts) must be held by this state, not by the
	// lost one's, which is dropped.
	pr := p.newProc(n)
	copy(pr.seq, c.seq)
	for i := range c.consumed {
		pr.consumed[i] = c.consumed[i].Clone()
	}
	pr.ver = c.ver
	for _, e := range c.outbox {
		e := e
		e.released = true
		pr.outbox = append(pr.outbox, &e)
	}
	p.live[w] = pr
	cont := &sim.Message{Src: w, Dst: w, Tag: pidaCont, Epoch: rt.Epoch(), From: n, To: n}
	if err := rt.Restore(w, n, sim.Snap{State: state, Inbox: []*sim.Message{cont}, Started: true}); err != nil {
		rt.Abort(fmt.Sprintf("abft: %v", err))
		return
	}
	p.Counters.Restored++
	p.armTimer(n)
	for _, e := range pr.outbox {
		p.resend(w, e)
	}
	for s := 0; s < p.n; s++ {
		src := sim.ObjID(s)
		if src == w || rt.Lost(src) {
			continue
		}
		for _, e := range p.live[s].outbox {
			if e.dst == w && e.released {
				p.resend(src, e)
			}
		}
	}
	notice := binary.AppendUvarint(binary.AppendUvarint(nil, 0), 0) // iteration 0: enters nothing
	for j := 0; j < p.n; j++ {
		if dst := sim.ObjID(j); dst != w && !rt.Lost(dst) {
			rt.SendApp(w, dst, pidaNoWork, p.cfg.AckBytes, notice, sim.Header{})
			p.Counters.Notices++
		}
	}
	pr.dirty = true
	p.sendFRM(w)
}

func (p *Protocol) resend(src sim.ObjID, e *entry) {
	m := e.msg
	p.RT.SendApp(src, e.dst, m.Tag, m.Size, m.Payload, m.Hdr)
	p.Counters.Resent++
}

// giveUp reports the pattern unrecoverable and restarts from scratch.
func (p *Protocol) giveUp(f sim.Failure, orphans []sim.ObjID) {
	rt := p.RT
	st := rt.Stats()
	st.Unrecoverable++
	ids := make([]string, len(orphans))
	sort.Slice(orphans, func(i, j int) bool { return orphans[i] < orphans[j] })
	for i, w := range orphans {
		ids[i] = fmt.Sprint(w)
	}
	st.UnrecoverableNote = fmt.Sprintf("abft: worker(s) %s lost together with both ring neighbours' fault recovery information (three ring-consecutive failures); restarted from scratch",
		strings.Join(ids, ", "))
	p.fallback = true
	// the spares booting for abandoned recoveries are the restart's now
	boots := make([]sim.NodeID, 0, len(p.booting))
	for s := range p.booting {
		boots = append(boots, s)
	}
	sort.Slice(boots, func(i, j int) bool { return boots[i] < boots[j] })
	for _, s := range boots {
		p.scratch.Adopt(s, p.booting[s].failed)
		delete(p.booting, s)
	}
	for w := range p.fri {
		for _, c := range append([]*copyFRI(nil), p.fri[w]...) {
			p.dropCopy(sim.ObjID(w), c)
		}
	}
	p.scratch.OnFailure(f)
}

// stackOffset is where the stack's encoding starts in a pida worker's state
// (workloads/pida parallel.go MarshalBinary, version 1: a version byte, 13
// uvarints, the coordinator's credit words, then the stack).
func stackOffset(raw []byte) (int, error) {
	if len(raw) == 0 || raw[0] != 1 {
		return 0, errors.New("unknown pida worker state version")
	}
	off := 1
	var words uint64
	for i := 0; i < 13; i++ {
		v, k := binary.Uvarint(raw[off:])
		if k <= 0 {
			return 0, errors.New("truncated pida worker state")
		}
		off += k
		words = v
	}
	if words > uint64(len(raw)-off)/8 {
		return 0, errors.New("truncated pida worker credit words")
	}
	return off + 8*int(words), nil
}

// rebuildWorker makes a worker state from an FRI: its scalars with a pending
// continue (Restore puts one in the inbox) and no outstanding request (the
// restored worker asks again), then the replicated stack.
func rebuildWorker(prefix []byte, st *pida.Stack) ([]byte, error) {
	if _, err := stackOffset(prefix); err != nil {
		return nil, err
	}
	out := []byte{prefix[0]}
	off := 1
	for i := 0; i < 13; i++ {
		v, k := binary.Uvarint(prefix[off:])
		off += k
		if i == 2 { // flags
			v = v&^pidaFlagRequesting | pidaFlagCont
		}
		out = binary.AppendUvarint(out, v)
	}
	out = append(out, prefix[off:]...)
	data, err := st.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return append(out, data...), nil
}
