package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"ftsim/experiment"
	"ftsim/plots"
	"ftsim/scenarios"
)

func newPlotCmd() *cobra.Command {
	var out, formats string
	c := &cobra.Command{
		Use:   "plot DIR",
		Short: "Draw the figures a sweep's result store supports",
		Long: `Draw figures from the result store DIR written by 'ftsim sweep', into DIR/plots
unless --out says otherwise. Each numeric varied key gives an x axis, one
series per protocol, error bars the 95% confidence intervals:

  cluster.nodes               fault-free overhead vs nodes; speedup T(1)/T(N)
                              with and without fault tolerance
  failures.node_mtbf          makespan vs MTBF with the analytical prediction
                              (restart from scratch, periodic checkpointing);
                              efficiency vs MTBF
  workload.objects_per_node,  recovery time vs objects per node (the paper's
  workload.blocks_per_node    restart time where mlog measured it)
  protocol.every,             checkpoint overhead vs iterations per checkpoint
  protocol.every_progress
  network.bandwidth, network.latency, network.cpu_load, network.message_cpu,
  workload.cell_ops,          fault-free overhead vs communication/computation
  cluster.rate                ratio
  any other numeric key       makespan and fault-free overhead vs that key

When other keys are varied too, one figure is drawn per combination of their
values, named after it. The scenario's [[published]] figures of the plotted
quantity are drawn beside the results as dashed lines in the protocol's colour.`,
		Example: `  ftsim plot results
  ftsim plot results --out figures --format svg`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := readPlottable(args[0])
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(args[0], "plots")
			}
			var fs []string
			for f := range strings.SplitSeq(formats, ",") {
				f = strings.ToLower(strings.TrimSpace(f))
				if f != "png" && f != "svg" {
					return fmt.Errorf("--format: %q is not png or svg", f)
				}
				fs = append(fs, f)
			}
			_, err = drawPlots(cmd.OutOrStdout(), res, out, fs)
			return err
		},
	}
	c.Flags().StringVar(&out, "out", "", "directory of the figures (default: DIR/plots)")
	c.Flags().StringVar(&formats, "format", "png,svg", "comma-separated formats: png, svg")
	return c
}

// readPlottable reads the store dir for drawPlots, refusing one that holds
// no run: its figures would be empty, and "no figure to draw" would blame
// the varied keys.
func readPlottable(dir string) (*experiment.Results, error) {
	res, err := experiment.ReadStore(dir)
	if err != nil {
		return nil, err
	}
	if len(res.Records) == 0 {
		return nil, fmt.Errorf("%s: the store is empty: no run has finished yet (run or resume the sweep first)", dir)
	}
	return res, nil
}

// publishedSuffix names the series of published figures ("fast (published)"):
// drawn in the protocol's colour, as a reference line.
const publishedSuffix = " (published)"

// commKeys are the keys that change the communication/computation ratio.
var commKeys = []string{"network.bandwidth", "network.latency", "network.cpu_load", "network.message_cpu", "workload.cell_ops", "cluster.rate"}

// figure is one chart to draw: its file is named after base and the fixed
// settings of its slice.
type figure struct {
	base, fixed string
	chart       *plots.LineChart
}

// drawPlots draws every figure the store supports into dir, in each format,
// reports the files written to w and returns them.
func drawPlots(w io.Writer, res *experiment.Results, dir string, formats []string) ([]string, error) {
	figs := sweepFigures(res)
	if len(figs) == 0 {
		fmt.Fprintln(w, "no figure to draw: vary a numeric key (cluster.nodes, failures.node_mtbf, ...) with at least two values")
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("figures directory: %w", err)
	}
	var files []string
	for _, f := range figs {
		p, err := f.chart.Plot()
		if err != nil {
			fmt.Fprintf(w, "skipped %s: %v\n", plots.FileName(f.base, f.fixed, "*"), err)
			continue
		}
		for _, ext := range formats {
			path := filepath.Join(dir, plots.FileName(f.base, f.fixed, ext))
			if err := plots.Save(p, path); err != nil {
				return files, err
			}
			files = append(files, path)
			fmt.Fprintf(w, "wrote %s\n", path)
		}
	}
	return files, nil
}

// slice is the points of one figure: those sharing the settings of every
// varied key but the x key and the protocol (protocol.kind, or the
// [[protocols]] entry).
type slice struct {
	fixed string
	pts   []slicePoint
}

type slicePoint struct {
	x    float64
	sum  experiment.PointSummary
	info *experiment.PointInfo
}

// kind is the point's protocol kind, for its style; "" when the store does
// not say (written before kinds were stored), which styles by label.
func (p slicePoint) kind() string {
	if p.info == nil {
		return ""
	}
	return p.info.Kind
}

