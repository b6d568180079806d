package plots

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// A logarithmic axis labels at least two values inside its range, however
// narrow: an axis from 4 to 16 h or from 1200 to 3600 s (makespan vs MTBF
// always has log axes) used to carry one label or none.
func TestLogTicksLabelTheRange(t *testing.T) {
	for _, r := range [][2]float64{{4, 16}, {1200, 3600}, {124, 1975}, {0.05, 0.5}, {0.001, 1}, {3e-7, 2e-6}, {1, 1e6}, {7, 7.5}} {
		t.Run(fmt.Sprint(r), func(t *testing.T) {
			var labels []string
			for _, tk := range (logTicks{}).Ticks(r[0], r[1]) {
				if tk.Label != "" && tk.Value >= r[0]*(1-1e-9) && tk.Value <= r[1]*(1+1e-9) {
					labels = append(labels, tk.Label)
				}
			}
			if len(labels) < 2 {
				t.Fatalf("labels in range: %q, want at least 2", labels)
			}
		})
	}
}

// A logarithmic axis whose values are all equal renders: gonum widened it
// by ±1, to zero or below for a value up to 1, and panicked drawing it.
func TestLogAxisOfOneValue(t *testing.T) {
	for _, ch := range []*LineChart{
		{Title: "one point", LogX: true, LogY: true, Series: []Series{{Name: "cpr", X: []float64{0.5}, Y: []float64{0.5}}}},
		{Title: "flat", LogY: true, Series: []Series{{Name: "cpr", X: []float64{1, 2}, Y: []float64{1, 1}}}},
		MakespanVsMTBF([]Point{{Series: "cpr", X: 1, Y: Estimate{0.8, 0.7, 0.9}}}, nil),
	} {
		t.Run(ch.Title, func(t *testing.T) {
			for _, f := range []string{"png", "svg"} {
				if _, err := Render(mustPlot(t, ch), f); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// Extreme values render or give an error; found by FuzzLineChart. An axis
// whose values are all equal beyond 2⁵³ absorbed gonum's ±1 widening and
// panicked ("illegal range"); a log axis of one value near the largest
// float was widened to +Inf, which gonum reset to 0, and panicked, as did
// one of the smallest float, whose half rounded to 0; values
// spanning more than the largest float sent gonum's tick search into an
// endless loop.
func TestExtremeValues(t *testing.T) {
	one := func(x, y float64, log bool) *LineChart {
		return &LineChart{Title: "extreme", LogX: log, LogY: log, Series: []Series{{Name: "cpr", X: []float64{x}, Y: []float64{y}}}}
	}
	for _, tc := range []struct {
		name    string
		c       *LineChart
		wantErr string
	}{
		{"flat linear 1e300", one(1e300, -1e300, false), ""},
		{"flat linear max", one(math.MaxFloat64, -math.MaxFloat64, false), ""},
		{"flat log 1e308", one(1e308, 1e308, true), ""},
		{"flat log smallest float", one(5e-324, 5e-324, true), ""},
		{"wider than a float", &LineChart{Title: "wide", Series: []Series{{Name: "cpr", X: []float64{-1e308, 1e308}, Y: []float64{1, 2}}}},
			`plot "wide": the values span [-1e+308, 1e+308] × [1, 2], wider than a float can measure`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.c.Plot()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Render(p, "svg"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The MTBF unit suits the curves when no point is there (no run finished):
// it was seconds whatever the MTBFs.
func TestMakespanVsMTBFUnitWithoutPoints(t *testing.T) {
	c := MakespanVsMTBF(nil, []Curve{{Name: "none model", X: []float64{1200, 3600}, Y: []float64{5e5, 5e3}}})
	if c.XLabel != "node MTBF (min)" {
		t.Fatalf("x label %q, want node MTBF (min)", c.XLabel)
	}
	if x := c.Series[0].X; x[0] != 20 || x[1] != 60 {
		t.Fatalf("x %v, want [20 60]", x)
	}
}

// A name without a fixed style (a label such as "every-200" or "ftpida")
// is not drawn in the colour of a protocol that has one, where a reader
// would take it for that protocol.
func TestHashedStyleAvoidsProtocolColours(t *testing.T) {
	fixed := map[string]bool{}
	for _, p := range []string{"none", "cpr", "mlog", "dps", "abft", "replication", "fault-free", "ideal"} {
		fixed[fmt.Sprint(Style(p).Color)] = true
	}
	for _, name := range []string{"ftpida", "every-100", "every-200", "every-500", "newproto", "a", "b", "c", "d", "e", "f", "g"} {
		if c := fmt.Sprint(Style(name).Color); fixed[c] {
			t.Errorf("%s drawn in a protocol's colour %s", name, c)
		}
	}
}

// Linear tick labels carry no trailing zeros: a step of 25 was labelled
// "25.00", "75.00", "125.00".
func TestLinearTickLabels(t *testing.T) {
	for _, r := range [][2]float64{{4, 128}, {0, 1}, {0.02, 0.33}, {-3, 3}, {1e6, 5e6}} {
		for _, tk := range (linearTicks{}).Ticks(r[0], r[1]) {
			if l := tk.Label; l != "" && strings.Contains(l, ".") && !strings.ContainsAny(l, "eE") && (strings.HasSuffix(l, "0") || strings.HasSuffix(l, ".")) {
				t.Errorf("range %v: label %q", r, l)
			}
		}
	}
}

// FuzzLineChart checks that a chart of any values, however extreme (a
// hand-edited store, a run that diverged), either renders or says why it
// cannot; it never panics. A series has three points with error bars; the
// flags force the log axes, add a second series or draw a curve.
func FuzzLineChart(f *testing.F) {
	f.Add(1.0, 2.0, 3.0, 10.0, 20.0, 15.0, 0.9, 1.1, byte(0))
	f.Add(1e-300, 1e300, 1.0, -1e308, 1e308, 0.0, 0.0, 0.0, byte(3))
	f.Add(0.5, 0.5, 0.5, 0.5, 0.5, 0.5, -1.0, 2.0, byte(7))
	f.Add(5e-324, 1.0, 2.0, 5e-324, 4e-324, 1e-323, 0.0, 1.0, byte(15))
	f.Fuzz(func(t *testing.T, x0, x1, x2, y0, y1, y2, lo, hi float64, flags byte) {
		xs, ys := []float64{x0, x1, x2}, []float64{y0, y1, y2}
		low := []float64{y0 - lo, y1 * lo, lo}
		high := []float64{y0 + hi, y1 * hi, hi}
		c := &LineChart{Title: "fuzz", XLabel: "x", YLabel: "y", LogX: flags&1 != 0, LogY: flags&2 != 0,
			Series: []Series{{Name: "cpr", Kind: "cpr", X: xs, Y: ys, Low: low, High: high}}}
		if flags&4 != 0 {
			c.Series = append(c.Series, Series{Name: "mlog model", Kind: "mlog", X: ys, Y: xs, Curve: true})
		}
		if flags&8 != 0 {
			c.Series = append(c.Series, Series{Name: "dps", X: []float64{lo}, Y: []float64{hi}})
		}
		p, err := c.Plot()
		if err != nil {
			return
		}
		if _, err := Render(p, "svg"); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
	})
}
