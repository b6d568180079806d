package sim

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// idle returns a workload that never finishes on its own: the run lasts until
// cfg.Limit, so failure processes can be observed.
func idle(n int) *scriptWL { return &scriptWL{n: n, total: 1} }

func TestHeartbeatDetectionDelay(t *testing.T) {
	cases := []struct {
		failAt, want Time
	}{
		{10*Second + 500*Millisecond, 10*Second + 2*Microsecond + 3*Second}, // last heartbeat at 10 s
		{10 * Second, 9*Second + 2*Microsecond + 3*Second},                  // the 10 s heartbeat is not sent
		{1, 2*Microsecond + 3*Second},                                       // only the heartbeat at power-on
	}
	for _, c := range cases {
		cfg := testConfig(2)
		cfg.OracleDetection = false
		cfg.Failures = ScriptedFailures
		cfg.Planned = []ScriptedFailure{{Node: 1, At: c.failAt}}
		cfg.Limit = 20 * Second
		p := &recordProto{}
		rt, _ := New(cfg, idle(2), p)
		res := rt.Run()
		if len(p.failures) != 1 || p.failures[0].DetectedAt != c.want || p.failures[0].At != c.failAt {
			t.Fatalf("failure at %v: got %+v, want detection at %v", c.failAt, p.failures, c.want)
		}
		// the run ends when nothing is left to do, at the detection; node 0 beat every
		// second until then, node 1 until it failed
		beats := int64((res.Makespan+Second-1)/Second) + int64((c.failAt+Second-1)/Second)
		if res.Makespan != c.want || res.Stats.HeartbeatMsgs != beats || res.Stats.HeartbeatBytes != 64*beats {
			t.Errorf("end %v, heartbeats %d (%d B), want %d", res.Makespan, res.Stats.HeartbeatMsgs, res.Stats.HeartbeatBytes, beats)
		}
	}
}

// Network jitter delays the last heartbeat a failed node sent, and so its
// detection, by an exponential time of the jitter's mean: over 4,000
// failures the delays have the exponential's mean and standard deviation,
// the same for the same seed and others for another.
func TestHeartbeatJitterDelaysDetection(t *testing.T) {
	const n, mean = 4000, 50 * Millisecond
	run := func(seed uint64, jitter Time) []Failure {
		cfg := testConfig(n)
		cfg.OracleDetection, cfg.Jitter, cfg.Seed = false, jitter, seed
		cfg.Failures = ScriptedFailures
		for i := range n {
			cfg.Planned = append(cfg.Planned, ScriptedFailure{Node: NodeID(i), At: 10*Second + 500*Millisecond})
		}
		failures, _ := runIdle(t, cfg, n)
		if len(failures) != n {
			t.Fatalf("%d failures, want %d", len(failures), n)
		}
		return failures
	}
	const base = 10*Second + 2*Microsecond + 3*Second // the last heartbeat at 10 s, then latency and timeout
	for _, f := range run(1, 0) {
		if f.DetectedAt != base {
			t.Fatalf("without jitter node %d detected at %v, want %v", f.Node, f.DetectedAt, base)
		}
	}
	var sum, sq float64
	jittered := run(1, mean)
	for _, f := range jittered {
		d := (f.DetectedAt - base).Seconds()
		if d < 0 {
			t.Fatalf("node %d detected at %v, before %v", f.Node, f.DetectedAt, base)
		}
		sum += d
		sq += d * d
	}
	m := sum / n
	se := math.Sqrt((sq/n - m*m) / n)
	if math.Abs(m-mean.Seconds()) > 4*se {
		t.Errorf("mean delay %.4g s, want %.4g s ± %.3g", m, mean.Seconds(), 4*se)
	}
	if sd := math.Sqrt(sq/n - m*m); math.Abs(sd-mean.Seconds()) > 0.1*mean.Seconds() {
		t.Errorf("delays' standard deviation %.4g s, want about the mean %.4g s (exponential)", sd, mean.Seconds())
	}
	if !reflect.DeepEqual(jittered, run(1, mean)) {
		t.Error("two runs with the same seed detect at different times")
	}
	if reflect.DeepEqual(jittered, run(2, mean)) {
		t.Error("another seed draws the same delays")
	}
}

// The heartbeat's jitter is drawn from a stream of its own: a ping-pong
// between nodes 0 and 1 while idle node 2 fails takes the same time whether
// the failure is detected by heartbeats (one draw) or by an oracle (none).
func TestHeartbeatJitterKeepsTheMessagesDraws(t *testing.T) {
	run := func(oracle bool) Time {
		wl := &scriptWL{n: 2, total: 2000, start: only0(func(c *Ctx) { c.Send(1, 0, 1000, nil) })}
		wl.on = func(c *Ctx, o *scriptObj, m *Message) { c.Send(1-c.Self(), 0, 1000, nil) }
		cfg := testConfig(3)
		cfg.OracleDetection, cfg.Jitter = oracle, 3*Microsecond
		cfg.Failures, cfg.Planned = ScriptedFailures, []ScriptedFailure{{Node: 2, At: 3 * Millisecond}}
		rt, err := New(cfg, wl, &recordProto{})
		if err != nil {
			t.Fatal(err)
		}
		res := rt.Run()
		if !res.Finished || res.Stats.Failures != 1 || res.Makespan < 5*Millisecond {
			t.Fatalf("finished %v with %d failures at %v: want the failure in the middle of the run", res.Finished, res.Stats.Failures, res.Makespan)
		}
		return res.Makespan
	}
	if hb, oracle := run(false), run(true); hb != oracle {
		t.Errorf("the ping-pong took %v with heartbeats, %v with an oracle: the detection took a message's draw", hb, oracle)
	}
}

