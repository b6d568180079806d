package sim

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// rollbackProto restores, when node 1's failure is detected, object 1 (lost,
// its progress counted as 0) to a state of progress 2 and then object 0 to a
// state of progress 1, as a coordinated rollback restores object after
// object; the message object 0 still needs arrives a millisecond later.
type rollbackProto struct {
	BaseProtocol
	restoredAt Time
	// handled: object 1 is restored to progress 1 with a message in its
	// inbox, which it handles at once within Restore (reaching 2)
	handled bool
}

func scriptState(got int64) []byte { return binary.AppendVarint(binary.AppendVarint(nil, got), 0) }

func (p *rollbackProto) OnFailure(f Failure) {
	rt := p.RT
	p.restoredAt = rt.Now()
	state, inbox := scriptState(2), []*Message(nil)
	if p.handled {
		state, inbox = scriptState(1), []*Message{{Src: 1, Dst: 1, Tag: 8, To: 0}}
	}
	if err := rt.Restore(1, 0, Snap{State: state, Inbox: inbox, Started: true}); err != nil {
		rt.Abort(err.Error())
	}
	if err := rt.Restore(0, 0, Snap{State: scriptState(1), Started: true}); err != nil {
		rt.Abort(err.Error())
	}
	rt.At(rt.Now()+Millisecond, func() { rt.Deliver(&Message{Src: 1, Dst: 0, Tag: 9, To: 0}) })
}

// Completion is judged on the progress once a rollback's restores are all
// done: restoring the lost object first made the sum reach the total for a
// moment (2 + 2 of 4), and the run ended there, unfinished (progress 3 once
// object 0 was rolled back); so did a handler of the restored object run at
// once within Restore. The run must end when the last message is handled,
// with every unit of progress made.
func TestRollbackDoesNotFinishEarly(t *testing.T) {
	for _, handled := range []bool{false, true} {
		rollbackRun(t, handled)
	}
}

func rollbackRun(t *testing.T, handled bool) {
	t.Helper()
	wl := &scriptWL{n: 2, total: 4}
	wl.start = func(c *Ctx) {
		if c.Self() == 0 {
			c.Send(0, 1, 0, nil)
			c.Send(0, 2, 0, nil)
		} else {
			c.Send(1, 1, 0, nil)
		}
	}
	cfg := testConfig(2)
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 1, At: Millisecond}}
	cfg.DetectDelay = Millisecond
	cfg.Limit = Second
	p := &rollbackProto{handled: handled}
	rt, err := New(cfg, wl, p)
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run()
	done, total := rt.Progress()
	if !res.Finished || done != total || res.Makespan != p.restoredAt+Millisecond {
		t.Fatalf("handled within Restore %v: finished %v at %v with progress %d of %d; want the end at %v, complete", handled, res.Finished, res.Makespan, done, total, p.restoredAt+Millisecond)
	}
}

// answerWL is scriptWL whose answer lives in the objects of answer only.
type answerWL struct {
	scriptWL
	answer []ObjID
}

func (w *answerWL) AnswerObjects() []ObjID { return w.answer }

func (w *answerWL) Check(objs []Object) Outcome {
	for _, id := range w.answer {
		if objs[id].(*scriptObj).got != w.total {
			return Outcome{Detail: "incomplete answer"}
		}
	}
	return Outcome{OK: true}
}

// A run completes when object 0 handles its second message while node 1,
// holding object 1 (which never makes progress), failed a millisecond before
// and is not detected yet. The run is checked without object 1 when the
// workload's answer does not live in it (a farm worker), and reports the
// loss otherwise.
func TestLostObjectAtCompletion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer []ObjID // nil: the workload is no AnswerHolder
		ok     bool
		note   string
	}{
		{"every object holds the answer", nil, false, "object 1 lost at completion"},
		{"object 0 holds the answer", []ObjID{0}, true, ""},
		{"object 1 holds the answer too", []ObjID{0, 1}, false, "object 1 lost at completion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := scriptWL{n: 2, total: 2, start: only0(func(c *Ctx) {
				c.Spend(2 * Millisecond)
				c.Send(0, 1, 0, nil)
				c.Send(0, 2, 0, nil)
			})}
			var wl Workload = &script
			if tc.answer != nil {
				wl = &answerWL{script, tc.answer}
			}
			cfg := testConfig(2)
			cfg.Failures = ScriptedFailures
			cfg.Planned = []ScriptedFailure{{Node: 1, At: Millisecond}}
			cfg.DetectDelay = Second
			cfg.Limit = 10 * Second
			rt, err := New(cfg, wl, &recordProto{})
			if err != nil {
				t.Fatal(err)
			}
			res := rt.Run()
			if !res.Finished || res.Makespan != 2*Millisecond || res.Outcome.OK != tc.ok || res.Outcome.Detail != tc.note {
				t.Fatalf("finished %v at %v, ok %v (%q); want finished at 2ms, ok %v (%q)", res.Finished, res.Makespan, res.Outcome.OK, res.Outcome.Detail, tc.ok, tc.note)
			}
		})
	}
}

