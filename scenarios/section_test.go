package scenarios

import (
	"errors"
	"reflect"
	"sync"
	"testing"
)

// lifeParams stands for a workload package's parameter struct.
type lifeParams struct {
	Width    int64             `toml:"width"`
	CellOps  float64           `toml:"cell_ops"`
	Window   []float64         `toml:"window"`
	Boundary string            `toml:"boundary"`
	Offset   []int64           `toml:"offset" ftsim:"signed"`
	Dims     []int             `toml:"dims"`
	StepCost Duration          `toml:"step_cost"`
	Count    uint32            `toml:"count"`
	Shift    int               `toml:"shift" ftsim:"signed"`
	Pattern  *patternParams    `toml:"pattern"`
	Layers   []layerParams     `toml:"layers"`
	Extra    map[string]string `toml:"extra"`
	Hidden   int               `toml:"-"`
	Tagless  int
}

type patternParams struct {
	File string `toml:"file"`
	Kind string `toml:"kind"`
}

type layerParams struct {
	Name  string `toml:"name"`
	Depth int    `toml:"depth"`
}

func TestSectionDecode(t *testing.T) {
	const file = `[workload]
kind = "life"
width = 3
offset = [-1, 2]
step_cost = "2ms"
pattern = {file = "glider.rle", kind = "rle"}
extra = {a = "b"}
Tagless = 7
`
	defaults := []int64{9, 9}
	for _, tc := range []struct {
		name      string
		overrides []string
		want      lifeParams
	}{
		{"file only", nil, lifeParams{Width: 3, Boundary: "torus", Offset: []int64{-1, 2}, StepCost: 2 * Millisecond, Count: 5,
			Pattern: &patternParams{File: "glider.rle", Kind: "rle"}, Extra: map[string]string{"a": "b"}, Tagless: 7}},
		{"overrides in order", []string{"workload.width=5", "workload.boundary=plane", "workload.width=6", `workload.layers=[{name="a", depth=2}]`},
			lifeParams{Width: 6, Boundary: "plane", Offset: []int64{-1, 2}, StepCost: 2 * Millisecond, Count: 5,
				Pattern: &patternParams{File: "glider.rle", Kind: "rle"}, Extra: map[string]string{"a": "b"}, Tagless: 7,
				Layers: []layerParams{{Name: "a", Depth: 2}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("x.toml", []byte(file), tc.overrides)
			if err != nil {
				t.Fatal(err)
			}
			p := lifeParams{Boundary: "torus", Offset: defaults, Count: 5, Hidden: 1}
			if err := s.Workload.Decode(&p); err != nil {
				t.Fatal(err)
			}
			tc.want.Hidden = 1
			if !reflect.DeepEqual(p, tc.want) {
				t.Errorf("got  %+v\nwant %+v", p, tc.want)
			}
			if !reflect.DeepEqual(defaults, []int64{9, 9}) {
				t.Errorf("Decode wrote into the caller's default slice: %v", defaults)
			}
		})
	}
}

func TestSectionDefaultsUntouched(t *testing.T) {
	s, err := Parse("x.toml", []byte("[workload]\nkind = \"life\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := lifeParams{Width: 64, Boundary: "torus", Offset: []int64{1}, StepCost: Second}
	want := p
	if err := s.Workload.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got %+v, want the defaults %+v", p, want)
	}
	if s.Workload.Has("width") || !s.Workload.Has("kind") || len(s.Workload.Keys()) != 0 {
		t.Errorf("Has/Keys = %v %v %v", s.Workload.Has("width"), s.Workload.Has("kind"), s.Workload.Keys())
	}
	if d := Default(); d.Workload.Has("kind") {
		t.Error("default kind reported as set")
	}
}

func TestSectionDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		text      string
		overrides []string
		want      string
	}{
		{"unknown key", "[workload]\nkind = \"life\"\nwidth = 3\n\nwidht = 4\n", nil,
			`x.toml:5: unknown key "workload.widht" (did you mean "width"?)`},
		{"wrong case", "[workload]\nkind = \"life\"\nWidth = 3\n", nil,
			`x.toml:3: unknown key "workload.Width" (did you mean "width"?)`},
		{"negative int", "[workload]\nwidth = -3\n", nil,
			`x.toml:2: workload.width: must be ≥ 0, got -3`},
		{"negative in slice", "[workload]\ndims = [2,\n -2]\n", nil,
			`x.toml:2: workload.dims: must be ≥ 0, got -2`},
		{"negative into unsigned", "[workload]\ncount = -1\n", nil,
			`x.toml:2: workload.count: must be ≥ 0, got -1`},
		{"negative duration", "[workload]\nstep_cost = \"-1s\"\n", nil,
			`x.toml:2: workload.step_cost: negative duration "-1s"`},
		// NaN and inf passed the packages' "x < 0" checks and ran.
		{"nan float", "[workload]\ncell_ops = nan\n", nil,
			`x.toml:2: workload.cell_ops: must be finite, got NaN`},
		{"inf in float slice", "[workload]\nwindow = [0, -inf]\n", nil,
			`x.toml:2: workload.window: must be finite, got -Inf`},
		{"override inf", "", []string{"workload.cell_ops=inf"},
			`--set workload.cell_ops: must be finite, got +Inf`},
		{"type", "[workload]\nboundary = 3\n", nil,
			`x.toml:2: workload.boundary: want a string, got an integer`},
		{"array element type", "[workload]\noffset = [1, \"a\"]\n", nil,
			`x.toml:2: workload.offset: want an array of integers, but element 1 is a string`},
		{"array element type float", "[workload]\noffset = [1, 2.5]\n", nil,
			`x.toml:2: workload.offset: want an array of integers, but element 1 is a float`},
		{"nested unknown", "[workload]\n[workload.pattern]\nfile = \"x\"\nfiel = \"y\"\n", nil,
			`x.toml:4: unknown key "workload.pattern.fiel" (did you mean "file"?)`},
		{"hidden field", "[workload]\nHidden = 3\n", nil,
			`x.toml:2: unknown key "workload.Hidden"`},
		{"tagless wrong case", "[workload]\ntagless = 3\n", nil,
			`x.toml:2: unknown key "workload.tagless" (did you mean "Tagless"?)`},
		{"array of tables element", "[workload]\nkind = \"life\"\n[[workload.layers]]\nname = \"a\"\n[[workload.layers]]\nname = \"b\"\ndepht = 3\n", nil,
			`x.toml:7: unknown key "workload.layers[1].depht" (did you mean "depth"?)`},
		{"repeated key in array of tables", "[workload]\n\n[[workload.layers]]\nname = \"a\"\ndepth = -1\n[[workload.layers]]\nname = \"b\"\ndepth = 2\n", nil,
			`x.toml:3: workload.layers[0].depth: must be ≥ 0, got -1`},
		{"inline array element", "[workload]\nlayers = [\n {name = \"a\"},\n {name = \"b\", depth = -1},\n]\n", nil,
			`x.toml:4: workload.layers[1].depth: must be ≥ 0, got -1`},
		{"strings in array", "[workload]\nlayers = [ # a ] comment\n  {name = \"\"\"multi\nline ] },\"\"\", depth = 1}, {name = \"\\\"]\"},\n  {name = 'x,]', depth = -1},\n]\n", nil,
			`x.toml:5: workload.layers[2].depth: must be ≥ 0, got -1`},
		{"override", "[workload]\nwidth = 3\n", []string{"workload.wdth=4"},
			`--set workload.wdth: unknown key "workload.wdth" (did you mean "width"?)`},
		{"override negative", "", []string{"workload.width=-4"},
			`--set workload.width: must be ≥ 0, got -4`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("x.toml", []byte(tc.text), tc.overrides)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			var p lifeParams
			err = s.Workload.Decode(&p)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode error %T %v is not an *Error", err, err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tc.want)
			}
		})
	}
}

