package replication

import (
	"fmt"

	"ftsim/sim"
)

// Workload is the application run twice: objects 0..n-1 are replicas A of the
// scenario's objects, n..2n-1 their replicas B.
type Workload struct {
	inner sim.Workload
	p     *Protocol
}

// replica is one instance of an application object; it reports its pair's
// progress (Protocol.pairProgress) so that the run ends when every object is
// complete in one of its replicas.
type replica struct {
	sim.Object
	id sim.ObjID
	p  *Protocol
}

// Progress implements sim.Object.
func (r *replica) Progress() int64 { return r.p.pairProgress(r.id) }

// NumObjects implements sim.Workload.
func (w *Workload) NumObjects() int { return 2 * w.p.n }

// NewObject creates replica id of object id mod n in its initial state, with
// empty message tables.
func (w *Workload) NewObject(id sim.ObjID) sim.Object {
	p := w.p
	r := &replica{Object: w.inner.NewObject(p.logical(id)), id: id, p: p}
	st := &p.rep[id]
	*st = replicaState{obj: r, life: st.life + 1}
	return r
}

// TotalProgress implements sim.Workload: each object counts once.
func (w *Workload) TotalProgress() int64 { return w.inner.TotalProgress() }

// AnswerObjects implements sim.AnswerHolder: none in particular, since
// either replica of an object may hold its answer; Check looks for one.
func (w *Workload) AnswerObjects() []sim.ObjID { return nil }

// Check checks, for every object, the live replica that got further.
func (w *Workload) Check(objs []sim.Object) sim.Outcome {
	n := w.p.n
	pick := make([]sim.Object, n)
	var needed map[sim.ObjID]bool
	if h, ok := w.inner.(sim.AnswerHolder); ok {
		needed = map[sim.ObjID]bool{}
		for _, id := range h.AnswerObjects() {
			needed[id] = true
		}
	}
	for i := range n {
		a, b := objs[i], objs[i+n]
		switch {
		case a != nil && (b == nil || a.(*replica).Object.Progress() >= b.(*replica).Object.Progress()):
			pick[i] = a.(*replica).Object
		case b != nil:
			pick[i] = b.(*replica).Object
		case needed == nil || needed[sim.ObjID(i)]:
			return sim.Outcome{Detail: fmt.Sprintf("object %d lost in both replicas at completion", i)}
		}
	}
	return w.inner.Check(pick)
}

// PlaceObjects implements sim.Placer: replica A where the policy puts the
// object among the slots, replica B half the slots further.
func (w *Workload) PlaceObjects(policy sim.Placement, slots []sim.NodeID, place []sim.NodeID) {
	n, k := len(slots), w.p.n
	for i := range k {
		s := sim.PolicySlot(policy, i, k, n)
		place[i] = slots[s]
		place[i+k] = slots[(s+max(1, n/2))%n]
	}
}
