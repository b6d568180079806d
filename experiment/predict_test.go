package experiment

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"ftsim/models/cpr"
	"ftsim/models/replication"
)

// Each protocol's closed-form figures appear with the inputs measured on
// its fault-free run.
func TestPredictionsByProtocol(t *testing.T) {
	for _, tc := range []struct {
		kind     string
		sets     []string
		want     []string // prediction names that must be present
		makespan string   // the one flagged as a makespan prediction first
	}{
		{"cpr", []string{"protocol.period=0.3s"}, []string{"periodic checkpoint (exact)", "t'_c (Chakravorty–Kalé, worst case)"}, "periodic checkpoint (exact)"},
		// pairs of nodes fail together: next door, a pair holds a node and
		// its buddy; two nodes further, never
		{"cpr", []string{"protocol.period=0.3s", "protocol.tier=buddy", "failures.group_size=2", "failures.group_mtbf=16s"},
			[]string{"periodic checkpoint (exact)"}, "periodic checkpoint, domain failures fatal (exact)"},
		{"cpr", []string{"protocol.period=0.3s", "protocol.tier=buddy", "protocol.buddy_offset=2", "failures.group_size=2", "failures.group_mtbf=16s"},
			[]string{"periodic checkpoint (exact)"}, "periodic checkpoint (exact)"},
		{"mlog", []string{"protocol.period=0.3s", "protocol.restart=fast"}, []string{"α (measured slowdown)", "t'_c at the same interval", "α threshold (mlog wins below)"}, "t'_ml (Chakravorty–Kalé, worst case)"},
		{"dps", []string{"protocol.period=0.3s", "network.cpu_load=0.5"}, []string{"DPS fault-free overhead (Gerlach–Hersch §7)"}, dpsDegradedName},
		// spread backups share a failed node's threads out: the model does not apply
		{"dps", []string{"protocol.period=0.3s", "network.cpu_load=0.5", "protocol.spread=true"}, []string{"DPS fault-free overhead (Gerlach–Hersch §7)"}, ""},
		{"abft", []string{"workload.kind=pida", "workload.puzzle=[14,1,9,6,4,8,12,5,7,2,3,0,10,11,13,15]", "workload.expand_ops=1e4", "protocol.interval=0.05s"},
			[]string{"restart from scratch"}, "T_pf (Kabir §3.4.1, worst case)"},
		{"replication", nil, []string{"failures to interruption MNFTI", "mean time to interruption"}, "replicated, restart from scratch"},
		{"replication", []string{"protocol.interval=fixed", "protocol.period=0.3s"}, []string{"checkpoint cost C", "periodic checkpoint at μ = MTTI", "best period, exact model"}, "periodic checkpoint, pairs degraded"},
		{"replication", []string{`protocol.interval="benoit"`, "protocol.restart_replicas=true", "cluster.spare_boot=0s"}, []string{"restart strategy's period", "best period, exact model"}, "periodic checkpoint, replicas restarted"},
		// a spare that boots for longer than a period: the model does not apply
		{"replication", []string{`protocol.interval="benoit"`, "protocol.restart_replicas=true"}, []string{"restart strategy's period"}, ""},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			s := smallScenario(t, append([]string{"protocol.kind=" + tc.kind}, tc.sets...)...)
			p, err := Prepare(s)
			if err != nil {
				t.Fatal(err)
			}
			preds := p.Predictions()
			byName := map[string]Prediction{}
			first := ""
			for _, x := range preds {
				byName[x.Name] = x
				if x.Makespan && first == "" {
					first = x.Name
				}
			}
			for _, n := range tc.want {
				if _, ok := byName[n]; !ok {
					t.Errorf("no %q among %v", n, preds)
				}
			}
			if first != tc.makespan {
				t.Errorf("first makespan prediction %q, want %q", first, tc.makespan)
			}
			if fatal, ok := byName["periodic checkpoint, domain failures fatal (exact)"]; ok {
				// 2 domains at 1/16 s⁻¹ each among 4/8 + 2/16 s⁻¹ of failures
				if !strings.HasPrefix(fatal.Inputs, "ρ=0.2 (2 domains)") || !(fatal.Value > byName["periodic checkpoint (exact)"].Value) {
					t.Errorf("%s %.6g s (%s), without fatal failures %.6g s", fatal.Name, fatal.Value, fatal.Inputs, byName["periodic checkpoint (exact)"].Value)
				}
			}
			switch tc.kind {
			case "mlog":
				// α is the measured slowdown, and t'_ml is the model at that α.
				a := byName["α (measured slowdown)"].Value
				if a < 1 || a > 2 {
					t.Errorf("α = %g", a)
				}
				objsPerNode := float64(p.workload.NumObjects()) / float64(s.Cluster.Nodes)
				if !strings.Contains(byName[tc.makespan].Inputs, "v=") || objsPerNode <= 0 {
					t.Errorf("inputs %q", byName[tc.makespan].Inputs)
				}
				if got := byName["t'_c at the same interval"].Value; math.IsNaN(got) || got < p.Baseline.Seconds() {
					t.Errorf("t'_c = %g below the clean runtime", got)
				}
				// The worst case with failures is longer than the fault-free run.
				if got := byName[tc.makespan].Value; got < p.FaultFree.Seconds() {
					t.Errorf("t'_ml = %g below the fault-free %g", got, p.FaultFree.Seconds())
				}
			case "abft":
				// the worst case with failures is longer than the fault-free run
				if got := byName[tc.makespan].Value; got < p.FaultFree.Seconds() {
					t.Errorf("T_pf = %g below the fault-free %g", got, p.FaultFree.Seconds())
				}
			case "replication":
				// b = N/2 node pairs; MNFTI node MTBFs over N
				n := s.Cluster.Nodes
				mnfti := byName["failures to interruption MNFTI"].Value
				if want := replication.MNFTI(n / 2); mnfti != want {
					t.Errorf("MNFTI %g, want %g for %d nodes", mnfti, want, n)
				}
				if got, want := byName["mean time to interruption"].Value, s.Failures.NodeMTBF.Seconds()*mnfti/float64(n); math.Abs(got-want) > 1e-9*want {
					t.Errorf("MTTI %g s, want %g s", got, want)
				}
				if tc.makespan == "" {
					break
				}
				if got := byName[tc.makespan].Value; !(got > p.FaultFree.Seconds()) {
					t.Errorf("%s %g s, not above the fault-free %g s", tc.makespan, got, p.FaultFree.Seconds())
				}
				// the restart strategy checkpoints at its own period (for
				// the estimated cost; the prediction's is the measured one)
				if period, ok := byName["restart strategy's period"]; ok {
					if tau := byName["interval in use τ"].Value; math.Abs(period.Value-tau) > 0.01*tau {
						t.Errorf("interval %g s, the restart strategy's period %g s", tau, period.Value)
					}
				}
			case "dps":
				o := byName["DPS fault-free overhead (Gerlach–Hersch §7)"].Value
				if !(o > 0) {
					t.Errorf("overhead %g%% with cpu_load 0.5", o)
				}
				// a failure at most doubles the pace's time, and a second one
				// next to it triples it
				if d, ok := byName[dpsDegradedName]; ok {
					if ff := p.FaultFree.Seconds(); !(d.Value > ff && d.Value < 3*ff) {
						t.Errorf("%s = %g s, fault-free %g s", d.Name, d.Value, ff)
					}
				}
			}
		})
	}
}

