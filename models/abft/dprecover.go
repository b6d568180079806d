package abft

// This file is the recovery of Protocol 1 (thesis §4.3.4; §5.3 for the
// knapsack flag bits): after a failure, choosing the stage s* each failed DP
// object restarts from, placing it on a spare or a holder's node, shipping its
// critical-data copies there, rebuilding its state, and sending again the
// messages it and the live objects still wait for.

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"ftsim/sim"
	"ftsim/workloads/dp"
)

// OnFailure forgets what lived in the failed node's memory and schedules a
// recovery round; failures detected at the same instant share one round.
func (p *DPProtocol) OnFailure(f sim.Failure) {
	if p.err != nil {
		return
	}
	if f.WasSpare {
		delete(p.booting, f.Node)
		for i, t := range p.target {
			if t == f.Node {
				p.target[i] = sim.None
			}
		}
		p.schedule()
		return
	}
	for _, j := range f.Objects {
		p.forget(j)
		p.detected[j] = true
		p.target[j] = sim.None
	}
	for i, t := range p.target {
		if t == f.Node {
			p.target[i] = sim.None
		}
	}
	p.schedule()
}

// forget drops what object j's node held: its copies of others' data, its
// log, its pending critical data. What is still in a live node's memory is
// released: a restore forgets what j's new node kept for it meanwhile.
func (p *DPProtocol) forget(j sim.ObjID) {
	for _, st := range p.store[j] {
		for _, c := range st {
			if p.held(c) {
				p.RT.MemAdd(c.node, sim.MemBackup, -c.modeled)
			}
		}
	}
	p.store[j] = map[sim.ObjID]map[int]cdCopy{}
	for k := range p.sent {
		for _, byTag := range p.sent[k] {
			if e, ok := byTag[j]; ok {
				p.unlog(e)
				delete(byTag, j)
			}
		}
	}
	p.got[j] = map[logKey]bool{}
	p.pending[j] = nil
}

func (p *DPProtocol) schedule() {
	if p.queued {
		return
	}
	p.queued = true
	p.RT.At(p.RT.Now(), func() {
		p.queued = false
		p.round()
	})
}

// copies returns, for each stage s of owner j's critical data, a surviving
// copy and its holder, up to the first stage without one. A holder not
// running a handler is preferred: the sends of a running handler hold its
// node's network interface until the handler ends, and a copy sent from
// there would wait behind them.
func (p *DPProtocol) copies(j sim.ObjID) (cds []cdCopy, holders []sim.ObjID) {
	rt := p.RT
	for s := 0; s < p.stages; s++ {
		var found cdCopy
		h := sim.ObjID(sim.None)
		for q := range p.n {
			qq := sim.ObjID(q)
			if rt.Lost(qq) || qq == j {
				continue
			}
			if d, ok := p.store[q][j][s]; ok && (h == sim.None || rt.Running(h) && !rt.Running(qq)) {
				found, h = d, qq
			}
		}
		if h == sim.None {
			break
		}
		cds, holders = append(cds, found), append(holders, h)
	}
	return cds, holders
}

// cdData is the real bytes of each copy.
func cdData(cds []cdCopy) [][]byte {
	out := make([][]byte, len(cds))
	for i, c := range cds {
		out[i] = c.data
	}
	return out
}

// round plans the rebuild of every detected lost object and starts it.
func (p *DPProtocol) round() {
	rt := p.RT
	if rt.Finished() {
		return
	}
	plans := map[sim.ObjID]*plan{}
	for j := range p.n {
		id := sim.ObjID(j)
		switch {
		case rt.Lost(id) && p.detected[j]:
			cds, _ := p.copies(id)
			plans[id] = &plan{stage: len(cds)}
		case p.rollback[j] > 0 && !rt.Lost(id):
			// a forced rebuild not restarted yet: the objects that wait for
			// its messages see it at the stage it goes back to, not at the
			// stage it still shows; further back if a failure since took
			// the copies of its critical data that stage needs (as settle
			// plans a forced rebuild)
			cds, _ := p.copies(id)
			plans[id] = &plan{stage: min(p.rollback[j]-1, len(cds)), forced: true}
		}
	}
	p.settle(plans)
	p.resendLost(plans)
	if len(plans) == 0 {
		// nothing lost, no forced rebuild to plan again (its install found
		// a message the plan counted on gone: it schedules a round), and
		// every message live objects wait for on its way
		return
	}
	p.Counters.Rounds++
	ids := slices.Sorted(maps.Keys(plans))
	for _, j := range ids {
		pl := plans[j]
		p.gen[j]++
		cds, holders := p.copies(j)
		cds, holders = cds[:pl.stage], holders[:pl.stage]
		if pl.forced {
			p.rollback[j] = pl.stage + 1
			p.Counters.Forced++
			p.transfer(j, rt.NodeOf(j), pl.stage, cds, holders)
			continue
		}
		p.place(j, pl.stage, cds, holders)
	}
}

