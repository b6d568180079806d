package plots

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Estimate is a mean with its 95% confidence interval. A NaN bound draws
// no error bar on that side.
type Estimate struct {
	Mean, Low, High float64
}

// Point is one summarised measurement of a figure: the series it belongs to
// (a protocol name, normally), its x value and its estimate. Kind is the
// protocol kind of the series when it is known, for KindStyle.
type Point struct {
	Series string
	Kind   string
	X      float64
	Y      Estimate
}

// Curve is an analytical prediction drawn as a dashed line, in the colour of
// KindStyle(Style, Kind) (an empty Style: Name).
type Curve struct {
	Name, Style, Kind string
	X, Y              []float64
}

// Group turns points into series, one per series name in order of first
// appearance, each sorted by x, with x and y multiplied by xScale and
// yScale (unit changes such as fraction to percent).
func Group(pts []Point, xScale, yScale float64) []Series {
	var names []string
	by := map[string][]Point{}
	for _, p := range pts {
		if _, ok := by[p.Series]; !ok {
			names = append(names, p.Series)
		}
		by[p.Series] = append(by[p.Series], p)
	}
	out := make([]Series, 0, len(names))
	for _, n := range names {
		ps := by[n]
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].X < ps[j].X })
		s := Series{Name: n, Kind: ps[0].Kind}
		for _, p := range ps {
			s.X = append(s.X, p.X*xScale)
			s.Y = append(s.Y, p.Y.Mean*yScale)
			s.Low = append(s.Low, p.Y.Low*yScale)
			s.High = append(s.High, p.Y.High*yScale)
		}
		out = append(out, s)
	}
	return out
}

func curves(cs []Curve, xScale float64) []Series {
	var out []Series
	for _, c := range cs {
		s := Series{Name: c.Name, Style: c.Style, Kind: c.Kind, Curve: true, Y: append([]float64(nil), c.Y...)}
		for _, x := range c.X {
			s.X = append(s.X, x*xScale)
		}
		out = append(out, s)
	}
	return out
}

// Chart is a figure of points against x with the given title and axis
// labels (with units), for quantities without a dedicated figure.
func Chart(title, xLabel, yLabel string, pts []Point) *LineChart {
	return &LineChart{Title: title, XLabel: xLabel, YLabel: yLabel, Series: Group(pts, 1, 1)}
}

// OverheadVsNodes is the fault-free overhead of each protocol against the
// number of nodes; Y is a fraction (0.05), drawn in percent.
func OverheadVsNodes(pts []Point) *LineChart {
	return &LineChart{Title: "Fault-free overhead vs nodes", XLabel: "nodes", YLabel: "overhead (%)",
		Series: Group(pts, 1, 100)}
}

// OverheadVs is the fault-free overhead of each protocol against key, a
// numeric scenario key without a figure of its own; Y is a fraction, drawn
// in percent.
func OverheadVs(key string, pts []Point) *LineChart {
	return &LineChart{Title: "Fault-free overhead vs " + key, XLabel: key, YLabel: "overhead (%)", Series: Group(pts, 1, 100)}
}

// OverheadVsCommRatio is the fault-free overhead against the
// communication/computation ratio; Y is a fraction, drawn in percent.
func OverheadVsCommRatio(pts []Point) *LineChart {
	return &LineChart{Title: "Fault-free overhead vs communication/computation ratio",
		XLabel: "communication/computation time ratio", YLabel: "overhead (%)", Series: Group(pts, 1, 100)}
}

// CheckpointOverheadVsInterval is the fault-free overhead of checkpointing
// against the iterations between checkpoints; Y is a fraction, drawn in
// percent.
func CheckpointOverheadVsInterval(pts []Point) *LineChart {
	return &LineChart{Title: "Checkpoint overhead vs checkpoint interval", XLabel: "iterations per checkpoint",
		YLabel: "overhead (%)", Series: Group(pts, 1, 100)}
}

// RecoveryVsObjects is the mean recovery time per failure, in seconds,
// against the objects per node.
func RecoveryVsObjects(pts []Point) *LineChart {
	return &LineChart{Title: "Recovery time vs objects per node", XLabel: "objects per node",
		YLabel: "recovery time per failure (s)", Series: Group(pts, 1, 1)}
}

// MakespanVsMTBF is the makespan, in seconds, against the node MTBF, given
// in seconds and drawn in a unit that suits its range, with analytical
// curves (x in seconds too) overlaid.
func MakespanVsMTBF(pts []Point, model []Curve) *LineChart {
	hi := maxX(pts)
	for _, c := range model { // the curves alone when no run finished
		for _, x := range c.X {
			hi = math.Max(hi, x)
		}
	}
	name, scale := timeUnit(hi)
	// MTBFs and makespans under frequent failures span orders of magnitude
	return &LineChart{Title: "Makespan vs node MTBF", XLabel: "node MTBF (" + name + ")", YLabel: "makespan (s)",
		LogX: true, LogY: true, Series: append(Group(pts, scale, 1), curves(model, scale)...)}
}