// The mean detection delay behind the restart predictions: an oracle's
// delay, or a heartbeat timeout plus the latency and the jitter's mean of
// the last heartbeat, sent on average half a period before the failure;
// over the failures and the false suspicions (detected at once) when the
// jitter makes some.
func TestDetectionDelay(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		want float64
	}{
		{[]string{"detection.mode=oracle", "detection.delay=2s"}, 2},
		{[]string{"detection.period=1s", "detection.timeout=3s", "network.latency=1ms"}, 2.501},
		{[]string{"detection.period=1s", "detection.timeout=3s", "network.latency=1ms", "network.jitter=50ms"}, 2.551},
		// 4 nodes failing every 8 s each, and fenced at ½e^{−5} per second
		// each, when detection is at once
		{[]string{"detection.period=1s", "detection.timeout=1.1s", "network.latency=1ms", "network.jitter=20ms"},
			0.621 * 0.5 / (0.5 + 4*0.5*math.Exp(-5))},
	} {
		p := &Point{Scenario: smallScenario(t, tc.sets...)}
		if got := p.detectionDelay(); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%v: mean detection delay %v s, want %v s", tc.sets, got, tc.want)
		}
	}
}

// With Weibull failures every makespan model is evaluated at the platform
// MTBF over the run it predicts, a row after the long-run MTBF says which
// MTBF the protocol's prediction took, and the optimal intervals use it.
func TestWeibullPredictionsTakeTheMTBFOverTheRun(t *testing.T) {
	for _, tc := range []struct {
		shape    float64
		sets     []string
		headline string
	}{
		{0.5, []string{"protocol.kind=cpr", "protocol.period=0.3s"}, "periodic checkpoint (exact)"},
		{2, []string{"protocol.kind=cpr", "protocol.period=0.3s"}, "periodic checkpoint (exact)"},
		{0.7, []string{"protocol.kind=none"}, "restart from scratch"},
		{0.7, []string{"protocol.kind=mlog", "protocol.period=0.3s", "failures.node_mtbf=60s"}, "t'_ml (Chakravorty–Kalé, worst case)"},
		{0.7, []string{"protocol.kind=dps", "protocol.period=0.3s"}, "the fault-free run"},
		{0.5, []string{"protocol.kind=cpr", "protocol.period=0.3s", "failures.start=in_service"}, "periodic checkpoint (exact)"},
		{0.5, []string{"protocol.kind=cpr", "protocol.interval=hazard"}, "hazard policy (first order)"},
	} {
		t.Run(fmt.Sprintf("%s/k=%g/%s", tc.sets[0], tc.shape, tc.sets[len(tc.sets)-1]), func(t *testing.T) {
			s := smallScenario(t, append(tc.sets, "failures.distribution=weibull", fmt.Sprintf("failures.weibull_shape=%g", tc.shape))...)
			p, err := Prepare(s)
			if err != nil {
				t.Fatal(err)
			}
			preds := p.Predictions()
			byName := map[string]Prediction{}
			names := []string{}
			for _, x := range preds {
				byName[x.Name] = x
				names = append(names, x.Name)
			}
			long, run := byName["platform MTBF μ"], byName["platform MTBF over the run μ_T"]
			if i := slices.Index(names, "platform MTBF μ"); i < 0 || i+1 >= len(names) || names[i+1] != run.Name {
				t.Fatalf("no MTBF over the run after the long-run MTBF: %q", names)
			}
			// new nodes fail more often than in the long run with a
			// decreasing hazard, less often with an increasing one; nodes in
			// service at the long run's rate, less the replacements' delay
			if s.Failures.Start == "in_service" {
				if !(run.Value > long.Value) {
					t.Errorf("in service: MTBF over the run %g s, in the long run %g s", run.Value, long.Value)
				}
			} else if tc.shape < 1 && !(run.Value < long.Value) || tc.shape > 1 && !(run.Value > long.Value) {
				t.Errorf("k=%g: MTBF over the run %g s, in the long run %g s", tc.shape, run.Value, long.Value)
			}
			rm := p.runMTBF(long.Value, p.detectionDelay())
			horizon := p.FaultFree.Seconds()
			if h, ok := byName[tc.headline]; ok {
				horizon = h.Value
				// the makespan is the model's at the MTBF over itself
				if mu := rm.over(h.Value); math.Abs(mu-run.Value) > 1e-9*mu || !strings.Contains(h.Inputs, fmt.Sprintf("μ=%.4g s over the run", mu)) {
					t.Errorf("%s: %g s with inputs %q, MTBF over it %g s, row %g s", h.Name, h.Value, h.Inputs, mu, run.Value)
				}
			}
			renewal := cpr.WeibullRenewal
			if s.Failures.Start == "in_service" {
				renewal = cpr.WeibullRenewalStationary
			}
			eta := cpr.WeibullScaleForMean(tc.shape, s.Failures.NodeMTBF.Seconds())
			if want := horizon / (4 * renewal(tc.shape, eta, p.detectionDelay(), horizon)); math.Abs(run.Value-want) > 1e-9*want {
				t.Errorf("MTBF over %g s: %.10g s, want %.10g s", horizon, run.Value, want)
			}
			if !strings.Contains(run.Inputs, fmt.Sprintf("T_w=%.4g s (%s)", horizon, tc.headline)) {
				t.Errorf("inputs %q, want the horizon %.4g s of %s", run.Inputs, horizon, tc.headline)
			}
			T := p.Baseline.Seconds()
			if x, ok := byName["restart from scratch"]; ok {
				if want := cpr.ScratchMean(1/rm.over(x.Value), T, 0, p.detectionDelay()+1); math.Abs(x.Value-want) > 1e-9*want {
					t.Errorf("restart from scratch %.10g s, at the MTBF over it %.10g s", x.Value, want)
				}
			}
			if d, ok := byName["Daly interval"]; ok {
				c := byName["checkpoint cost C"].Value
				if want := cpr.DalyHigher(c, run.Value); math.Abs(d.Value-want) > 1e-9*want {
					t.Errorf("Daly interval %g s, at the MTBF over the run %g s", d.Value, want)
				}
			}
		})
	}
}

