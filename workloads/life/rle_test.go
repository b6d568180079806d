package life

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseRLE(t *testing.T) {
	glider := [][2]int{{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}}
	tests := []struct {
		name string
		in   string
		w, h int
		want [][2]int
	}{
		{"lifewiki glider", "#N Glider\n#O Richard K. Guy\n#C The smallest, most common, and first discovered spaceship.\n" +
			"#C www.conwaylife.com/wiki/index.php?title=Glider\nx = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n", 3, 3, glider},
		{"r-pentomino", rPentoRLE, 3, 3, [][2]int{{1, 0}, {2, 0}, {0, 1}, {1, 1}, {1, 2}}},
		{"no rule", "x = 3, y = 3\nbob$2bo$3o!", 3, 3, glider},
		{"lower-case rule", "x = 3, y = 3, rule = b3/s23\nbob$2bo$3o!", 3, 3, glider},
		{"S/B rule", "x = 3, y = 3, rule = 23/3\nbob$2bo$3o!", 3, 3, glider},
		{"no spaces", "x=3,y=3,rule=B3/S23\nbob$2bo$3o!", 3, 3, glider},
		{"keys reordered", "y = 3, rule = B3/S23, x = 3\nbob$2bo$3o!", 3, 3, glider},
		{"wrapped", "x = 3, y = 3\nb\no\nb$\n2bo\n$3o\n!", 3, 3, glider},
		{"count before line break", "x = 3, y = 3\nbob$2\nbo$3o!", 3, 3, glider},
		{"CRLF and blanks", "#C hi\r\n\r\nx = 3, y = 3\r\n bob $ 2bo $\t3o !\r\n", 3, 3, glider},
		{"no final newline", "x = 3, y = 3\nbob$2bo$3o!", 3, 3, glider},
		{"text after bang", "x = 3, y = 3\nbob$2bo$3o!this is free text\nand more\n", 3, 3, glider},
		{"trailing dead and rows", "x = 4, y = 3\nbob1b$2bo$3o$!", 4, 3, glider},
		{"multi-row skip", "x = 2, y = 4\no$$$bo!", 2, 4, [][2]int{{0, 0}, {1, 3}}},
		{"empty pattern", "x = 0, y = 0\n!", 0, 0, nil},
		{"only dead", "x = 5, y = 2\n5b$5b!", 5, 2, nil},
		{"large count", "x = 12, y = 1\n12o!", 12, 1, [][2]int{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {6, 0}, {7, 0}, {8, 0}, {9, 0}, {10, 0}, {11, 0}}},
		{"comment between header and body", "x = 3, y = 3\n#C note\nbob$2bo$3o!", 3, 3, glider},
	}
	for _, tt := range tests {
		p, err := ParseRLE(strings.NewReader(tt.in), "t.rle")
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if p.W != tt.w || p.H != tt.h || !slices.Equal(p.Cells, tt.want) {
			t.Errorf("%s: got %dx%d %v, want %dx%d %v", tt.name, p.W, p.H, p.Cells, tt.w, tt.h, tt.want)
		}
	}
}

func TestParseRLEErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"unknown tag", "#N Glider\n#C c\nx = 3, y = 3\nbox$2bo$3o!", "glider.rle:4: unexpected 'x'"},
		{"unknown tag wrapped", "#N Glider\nx = 3, y = 3\nbob$\n2bx$3o!", "glider.rle:4: unexpected 'x'"},
		{"multistate", "x = 3, y = 1\nA2.!", "glider.rle:2: unexpected 'A'"},
		{"non-ASCII", "x = 3, y = 1\nbö!", "glider.rle:2: unexpected 'ö'"},
		{"other rule", "x = 3, y = 3, rule = B36/S23\nbob$2bo$3o!", "glider.rle:1: unsupported rule \"B36/S23\": only Conway's B3/S23"},
		{"bounded grid suffix", "x = 3, y = 3, rule = B3/S23:T10,10\nbob$2bo$3o!", "glider.rle:1: unsupported rule \"B3/S23:T10,10\": only Conway's B3/S23"},
		{"unknown key", "x = 3, y = 3, z = 1\n!", "glider.rle:1: unknown header key \"z\""},
		{"duplicate key", "x = 3, x = 3, y = 3\n!", "glider.rle:1: duplicate header key x"},
		{"missing y", "x = 3\n!", "glider.rle:1: header needs both x and y"},
		{"bad number", "x = three, y = 3\n!", "glider.rle:1: header x = \"three\": want an integer in [0, 16777216]"},
		{"negative", "x = -3, y = 3\n!", "glider.rle:1: header x = \"-3\": want an integer in [0, 16777216]"},
		{"no equals", "x 3, y = 3\n!", "glider.rle:1: malformed header field \"x 3\", want key = value"},
		{"empty value", "x = , y = 3\n!", "glider.rle:1: malformed header field \"x =\", want key = value"},
		{"no header", "#C only a comment\nbob$2bo$3o!", "glider.rle:2: unexpected 'b', want header \"x = m, y = n\""},
		{"empty file", "", "glider.rle:1: missing header line \"x = m, y = n\""},
		{"missing bang", "x = 3, y = 3\nbob$2bo$3o\n", "glider.rle:2: missing '!' at end of pattern"},
		{"row too long", "x = 3, y = 3\nbob$4o$3o!", "glider.rle:2: row 2 is longer than x = 3"},
		{"dead run too long", "x = 3, y = 3\nbob$2bo$4b!", "glider.rle:2: row 3 is longer than x = 3"},
		{"too many rows", "x = 3, y = 2\nbob$2bo$3o!", "glider.rle:2: pattern has more than y = 2 rows"},
		{"row skip past box", "x = 3, y = 2\no3$!", "glider.rle:2: pattern has more than y = 2 rows"},
		{"zero count", "x = 3, y = 1\n0o!", "glider.rle:2: run count 0"},
		{"huge count", "x = 3, y = 1\n99999999999999999999o!", "glider.rle:2: run count too large"},
		{"count then comment", "x = 3, y = 1\n3\n#C x\no!", "glider.rle:3: unexpected '#'"},
	}
	for _, tt := range tests {
		_, err := ParseRLE(strings.NewReader(tt.in), "glider.rle")
		if err == nil {
			t.Errorf("%s: no error, want %q", tt.name, tt.want)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("%s: error %q, want %q", tt.name, err, tt.want)
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Name != "glider.rle" {
			t.Errorf("%s: error %T is not a *ParseError naming the file", tt.name, err)
		}
	}
}

