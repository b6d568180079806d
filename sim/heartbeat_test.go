package sim

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// suspicionConfig is n idle nodes heartbeating every millisecond through a
// jitter of 50 µs, with a timeout that makes a heartbeat's chance of
// a false suspicion q = ½·e^{−(timeout − period)/μ} = 1e-3, so about one
// per node and second, in a run with failures (none planned) that ends at
// limit.
func suspicionConfig(n int, limit Time) (Config, float64) {
	const q = 1e-3
	cfg := testConfig(n)
	cfg.OracleDetection, cfg.Jitter = false, 50*Microsecond
	cfg.HBPeriod = Millisecond
	cfg.HBTimeout = cfg.HBPeriod + Time(math.Round(float64(cfg.Jitter)*math.Log(1/(2*q))))
	cfg.Failures, cfg.Limit = ScriptedFailures, limit
	return cfg, q
}

// runIdle runs n idle nodes on cfg, and returns the failures the protocol
// was told of and the run's result.
func runIdle(t *testing.T, cfg Config, n int) ([]Failure, Result) {
	t.Helper()
	p := &recordProto{}
	rt, err := New(cfg, idle(n), p)
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run()
	return p.failures, res
}

// The monitor suspects each live node at the rate of late heartbeats,
// q/period: over 2,000 nodes for a second, the fenced nodes' count over
// their time alive is within 4 standard errors of it. Every suspicion is a
// failure known at the instant it strikes, and a fault-free run (failures
// "none") has none.
func TestFalseSuspicionRate(t *testing.T) {
	const n = 2000
	cfg, q := suspicionConfig(n, Second)
	failures, res := runIdle(t, cfg, n)
	fenced := len(failures)
	exposure := float64(n-fenced) * Second.Seconds()
	for _, f := range failures {
		exposure += f.At.Seconds()
		if f.DetectedAt != f.At {
			t.Fatalf("node %d suspected at %v, its loss known at %v: want at once", f.Node, f.At, f.DetectedAt)
		}
	}
	if res.Stats.FalseSuspicions != fenced || res.Stats.Failures != fenced || res.Stats.Detected != fenced {
		t.Fatalf("stats %+v: want %d false suspicions, failures and detections", res.Stats, fenced)
	}
	rate, want := float64(fenced)/exposure, q/cfg.HBPeriod.Seconds()
	t.Logf("%d suspicions in %.4g node-seconds: %.4g per node-second, want %.4g", fenced, exposure, rate, want)
	if se := rate / math.Sqrt(float64(fenced)); math.Abs(rate-want) > 4*se {
		t.Errorf("%d suspicions in %.4g node-seconds: %.4g per node-second, want %.4g ± %.3g", fenced, exposure, rate, want, 4*se)
	}

	cfg.Failures = NoFailures
	if _, res := runIdle(t, cfg, n); res.Stats.Failures != 0 {
		t.Error("a run without failures suspected a node")
	}
}

// instants records a trace's instant events.
type instants []string

func (*instants) Task(NodeID, ObjID, Time, Time, string) {}
func (*instants) Message(*Message, Time)                 {}
func (r *instants) Instant(n NodeID, at Time, what string) {
	*r = append(*r, fmt.Sprintf("node %d at %v: %s", n, at, what))
}

// Suspicions, like failures, are the same for every workload and protocol
// on a node's first life: a ping-pong between two nodes of four fences the
// same nodes at the same instants as an idle run, for the seed they share.
// A trace shows each as a false suspicion, not as a failure.
func TestFalseSuspicionsAreTheRunsTrace(t *testing.T) {
	var trace instants
	run := func(wl Workload, seed uint64) []Failure {
		cfg, _ := suspicionConfig(4, 20*Millisecond)
		cfg.Seed = seed
		cfg.HBTimeout -= 200 * Microsecond // q ≈ 0.055: suspicions within a few periods
		p := &recordProto{}
		rt, err := New(cfg, wl, p)
		if err != nil {
			t.Fatal(err)
		}
		trace = nil
		rt.SetTracer(&trace)
		rt.Run()
		return p.failures
	}
	pingPong := &scriptWL{n: 2, total: 1 << 40, start: only0(func(c *Ctx) { c.Send(1, 0, 1000, nil) })}
	pingPong.on = func(c *Ctx, o *scriptObj, m *Message) { c.Send(1-c.Self(), 0, 1000, nil) }
	a := run(idle(4), 1)
	if len(a) == 0 {
		t.Fatal("no suspicion: the test needs some")
	}
	var want instants
	for _, f := range a {
		want = append(want, fmt.Sprintf("node %d at %v: false suspicion: fenced", f.Node, f.At),
			fmt.Sprintf("node %d at %v: failure detected", f.Node, f.At))
	}
	if !reflect.DeepEqual(trace, want) {
		t.Errorf("trace instants %q, want %q", trace, want)
	}
	b := run(pingPong, 1)
	strip := func(fs []Failure) []Failure {
		out := make([]Failure, len(fs))
		for i, f := range fs {
			out[i] = Failure{Node: f.Node, At: f.At, DetectedAt: f.DetectedAt}
		}
		return out
	}
	if !reflect.DeepEqual(strip(a), strip(b)) {
		t.Errorf("idle run fenced %v, ping-pong %v", strip(a), strip(b))
	}
	if reflect.DeepEqual(strip(a), strip(run(idle(4), 2))) {
		t.Error("another seed fenced the same nodes at the same instants")
	}
}