// place finds the node object j is rebuilt on: the one chosen before if it
// is still up, a spare, or the node of the holder of its newest copy (the
// detecting neighbour taking over), or else any live node.
func (p *DPProtocol) place(j sim.ObjID, stage int, cds []cdCopy, holders []sim.ObjID) {
	rt := p.RT
	t := p.target[j]
	if t != sim.None && p.booting[t] {
		return // the round after the boot installs it
	}
	if t == sim.None || !rt.Alive(t) {
		t = sim.None
		if p.cfg.UseSpares {
			old := rt.NodeOf(j)
			if spare, ok := rt.TakeSpare(func(n sim.NodeID) {
				delete(p.booting, n)
				rt.ReplaceSlot(old, n)
				p.schedule()
			}); ok {
				p.booting[spare] = true
				p.target[j] = spare
				for _, o := range rt.ObjectsOn(old) {
					if rt.Lost(o) {
						p.target[o] = spare
					}
				}
				return
			}
		}
		switch {
		case len(holders) > 0:
			// A holder of the newest copy takes it over; among several, the
			// least loaded, so that simultaneous failures spread.
			load := -1
			for q := range p.n {
				qq := sim.ObjID(q)
				if _, ok := p.store[q][j][stage-1]; !ok || rt.Lost(qq) {
					continue
				}
				if l := len(rt.ObjectsOn(rt.NodeOf(qq))); load < 0 || l < load {
					t, load = rt.NodeOf(qq), l
				}
			}
		default:
			for q := range p.n {
				if !rt.Lost(sim.ObjID(q)) {
					t = rt.NodeOf(sim.ObjID(q))
					break
				}
			}
		}
		if t == sim.None {
			rt.Abort("abft: every object is lost")
			return
		}
		p.target[j] = t
	}
	p.transfer(j, t, stage, cds, holders)
}

// transfer moves the copy of the last stage before stage to node t and then
// rebuilds j there; the older stages (the DP table) follow in the
// background.
func (p *DPProtocol) transfer(j sim.ObjID, t sim.NodeID, stage int, cds []cdCopy, holders []sim.ObjID) {
	rt := p.RT
	g := p.gen[j]
	p.recStart[j] = rt.Now()
	install := func() {
		if p.gen[j] != g {
			return // planned again since
		}
		p.install(j, t, stage, cdData(cds))
	}
	if stage == 0 {
		rt.At(rt.Now(), install)
		return
	}
	// Background: each holder sends the older stages it supplies.
	bg := map[sim.NodeID]int64{}
	for s := range stage - 1 {
		bg[rt.NodeOf(holders[s])] += cds[s].modeled + p.cfg.HeaderBytes
	}
	for _, n := range slices.Sorted(maps.Keys(bg)) { // in node order: a run is a function of its seed
		if b := bg[n]; n != t {
			p.Counters.BackgroundSent += b
			rt.Transfer(n, t, b, ctlCD+1, func(bool) {})
		}
	}
	from := rt.NodeOf(holders[stage-1])
	if from == t {
		rt.At(rt.Now(), install)
		return
	}
	rt.Transfer(from, t, cds[stage-1].modeled+p.cfg.HeaderBytes, ctlCD+1, func(ok bool) {
		if p.gen[j] != g {
			return
		}
		if !ok {
			p.schedule() // a holder or the target died: plan again
			return
		}
		install()
	})
}

