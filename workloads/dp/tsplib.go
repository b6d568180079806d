package dp

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MaxTSPDimension bounds DIMENSION. Nothing is allocated from the declared
// dimension alone (data are collected as read and counted at the end), so
// the bound only keeps entry counts far from overflow.
const MaxTSPDimension = 1 << 24

// section is the data section being read.
type section uint8

const (
	noSection section = iota
	coordSection
	weightSection
	displaySection
)

// tsplibParser holds the state of ParseTSPLIB.
type tsplibParser struct {
	lr   *lineReader
	t    TSP
	seen map[string]int // keyword -> line, to reject repeats

	sec      section
	secLine  int
	coordIDs []int
	coordX   []float64
	coordY   []float64
	weights  []int32
	expected int      // entries the weight section must hold
	comments []string // COMMENT values, for TSP.Comment
}

// ParseTSPLIB reads a symmetric TSP in TSPLIB format. Supported: NAME, TYPE
// (TSP only; may be omitted), COMMENT (repeatable), DIMENSION,
// EDGE_WEIGHT_TYPE EUC_2D, GEO or EXPLICIT, EDGE_WEIGHT_FORMAT FULL_MATRIX,
// UPPER_ROW, LOWER_ROW, UPPER_DIAG_ROW, LOWER_DIAG_ROW (or FUNCTION for
// coordinate types), NODE_COORD_TYPE TWOD_COORDS/NO_COORDS,
// DISPLAY_DATA_TYPE, NODE_COORD_SECTION, EDGE_WEIGHT_SECTION (numbers
// wrapped over lines in any way), DISPLAY_DATA_SECTION (skipped) and EOF
// (the rest of the input is ignored). "KEY : value" spacing and keyword case
// are free. Lines starting with '#' are skipped: TSPLIB has no comment
// lines, but the annotated copies in shared/testdata use them. Errors name
// name:line: unknown keywords and sections, repeated keywords, unsupported
// types or formats, sections before DIMENSION, non-numeric or out-of-range
// data, wrong counts of coordinates or matrix entries, node numbers outside
// 1..DIMENSION or repeated, missing DIMENSION, EDGE_WEIGHT_TYPE or the data
// the weight type needs.
func ParseTSPLIB(r io.Reader, name string) (*TSP, error) {
	p := &tsplibParser{lr: newLineReader(r, name), seen: map[string]int{}}
	for {
		text, ok, err := p.lr.nextData()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if p.sec != noSection && isNumberStart(text[0]) {
			if err := p.data(text); err != nil {
				return nil, err
			}
			continue
		}
		if p.sec == noSection && isNumberStart(text[0]) {
			return nil, p.lr.errorf("numbers outside a data section: %q", clip(text))
		}
		if err := p.endSection(); err != nil {
			return nil, err
		}
		done, err := p.keyword(text)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
	}
	if err := p.endSection(); err != nil {
		return nil, err
	}
	return p.finish()
}

func isNumberStart(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.'
}

