package experiment

import (
	"math"
	"testing"
)

// Common random numbers at work: replication r of each configuration sees
// the same failure trace, so the per-replication ratio varies far less than
// the makespans themselves, and its interval is much narrower than the one
// the same runs give when treated as independent samples.
func TestPairedRatioIsNarrower(t *testing.T) {
	cases := []struct {
		name   string
		base   []string
		vary   Vary
		factor float64 // the paired interval is at least this many times narrower
	}{
		{"none vs cpr", nil, Vary{"protocol.kind", []string{"none", "cpr"}}, 10},
		{"pfs vs buddy", []string{"workload.cell_ops=100", "failures.node_mtbf=40s", "protocol.kind=cpr",
			"protocol.interval=fixed", "protocol.period=1s"}, Vary{"protocol.tier", []string{"pfs", "buddy"}}, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			varies := []Vary{c.vary}
			sw, err := NewSweep(smallScenario(t, c.base...), varies, 12)
			if err != nil {
				t.Fatal(err)
			}
			recs, _ := collect(t, sw, RunOptions{})
			failures := 0
			for _, r := range recs {
				failures += r.Failures
			}
			if failures < 10 {
				t.Fatalf("only %d failures: the makespans hardly vary", failures)
			}
			prs := PairedRatios(recs, varies, c.vary.Key)
			if len(prs) != 1 {
				t.Fatalf("%d ratios, want 1", len(prs))
			}
			pr := prs[0]
			if pr.Num != c.vary.Values[1] || pr.Den != c.vary.Values[0] || pr.Pairs != 12 {
				t.Fatalf("ratio %+v", pr)
			}
			paired, unpaired := pr.Paired.High-pr.Paired.Low, pr.Unpaired.High-pr.Unpaired.Low
			t.Logf("%s/%s: paired %.4g [%.4g, %.4g], unpaired %.4g [%.4g, %.4g]", pr.Num, pr.Den,
				pr.Paired.Mean, pr.Paired.Low, pr.Paired.High, pr.Unpaired.Mean, pr.Unpaired.Low, pr.Unpaired.High)
			if !(paired > 0) || paired*c.factor > unpaired {
				t.Fatalf("paired interval width %.4g, unpaired %.4g: want at least %g× narrower", paired, unpaired, c.factor)
			}
		})
	}
}

// fakeRecord returns a finished record of point with the given makespan.
func fakeRecord(point, proto string, rep int, makespan float64) SweepRecord {
	return SweepRecord{Point: point, Record: Record{Protocol: proto, Rep: rep, Seed: uint64(rep), Finished: true,
		MakespanS: makespan, Efficiency: 1 / makespan, DigestOK: true}}
}