func TestSectionSigned(t *testing.T) {
	s, err := Parse("x.toml", []byte("[protocol]\nkind = \"cpr\"\nshift = -2\noffset = [-1, -2]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var p lifeParams
	if err := s.Protocol.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p.Shift != -2 || !reflect.DeepEqual(p.Offset, []int64{-1, -2}) {
		t.Errorf("got %+v", p)
	}
}

func TestSectionDecodeNeedsStructPointer(t *testing.T) {
	s := Default()
	var n int
	for _, v := range []any{nil, 3, &n, lifeParams{}, (*lifeParams)(nil)} {
		if err := s.Workload.Decode(v); err == nil {
			t.Errorf("Decode(%T) = nil, want an error", v)
		}
	}
}

func TestSectionErrorf(t *testing.T) {
	s, err := Parse("x.toml", []byte("[workload]\nkind = \"life\"\n\nwidth = 3\n"), []string{"workload.boundary=plane"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, msg, want string }{
		{"width", "bad", "x.toml:4: workload.width: bad"},
		{"boundary", "bad", "--set workload.boundary: bad"},
		{"kind", "bad", "x.toml:2: workload.kind: bad"},
		// A key the file does not set: the section's line, so that the
		// error still names the file (it used to print no location).
		{"absent", "bad", "x.toml:2: workload.absent: bad"},
		// The section as a whole, as experiment reports a workload that
		// cannot be built: located at the key the message starts with
		// (it used to print "workload.: workload.width: bad").
		{"", "workload.width: bad", "x.toml:4: workload.width: bad"},
		{"", "workload.width and height must be small", "x.toml:4: workload.width and height must be small"},
		{"", "workload.boundary: bad", "--set workload.boundary: bad"},
		{"", "workload: bad", "x.toml:2: workload: bad"},
		{"", "workload.absent must be set", "x.toml:2: workload.absent must be set"},
		{"", "held-karp: bad", "x.toml:2: workload: held-karp: bad"},
	} {
		if got := s.Workload.Errorf(tc.key, "%s", tc.msg).Error(); got != tc.want {
			t.Errorf("Errorf(%q, %q) = %q, want %q", tc.key, tc.msg, got, tc.want)
		}
	}
}

// TestSectionConcurrentDecode decodes the sections of clones of one
// scenario from many goroutines, as parallel replications do; run with
// -race to check that nothing is shared mutably.
func TestSectionConcurrentDecode(t *testing.T) {
	s, err := Parse("x.toml", []byte("[workload]\nkind = \"life\"\nwidth = 3\n"), []string{"workload.width=4"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			c := s
			if i%2 == 0 {
				c = s.Clone()
			}
			var p lifeParams
			errs[i] = c.Workload.Decode(&p)
			if errs[i] == nil && p.Width != 4 {
				errs[i] = errors.New("wrong width")
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