// keyword handles a specification line or a section header; done is true
// at EOF.
func (p *tsplibParser) keyword(text string) (done bool, err error) {
	key, val, hasColon := strings.Cut(text, ":")
	key, val = strings.ToUpper(strings.TrimSpace(key)), strings.TrimSpace(val)
	if !hasColon {
		fields := strings.Fields(text)
		key = strings.ToUpper(fields[0])
		if len(fields) > 1 {
			return false, p.lr.errorf("expected \"KEYWORD: value\" or a section name, got %q", clip(text))
		}
	}
	if l, dup := p.seen[key]; dup && key != "COMMENT" {
		return false, p.lr.errorf("%s repeated (first at line %d)", key, l)
	}
	p.seen[key] = p.lr.line
	switch key {
	case "EOF":
		return true, nil
	case "NODE_COORD_SECTION", "EDGE_WEIGHT_SECTION", "DISPLAY_DATA_SECTION":
		if val != "" {
			return false, p.lr.errorf("%s takes no value", key)
		}
		return false, p.startSection(key)
	case "FIXED_EDGES_SECTION", "DEMAND_SECTION", "DEPOT_SECTION", "TOUR_SECTION", "EDGE_DATA_SECTION":
		return false, p.lr.errorf("section %s is not supported (symmetric TSP only)", key)
	}
	if !hasColon {
		return false, p.lr.errorf("unknown section %q", clip(key))
	}
	switch key {
	case "NAME":
		p.t.Name = val
	case "COMMENT":
		// Joined in finish: appending here copied the comment so far
		// for every line, quadratic in a file of many comments.
		p.comments = append(p.comments, val)
	case "TYPE":
		if strings.ToUpper(val) != "TSP" {
			return false, p.lr.errorf("TYPE %q is not supported (TSP only)", clip(val))
		}
	case "DIMENSION":
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 || n > MaxTSPDimension {
			return false, p.lr.errorf("DIMENSION %q is not an integer in 1..%d", clip(val), MaxTSPDimension)
		}
		p.t.N = n
	case "EDGE_WEIGHT_TYPE":
		switch typ := EdgeWeightType(strings.ToUpper(val)); typ {
		case EUC2D, GEO, Explicit:
			p.t.Type = typ
		default:
			return false, p.lr.errorf("EDGE_WEIGHT_TYPE %q is not supported (EUC_2D, GEO, EXPLICIT)", clip(val))
		}
	case "EDGE_WEIGHT_FORMAT":
		switch f := strings.ToUpper(val); f {
		case "FULL_MATRIX", "UPPER_ROW", "LOWER_ROW", "UPPER_DIAG_ROW", "LOWER_DIAG_ROW", "FUNCTION":
			p.t.Format = f
		default:
			return false, p.lr.errorf("EDGE_WEIGHT_FORMAT %q is not supported (FULL_MATRIX, UPPER_ROW, LOWER_ROW, UPPER_DIAG_ROW, LOWER_DIAG_ROW)", clip(val))
		}
	case "NODE_COORD_TYPE":
		if v := strings.ToUpper(val); v != "TWOD_COORDS" && v != "NO_COORDS" {
			return false, p.lr.errorf("NODE_COORD_TYPE %q is not supported (TWOD_COORDS)", clip(val))
		}
	case "DISPLAY_DATA_TYPE":
		switch strings.ToUpper(val) {
		case "COORD_DISPLAY", "TWOD_DISPLAY", "NO_DISPLAY":
		default:
			return false, p.lr.errorf("DISPLAY_DATA_TYPE %q unknown", clip(val))
		}
	default:
		return false, p.lr.errorf("unknown keyword %q", clip(key))
	}
	return false, nil
}

func (p *tsplibParser) startSection(key string) error {
	if p.t.N == 0 {
		return p.lr.errorf("%s before DIMENSION", key)
	}
	p.secLine = p.lr.line
	switch key {
	case "NODE_COORD_SECTION":
		p.sec = coordSection
	case "DISPLAY_DATA_SECTION":
		p.sec = displaySection
	case "EDGE_WEIGHT_SECTION":
		if p.t.Type != Explicit {
			return p.lr.errorf("EDGE_WEIGHT_SECTION needs EDGE_WEIGHT_TYPE: EXPLICIT before it")
		}
		n := p.t.N
		switch p.t.Format {
		case "FULL_MATRIX":
			p.expected = n * n
		case "UPPER_ROW", "LOWER_ROW":
			p.expected = n * (n - 1) / 2
		case "UPPER_DIAG_ROW", "LOWER_DIAG_ROW":
			p.expected = n * (n + 1) / 2
		default:
			return p.lr.errorf("EDGE_WEIGHT_SECTION needs an EDGE_WEIGHT_FORMAT (FULL_MATRIX, UPPER_ROW, LOWER_ROW, UPPER_DIAG_ROW, LOWER_DIAG_ROW) before it")
		}
		p.sec = weightSection
	}
	return nil
}

// data handles one line of numbers inside a section.
func (p *tsplibParser) data(text string) error {
	fields := strings.Fields(text)
	switch p.sec {
	case coordSection:
		if len(fields) != 3 {
			return p.lr.errorf("node coordinate line has %d fields, want 3 (node x y)", len(fields))
		}
		if len(p.coordIDs) == p.t.N {
			return p.lr.errorf("more than DIMENSION = %d node coordinates", p.t.N)
		}
		id, err := strconv.Atoi(fields[0])
		if err != nil || id < 1 || id > p.t.N {
			return p.lr.errorf("node number %q is not an integer in 1..%d", clip(fields[0]), p.t.N)
		}
		var xy [2]float64
		for k := range xy {
			v, err := strconv.ParseFloat(fields[k+1], 64)
			if err != nil || !finiteCoord(v) {
				return p.lr.errorf("node %d: coordinate %q is not a number within ±%g", id, clip(fields[k+1]), maxCoord)
			}
			xy[k] = v
		}
		p.coordIDs = append(p.coordIDs, id)
		p.coordX = append(p.coordX, xy[0])
		p.coordY = append(p.coordY, xy[1])
	case weightSection:
		for _, f := range fields {
			v, err := strconv.Atoi(f)
			if err != nil {
				return p.lr.errorf("edge weight %q is not an integer", clip(f))
			}
			if v < 0 || v > MaxTSPWeight {
				return p.lr.errorf("edge weight %d outside 0..%d", v, MaxTSPWeight)
			}
			if len(p.weights) == p.expected {
				return p.lr.errorf("more than the %d edge weights a %s of dimension %d holds", p.expected, p.t.Format, p.t.N)
			}
			p.weights = append(p.weights, int32(v))
		}
	case displaySection:
		// Display coordinates only place nodes in drawings.
	}
	return nil
}

