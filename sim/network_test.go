package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestNetworkTiming(t *testing.T) {
	const lat = 2 * Microsecond
	cases := []struct {
		name  string
		objs  int
		start func(c *Ctx)
		want  []Time // task-local arrival times, in order
	}{
		{"one message", 2, func(c *Ctx) { c.Send(1, 0, 5000, nil) }, []Time{lat + 5000}},
		{"burst through one interface", 2, func(c *Ctx) {
			for i := 0; i < 3; i++ {
				c.Send(1, int32(i), 1000, nil)
			}
		}, []Time{lat + 1000, lat + 2000, lat + 3000}},
		{"send after compute", 2, func(c *Ctx) { c.Compute(1e6); c.Send(1, 0, 100, nil) }, []Time{Millisecond + lat + 100}},
		{"same node needs no network", 1, func(c *Ctx) { c.Send(0, 0, 1<<20, nil) }, []Time{0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var log []recv
			wl := &scriptWL{n: tc.objs, total: int64(len(tc.want)), start: only0(tc.start), log: &log}
			rt, err := New(testConfig(2), wl, &recordProto{})
			if err != nil {
				t.Fatal(err)
			}
			checkHandled(t, rt, &log, tc.want)
		})
	}
}

// checkHandled runs rt to its end and checks that its receiving handlers,
// which append to *log, saw their messages at the times want, in order.
func checkHandled(t *testing.T, rt *Runtime, log *[]recv, want []Time) {
	t.Helper()
	if res := rt.Run(); !res.Finished {
		t.Fatal("did not finish")
	}
	if len(*log) != len(want) {
		t.Fatalf("%d messages handled, want %d", len(*log), len(want))
	}
	for i, w := range want {
		if at := (*log)[i].at; at != w {
			t.Errorf("message %d handled at %d ns, want %d ns", i, at, w)
		}
	}
}

// A transfer or computation longer than MaxDuration (a bandwidth or rate in
// the wrong unit) ends the run, unfinished, naming the key to check; it
// used to wrap around to a negative time and take no time at all.
func TestAbsurdDurationEndsRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		start func(c *Ctx)
		key   string
	}{
		{"bandwidth", func(c *Config) { c.Bandwidth = 1e-30 }, func(c *Ctx) { c.Send(1, 0, 1000, nil) }, "network.bandwidth"},
		{"rate", func(c *Config) { c.Rate = 1e-300 }, func(c *Ctx) { c.Compute(1e6) }, "cluster.rate"},
		{"message cpu", func(c *Config) { c.MessageCPU = MaxDuration - 1 }, func(c *Ctx) {
			c.Send(1, 0, 0, nil)
			c.Send(1, 1, 0, nil)
		}, "network.message_cpu"},
		{"many computations", func(*Config) {}, func(c *Ctx) {
			for range 3 {
				c.Spend(MaxDuration / 2)
			}
		}, "modeled costs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(2)
			tc.edit(&cfg)
			rt, err := New(cfg, &scriptWL{n: 2, total: 1, start: only0(tc.start)}, &recordProto{})
			if err != nil {
				t.Fatal(err)
			}
			res := rt.Run()
			if res.Finished || !strings.Contains(res.Outcome.Detail, tc.key) {
				t.Fatalf("finished %v at %v, outcome %q; want unfinished, naming %s", res.Finished, res.Makespan, res.Outcome.Detail, tc.key)
			}
		})
	}
}

// Two senders to one receiver at the same time: the receiver's interface
// serialises them, so the second finishes one transfer time after the first.
func TestReceiverInterfaceContention(t *testing.T) {
	var log []recv
	wl := &scriptWL{n: 3, total: 2, log: &log}
	wl.start = func(c *Ctx) {
		if c.Self() < 2 {
			c.Send(2, int32(c.Self()), 4000, nil)
		}
	}
	rt, _ := New(testConfig(3), wl, &recordProto{})
	rt.Run()
	lat := 2 * Microsecond
	if len(log) != 2 || log[0].at != lat+4000 || log[1].at != lat+8000 {
		t.Fatalf("arrivals %+v, want at %d and %d", log, lat+4000, lat+8000)
	}
}