// Ratios pair the points that agree on every other key, every two values in
// the order varied, and only replications where both runs finished.
func TestPairedRatiosGrouping(t *testing.T) {
	varies := []Vary{{"cluster.nodes", []string{"1", "2"}}, {"protocol.kind", []string{"none", "cpr", "mlog"}}}
	base := map[string]float64{"none": 10, "cpr": 8, "mlog": 6}
	var recs []SweepRecord
	for _, n := range []string{"1", "2"} {
		for _, p := range varies[1].Values {
			id := "cluster.nodes=" + n + ";protocol.kind=" + p
			for rep := 0; rep < 4; rep++ {
				r := fakeRecord(id, p, rep, base[p]*float64(rep+1))
				if n == "2" && p == "mlog" && rep == 3 {
					r.Finished = false
				}
				recs = append(recs, r)
			}
		}
	}
	prs := PairedRatios(recs, varies, "protocol.kind")
	want := []struct {
		rest, num, den string
		ratio          float64
		pairs          int
	}{
		{"cluster.nodes=1", "cpr", "none", 0.8, 4},
		{"cluster.nodes=1", "mlog", "none", 0.6, 4},
		{"cluster.nodes=1", "mlog", "cpr", 0.75, 4},
		{"cluster.nodes=2", "cpr", "none", 0.8, 4},
		{"cluster.nodes=2", "mlog", "none", 0.6, 3},
		{"cluster.nodes=2", "mlog", "cpr", 0.75, 3},
	}
	if len(prs) != len(want) {
		t.Fatalf("%d ratios, want %d: %+v", len(prs), len(want), prs)
	}
	for i, w := range want {
		p := prs[i]
		if p.Rest != w.rest || p.Num != w.num || p.Den != w.den || p.Pairs != w.pairs ||
			math.Abs(p.Paired.Mean-w.ratio) > 1e-12 || p.Paired.High-p.Paired.Low > 1e-12 {
			t.Errorf("ratio %d: %+v, want %s %s/%s = %g over %d pairs with no spread", i, p, w.rest, w.num, w.den, w.ratio, w.pairs)
		}
		// the makespans spread over a factor 4, which the unpaired
		// interval cannot see through
		if p.Unpaired.High-p.Unpaired.Low < 0.5 {
			t.Errorf("ratio %d: unpaired interval %+v is too narrow", i, p.Unpaired)
		}
	}
	if got := PairedRatios(recs, varies[:1], "protocol.kind"); got != nil {
		t.Fatalf("without protocol.kind varied: %+v", got)
	}
	sums := SummarizePoints(recs, varies)
	if len(sums) != 6 || sums[0].Point != "cluster.nodes=1;protocol.kind=none" || sums[5].Protocol != "mlog" {
		t.Fatalf("summaries %+v", sums)
	}
	if s := sums[5]; s.Runs != 4 || s.Finished != 3 || s.Makespan.N != 3 || s.Makespan.Mean != 12 {
		t.Fatalf("mlog at 2 nodes: %+v", s)
	}
	if len(SummarizePoints(recs[:4], varies)) != 1 {
		t.Fatal("points without runs are summarised")
	}
}

// A protocol's own metrics are averaged over the runs that report them.
func TestSummarizeMetrics(t *testing.T) {
	recs := []Record{
		{Finished: true, Metrics: map[string]float64{"restart_s": 2, "iteration_s": 1}},
		{Finished: true, Metrics: map[string]float64{"restart_s": 4}},
		{Finished: true},
	}
	s := Summarize(recs)
	if r := s.Metrics["restart_s"]; r.N != 2 || r.Mean != 3 {
		t.Errorf("restart_s %+v, want the mean 3 of 2 runs", r)
	}
	if r := s.Metrics["iteration_s"]; r.N != 1 || r.Mean != 1 {
		t.Errorf("iteration_s %+v", r)
	}
	if Summarize(recs[2:]).Metrics != nil {
		t.Error("metrics without any run reporting one")
	}
}

// The parts of a recovery are averaged over the runs that have one: a run
// whose failure was never detected (too late), or never recovered, adds no
// zero to them; a record of a store older than the recovered column counts
// by its recovery time.
func TestSummarizeRecovery(t *testing.T) {
	recs := []Record{
		{Failures: 2, Detected: 2, Restored: 1, Recovered: 2, DetectionSMean: 1, RestoreSMean: 4, RecoverySMean: 10},
		{Failures: 1}, // struck too late to be detected
		{Failures: 1, Detected: 1, DetectionSMean: 3},                    // stopped before its restore
		{Failures: 1, Detected: 1, DetectionSMean: 2, RecoverySMean: 30}, // an older store's
		{},
	}
	s := Summarize(recs)
	for _, c := range []struct {
		name string
		got  Estimate
		n    int
		mean float64
	}{
		{"recovery", s.Recovery, 2, 20},
		{"detection", s.Detection, 3, 2},
		{"restore", s.Restore, 1, 4},
		{"failures", s.Failures, 5, 1},
	} {
		if c.got.N != c.n || c.got.Mean != c.mean {
			t.Errorf("%s: mean %g over %d runs, want %g over %d", c.name, c.got.Mean, c.got.N, c.mean, c.n)
		}
	}
}