// sweepFigures returns the figures of a store, in the order of its varied
// keys.
func sweepFigures(res *experiment.Results) []figure {
	sums := experiment.SummarizePoints(res.Records, res.Meta.Varies)
	infos := map[string]*experiment.PointInfo{}
	for i := range res.Points {
		infos[res.Points[i].Point] = &res.Points[i]
	}
	var figs []figure
	for _, v := range res.Meta.Varies {
		// linked keys are drawn along the first one (cluster.nodes of a
		// weak-scaling sweep)
		keys := v.Keys()
		if v.Key == "protocol.kind" || v.Key == experiment.ProtocolKey || len(v.Values) < 2 || !numericValues(keys[0], sums) {
			continue
		}
		for _, sl := range slicesAlong(sums, infos, keys) {
			figs = append(figs, figuresAlong(keys[0], len(keys) > 1, sl)...)
		}
	}
	return figs
}

// slicesAlong groups the summaries by the settings other than keys and
// protocol.kind, in sweep order, with keys[0] on the x axis.
func slicesAlong(sums []experiment.PointSummary, infos map[string]*experiment.PointInfo, keys []string) []slice {
	key := keys[0]
	var out []slice
	idx := map[string]int{}
	for _, s := range sums {
		var rest []experiment.Setting
		x := math.NaN()
		for _, st := range s.Settings {
			switch {
			case st.Key == key:
				x, _ = numericValue(st.Value)
			case st.Key == "protocol.kind" || st.Key == experiment.ProtocolKey: // one series per protocol
			case slices.Contains(keys, st.Key): // linked to key
			default:
				rest = append(rest, st)
			}
		}
		info := infos[s.Point]
		if key == "failures.node_mtbf" && info != nil && info.NodeMTBFS > 0 {
			x = info.NodeMTBFS // as the scenario read it, whatever the value's spelling
		}
		id := experiment.PointID(rest)
		i, ok := idx[id]
		if !ok {
			i = len(out)
			idx[id] = i
			out = append(out, slice{fixed: id})
		}
		out[i].pts = append(out[i].pts, slicePoint{x: x, sum: s, info: info})
	}
	return out
}

// numericValues reports whether every value key takes in sums reads as a
// number.
func numericValues(key string, sums []experiment.PointSummary) bool {
	for _, s := range sums {
		for _, st := range s.Settings {
			if _, ok := numericValue(st.Value); st.Key == key && !ok {
				return false
			}
		}
	}
	return true
}

// numericValue reads a varied value as a number: a plain number, or a
// duration (seconds), size (bytes) or rate as the scenario units write them.
func numericValue(s string) (float64, bool) {
	s = strings.Trim(strings.TrimSpace(s), `"'`)
	if x, err := strconv.ParseFloat(s, 64); err == nil {
		return x, true
	}
	if d, err := scenarios.ParseDuration(s); err == nil {
		return d.Seconds(), true
	}
	if b, err := scenarios.ParseSize(s); err == nil {
		return float64(b), true
	}
	if r, err := scenarios.ParseRate(s); err == nil {
		return r.Float64(), true
	}
	return 0, false
}

func est(e experiment.Estimate) plots.Estimate {
	if e.N < 2 {
		return plots.Estimate{Mean: e.Mean, Low: math.NaN(), High: math.NaN()}
	}
	return plots.Estimate{Mean: e.Mean, Low: e.Low, High: e.High}
}

// exact is a figure measured once per point (fault-free), without interval.
func exact(x float64) plots.Estimate {
	return plots.Estimate{Mean: x, Low: math.NaN(), High: math.NaN()}
}