// endSection checks and stores the data of the section just finished.
func (p *tsplibParser) endSection() error {
	sec := p.sec
	p.sec = noSection
	at := func(format string, a ...any) error {
		return &ParseError{Name: p.lr.name, Line: p.secLine, Msg: fmt.Sprintf(format, a...)}
	}
	n := p.t.N
	switch sec {
	case coordSection:
		if len(p.coordIDs) != n {
			return at("NODE_COORD_SECTION has %d nodes, DIMENSION is %d", len(p.coordIDs), n)
		}
		p.t.X, p.t.Y = make([]float64, n), make([]float64, n)
		placed := make([]bool, n)
		for k, id := range p.coordIDs {
			if placed[id-1] {
				return at("NODE_COORD_SECTION lists node %d twice", id)
			}
			placed[id-1] = true
			p.t.X[id-1], p.t.Y[id-1] = p.coordX[k], p.coordY[k]
		}
		p.coordIDs, p.coordX, p.coordY = nil, nil, nil
	case weightSection:
		if len(p.weights) != p.expected {
			return at("EDGE_WEIGHT_SECTION has %d entries, a %s of dimension %d needs %d", len(p.weights), p.t.Format, n, p.expected)
		}
		p.t.w = expandMatrix(p.weights, n, p.t.Format)
		p.weights = nil
	}
	return nil
}

// expandMatrix turns the listed weights into a full row-major matrix.
func expandMatrix(list []int32, n int, format string) []int32 {
	if format == "FULL_MATRIX" {
		return list
	}
	w := make([]int32, n*n)
	k := 0
	set := func(i, j int) {
		w[i*n+j], w[j*n+i] = list[k], list[k]
		k++
	}
	for i := 0; i < n; i++ {
		switch format {
		case "UPPER_ROW":
			for j := i + 1; j < n; j++ {
				set(i, j)
			}
		case "UPPER_DIAG_ROW":
			for j := i; j < n; j++ {
				set(i, j)
			}
		case "LOWER_ROW":
			for j := 0; j < i; j++ {
				set(i, j)
			}
		case "LOWER_DIAG_ROW":
			for j := 0; j <= i; j++ {
				set(i, j)
			}
		}
	}
	return w
}

// finish checks that everything the weight type needs was given.
func (p *tsplibParser) finish() (*TSP, error) {
	t := &p.t
	t.Comment = strings.Join(p.comments, "\n")
	fail := func(format string, a ...any) error {
		return &ParseError{Name: p.lr.name, Line: max(p.lr.line, 1), Msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case t.N == 0:
		return nil, fail("missing DIMENSION")
	case t.Type == "":
		return nil, fail("missing EDGE_WEIGHT_TYPE")
	case t.Type == Explicit && t.w == nil:
		return nil, fail("missing EDGE_WEIGHT_SECTION for EDGE_WEIGHT_TYPE EXPLICIT")
	case t.Type != Explicit && t.X == nil:
		return nil, fail("missing NODE_COORD_SECTION for EDGE_WEIGHT_TYPE %s", t.Type)
	}
	if t.Type != Explicit {
		if t.Format != "" && t.Format != "FUNCTION" {
			return nil, &ParseError{Name: p.lr.name, Line: p.seen["EDGE_WEIGHT_FORMAT"],
				Msg: fmt.Sprintf("EDGE_WEIGHT_FORMAT %s needs EDGE_WEIGHT_TYPE EXPLICIT, not %s", t.Format, t.Type)}
		}
		t.Format = ""
	}
	if t.Type == GEO {
		t.lat, t.lon = make([]float64, t.N), make([]float64, t.N)
		for i := range t.X {
			t.lat[i], t.lon[i] = geoRadians(t.X[i]), geoRadians(t.Y[i])
		}
	}
	return t, nil
}