// CPU cost of communication (a share of the bytes, network.cpu_load, a fixed
// cost per message, network.message_cpu, and the protocol layer's) is charged at both ends: the
// sender's handler pays it before each message leaves, the receiver's before
// it uses the message. Bandwidth 1 byte/ns, latency 2 µs.
func TestCommunicationCPUCost(t *testing.T) {
	const lat = 2 * Microsecond
	for _, tc := range []struct {
		name  string
		load  float64
		o     Time
		layer Time // the protocol's (SetLayerCPU)
		sizes []int64
		want  []Time // when each receiving handler has paid for its message
	}{
		// leaves at 500, received at 500+2000+1000, used 500 later
		{"per byte", 0.5, 0, 0, []int64{1000}, []Time{500 + lat + 1000 + 500}},
		{"per message", 0, 300, 0, []int64{1000}, []Time{300 + lat + 1000 + 300}},
		{"both", 0.5, 300, 0, []int64{1000}, []Time{800 + lat + 1000 + 800}},
		{"an empty message costs o", 0.5, 300, 0, []int64{0}, []Time{300 + lat + 300}},
		{"none", 0, 0, 0, []int64{1000}, []Time{lat + 1000}},
		{"the protocol's layer", 0.5, 300, 40, []int64{1000}, []Time{840 + lat + 1000 + 840}},
		// the sends leave at 300, 600 and 900; the interface, busy 1000 ns
		// with each, holds the second and third back to 1300 and 2300
		{"a burst", 0, 300, 0, []int64{1000, 1000, 1000}, []Time{300 + lat + 1000 + 300, 1300 + lat + 1000 + 300, 2300 + lat + 1000 + 300}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log []recv
			cfg := testConfig(2)
			cfg.CPULoad, cfg.MessageCPU = tc.load, tc.o
			wl := &scriptWL{n: 2, total: int64(len(tc.sizes)), log: &log, start: only0(func(c *Ctx) {
				for i, size := range tc.sizes {
					c.Send(1, int32(i), size, nil)
				}
			})}
			rt, err := New(cfg, wl, &recordProto{})
			if err != nil {
				t.Fatal(err)
			}
			rt.SetLayerCPU(tc.layer)
			checkHandled(t, rt, &log, tc.want)
		})
	}
}

// completionLog records TransferTo outcomes.
type completionLog struct {
	rt   *Runtime
	got  []string
	then func() // after the first outcome
}

func (c *completionLog) TransferDone(tag int32, ok bool) {
	c.got = append(c.got, fmt.Sprintf("tag %d ok=%v at %d", tag, ok, c.rt.Now()))
	if f := c.then; f != nil && ok {
		c.then = nil
		f()
	}
}

// A transfer reports its arrival, or its loss when an end fails first, through
// a closure (Transfer) or a Completion (TransferTo); a transfer started from
// another's callback reuses its slot and still sees its own timing.
func TestTransferOutcome(t *testing.T) {
	cases := []struct {
		name   string
		failAt Time // node 1 fails (0: never)
		want   []string
	}{
		{"delivered", 0, []string{"tag 7 ok=true at 12000", "closure ok=true at 24000", "tag 8 ok=true at 36000"}},
		{"receiver fails in flight", 5000, []string{"tag 7 ok=false at 12000"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wl := &scriptWL{n: 2, total: 1}
			cfg := testConfig(2)
			cfg.Limit = Second
			if tc.failAt > 0 {
				cfg.Failures = ScriptedFailures
				cfg.Planned = []ScriptedFailure{{Node: 1, At: tc.failAt}}
			}
			rt, err := New(cfg, wl, &recordProto{})
			if err != nil {
				t.Fatal(err)
			}
			log := &completionLog{rt: rt}
			log.then = func() {
				rt.Transfer(1, 0, 10000, 9, func(ok bool) {
					log.got = append(log.got, fmt.Sprintf("closure ok=%v at %d", ok, rt.Now()))
					rt.TransferTo(0, 1, 10000, 8, log)
				})
			}
			rt.At(0, func() { rt.TransferTo(0, 1, 10000, 7, log) })
			rt.Run()
			if fmt.Sprint(log.got) != fmt.Sprint(tc.want) {
				t.Errorf("got %q, want %q", log.got, tc.want)
			}
		})
	}
}

// sendProto makes, at 2 ms, a transfer and sends a control message from
// node 1, which failed at 1 ms and whose failure is not detected yet, and a
// transfer from node 0, which is alive.
type sendProto struct {
	BaseProtocol
	fromDead, fromLive []bool // the transfers' outcomes
	controls           int    // control messages delivered
}

