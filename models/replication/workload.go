package replication

import (
	"encoding/binary"
	"errors"
	"fmt"

	"ftsim/internal/seqset"
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

// MarshalBinary implements sim.Object: the object's state, then the
// replica's message numbers (the count per logical receiver, the numbers
// received per logical sender), which a checkpoint must restore with it.
func (r *replica) MarshalBinary() ([]byte, error) {
	state, err := r.Object.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st := &r.p.rep[r.id]
	b := binary.AppendUvarint(nil, uint64(len(state)))
	b = append(b, state...)
	b = binary.AppendUvarint(b, uint64(st.out.Len()))
	for i := range st.out.Len() {
		b = binary.AppendUvarint(b, uint64(st.out.Key(i)))
		b = binary.AppendUvarint(b, *st.out.At(i))
	}
	b = binary.AppendUvarint(b, uint64(st.in.Len()))
	for i := range st.in.Len() {
		b = binary.AppendUvarint(b, uint64(st.in.Key(i)))
		b = st.in.At(i).AppendBinary(b)
	}
	return b, nil
}

// UnmarshalBinary implements sim.Object.
func (r *replica) UnmarshalBinary(b []byte) error {
	next := func() (uint64, error) {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, errors.New("replica state truncated")
		}
		b = b[k:]
		return v, nil
	}
	size, err := next()
	if err != nil || size > uint64(len(b)) {
		return errors.New("replica state truncated")
	}
	if err := r.Object.UnmarshalBinary(b[:size]); err != nil {
		return err
	}
	b = b[size:]
	st := &r.p.rep[r.id]
	peer := func() (sim.ObjID, error) {
		v, err := next()
		if err == nil && v >= uint64(r.p.n) {
			err = fmt.Errorf("replica state names object %d of %d", v, r.p.n)
		}
		return sim.ObjID(v), err
	}
	count, err := next()
	for ; err == nil && count > 0; count-- {
		var dst sim.ObjID
		var sent uint64
		if dst, err = peer(); err == nil {
			sent, err = next()
			*st.out.Ptr(dst) = sent
		}
	}
	if err != nil {
		return err
	}
	if count, err = next(); err != nil {
		return err
	}
	for ; count > 0; count-- {
		src, err := peer()
		if err != nil {
			return err
		}
		set, rest, err := seqset.Decode(b)
		if err != nil {
			return err
		}
		*st.in.Ptr(src), b = set, rest
	}
	if len(b) > 0 {
		return fmt.Errorf("replica state: %d bytes left over", len(b))
	}
	return nil
}

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
	for i := range n {
		a, b := objs[i], objs[i+n]
		switch {
		case a != nil && (b == nil || a.(*replica).Object.Progress() >= b.(*replica).Object.Progress()):
			pick[i] = a.(*replica).Object
		case b != nil:
			pick[i] = b.(*replica).Object
		default:
			return sim.Outcome{Detail: fmt.Sprintf("object %d lost in both replicas at completion", i)}
		}
	}
	return w.inner.Check(pick)
}

// ProgressLink implements sim.ProgressLinker: a replica's report may count
// its twin's progress (Protocol.pairProgress), which the twin's loss voids
// at once, before the failure is detected.
func (w *Workload) ProgressLink(id sim.ObjID) sim.ObjID { return w.p.Twin(id) }

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
