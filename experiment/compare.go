package experiment

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"

	"ftsim/scenarios"
)

// Comparison ranks the protocols compared at one setting of the other
// varied keys: every row faced the same failure traces (replication r of
// each protocol has the same seed).
type Comparison struct {
	Rest string // the other settings, as a point ID ("" when only the protocol varies)
	Rows []ComparisonRow
	Best int // index in Rows of the smallest mean makespan, -1 when no protocol finished
}

// ComparisonRow is one protocol of a Comparison.
type ComparisonRow struct {
	Point    string
	Protocol string // the value of the protocol key (a label or a kind)
	Summary
	// ToBest is the paired ratio makespan(this)/makespan(best) over the
	// replications both finished; 1 for the best itself.
	ToBest Estimate
	// Predicted is the analytical makespan for this point, when a model
	// applies (see Point.Predictions); NaN otherwise.
	Predicted     float64
	PredictedName string
}

// CompareProtocols groups the points of a sweep that differ only in the
// protocol key ("protocol" for [[protocols]] entries, else "protocol.kind")
// and ranks each group by mean makespan, with the analytical makespan of
// each point from infos (which may be nil). A sweep that does not vary the
// protocol gives nothing.
func CompareProtocols(recs []SweepRecord, varies []Vary, infos []PointInfo) []Comparison {
	key := ProtocolVaryKey(varies)
	ki := slices.IndexFunc(varies, func(v Vary) bool { return v.Key == key })
	if ki < 0 {
		return nil
	}
	rest := slices.Delete(slices.Clone(varies), ki, ki+1)
	by := groupByPoint(recs)
	preds := map[string][]StoredPrediction{}
	for _, pi := range infos {
		preds[pi.Point] = pi.Predictions
	}
	var out []Comparison
	for _, others := range Product(rest) {
		c := Comparison{Rest: PointID(others), Best: -1}
		for _, v := range varies[ki].Values {
			id := PointID(withValue(varies, ki, others, v))
			rs := by[id]
			if len(rs) == 0 {
				continue
			}
			row := ComparisonRow{Point: id, Protocol: v, Summary: summarizeSweep(rs), Predicted: math.NaN()}
			for _, p := range preds[id] {
				if p.Makespan {
					row.Predicted, row.PredictedName = p.Value, p.Name
					break
				}
			}
			c.Rows = append(c.Rows, row)
		}
		for i, r := range c.Rows {
			if r.Makespan.N > 0 && (c.Best < 0 || r.Makespan.Mean < c.Rows[c.Best].Makespan.Mean) {
				c.Best = i
			}
		}
		if c.Best >= 0 {
			best := by[c.Rows[c.Best].Point]
			for i := range c.Rows {
				c.Rows[i].ToBest = pairedRatio(key, c.Rest, "", "", by[c.Rows[i].Point], best).Paired
			}
		}
		if len(c.Rows) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// ProtocolVaryKey returns the key that selects the protocol in varies:
// "protocol" when [[protocols]] entries are compared, else "protocol.kind"
// (which may not be varied at all).
func ProtocolVaryKey(varies []Vary) string {
	if slices.ContainsFunc(varies, func(v Vary) bool { return v.Key == ProtocolKey }) {
		return ProtocolKey
	}
	return "protocol.kind"
}

func summarizeSweep(rs []SweepRecord) Summary {
	plain := make([]Record, len(rs))
	for i := range rs {
		plain[i] = rs[i].Record
	}
	return Summarize(plain)
}

// PublishedRow is a [[published]] figure beside its simulated counterpart.
type PublishedRow struct {
	scenarios.Published
	// Simulated is the mean of the metric over the point's replications
	// (over the finished ones for times), or the ratio of two such means
	// when RatioTo is set; NaN when no run produced the metric.
	Simulated float64
	Runs      int // replications the mean is over
}

// Diff returns the relative departure of the simulated figure from the
// published one, (simulated − published)/|published|; NaN when either is
// missing or the published value is 0.
func (r PublishedRow) Diff() float64 {
	if r.Value == 0 {
		return math.NaN()
	}
	return (r.Simulated - r.Value) / math.Abs(r.Value)
}

// hasSettings reports whether the point's settings are exactly those of
// text (key=value;key=value in any order); an unparsable text matches none.
func (p *SweepPoint) hasSettings(text string) bool {
	want, err := scenarios.ParsePoint(text)
	if err != nil || len(p.Settings) != len(want) {
		return false
	}
	for _, kv := range want {
		if !slices.Contains(p.Settings, Setting{kv[0], kv[1]}) {
			return false
		}
	}
	return true
}

// PointOf returns the sweep point whose settings are those of text
// (key=value;key=value in any order; "" is the sweep without varies).
func (sw *Sweep) PointOf(text string) (*SweepPoint, error) {
	if _, err := scenarios.ParsePoint(text); err != nil {
		return nil, err
	}
	for i := range sw.Points {
		if p := &sw.Points[i]; p.hasSettings(text) {
			return p, nil
		}
	}
	var ids []string
	for _, p := range sw.Points {
		ids = append(ids, fmt.Sprintf("%q", p.ID))
	}
	if len(ids) > 6 {
		ids = append(ids[:6], "...")
	}
	return nil, fmt.Errorf("no point of the sweep has the settings %q (points: %s)", text, strings.Join(ids, ", "))
}

// CheckPublished verifies, before any run, that every [[published]] figure
// of the scenario quotes a metric of Metrics and names a point of the
// sweep, and reports the first that does not at its file, line and key.
func (sw *Sweep) CheckPublished(s *scenarios.Scenario) error {
	for i, p := range s.Published {
		if !slices.Contains(Metrics(), p.Metric) {
			return s.Errorf(fmt.Sprintf("published[%d].metric", i), "unknown metric %q: want a numeric column of runs.csv or a protocol metric: %s",
				p.Metric, strings.Join(Metrics(), ", "))
		}
		if _, err := sw.PointOf(p.Point); err != nil {
			return s.Errorf(fmt.Sprintf("published[%d].point", i), "%v", err)
		}
		if p.RatioTo != "" {
			if _, err := sw.PointOf(p.RatioTo); err != nil {
				return s.Errorf(fmt.Sprintf("published[%d].ratio_to", i), "%v", err)
			}
		}
	}
	return nil
}

// ComparePublished computes the simulated counterpart of each published
// figure from the sweep's records.
func (sw *Sweep) ComparePublished(pubs []scenarios.Published, recs []SweepRecord) []PublishedRow {
	by := groupByPoint(recs)
	mean := func(point, metric string) (float64, int) {
		p, err := sw.PointOf(point)
		if err != nil {
			return math.NaN(), 0
		}
		var xs []float64
		for _, r := range by[p.ID] {
			if !r.Finished && metric == "makespan_s" {
				continue
			}
			if x, ok := r.Metric(metric); ok {
				xs = append(xs, x)
			}
		}
		if len(xs) == 0 {
			return math.NaN(), 0
		}
		return stat.Mean(xs, nil), len(xs)
	}
	out := make([]PublishedRow, len(pubs))
	for i, p := range pubs {
		x, n := mean(p.Point, p.Metric)
		if p.RatioTo != "" {
			ref, m := mean(p.RatioTo, p.Metric)
			x, n = ref/x, min(n, m)
		}
		out[i] = PublishedRow{Published: p, Simulated: x, Runs: n}
	}
	return out
}
