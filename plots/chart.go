// Package plots draws ftsim's figures with gonum/plot, as PNG or SVG, from
// plain tables of numbers: it knows nothing of scenarios or experiments, so
// any caller (the CLI, a notebook-style test) can feed it summaries.
//
// Every figure is a LineChart. Output is deterministic, the same data
// giving the same bytes, so figures can be committed and diffed.
package plots

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"ftsim/internal/atomicfile"
)

// Figure size and raster resolution: a 6×4 inch figure fits a paper column
// at 150 dpi and a slide.
const (
	Width  = 6 * vg.Inch
	Height = 4 * vg.Inch
	DPI    = 150
)

// autoLogSpan is the max/min ratio beyond which an axis turns logarithmic
// on its own: past two decades a linear axis squeezes the small values
// into a line.
const autoLogSpan = 100

// Series is one line of a chart. Low and High, when given, are the 95%
// confidence interval of each Y, drawn as error bars. A Curve is an
// analytical prediction: a dashed line without markers or error bars.
type Series struct {
	Name            string
	Style           string // key for KindStyle; empty: Name
	Kind            string // protocol kind of the series, if known
	X, Y, Low, High []float64
	Curve           bool
}

// LineChart is a figure of series against a common x axis. LogX and LogY
// force logarithmic axes; otherwise an axis is logarithmic when all its
// values are positive and span more than two decades, unless NoAutoLog.
type LineChart struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	NoAutoLog             bool
	Series                []Series
}

// SeriesStyle is how a series is drawn. Analytical curves take the colour
// and a dashed line.
type SeriesStyle struct {
	Color color.RGBA
	Shape draw.GlyphDrawer // markers of measured series; curves have none
	Dash  int              // index in curveDashes of the pattern of analytical curves
}

// Colours of the Okabe–Ito palette, readable by colour-blind readers.
var (
	black      = color.RGBA{0x00, 0x00, 0x00, 0xff}
	orange     = color.RGBA{0xe6, 0x9f, 0x00, 0xff}
	skyBlue    = color.RGBA{0x56, 0xb4, 0xe9, 0xff}
	green      = color.RGBA{0x00, 0x9e, 0x73, 0xff}
	yellow     = color.RGBA{0xf0, 0xe4, 0x42, 0xff}
	blue       = color.RGBA{0x00, 0x72, 0xb2, 0xff}
	vermillion = color.RGBA{0xd5, 0x5e, 0x00, 0xff}
	purple     = color.RGBA{0xcc, 0x79, 0xa7, 0xff}
	grey       = color.RGBA{0x99, 0x99, 0x99, 0xff}
	brown      = color.RGBA{0x8c, 0x56, 0x4b, 0xff} // outside the palette above, which had no colour left
)

// Style returns the colour and marker of a series name, the same in every
// figure so that a protocol is recognised at a glance. The protocols and
// the reference lines have fixed styles; a name is matched by its first
// word ("cpr (model)" is drawn as cpr). A labelled variant of a protocol
// ("cpr-buddy", "mlog-fast") keeps the protocol's colour and takes a marker
// chosen by its suffix; other names get a style chosen by a hash of the
// name, in a colour no protocol has. Both are stable from run to run.
func Style(name string) SeriesStyle {
	word := firstWord(name)
	if st, ok := fixedStyle(word); ok {
		return st
	}
	if i := strings.IndexByte(word, '-'); i > 0 {
		if st, ok := fixedStyle(word[:i]); ok {
			st.Shape = shapes[hash(word[i+1:])%uint32(len(shapes))]
			return st
		}
	}
	// not the colour of a protocol with a fixed style: "every-200", a label
	// of cpr, was drawn in mlog's vermillion, "ftpida" (abft) too
	colours := []color.RGBA{orange, skyBlue, yellow}
	k := hash(word)
	return SeriesStyle{Color: colours[k%uint32(len(colours))], Shape: shapes[(k/7)%uint32(len(shapes))]}
}

// firstWord returns the lower-case first word of a series name, the
// protocol of "cpr (model)" or "every-200 model: ...".
func firstWord(name string) string {
	word := strings.ToLower(strings.TrimSpace(name))
	if i := strings.IndexAny(word, " :,;("); i > 0 {
		word = word[:i]
	}
	return word
}

