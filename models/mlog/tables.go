package mlog

// This file holds the receiver's tables keyed by TN or by (sender, SN). They
// are looked up for every message, and with 20,000 objects a Go map each is
// a hash and a cache miss per lookup (a fifth of the run at 10,000 nodes).
// Both keys are dense: a receiver hands out TNs in increasing order and
// forgets them from below at its checkpoints, and the SNs from one sender to
// one receiver increase by one per message. So each table is a window, a
// slice indexed by key minus the window's base, per receiver (TN) or per
// sender (SN).

import "ftsim/sim"

// window is a table indexed by a dense uint64 key: s[head+i] is the slot of
// key base+i. A zero slot is empty. The keys go up (put grows the window at
// its end) and are dropped from below (dropBelow, trim), so the live slots
// stay few and the slice is reused.
type window[T comparable] struct {
	base uint64 // key of s[head]
	head int
	s    []T
}

// empty reports whether the window holds no slot.
func (w *window[T]) empty() bool { return w.head == len(w.s) }

// end returns the key after the last slot.
func (w *window[T]) end() uint64 { return w.base + uint64(len(w.s)-w.head) }

// reset empties the window; the next put starts it at key base.
func (w *window[T]) reset(base uint64) {
	clear(w.s[w.head:])
	w.s, w.head, w.base = w.s[:0], 0, base
}

// at returns the slot of key i, or nil outside the window.
func (w *window[T]) at(i uint64) *T {
	if i < w.base || i >= w.end() {
		return nil
	}
	return &w.s[w.head+int(i-w.base)]
}

// put returns the slot of key i, growing the window to hold it (below its
// base too, which the callers make rare: it copies the window). The pointer
// is valid until the next put.
func (w *window[T]) put(i uint64) *T {
	if i < w.base {
		n := len(w.s) - w.head
		gap := int(w.base - i)
		s := make([]T, gap+n, 2*(gap+n))
		copy(s[gap:], w.s[w.head:])
		w.s, w.head, w.base = s, 0, i
		return &w.s[0]
	}
	var zero T
	for i >= w.end() {
		if len(w.s) == cap(w.s) && w.head > 0 { // reuse the dropped front
			n := copy(w.s, w.s[w.head:])
			clear(w.s[n:])
			w.s, w.head = w.s[:n], 0
		}
		w.s = append(w.s, zero)
	}
	return &w.s[w.head+int(i-w.base)]
}

// dropBelow removes the slots of the keys below b.
func (w *window[T]) dropBelow(b uint64) {
	if b <= w.base {
		return
	}
	if b >= w.end() {
		w.reset(b)
		return
	}
	n := int(b - w.base)
	clear(w.s[w.head : w.head+n])
	w.head += n
	w.base = b
}

// trim removes the empty slots at the front.
func (w *window[T]) trim() {
	var zero T
	for w.head < len(w.s) && w.s[w.head] == zero {
		w.head++
		w.base++
	}
	if w.empty() {
		w.reset(w.base)
	}
}

// snSlot is what a receiver's TN table holds for one message of a sender.
type snSlot struct {
	tn      uint64 // the TN given to the message (0: none; TNs start at 1)
	logging bool   // multi_failure: its tuple is on its way to the buddy
}

// tnSlot is a slot of the TN-ordered table (byTN): the message given that TN.
type tnSlot struct {
	k   pair
	set bool // k may be any pair, SN 0 included (a message sent while fallen)
}

// slotOf returns the slot of message k in o's TN table, or nil if it has none.
func (o *object) slotOf(k pair) *snSlot {
	i := o.tns.Find(k.src)
	if i < 0 {
		return nil
	}
	return o.tns.At(i).at(k.sn)
}

// tnOf returns the TN o gave message k (tnTable), or 0.
func (o *object) tnOf(k pair) uint64 {
	if s := o.slotOf(k); s != nil {
		return s.tn
	}
	return 0
}

// setTN records TN tn of message k in both directions (tnTable and byTN).
func (o *object) setTN(k pair, tn uint64) {
	w := o.tns.Ptr(k.src)
	if w.empty() { // a sender's first SN here may be far from 0
		w.reset(k.sn)
	}
	w.put(k.sn).tn = tn
	if o.byTN.empty() {
		o.byTN.reset(tn)
	}
	*o.byTN.put(tn) = tnSlot{k: k, set: true}
}

// byTNAt returns the message given TN tn (byTN), if any.
func (o *object) byTNAt(tn uint64) (pair, bool) {
	if s := o.byTN.at(tn); s != nil && s.set {
		return s.k, true
	}
	return pair{}, false
}

// forgetTNs drops the TNs up to t from both directions (garbage collection
// after a checkpoint): a message given such a TN loses its TN entry, whatever
// TN that entry holds.
func (o *object) forgetTNs(t uint64) {
	for tn := o.byTN.base; tn <= t && tn < o.byTN.end(); tn++ {
		s := o.byTN.at(tn)
		if !s.set {
			continue
		}
		if i := o.tns.Find(s.k.src); i >= 0 {
			w := o.tns.At(i)
			if x := w.at(s.k.sn); x != nil {
				x.tn = 0
				w.trim()
			}
		}
	}
	o.byTN.dropBelow(t + 1)
}

// setLogging marks message k's tuple as on its way (k has a TN: a slot).
func (o *object) setLogging(k pair, on bool) {
	i := o.tns.Find(k.src)
	if i < 0 {
		return
	}
	w := o.tns.At(i)
	if x := w.at(k.sn); x != nil {
		x.logging = on
		if !on {
			w.trim()
		}
	}
}

// heldAt returns the message held with TN tn > o.delivered, or nil.
func (o *object) heldAt(tn uint64) *sim.Message {
	if m := o.held.at(tn); m != nil {
		return *m
	}
	return nil
}

// holdMsg holds message m, whose TN tn > o.delivered is not the next one.
func (o *object) holdMsg(tn uint64, m *sim.Message) {
	o.held.dropBelow(o.delivered + 1) // the TNs delivered around the window
	if o.held.empty() {
		o.held.reset(o.delivered + 1)
	}
	*o.held.put(tn) = m
}
