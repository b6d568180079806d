package sim

import (
	"bytes"
	"testing"
)

// Snapshot reuses the bytes it marshalled while the object has not changed
// since, and marshals again after a handler, a hand-out by Object, or a
// restore: a stale state would roll a checkpoint back to before the change.
func TestSnapshotReusesOnlyAnUnchangedState(t *testing.T) {
	snap := func(t *testing.T, rt *Runtime) Snap {
		t.Helper()
		s, err := rt.Snapshot(1)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	decode := func(t *testing.T, s Snap) (got, data int64) {
		t.Helper()
		var o scriptObj
		if err := o.UnmarshalBinary(s.State); err != nil {
			t.Fatal(err)
		}
		return o.got, o.data
	}
	same := func(a, b Snap) bool { return &a.State[0] == &b.State[0] }
	var first Snap
	restored := false
	steps := map[Time]func(rt *Runtime){
		Millisecond: func(rt *Runtime) { // object 1 has handled nothing yet
			first = snap(t, rt)
			if again := snap(t, rt); !same(first, again) {
				t.Error("an unchanged object was marshalled again")
			}
			if g, _ := decode(t, first); g != 0 {
				t.Errorf("state before the message: %d handled, want 0", g)
			}
		},
		3 * Millisecond: func(rt *Runtime) { // after its handler
			s := snap(t, rt)
			if g, _ := decode(t, s); same(first, s) || g != 1 {
				t.Errorf("state after the handler: %d handled (reused %v), want 1, marshalled again", g, same(first, s))
			}
			rt.Object(1).(*scriptObj).data = 42 // a protocol may change what it is handed
			if _, d := decode(t, snap(t, rt)); d != 42 {
				t.Errorf("state after Object: data %d, want 42", d)
			}
			if err := rt.Restore(1, 1, first); err != nil {
				t.Fatal(err)
			}
			r := snap(t, rt)
			if g, d := decode(t, r); same(first, r) || g != 0 || d != 0 || !bytes.Equal(r.State, first.State) {
				t.Errorf("state after the restore: %d handled, data %d (reused %v), want the restored 0, 0, marshalled again", g, d, same(first, r))
			}
			restored = true
		},
	}
	// total 2 is never reached: the run goes on after the message
	wl := &scriptWL{n: 2, total: 2, start: only0(func(c *Ctx) {
		c.Spend(2 * Millisecond)
		c.Send(1, 1, 0, nil)
	})}
	rt, err := New(testConfig(2), wl, &atProto{steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	rt.Run()
	if first.State == nil || !restored {
		t.Fatal("the steps did not run")
	}
}
