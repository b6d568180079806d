package sim

import (
	"slices"
	"strings"
	"testing"
)

// cutProto is a Cutter whose test script acts at given times.
type cutProto struct {
	BaseProtocol
	step Time
	take bool // OnSend takes every message (and transmits it itself)
}

func (p *cutProto) CutStep() Time { return p.step }

func (p *cutProto) OnSend(m *Message) bool {
	if p.take {
		p.RT.Transmit(m)
		return false
	}
	return true
}

// cutRun runs object 0's one handler, 10 s of compute then a 1,000-byte
// message to object 1, under a cutProto interrupting the application at
// 3.5 s (or at). It returns the runtime, the time the drained cut was
// quiet, object 0's snapshot then, and when object 1 got the message.
// script runs at the quiet moment (it resumes the application by default,
// a second later).
func cutRun(t *testing.T, p *cutProto, at Time, script func(rt *Runtime, s Snap)) (rt *Runtime, quietAt Time, snap Snap, gotAt Time) {
	t.Helper()
	var log []recv
	wl := &scriptWL{n: 2, total: 1, log: &log, start: only0(func(c *Ctx) {
		c.Compute(10e9) // 10 s at 1 Gop/s
		c.Send(1, 1, 1000, nil)
	})}
	rt, err := New(testConfig(2), wl, p)
	if err != nil {
		t.Fatal(err)
	}
	rt.At(at, func() {
		rt.InterruptApp()
		rt.WhenQuiet(true, func() {
			quietAt = rt.Now()
			var err error
			if snap, err = rt.Snapshot(0); err != nil {
				t.Fatal(err)
			}
			if script != nil {
				script(rt, snap)
				return
			}
			rt.At(rt.Now()+Second, rt.ResumeApp)
		})
	})
	if res := rt.Run(); !res.Finished {
		t.Fatalf("run unfinished: %+v", res)
	}
	if len(log) != 1 {
		t.Fatalf("object 1 got %d messages, want 1: %v", len(log), log)
	}
	return rt, quietAt, snap, log[0].at
}

// wire is the time a 1,000-byte message takes between two nodes of
// testConfig: 2 µs of latency, 1 µs on each interface.
const wire = 3 * Microsecond

func TestInterruptCutsAtTheNextStep(t *testing.T) {
	_, quiet, snap, got := cutRun(t, &cutProto{step: Second}, 3500*Millisecond, nil)
	if quiet != 4*Second {
		t.Errorf("quiet at %v, want 4s: the handler cut at the end of its fourth 1 s step", quiet)
	}
	c := snap.Cut
	if c == nil || c.Rest != 6*Second || len(c.Sends) != 1 || c.Sends[0].After != 6*Second || c.Progress != 0 {
		t.Fatalf("snapshot's cut %+v, want 6 s of rest and the message 6 s after it begins", c)
	}
	if w := snap.WireSize(); w != 1000 {
		t.Errorf("snapshot's messages take %d bytes, want the pending message's 1000", w)
	}
	// resumed at 5 s: 6 s of rest, then the message
	if want := 11*Second + wire; got != want {
		t.Errorf("message handled at %v, want %v", got, want)
	}
}

func TestInterruptWithoutCuts(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *cutProto
		at   Time
	}{
		{"no step", &cutProto{}, 3500 * Millisecond},
		{"the protocol takes the messages", &cutProto{step: Second, take: true}, 3500 * Millisecond},
		{"the handler ends before the next step", &cutProto{step: 3 * Second}, 9500 * Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, quiet, snap, got := cutRun(t, tc.p, tc.at, nil)
			// the handler ends at 10 s, its message is delivered (drained) 3 µs later
			if quiet != 10*Second+wire || snap.Cut != nil {
				t.Errorf("quiet at %v with cut %+v, want %v and none", quiet, snap.Cut, 10*Second+wire)
			}
			if want := 11*Second + wire; got != want {
				t.Errorf("message handled at %v, want %v (at the resumption)", got, want)
			}
		})
	}
}

// A rollback to the cut: the rest runs again from the restore, and its
// message is sent again (counted again); the copy the aborted rest had
// sent, dated at its end, is void and no longer counts as in flight.
func TestRestoreOfACutHandler(t *testing.T) {
	var quietAgain Time
	rt, _, _, got := cutRun(t, &cutProto{step: Second}, 3500*Millisecond, func(rt *Runtime, s Snap) {
		rt.At(5*Second, rt.ResumeApp)
		rt.At(6*Second, func() {
			rt.PauseApp()
			rt.NewEpoch()
			if err := rt.Restore(0, 0, s); err != nil {
				t.Fatal(err)
			}
			if p, _ := rt.Progress(); p != 0 {
				t.Errorf("progress %d after the restore, want 0: the cut handler's step counts once its rest has run", p)
			}
			rt.WhenQuiet(true, func() { quietAgain = rt.Now() })
			rt.ResumeApp()
		})
	})
	if quietAgain != 6*Second {
		t.Errorf("quiet again at %v, want 6s: the aborted rest's message is void", quietAgain)
	}
	if want := 12*Second + wire; got != want {
		t.Errorf("message handled at %v, want %v: 6 s of rest from the restore at 6 s", got, want)
	}
	if st := rt.Stats(); st.AppMsgs != 2 || st.LostMsgs != 1 {
		t.Errorf("%d application messages, %d lost; want 2 (the restored rest sends again) and 1 (the void copy)", st.AppMsgs, st.LostMsgs)
	}
}