// Fail-stop: a message whose last byte left before the failure is delivered; one
// still leaving is lost; the failed node's objects are lost and reported.
func TestFailStopLosesExactlyWhatItShould(t *testing.T) {
	var log []recv
	wl := &scriptWL{n: 3, total: 10, log: &log}
	wl.start = func(c *Ctx) {
		if c.Self() == 1 { // on node 1: two messages to object 0, leaving 0..1000 and 1000..2000
			c.Send(0, 1, 1000, nil)
			c.Send(0, 2, 1000, nil)
		}
	}
	cfg := testConfig(3)
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 1, At: 1500}}
	cfg.DetectDelay = Millisecond
	cfg.Limit = Second
	p := &recordProto{}
	rt, _ := New(cfg, wl, p)
	res := rt.Run()
	if len(log) != 1 || log[0].tag != 1 {
		t.Fatalf("received %+v, want only the message fully sent before the failure", log)
	}
	if res.Stats.LostMsgs != 1 {
		t.Errorf("lost %d messages, want 1", res.Stats.LostMsgs)
	}
	if len(p.failures) != 1 || !reflect.DeepEqual(p.failures[0].Objects, []ObjID{1}) ||
		p.failures[0].DetectedAt != 1500+Millisecond {
		t.Fatalf("failure report %+v", p.failures)
	}
	if !rt.Lost(1) || rt.Lost(0) || rt.Alive(1) {
		t.Error("object 1 must be lost with node 1, object 0 not")
	}
}

// A message to a node that fails before it arrives is lost, and a planned
// failure of a dead node changes nothing.
func TestMessageToFailedNodeIsLost(t *testing.T) {
	var log []recv
	wl := &scriptWL{n: 2, total: 10, log: &log, start: only0(func(c *Ctx) { c.Send(1, 0, 10000, nil) })}
	cfg := testConfig(2)
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 1, At: 5000}, {Node: 1, At: 6000}}
	cfg.Limit = Second
	rt, _ := New(cfg, wl, &recordProto{})
	res := rt.Run()
	if len(log) != 0 || res.Stats.LostMsgs != 1 || res.Stats.Failures != 1 || res.Stats.IgnoredFailures != 1 {
		t.Fatalf("log %v, stats %+v", log, res.Stats)
	}
}

// Each node keeps its own failure clock: node 3's failure time does not depend
// on how many other nodes there are.
func TestPerNodeFailureClocks(t *testing.T) {
	at := func(nodes int) Time {
		cfg := testConfig(nodes)
		cfg.Failures = Exponential
		cfg.NodeMTBF = Hour
		cfg.Limit = 1000 * Hour
		p := &recordProto{}
		rt, _ := New(cfg, idle(1), p)
		rt.Run()
		for _, f := range p.failures {
			if f.Node == 3 {
				return f.At
			}
		}
		t.Fatal("node 3 never failed")
		return 0
	}
	if a, b := at(4), at(50); a != b {
		t.Fatalf("node 3 fails at %v with 4 nodes but %v with 50", a, b)
	}
}

// The first failure of each of many fresh nodes follows the configured
// distribution: its mean is the node MTBF for exponential and for Weibull
// (whose scale is η = MTBF/Γ(1+1/k)), within 4 standard errors. Nodes in
// service fail after the stationary residual life instead, of mean
// E[X²]/2μ and second moment E[X³]/3μ for a lifetime X of mean μ: for a
// Weibull, μ·Γ(1+2/k)/2Γ(1+1/k)² and μ²·Γ(1+3/k)/3Γ(1+1/k)³.
func TestFailureDistributionMeans(t *testing.T) {
	for _, tc := range []struct {
		name      string
		dist      FailureDist
		shape     float64
		inService bool
	}{{"exponential", Exponential, 0, false}, {"weibull k=0.7", Weibull, 0.7, false}, {"weibull k=2", Weibull, 2, false},
		{"exponential in service", Exponential, 0, true}, {"weibull k=0.5 in service", Weibull, 0.5, true},
		{"weibull k=0.7 in service", Weibull, 0.7, true}, {"weibull k=2 in service", Weibull, 2, true}} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 20000
			cfg := testConfig(n)
			cfg.Failures = tc.dist
			cfg.WeibullShape = tc.shape
			cfg.InService = tc.inService
			cfg.NodeMTBF = 1000 * Hour
			cfg.Limit = Never - 1
			p := &recordProto{}
			rt, _ := New(cfg, idle(1), p)
			rt.Run()
			if len(p.failures) != n {
				t.Fatalf("%d failures, want %d", len(p.failures), n)
			}
			var sum, sq float64
			for _, f := range p.failures {
				x := f.At.Seconds()
				sum += x
				sq += x * x
			}
			mean := sum / n
			sd := math.Sqrt(sq/n - mean*mean)
			mtbf := (1000 * Hour).Seconds()
			want := mtbf
			if tc.inService && tc.dist == Weibull {
				k, g := tc.shape, math.Gamma(1+1/tc.shape)
				want = mtbf * math.Gamma(1+2/k) / (2 * g * g)
				wantSq := mtbf * mtbf * math.Gamma(1+3/k) / (3 * g * g * g)
				if wantSD := math.Sqrt(wantSq - want*want); math.Abs(sd-wantSD)/wantSD > 0.05 {
					t.Errorf("sd %.4g, want %.4g", sd, wantSD)
				}
			}
			if math.Abs(mean-want) > 4*sd/math.Sqrt(n) {
				t.Fatalf("mean %.4g s, want %.4g s ± %.3g", mean, want, 4*sd/math.Sqrt(n))
			}
			if tc.dist == Weibull && !tc.inService {
				// the variance pins the shape: Var = η²[Γ(1+2/k) − Γ(1+1/k)²]
				k := tc.shape
				eta := want / math.Gamma(1+1/k)
				wantSD := eta * math.Sqrt(math.Gamma(1+2/k)-math.Pow(math.Gamma(1+1/k), 2))
				if math.Abs(sd-wantSD)/wantSD > 0.05 {
					t.Fatalf("sd %.4g, want %.4g", sd, wantSD)
				}
			}
		})
	}
}