func TestParseRLECellLimit(t *testing.T) {
	in := fmt.Sprintf("x = %d, y = 2\n%do$%do!", MaxPatternCells, MaxPatternCells, MaxPatternCells)
	_, err := ParseRLE(strings.NewReader(in), "big.rle")
	if want := fmt.Sprintf("big.rle:2: more than %d live cells", MaxPatternCells); err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestSharedPatterns parses the RLE lines of the shared test data and checks
// them against the cell lists written beside them.
func TestSharedPatterns(t *testing.T) {
	f, err := os.Open("../../../shared/testdata/life_patterns.txt")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	rleLine := regexp.MustCompile(`^RLE \((.*)\): (\S+)`)
	cellsLine := regexp.MustCompile(`^cells \(x,y\): (.*)`)
	cell := regexp.MustCompile(`\((\d+),(\d+)\)`)
	var pending *Pattern
	checked := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := rleLine.FindStringSubmatch(sc.Text()); m != nil {
			p := mustParse(t, m[1]+"\n"+m[2]+"\n")
			pending = &p
		} else if m := cellsLine.FindStringSubmatch(sc.Text()); m != nil && pending != nil {
			var want [][2]int
			for _, c := range cell.FindAllStringSubmatch(m[1], -1) {
				x, _ := strconv.Atoi(c[1])
				y, _ := strconv.Atoi(c[2])
				want = append(want, [2]int{x, y})
			}
			if !slices.Equal(pending.Cells, want) {
				t.Errorf("cells %v, want %v", pending.Cells, want)
			}
			pending = nil
			checked++
		}
	}
	if checked != 2 {
		t.Errorf("checked %d patterns, want the glider and the R-pentomino", checked)
	}
}

// encodeRLE writes p in RLE without run counts for dead cells' trailing
// runs, which is enough to round-trip through ParseRLE.
func encodeRLE(p Pattern) string {
	live := make(map[[2]int]bool, len(p.Cells))
	for _, c := range p.Cells {
		live[c] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "x = %d, y = %d, rule = B3/S23\n", p.W, p.H)
	for y := range p.H {
		if y > 0 {
			b.WriteString("$")
		}
		for x := 0; x < p.W; {
			n := 1
			for x+n < p.W && live[[2]int{x + n, y}] == live[[2]int{x, y}] {
				n++
			}
			fmt.Fprintf(&b, "%d%c\n", n, "bo"[boolInt(live[[2]int{x, y}])])
			x += n
		}
	}
	b.WriteString("!\n")
	return b.String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func FuzzParseRLE(f *testing.F) {
	for _, s := range []string{
		gliderRLE, rPentoRLE, "x = 0, y = 0\n!", "#N a\n#C b\nx = 4, y = 3, rule = b3/s23\n2ob$$o2bo!",
		"x = 3, y = 3\nb\no\nb$\n2bo\n$3o\n!", "x = 3, y = 1\n0o!", "x = 3, y = 3\nbox$2bo$3o!",
		"x = 3, y = 2\no3$!", "x = 16777216, y = 1\n16777216o!", "x=1,y=1\r\no!\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseRLE(strings.NewReader(string(data)), "fuzz.rle")
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) && (pe.Line < 1 || pe.Name != "fuzz.rle") {
				t.Fatalf("bad error position: %v", err)
			}
			return
		}
		if len(p.Cells) > MaxPatternCells {
			t.Fatalf("%d cells, limit %d", len(p.Cells), MaxPatternCells)
		}
		seen := make(map[[2]int]bool, len(p.Cells))
		for _, c := range p.Cells {
			if c[0] < 0 || c[0] >= p.W || c[1] < 0 || c[1] >= p.H {
				t.Fatalf("cell %v outside %dx%d", c, p.W, p.H)
			}
			if seen[c] {
				t.Fatalf("cell %v twice", c)
			}
			seen[c] = true
		}
		if p.W*p.H > 1<<16 {
			return // keep the round trip cheap
		}
		q, err := ParseRLE(strings.NewReader(encodeRLE(p)), "again.rle")
		if err != nil {
			t.Fatalf("re-encoded pattern does not parse: %v", err)
		}
		if q.W != p.W || q.H != p.H || !slices.Equal(q.Cells, p.Cells) {
			t.Fatalf("round trip changed the pattern: %+v -> %+v", p, q)
		}
	})
}