// A node that fails after sending the heartbeat that would have come too
// late is detected when the monitor would have suspected it: nothing it
// sent afterwards passes the late one. One that fails earlier is detected
// a timeout after its last heartbeat, before that.
func TestFailureBeforeASuspicion(t *testing.T) {
	cfg, _ := suspicionConfig(1, Second)
	first := func(cfg Config) Failure {
		failures, _ := runIdle(t, cfg, 1)
		if len(failures) != 1 {
			t.Fatalf("%d failures, want 1", len(failures))
		}
		return failures[0]
	}
	s := first(cfg).At // the suspicion
	if s < 10*cfg.HBPeriod {
		t.Fatalf("suspected at %v: the test needs a later suspicion", s)
	}
	cfg.Planned = []ScriptedFailure{{Node: 0, At: s - 1}}
	if f := first(cfg); f.At != s-1 || f.DetectedAt != s {
		t.Errorf("failed at %v (want %v), detected at %v: want at the suspicion, %v", f.At, s-1, f.DetectedAt, s)
	}
	early := s - cfg.HBTimeout - 3*cfg.HBPeriod
	cfg.Planned = []ScriptedFailure{{Node: 0, At: early}}
	f := first(cfg)
	if lastBeat := early / cfg.HBPeriod * cfg.HBPeriod; f.At != early || f.DetectedAt < lastBeat+cfg.Latency+cfg.HBTimeout || f.DetectedAt >= s {
		t.Errorf("failed at %v, detected at %v: want a timeout after the heartbeat of %v, before the suspicion at %v", f.At, f.DetectedAt, lastBeat, s)
	}
}

// The draws skip the heartbeats that cannot matter, and that changes
// nothing: the time to a node's first suspicion has the law it has when
// every heartbeat's delay is drawn. The two samples, of 20,000 nodes each
// at q ≈ 0.055, pass a two-sample Kolmogorov–Smirnov test at the 0.1%
// level and their means agree within 4 standard errors. (Suspicions at
// successive heartbeats are not independent, so the mean is not 1/q
// periods.)
func TestSuspicionsMatchEveryHeartbeatDrawn(t *testing.T) {
	const n = 20000
	cfg, _ := suspicionConfig(n, Second)
	cfg.HBTimeout -= 200 * Microsecond
	failures, _ := runIdle(t, cfg, n)
	if len(failures) != n {
		t.Fatalf("%d of %d nodes suspected within %v", len(failures), n, cfg.Limit)
	}
	skipped := make([]float64, n)
	for i, f := range failures {
		skipped[i] = f.At.Seconds()
	}
	rng := NewStream(7, "every-heartbeat", 0)
	mu, d := float64(cfg.Jitter), float64(cfg.HBTimeout-cfg.HBPeriod)
	every := make([]float64, n)
	for i := range every {
		prev := rng.ExpFloat64() * mu
		for k := 0; ; k++ {
			next := rng.ExpFloat64() * mu
			if next > prev+d {
				every[i] = (Time(k)*cfg.HBPeriod + cfg.Latency + Time(prev) + cfg.HBTimeout).Seconds()
				break
			}
			prev = next
		}
	}
	mean := func(xs []float64) (m, se float64) {
		var s, sq float64
		for _, x := range xs {
			s += x
			sq += x * x
		}
		m = s / float64(len(xs))
		return m, math.Sqrt((sq/float64(len(xs)) - m*m) / float64(len(xs)))
	}
	ms, ses := mean(skipped)
	me, see := mean(every)
	t.Logf("mean time to suspicion %.5g s ± %.2g skipping, %.5g s ± %.2g every heartbeat drawn", ms, ses, me, see)
	if math.Abs(ms-me) > 4*math.Hypot(ses, see) {
		t.Errorf("mean time to suspicion %.5g s skipping, %.5g s every heartbeat drawn", ms, me)
	}
	if ks := kolmogorovSmirnov(skipped, every); ks > 1.95*math.Sqrt(2.0/n) {
		t.Errorf("Kolmogorov–Smirnov distance %.4g, above the 0.1%% critical value %.4g", ks, 1.95*math.Sqrt(2.0/n))
	}
}

// kolmogorovSmirnov returns the largest distance between the empirical
// distribution functions of a and b (sorted in place).
func kolmogorovSmirnov(a, b []float64) float64 {
	slices.Sort(a)
	slices.Sort(b)
	var i, j int
	var dist float64
	for i < len(a) && j < len(b) {
		x := min(a[i], b[j])
		for i < len(a) && a[i] == x {
			i++
		}
		for j < len(b) && b[j] == x {
			j++
		}
		dist = max(dist, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return dist
}

// A monitor that fences every node within a few heartbeats (a timeout of
// one period: half the heartbeats come too late) would keep a run failing
// until its time limit, holding a record of each failure: the run stops
// at Config.MaxFailures, reported unrecoverable.
func TestFailureStormStops(t *testing.T) {
	cfg, _ := suspicionConfig(4, Hour)
	cfg.HBTimeout, cfg.Spares, cfg.Repair, cfg.MaxFailures = cfg.HBPeriod, 8, Millisecond, 1000
	p := &recordProto{}
	rt, err := New(cfg, idle(4), p)
	if err != nil {
		t.Fatal(err)
	}
	p.onFail = func(f Failure) { // a spare takes each node's place, and is fenced in turn
		if s, ok := rt.TakeSpare(func(NodeID) {}); ok {
			rt.ReplaceSlot(f.Node, s)
		}
	}
	res := rt.Run()
	st := res.Stats
	if res.Finished || st.Failures != 1000 || st.Unrecoverable != 1 || !strings.Contains(st.UnrecoverableNote, "1000 failures in") || res.Makespan > Second {
		t.Errorf("finished %v at %v after %d failures, %d unrecoverable (%q): want a stop at the 1000th failure, within a second",
			res.Finished, res.Makespan, st.Failures, st.Unrecoverable, st.UnrecoverableNote)
	}
}
