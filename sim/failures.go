package sim

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Recovery is the record of one failure: when it struck, when it was
// detected, when the objects it lost were all restored, and when the
// application had regained the progress it had when it struck. Survivors may
// progress meanwhile, so RecoveredAt can come before RestoredAt.
type Recovery struct {
	Node        NodeID
	FailedAt    Time
	DetectedAt  Time // Never if the run ended first
	RecoveredAt Time // Never if the run ended first
	// RestoredAt is when the last of the objects lost with the node (those
	// still lost at the detection) was restored or re-created; Never if it
	// lost none, or if one was never restored before the run ended
	RestoredAt Time
	mark       int64
	objects    []ObjID
	unrestored []ObjID // its lost objects not restored since its detection
	// progressBack is when the progress came back after the detection
	// while objects it lost were still to be restored (0: not so), out of
	// Runtime.open until they are; the recovery if they never are (a
	// replica's twin carried on)
	progressBack Time
	wasSpare     bool
}

// startFailureClock draws node n's next failure from its own stream, and
// starts its failure domain's clock if it is not running. The stream is named
// by the node alone, so the trace a node sees depends on the seed and the
// node, not on the protocol or on other nodes. A node inService is met at a
// random point of its life: with Weibull lifetimes, what is left of it is the
// stationary residual life, of density (1 − F(x))/MTBF.
func (rt *Runtime) startFailureClock(n NodeID, inService bool) {
	rt.startGroupClock(n)
	var d float64
	switch rt.cfg.Failures {
	case Exponential:
		d = rt.failStream(n).ExpFloat64() * float64(rt.cfg.NodeMTBF)
	case Weibull:
		k := rt.cfg.WeibullShape
		eta := float64(rt.cfg.NodeMTBF) / math.Gamma(1+1/k)
		if inService {
			// a random time falls in a lifetime with a chance proportional
			// to its length, x·f(x)/MTBF, which for a Weibull is η·G^{1/k}
			// with G ~ Gamma(1 + 1/k); what is left of it is a uniform share
			s := rt.failStream(n)
			life := eta * math.Pow(distuv.Gamma{Alpha: 1 + 1/k, Beta: 1, Src: s}.Rand(), 1/k)
			d = s.Float64() * life
		} else {
			u := rt.failStream(n).Float64()
			d = eta * math.Pow(-math.Log1p(-u), 1/k)
		}
	default:
		return
	}
	if !(d < float64(Never-rt.eng.now)) { // (NaN too: a Weibull too extreme for float64)
		return
	}
	rt.eng.Schedule(rt.eng.now+Time(d), rt.kFail, int32(n), int64(rt.links[n].inc))
}

// failStream returns node n's failure stream, created on first use and kept, so
// that successive lives of a node draw successive numbers.
func (rt *Runtime) failStream(n NodeID) *rand.Rand {
	if rt.failRNG == nil {
		rt.failRNG = make(map[NodeID]*rand.Rand)
	}
	s := rt.failRNG[n]
	if s == nil {
		s = rt.eng.Stream("failure", uint64(n))
		rt.failRNG[n] = s
	}
	return s
}

// startGroupClock draws the next failure of node n's failure domain, unless
// its clock is already running. A domain's clock runs while one of its nodes
// may be powered on: it starts when the first one is and stops when the
// domain fails (which leaves none). Failures of a domain with nothing powered
// on would change nothing, and the intervals are exponential, so a clock
// stopped meanwhile and started again draws from the same law. The stream is
// named by the domain alone, so the trace is the same for every protocol.
func (rt *Runtime) startGroupClock(n NodeID) {
	if rt.cfg.GroupMTBF <= 0 || rt.cfg.Failures == NoFailures {
		return
	}
	if rt.groupOn == nil {
		groups := (len(rt.links) + rt.cfg.GroupSize - 1) / rt.cfg.GroupSize
		rt.groupOn = make([]bool, groups)
		rt.groupRNG = make([]*rand.Rand, groups)
	}
	g := int(n) / rt.cfg.GroupSize
	if rt.groupOn[g] {
		return
	}
	if rt.groupRNG[g] == nil {
		rt.groupRNG[g] = rt.eng.Stream("group-failure", uint64(g))
	}
	d := rt.groupRNG[g].ExpFloat64() * float64(rt.cfg.GroupMTBF)
	if !(d < float64(Never-rt.eng.now)) { // (NaN too: a Weibull too extreme for float64)
		return
	}
	rt.groupOn[g] = true
	rt.eng.Schedule(rt.eng.now+Time(d), rt.kGroupFail, int32(g), 0)
}

// onGroupFail fails every powered-on node of failure domain ev.I at once, in
// node order: an application node, or a spare that is booting or has taken a
// failed node's place. Spares still in the pool are powered off and survive.
func (rt *Runtime) onGroupFail(ev Event) {
	g := int(ev.I)
	rt.groupOn[g] = false
	if rt.finished {
		return
	}
	lo := g * rt.cfg.GroupSize
	for n := lo; n < min(lo+rt.cfg.GroupSize, len(rt.links)); n++ {
		if s := rt.links[n].state; s == nodeActive || s == nodeBooting {
			rt.failNode(NodeID(n), false)
		}
	}
}

