package sim

import "testing"

// wakeProto delivers a message to object 1 from OnDispatch of a message to
// object 0 (as a logging protocol releases a held message while another is
// dispatched), and records who each message leaves from.
type wakeProto struct {
	BaseProtocol
	sent []Message
}

func (p *wakeProto) OnSend(m *Message) bool {
	p.sent = append(p.sent, Message{Src: m.Src, Dst: m.Dst, Tag: m.Tag})
	return true
}

func (p *wakeProto) OnDispatch(m *Message) {
	if m.Dst == 0 && m.Tag == 1 {
		p.RT.Deliver(&Message{Src: 0, Dst: 1, Tag: 5, To: p.RT.NodeOf(1)})
	}
}

// A node with a free core does not start another object's handler from
// inside a running one: the handlers share one Ctx, and object 0's sends
// left under object 1's name (mlog's restored pida worker lost its work
// request that way, and the search never ended). Object 1 runs once object
// 0's handler has returned.
func TestHandlerNotNested(t *testing.T) {
	wl := &scriptWL{n: 2, total: 3}
	wl.start = only0(func(c *Ctx) { c.Send(0, 1, 10, nil) })
	wl.on = func(c *Ctx, o *scriptObj, m *Message) {
		if c.Self() == 0 && m.Tag == 1 {
			c.Send(1, 2, 10, nil) // after the protocol woke object 1
		}
	}
	cfg := testConfig(1)
	cfg.Cores = 2
	cfg.Limit = Second
	p := &wakeProto{}
	rt, err := New(cfg, wl, p)
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run()
	want := []Message{{Src: 0, Dst: 0, Tag: 1}, {Src: 0, Dst: 1, Tag: 2}}
	if len(p.sent) != len(want) {
		t.Fatalf("sent %+v, want %+v", p.sent, want)
	}
	for i, m := range p.sent {
		if m.Src != want[i].Src || m.Dst != want[i].Dst || m.Tag != want[i].Tag {
			t.Fatalf("message %d left as %d->%d tag %d, want %d->%d tag %d", i, m.Src, m.Dst, m.Tag, want[i].Src, want[i].Dst, want[i].Tag)
		}
	}
	if !res.Finished {
		t.Fatalf("run did not finish: %+v", res.Outcome)
	}
}