// sources is what a rebuild of j may read: data messages j was sent, from
// the logs of live senders not being rebuilt (plans, may be nil), and for
// the knapsack any table value the flag bits give (§5.4 back-tracking).
func (p *DPProtocol) sources(j sim.ObjID, plans map[sim.ObjID]*plan) dp.Sources {
	src := dp.Sources{Received: func(tag int, q sim.ObjID) []byte {
		if plans[q] != nil {
			return nil
		}
		m := p.logged(q, j, int32(tag))
		if m == nil {
			return nil
		}
		if plans == nil {
			p.Counters.RemoteFetches++
		}
		return m.Payload
	}}
	if kw, ok := p.w.(*dp.KnapsackWorkload); ok {
		value := kw.Backtrack(p.knapsackFlag(kw, plans))
		src.Value = func(item, col int) (int64, bool) {
			v, ok := value(item, col)
			if ok && plans == nil {
				p.Counters.Backtracked++
			}
			return v, ok
		}
	}
	return src
}

// knapsackFlag reads flag bit (item, col) from its owner if it is live, else
// from a surviving copy of the owner's critical data of that item. An owner
// that plans rebuild at an earlier stage has none of the items from that
// stage on until it computes them again.
func (p *DPProtocol) knapsackFlag(kw *dp.KnapsackWorkload, plans map[sim.ObjID]*plan) func(item, col int) (bool, bool) {
	rt := p.RT
	return func(item, col int) (bool, bool) {
		q := kw.Owner(col)
		if pl := plans[q]; pl != nil && item >= pl.stage {
			return false, false
		}
		if !rt.Lost(q) {
			ko, ok := p.object(q).(*dp.KnapsackObject)
			if !ok || item >= ko.Stage() {
				return false, false
			}
			return ko.Flag(item, col), true
		}
		lo, _ := kw.Columns(q)
		for h := range p.n {
			if rt.Lost(sim.ObjID(h)) {
				continue
			}
			if d, ok := p.store[h][q][item]; ok {
				c := col - lo
				if c>>3 >= len(d.data) {
					return false, false
				}
				return d.data[c>>3]>>(c&7)&1 != 0, true
			}
		}
		return false, false
	}
}

// install rebuilds j on node n at stage from cds, charges the rebuild, and
// restarts it (restart).
func (p *DPProtocol) install(j sim.ObjID, n sim.NodeID, stage int, cds [][]byte) {
	rt := p.RT
	if rt.Finished() || !rt.Alive(n) {
		return
	}
	fetches := p.Counters.RemoteFetches
	o, _ := rt.Workload().NewObject(j).(Critical)
	if o == nil {
		rt.Abort(fmt.Sprintf("abft: object %d has no critical data", j))
		return
	}
	if err := o.RestoreCritical(stage, cds, p.sources(j, nil)); err != nil {
		if errors.Is(err, dp.ErrUnavailable) {
			p.Counters.RemoteFetches = fetches
			p.schedule() // a message the plan counted on is gone: plan again
			return
		}
		rt.Abort(fmt.Sprintf("abft: %v", err))
		return
	}
	state, err := o.MarshalBinary()
	if err != nil {
		rt.Abort(fmt.Sprintf("abft: %v", err))
		return
	}
	// Rebuilding writes the object's state from the copies: charged at the
	// node's memory bandwidth before the object restarts.
	g := p.gen[j]
	d := sim.Time(0)
	if bw := rt.Config().MemBandwidth; bw > 0 {
		d = sim.FromSeconds(float64(o.ModeledSize()) / bw)
	}
	rt.ChargeCPU(n, d, func() {
		if p.gen[j] == g {
			p.restart(j, n, stage, o, state)
		}
	})
}