// figuresAlong returns the figures of one slice with key on the x axis;
// linked says other keys change with it. Then the makespan is drawn too,
// whatever the key: a weak-scaling sweep (cluster.nodes linked to the
// problem's size) reads there, its speedup figure assuming one problem.
func figuresAlong(key string, linked bool, sl slice) []figure {
	var out []figure
	add := func(name string, c *plots.LineChart) {
		if len(c.Series) == 0 {
			return
		}
		for i := range c.Series { // published figures are drawn as reference lines
			if strings.HasSuffix(c.Series[i].Name, publishedSuffix) {
				c.Series[i].Curve = true
			}
		}
		if sl.fixed != "" {
			c.Title += "\n" + strings.ReplaceAll(sl.fixed, ";", ", ") // a second line: long settings would be cut
		}
		out = append(out, figure{name, sl.fixed, c})
	}
	collect := func(y func(p slicePoint) (plots.Estimate, bool)) []plots.Point {
		var pts []plots.Point
		for _, p := range sl.pts {
			if e, ok := y(p); ok {
				pts = append(pts, plots.Point{Series: p.sum.Protocol, Kind: p.kind(), X: p.x, Y: e})
			}
		}
		return pts
	}
	// published adds the scenario's published values of metric beside the
	// points, one series per protocol
	published := func(pts []plots.Point, metric string) []plots.Point {
		for _, p := range sl.pts {
			if p.info == nil {
				continue
			}
			for _, pub := range p.info.Published {
				if pub.Metric == metric {
					pts = append(pts, plots.Point{Series: p.sum.Protocol + publishedSuffix, Kind: p.kind(), X: p.x, Y: exact(pub.Value)})
				}
			}
		}
		return pts
	}
	overhead := func(p slicePoint) (plots.Estimate, bool) { return exact(p.sum.Overhead), p.sum.Runs > 0 }
	makespan := func(p slicePoint) (plots.Estimate, bool) { return est(p.sum.Makespan), p.sum.Makespan.N > 0 }
	makespanVsKey := func() {
		add("makespan-vs-"+key, plots.Chart("Makespan vs "+key, key, "makespan (s)", collect(makespan)))
	}
	switch {
	case key == "cluster.nodes":
		add("overhead-vs-nodes", plots.OverheadVsNodes(collect(overhead)))
		pts := collect(makespan)
		seen := map[float64]bool{}
		for _, p := range sl.pts { // the fault-free time without protocol is the same for every protocol
			if !seen[p.x] && p.sum.Runs > 0 {
				seen[p.x] = true
				pts = append(pts, plots.Point{Series: "fault-free", X: p.x, Y: exact(p.sum.Baseline)})
			}
		}
		add("speedup", plots.Speedup(pts))
	case key == "failures.node_mtbf":
		add("makespan-vs-mtbf", plots.MakespanVsMTBF(collect(makespan), modelCurves(sl)))
		add("efficiency-vs-mtbf", plots.EfficiencyVsMTBF(collect(func(p slicePoint) (plots.Estimate, bool) {
			return est(p.sum.Efficiency), p.sum.Efficiency.N > 0
		})))
	case key == "detection.timeout":
		add("makespan-vs-timeout", plots.MakespanVsTimeout(collect(makespan), modelCurves(sl)))
	case key == "failures.group_mtbf":
		// 0 means no group failures, not a domain that never survives
		pts := slices.DeleteFunc(collect(makespan), func(p plots.Point) bool { return p.X <= 0 })
		add("makespan-vs-group-mtbf", plots.MakespanVsGroupMTBF(pts))
	case key == "workload.objects_per_node" || key == "workload.blocks_per_node":
		// the paper's restart time (mlog measure_restart) where the runs
		// measured it, else the recovery time per failure
		metric := "recovery_s_mean"
		pts := collect(func(p slicePoint) (plots.Estimate, bool) {
			if e, ok := p.sum.Metrics["restart_s"]; ok {
				metric = "restart_s"
				return est(e), e.N > 0
			}
			return est(p.sum.Recovery), p.sum.Recovery.N > 0
		})
		add("recovery-vs-objects", plots.RecoveryVsObjects(published(pts, metric)))
	case key == "protocol.every" || key == "protocol.every_progress":
		// every = 0 means no checkpoint: not a point of this curve
		pts := slices.DeleteFunc(collect(overhead), func(p plots.Point) bool { return p.X <= 0 })
		add("checkpoint-overhead-vs-every", plots.CheckpointOverheadVsInterval(published(pts, "overhead")))
	case slices.Contains(commKeys, key):
		var pts []plots.Point
		for _, p := range sl.pts {
			if p.info != nil && p.sum.Runs > 0 {
				pts = append(pts, plots.Point{Series: p.sum.Protocol, Kind: p.kind(), X: p.info.CommCompRatio(), Y: exact(p.sum.Overhead)})
			}
		}
		add("overhead-vs-comm-ratio_"+key, plots.OverheadVsCommRatio(pts))
	default:
		makespanVsKey()
		add("overhead-vs-"+key, plots.OverheadVs(key, collect(overhead)))
		return out
	}
	if linked {
		makespanVsKey()
	}
	return out
}

// modelCurves returns, for each protocol of the slice, the first makespan
// prediction its points carry (restart from scratch without protocol, the
// exact periodic-checkpoint expectation with cpr), as a curve over the
// varied key (the node MTBF, the heartbeat timeout), when at least two
// points have it.
func modelCurves(sl slice) []plots.Curve {
	var out []plots.Curve
	idx := map[string]int{}
	for _, p := range sl.pts {
		if p.info == nil || math.IsNaN(p.x) {
			continue
		}
		for _, pr := range p.info.Predictions {
			if !pr.Makespan {
				continue
			}
			name := p.sum.Protocol + " model: " + pr.Name
			i, ok := idx[p.sum.Protocol]
			if !ok {
				i = len(out)
				idx[p.sum.Protocol] = i
				out = append(out, plots.Curve{Name: name, Style: p.sum.Protocol, Kind: p.kind()})
			}
			if out[i].Name == name {
				out[i].X = append(out[i].X, p.x)
				out[i].Y = append(out[i].Y, pr.Value)
			}
			break
		}
	}
	for i := range out {
		sortCurve(&out[i])
	}
	return slices.DeleteFunc(out, func(c plots.Curve) bool { return len(c.X) < 2 })
}

// sortCurve orders a curve's points by x: values are varied in the order
// the user gave them, a line needs them sorted.
func sortCurve(c *plots.Curve) {
	idx := make([]int, len(c.X))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(c.X[a], c.X[b]) })
	x, y := make([]float64, len(idx)), make([]float64, len(idx))
	for i, j := range idx {
		x[i], y[i] = c.X[j], c.Y[j]
	}
	c.X, c.Y = x, y
}