func (rt *Runtime) onFail(ev Event) {
	n := NodeID(ev.I)
	l := &rt.links[n]
	if ev.J >= 0 && uint32(ev.J) != l.inc {
		return // a clock of an earlier life
	}
	if l.state == nodeFailed || l.state == nodeSpare || rt.finished {
		rt.stats.IgnoredFailures++ // planned failures of dead or idle nodes change nothing
		return
	}
	rt.failNode(n, false)
}

// failNode applies fail-stop semantics to node n now: its objects, queues,
// stored data and in-progress work are gone, and its failure will be
// detected (now if it was fenced: the monitor suspected it).
func (rt *Runtime) failNode(n NodeID, fenced bool) {
	nd, l := &rt.nodes[n], &rt.links[n]
	now := rt.eng.now
	wasSpare := l.state != nodeActive
	rt.stats.Failures++
	rt.countHeartbeats(n, now)
	nd.failAt = append(nd.failAt, now)
	l.inc++
	rt.incVer++
	l.state = nodeFailed
	nd.busy = 0
	nd.ready.clear()
	nd.sys.clear()
	for k := range nd.mem {
		rt.stats.memTotal[k] -= nd.mem[k]
		nd.mem[k] = 0
	}
	// the record first: what the loss below calls back (a storage
	// operation reported failed) may place an object on n again, and
	// placedOnFailed then files it with this failure
	rt.failRecs = append(rt.failRecs, Recovery{Node: n, FailedAt: now, DetectedAt: Never, RecoveredAt: Never, RestoredAt: Never, wasSpare: wasSpare})
	idx := len(rt.failRecs) - 1
	nd.lastFailure = idx + 1
	rt.pfs.drop(rt, n)

	rt.failRecs[idx].mark = rt.progress
	for i := range rt.objs {
		o := &rt.objs[i]
		if o.migrating {
			switch mig := rt.migrations[ObjID(i)]; {
			case mig.from == n && now < mig.lastByte:
				// its state was still leaving this node: lost with it
				rt.place[i] = n
				rt.placeVer++
			case rt.place[i] == n && mig.from != n && rt.links[mig.from].state != nodeFailed:
				// it was moving here: its state is still at the source, the
				// transfer fails and Migrate puts it back
				rt.place[i] = mig.from
				rt.placeVer++
				continue
			}
			// otherwise it travels on: to this node, whose failure loses
			// it (its source failed after the last byte left), or away
			// from it (it arrives elsewhere)
		}
		if rt.place[i] != n || rt.lost[i] {
			continue
		}
		rt.failRecs[idx].objects = append(rt.failRecs[idx].objects, ObjID(i))
		if rt.coupled {
			rt.noteLost(ObjID(i))
		}
		rt.lose(ObjID(i))
	}
	if rt.coupled && len(rt.failRecs[idx].objects) > 0 {
		rt.stallOthers()
	}
	detect, what := now, "false suspicion: fenced"
	if !fenced {
		detect, what = rt.detectTime(n, now), "failure"
	}
	if rt.tracer != nil {
		rt.tracer.Instant(n, now, what)
	}
	rt.eng.Schedule(detect, rt.kDetect, int32(n), int64(idx))
	if rt.cfg.Repair > 0 {
		// not back in the pool before its failure is known (nobody
		// repairs what is not known broken): a protocol that still
		// counts it among its nodes would place objects on an idle
		// spare, where they never run
		rt.eng.Schedule(max(now+rt.cfg.Repair, detect), rt.kRepair, int32(n), 0)
	}
	rt.checkQuiet()
	if rt.stats.Failures >= cmp.Or(rt.cfg.MaxFailures, DefaultMaxFailures) {
		rt.Abort(fmt.Sprintf("%d failures in %v, more than a run that can finish meets: every recovery is cut short by the next failure", rt.stats.Failures, now))
	}
}

// lose applies fail-stop to object id, whose node has failed: its running
// handler, waiting messages and progress are gone.
func (rt *Runtime) lose(id ObjID) {
	o := &rt.objs[id]
	rt.abort(id)
	rt.lost[id], o.queued, o.migrating = true, false, false
	o.idle = nil
	rt.dropCut(o)
	rt.discardInbox(o)
	rt.setProgress(id, 0)
	if l, ok := rt.wl.(ProgressLinker); ok {
		if other := l.ProgressLink(id); other != None {
			rt.RefreshProgress(other)
		}
	}
}

// placedOnFailed loses object id, just placed on node n, if n has failed: a
// protocol that restarts or restores objects on the nodes it believes alive
// may place them on one whose failure it has not yet been told of. The
// objects are lost as if they had been there when n failed, and the
// failure's detection reports them with the others. Placing an object on a
// node whose failure was already reported is the protocol's error.
func (rt *Runtime) placedOnFailed(id ObjID, n NodeID) {
	if rt.links[n].state != nodeFailed {
		return
	}
	rt.lose(id)
	r := rt.lastFailure(n)
	switch {
	case r.DetectedAt != Never:
		rt.Abort(fmt.Sprintf("object %d placed on node %d, whose failure was reported at %v", id, n, r.DetectedAt))
	case !slices.Contains(r.objects, id):
		r.objects = append(r.objects, id)
	}
}