// cluster.no_spare reaches the simulator: a relaunch waits for repaired
// nodes only when asked.
func TestNoSpareReachesTheSimulator(t *testing.T) {
	for policy, want := range map[string]bool{"shrink": false, "wait": true} {
		s := smallScenario(t, "cluster.repair=1h", `cluster.no_spare="`+policy+`"`)
		cfg, err := clusterConfig(s, 1)
		if err != nil || cfg.WaitForRepair != want {
			t.Errorf("no_spare %s: WaitForRepair %v, %v", policy, cfg.WaitForRepair, err)
		}
	}
}

// With no spare and cluster.no_spare = "wait", the headline prediction of
// none is the restart formula with the expected wait for repairs as its
// downtime (cpr.RepairWait over the repair time, or the detection delay
// where longer) and the boot as its restart; with spares, or shrinking, the
// plain restart formula.
func TestPredictionWaitingForRepairs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sets     []string
		makespan string
		want     func(T float64) float64 // nil: not checked
	}{
		{"wait, no spare", []string{"cluster.spares=0", "cluster.repair=2s", `cluster.no_spare="wait"`, "detection.mode=oracle", `detection.delay="0.5s"`},
			"restart from scratch, waiting for repairs",
			func(T float64) float64 { return cpr.ScratchMean(0.5, T, cpr.RepairWait(0.125, 4, 2), 1) }},
		{"wait, detection longer than the repair", []string{"cluster.spares=0", "cluster.repair=0.2s", `cluster.no_spare="wait"`, "detection.mode=oracle", `detection.delay="0.5s"`},
			"restart from scratch, waiting for repairs",
			func(T float64) float64 { return cpr.ScratchMean(0.5, T, cpr.RepairWait(0.125, 4, 0.5), 1) }},
		{"wait, spares left", []string{"cluster.repair=2s", `cluster.no_spare="wait"`}, "restart from scratch", nil},
		{"shrink, no spare", []string{"cluster.spares=0", "cluster.repair=2s"}, "restart from scratch", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Prepare(smallScenario(t, tc.sets...))
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range p.Predictions() {
				if !x.Makespan {
					continue
				}
				if x.Name != tc.makespan {
					t.Fatalf("makespan prediction %q (%s), want %q", x.Name, x.Inputs, tc.makespan)
				}
				if tc.want != nil {
					// 4 nodes of MTBF 8 s: λ = 0.5/s; the spares boot in 1 s
					if want := tc.want(p.Baseline.Seconds()); math.Abs(x.Value-want) > 1e-9*want {
						t.Fatalf("%s = %.9g s, want %.9g s", x.Name, x.Value, want)
					}
				}
				return
			}
			t.Fatalf("no makespan prediction")
		})
	}
}

