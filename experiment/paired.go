package experiment

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// PointSummary aggregates the replications of one sweep point. Overhead is
// measured on the fault-free runs, identical in every replication, so it
// needs no interval; makespan, efficiency and recovery carry 95% CIs.
type PointSummary struct {
	Point    string
	Settings []Setting
	Protocol string
	Summary
}

// SummarizePoints returns a summary for each point of varies that has runs,
// in sweep order. Records of other points are ignored.
func SummarizePoints(recs []SweepRecord, varies []Vary) []PointSummary {
	by := groupByPoint(recs)
	var out []PointSummary
	for _, set := range Product(varies) {
		id := PointID(set)
		rs := by[id]
		if len(rs) == 0 {
			continue
		}
		plain := make([]Record, len(rs))
		for i := range rs {
			plain[i] = rs[i].Record
		}
		out = append(out, PointSummary{Point: id, Settings: set, Protocol: rs[0].Protocol, Summary: Summarize(plain)})
	}
	return out
}

func groupByPoint(recs []SweepRecord) map[string][]SweepRecord {
	by := map[string][]SweepRecord{}
	for _, r := range recs {
		by[r.Point] = append(by[r.Point], r)
	}
	return by
}

// PairedRatio compares two values of one key (normally protocol.kind) at
// points that agree on every other key: Paired is the mean over
// replications of makespan(Num)/makespan(Den), each ratio taken between
// runs with the same seed, hence the same failure trace. Unpaired is the
// ratio of the two mean makespans with a delta-method interval (its SD holds
// the standard error), what the comparison would give with independent
// traces; the gap between the two intervals is what common random numbers
// buy.
type PairedRatio struct {
	Key      string
	Rest     string // the other settings, as a point ID ("" when Key is the only varied key)
	Num, Den string // the two values of Key
	Pairs    int    // replications where both runs finished
	Paired   Estimate
	Unpaired Estimate
}

// PairedRatios returns, for every group of points differing only in key and
// every two values of key a < b in the order varied, the ratio of
// makespan(b)/makespan(a). Groups come in sweep order. Without key among
// varies there is nothing to pair.
func PairedRatios(recs []SweepRecord, varies []Vary, key string) []PairedRatio {
	ki := slices.IndexFunc(varies, func(v Vary) bool { return v.Key == key })
	if ki < 0 {
		return nil
	}
	vals := varies[ki].Values
	rest := slices.Delete(slices.Clone(varies), ki, ki+1)
	by := groupByPoint(recs)
	var out []PairedRatio
	for _, others := range Product(rest) {
		// the point of each value of key, with the other settings fixed
		ids := make([]string, len(vals))
		for j, v := range vals {
			ids[j] = PointID(withValue(varies, ki, others, v))
		}
		for a := range vals {
			for b := a + 1; b < len(vals); b++ {
				den, num := by[ids[a]], by[ids[b]]
				if len(den) == 0 || len(num) == 0 {
					continue
				}
				out = append(out, pairedRatio(key, PointID(others), vals[b], vals[a], num, den))
			}
		}
	}
	return out
}

func pairedRatio(key, rest, numV, denV string, num, den []SweepRecord) PairedRatio {
	pr := PairedRatio{Key: key, Rest: rest, Num: numV, Den: denV}
	denByRep := map[int]*SweepRecord{}
	for i := range den {
		denByRep[den[i].Rep] = &den[i]
	}
	var ratios []float64
	for i := range num {
		n := &num[i]
		d, ok := denByRep[n.Rep]
		if !ok || !n.Finished || !d.Finished || d.MakespanS <= 0 || n.Seed != d.Seed {
			continue
		}
		ratios = append(ratios, n.MakespanS/d.MakespanS)
	}
	pr.Pairs = len(ratios)
	pr.Paired = Estimate95(ratios)
	pr.Unpaired = ratioOfMeans(finishedMakespans(num), finishedMakespans(den))
	return pr
}

func finishedMakespans(rs []SweepRecord) []float64 {
	var xs []float64
	for _, r := range rs {
		if r.Finished {
			xs = append(xs, r.MakespanS)
		}
	}
	return xs
}

// ratioOfMeans estimates mean(a)/mean(b) for independent samples, with the
// delta method's variance r²(CV²(ā) + CV²(b̄)) and Welch–Satterthwaite
// degrees of freedom.
func ratioOfMeans(a, b []float64) Estimate {
	na, nb := len(a), len(b)
	if na < 2 || nb < 2 {
		e := Estimate{Mean: math.NaN(), SD: math.NaN(), Low: math.NaN(), High: math.NaN()}
		if na > 0 && nb > 0 {
			r := stat.Mean(a, nil) / stat.Mean(b, nil)
			e = Estimate{Mean: r, Low: r, High: r, N: min(na, nb)}
		}
		return e
	}
	ma, mb := stat.Mean(a, nil), stat.Mean(b, nil)
	r := ma / mb
	va := stat.Variance(a, nil) / float64(na) / (ma * ma)
	vb := stat.Variance(b, nil) / float64(nb) / (mb * mb)
	se := math.Abs(r) * math.Sqrt(va+vb)
	if va+vb == 0 {
		return Estimate{Mean: r, Low: r, High: r, N: min(na, nb)}
	}
	df := (va + vb) * (va + vb) / (va*va/float64(na-1) + vb*vb/float64(nb-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975)
	return Estimate{Mean: r, SD: se, Low: r - t*se, High: r + t*se, N: min(na, nb)}
}