// lastFailure returns the record of node n's latest failure, nil if it
// never failed.
func (rt *Runtime) lastFailure(n NodeID) *Recovery {
	if i := rt.nodes[n].lastFailure; i > 0 {
		return &rt.failRecs[i-1]
	}
	return nil
}

func (rt *Runtime) onDetect(ev Event) {
	rec := &rt.failRecs[ev.J]
	rec.DetectedAt = rt.eng.now
	rt.stats.Detected++
	if rt.tracer != nil {
		rt.tracer.Instant(rec.Node, rt.eng.now, "failure detected")
	}
	if !rec.wasSpare {
		rt.open = append(rt.open, int(ev.J))
	}
	// the objects still lost on the node: one it held when it failed may
	// have been re-created elsewhere since (a restart from scratch before
	// the detection), and is no longer the protocol's to recover
	objs := rec.objects[:0:0]
	for _, id := range rec.objects {
		if rt.lost[id] && rt.place[id] == rec.Node {
			objs = append(objs, id)
		}
	}
	if len(objs) > 0 && !rec.wasSpare {
		// before OnFailure, which may restore them at once
		rec.unrestored = slices.Clone(objs)
		rt.restoring = append(rt.restoring, int(ev.J))
	}
	rt.proto.OnFailure(Failure{Node: rec.Node, At: rec.FailedAt, DetectedAt: rec.DetectedAt,
		Objects: objs, WasSpare: rec.wasSpare})
	rt.closeRecoveries()
}

// restored notes that object id, lost in failures being recovered, is live
// again (restored or re-created): a failure whose lost objects are all back
// is restored now.
func (rt *Runtime) restored(id ObjID) {
	if len(rt.restoring) == 0 || rt.lost[id] {
		return
	}
	out := rt.restoring[:0]
	for _, i := range rt.restoring {
		r := &rt.failRecs[i]
		if k := slices.Index(r.unrestored, id); k >= 0 {
			r.unrestored = slices.Delete(r.unrestored, k, k+1)
		}
		if len(r.unrestored) == 0 {
			r.RestoredAt = rt.eng.now
			if r.progressBack != 0 {
				// parked: recovered once the progress is back from the
				// restored state
				rt.open = append(rt.open, i)
				rt.finishLater()
			}
			continue
		}
		out = append(out, i)
	}
	rt.restoring = out
}

// closeRecoveries marks detected failures as recovered once the application's
// progress is back where it was when they struck, and the objects they lost
// are restored: survivors computing ahead while a lost object waits for its
// spare do not end a recovery that its rollback will undo. A failure whose
// progress came back before its objects is parked until they are back
// (restored, settleParked).
// Progress restored in this event is judged once the event is over, when a
// rollback has restored every object (onFinish).
func (rt *Runtime) closeRecoveries() {
	if rt.restoredIn == rt.eng.executed {
		rt.finishLater()
		return
	}
	out := rt.open[:0]
	for _, i := range rt.open {
		r := &rt.failRecs[i]
		if rt.progress >= r.mark && rt.eng.now > r.DetectedAt {
			if len(r.unrestored) == 0 {
				r.RecoveredAt = rt.eng.now
			} else {
				r.progressBack = rt.eng.now // parked until restored
			}
			continue
		}
		out = append(out, i)
	}
	rt.open = out
}

// settleParked ends the recoveries of failures whose lost objects were never
// restored at the time their progress came back, once the run has completed
// without them (a replica's twin carried on). A run stopped before its end
// may have been about to restore them: their recoveries stay unended, as
// survivors computing while the lost objects wait do not end one.
func (rt *Runtime) settleParked() {
	if !rt.finished || rt.aborted {
		return
	}
	for _, i := range rt.restoring {
		if r := &rt.failRecs[i]; r.progressBack != 0 {
			r.RecoveredAt = r.progressBack
		}
	}
}

// FailureDetected reports whether node n is down and its failure has been
// detected (reported through OnFailure). A protocol may leave such a node
// among the slots when it held nothing; a recovery that re-places objects
// on the slots must not use it.
func (rt *Runtime) FailureDetected(n NodeID) bool {
	if rt.links[n].state != nodeFailed {
		return false
	}
	r := rt.lastFailure(n)
	return r != nil && r.DetectedAt != Never
}

// FailedAt is when node n failed, while it is down (detected or not);
// Never while it runs.
func (rt *Runtime) FailedAt(n NodeID) Time {
	if rt.links[n].state != nodeFailed {
		return Never
	}
	if r := rt.lastFailure(n); r != nil {
		return r.FailedAt
	}
	return Never
}

// FailNow makes node n fail at once (tests and protocols that model a crash).
func (rt *Runtime) FailNow(n NodeID) { rt.eng.Schedule(rt.eng.now, rt.kFail, int32(n), -1) }
