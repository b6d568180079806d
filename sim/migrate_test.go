package sim

import (
	"errors"
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

// A migration that loses an end on the way fails, by the network's
// fail-stop rules. Object 1's state (1,000 bytes, 1 byte per ns, 2 µs of
// latency) leaves node 1 for node 2 from 99 to 100 µs and arrives at 102 µs.
// If the destination fails first, the object stays where it was; if the
// source fails before the last byte left, the object is lost with it; if
// after, the object arrives, unless the destination fails too.
func TestMigrateWithFailingEnd(t *testing.T) {
	us := func(f float64) Time { return Time(f * float64(Microsecond)) }
	for _, tc := range []struct {
		name     string
		failures []ScriptedFailure
		wantOK   bool
		wantNode NodeID
		wantLost bool
		reported [][]ObjID // the objects each failure reports lost
	}{
		{"destination fails", []ScriptedFailure{{Node: 2, At: us(101)}}, false, 1, false, [][]ObjID{nil}},
		{"source fails before the last byte left", []ScriptedFailure{{Node: 1, At: us(99.5)}}, false, 1, true, [][]ObjID{{1}}},
		{"source fails after the last byte left", []ScriptedFailure{{Node: 1, At: us(100)}}, true, 2, false, [][]ObjID{nil}},
		{"source fails after the last byte left, then the destination",
			[]ScriptedFailure{{Node: 1, At: us(100.5)}, {Node: 2, At: us(101.5)}}, false, 2, true, [][]ObjID{nil, {1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := &scriptWL{n: 2, total: 1}
			cfg := testConfig(3)
			cfg.Failures = ScriptedFailures
			cfg.Planned = tc.failures
			cfg.Limit = Second
			p := &recordProto{}
			rt, err := New(cfg, wl, p)
			if err != nil {
				t.Fatal(err)
			}
			var oks []bool
			rt.At(us(99), func() { rt.Migrate(1, 2, func(ok bool) { oks = append(oks, ok) }) })
			rt.Run()
			if !slices.Equal(oks, []bool{tc.wantOK}) || rt.NodeOf(1) != tc.wantNode || rt.Lost(1) != tc.wantLost {
				t.Fatalf("outcome %v, object 1 on node %d lost %v; want %v on node %d lost %v",
					oks, rt.NodeOf(1), rt.Lost(1), tc.wantOK, tc.wantNode, tc.wantLost)
			}
			if len(p.failures) != len(tc.reported) {
				t.Fatalf("%d failures reported, want %d", len(p.failures), len(tc.reported))
			}
			for i, f := range p.failures {
				if !slices.Equal(f.Objects, tc.reported[i]) {
					t.Errorf("failure of node %d reported objects %v, want %v", f.Node, f.Objects, tc.reported[i])
				}
			}
		})
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

// startProto snapshots object 2 at 1 ms, before its Start has run (object 0
// holds their node's core until 2 ms), and restores it in place or migrates
// it to node 1.
type startProto struct {
	BaseProtocol
	migrate bool
	started bool // what the snapshot said
	err     error
}

func (p *startProto) Start() {
	p.RT.At(Millisecond, func() {
		rt := p.RT
		if p.migrate {
			rt.Migrate(2, 1, func(ok bool) {
				if !ok {
					p.err = errors.New("migration failed")
				}
			})
			return
		}
		s, err := rt.Snapshot(2)
		if err == nil {
			err = rt.Restore(2, 0, s)
		}
		p.started, p.err = s.Started, err
	})
}

// An object snapshotted before its Start ran still runs it once restored or
// migrated: it used to be restored as started, never sent what Start sends,
// and the run hung (mlog checkpoints at the very start when max_log is below
// one message, and the restore after a failure lost the object's first
// step).
func TestSnapshotBeforeStart(t *testing.T) {
	for _, migrate := range []bool{false, true} {
		wl := &scriptWL{n: 3, total: 2, start: func(c *Ctx) {
			switch c.Self() {
			case 0:
				c.Spend(2 * Millisecond)
				c.Send(0, 1, 0, nil)
			case 2:
				c.Send(2, 1, 0, nil)
			}
		}}
		p := &startProto{migrate: migrate}
		rt, err := New(testConfig(2), wl, p)
		if err != nil {
			t.Fatal(err)
		}
		res := rt.Run()
		if p.err != nil || p.started {
			t.Fatalf("migrate %v: snapshot said started %v, error %v", migrate, p.started, p.err)
		}
		done, total := rt.Progress()
		if !res.Finished || done != total || rt.Object(2).(*scriptObj).got != 1 {
			t.Fatalf("migrate %v: finished %v with progress %d of %d, object 2 got %d messages, want 1",
				migrate, res.Finished, done, total, rt.Object(2).(*scriptObj).got)
		}
		if want := NodeID(map[bool]int{false: 0, true: 1}[migrate]); rt.NodeOf(2) != want {
			t.Fatalf("migrate %v: object 2 on node %d, want %d", migrate, rt.NodeOf(2), want)
		}
	}
}

// The messages waiting in a migrating object's inbox travel with its state
// (the transfer carries their wire size), those that arrive while it is in
// transit wait for it on the destination, and all are handled there once, in
// arrival order. Node 0 holds objects 0 and 2, node 1 objects 1 and 3. Object
// 2 sends three messages to object 0 and keeps their core busy, so they wait
// in object 0's inbox when it leaves for node 1 at 1 ms; at 1.1 ms, during
// the transfer, object 3 sends two more, to node 1.
func TestMigrateCarriesInboxAndTransitMessages(t *testing.T) {
	const size = 100_000 // each message; the transfer takes about 0.3 ms
	type handled struct {
		tag  int32
		node NodeID
	}
	var got []handled
	wl := &scriptWL{n: 4, total: 6} // object 0's five messages, object 3's own
	wl.start = func(c *Ctx) {
		switch c.Self() {
		case 2:
			for tag := range int32(3) {
				c.Send(0, tag, size, nil)
			}
			c.Spend(5 * Millisecond)
		case 3:
			c.Spend(1100 * Microsecond)
			c.Send(3, 9, 0, nil)
		}
	}
	wl.on = func(c *Ctx, o *scriptObj, m *Message) {
		o.data++
		if c.Self() == 3 {
			c.Send(0, 3, size, nil)
			c.Send(0, 4, size, nil)
			return
		}
		got = append(got, handled{m.Tag, c.Node()})
	}
	rt, err := New(testConfig(2), wl, &recordProto{})
	if err != nil {
		t.Fatal(err)
	}
	var doneAt Time
	rt.At(Millisecond, func() {
		rt.Migrate(0, 1, func(ok bool) {
			if !ok {
				t.Error("migration failed")
			}
			doneAt = rt.Now()
		})
	})
	res := rt.Run()
	if !res.Finished {
		t.Fatalf("run did not finish: %+v", res)
	}
	want := []handled{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("object 0 handled (tag, node) %v, want %v", got, want)
	}
	wire := (&Message{Size: size}).WireSize()
	if res.Stats.ExtraMsgs != 1 || res.Stats.ExtraBytes != 1000+3*wire {
		t.Fatalf("extra traffic %d messages, %d bytes; want the one transfer of 1000 + 3×%d bytes",
			res.Stats.ExtraMsgs, res.Stats.ExtraBytes, wire)
	}
	// sent at 1 ms: latency plus 1 byte per ns
	if want := Millisecond + 2*Microsecond + Time(1000+3*wire)*Nanosecond; doneAt != want {
		t.Fatalf("migration done at %v, want %v", doneAt, want)
	}
}

// A running object migrates when its handler ends; a lost object and one
// already migrating are refused at once.
func TestMigrateWaitsOrRefuses(t *testing.T) {
	cases := []struct {
		name     string
		fail     bool // node 0 fails at 0.5 ms, before the migration
		twice    bool // a second migration of the same object right after
		wantOK   []bool
		wantDone Time // of the first migration
	}{
		{name: "running: after its 2 ms handler", wantOK: []bool{true},
			wantDone: 2*Millisecond + 2*Microsecond + 1000*Nanosecond},
		{name: "lost", fail: true, wantOK: []bool{false}, wantDone: Millisecond},
		{name: "already migrating", twice: true, wantOK: []bool{false, true},
			wantDone: 2*Millisecond + 2*Microsecond + 1000*Nanosecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// total 1, never reached: the run goes on to its limit
			wl := &scriptWL{n: 2, total: 1, start: only0(func(c *Ctx) { c.Spend(2 * Millisecond) })}
			cfg := testConfig(2)
			cfg.Limit = 10 * Millisecond
			if tc.fail {
				cfg.Failures = ScriptedFailures
				cfg.Planned = []ScriptedFailure{{Node: 0, At: Millisecond / 2}}
			}
			rt, err := New(cfg, wl, &recordProto{})
			if err != nil {
				t.Fatal(err)
			}
			var oks []bool
			var doneAt []Time
			record := func(ok bool) { oks, doneAt = append(oks, ok), append(doneAt, rt.Now()) }
			rt.At(Millisecond, func() {
				rt.Migrate(0, 1, record)
				if tc.twice {
					rt.Migrate(0, 1, record)
				}
			})
			rt.Run()
			if !slices.Equal(oks, tc.wantOK) {
				t.Fatalf("outcomes %v, want %v", oks, tc.wantOK)
			}
			// the first call completes last: a refusal is immediate
			if at := doneAt[len(doneAt)-1]; at != tc.wantDone {
				t.Fatalf("first migration done at %v, want %v", at, tc.wantDone)
			}
			if want := NodeID(map[bool]int{false: 1, true: 0}[tc.fail]); rt.NodeOf(0) != want {
				t.Fatalf("object 0 on node %d, want %d", rt.NodeOf(0), want)
			}
		})
	}
}

// A migration whose object is restored elsewhere before the state arrives is
// void: the arriving state is stale and does not replace the restored one.
func TestMigrateVoidAfterRestore(t *testing.T) {
	wl := &scriptWL{n: 2, total: 1}
	cfg := testConfig(3)
	cfg.Limit = Second
	rt, _ := New(cfg, wl, &recordProto{})
	var oks []bool
	var restoreErr error
	rt.At(99*Microsecond, func() {
		s, err := rt.Snapshot(1)
		if err != nil {
			t.Fatal(err)
		}
		rt.Migrate(1, 2, func(ok bool) { oks = append(oks, ok) })
		rt.At(100*Microsecond, func() { restoreErr = rt.Restore(1, 0, s) })
	})
	rt.Run()
	if restoreErr != nil || !slices.Equal(oks, []bool{false}) || rt.NodeOf(1) != 0 {
		t.Fatalf("restore error %v, migration outcome %v, object 1 on node %d; want the migration void and the object on node 0",
			restoreErr, oks, rt.NodeOf(1))
	}
}
