package experiment

import (
	"math"
	"strings"
	"testing"
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
		{"dps", []string{"protocol.period=0.3s", "network.cpu_load=0.5"}, []string{"DPS fault-free overhead (Gerlach–Hersch §7)"}, ""},
		{"abft", []string{"workload.kind=pida", "workload.puzzle=[14,1,9,6,4,8,12,5,7,2,3,0,10,11,13,15]", "workload.expand_ops=1e4", "protocol.interval=0.05s"},
			[]string{"restart from scratch"}, "T_pf (Kabir §3.4.1, worst case)"},
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
			case "dps":
				o := byName["DPS fault-free overhead (Gerlach–Hersch §7)"].Value
				if !(o > 0) {
					t.Errorf("overhead %g%% with cpu_load 0.5", o)
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