// Two objects answering each other on one node at no cost in time never
// let the clock move: the run ends on the stall limit, unfinished, with a
// note saying so, instead of looping without end.
func TestStalledRunEnds(t *testing.T) {
	wl := &scriptWL{n: 2, total: 1 << 40, start: only0(func(c *Ctx) { c.Send(1, 1, 0, nil) })}
	wl.on = func(c *Ctx, o *scriptObj, m *Message) { c.Send(1-c.Self(), 1, 0, nil) }
	cfg := testConfig(1)
	cfg.StallEvents = 10_000
	rt, err := New(cfg, wl, &recordProto{})
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run()
	if res.Finished || !strings.HasPrefix(res.Outcome.Detail, "the workload did not finish: aborted: time stood still: 10000 events at 0s") {
		t.Fatalf("finished %v: %q", res.Finished, res.Outcome.Detail)
	}
}

// An unfinished run says why: stopped at the duration limit with events
// still to run (ping-pong without end), or quiet with nothing left to run
// (one message, then nothing).
func TestUnfinishedRunSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pong   bool // answer every message: events until the limit
		detail string
	}{
		{"at the limit", true, "the workload did not finish: stopped at the duration limit (1ms) with events still to run"},
		{"quiet", false, "the workload did not finish"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := &scriptWL{n: 2, total: 1 << 40, start: only0(func(c *Ctx) { c.Send(1, 1, 1000, nil) })}
			wl.on = func(c *Ctx, o *scriptObj, m *Message) {
				if tc.pong {
					c.Send(1-c.Self(), 1, 1000, nil)
				}
			}
			cfg := testConfig(2)
			cfg.Limit = Millisecond
			rt, err := New(cfg, wl, &recordProto{})
			if err != nil {
				t.Fatal(err)
			}
			res := rt.Run()
			if res.Finished || res.AtLimit != tc.pong || res.Outcome.Detail != tc.detail || res.Makespan > cfg.Limit {
				t.Fatalf("finished %v, at limit %v, makespan %v: %q", res.Finished, res.AtLimit, res.Makespan, res.Outcome.Detail)
			}
		})
	}
}

// lostRestartProto restarts the application from scratch, without the
// failed node, when a detected failure took objects that are still lost,
// as protocols that recover only lost objects do.
type lostRestartProto struct {
	BaseProtocol
	restarts int
}

func (p *lostRestartProto) OnFailure(f Failure) {
	rt := p.RT
	rt.RemoveSlot(f.Node)
	for _, id := range f.Objects {
		if rt.Lost(id) {
			p.restarts++
			rt.RestartAll()
			return
		}
	}
}

// runUndetectedRestart runs four objects, one per node, each computing for
// 3 ms, under p, with node 1 failing at 1 ms and node 2 at 1.5 ms, each
// detected a millisecond later.
func runUndetectedRestart(t *testing.T, p Protocol) (*Runtime, Result) {
	t.Helper()
	wl := &scriptWL{n: 4, total: 4, start: func(c *Ctx) {
		c.Spend(3 * Millisecond)
		c.Send(c.Self(), 1, 0, nil)
	}}
	cfg := testConfig(4)
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 1, At: Millisecond}, {Node: 2, At: 1500 * Microsecond}}
	cfg.DetectDelay = Millisecond
	cfg.Limit = Second
	rt, err := New(cfg, wl, p)
	if err != nil {
		t.Fatal(err)
	}
	return rt, rt.Run()
}