// KindStyle returns the style of a series named name whose protocol is of
// kind kind: a [[protocols]] entry's label need not name its kind
// ("every-200" is a cpr, "ftpida" an abft), and Style alone draws such a
// label in a colour no protocol has. A series named after its kind, or of
// no known kind, is drawn as Style draws it. Any other is drawn in its
// kind's colour, with a marker chosen by its label (the one Style gives a
// label written "kind-variant", else one other than the kind's own), and
// its analytical curves with a dash pattern other than the kind's: the
// same in every figure, and telling apart entries that share a kind (Plot
// also changes a marker or pattern that two series of a chart would
// share).
func KindStyle(name, kind string) SeriesStyle {
	word, kind := firstWord(name), firstWord(kind)
	if kind == "" || word == kind {
		return Style(name)
	}
	st := Style(kind)
	h := hash(word)
	if strings.HasPrefix(word, kind+"-") {
		st.Shape = Style(word).Shape // as drawn before kinds were known
	} else {
		others := slices.DeleteFunc(slices.Clone(shapes), func(g draw.GlyphDrawer) bool { return g == st.Shape })
		st.Shape = others[h%uint32(len(others))]
	}
	st.Dash = 1 + int(h%uint32(len(curveDashes)-1))
	return st
}

// shapes are the markers of the styles chosen by hashing, and the ones
// distinct tries when two series of a chart would look the same.
var shapes = []draw.GlyphDrawer{draw.CrossGlyph{}, draw.PlusGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{},
	draw.RingGlyph{}, draw.PyramidGlyph{}, draw.BoxGlyph{}, draw.CircleGlyph{}}

func fixedStyle(word string) (SeriesStyle, bool) {
	switch word {
	case "none":
		return SeriesStyle{Color: black, Shape: draw.CircleGlyph{}}, true
	case "cpr":
		return SeriesStyle{Color: blue, Shape: draw.BoxGlyph{}}, true
	case "mlog":
		return SeriesStyle{Color: vermillion, Shape: draw.PyramidGlyph{}}, true
	case "dps":
		return SeriesStyle{Color: green, Shape: draw.TriangleGlyph{}}, true
	case "abft":
		return SeriesStyle{Color: purple, Shape: draw.RingGlyph{}}, true
	case "replication":
		return SeriesStyle{Color: brown, Shape: draw.PlusGlyph{}}, true
	case "fault-free":
		return SeriesStyle{Color: grey, Shape: draw.SquareGlyph{}}, true
	case "ideal":
		return SeriesStyle{Color: grey, Shape: draw.CrossGlyph{}}, true
	}
	return SeriesStyle{}, false
}

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// distinct returns st, or st with the next marker (the next dash pattern,
// for an analytical curve) that no series of the chart uses yet when
// another series already looks like it (two labels whose names hash to the
// same marker).
func distinct(st SeriesStyle, curve bool, used map[SeriesStyle]bool) SeriesStyle {
	look := func() SeriesStyle { // what the reader sees
		if curve {
			return SeriesStyle{Color: st.Color, Dash: st.Dash}
		}
		return SeriesStyle{Color: st.Color, Shape: st.Shape}
	}
	start, n := slices.Index(shapes, st.Shape), len(shapes)
	if curve {
		start, n = st.Dash, len(curveDashes)
	}
	for j := 0; used[look()] && j < n; j++ {
		if curve {
			st.Dash = (start + 1 + j) % n
		} else {
			st.Shape = shapes[(start+1+j)%n]
		}
	}
	used[look()] = true
	return st
}

// curveDashes are the dash patterns of analytical curves: the first for a
// protocol kind's own, the others for labelled entries of the kind.
var curveDashes = [][]vg.Length{
	{vg.Points(5), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(1.5), vg.Points(3)},
	{vg.Points(12), vg.Points(4)},
}