// failures.start reaches the simulator: nodes in service only when asked.
func TestFailuresStartReachesTheSimulator(t *testing.T) {
	for start, want := range map[string]bool{"new": false, "in_service": true} {
		s := smallScenario(t, "failures.distribution=weibull", "failures.start="+start)
		cfg, err := clusterConfig(s, 1)
		if err != nil || cfg.InService != want || cfg.WeibullShape != 0.7 {
			t.Errorf("start %s: InService %v, shape %g, %v", start, cfg.InService, cfg.WeibullShape, err)
		}
	}
}

// A model that gives no positive makespan does not apply, and is left out:
// with spares that boot for 100 s against a platform MTBF of 0.5 s the
// first-order waste is far above 1.
func TestNoNegativeMakespanPrediction(t *testing.T) {
	for _, dist := range []string{"exponential", "weibull"} {
		s := smallScenario(t, "protocol.kind=cpr", "protocol.period=0.3s", "cluster.spare_boot=100s", "failures.node_mtbf=2s",
			"failures.distribution="+dist)
		p, err := Prepare(s)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{}
		for _, x := range p.Predictions() {
			names = append(names, x.Name)
			if x.Makespan && !(x.Value > 0) {
				t.Errorf("%s: %s = %g s", dist, x.Name, x.Value)
			}
		}
		if slices.Contains(names, "first-order waste") || !slices.Contains(names, "periodic checkpoint (exact)") {
			t.Errorf("%s: predictions %q", dist, names)
		}
	}
}

