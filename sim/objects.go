package sim

import "fmt"

// objState is the runtime's record of one application object.
type objState struct {
	obj       Object
	inbox     queueOf[*Message]
	inc       uint32 // bumped at every restore or re-creation
	progress  int64
	needStart bool
	running   bool
	queued    bool // in its node's ready queue
	paused    bool
	migrating bool     // Migrate is moving it (Runtime.migrations says from where)
	idle      []func() // called when the running handler ends
	runNode   NodeID   // where the running handler runs
	runGen    uint32   // bumped when a running handler is aborted or cut: its completion is void
	// late are the messages the running handler sends at its end, which
	// leave from its completion (Runtime.later); lateApp of them are
	// application messages, and they take lateWire bytes (for a cut, which
	// then need not read them)
	late      []lateMsg
	lateApp   int
	lateWire  int64
	lateEpoch uint32 // the epoch they were sent in
	lateAt    Time   // when they are due: the handler's end
	// under a Cutter: the running handler's task slot (-1: none), whether
	// it can be cut (its protocol let every message of it go as it was),
	// the messages it sent, after its start but before its end, that
	// have a departure event, and what a cut left of it (nil: nothing)
	task     int32
	cuttable bool
	cutAsked bool // CutObject scheduled a cut (without InterruptApp)
	stalled  bool // waiting for lost objects to catch up (coupled.go)
	sends    []*Message
	cut      *CutTask
	// state is what the last Snapshot marshalled, while the object has not
	// changed since (nil: unknown). A checkpoint every minute of handlers
	// of fifteen finds most objects as the one before left them (their
	// handler cut, its code run at its start), and marshalling them again
	// was a tenth of cpr-buddy's time at exascale. Snaps share it: nobody
	// writes a snapshot's bytes (Restore only reads them).
	state []byte
}

// abort cancels object id's running handler, if any, and frees its core: a
// restart or restore replaces the state the handler was producing.
func (rt *Runtime) abort(id ObjID) {
	o := &rt.objs[id]
	if !o.running {
		return
	}
	if rt.tracer != nil {
		rt.traceCompute(id, rt.eng.now)
	}
	rt.scheduleLate(o)
	o.running = false
	o.runGen++
	o.task = -1
	rt.running--
	if rt.links[o.runNode].state != nodeFailed {
		rt.nodes[o.runNode].busy--
		rt.kick(o.runNode)
	}
}

// dispatchable reports whether object o, placed on node at and lost or
// not, can run on node n now.
func (o *objState) dispatchable(at, n NodeID, lost bool) bool {
	return at == n && !o.running && !lost && !o.paused && !o.stalled && !o.migrating &&
		(o.needStart || o.cut != nil || o.inbox.len() > 0)
}

// Object returns the live object id (nil while it is lost).
func (rt *Runtime) Object(id ObjID) Object {
	if rt.lost[id] {
		return nil
	}
	o := &rt.objs[id]
	o.state = nil // the caller may change it
	return o.obj
}

// RefreshProgress records live object id's progress again, for an object
// whose Progress depends on other objects (a replica reports its pair's): the
// runtime otherwise reads it only when the object's own handlers end.
// Completion is judged once the event is over, as after a restore: a
// protocol refreshing several objects may raise one report before it lowers
// another.
func (rt *Runtime) RefreshProgress(id ObjID) {
	if o := &rt.objs[id]; !rt.lost[id] && o.obj != nil {
		rt.restoredProgress(id, o.obj.Progress())
	}
}

// ObjectProgress is object id's progress as last reported (0 while lost).
func (rt *Runtime) ObjectProgress(id ObjID) int64 { return rt.objs[id].progress }

// NodeOf is the node object id is placed on.
func (rt *Runtime) NodeOf(id ObjID) NodeID { return rt.place[id] }

// Lost reports whether object id died with its node and awaits restoration.
func (rt *Runtime) Lost(id ObjID) bool { return rt.lost[id] }

// ObjectsOn lists the objects placed on node n.
func (rt *Runtime) ObjectsOn(n NodeID) []ObjID {
	// Protocols ask per node and per checkpoint: an index rebuilt only when
	// the placement changed keeps that O(1) instead of O(objects).
	if rt.byNode == nil || rt.byNodeVer != rt.placeVer {
		rt.byNode = make([][]ObjID, len(rt.nodes)) // fresh: slices handed out earlier stay valid
		for i, at := range rt.place {
			if at >= 0 && int(at) < len(rt.byNode) {
				rt.byNode[at] = append(rt.byNode[at], ObjID(i))
			}
		}
		rt.byNodeVer = rt.placeVer
	}
	if n < 0 || int(n) >= len(rt.byNode) {
		return nil
	}
	s := rt.byNode[n]
	return s[:len(s):len(s)]
}