// Plot builds the gonum plot. Points with a non-finite coordinate, and on a
// logarithmic axis points at or below zero, are left out (a lower error bar
// at or below zero is cut at the point); a chart with nothing left to draw,
// or whose values span more than the largest float, is an error.
func (c *LineChart) Plot() (*plot.Plot, error) {
	var xs, ys []float64
	for _, s := range c.Series {
		if len(s.Y) != len(s.X) || (s.Low != nil && len(s.Low) != len(s.X)) || (s.High != nil && len(s.High) != len(s.X)) {
			return nil, fmt.Errorf("plot %q: series %q has %d x, %d y, %d low and %d high values", c.Title, s.Name, len(s.X), len(s.Y), len(s.Low), len(s.High))
		}
		for i := range s.X {
			if finite(s.X[i]) && finite(s.Y[i]) {
				xs, ys = append(xs, s.X[i]), append(ys, s.Y[i])
			}
		}
	}
	logX := c.LogX || (!c.NoAutoLog && spansDecades(xs))
	logY := c.LogY || (!c.NoAutoLog && spansDecades(ys))

	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Legend.Top, p.Legend.Left = true, true // of the strip below the axes; see Render
	p.Add(plotter.NewGrid())
	p.X.Tick.Marker, p.Y.Tick.Marker = linearTicks{}, linearTicks{}
	if logX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	if logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	drawn := 0
	used := map[SeriesStyle]bool{}
	for _, s := range c.Series {
		pts := clean(s, logX, logY)
		if len(pts) == 0 {
			continue
		}
		drawn++
		key := s.Style
		if key == "" {
			key = s.Name
		}
		st := distinct(KindStyle(key, s.Kind), s.Curve, used)
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("plot %q: series %q: %w", c.Title, s.Name, err)
		}
		line.Color, line.Width = st.Color, vg.Points(1.2)
		if s.Curve {
			line.Dashes = curveDashes[st.Dash]
			p.Add(line)
			p.Legend.Add(s.Name, line)
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("plot %q: series %q: %w", c.Title, s.Name, err)
		}
		sc.Shape, sc.Color, sc.Radius = st.Shape, st.Color, vg.Points(3)
		p.Add(line, sc)
		if s.Low != nil || s.High != nil {
			eb, err := plotter.NewYErrorBars(pts)
			if err != nil {
				return nil, fmt.Errorf("plot %q: series %q: %w", c.Title, s.Name, err)
			}
			eb.Color = st.Color
			p.Add(eb)
		}
		p.Legend.Add(s.Name, line, sc)
	}
	if drawn == 0 {
		return nil, fmt.Errorf("plot %q: no point to draw", c.Title)
	}
	widenFlat(&p.X, logX)
	widenFlat(&p.Y, logY)
	// gonum's tick search never ends on a range wider than the largest float
	if !finite(p.X.Max-p.X.Min) || !finite(p.Y.Max-p.Y.Min) {
		return nil, fmt.Errorf("plot %q: the values span [%g, %g] × [%g, %g], wider than a float can measure", c.Title, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	return p, nil
}

// widenFlat gives an axis whose values are all equal a range to draw.
// gonum widens it by ±1, which panics in two cases: on a logarithmic axis
// a value up to 1 reaches zero or below, and on a linear one a value
// beyond 2⁵³ absorbs the ±1. Those are widened by a factor instead, kept
// within the positive floats: gonum resets an infinite bound to 0, and
// half the smallest one rounds to 0, where a log axis panics too.
func widenFlat(a *plot.Axis, log bool) {
	v := a.Min
	switch {
	case a.Min != a.Max:
	case log:
		a.Min, a.Max = max(v/2, math.SmallestNonzeroFloat64), min(v*2, math.MaxFloat64)
	case v-1 == v:
		d := math.Abs(v) / 2
		a.Min, a.Max = max(v-d, -math.MaxFloat64), min(v+d, math.MaxFloat64)
	}
}

// logTicks are the ticks of a logarithmic axis: a mark at each of 1…9 × 10ᵏ
// and a label at each power of ten, as gonum's LogTicks, but labelled
// without the rounding noise of computing them (1e-05, not
// 9.999999999999999e-06) and never fewer than two labels in the range. An
// axis spanning less than a decade (makespan vs MTBF has log axes whatever
// the range) would otherwise carry one label or none, and cannot be read:
// then 2 × and 5 × 10ᵏ are labelled too, then every mark, and for a range
// narrower than one mark to the next, linear ticks.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) { // gonum gives a log axis a positive, non-empty range
		return nil
	}
	type mark struct {
		v float64
		m int // mantissa, 1…9
	}
	var marks []mark
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for m := 1; m <= 9; m++ {
			marks = append(marks, mark{float64(m) * math.Pow(10, e), m})
		}
	}
	inRange := func(v float64) bool { return v >= lo*(1-1e-9) && v <= hi*(1+1e-9) }
	for _, labelled := range []func(m int) bool{
		func(m int) bool { return m == 1 },
		func(m int) bool { return m == 1 || m == 2 || m == 5 },
		func(int) bool { return true },
	} {
		n := 0
		for _, mk := range marks {
			if labelled(mk.m) && inRange(mk.v) {
				n++
			}
		}
		if n < 2 {
			continue
		}
		ts := make([]plot.Tick, len(marks))
		for i, mk := range marks {
			ts[i].Value = mk.v
			if labelled(mk.m) {
				ts[i].Label = strconv.FormatFloat(mk.v, 'g', 6, 64)
			}
		}
		return ts
	}
	return linearTicks{}.Ticks(lo, hi)
}