func (p *sendProto) Start() {
	p.RT.At(2*Millisecond, func() {
		rt := p.RT
		rt.Transfer(1, 0, 100, 1, func(ok bool) { p.fromDead = append(p.fromDead, ok) })
		rt.Transfer(0, 2, 100, 1, func(ok bool) { p.fromLive = append(p.fromLive, ok) })
		rt.SendControl(&Message{Src: None, Dst: None, From: 1, To: 0, Tag: 1, Size: 100, Control: true})
	})
}

func (p *sendProto) OnControl(*Message) { p.controls++ }

// A failed node sends nothing, whether its failure is detected or not. Its
// incarnation is bumped when it fails, so a transfer stamped with it looked
// like one from the node's next life, and arrived.
func TestFailedNodeSendsNothing(t *testing.T) {
	wl := &scriptWL{n: 3, total: 1, start: only0(func(c *Ctx) {
		c.Spend(5 * Millisecond)
		c.Send(0, 1, 0, nil)
	})}
	cfg := testConfig(3)
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 1, At: Millisecond}}
	cfg.DetectDelay = Second
	p := &sendProto{}
	rt, err := New(cfg, wl, p)
	if err != nil {
		t.Fatal(err)
	}
	rt.Run()
	if !slices.Equal(p.fromDead, []bool{false}) || !slices.Equal(p.fromLive, []bool{true}) || p.controls != 0 {
		t.Fatalf("transfer from the failed node %v (want [false]), from a live one %v (want [true]), %d control messages delivered (want 0)",
			p.fromDead, p.fromLive, p.controls)
	}
}

// Jitter adds an exponential delay of mean Config.Jitter to each message:
// over a ping-pong, where only one message is ever in flight, the mean
// delay per message beyond the jitter-free run's is a sample mean of the
// exponential, within its 99.9% interval of the configured mean, the same
// for the same seed and different for another.
func TestJitterMean(t *testing.T) {
	const msgs, mean = 20000, 3 * Microsecond
	run := func(jitter Time, seed uint64) Time {
		wl := &scriptWL{n: 2, total: msgs, start: only0(func(c *Ctx) { c.Send(1, 0, 1000, nil) })}
		wl.on = func(c *Ctx, o *scriptObj, m *Message) { c.Send(1-c.Self(), 0, 1000, nil) }
		cfg := testConfig(2)
		cfg.Jitter, cfg.Seed = jitter, seed
		rt, err := New(cfg, wl, &recordProto{})
		if err != nil {
			t.Fatal(err)
		}
		res := rt.Run()
		if !res.Finished {
			t.Fatal("did not finish")
		}
		return res.Makespan
	}
	base := run(0, 1)
	if want := Time(msgs) * (2*Microsecond + 1000); base != want {
		t.Fatalf("without jitter the ping-pong took %v, want %v", base, want)
	}
	got := run(mean, 1)
	perMsg := float64(got-base) / msgs
	half := 3.29 * float64(mean) / math.Sqrt(msgs) // the exponential's sd is its mean
	if math.Abs(perMsg-float64(mean)) > half {
		t.Errorf("mean jitter per message %.1f ns, want %v ± %.1f ns", perMsg, mean, half)
	}
	if again := run(mean, 1); again != got {
		t.Errorf("the same seed gave %v, then %v", got, again)
	}
	if other := run(mean, 2); other == got {
		t.Errorf("seeds 1 and 2 gave the same makespan %v", got)
	}
}

// A jitter far longer than a message's transmission would let a burst
// overtake itself; a sender's messages still arrive in the order sent,
// later than without jitter, while two senders' messages interleave.
func TestJitterKeepsOrderPerSender(t *testing.T) {
	const burst = 200
	var log []recv
	wl := &scriptWL{n: 3, total: 2 * burst, log: &log}
	wl.start = func(c *Ctx) {
		if c.Self() < 2 {
			for i := range burst {
				c.Send(2, int32(int(c.Self())*burst+i), 100, nil)
			}
		}
	}
	cfg := testConfig(3)
	cfg.Jitter = 50 * Microsecond
	rt, err := New(cfg, wl, &recordProto{})
	if err != nil {
		t.Fatal(err)
	}
	if res := rt.Run(); !res.Finished {
		t.Fatal("did not finish")
	}
	next := [2]int32{0, burst}
	switches := 0
	for i, r := range log {
		s := r.tag / burst
		if r.tag != next[s] {
			t.Fatalf("arrival %d is message %d of sender %d, want %d", i, r.tag, s, next[s])
		}
		next[s]++
		if i > 0 && log[i-1].tag/burst != s {
			switches++
		}
	}
	// without jitter the two bursts arrive at 2 µs + 100 ns per message,
	// alternating; the last one here comes well after 2 µs + 40 µs
	if last := log[len(log)-1].at; last < 2*Microsecond+2*burst*100+50*Microsecond {
		t.Errorf("the last message arrived at %v: the jitter did not delay it", last)
	}
	if switches < 2 {
		t.Errorf("the senders' messages switched %d times: want them interleaved", switches)
	}
}