// Node 1 fails at 1 ms and node 2 at 1.5 ms, each detected a millisecond
// later. The restart after node 1's detection places objects on node 2,
// dead but not yet reported: they are lost at once, and node 2's detection
// reports them, so the second restart (on nodes 0 and 3) completes. They
// used to be placed as live objects on the dead node: nothing reported them
// lost and the run never ended.
func TestRestartOntoUndetectedFailure(t *testing.T) {
	p := &lostRestartProto{}
	rt, res := runUndetectedRestart(t, p)
	if !res.Finished || !res.Outcome.OK || p.restarts != 2 {
		t.Fatalf("finished %v at %v, outcome %+v, %d restarts; want finished after 2", res.Finished, res.Makespan, res.Outcome, p.restarts)
	}
	for i := range 4 {
		if n := rt.NodeOf(ObjID(i)); n != 0 && n != 3 {
			t.Fatalf("object %d ended on node %d, want 0 or 3", i, n)
		}
	}
}

// reportCheckProto is lostRestartProto checking what each detection
// reports: every object of a failure is lost and placed on the failed node.
type reportCheckProto struct {
	lostRestartProto
	bad []string
}

func (p *reportCheckProto) OnFailure(f Failure) {
	for _, id := range f.Objects {
		if !p.RT.Lost(id) || p.RT.NodeOf(id) != f.Node {
			p.bad = append(p.bad, fmt.Sprintf("node %d's failure reports object %d, lost %v on node %d", f.Node, id, p.RT.Lost(id), p.RT.NodeOf(id)))
		}
	}
	p.lostRestartProto.OnFailure(f)
}

// In TestRestartOntoUndetectedFailure's run, object 2 is on node 2 when the
// node fails, and the restart after node 1's detection re-creates it on
// node 3, live, before node 2's failure is reported. The detection reports
// only the objects lost on node 2 (those the restart placed there). It used
// to report object 2 too: message logging then reset and restored a live,
// running object, whose tickets clashed with those it had handed out, and
// the run stood idle.
func TestDetectionReportsOnlyLostObjects(t *testing.T) {
	p := &reportCheckProto{}
	if _, res := runUndetectedRestart(t, p); !res.Finished || !res.Outcome.OK {
		t.Fatalf("finished %v, outcome %+v", res.Finished, res.Outcome)
	}
	if len(p.bad) > 0 {
		t.Fatal(strings.Join(p.bad, "; "))
	}
}

// replaceProto replaces nodes 2 and 1 by the spares when node 2's failure is
// detected, as a protocol may replace a node it learned dead from a failed
// transfer, and records what each detection reports.
type replaceProto struct {
	BaseProtocol
	reports map[NodeID][]ObjID
}

func (p *replaceProto) OnFailure(f Failure) {
	p.reports[f.Node] = f.Objects
	if f.Node == 2 {
		p.RT.ReplaceSlot(2, 4)
		p.RT.ReplaceSlot(1, 5)
	}
}

// Node 2 fails at 1 ms and node 1 at 1.2 ms, each detected a millisecond
// later. At node 2's detection both are replaced: object 2, reported lost,
// moves to the spare; object 1, lost in a failure not detected yet, stays on
// node 1, and node 1's detection reports it. It used to move too: that
// detection then reported nothing and object 1 was never recovered (abft on
// the knapsack, after restoring objects on a node that failed at once).
func TestReplaceSlotKeepsUnreportedLosses(t *testing.T) {
	wl := &scriptWL{n: 4, total: 4, start: func(c *Ctx) { c.Spend(3 * Millisecond) }}
	cfg := testConfig(4)
	cfg.Spares = 2
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 2, At: Millisecond}, {Node: 1, At: 1200 * Microsecond}}
	cfg.DetectDelay = Millisecond
	cfg.Limit = 5 * Millisecond
	p := &replaceProto{reports: map[NodeID][]ObjID{}}
	rt, err := New(cfg, wl, p)
	if err != nil {
		t.Fatal(err)
	}
	rt.Run()
	if got := p.reports[2]; !slices.Equal(got, []ObjID{2}) {
		t.Errorf("node 2's detection reported %v, want [2]", got)
	}
	if got := p.reports[1]; !slices.Equal(got, []ObjID{1}) {
		t.Errorf("node 1's detection reported %v, want [1]", got)
	}
	if rt.NodeOf(2) != 4 || rt.NodeOf(1) != 1 {
		t.Errorf("objects 2 and 1 on nodes %d and %d, want 4 and 1", rt.NodeOf(2), rt.NodeOf(1))
	}
	if !slices.Equal(rt.Slots(), []NodeID{0, 5, 4, 3}) {
		t.Errorf("slots %v, want [0 5 4 3]", rt.Slots())
	}
}