// A cut object migrates with its rest, which then runs on the new node.
func TestMigrateACutHandler(t *testing.T) {
	_, _, _, got := cutRun(t, &cutProto{step: Second}, 3500*Millisecond, func(rt *Runtime, s Snap) {
		rt.Migrate(0, 1, func(ok bool) {
			if !ok {
				t.Error("migration failed")
			}
			rt.ResumeApp()
		})
	})
	// state (1000 B) and the pending message (1000 B) leave at 4 s: 2 µs of
	// latency, 2 µs on each interface; then 6 s of rest on node 1, and the
	// message stays on its node
	if want := 4*Second + 4*Microsecond + 6*Second; got != want {
		t.Errorf("message handled at %v, want %v", got, want)
	}
}

// A cut must take back only what the running handler sent. Object 1's
// first handler sends a message at its end; its second sends nothing and
// is cut (at 4 s) while object 0's large message is still on the wire: the cut
// holds back nothing, so the drained quiet moment waits for that message.
func TestCutOfAHandlerThatSentNothing(t *testing.T) {
	const big = 3e9 // 3 s on each interface
	wl := &scriptWL{n: 2, total: 3,
		start: func(c *Ctx) {
			if c.Self() == 0 {
				c.Send(1, 2, 1000, nil) // handled by object 1 from 1 s to 11 s
				return
			}
			c.Compute(1e9)
			c.Send(0, 1, 1000, nil) // at 1 s
		},
		on: func(c *Ctx, o *scriptObj, m *Message) {
			switch m.Tag {
			case 1: // object 0, at 1 s + wire: the big message leaves at 3 s + wire
				c.Compute(2e9)
				c.Send(1, 3, big, nil)
			case 2: // object 1, at 1 s
				c.Compute(10e9)
			}
		}}
	rt, err := New(testConfig(2), wl, &cutProto{step: Second})
	if err != nil {
		t.Fatal(err)
	}
	var quietAt Time
	var snap Snap
	rt.At(3500*Millisecond, func() {
		rt.InterruptApp()
		rt.WhenQuiet(true, func() {
			quietAt = rt.Now()
			if snap, err = rt.Snapshot(1); err != nil {
				t.Fatal(err)
			}
			rt.ResumeApp()
		})
	})
	if res := rt.Run(); !res.Finished {
		t.Fatalf("run unfinished: %+v", res)
	}
	// the big message leaves at 3 s + wire and takes 2 µs of latency and 3 s
	if want := 3*Second + wire + 2*Microsecond + 3*Second; quietAt != want {
		t.Errorf("drained quiet at %v, want %v, when the big message is in", quietAt, want)
	}
	if c := snap.Cut; c == nil || len(c.Sends) != 0 || c.Rest != 7*Second || snap.WireSize() != big {
		t.Errorf("object 1's snapshot: cut %+v, %d bytes of messages; want the rest of its handler, nothing to send, and the big message in its inbox", c, snap.WireSize())
	}
	if rt.inFlight != 0 {
		t.Errorf("%d messages in flight at the end, want 0", rt.inFlight)
	}
}

// A miscount of the messages in flight ends the run at the next quiet
// moment a protocol waits for, with the reason, instead of taking a
// checkpoint that is no consistent cut.
func TestMessagesInFlightBelowZeroAbort(t *testing.T) {
	wl := &scriptWL{n: 2, total: 1, start: only0(func(c *Ctx) { c.Compute(10e9) })}
	rt, err := New(testConfig(2), wl, &cutProto{})
	if err != nil {
		t.Fatal(err)
	}
	quiet := false
	rt.At(Second, func() {
		rt.inFlight-- // as the cut bug of session 60 did
		rt.PauseApp()
		rt.WhenQuiet(true, func() { quiet = true }) // at 10 s, when the handler ends
	})
	res := rt.Run()
	if quiet || res.Finished || res.Makespan != 10*Second || !strings.Contains(res.Stats.UnrecoverableNote, "internal error: -1 application messages in flight") {
		t.Errorf("quiet %v, finished %v at %v, note %q; want the run aborted at 10s with the count", quiet, res.Finished, res.Makespan, res.Stats.UnrecoverableNote)
	}
}