// linearTicks are gonum's ticks of a linear axis, labelled without trailing
// zeros: gonum writes two decimals on every label of a step of 25 ("125.00",
// "75.00", "25.00" nodes).
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ts {
		if strings.Contains(t.Label, ".") && !strings.ContainsAny(t.Label, "eE") {
			ts[i].Label = strings.TrimSuffix(strings.TrimRight(t.Label, "0"), ".")
		}
	}
	return ts
}

// points are a series' drawable points, with their error bars.
type points []point

type point struct{ x, y, lo, hi float64 }

// Len, XY and YError implement plotter.XYer and plotter.YErrorer.
func (ps points) Len() int                        { return len(ps) }
func (ps points) XY(i int) (float64, float64)     { return ps[i].x, ps[i].y }
func (ps points) YError(i int) (float64, float64) { return ps[i].y - ps[i].lo, ps[i].hi - ps[i].y }

// clean returns the drawable points of s.
func clean(s Series, logX, logY bool) points {
	var ps points
	for i := range s.X {
		x, y := s.X[i], s.Y[i]
		if !finite(x) || !finite(y) || (logX && x <= 0) || (logY && y <= 0) {
			continue
		}
		pt := point{x, y, y, y}
		if s.Low != nil && finite(s.Low[i]) && s.Low[i] <= y && (!logY || s.Low[i] > 0) {
			pt.lo = s.Low[i]
		}
		if s.High != nil && finite(s.High[i]) && s.High[i] >= y {
			pt.hi = s.High[i]
		}
		ps = append(ps, pt)
	}
	return ps
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// spansDecades reports whether xs are all positive and span more than
// autoLogSpan: a logarithmic axis cannot show zero or negative values, so
// those keep the axis linear.
func spansDecades(xs []float64) bool {
	if len(xs) == 0 {
		return false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		if x <= 0 {
			return false
		}
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return hi/lo > autoLogSpan
}

// Render draws p in format "png" or "svg", its legend in a strip below the
// axes, where it never hides data. SVG text refers to the fonts by name
// rather than embedding them, which keeps files small and identical from
// run to run.
func Render(p *plot.Plot, format string) ([]byte, error) {
	var wt io.WriterTo
	switch strings.ToLower(format) {
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(Width, Height), vgimg.UseDPI(DPI))
		drawBelow(p, draw.New(c))
		wt = vgimg.PngCanvas{Canvas: c}
	case "svg":
		c := vgsvg.New(Width, Height)
		drawBelow(p, draw.New(c))
		wt = c
	default:
		return nil, fmt.Errorf("plots: unknown format %q (want png or svg)", format)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// drawBelow draws p on c with its legend under the plot rather than over
// the data, as gonum/plot would.
func drawBelow(p *plot.Plot, c draw.Canvas) {
	leg := p.Legend
	h := leg.Rectangle(c).Size().Y
	if h == 0 {
		p.Draw(c)
		return
	}
	const pad = vg.Length(6)
	p.Legend = plot.NewLegend() // empty: drawn below instead
	defer func() { p.Legend = leg }()
	p.Draw(draw.Crop(c, 0, 0, h+pad, 0))
	strip := draw.Crop(c, pad, 0, 0, -(c.Max.Y - c.Min.Y - h - pad))
	leg.Top, leg.Left = true, true
	leg.Draw(strip)
}

// Save writes p to path, as PNG or SVG by the path's extension, through a
// temporary file so that an interrupted save leaves no half-written figure.
func Save(p *plot.Plot, path string) error {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	if ext == "" {
		return errors.New("plots: " + path + ": no extension (want .png or .svg)")
	}
	b, err := Render(p, ext)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return atomicfile.Write(path, b)
}
