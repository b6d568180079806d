package sim

import (
	"encoding/binary"
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
	if err := rt.Restore(1, 0, state, inbox); err != nil {
		rt.Abort(err.Error())
	}
	if err := rt.Restore(0, 0, scriptState(1), nil); err != nil {
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