// A cut holds the handler's message back where it was (its network slot
// and the object's late list), outside what InFlight reports, and the
// resumed rest sends it from there at its end.
func TestResumedCutKeepsItsMessage(t *testing.T) {
	_, _, _, got := cutRun(t, &cutProto{step: Second}, 3500*Millisecond, func(rt *Runtime, s Snap) {
		o := &rt.objs[0]
		if c := o.cut; c == nil || len(o.late) != 1 || rt.msgs.items[o.late[0].ref].m != s.Cut.Sends[0].Msg {
			t.Errorf("cut %+v, late %v: want the message held in its slot", o.cut, o.late)
		}
		if fl := rt.InFlight(); len(fl) != 0 || rt.inFlight != 0 {
			t.Errorf("in flight during the cut: %v (count %d), want none: the message is part of object 0's state", fl, rt.inFlight)
		}
		rt.At(rt.Now()+Second, rt.ResumeApp)
		// the rest runs from 5 s to 11 s: the message is in flight again,
		// dated at the rest's end
		rt.At(rt.Now()+2*Second, func() {
			if fl := rt.InFlight(); len(fl) != 1 || fl[0].SentAt != 11*Second || rt.inFlight != 1 {
				t.Errorf("in flight during the rest: %v (count %d), want the message, sent at 11s", fl, rt.inFlight)
			}
		})
	})
	if want := 11*Second + wire; got != want {
		t.Errorf("message handled at %v, want %v", got, want)
	}
}

// A held message whose receiver moved during the cut is sent again from
// the rest, to where the receiver is now: here object 1 joins object 0's
// node, so the message arrives with the rest's end, without crossing the
// network.
func TestResumedCutAfterItsReceiverMoved(t *testing.T) {
	rt, _, _, got := cutRun(t, &cutProto{step: Second}, 3500*Millisecond, func(rt *Runtime, s Snap) {
		rt.SetNode(1, 0)
		rt.At(rt.Now()+Second, rt.ResumeApp)
	})
	if want := 11 * Second; got != want {
		t.Errorf("message handled at %v, want %v: on object 0's node, at the rest's end", got, want)
	}
	if rt.inFlight != 0 {
		t.Errorf("%d messages in flight at the end, want 0", rt.inFlight)
	}
}

// holdProto is a CutReturner: it holds every message back (OnSend returns
// false) and transmits it itself when it is due, unless a cut has taken it
// back by then. It records when each message was offered and for when.
type holdProto struct {
	BaseProtocol
	offered, due []Time
	msgs         []*Message
	live         []bool // by offer: still to transmit
}

func (p *holdProto) CutStep() Time { return Second }

func (p *holdProto) OnSend(m *Message) bool {
	k := len(p.msgs)
	p.offered, p.due = append(p.offered, p.RT.Now()), append(p.due, m.SentAt)
	p.msgs, p.live = append(p.msgs, m), append(p.live, true)
	p.RT.At(m.SentAt, func() {
		if p.live[k] {
			p.live[k] = false
			p.RT.Transmit(m)
		}
	})
	return false
}

func (p *holdProto) ReturnCut(id ObjID) []*Message {
	var back []*Message
	for k, m := range p.msgs {
		if p.live[k] && m.Src == id && m.SentAt > p.RT.Now() {
			p.live[k] = false
			back = append(back, m)
		}
	}
	return back
}

// CutObject cuts one paused object's handler at its next step while the
// application goes on (object 1 computes on), and a protocol that held the
// handler's message back gives it back: the cut keeps it, and the rest
// offers it to OnSend again, due at the rest's end.
func TestCutObjectTakesBackHeldMessages(t *testing.T) {
	var log []recv
	wl := &scriptWL{n: 2, total: 1, log: &log, start: func(c *Ctx) {
		c.Compute(10e9) // 10 s at 1 Gop/s
		if c.Self() == 0 {
			c.Send(1, 1, 1000, nil)
		}
	}}
	p := &holdProto{}
	rt, err := New(testConfig(2), wl, p)
	if err != nil {
		t.Fatal(err)
	}
	var cutAt Time
	var snap Snap
	otherRan := false
	rt.At(3500*Millisecond, func() {
		rt.PauseObject(0)
		rt.CutObject(0)
		rt.WhenObjectIdle(0, func() {
			cutAt, otherRan = rt.Now(), rt.Running(1)
			if snap, err = rt.Snapshot(0); err != nil {
				t.Fatal(err)
			}
			rt.At(5*Second, func() { rt.ResumeObject(0) })
		})
	})
	if res := rt.Run(); !res.Finished {
		t.Fatalf("run unfinished: %+v", res)
	}
	if cutAt != 4*Second || !otherRan {
		t.Errorf("cut at %v with object 1 running %v, want 4s and true", cutAt, otherRan)
	}
	c := snap.Cut
	if c == nil || c.Rest != 6*Second || len(c.Sends) != 1 || c.Sends[0].After != 6*Second || snap.WireSize() != 1000 {
		t.Fatalf("snapshot's cut %+v, want 6 s of rest and the message given back, 6 s after it begins", c)
	}
	if !slices.Equal(p.offered, []Time{0, 5 * Second}) || !slices.Equal(p.due, []Time{10 * Second, 11 * Second}) {
		t.Errorf("message offered at %v for %v, want at 0 and 5s (the rest), for 10s and 11s", p.offered, p.due)
	}
	if len(log) != 1 || log[0].at != 11*Second+wire {
		t.Errorf("object 1 got %v, want one message at %v", log, 11*Second+wire)
	}
}