// A protocol's transfers take the jitter too, in order: two transfers from
// node 0 to node 1, which take 12 µs and 22 µs without jitter, complete
// later with a 1 ms mean, the first one first.
func TestJitterDelaysTransfers(t *testing.T) {
	for _, jitter := range []Time{0, Millisecond} {
		cfg := testConfig(2)
		cfg.Limit, cfg.Jitter = Second, jitter
		rt, err := New(cfg, &scriptWL{n: 2, total: 1}, &recordProto{})
		if err != nil {
			t.Fatal(err)
		}
		var done []Time
		rt.At(0, func() {
			for range 2 {
				rt.Transfer(0, 1, 10000, 9, func(ok bool) { done = append(done, rt.Now()) })
			}
		})
		rt.Run()
		switch {
		case len(done) != 2:
			t.Fatalf("jitter %v: %d transfers completed, want 2", jitter, len(done))
		case jitter == 0 && (done[0] != 12*Microsecond || done[1] != 22*Microsecond):
			t.Fatalf("without jitter the transfers completed at %v, want 12µs and 22µs", done)
		case jitter > 0 && (done[0] <= 12*Microsecond || done[1] <= 22*Microsecond || done[1] < done[0]):
			t.Fatalf("with jitter the transfers completed at %v: want both later than without, in order", done)
		}
	}
}

// A handler transmits its sends when it starts, dated at their send time
// (its end). The sender's interface is taken only when a message leaves:
// a transfer made before then goes at once, and a send that a rollback
// voided before it left never takes the interface. Both used to queue the
// transfer behind the future send (a restore behind an aborted step's
// halos).
func TestInterfaceTakenWhenMessageLeaves(t *testing.T) {
	const lat, size = 2 * Microsecond, 1_000_000 // the send holds the interface 1 ms
	cases := []struct {
		name       string
		rollback   bool
		senderDies bool // node 0 fails at 2 ms and is back, repaired, at 3 ms
		transferAt Time
		want       Time // the transfer's arrival
		lost       int64
	}{
		{"before the send leaves", false, false, Millisecond, Millisecond + lat + 100, 0},
		{"while a voided send would be leaving", true, false, 10*Millisecond + 500*Microsecond, 10*Millisecond + 500*Microsecond + lat + 100, 1},
		{"after the sender died and came back", false, true, 10*Millisecond + 500*Microsecond, 10*Millisecond + 500*Microsecond + lat + 100, 1},
		{"while the send leaves", false, false, 10*Millisecond + 500*Microsecond, 11*Millisecond + lat + 100, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var log []recv
			// the run never completes: it goes on until nothing is left to happen
			wl := &scriptWL{n: 3, total: 2, log: &log, start: only0(func(c *Ctx) {
				c.Spend(10 * Millisecond)
				c.Send(1, 0, size, nil)
			})}
			cfg := testConfig(3)
			cfg.Limit = Second
			if tc.senderDies {
				cfg.Failures = ScriptedFailures
				cfg.Planned = []ScriptedFailure{{Node: 0, At: 2 * Millisecond}}
				cfg.DetectDelay, cfg.Repair, cfg.Spares = 0, Millisecond, 1
			}
			p := &recordProto{}
			rt, err := New(cfg, wl, p)
			if err != nil {
				t.Fatal(err)
			}
			if tc.rollback {
				rt.At(5*Millisecond, rt.NewEpoch)
			}
			// the spare takes the dead node's place, which joins the pool when repaired
			p.onFail = func(f Failure) { rt.ReplaceSlot(f.Node, 3) }
			var arrived Time = -1
			rt.At(tc.transferAt, func() {
				rt.Transfer(0, 2, 100, 1, func(ok bool) {
					if ok {
						arrived = rt.Now()
					}
				})
			})
			rt.Run()
			if arrived != tc.want {
				t.Errorf("transfer arrived at %d ns, want %d ns", arrived, tc.want)
			}
			if got := rt.Stats().LostMsgs; got != tc.lost || len(log) != 1-int(tc.lost) {
				t.Errorf("%d messages lost and %d delivered, want %d lost", got, len(log), tc.lost)
			}
		})
	}
}
