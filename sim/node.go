package sim

import "slices"

type nodeState uint8

const (
	nodeSpare   nodeState = iota // idle in the pool, cold: its failure clock is stopped
	nodeBooting                  // taken from the pool, not yet usable
	nodeActive                   // usable
	nodeFailed                   // dead until repaired
)

// link is the part of a physical node that every message touches: its network
// interface and the incarnation that tells stale events from current ones.
// Links live in their own array (Runtime.links), apart from the rest of the
// node: at 24 bytes a node (240 KB for 10,000 nodes) they mostly stay in
// cache, where the whole node (queues, slices, counters) would cost a cache
// miss at each end of each message.
type link struct {
	outFree, inFree Time   // network interface, each direction: busy until
	inc             uint32 // bumped at every failure: events and messages of older incarnations are void
	state           nodeState
}

// node is the rest of the state of a physical node: its cores and storage
// queues. The fields dispatch touches come first, to share a cache line.
type node struct {
	busy  int // cores running a task
	ready queueOf[ObjID]
	// readyBuf is ready's array (New points it there) until the queue
	// first holds more than four objects: in the node's first line, where
	// an array of its own would cost a dependent cache miss at every
	// message that makes an object ready
	readyBuf [4]ObjID
	sys      queueOf[sysTask]

	failAt      []Time // failAt[k] is when incarnation k failed
	lastFailure int    // 1 + the index of its latest record in Runtime.failRecs, 0 if none
	activeSince Time
	diskFree    Time
	memFree     Time
	io          uint32 // storage epoch: CancelStorage voids the operations of older ones
	mem         [numMemKinds]int64
	booted      func(NodeID) // a booting spare: what runs when it has booted
	repairDue   bool         // repaired while still in the slots: joins the pool when it leaves them
}

// queueOf is a FIFO that reuses its backing array.
type queueOf[T any] struct {
	items []T
	head  int
}

func (q *queueOf[T]) push(v T) { q.items = append(q.items, v) }
func (q *queueOf[T]) len() int { return len(q.items) - q.head }
func (q *queueOf[T]) pop() T {
	v := q.items[q.head]
	var zero T
	q.items[q.head] = zero
	q.head++
	if q.head == len(q.items) {
		q.items = q.items[:0]
		q.head = 0
	}
	return v
}
func (q *queueOf[T]) clear() {
	clear(q.items)
	q.items = q.items[:0]
	q.head = 0
}

// Alive reports whether node n is up (active, booting or an idle spare).
func (rt *Runtime) Alive(n NodeID) bool { return rt.links[n].state != nodeFailed }

// Holds reports whether node n is up in incarnation inc: what was stored
// on it in that incarnation is still there.
func (rt *Runtime) Holds(n NodeID, inc uint32) bool {
	return n >= 0 && rt.links[n].state != nodeFailed && rt.links[n].inc == inc
}

// Incarnation is node n's incarnation number: it changes when n fails, so a
// protocol can tell whether a copy it stored on n is still there.
func (rt *Runtime) Incarnation(n NodeID) uint32 { return rt.links[n].inc }

// NodeLife tells when node n's current life began (it powered on at time 0
// as one of the application's nodes, or when it was taken as a spare) and
// whether it was already in service then: an application node that has not
// failed since, in a run whose nodes start in service (Config.InService), is
// met at an unknown point of its life. A protocol that knows the failure law
// derives the node's failure rate from them.
func (rt *Runtime) NodeLife(n NodeID) (since Time, inService bool) {
	return rt.nodes[n].activeSince, rt.cfg.InService && int(n) < rt.cfg.Nodes && rt.links[n].inc == 0
}

// NumNodes is the number of physical nodes, spares included.
func (rt *Runtime) NumNodes() int { return len(rt.nodes) }

// Slots returns the application's nodes in rank order. The slice is the
// runtime's own: copy it before changing it.
func (rt *Runtime) Slots() []NodeID { return rt.slots }

// SlotIndex returns node n's rank among the application's nodes (its index
// in Slots), or -1 when n is not one of them. Protocols that pair nodes by
// rank (buddies, rotated backups) call it per message.
func (rt *Runtime) SlotIndex(n NodeID) int {
	if n < 0 || int(n) >= len(rt.slotOf) {
		return -1
	}
	return int(rt.slotOf[n])
}

// SlotPartner returns the node offset places after n in the slots' rank
// order, wrapping around, or None when n is not a slot or the only one. An
// offset that is a multiple of the slot count (or below 1) counts as 1, so
// that n is never its own partner. Protocols keep a node's remote copies on
// its partner: offset 1 is its rank neighbour, a larger one can leave its
// failure domain (Config.GroupSize).
func (rt *Runtime) SlotPartner(n NodeID, offset int) NodeID {
	i, k := rt.SlotIndex(n), len(rt.slots)
	if i < 0 || k < 2 {
		return None
	}
	if offset %= k; offset <= 0 {
		offset = 1
	}
	return rt.slots[(i+offset)%k]
}

// indexSlots rebuilds slotOf from slots.
func (rt *Runtime) indexSlots() {
	if rt.slotOf == nil {
		rt.slotOf = make([]int32, len(rt.nodes))
	}
	for i := range rt.slotOf {
		rt.slotOf[i] = -1
	}
	for i, n := range rt.slots {
		rt.slotOf[n] = int32(i)
	}
	rt.releaseRepaired()
}

