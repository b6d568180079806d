package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

// scriptWL is a test workload: every object runs start at Start (it can check
// c.Self()); every object
// records when (task time) and what it received, and counts messages as
// progress. total is the number of messages the run waits for.
type scriptWL struct {
	n     int
	total int64
	start func(c *Ctx)
	on    func(c *Ctx, o *scriptObj, m *Message)
	log   *[]recv
}

type recv struct {
	obj ObjID
	at  Time
	tag int32
}

type scriptObj struct {
	wl   *scriptWL
	id   ObjID
	got  int64
	data int64
}

func (w *scriptWL) NumObjects() int           { return w.n }
func (w *scriptWL) TotalProgress() int64      { return w.total }
func (w *scriptWL) NewObject(id ObjID) Object { return &scriptObj{wl: w, id: id} }
func (w *scriptWL) Check(objs []Object) Outcome {
	var s int64
	for _, o := range objs {
		s += o.(*scriptObj).data
	}
	return Outcome{OK: true, Answer: fmt.Sprint(s)}
}

func (o *scriptObj) Start(c *Ctx) {
	if o.wl.start != nil {
		o.wl.start(c)
	}
}
func (o *scriptObj) Handle(c *Ctx, m *Message) {
	o.got++
	if o.wl.log != nil {
		*o.wl.log = append(*o.wl.log, recv{c.Self(), c.Now(), m.Tag})
	}
	if o.wl.on != nil {
		o.wl.on(c, o, m)
	}
}
func (o *scriptObj) Progress() int64    { return o.got }
func (o *scriptObj) ModeledSize() int64 { return 1000 }
func (o *scriptObj) MarshalBinary() ([]byte, error) {
	return binary.AppendVarint(binary.AppendVarint(nil, o.got), o.data), nil
}
func (o *scriptObj) UnmarshalBinary(b []byte) error {
	g, n := binary.Varint(b)
	if n <= 0 {
		return errors.New("bad state")
	}
	d, m := binary.Varint(b[n:])
	if m <= 0 {
		return errors.New("bad state")
	}
	o.got, o.data = g, d
	return nil
}

// recordProto records detected failures and otherwise does nothing.
type recordProto struct {
	BaseProtocol
	failures []Failure
	onFail   func(f Failure)
}

func (p *recordProto) OnFailure(f Failure) {
	p.failures = append(p.failures, f)
	if p.onFail != nil {
		p.onFail(f)
	}
}

func testConfig(nodes int) Config {
	c := DefaultConfig()
	c.Nodes = nodes
	c.Latency = 2 * Microsecond
	c.Bandwidth = 1e9 // 1 byte per ns: transfer times are easy to read
	c.Placement = RoundRobin
	return c
}

// only0 runs f in object 0's Start only.
func only0(f func(c *Ctx)) func(c *Ctx) {
	return func(c *Ctx) {
		if c.Self() == 0 {
			f(c)
		}
	}
}

// atProto runs its steps at their times from Start.
type atProto struct {
	BaseProtocol
	steps map[Time]func(rt *Runtime)
}

func (p *atProto) Start() {
	for at, f := range p.steps {
		p.RT.At(at, func() { f(p.RT) })
	}
}

// runToEnd runs w under protocol p and fails unless the run finishes.
func runToEnd(tb testing.TB, cfg Config, w Workload, p Protocol) (*Runtime, Result) {
	rt, err := New(cfg, w, p)
	if err != nil {
		tb.Fatal(err)
	}
	res := rt.Run()
	if !res.Finished {
		tb.Fatal("did not finish")
	}
	return rt, res
}
