package sim

import "testing"

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
			res := rt.Run()
			if !res.Finished {
				t.Fatal("did not finish")
			}
			if len(log) != len(tc.want) {
				t.Fatalf("got %d arrivals, want %d", len(log), len(tc.want))
			}
			for i, w := range tc.want {
				if log[i].at != w {
					t.Errorf("arrival %d at %d ns, want %d ns", i, log[i].at, w)
				}
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

// CPU cost of communication competes with computation on both ends.
func TestCommunicationCPUCost(t *testing.T) {
	var log []recv
	cfg := testConfig(2)
	cfg.CPULoad = 0.5
	wl := &scriptWL{n: 2, total: 1, log: &log, start: only0(func(c *Ctx) { c.Send(1, 0, 1000, nil) })}
	wl.on = func(c *Ctx, o *scriptObj, m *Message) { o.data = int64(c.Now()) }
	rt, _ := New(cfg, wl, &recordProto{})
	rt.Run()
	// sender spends 500 ns of CPU before the message leaves; the receiver 500 ns before using it
	want := Time(500) + 2*Microsecond + 1000
	if log[0].at != want+500 {
		t.Fatalf("handler sees the message at %d, want %d", log[0].at, want+500)
	}
}