// restart puts the rebuilt object j (o, serialised as state) in place on
// node n at stage and sends again what recovery lost: the data messages of
// its stages from then on (from the senders' logs, else from their state),
// the data it had sent that live objects still wait for (from its rebuilt
// state), and the requests live objects sent it that are unanswered.
func (p *DPProtocol) restart(j sim.ObjID, n sim.NodeID, stage int, o Critical, state []byte) {
	rt := p.RT
	if rt.Finished() {
		return
	}
	kick := &sim.Message{Src: j, Dst: j, Tag: dp.TagTick, Epoch: rt.Epoch(), From: n, To: n}
	// The bookkeeping of the new incarnation comes first: Restore may run
	// its first handler at once.
	wasLost := rt.Lost(j)
	if wasLost {
		p.Counters.Recovered++
		if stage == 0 {
			p.Counters.FromScratch++
		}
		p.recovery += rt.Now() - p.recStart[j]
		p.Counters.StagesRedone += int64(max(0, p.captured[j]-stage))
		p.forget(j)
	} else {
		p.pending[j] = nil
		p.got[j] = map[logKey]bool{}
	}
	p.detected[j] = false
	p.target[j] = sim.None
	p.rollback[j] = 0
	p.captured[j] = stage
	if err := rt.Restore(j, n, sim.Snap{State: state, Inbox: []*sim.Message{kick}, Started: true}); err != nil {
		rt.Abort(fmt.Sprintf("abft: %v", err))
		return
	}
	if wasLost {
		p.restock(j)
	}
	// The data messages of its stages from now on, from live senders: from
	// their logs, else from their state. A message the plan counted on that
	// cannot be built now (a failure not detected yet took flag bits it
	// needs) is left to a round, which has its sender compute it again;
	// not when a forced rebuild is pending for the sender (here) or the
	// receiver (in the loop below), whose restart has it sent.
	unsent := false
	for t := stage; t < p.stages; t++ {
		for _, q := range p.w.ReceiverSet(t, j) {
			if rt.Lost(q) {
				continue
			}
			if m := p.logged(q, j, int32(t)); m != nil {
				rt.SendApp(q, j, m.Tag, m.Size, m.Payload, sim.Header{})
				p.Counters.Replayed++
				continue
			}
			if qo := p.object(q); qo.Stage() > p.w.SentAfter(t) && !qo.Promised(t, j) {
				if !p.resend(qo, q, t, j) && p.rollback[q] == 0 {
					unsent = true
				}
			}
		}
	}
	// Data j sent before the stage it restarts at that live objects still
	// wait for: sent again from the rebuilt state. (An object still to be
	// rebuilt gets its inputs when it restarts, from j's log or state.)
	for k := range p.n {
		kk := sim.ObjID(k)
		if kk == j || rt.Lost(kk) {
			continue
		}
		for t := p.object(kk).Stage(); t < p.stages && p.w.SentAfter(t) < stage; t++ {
			if p.got[k][logKey{j, int32(t)}] || !slices.Contains(p.w.ReceiverSet(t, kk), j) {
				continue
			}
			if !p.resend(o, j, t, kk) && p.rollback[k] == 0 {
				unsent = true
			}
		}
	}
	if unsent {
		p.schedule()
	}
	// Requests to j still waiting for their data.
	if p.requests {
		for k := range p.n {
			src := sim.ObjID(k)
			if src == j || rt.Lost(src) {
				continue
			}
			for _, tag := range slices.Sorted(maps.Keys(p.sent[j])) {
				e, ok := p.sent[j][tag][src]
				if t := dp.RequestStage(tag); !ok || t < 0 || p.got[k][logKey{j, int32(t)}] || p.object(src).Stage() > t {
					continue
				}
				rt.SendApp(src, j, tag, e.m.Size, nil, sim.Header{})
				p.Counters.Replayed++
			}
		}
	}
}

// resend sends the data message of tag from q (object o, live) to dst
// again, built from q's state, and logs it as q's; it reports whether it
// could build it.
func (p *DPProtocol) resend(o Critical, q sim.ObjID, tag int, dst sim.ObjID) bool {
	size, payload, ok := p.regen(o, q, tag, dst)
	if !ok {
		return false
	}
	p.logMsg(&sim.Message{Src: q, Dst: dst, Tag: int32(tag), Size: size, Payload: payload, Epoch: p.RT.Epoch()})
	p.RT.SendApp(q, dst, int32(tag), size, payload, sim.Header{})
	p.Counters.Replayed++
	return true
}

// waitsLost calls fn for each data message a live object not in plans
// still waits for from a live sender not in plans that has passed the
// stage it sends it after, and that is neither on its way (logged), nor
// arrived, nor kept for a request. There is none unless a restart could not
// build such a message again (a failure not detected yet took the flag
// bits it needed).
func (p *DPProtocol) waitsLost(plans map[sim.ObjID]*plan, fn func(k, q sim.ObjID, tag int)) {
	rt := p.RT
	for k := range p.n {
		kk := sim.ObjID(k)
		if plans[kk] != nil || rt.Lost(kk) {
			continue
		}
		for t := p.object(kk).Stage(); t < p.stages; t++ {
			for _, q := range p.w.ReceiverSet(t, kk) {
				if plans[q] != nil || rt.Lost(q) || p.got[k][logKey{q, int32(t)}] || p.logged(q, kk, int32(t)) != nil {
					continue
				}
				if qo := p.object(q); qo.Stage() > p.w.SentAfter(t) && !qo.Promised(t, kk) {
					fn(kk, q, t)
				}
			}
		}
	}
}