// Place maps every object onto the current slots with the configured policy
// (or the workload's own, if it is a Placer). It only changes placement;
// objects are moved by Restore or re-created.
func (rt *Runtime) Place() {
	rt.placeVer++
	if p, ok := rt.wl.(Placer); ok {
		p.PlaceObjects(rt.cfg.Placement, rt.slots, rt.place)
		return
	}
	for i := range rt.objs {
		rt.place[i] = rt.slots[PolicySlot(rt.cfg.Placement, i, len(rt.objs), len(rt.slots))]
	}
}

// PolicySlot is the slot, out of n, that placement policy p gives object i
// of k.
func PolicySlot(p Placement, i, k, n int) int {
	if p == RoundRobin {
		return i % n
	}
	return i * n / k
}

// SetNode places object id on node n without moving its state.
func (rt *Runtime) SetNode(id ObjID, n NodeID) { rt.place[id] = n; rt.placeVer++ }

// create (re)creates object id from the workload's initial state on node n and
// schedules its Start.
func (rt *Runtime) create(id ObjID, n NodeID) {
	o := &rt.objs[id]
	rt.discardInbox(o)
	o.obj, o.state = rt.wl.NewObject(id), nil
	o.stalled = false
	rt.place[id] = n
	rt.placeVer++
	o.inc++
	rt.lost[id], o.paused, o.migrating, o.queued = false, false, false, false
	o.needStart = true
	rt.dropCut(o)
	rt.restoredProgress(id, o.obj.Progress())
	rt.ready(id)
	rt.kick(n)
	rt.placedOnFailed(id, n)
	rt.restored(id)
}

func (rt *Runtime) discardInbox(o *objState) { o.inbox.clear() }

// Snap is an object as Snapshot takes it and Restore rebuilds it.
type Snap struct {
	State []byte     // Object.MarshalBinary
	Inbox []*Message // delivered, not yet handled
	// Started says whether its Start had run. An object whose Start is
	// still to run (its core was busy, or it was paused, since it was
	// created) is in its initial state, but it has not yet done what Start
	// does, such as sending its first messages: Restore must run Start.
	Started bool
	// Cut is what a checkpoint's cut left of a handler (InterruptApp),
	// nil if none: Restore runs it before the inbox.
	Cut *CutTask
}

// WireSize is the bytes s's messages take: those waiting in the inbox and
// those a cut handler has still to send. A checkpoint or a migration moves
// them with the object's modeled state.
func (s *Snap) WireSize() int64 {
	n := s.Cut.wireSize()
	for _, m := range s.Inbox {
		n += m.WireSize()
	}
	return n
}

// Snapshot serialises object id. The object must not be running.
func (rt *Runtime) Snapshot(id ObjID) (Snap, error) {
	o := &rt.objs[id]
	if rt.lost[id] {
		return Snap{}, fmt.Errorf("snapshot of lost object %d", id)
	}
	if o.running {
		return Snap{}, fmt.Errorf("snapshot of object %d while it runs", id)
	}
	if o.state == nil {
		state, err := o.obj.MarshalBinary()
		if err != nil {
			return Snap{}, fmt.Errorf("object %d: %w", id, err)
		}
		o.state = state
	}
	s := Snap{State: o.state, Started: !o.needStart, Cut: o.cut}
	for i := o.inbox.head; i < len(o.inbox.items); i++ {
		s.Inbox = append(s.Inbox, o.inbox.items[i])
	}
	return s, nil
}

// ModeledSize is object id's modeled state size in bytes.
func (rt *Runtime) ModeledSize(id ObjID) int64 { return rt.objs[id].obj.ModeledSize() }

