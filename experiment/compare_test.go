package experiment

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"ftsim/scenarios"
)

// compared is the small scenario with three protocols and a file sweep.
var compared = strings.Replace(small, "[protocol]\nkind = \"none\"\n", `
[[protocols]]
kind = "none"
[[protocols]]
label = "cpr-1s"
kind = "cpr"
period = "1s"
[[protocols]]
label = "cpr-4s"
kind = "cpr"
period = "4s"

[sweep]
vary = ["cluster.nodes=2,4"]

[[published]]
source = "Table X"
point = "cluster.nodes=4;protocol=cpr-1s"
metric = "makespan_s"
value = 3
[[published]]
source = "Fig. Y"
point = "protocol=none;cluster.nodes=4"
ratio_to = "protocol=none;cluster.nodes=2"
metric = "baseline_s"
value = 2
`, 1)

func comparedSweep(t *testing.T, varies ...Vary) (*scenarios.Scenario, *Sweep) {
	t.Helper()
	s, err := scenarios.Parse("compared.toml", []byte(compared), nil)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := NewSweep(s, varies, s.Reps)
	if err != nil {
		t.Fatal(err)
	}
	return s, sw
}

func TestEffectiveVaries(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cli    []Vary
		want   []string
		errMsg string
	}{
		{"file", nil, []string{"protocol=none,cpr-1s,cpr-4s", "cluster.nodes=2,4"}, ""},
		{"cli replaces the file's values", []Vary{{"cluster.nodes", []string{"8"}}},
			[]string{"protocol=none,cpr-1s,cpr-4s", "cluster.nodes=8"}, ""},
		{"cli adds a key", []Vary{{"seed", []string{"1", "2"}}},
			[]string{"protocol=none,cpr-1s,cpr-4s", "cluster.nodes=2,4", "seed=1,2"}, ""},
		{"cli chooses entries", []Vary{{"protocol", []string{"cpr-4s", "none"}}},
			[]string{"protocol=cpr-4s,none", "cluster.nodes=2,4"}, ""},
		{"unknown entry", []Vary{{"protocol", []string{"mlog"}}}, nil, `no [[protocols]] entry is labelled "mlog"`},
		{"twice", []Vary{{"seed", []string{"1"}}, {"seed", []string{"2"}}}, nil, "varied twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := comparedSweep(t)
			sw, err := NewSweep(s, tc.cli, 1)
			if tc.errMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errMsg) {
					t.Fatalf("error %v, want %q", err, tc.errMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range sw.Varies {
				got = append(got, v.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("varies %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := NewSweep(smallScenario(t), []Vary{{"protocol", []string{"cpr"}}}, 1); err == nil {
		t.Error("--vary protocol on a scenario without [[protocols]] was accepted")
	}
}

func TestCompareProtocols(t *testing.T) {
	s, sw := comparedSweep(t)
	if err := sw.CheckPublished(s); err != nil {
		t.Fatal(err)
	}
	var recs []SweepRecord
	var infos []PointInfo
	opts := RunOptions{Prepared: func(sp *SweepPoint, p *Point) error {
		infos = append(infos, NewPointInfo(sp, p))
		return nil
	}, Workers: 1}
	if err := sw.Run(context.Background(), opts, func(r SweepRecord) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	// The point of a published figure (not a ratio) carries it, for plots.
	for _, pi := range infos {
		want := []PublishedValue(nil)
		if pi.Point == "protocol=cpr-1s;cluster.nodes=4" {
			want = []PublishedValue{{"Table X", "makespan_s", 3}}
		}
		if !slices.Equal(pi.Published, want) {
			t.Errorf("%s carries %v, want %v", pi.Point, pi.Published, want)
		}
	}
	cs := CompareProtocols(recs, sw.Varies, infos)
	if len(cs) != 2 || cs[0].Rest != "cluster.nodes=2" || cs[1].Rest != "cluster.nodes=4" {
		t.Fatalf("comparisons %+v", cs)
	}
	for _, c := range cs {
		if len(c.Rows) != 3 || c.Best < 0 {
			t.Fatalf("%s: %d rows, best %d", c.Rest, len(c.Rows), c.Best)
		}
		best := c.Rows[c.Best]
		if best.ToBest.Mean != 1 {
			t.Errorf("%s: the best's ratio to itself is %g", c.Rest, best.ToBest.Mean)
		}
		for _, r := range c.Rows {
			if r.Makespan.Mean < best.Makespan.Mean {
				t.Errorf("%s: %s is faster than the best %s", c.Rest, r.Protocol, best.Protocol)
			}
			if r.DigestOK != r.Runs || r.Runs != s.Reps {
				t.Errorf("%s %s: %d of %d runs ok", c.Rest, r.Protocol, r.DigestOK, r.Runs)
			}
			// The baseline is shared: every protocol of a group has the same one.
			if r.Baseline != c.Rows[0].Baseline {
				t.Errorf("%s: baselines differ: %g vs %g", c.Rest, r.Baseline, c.Rows[0].Baseline)
			}
			if math.IsNaN(r.Predicted) {
				t.Errorf("%s %s: prediction %g (%s)", c.Rest, r.Protocol, r.Predicted, r.PredictedName)
			}
		}
	}
	// Published figures: the mean of the metric at the point, or a ratio.
	rows := sw.ComparePublished(s.Published, recs)
	var mk []float64
	var base2, base4 float64
	for _, r := range recs {
		switch r.Point {
		case "protocol=cpr-1s;cluster.nodes=4":
			if r.Finished {
				mk = append(mk, r.MakespanS)
			}
		case "protocol=none;cluster.nodes=2":
			base2 = r.BaselineS
		case "protocol=none;cluster.nodes=4":
			base4 = r.BaselineS
		}
	}
	var sum float64
	for _, x := range mk {
		sum += x
	}
	if want := sum / float64(len(mk)); math.Abs(rows[0].Simulated-want) > 1e-12*want || rows[0].Runs != len(mk) {
		t.Errorf("published[0]: simulated %g over %d runs, want %g over %d", rows[0].Simulated, rows[0].Runs, want, len(mk))
	}
	if want := base2 / base4; rows[1].Simulated != want {
		t.Errorf("published[1]: simulated %g, want %g", rows[1].Simulated, want)
	}
	if d := rows[1].Diff(); math.Abs(d-(base2/base4-2)/2) > 1e-12 {
		t.Errorf("diff %g", d)
	}
}

// A published figure naming no point of the sweep, or a metric no run
// reports, is refused before any run, at its entry's file, line and key.
func TestCheckPublished(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{`point = "cluster.nodes=4;protocol=cpr-1s"`, `point = "cluster.nodes=3;protocol=cpr-1s"`,
			`compared.toml:39: published[0].point: no point of the sweep has the settings "cluster.nodes=3;protocol=cpr-1s"`},
		{`metric = "makespan_s"`, `metric = "makespan"`,
			`compared.toml:39: published[0].metric: unknown metric "makespan": want a numeric column of runs.csv or a protocol metric: `},
		{`metric = "baseline_s"`, `metric = "restart"`, `compared.toml:48: published[1].metric: unknown metric "restart"`},
	} {
		t.Run(c.to, func(t *testing.T) {
			s, err := scenarios.Parse("compared.toml", []byte(strings.Replace(compared, c.from, c.to, 1)), nil)
			if err != nil {
				t.Fatal(err)
			}
			sw, err := NewSweep(s, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := sw.CheckPublished(s); err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

// Every figure the protocol comparison reports, the columns it prints and
// each protocol's own metrics, is a metric a [[published]] entry may quote:
// Metrics is the one list CheckPublished accepts. Each protocol kind runs
// once, with failures, on a workload it supports.
func TestMetricsCoverComparison(t *testing.T) {
	workloads := map[string][]string{ // protocol kind → workload
		"none":     {"workload.kind=life", "workload.width=32", "workload.height=32", "workload.generations=20"},
		"mpift-ia": {"workload.kind=farm", "workload.width=96", "workload.height=96", "workload.tile=16", "workload.max_iter=300"},
		"abft":     {"workload.kind=dp", `workload.problem="lcs"`, "workload.random_a=300", "workload.random_b=200"},
	}
	for _, k := range []string{"cpr", "mlog", "dps", "replication"} {
		workloads[k] = workloads["none"]
	}
	workloads["mlog"] = append(slices.Clone(workloads["mlog"]), "protocol.measure_restart=true")
	known := Metrics()
	for _, m := range []string{"makespan_s", "overhead", "recovery_s_mean", "efficiency", "baseline_s", "fault_free_s"} {
		if !slices.Contains(known, m) {
			t.Errorf("the comparison reports %s, which is not in Metrics()", m)
		}
	}
	for _, kind := range ProtocolKinds() {
		wl, ok := workloads[kind]
		if !ok {
			t.Fatalf("protocol %q has no case in this test", kind)
		}
		t.Run(kind, func(t *testing.T) {
			over := append([]string{"protocol.kind=" + kind, "cluster.nodes=4", "cluster.spares=3", "failures.distribution=scripted",
				"failures.scripted=[{node=1, progress=0.3}, {node=2, progress=0.65}]", "detection.mode=oracle"}, wl...)
			s, err := scenarios.Parse("test.toml", []byte(`name = "t"`), over)
			if err != nil {
				t.Fatal(err)
			}
			sw, err := NewSweep(s, []Vary{{"protocol.kind", []string{kind}}}, 1)
			if err != nil {
				t.Fatal(err)
			}
			recs, _ := collect(t, sw, RunOptions{})
			cs := CompareProtocols(recs, sw.Varies, nil)
			if len(cs) != 1 || len(cs[0].Rows) != 1 {
				t.Fatalf("comparisons %+v", cs)
			}
			for m := range cs[0].Rows[0].Metrics {
				if !slices.Contains(known, m) {
					t.Errorf("%s reports metric %q, which is not in Metrics(): a [[published]] entry quoting it would be refused", kind, m)
				}
			}
			if kind == "mlog" || kind == "abft" || kind == "dps" || kind == "replication" {
				if len(cs[0].Rows[0].Metrics) == 0 {
					t.Errorf("%s reports no metric: this test no longer checks its names", kind)
				}
			}
		})
	}
}

// The shipped scenarios quote only metrics CheckPublished knows.
func TestEmbeddedPublishedChecks(t *testing.T) {
	for _, name := range scenarios.Embedded() {
		s, _, err := scenarios.LoadEmbedded(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		sw, err := NewSweep(s, nil, s.Reps)
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.CheckPublished(s); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Linked keys varied before the protocol still group each protocol's point
// with the others at the same settings, and pair them: the protocol's value
// goes after both linked settings in the point ID.
func TestCompareAfterLinkedKeys(t *testing.T) {
	base := smallScenario(t, "reps=2", "workload.generations=10")
	sw, err := NewSweep(base, []Vary{{"cluster.nodes|cluster.spares", []string{"2|1", "4"}}, {"protocol.kind", []string{"none", "cpr"}}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var recs []SweepRecord
	if err := sw.Run(context.Background(), RunOptions{Workers: 2}, func(r SweepRecord) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	cs := CompareProtocols(recs, sw.Varies, nil)
	if len(cs) != 2 || cs[0].Rest != "cluster.nodes=2;cluster.spares=1" || cs[1].Rest != "cluster.nodes=4;cluster.spares=4" {
		t.Fatalf("comparisons %+v", cs)
	}
	for _, c := range cs {
		if len(c.Rows) != 2 || c.Rows[0].Runs != 2 || c.Rows[1].Runs != 2 || c.Rows[1].Point != c.Rest+";protocol.kind=cpr" {
			t.Errorf("%s: rows %+v", c.Rest, c.Rows)
		}
	}
	if prs := PairedRatios(recs, sw.Varies, "protocol.kind"); len(prs) != 2 || prs[0].Pairs != 2 || prs[1].Rest != "cluster.nodes=4;cluster.spares=4" {
		t.Errorf("paired ratios %+v", prs)
	}
	if sw.Points[1].Scenario.Cluster.Spares != 1 || sw.Points[3].Scenario.Cluster.Spares != 4 {
		t.Errorf("spares %d and %d, want 1 and 4", sw.Points[1].Scenario.Cluster.Spares, sw.Points[3].Scenario.Cluster.Spares)
	}
}