// spareProto replaces node 2, when its failure is detected, by the spare,
// and restores nothing there: object 2 waits on the spare, lost. It records
// what each detection reports, and whether a transfer to the spare, sent
// after the spare failed, got through.
type spareProto struct {
	BaseProtocol
	reports  map[NodeID]Failure
	transfer []bool
}

func (p *spareProto) OnFailure(f Failure) {
	p.reports[f.Node] = f
	if f.Node == 2 {
		p.RT.TakeSpare(func(s NodeID) { p.RT.ReplaceSlot(2, s) })
	}
}

func (p *spareProto) TransferDone(_ int32, ok bool) { p.transfer = append(p.transfer, ok) }

// Node 2 fails at 1 ms, detected at 2 ms; the spare (node 4) boots by 3 ms
// and takes node 2's place, object 2 with it, still lost; the spare fails
// at 4 ms, before any restore. Its detection reports no object: object 2
// was lost already (Failure's rule), and the protocol learns of the
// failure from its transfers to the node, which fail.
func TestReplaceSlotMovedLossNotReportedAgain(t *testing.T) {
	wl := &scriptWL{n: 4, total: 4, start: func(c *Ctx) { c.Spend(10 * Millisecond) }}
	cfg := testConfig(4)
	cfg.Spares = 1
	cfg.SpareBoot = Millisecond
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 2, At: Millisecond}, {Node: 4, At: 4 * Millisecond}}
	cfg.DetectDelay = Millisecond
	cfg.Limit = 8 * Millisecond
	p := &spareProto{reports: map[NodeID]Failure{}}
	rt, err := New(cfg, wl, p)
	if err != nil {
		t.Fatal(err)
	}
	rt.At(4500*Microsecond, func() { rt.TransferTo(0, 4, 1000, 0, p) })
	rt.Run()
	if f, ok := p.reports[2]; !ok || !slices.Equal(f.Objects, []ObjID{2}) {
		t.Errorf("node 2's detection reported %+v (reported %v), want object 2", f, ok)
	}
	f, ok := p.reports[4]
	if !ok || len(f.Objects) != 0 || f.WasSpare {
		t.Errorf("the spare's detection reported %+v (reported %v), want no object, not a spare", f, ok)
	}
	if rt.NodeOf(2) != 4 || !rt.Lost(2) {
		t.Errorf("object 2 on node %d, lost %v, want lost on node 4", rt.NodeOf(2), rt.Lost(2))
	}
	if !slices.Equal(p.transfer, []bool{false}) {
		t.Errorf("transfers to the failed spare reported %v, want [false]", p.transfer)
	}
}

// storageProto writes to the PFS from node 1 at 100 µs (the transfer
// starts after the PFS latency, 1 ms); when the write is
// reported failed, it re-creates object 3 on node 1.
type storageProto struct{ recordProto }

func (p *storageProto) Start() {
	p.RT.At(100*Microsecond, func() {
		p.RT.StorageWrite(1, PFS, 1<<40, func(ok bool) {
			if !ok {
				p.RT.Recreate(3, 1)
			}
		})
	})
}

// Node 1 fails at 1.5 ms during a PFS write, whose failure the runtime
// reports while it applies the node's failure; the protocol, not told of
// the failure yet, re-creates object 3 on node 1. Object 3 is lost with
// node 1's own, and node 1's detection reports both. The failure's record
// used to be filed only after the report: object 3 was then lost without
// being reported (never recovered), and on a node that had failed before,
// filed with that earlier, detected failure (the run aborted).
func TestStorageReportDuringFailure(t *testing.T) {
	wl := &scriptWL{n: 4, total: 4, start: func(c *Ctx) { c.Spend(3 * Millisecond) }}
	cfg := testConfig(4)
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 1, At: 1500 * Microsecond}}
	cfg.DetectDelay = Millisecond
	cfg.Limit = 5 * Millisecond
	p := &storageProto{}
	rt, err := New(cfg, wl, p)
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run()
	if res.Stats.UnrecoverableNote != "" || len(p.failures) != 1 {
		t.Fatalf("%d failures reported, note %q", len(p.failures), res.Stats.UnrecoverableNote)
	}
	got := slices.Sorted(slices.Values(p.failures[0].Objects))
	if !slices.Equal(got, []ObjID{1, 3}) || !rt.Lost(3) || rt.NodeOf(3) != 1 {
		t.Errorf("node 1's detection reported %v, want [1 3]; object 3 lost %v on node %d", got, rt.Lost(3), rt.NodeOf(3))
	}
}