// resendLost sends again, from their senders' state, the messages live
// objects wait for that are lost (waitsLost); settle has planned the
// senders that cannot build them to compute them anew.
func (p *DPProtocol) resendLost(plans map[sim.ObjID]*plan) {
	p.waitsLost(plans, func(k, q sim.ObjID, tag int) {
		p.resend(p.object(q), q, tag, k)
	})
}

// restock gives the rebuilt object j back the copies it held of its peers'
// critical data (the remote critical data in its DP table, §4.3.4): each
// stage of a live owner q that j was to hold, from another live holder, in
// the background. Without it, two successive failures of q's holders would
// leave q with no copy of its early stages.
func (p *DPProtocol) restock(j sim.ObjID) {
	rt := p.RT
	type batch struct {
		from   sim.NodeID
		stages map[sim.ObjID]map[int]cdCopy
		bytes  int64
	}
	batches := map[sim.NodeID]*batch{}
	for k := range p.n {
		q := sim.ObjID(k)
		if q == j || rt.Lost(q) {
			continue
		}
		for s := 0; s < p.captured[q]; s++ {
			if !slices.Contains(p.carriers(q, s), j) && !slices.Contains(p.pk(q, s), j) {
				continue
			}
			for h := range p.n {
				hh := sim.ObjID(h)
				c, ok := p.store[h][q][s]
				if hh == j || !ok || rt.Lost(hh) {
					continue
				}
				from := rt.NodeOf(hh)
				b := batches[from]
				if b == nil {
					b = &batch{from: from, stages: map[sim.ObjID]map[int]cdCopy{}}
					batches[from] = b
				}
				if b.stages[q] == nil {
					b.stages[q] = map[int]cdCopy{}
				}
				b.stages[q][s] = c
				b.bytes += c.modeled + p.cfg.HeaderBytes
				break
			}
		}
	}
	to := rt.NodeOf(j)
	for _, from := range slices.Sorted(maps.Keys(batches)) {
		b := batches[from]
		p.Counters.Restocked += b.bytes
		rt.Transfer(from, to, b.bytes, ctlCD+2, func(ok bool) {
			if !ok || rt.Lost(j) || rt.NodeOf(j) != to {
				return
			}
			for q, st := range b.stages {
				for s, c := range st {
					if _, had := p.store[j][q][s]; had {
						continue
					}
					if p.store[j][q] == nil {
						p.store[j][q] = map[int]cdCopy{}
					}
					c.node, c.inc = to, rt.Incarnation(to)
					p.store[j][q][s] = c
					rt.MemAdd(to, sim.MemBackup, c.modeled)
				}
			}
		})
	}
}