// A spare taken after a failure becomes usable after the boot delay.
func TestSpareBoot(t *testing.T) {
	cfg := testConfig(2)
	cfg.Spares = 1
	cfg.SpareBoot = 5 * Second
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 1, At: Second}}
	cfg.Limit = Minute
	var readyAt Time = -1
	var got NodeID = None
	p := &recordProto{}
	var rt *Runtime
	p.onFail = func(f Failure) {
		if _, ok := rt.TakeSpare(func(n NodeID) { readyAt, got = rt.Now(), n }); !ok {
			t.Fatal("no spare")
		}
		if _, ok := rt.TakeSpare(func(NodeID) {}); ok {
			t.Fatal("second spare from a pool of one")
		}
	}
	rt, _ = New(cfg, idle(2), p)
	rt.Run()
	if got != 2 || readyAt != 6*Second {
		t.Fatalf("spare %d ready at %v, want node 2 at 6s", got, readyAt)
	}
}

// A failed node rejoins the spare pool a repair time after its failure, at
// the end of the pool, and can then replace a later failed node; before that
// the pool may be empty. (The protocol puts each spare in its failed node's
// slot once booted, and drops a failed node it has no spare for.)
func TestRepairReturnsNodeToPool(t *testing.T) {
	cfg := testConfig(2)
	cfg.Spares = 1 // node 2
	cfg.SpareBoot = 5 * Second
	cfg.Repair = 10 * Second
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 1, At: Second}, {Node: 2, At: 8 * Second}, {Node: 0, At: 20 * Second}}
	cfg.Limit = Minute
	type take struct {
		at    Time
		node  NodeID // None: the pool was empty
		left  int    // spares left after the take
		ready Time
	}
	var takes []take
	p := &recordProto{}
	var rt *Runtime
	p.onFail = func(f Failure) {
		i := len(takes)
		n, ok := rt.TakeSpare(func(s NodeID) {
			rt.ReplaceSlot(f.Node, s)
			takes[i].ready = rt.Now()
		})
		if !ok {
			n = None
			rt.RemoveSlot(f.Node)
		}
		takes = append(takes, take{at: rt.Now(), node: n, left: rt.SparesLeft(), ready: -1})
	}
	rt, _ = New(cfg, idle(2), p)
	rt.Run()
	want := []take{
		{at: Second, node: 2, left: 0, ready: 6 * Second},
		{at: 8 * Second, node: None, left: 0, ready: -1},        // node 1 is back at 11 s
		{at: 20 * Second, node: 1, left: 1, ready: 25 * Second}, // node 2 is back at 18 s, behind node 1
	}
	if !slices.Equal(takes, want) {
		t.Fatalf("takes = %+v, want %+v", takes, want)
	}
}

// A repaired node comes back as a new incarnation: a copy addressed to it
// while it was down (with the incarnation its failure gave it) is not held
// once it is up again. Its down incarnation ends at the repair in failAt,
// which lostInTransit indexes by incarnation.
func TestRepairIsANewIncarnation(t *testing.T) {
	cfg := testConfig(2)
	cfg.Spares = 1
	cfg.Repair = 10 * Second
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 1, At: Second}}
	cfg.Limit = Minute
	var rt *Runtime
	var down uint32
	p := &recordProto{}
	p.onFail = func(f Failure) {
		down = rt.Incarnation(f.Node)
		rt.RemoveSlot(f.Node)
	}
	rt, _ = New(cfg, idle(2), p)
	rt.Run()
	if !rt.Alive(1) || down == 0 || rt.Incarnation(1) == down {
		t.Fatalf("node 1 alive %v, incarnation %d after its repair, %d while it was down", rt.Alive(1), rt.Incarnation(1), down)
	}
	if rt.Holds(1, down) || !rt.Holds(1, rt.Incarnation(1)) || rt.Holds(1, 0) {
		t.Fatalf("node 1 holds what was sent while it was down: %v, now: %v, before its failure: %v",
			rt.Holds(1, down), rt.Holds(1, rt.Incarnation(1)), rt.Holds(1, 0))
	}
	if got := rt.nodes[1].failAt; len(got) != 2 || got[0] != Second || got[1] != 11*Second {
		t.Fatalf("failAt %v: want its failure at 1 s and the end of its down incarnation at 11 s", got)
	}
}