// Restore replaces object id by one rebuilt from snapshot s on node n.
// Progress follows the restored state (for a cut handler, the state before
// it, until its rest has run). Unless s.Started, Start runs first; the rest
// of a cut handler runs first; then the inbox.
func (rt *Runtime) Restore(id ObjID, n NodeID, s Snap) error {
	obj := rt.wl.NewObject(id)
	if err := obj.UnmarshalBinary(s.State); err != nil {
		return fmt.Errorf("restore object %d: %w", id, err)
	}
	o := &rt.objs[id]
	rt.abort(id)
	rt.discardInbox(o)
	o.obj, o.state = obj, nil
	rt.place[id] = n
	rt.placeVer++
	o.inc++
	rt.lost[id], o.migrating, o.needStart, o.queued = false, false, !s.Started, false
	o.paused = false  // a restored object starts afresh; protocols pause it again if they need to
	o.stalled = false // a lost object catches up rather than waits, and a rollback's objects go on together
	for _, m := range s.Inbox {
		o.inbox.push(m)
	}
	progress := obj.Progress()
	rt.dropCut(o)
	if o.cut = s.Cut.restoredClone(); o.cut != nil {
		progress = o.cut.Progress
	}
	rt.restoredProgress(id, progress)
	rt.ready(id)
	rt.kick(n)
	rt.placedOnFailed(id, n)
	rt.restored(id)
	return nil
}

// Recreate rebuilds object id from the workload's initial state on node n; its
// Start runs again.
func (rt *Runtime) Recreate(id ObjID, n NodeID) {
	rt.abort(id)
	rt.create(id, n)
}

// RestartAll starts the application again from its initial state on the current
// slots: a new epoch (messages in flight are void), every object re-created and
// placed by the configured policy.
func (rt *Runtime) RestartAll() {
	rt.NewEpoch()
	rt.Place()
	rt.stats.Restarts++
	for i := range rt.objs {
		rt.Recreate(ObjID(i), rt.place[i])
	}
}

// NewEpoch starts a new application epoch: every application message sent
// before is dropped on arrival and every inbox is emptied. Coordinated rollback
// uses it so that no message crosses the recovery line.
//
// The messages in flight then are void: dropped where they arrive, they no
// longer count for WhenQuiet. (A handler sends its late messages when its
// code runs, dated at its end: those of a handler the rollback aborts would
// otherwise hold a drained checkpoint back until that end.)
func (rt *Runtime) NewEpoch() {
	rt.epoch++
	rt.inFlight = 0
	rt.dropStall() // a rollback or a restart: every object goes on from the same point
	for i := range rt.objs {
		rt.discardInbox(&rt.objs[i])
	}
}

// PauseApp stops dispatching application handlers (running ones finish).
func (rt *Runtime) PauseApp() { rt.appPaused = true }

// ResumeApp resumes dispatching.
func (rt *Runtime) ResumeApp() {
	rt.appPaused = false
	for i := range rt.objs {
		rt.ready(ObjID(i))
	}
	for k, n := range rt.slots {
		if k+resumeAhead < len(rt.slots) {
			rt.prefetchInboxes(rt.slots[k+resumeAhead])
		}
		rt.kick(n)
	}
}

// resumeAhead is how many nodes ahead ResumeApp warms the messages its kicks
// dispatch: those that arrived during a pause (a coordinated checkpoint)
// have gone cold since, and the kicks take them node after node.
const resumeAhead = 8

// PauseObject stops dispatching object id; ResumeObject undoes it.
func (rt *Runtime) PauseObject(id ObjID) { rt.objs[id].paused = true }

// ResumeObject resumes dispatching object id.
func (rt *Runtime) ResumeObject(id ObjID) {
	o := &rt.objs[id]
	o.paused = false
	rt.ready(id)
	rt.kick(rt.place[id])
}

// AppStuck reports whether the application can go no further by itself:
// no handler runs and no object that is not paused has a message waiting or
// its start pending (lost objects wait for their protocol). Messages in
// flight are not looked at; a protocol that needs them drained asks
// WhenQuiet(true, …) first.
func (rt *Runtime) AppStuck() bool {
	if rt.running > 0 {
		return false
	}
	for i := range rt.objs {
		o := &rt.objs[i]
		if !rt.lost[i] && !o.paused && (o.needStart || o.cut != nil || o.inbox.len() > 0) {
			return false
		}
	}
	return true
}

// Started reports whether object id's Start has run in its current life
// (since it was created, re-created or restored unstarted). Start's code
// runs when its handler begins, so its messages have been sent.
func (rt *Runtime) Started(id ObjID) bool { return !rt.objs[id].needStart }

// Running reports whether object id's handler is on a core now.
func (rt *Runtime) Running(id ObjID) bool { return rt.objs[id].running }

// HandlerPending reports whether object id has a handler running, or the
// rest of a cut one waiting.
func (rt *Runtime) HandlerPending(id ObjID) bool {
	o := &rt.objs[id]
	return o.running || o.cut != nil
}

