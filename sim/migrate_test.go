package sim

import (
	"slices"
	"testing"
)

// A token circulates on a ring of 4 objects on 4 nodes; object 1 migrates to
// node 3 mid-run. Its state (the token count) moves with it, messages sent to
// its old node follow it, and the run completes with every hop counted.
func TestMigrateMovesStateAndMessagesFollow(t *testing.T) {
	const hops = 400
	wl := &scriptWL{n: 4, total: hops}
	wl.start = only0(func(c *Ctx) { c.Send(1, 0, 1000, nil) })
	wl.on = func(c *Ctx, o *scriptObj, m *Message) {
		o.data++
		c.Compute(1e4)
		if o.wl.total > 0 {
			c.Send((c.Self()+1)%4, 0, 1000, nil)
		}
	}
	p := &recordProto{}
	cfg := testConfig(4)
	cfg.Limit = Second
	rt, _ := New(cfg, wl, p)
	var moved, ok bool
	rt.At(500*Microsecond, func() {
		rt.Migrate(1, 3, func(success bool) { moved, ok = true, success })
	})
	res := rt.Run()
	if !moved || !ok {
		t.Fatalf("migration done %v ok %v", moved, ok)
	}
	if rt.NodeOf(1) != 3 {
		t.Fatalf("object 1 on node %d, want 3", rt.NodeOf(1))
	}
	if !res.Finished || res.Stats.ExtraMsgs != 1 {
		t.Fatalf("finished %v, extra messages %d (want the one state transfer)", res.Finished, res.Stats.ExtraMsgs)
	}
	var sum int64
	for i := 0; i < 4; i++ {
		o := rt.Object(ObjID(i)).(*scriptObj)
		sum += o.data
		if o.got != o.data {
			t.Fatalf("object %d: handled %d messages but its state says %d", i, o.got, o.data)
		}
	}
	if sum != hops {
		t.Fatalf("%d hops counted, want %d", sum, hops)
	}
}

// Migrating to a node that fails on the way leaves the object where it was.
func TestMigrateToFailingNode(t *testing.T) {
	wl := &scriptWL{n: 2, total: 1}
	cfg := testConfig(3)
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 2, At: 100 * Microsecond}}
	cfg.Limit = Millisecond
	rt, _ := New(cfg, wl, &recordProto{})
	result := -1
	rt.At(99*Microsecond, func() {
		rt.Migrate(1, 2, func(ok bool) {
			result = 0
			if ok {
				result = 1
			}
		})
	})
	rt.Run()
	if result != 0 || rt.NodeOf(1) != 1 || rt.Lost(1) {
		t.Fatalf("result %d, object 1 on node %d lost %v", result, rt.NodeOf(1), rt.Lost(1))
	}
}

// SlotIndex follows the application's nodes through replacement, removal
// and reordering, and says -1 for a node that is not one of them; ObjectsOn
// follows the placement.
func TestSlotIndex(t *testing.T) {
	cfg := testConfig(4)
	cfg.Spares = 4 // nodes 4-7, which the slots below take
	rt, err := New(cfg, &scriptWL{n: 4}, &recordProto{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for n := range NodeID(8) {
			if got, want := rt.SlotIndex(n), slices.Index(rt.Slots(), n); got != want {
				t.Errorf("%s: SlotIndex(%d) = %d, want %d (slots %v)", when, n, got, want, rt.Slots())
			}
			var want []ObjID
			for i := range ObjID(4) {
				if rt.NodeOf(i) == n {
					want = append(want, i)
				}
			}
			if got := rt.ObjectsOn(n); !slices.Equal(got, want) {
				t.Errorf("%s: ObjectsOn(%d) = %v, want %v", when, n, got, want)
			}
		}
	}
	check("start")
	rt.ReplaceSlot(1, 6)
	check("after ReplaceSlot")
	rt.RemoveSlot(0)
	check("after RemoveSlot")
	rt.SetSlots([]NodeID{3, 6, 2, 1})
	check("after SetSlots")
	rt.SetNode(2, 3)
	check("after SetNode")
}