// N nodes writing S bytes each to the parallel file system at once share its
// aggregate bandwidth: all finish after latency + N·S/B.
func TestPFSSharedBandwidth(t *testing.T) {
	cfg := testConfig(4)
	cfg.PFSBandwidth = 1e9
	cfg.PFSLatency = Millisecond
	cfg.Limit = Minute
	var done []Time
	p := &recordProto{}
	rt, _ := New(cfg, idle(4), p)
	rt.At(0, func() {
		for n := 0; n < 4; n++ {
			rt.StorageWrite(NodeID(n), PFS, 1e6, func(ok bool) { done = append(done, rt.Now()) })
		}
		// a later, smaller writer joins at 2 ms and shares from then on
		rt.At(2*Millisecond, func() {
			rt.StorageWrite(0, Disk, 5e5, func(ok bool) { done = append(done, rt.Now()) })
		})
	})
	rt.Run()
	// disk: 5e5 B at 500 MB/s = 1 ms after 2 ms
	want := []Time{3 * Millisecond, 5 * Millisecond, 5 * Millisecond, 5 * Millisecond, 5 * Millisecond}
	if !reflect.DeepEqual(done, want) {
		t.Fatalf("completions %v, want %v", done, want)
	}
}

// CancelStorage stops a node's storage operations: its parallel file system
// transfers report failure at once and leave the bandwidth to the others,
// its queued memory writes report failure when they would have ended, and
// its next write starts at once; the other nodes' operations go on.
// CancelStorage stops a node's storage operations: its parallel file system
// transfers report failure at once and leave the bandwidth to the others,
// its queued memory write reports failure when it would have ended, and its
// next write starts at once; the other nodes' operations go on.
func TestCancelStorage(t *testing.T) {
	cfg := testConfig(4)
	cfg.PFSBandwidth = 1e9
	cfg.PFSLatency = Millisecond
	cfg.MemBandwidth = 1e9
	cfg.Limit = Minute
	type end struct {
		what string
		at   Time
		ok   bool
	}
	var ends []end
	rt, _ := New(cfg, idle(4), &recordProto{})
	rec := func(what string) func(bool) {
		return func(ok bool) { ends = append(ends, end{what, rt.Now(), ok}) }
	}
	rt.At(0, func() {
		rt.StorageRead(0, PFS, 2e6, rec("pfs 0"))
		rt.StorageRead(1, PFS, 2e6, rec("pfs 1"))
		rt.StorageRead(0, PFS, 1e6, rec("pfs 0 small"))
		rt.StorageWrite(0, Memory, 3e6, rec("memory 0")) // until 3 ms
	})
	// in its latency until 1.5 ms, then a fourth flow
	rt.At(Millisecond/2, func() { rt.StorageRead(0, PFS, 1e6, rec("pfs 0 late")) })
	rt.At(2*Millisecond, func() {
		rt.CancelStorage(0)
		rt.StorageWrite(0, Memory, 1e6, rec("memory 0 after")) // at once: 1 ms
	})
	rt.Run()
	// by 2 ms node 1 has read 0.5 ms at a third of 1 GB/s and 0.5 ms at a
	// quarter: 0.291667 MB; alone, the rest takes 1.708333 ms
	want := []end{
		{"pfs 0 small", 2 * Millisecond, false}, // (in the order of the flows' heap)
		{"pfs 0 late", 2 * Millisecond, false},
		{"pfs 0", 2 * Millisecond, false},
		{"memory 0", 3 * Millisecond, false},
		{"memory 0 after", 3 * Millisecond, true},
		{"pfs 1", 3708334, true},
	}
	if !slices.Equal(ends, want) {
		t.Fatalf("ends %+v\nwant %+v", ends, want)
	}
}

// A run is a pure function of (configuration, seed).
func TestDeterminism(t *testing.T) {
	run := func(seed uint64) Result {
		wl := &scriptWL{n: 16, total: 2000}
		wl.start = func(c *Ctx) { c.Send((c.Self()+1)%16, 0, 100, nil) }
		wl.on = func(c *Ctx, o *scriptObj, m *Message) {
			c.Compute(float64(1000 + 37*int(c.Self())))
			c.Send((c.Self()+ObjID(o.got%5)+1)%16, 0, 64+o.got, nil)
			o.data += int64(c.Now()) % 1000
		}
		cfg := testConfig(4)
		cfg.Failures = Exponential
		cfg.NodeMTBF = 10 * Millisecond
		cfg.Seed = seed
		cfg.Limit = Second
		rt, _ := New(cfg, wl, &recordProto{})
		return rt.Run()
	}
	a, b := run(7), run(7)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different results")
	}
	if len(a.Recoveries) == 0 {
		t.Fatal("no failures: the test does not exercise the failure stream")
	}
	if c := run(8); reflect.DeepEqual(a.Recoveries, c.Recoveries) {
		t.Fatal("different seeds, same failures")
	}
}