// EfficiencyVsMTBF is the efficiency (fault-free time without protocol over
// makespan, in percent) against the node MTBF in seconds.
func EfficiencyVsMTBF(pts []Point) *LineChart {
	name, scale := timeUnit(maxX(pts))
	return &LineChart{Title: "Efficiency vs node MTBF", XLabel: "node MTBF (" + name + ")", YLabel: "efficiency (%)",
		LogX: true, Series: Group(pts, scale, 100)}
}

// MakespanVsGroupMTBF is the makespan, in seconds, against the MTBF of each
// failure domain (failures.group_mtbf: a chassis or rack that fails as a
// whole), given in seconds and drawn in a unit that suits its range.
func MakespanVsGroupMTBF(pts []Point) *LineChart {
	name, scale := timeUnit(maxX(pts))
	return &LineChart{Title: "Makespan vs failure-domain MTBF", XLabel: "MTBF of each failure domain (" + name + ")",
		YLabel: "makespan (s)", LogX: true, LogY: true, Series: Group(pts, scale, 1)}
}

// MakespanVsTimeout is the makespan, in seconds, against the heartbeat
// timeout in seconds (detection.timeout: a shorter one detects failures
// sooner and fences more live nodes whose heartbeat came late), with
// analytical curves (x in seconds too) overlaid.
func MakespanVsTimeout(pts []Point, model []Curve) *LineChart {
	// false suspicions grow exponentially as the timeout shrinks
	return &LineChart{Title: "Makespan vs heartbeat timeout", XLabel: "heartbeat timeout (s)", YLabel: "makespan (s)",
		LogY: true, Series: append(Group(pts, 1, 1), curves(model, 1)...)}
}

// maxX is the largest X of pts, 0 if none is positive.
func maxX(pts []Point) float64 {
	hi := 0.0
	for _, p := range pts {
		hi = math.Max(hi, p.X)
	}
	return hi
}

// timeUnit picks the unit in which durations up to hi seconds read best.
func timeUnit(hi float64) (string, float64) {
	const minute, hour, day, year = 60.0, 3600.0, 86400.0, 365.25 * 86400
	switch {
	case hi < 2*minute:
		return "s", 1
	case hi < 2*hour:
		return "min", 1 / minute
	case hi < 2*day:
		return "h", 1 / hour
	case hi < 2*year:
		return "days", 1 / day
	}
	return "years", 1 / year
}

// Speedup draws T(1)/T(N) from makespans (Y, in seconds) against nodes (X),
// one series per name — typically each protocol under failures and the
// fault-free run without protocol — with the ideal line. When a
// "fault-free" series is there, every series is measured against it (the
// speedup over the program without fault tolerance and without failures,
// as in the DPS paper's Fig. 11), so the curves compare; otherwise each
// against itself. A reference without a one-node point is scaled from its
// smallest N₀, assuming perfect speedup up to it: N₀·T(N₀)/T(N). The
// interval reflects that of T(N) only.
func Speedup(pts []Point) *LineChart {
	c := &LineChart{Title: "Speedup with and without fault tolerance", XLabel: "nodes", YLabel: "speedup T(1)/T(N)"}
	series := Group(pts, 1, 1)
	usable := func(s Series) bool { return len(s.X) > 0 && s.Y[0] > 0 && s.X[0] > 0 }
	common := slices.IndexFunc(series, func(s Series) bool { return s.Name == "fault-free" && usable(s) })
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		if !usable(s) {
			continue
		}
		n0, t0 := s.X[0], s.Y[0]
		if common >= 0 {
			n0, t0 = series[common].X[0], series[common].Y[0]
		}
		if n0 != 1 {
			c.YLabel = "speedup N₀·T(N₀)/T(N)"
		}
		ref := n0 * t0
		sp := Series{Name: s.Name, Kind: s.Kind, X: s.X}
		for i := range s.X {
			sp.Y = append(sp.Y, ref/s.Y[i])
			sp.Low = append(sp.Low, ref/s.High[i]) // a longer makespan is a smaller speedup
			sp.High = append(sp.High, ref/s.Low[i])
		}
		c.Series = append(c.Series, sp)
		lo, hi = math.Min(lo, s.X[0]), math.Max(hi, s.X[len(s.X)-1])
	}
	if len(c.Series) > 0 {
		c.Series = append(c.Series, Series{Name: "ideal", Curve: true, X: []float64{lo, hi}, Y: []float64{lo, hi}})
	}
	return c
}

// FileName returns a file name for a figure: base, then the fixed settings
// it was drawn at (so figures of different slices do not overwrite each
// other), with characters that file systems dislike replaced.
func FileName(base, fixed, ext string) string {
	name := base
	if fixed != "" {
		name += "_" + fixed
	}
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == '=') {
			b[i] = '_'
		}
	}
	return fmt.Sprintf("%s.%s", b, ext)
}