// settle lowers the planned stages until every message a rebuilt object or
// a live one still waits for will be sent (again), adding live objects that
// must regenerate a message they no longer hold: those a rebuilt object
// waits for, those a live object waits for from a rebuilt one, and those a
// live object waits for from a live sender that are lost (waitsLost).
func (p *DPProtocol) settle(plans map[sim.ObjID]*plan) {
	rt := p.RT
	lower := func(q sim.ObjID, s int) bool {
		pl := plans[q]
		added := pl == nil
		if added {
			cds, _ := p.copies(q)
			pl = &plan{stage: min(len(cds), p.object(q).Stage()), forced: true}
			plans[q] = pl
		}
		if s < pl.stage {
			pl.stage = max(s, 0)
			return true
		}
		return added
	}
	// available reports whether the data of tag from q to j will reach j.
	available := func(q, j sim.ObjID, tag int) bool {
		if pl := plans[q]; pl != nil {
			return pl.stage <= p.w.SentAfter(tag) || p.resendable(q, pl.stage, tag, j, plans)
		}
		if rt.Lost(q) {
			return true // not detected yet: its own round will plan it against j
		}
		o := p.object(q)
		return o.Stage() <= p.w.SentAfter(tag) || o.Promised(tag, j) || p.logged(q, j, int32(tag)) != nil ||
			p.resendable(q, o.Stage(), tag, j, plans)
	}
	for range 4 * p.n * (p.stages + 1) {
		changed := false
		ids := slices.Sorted(maps.Keys(plans))
		for _, j := range ids {
			pl := plans[j]
			// (a) the rebuilt j needs its inputs of stages >= its stage.
			for t := pl.stage; t < p.stages; t++ {
				for _, q := range p.w.ReceiverSet(t, j) {
					if !available(q, j, t) {
						changed = lower(q, p.w.SentAfter(t)) || changed
					}
				}
			}
			// (b) live objects waiting for j's data: every message the
			// rebuilt j will not compute again must be resendable (whether
			// a knapsack message is depends on its stage, not only on the
			// first one the object waits for).
			for k := range p.n {
				kk := sim.ObjID(k)
				if plans[kk] != nil || rt.Lost(kk) {
					continue
				}
				for t := p.object(kk).Stage(); t < p.stages && p.w.SentAfter(t) < pl.stage; t++ {
					if slices.Contains(p.w.ReceiverSet(t, kk), j) && !p.got[k][logKey{j, int32(t)}] &&
						!p.resendable(j, pl.stage, t, kk, plans) {
						pl.stage = max(p.w.SentAfter(t), 0)
						changed = true
					}
				}
			}
			// (c) the rebuild itself (knapsack back-tracking) must find its messages.
			if p.problem == "knapsack" {
				cds, _ := p.copies(j)
				for pl.stage > 0 {
					o := rt.Workload().NewObject(j).(Critical)
					err := o.RestoreCritical(pl.stage, cdData(cds[:pl.stage]), p.sources(j, plans))
					if err == nil || !errors.Is(err, dp.ErrUnavailable) {
						break
					}
					pl.stage--
					changed = true
				}
			}
		}
		// (d) live objects waiting for lost messages from live senders:
		// each must be resendable, or its sender computes it again.
		p.waitsLost(plans, func(k, q sim.ObjID, tag int) {
			if !available(q, k, tag) {
				changed = lower(q, p.w.SentAfter(tag)) || changed
			}
		})
		if !changed {
			return
		}
	}
}

// regenerable reports whether object j at stage can send the data of tag
// again from its state: if the object kind keeps it (a scratch object of j
// answers), and for the knapsack always, the values coming from the flag
// bits by back-tracking.
func (p *DPProtocol) regenerable(j sim.ObjID, stage, tag int) bool {
	if p.problem == "knapsack" {
		return p.w.SentAfter(tag) < stage
	}
	if p.scratch == nil {
		p.scratch = map[sim.ObjID]Critical{}
	}
	o, ok := p.scratch[j]
	if !ok {
		o, _ = p.RT.Workload().NewObject(j).(Critical)
		p.scratch[j] = o
	}
	return o != nil && o.Regenerable(stage, tag)
}

// resendable reports whether object q, at stage (its plan's, or its own
// if it is live), can send the data of tag to dst again from its state, as
// regen does. A knapsack object that does not keep the row back-tracks its
// values through the flag bits of the columns' owners: of a live owner the
// items it has computed, of a lost one its surviving copies. An owner
// rebuilt at an earlier stage has not computed its items again yet, and
// until it has, nothing can be built from them: such a message is not
// resendable, and settle has q recompute it. (Until session 41 any
// knapsack message counted as resendable: in request mode, a block rebuilt
// at stage 0 waited for ever for data its rebuilt sender, whose requests
// for it had been answered before, could not build.)
func (p *DPProtocol) resendable(q sim.ObjID, stage, tag int, dst sim.ObjID, plans map[sim.ObjID]*plan) bool {
	if !p.regenerable(q, stage, tag) {
		return false
	}
	kw, ok := p.w.(*dp.KnapsackWorkload)
	if !ok || tag == stage {
		return true // kept by the object kind, or the knapsack's current row
	}
	_, _, ok = kw.Message(tag, q, dst, p.sources(q, plans).Value)
	return ok
}

// regen is the data message of tag from q (object o, live) to dst, built
// again from q's state.
func (p *DPProtocol) regen(o Critical, q sim.ObjID, tag int, dst sim.ObjID) (size int64, payload []byte, ok bool) {
	if size, payload, ok := o.Regenerate(tag, dst); ok {
		return size, payload, true
	}
	if kw, isK := p.w.(*dp.KnapsackWorkload); isK && p.w.SentAfter(tag) < o.Stage() {
		return kw.Message(tag, q, dst, p.sources(q, nil).Value)
	}
	return 0, nil, false
}