// New refuses a configuration that cannot be simulated, whatever built it.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" = accepted
	}{
		{"default", func(*Config) {}, ""},
		{"no nodes", func(c *Config) { c.Nodes = 0 }, "at least one node"},
		{"negative spares", func(c *Config) { c.Spares = -1 }, "negative number of spares"},
		{"no cores", func(c *Config) { c.Cores = 0 }, "at least one core"},
		{"zero rate", func(c *Config) { c.Rate = 0 }, "core rate"},
		{"zero bandwidth", func(c *Config) { c.Bandwidth = 0 }, "network bandwidth"},
		{"cpu load above 1", func(c *Config) { c.CPULoad = 1.5 }, "cpu_load"},
		{"negative message cpu", func(c *Config) { c.MessageCPU = -1 }, "network.message_cpu: must be ≥ 0"},
		{"exponential without MTBF", func(c *Config) { c.Failures = Exponential }, "MTBF"},
		{"Weibull without shape", func(c *Config) { c.Failures, c.NodeMTBF = Weibull, Hour }, "Weibull shape"},
		{"heartbeat timeout under period", func(c *Config) { c.OracleDetection, c.HBTimeout = false, Second/2 }, "heartbeat"},
		{"heartbeats", func(c *Config) { c.OracleDetection = false }, ""},
		{"heartbeats with jitter", func(c *Config) { c.OracleDetection, c.Jitter = false, 50*Millisecond }, ""},
		{"heartbeats with more jitter", func(c *Config) { c.OracleDetection, c.Jitter = false, 50*Millisecond+1 }, "at least 20 mean network jitters"},
		{"a timeout of one period with jitter", func(c *Config) { c.OracleDetection, c.Jitter, c.HBTimeout = false, 50*Millisecond, Second }, ""},
		{"a fixed detection delay with jitter", func(c *Config) { c.Jitter = Second }, ""},
		{"a latency of 100 years", func(c *Config) { c.Latency = MaxDuration }, "network.latency: must be ≥ 0 and under 100 years, got 100 years"},
		{"a latency just under", func(c *Config) { c.Latency = MaxDuration - 1 }, ""},
		{"a negative boot", func(c *Config) { c.SpareBoot = -1 }, "cluster.spare_boot"},
		{"a repair of 200 years", func(c *Config) { c.Repair = 2 * MaxDuration }, "cluster.repair"},
		{"waiting for no repair", func(c *Config) { c.WaitForRepair = true }, "needs a repair time"},
		{"waiting for a repair", func(c *Config) { c.WaitForRepair, c.Repair = true, Hour }, ""},
		{"a PFS latency", func(c *Config) { c.PFSLatency = MaxDuration }, "storage.pfs_latency"},
		{"a downtime", func(c *Config) { c.Downtime = MaxDuration }, "failures.downtime"},
		{"a detection delay", func(c *Config) { c.DetectDelay = MaxDuration }, "detection.delay"},
		{"a heartbeat period", func(c *Config) { c.HBPeriod, c.HBTimeout = MaxDuration, MaxDuration }, "detection.period"},
		{"a heartbeat timeout", func(c *Config) { c.HBTimeout = MaxDuration }, "detection.timeout"},
		{"group failures", func(c *Config) { c.GroupSize, c.GroupMTBF = 2, Hour }, ""},
		{"a negative group MTBF", func(c *Config) { c.GroupSize, c.GroupMTBF = 2, -1 }, "group failures"},
		{"groups without a size", func(c *Config) { c.GroupMTBF = Hour }, "group failures"},
		{"groups beyond the machine", func(c *Config) { c.GroupSize, c.GroupMTBF = 3, Hour }, "group failures"},
	} {
		cfg := testConfig(2)
		tc.edit(&cfg)
		_, err := New(cfg, idle(2), &recordProto{})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// runRepair runs two idle nodes, node 1 failing at 1 s, with failed nodes
// repaired after a second; at each detection onFail runs, and note records
// the number of spares left when it is called.
func runRepair(cfg Config, onFail func(rt *Runtime, f Failure, note func())) (*Runtime, *recordProto, []int) {
	cfg.Repair = Second
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 1, At: Second}}
	cfg.Limit = Minute
	p := &recordProto{}
	var rt *Runtime
	var left []int
	note := func() { left = append(left, rt.SparesLeft()) }
	p.onFail = func(f Failure) { onFail(rt, f, note) }
	rt, _ = New(cfg, idle(2), p)
	rt.Run()
	return rt, p, left
}

// A repair shorter than the detection delay returns the node to the pool at
// its detection, after the protocol was told (a search on random machines
// found a restart from scratch placing objects on a node that had failed and
// was already back in the pool, undetected: they never ran).
func TestRepairNotBeforeDetection(t *testing.T) {
	cfg := testConfig(2)
	cfg.DetectDelay = 3 * Second
	_, p, left := runRepair(cfg, func(rt *Runtime, f Failure, note func()) {
		rt.RemoveSlot(f.Node) // (in the slots, it would not join the pool)
		note()
		rt.At(rt.Now(), note)
	})
	if !slices.Equal(left, []int{0, 1}) || len(p.failures) != 1 || p.failures[0].DetectedAt != 4*Second {
		t.Fatalf("spares left at the detection and just after: %v, failures %+v", left, p.failures)
	}
}