// Deliver queues an application message the protocol held back for its object,
// on whatever node the object now lives. Messages for lost objects are dropped.
func (rt *Runtime) Deliver(m *Message) {
	o := &rt.objs[m.Dst]
	if rt.lost[m.Dst] {
		rt.stats.LostMsgs++
		return
	}
	o.inbox.push(m)
	rt.ready(m.Dst)
	rt.kick(rt.place[m.Dst])
}

type quietWaiter struct {
	drained bool
	fn      func()
}

// WhenQuiet calls fn once no application handler runs and, if drained, no
// application message is in flight: with the application paused this is a
// consistent cut in which every message sent has been delivered to an inbox.
func (rt *Runtime) WhenQuiet(drained bool, fn func()) {
	rt.quiet = append(rt.quiet, quietWaiter{drained, fn})
	rt.checkQuiet()
}

func (rt *Runtime) checkQuiet() {
	if len(rt.quiet) == 0 || rt.running > 0 {
		return
	}
	if rt.inFlight < 0 {
		// a miscount in the runtime (session 60's cut bug was one): a
		// drained moment now would be no consistent cut, and a checkpoint
		// taken there would lose messages. The run ends with the reason
		// instead of giving wrong figures or waiting for ever.
		rt.Abort(fmt.Sprintf("internal error: %d application messages in flight", rt.inFlight))
		return
	}
	if rt.inFlight > 0 && !rt.someUndrained() {
		// Nobody can go yet: leave the list as it is. Rebuilding it would
		// cost an allocation per delivery while a checkpoint drains the
		// network.
		return
	}
	ws := rt.quiet
	rt.quiet = nil
	for _, w := range ws {
		if w.drained && rt.inFlight > 0 {
			rt.quiet = append(rt.quiet, w)
			continue
		}
		w.fn()
	}
}

// someUndrained reports whether a quiet waiter does not need a drained network.
func (rt *Runtime) someUndrained() bool {
	for _, w := range rt.quiet {
		if !w.drained {
			return true
		}
	}
	return false
}

// migration is an object's state on its way from node from (Migrate).
type migration struct {
	from     NodeID
	lastByte Time // when its last byte leaves from: a failure of from before then loses it
}

// Migrate moves object id to node dst: it waits for the running handler, sends
// the state (its modeled size plus its waiting messages) over the network, and
// restores it there; messages arriving meanwhile follow it. done is called with
// false if the transfer is lost with either node (the object then stays where
// it was, or is lost with its node) or the object was restored or re-created
// meanwhile. As for any message, the source failing after the last byte left
// loses nothing: the object arrives.
func (rt *Runtime) Migrate(id ObjID, dst NodeID, done func(bool)) {
	o := &rt.objs[id]
	if rt.lost[id] || o.migrating {
		done(false)
		return
	}
	if o.running {
		rt.WhenObjectIdle(id, func() { rt.Migrate(id, dst, done) })
		return
	}
	src := rt.place[id]
	snap, err := rt.Snapshot(id)
	if err != nil {
		done(false)
		return
	}
	size := o.obj.ModeledSize() + snap.WireSize()
	o.inbox.clear() // the waiting messages travel in the snapshot
	o.migrating = true
	rt.place[id] = dst
	rt.placeVer++
	inc := o.inc
	rt.Transfer(src, dst, size, TagMigrate, func(ok bool) {
		o := &rt.objs[id]
		if o.inc != inc {
			done(false) // restored or re-created meanwhile: this state is stale
			return
		}
		if !ok || rt.lost[id] {
			if rt.links[src].state != nodeFailed && !rt.lost[id] {
				rt.place[id] = src
				rt.placeVer++
				o.migrating = false
				rt.ready(id)
				rt.kick(src)
			}
			done(false)
			return
		}
		// messages that arrived while in transit are already in the inbox
		extra := make([]*Message, 0, o.inbox.len())
		for o.inbox.len() > 0 {
			extra = append(extra, o.inbox.pop())
		}
		snap.Inbox = append(snap.Inbox, extra...)
		if err := rt.Restore(id, dst, snap); err != nil {
			done(false)
			return
		}
		done(true)
	})
	lastByte := rt.eng.now
	if src != dst {
		lastByte = rt.links[src].outFree // the transfer just took the outgoing side
	}
	if rt.migrations == nil {
		rt.migrations = make(map[ObjID]migration)
	}
	rt.migrations[id] = migration{from: src, lastByte: lastByte}
}

// WhenObjectIdle calls fn once object id is not running a handler.
func (rt *Runtime) WhenObjectIdle(id ObjID, fn func()) {
	if !rt.objs[id].running {
		fn()
		return
	}
	o := &rt.objs[id]
	o.idle = append(o.idle, fn)
}