// Every prediction is a finite number, even where a shape as extreme as 0.01
// overflows the Weibull moments (the store cannot write NaN in JSON).
func TestPredictionsFiniteForExtremeShapes(t *testing.T) {
	for _, start := range []string{"new", "in_service"} {
		for _, kind := range []string{"none", "cpr", "mlog"} {
			s := smallScenario(t, "protocol.kind="+kind, "failures.distribution=weibull", "failures.weibull_shape=0.01", "failures.start="+start)
			p, err := Prepare(s)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range p.Predictions() {
				if math.IsNaN(x.Value) || math.IsInf(x.Value, 0) {
					t.Errorf("%s, %s: %s = %g", start, kind, x.Name, x.Value)
				}
			}
		}
	}
}

// The hazard policy is Young's interval when the failure rate is constant:
// with exponential failures its runs and predictions are Young's. With
// Weibull failures its interval varies, the periodic models are left out,
// a row gives the mean interval of the fault-free run, and the policy's
// first-order model the makespan.
func TestHazardPolicyPredictions(t *testing.T) {
	prepare := func(sets ...string) *Point {
		t.Helper()
		p, err := Prepare(smallScenario(t, append([]string{"protocol.kind=cpr"}, sets...)...))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	young, hazard := prepare("protocol.interval=young"), prepare("protocol.interval=hazard")
	if y, h := young.Predictions(), hazard.Predictions(); !reflect.DeepEqual(y, h) || len(y) < 8 {
		t.Errorf("exponential failures: hazard's predictions\n%+v\nYoung's\n%+v", h, y)
	}
	p := prepare("protocol.interval=hazard", "failures.distribution=weibull", "failures.weibull_shape=0.5")
	byName := map[string]Prediction{}
	for _, x := range p.Predictions() {
		byName[x.Name] = x
	}
	mean, ok := byName["mean interval in use"]
	want := p.FaultFree.Seconds() / float64(p.FaultFreeStats.Checkpoints)
	if !ok || math.Abs(mean.Value-want) > 1e-9*want {
		t.Errorf("mean interval %+v, want %g s", mean, want)
	}
	model := byName["hazard policy (first order)"]
	rm := p.runMTBF(byName["platform MTBF μ"].Value, p.detectionDelay())
	c := byName["checkpoint cost C"].Value
	if want := cpr.HazardMakespan(p.Baseline.Seconds(), c, p.detectionDelay()+1+c, rm.failures); !model.Makespan || math.Abs(model.Value-want) > 1e-9*want {
		t.Errorf("hazard policy's model %+v, want %g s", model, want)
	}
	for _, name := range []string{"interval in use τ", "periodic checkpoint (exact)", "first-order waste", "Daly wall time"} {
		if _, ok := byName[name]; ok {
			t.Errorf("%s printed for an interval that varies", name)
		}
	}
}

// The DPS overhead model prices each of the protocol's messages
// network.message_cpu at both ends, as the runtime does: on the small
// machine, compute-bound, the predicted fault-free overhead is the simulated
// one to 3% (6.0% at 100 µs, 39% at 1 ms; 0.06% from cpu_load alone, 2% off).
func TestDPSPredictionPricesMessages(t *testing.T) {
	for _, o := range []string{"0s", "100us", "1ms"} {
		s := smallScenario(t, "protocol.kind=dps", "protocol.period=0.3s", "network.cpu_load=0.5",
			`network.message_cpu="`+o+`"`, "failures.distribution=none")
		p, err := Prepare(s)
		if err != nil {
			t.Fatal(err)
		}
		simulated := 100 * (p.FaultFree.Seconds()/p.Baseline.Seconds() - 1)
		got := math.NaN()
		for _, x := range p.Predictions() {
			if x.Name == "DPS fault-free overhead (Gerlach–Hersch §7)" {
				got = x.Value
			}
		}
		t.Logf("message_cpu %s: predicted overhead %.4g%%, simulated %.4g%%", o, got, simulated)
		if !(math.Abs(got-simulated) <= 0.03*simulated) {
			t.Errorf("message_cpu %s: predicted overhead %.4g%%, simulated %.4g%%", o, got, simulated)
		}
	}
}