// OnPoolJoin's callbacks run when a repaired node joins the pool, in an
// event of their own at that instant (after the repair's, which a slot
// change may be inside of): node 1, detected dead and dropped at 1 s, is
// back at 2 s, and each of the two callbacks finds it there.
func TestOnPoolJoin(t *testing.T) {
	var seen []string
	var rt *Runtime
	watch := func(name string) func() {
		return func() { seen = append(seen, fmt.Sprintf("%s at %v, %d spare", name, rt.Now(), rt.SparesLeft())) }
	}
	cfg := testConfig(2)
	cfg.Repair, cfg.Failures = Second, ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 1, At: Second}}
	cfg.Limit = Minute
	p := &recordProto{onFail: func(f Failure) { rt.RemoveSlot(f.Node) }}
	rt, _ = New(cfg, idle(2), p)
	rt.OnPoolJoin(watch("a"))
	rt.OnPoolJoin(watch("b"))
	rt.Run()
	if want := []string{"a at 2s, 1 spare", "b at 2s, 1 spare"}; !slices.Equal(seen, want) {
		t.Fatalf("callbacks %q, want %q", seen, want)
	}
}

// A node repaired while still in the slots (its replacement is booting)
// joins the pool when it leaves them: in both, it could be taken as a spare
// while objects are placed on it (cpr on a random machine: objects restored
// on a node that was booting as another node's replacement, and lost with
// it, never ran again).
func TestRepairWaitsForTheSlot(t *testing.T) {
	cfg := testConfig(2)
	cfg.Spares = 1 // node 2
	cfg.SpareBoot = 5 * Second
	rt, _, left := runRepair(cfg, func(rt *Runtime, f Failure, note func()) {
		rt.TakeSpare(func(s NodeID) {
			rt.ReplaceSlot(f.Node, s)
			note()
		})
		rt.At(3*Second, note)
	})
	if !slices.Equal(left, []int{0, 1}) || !slices.Equal(rt.Slots(), []NodeID{0, 2}) {
		t.Fatalf("spares left at 3 s and when the replacement booted: %v, slots %v; want [0 1], [0 2]", left, rt.Slots())
	}
}

// A run simulates at most MaxDuration: one that would go on (a message
// taking 60 years, answered; transfers of 90 years each queued on one
// interface, whose sum passes the range of Time) stops there, unfinished,
// and says why; it used to wrap around, report a time past the range or
// none, and let the fifth queued transfer leave at once.
func TestRunStopsAtMaxDuration(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		dsts  []ObjID // object 0 sends to these at start, in order
		size  int64   // bytes each
		limit Time    // Config.Limit
		want  string
		got   [3]int64 // messages each object handled: only those that arrived in time
	}{
		{"60-year latency, a reply", func(c *Config) { c.Latency = 60 * year }, []ObjID{1}, 1, 0,
			"stopped after 100 years of simulated time", [3]int64{0, 1, 0}},
		{"90-year transfers queued", func(c *Config) { c.Bandwidth = 1 }, []ObjID{1, 1, 1, 1, 2}, int64((90 * year).Seconds()), 0,
			"stopped after 100 years of simulated time", [3]int64{1, 1, 0}},
		{"a limit beyond it", func(c *Config) { c.Latency = 60 * year }, []ObjID{1}, 1, 200 * year,
			"stopped after 100 years of simulated time", [3]int64{0, 1, 0}},
		{"a limit before it", func(c *Config) { c.Latency = 60 * year }, []ObjID{1}, 1, 70 * year,
			"stopped at the duration limit (613200h0m0s)", [3]int64{0, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(3)
			tc.edit(&cfg)
			cfg.Limit = tc.limit
			wl := &scriptWL{n: 3, total: int64(len(tc.dsts)) + 1}
			wl.start = only0(func(c *Ctx) {
				for _, d := range tc.dsts {
					c.Send(d, 0, tc.size, nil)
				}
			})
			wl.on = func(c *Ctx, o *scriptObj, m *Message) {
				if c.Self() == 1 && o.got == 1 {
					c.Send(0, 1, 1, nil) // the reply, a second crossing
				}
			}
			rt, err := New(cfg, wl, &recordProto{})
			if err != nil {
				t.Fatal(err)
			}
			res := rt.Run()
			if res.Finished || !res.AtLimit || !strings.Contains(res.Outcome.Detail, tc.want) {
				t.Fatalf("finished %v, at limit %v, %q; want unfinished at the limit, %q", res.Finished, res.AtLimit, res.Outcome.Detail, tc.want)
			}
			if res.Makespan < 0 || res.Makespan > min(MaxDuration, cmp.Or(tc.limit, MaxDuration)) {
				t.Fatalf("makespan %v, outside [0, the limit]", res.Makespan)
			}
			var got [3]int64
			for i := range got {
				got[i] = rt.Object(ObjID(i)).(*scriptObj).got
			}
			if got != tc.got {
				t.Fatalf("objects handled %v messages, want %v", got, tc.got)
			}
		})
	}
}

