package plots

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// twoProtocols returns points of none and cpr at xs, y = f(x) with a ±5%
// interval.
func twoProtocols(xs []float64, f func(proto string, x float64) float64) []Point {
	var pts []Point
	for _, proto := range []string{"none", "cpr"} {
		for _, x := range xs {
			y := f(proto, x)
			pts = append(pts, Point{Series: proto, X: x, Y: Estimate{y, 0.95 * y, 1.05 * y}})
		}
	}
	return pts
}

// figures builds one chart of each kind ftsim draws.
func figures() map[string]*LineChart {
	nodes := []float64{1, 2, 4, 8, 16}
	mtbf := []float64{3600, 36000, 360000, 3600000}
	makespan := func(proto string, m float64) float64 {
		if proto == "none" {
			return 100 * math.Exp(3600/m)
		}
		return 110 * (1 + 360/m)
	}
	model := []Curve{{Name: "cpr (model)", X: mtbf, Y: []float64{210, 121, 111.1, 110.01}}}
	return map[string]*LineChart{
		"overhead-vs-nodes": OverheadVsNodes(twoProtocols(nodes, func(p string, n float64) float64 {
			if p == "none" {
				return 0
			}
			return 0.01 * n
		})),
		"overhead-vs-comm-ratio": OverheadVsCommRatio(twoProtocols([]float64{0.01, 0.1, 0.5}, func(_ string, r float64) float64 { return r / 4 })),
		"checkpoint-overhead":    CheckpointOverheadVsInterval(twoProtocols([]float64{1, 5, 10, 50}, func(_ string, k float64) float64 { return 0.2 / k })),
		"recovery-vs-objects":    RecoveryVsObjects(twoProtocols([]float64{1, 2, 4, 8}, func(_ string, k float64) float64 { return 3 + 1/k })),
		"makespan-vs-mtbf":       MakespanVsMTBF(twoProtocols(mtbf, makespan), model),
		"makespan-vs-group-mtbf": MakespanVsGroupMTBF(twoProtocols(mtbf, makespan)),
		"makespan-vs-timeout": MakespanVsTimeout(twoProtocols([]float64{1.25, 1.3, 1.4}, func(_ string, t float64) float64 { return 1e5 * (1 + math.Exp(-(t-1)/0.02)*1e5) }),
			[]Curve{{Name: "cpr (model)", X: []float64{1.25, 1.3, 1.4}, Y: []float64{2e5, 1.1e5, 1e5}}}),
		"efficiency-vs-mtbf": EfficiencyVsMTBF(twoProtocols(mtbf, func(p string, m float64) float64 { return 100 / makespan(p, m) })),
		"speedup":            Speedup(twoProtocols(nodes, func(p string, n float64) float64 { return 100/n + 2 })),
		"overhead-vs-key":    OverheadVs("network.oversubscription", twoProtocols([]float64{1, 2, 4, 8}, func(_ string, o float64) float64 { return o / 100 })),
		"generic":            Chart("Makespan vs cores", "cores per node", "makespan (s)", twoProtocols([]float64{1, 2}, func(string, float64) float64 { return 5 })),
		"labelled": MakespanVsMTBF([]Point{
			{Series: "every-2", Kind: "cpr", X: 3600, Y: Estimate{200, 190, 210}}, {Series: "every-2", Kind: "cpr", X: 36000, Y: Estimate{120, 110, 130}},
			{Series: "rare", Kind: "cpr", X: 3600, Y: Estimate{180, 170, 190}}, {Series: "rare", Kind: "cpr", X: 36000, Y: Estimate{125, 120, 130}},
		}, []Curve{{Name: "every-2 model", Style: "every-2", Kind: "cpr", X: mtbf[:2], Y: []float64{190, 118}},
			{Name: "rare model", Style: "rare", Kind: "cpr", X: mtbf[:2], Y: []float64{170, 121}}}),
	}
}