// SetSlots replaces the application's nodes (after a shrink or a replacement);
// call Place or SetNode afterwards to move objects.
func (rt *Runtime) SetSlots(s []NodeID) {
	rt.slots = append(rt.slots[:0], s...)
	rt.indexSlots()
}

// ReplaceSlot puts node repl in the place of node old, and moves the objects
// placed on old to repl (without restoring them), but those lost in a
// failure of old not detected yet: they stay where they died, and that
// failure's detection reports them. (A protocol may replace a node it
// learned dead from a failed transfer, before the detection, and that node
// may hold objects it had just restored there.)
func (rt *Runtime) ReplaceSlot(old, repl NodeID) {
	for i, n := range rt.slots {
		if n == old {
			rt.slots[i] = repl
		}
	}
	rt.indexSlots()
	var unreported []ObjID
	if r := rt.lastFailure(old); r != nil && r.DetectedAt == Never {
		unreported = r.objects
	}
	for i, at := range rt.place {
		if at == old && !(rt.lost[i] && slices.Contains(unreported, ObjID(i))) {
			rt.place[i] = repl
			rt.placeVer++
		}
	}
}

// RemoveSlot drops node n from the application's nodes (restart on fewer nodes).
func (rt *Runtime) RemoveSlot(n NodeID) {
	out := rt.slots[:0]
	for _, s := range rt.slots {
		if s != n {
			out = append(out, s)
		}
	}
	rt.slots = out
	rt.indexSlots()
}

// SparesLeft is the number of idle spares.
func (rt *Runtime) SparesLeft() int { return len(rt.spares) }

// TakeSpare takes an idle spare and returns it; ready is called when it has
// booted. It returns false when the pool is empty. A spare that fails while
// booting is reported through OnFailure with WasSpare set, and ready is not
// called.
func (rt *Runtime) TakeSpare(ready func(NodeID)) (NodeID, bool) {
	if len(rt.spares) == 0 {
		return None, false
	}
	n := rt.spares[0]
	rt.spares = rt.spares[1:]
	l := &rt.links[n]
	l.state = nodeBooting
	rt.nodes[n].booted = ready
	rt.powerOn(n, false)
	rt.eng.After(rt.cfg.SpareBoot, rt.kSpare, int32(n), int64(l.inc))
	return n, true
}

// OnSpareReady makes ready, instead of the function TakeSpare was given, run
// when spare n has booted (nothing if n is not booting): a recovery that
// gives up hands the spares it is booting to the one that takes over.
func (rt *Runtime) OnSpareReady(n NodeID, ready func(NodeID)) {
	if rt.links[n].state == nodeBooting {
		rt.nodes[n].booted = ready
	}
}

func (rt *Runtime) onSpareReady(ev Event) {
	l, nd := &rt.links[ev.I], &rt.nodes[ev.I]
	if uint32(ev.J) != l.inc || l.state != nodeBooting {
		return
	}
	l.state = nodeActive
	ready := nd.booted
	nd.booted = nil
	ready(NodeID(ev.I))
}

// activate brings a primary node into service at time 0.
func (rt *Runtime) activate(n NodeID) {
	rt.links[n].state = nodeActive
	rt.powerOn(n, rt.cfg.InService)
}

// powerOn starts node n's life: it heartbeats, and can fail, from now. A
// node inService has been in service before: its failure clock is met at a
// random point of its life.
func (rt *Runtime) powerOn(n NodeID, inService bool) {
	rt.nodes[n].activeSince = rt.eng.now
	rt.startFailureClock(n, inService)
	rt.startHeartbeats(n)
}

func (rt *Runtime) onRepair(ev Event) {
	if rt.links[ev.I].state != nodeFailed {
		return
	}
	if rt.slotOf[ev.I] >= 0 {
		// Still one of the application's nodes: its replacement is
		// booting, or the protocol keeps it. In the pool as well, it
		// could be taken as a spare while objects are placed on it; it
		// joins the pool when it leaves the slots.
		rt.nodes[ev.I].repairDue = true
		rt.repairsDue++
		return
	}
	rt.toPool(NodeID(ev.I))
}

// toPool puts repaired node n at the end of the spare pool, as a new
// incarnation: what was addressed to it while it was down (a copy sent
// before its failure was detected, with the incarnation the failure gave
// it) never reached it, and must not look held now that it is up again.
// The down incarnation ends now, for failAt.
func (rt *Runtime) toPool(n NodeID) {
	rt.nodes[n].failAt = append(rt.nodes[n].failAt, rt.eng.now)
	rt.links[n].inc++
	rt.incVer++
	rt.links[n].state = nodeSpare
	rt.spares = append(rt.spares, n)
	for _, f := range rt.poolWatchers {
		// in an event of its own: toPool runs inside slot changes a
		// watcher taking the spare would re-enter
		rt.At(rt.eng.now, f)
	}
}

// OnPoolJoin has f called, in an event of its own at the same instant,
// whenever a repaired node joins the spare pool.
func (rt *Runtime) OnPoolJoin(f func()) { rt.poolWatchers = append(rt.poolWatchers, f) }

// releaseRepaired puts the repaired nodes that have left the slots into
// the pool, in node order.
func (rt *Runtime) releaseRepaired() {
	if rt.repairsDue == 0 {
		return
	}
	for i := range rt.nodes {
		if nd := &rt.nodes[i]; nd.repairDue && rt.slotOf[i] < 0 {
			nd.repairDue = false
			rt.repairsDue--
			rt.toPool(NodeID(i))
		}
	}
}