// Memory a protocol accounts on a node (MemAdd) is the node's until the node
// fails, when it is released with it: Mem reads it, the peak keeps it.
func TestMemoryReleasedWithItsNode(t *testing.T) {
	wl := &scriptWL{n: 2, total: 10}
	cfg := testConfig(2)
	cfg.Failures = ScriptedFailures
	cfg.Planned = []ScriptedFailure{{Node: 1, At: 5000}}
	cfg.Limit = Second
	rt, _ := New(cfg, wl, &recordProto{})
	rt.MemAdd(0, MemLog, 300)
	rt.MemAdd(1, MemLog, 200)
	rt.MemAdd(1, MemCheckpoint, 50)
	rt.MemAdd(0, MemLog, -100)
	if got := [3]int64{rt.Mem(0, MemLog), rt.Mem(1, MemLog), rt.Mem(1, MemCheckpoint)}; got != [3]int64{200, 200, 50} {
		t.Fatalf("before the failure: node 0 log, node 1 log and checkpoints %v, want [200 200 50]", got)
	}
	// the most one node held at once, of all kinds: node 0's 300 bytes,
	// until node 1 holds 350 (beside no application state: the objects
	// are created when the run starts)
	st := rt.Stats()
	if st.NodeMemPeak != 300 || st.NodeMemPeakNode != 0 || st.NodeMemPeakState != 0 {
		t.Fatalf("node peak %d bytes on node %d beside %d of state, want 300 on node 0 beside 0", st.NodeMemPeak, st.NodeMemPeakNode, st.NodeMemPeakState)
	}
	rt.MemAdd(1, MemBackup, 100)
	rt.MemAdd(1, MemBackup, -100)
	if st.NodeMemPeak != 350 || st.NodeMemPeakNode != 1 {
		t.Fatalf("node peak %d bytes on node %d, want 350 on node 1", st.NodeMemPeak, st.NodeMemPeakNode)
	}
	rt.At(1000, func() { rt.MemAdd(0, MemBackup, 500) }) // 700 on node 0, beside its object's 1000 bytes
	res := rt.Run()
	if got := [3]int64{rt.Mem(0, MemLog), rt.Mem(1, MemLog), rt.Mem(1, MemCheckpoint)}; got != [3]int64{200, 0, 0} {
		t.Fatalf("after node 1 failed: %v, want [200 0 0]", got)
	}
	if res.Stats.PeakMem[MemLog] != 500 || res.Stats.PeakMem[MemCheckpoint] != 50 {
		t.Fatalf("peaks %v, want 500 bytes of logs and 50 of checkpoints", res.Stats.PeakMem)
	}
	if st := res.Stats; st.NodeMemPeak != 700 || st.NodeMemPeakNode != 0 || st.NodeMemPeakState != 1000 {
		t.Fatalf("node peak %d bytes on node %d beside %d of state, want 700 on node 0 beside 1000", st.NodeMemPeak, st.NodeMemPeakNode, st.NodeMemPeakState)
	}
	// the audit's comparison skips the dead node and names the first difference
	if err := rt.MemMismatch(MemLog, []int64{200, 999}, "logs"); err != nil {
		t.Fatalf("a dead node's memory compared: %v", err)
	}
	if err := rt.MemMismatch(MemLog, []int64{150, 0}, "logs"); err == nil || err.Error() != "node 0 accounts 200 bytes of logs, holds 150" {
		t.Fatalf("mismatch reported as %v", err)
	}
	rt.MemAdd(1, MemLog, 70) // on the dead node: ignored
	if rt.Mem(1, MemLog) != 0 {
		t.Fatalf("memory accounted on a failed node: %d", rt.Mem(1, MemLog))
	}
}