// Every figure renders in both formats, and the same data give the same
// bytes.
func TestFiguresRenderDeterministically(t *testing.T) {
	first, second := figures(), figures()
	for name, c := range first {
		t.Run(name, func(t *testing.T) {
			for _, format := range []string{"png", "svg"} {
				a := render(t, c, format)
				b := render(t, second[name], format)
				if !bytes.Equal(a, b) {
					t.Fatalf("%s: two renderings of the same data differ", format)
				}
				switch format {
				case "png":
					if !bytes.HasPrefix(a, []byte("\x89PNG\r\n\x1a\n")) {
						t.Fatal("not a PNG")
					}
				case "svg":
					if !bytes.Contains(a, []byte("<svg")) || !bytes.Contains(a, []byte(xmlEscape(c.Title))) {
						t.Fatalf("SVG lacks the title %q", c.Title)
					}
				}
			}
		})
	}
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func render(t *testing.T, c *LineChart, format string) []byte {
	t.Helper()
	p, err := c.Plot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Render(p, format)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func isLog(s plot.Normalizer) bool {
	_, ok := s.(plot.LogScale)
	return ok
}

// An axis turns logarithmic when its values span more than two decades,
// unless told otherwise; values at or below zero keep it linear.
func TestLogAxes(t *testing.T) {
	cases := []struct {
		name       string
		x, y       []float64
		logX, logY bool // forced
		noAuto     bool
		wantX      bool
		wantY      bool
	}{
		{"narrow", []float64{1, 2, 50}, []float64{3, 4, 5}, false, false, false, false, false},
		{"x spans decades", []float64{1, 10, 1000}, []float64{3, 4, 5}, false, false, false, true, false},
		{"both span decades", []float64{1e3, 1e6}, []float64{0.001, 1}, false, false, false, true, true},
		{"a zero keeps it linear", []float64{0, 10, 1000}, []float64{3, 4, 5}, false, false, false, false, false},
		{"forced", []float64{1, 2}, []float64{3, 4}, true, true, false, true, true},
		{"auto off", []float64{1, 1e4}, []float64{1, 1e4}, false, false, true, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := &LineChart{Title: c.name, LogX: c.logX, LogY: c.logY, NoAutoLog: c.noAuto,
				Series: []Series{{Name: "cpr", X: c.x, Y: c.y}}}
			p, err := ch.Plot()
			if err != nil {
				t.Fatal(err)
			}
			if isLog(p.X.Scale) != c.wantX || isLog(p.Y.Scale) != c.wantY {
				t.Fatalf("log x %v, log y %v; want %v, %v", isLog(p.X.Scale), isLog(p.Y.Scale), c.wantX, c.wantY)
			}
			if _, err := Render(p, "png"); err != nil {
				t.Fatal(err)
			}
		})
	}
	// a forced log axis leaves out what it cannot show rather than panic
	ch := &LineChart{Title: "zeros", LogY: true, Series: []Series{{Name: "none", X: []float64{1, 2, 3}, Y: []float64{0, 1, 2},
		Low: []float64{-1, 0, 1}, High: []float64{1, 2, 3}}}}
	if _, err := Render(mustPlot(t, ch), "svg"); err != nil {
		t.Fatal(err)
	}
	if p := mustPlot(t, figures()["makespan-vs-mtbf"]); !isLog(p.X.Scale) || !isLog(p.Y.Scale) {
		t.Fatal("makespan vs MTBF: want log axes (MTBFs and makespans under failures span decades)")
	}
}

func mustPlot(t *testing.T, c *LineChart) *plot.Plot {
	t.Helper()
	p, err := c.Plot()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A protocol keeps its colour and marker in every figure.
func TestStyle(t *testing.T) {
	if Style("cpr") != Style("cpr (model)") || Style("cpr") != Style("CPR: periodic") {
		t.Fatal("cpr and its model curve are drawn differently")
	}
	seen := map[[4]uint8]string{}
	for _, name := range []string{"none", "cpr", "mlog", "dps", "abft", "replication", "fault-free"} {
		c := Style(name).Color
		k := [4]uint8{c.R, c.G, c.B, c.A}
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s share a colour", name, other)
		}
		seen[k] = name
	}
	if Style("newproto") != Style("newproto") {
		t.Fatal("an unknown name's style is not stable")
	}
	// labelled variants keep their protocol's colour
	for _, c := range [][2]string{{"cpr-buddy", "cpr"}, {"mlog-fast", "mlog"}, {"dps-k8", "dps"}} {
		if Style(c[0]).Color != Style(c[1]).Color {
			t.Errorf("%s is not drawn in %s's colour", c[0], c[1])
		}
	}
	// two series of a chart never look the same
	used := map[SeriesStyle]bool{}
	a := distinct(Style("cpr"), false, used)
	b := distinct(Style("cpr"), false, used)
	if a == b || a.Color != b.Color {
		t.Fatalf("same-looking series: %+v and %+v", a, b)
	}
}

// A labelled protocol entry is drawn in its kind's colour whatever its
// label, with a marker and a curve dash of its own, the same in every
// figure; entries sharing a kind stay apart within a chart even when their
// labels hash alike.
func TestKindStyle(t *testing.T) {
	cpr := Style("cpr")
	for _, c := range [][2]string{{"every-200", "cpr"}, {"every-200 model: daly", "cpr"}, {"ftpida", "abft"}, {"cpr-pfs (published)", "cpr"}, {"x", "mpift-ia"}} {
		if st, want := KindStyle(c[0], c[1]), Style(c[1]); st.Color != want.Color || st.Shape == want.Shape || st.Dash == want.Dash {
			t.Errorf("%s of kind %s: %+v, want %s's colour with another marker and dash", c[0], c[1], st, c[1])
		}
	}
	if Style("every-200").Color == cpr.Color {
		t.Error("Style alone ties every-200 to cpr: this test no longer shows why kinds are needed")
	}
	if KindStyle("cpr", "cpr") != cpr || KindStyle("cpr (model)", "cpr") != cpr || KindStyle("every-200", "") != Style("every-200") {
		t.Error("a series named after its kind, or without a kind, is not drawn as Style draws it")
	}
	if st := KindStyle("cpr-buddy", "cpr"); st.Color != cpr.Color || st.Shape != Style("cpr-buddy").Shape {
		t.Error("a label written kind-variant changed marker")
	}
	if KindStyle("every-200", "cpr") != KindStyle("every-200 (published)", "cpr") {
		t.Error("an entry's published values are drawn in another style")
	}
	// "every-2" and "rare" hash to the same marker and the same dash
	for _, curve := range []bool{false, true} {
		used := map[SeriesStyle]bool{}
		a := distinct(KindStyle("every-2", "cpr"), curve, used)
		b := distinct(KindStyle("rare", "cpr"), curve, used)
		if a.Color != b.Color || (!curve && a.Shape == b.Shape) || (curve && a.Dash == b.Dash) {
			t.Errorf("curve %v: same-looking entries of one kind: %+v and %+v", curve, a, b)
		}
	}
	// the kind reaches the series of every figure
	pts := []Point{{Series: "every-200", Kind: "cpr", X: 1, Y: Estimate{2, 1, 3}}, {Series: "every-200", Kind: "cpr", X: 2, Y: Estimate{1, 1, 1}}}
	for _, c := range []*LineChart{OverheadVsNodes(pts), Speedup(pts), MakespanVsMTBF(nil, []Curve{{Name: "every-200 model", Kind: "cpr", X: []float64{1, 2}, Y: []float64{1, 2}}})} {
		if c.Series[0].Kind != "cpr" {
			t.Errorf("%s: series %+v lost its kind", c.Title, c.Series[0])
		}
	}
}

func TestSpeedupValues(t *testing.T) {
	pts := []Point{
		{Series: "none", X: 1, Y: Estimate{100, 90, 110}}, {Series: "none", X: 4, Y: Estimate{25, 20, 50}},
		{Series: "cpr", X: 2, Y: Estimate{60, 60, 60}}, {Series: "cpr", X: 4, Y: Estimate{40, 40, 40}},
	}
	c := Speedup(pts)
	if len(c.Series) != 3 || c.Series[2].Name != "ideal" || !c.Series[2].Curve {
		t.Fatalf("series %+v", c.Series)
	}
	none, cpr := c.Series[0], c.Series[1]
	if none.Y[0] != 1 || none.Y[1] != 4 || none.Low[1] != 2 || none.High[1] != 5 {
		t.Fatalf("none: %+v", none)
	}
	if cpr.Y[0] != 2 || cpr.Y[1] != 3 || !strings.Contains(c.YLabel, "N₀") {
		t.Fatalf("cpr from N₀ = 2: %+v, label %q", cpr, c.YLabel)
	}
	// with a fault-free series, every series is measured against it
	pts = append(pts, Point{Series: "fault-free", X: 2, Y: Estimate{50, 50, 50}}, Point{Series: "fault-free", X: 4, Y: Estimate{25, 25, 25}})
	c = Speedup(pts)
	if none, cpr, ff := c.Series[0], c.Series[1], c.Series[2]; none.Y[0] != 1 || none.Y[1] != 4 || cpr.Y[0] != 100.0/60 || cpr.Y[1] != 2.5 || ff.Y[1] != 4 {
		t.Fatalf("against the fault-free run: %+v", c.Series)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name string
		c    *LineChart
		want string
	}{
		{"lengths", &LineChart{Title: "t", Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1}}}}, "1 y"},
		{"empty", &LineChart{Title: "t"}, "no point"},
		{"all NaN", &LineChart{Title: "t", Series: []Series{{Name: "a", X: []float64{1}, Y: []float64{math.NaN()}}}}, "no point"},
	}
	for _, c := range cases {
		if _, err := c.c.Plot(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	p := mustPlot(t, figures()["speedup"])
	dir := t.TempDir()
	for _, f := range []string{"x.png", "x.svg"} {
		if err := Save(p, filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	for _, f := range []string{"x.pdf", "x"} {
		if err := Save(p, filepath.Join(dir, f)); err == nil {
			t.Errorf("%s: no error", f)
		}
	}
	if got := FileName("overhead-vs-nodes", "failures.node_mtbf=5y;protocol.tier=\"pfs\"", "svg"); got != "overhead-vs-nodes_failures.node_mtbf=5y_protocol.tier=_pfs_.svg" {
		t.Fatalf("file name %q", got)
	}
}

// OverheadVs draws a fraction in percent against the key's values.
func TestOverheadVsKey(t *testing.T) {
	c := figures()["overhead-vs-key"]
	if c.XLabel != "network.oversubscription" || c.YLabel != "overhead (%)" || len(c.Series) != 2 {
		t.Fatalf("chart %q: x %q, y %q, %d series", c.Title, c.XLabel, c.YLabel, len(c.Series))
	}
	for _, s := range c.Series {
		if !slices.Equal(s.X, []float64{1, 2, 4, 8}) || !slices.Equal(s.Y, []float64{1, 2, 4, 8}) {
			t.Errorf("%s: x %v, y %v; want the fractions x/100 in percent", s.Name, s.X, s.Y)
		}
	}
}