// A failure's record says when it was detected, when the last object it
// lost was restored, and when the progress was back: exact for a protocol
// that restores the lost objects at given delays after the detection. A
// failure that lost nothing, or whose objects were never restored, has no
// restore time and is left out of Restore.
func TestRestoreTime(t *testing.T) {
	const (
		failAt = 5000
		delay  = Millisecond // detection
	)
	for _, c := range []struct {
		name           string
		nodes, objects int // placed round robin
		fail           NodeID
		after          []Time // restore the lost objects, in order, this long after the detection (none: never)
		restoredAt     Time
		meanRestore    float64
	}{
		{"one object", 2, 2, 1, []Time{3000}, failAt + delay + 3000, 3e-6},
		{"two objects, the later one counts", 2, 4, 1, []Time{1000, 7000}, failAt + delay + 7000, 7e-6},
		{"inside OnFailure", 2, 2, 1, []Time{0}, failAt + delay, 0},
		{"never restored", 2, 2, 1, nil, Never, 0},
		{"nothing lost", 3, 2, 2, nil, Never, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			wl := &scriptWL{n: c.objects, total: 1 << 40}
			cfg := testConfig(c.nodes)
			cfg.Failures, cfg.Planned = ScriptedFailures, []ScriptedFailure{{Node: c.fail, At: failAt}}
			cfg.DetectDelay = delay
			cfg.Limit = 10 * Millisecond
			p := &recordProto{}
			var rt *Runtime
			p.onFail = func(f Failure) {
				for i, d := range c.after {
					id := f.Objects[i]
					restore := func() {
						if err := rt.Restore(id, 0, Snap{State: []byte{0, 0}, Started: true}); err != nil {
							t.Error(err)
						}
					}
					if d == 0 {
						restore() // inside OnFailure
						continue
					}
					rt.At(rt.Now()+d, restore)
				}
			}
			var err error
			rt, err = New(cfg, wl, p)
			if err != nil {
				t.Fatal(err)
			}
			res, r := runOneFailure(t, rt)
			if r.FailedAt != failAt || r.DetectedAt != failAt+delay || r.RestoredAt != c.restoredAt {
				t.Errorf("failed %v, detected %v, restored %v; want %v, %v, %v", r.FailedAt, r.DetectedAt, r.RestoredAt,
					Time(failAt), Time(failAt+delay), c.restoredAt)
			}
			if got, n := res.Detection(); got != delay.Seconds() || n != 1 {
				t.Errorf("Detection %g s over %d failures, want %g over 1", got, n, delay.Seconds())
			}
			got, n := res.Restore()
			if want := map[bool]int{true: 1}[c.restoredAt != Never]; math.Abs(got-c.meanRestore) > 1e-15 || n != want {
				t.Errorf("Restore %g s over %d failures, want %g over %d", got, n, c.meanRestore, want)
			}
		})
	}
}

// A recovery ends when the progress is back where it was at the failure,
// judged from the restored state: survivors computing ahead while the lost
// object waits for its restore do not end it. Restored with the survivors'
// extra progress it ends at the restore; rolled back with everything, once
// the progress is regained; never restored (a replica's twin carries on),
// when the progress first came back after the detection, once the run has
// completed without it; restored after the run stopped, never, and it is
// left out of Recovery.
func TestRecoveryEndsFromTheRestoredState(t *testing.T) {
	const (
		failAt  = 10_000
		delay   = Millisecond // detection
		restore = 3000        // after the detection
	)
	for _, c := range []struct {
		name     string
		restore  []ObjID // the objects restored from their initial state
		after    Time    // this long after the detection
		total    int64   // the steps the workload completes at (0: beyond the run's limit)
		recovery func(r Recovery) bool
	}{
		{"lost object restored", []ObjID{1}, restore, 0, func(r Recovery) bool { return r.RecoveredAt == r.RestoredAt }},
		{"rollback", []ObjID{0, 1}, restore, 0, func(r Recovery) bool {
			return r.RecoveredAt > r.RestoredAt+2*restore // the steps before the failure, again
		}},
		// the survivor alone completes at about 1.5 ms
		{"never restored", nil, restore, 1500, func(r Recovery) bool {
			return r.RestoredAt == Never && r.RecoveredAt > r.DetectedAt && r.RecoveredAt < r.DetectedAt+10*Microsecond
		}},
		{"restored after the run stopped", []ObjID{1}, 5 * Millisecond, 0, func(r Recovery) bool {
			return r.RestoredAt == Never && r.RecoveredAt == Never
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// each object handles a message to itself every few µs: a step of progress
			loop := func(c *Ctx) { c.Spend(1000); c.Send(c.Self(), 1, 8, nil) }
			wl := &scriptWL{n: 2, total: cmp.Or(c.total, 1<<40), start: loop, on: func(c *Ctx, _ *scriptObj, _ *Message) { loop(c) }}
			cfg := testConfig(2)
			cfg.Failures, cfg.Planned = ScriptedFailures, []ScriptedFailure{{Node: 1, At: failAt}}
			cfg.DetectDelay = delay
			cfg.Limit = 2 * Millisecond
			p := &recordProto{}
			var rt *Runtime
			p.onFail = func(Failure) {
				rt.At(rt.Now()+c.after, func() {
					for _, id := range c.restore {
						if err := rt.Restore(id, 0, Snap{State: []byte{0, 0}}); err != nil {
							t.Error(err)
						}
					}
				})
			}
			var err error
			rt, err = New(cfg, wl, p)
			if err != nil {
				t.Fatal(err)
			}
			res, r := runOneFailure(t, rt)
			if !c.recovery(r) {
				t.Errorf("failed %v, detected %v, restored %v, recovered %v", r.FailedAt, r.DetectedAt, r.RestoredAt, r.RecoveredAt)
			}
			want, mean := 0, 0.0
			if r.RecoveredAt != Never {
				want, mean = 1, (r.RecoveredAt - r.FailedAt).Seconds()
			}
			if got, n := res.Recovery(); n != want || got != mean {
				t.Errorf("Recovery %g s over %d failures, want %g over %d", got, n, mean, want)
			}
		})
	}
}

// runOneFailure runs rt, which must record one failure, and returns the
// result and that failure's record.
func runOneFailure(t *testing.T, rt *Runtime) (Result, Recovery) {
	t.Helper()
	res := rt.Run()
	if len(res.Recoveries) != 1 {
		t.Fatalf("%d failure records", len(res.Recoveries))
	}
	return res, res.Recoveries[0]
}
