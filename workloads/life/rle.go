// Package life is the Game of Life workload: Conway's rule B3/S23 on a
// finite grid (torus or dead boundary), patterns read from RLE files, and the
// sequential reference against which the distributed tiles are checked.
package life

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxPatternSide bounds the header's x and y. Nothing is allocated per
// bounding-box cell, so the bound only has to keep run arithmetic far from
// integer overflow.
const MaxPatternSide = 1 << 24

// MaxPatternCells bounds the live cells of a parsed pattern, so that a few
// bytes with huge run counts ("9999999o") cannot exhaust memory.
const MaxPatternCells = 1 << 20

// Pattern is a Life pattern read from an RLE file.
type Pattern struct {
	// W and H are the bounding box declared by the header (x and y).
	W, H int
	// Cells holds the (x, y) coordinates of the live cells, origin at the
	// top-left of the bounding box, x to the right, y downward, in reading
	// order (row by row, left to right).
	Cells [][2]int
}

// ParseError is a syntax error in an RLE file; it prints as
// "name:line: message", the form editors jump to.
type ParseError struct {
	Name string // file name as given to ParseRLE
	Line int    // 1-based line number
	Msg  string
}

// Error implements error.
func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg)
}

// ParseRLE reads a pattern in the run-length encoded format of Golly and
// LifeWiki. name is used only in error messages.
//
// Accepted: '#' comment lines (#N, #C, #O, ...) and blank lines anywhere
// before '!', the header "x = m, y = n[, rule = B3/S23]" (keys in any
// order; the rule is case-insensitive, and the old survival/birth spelling
// "23/3" is the same rule and is accepted too), then runs "<count><tag>"
// with tags b (dead), o (alive), $ (end of row, count = rows) and ! (end of
// pattern), wrapped over any number of lines, blanks between runs, CRLF line
// ends. Everything after '!' is ignored, as the format specifies.
//
// Rejected, with a *ParseError giving the file name and line: any other rule
// (including Golly's bounded-grid suffix), unknown or duplicate header keys,
// other tags (multistate files), a run count of 0, runs reaching outside the
// header's bounding box (one trailing '$' past the last row is allowed,
// as writers emit it), more than MaxPatternCells live cells, a missing
// header or '!'. Read errors of r are returned wrapped, prefixed with name.
func ParseRLE(r io.Reader, name string) (Pattern, error) {
	p := rleParser{name: name}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if len(line) > 0 {
			p.line++
			if perr := p.feed(strings.TrimRight(line, "\r\n")); perr != nil {
				return Pattern{}, perr
			}
			if p.done {
				return p.pat, nil
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Pattern{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	line := max(p.line, 1)
	if !p.header {
		return Pattern{}, &ParseError{name, line, "missing header line \"x = m, y = n\""}
	}
	return Pattern{}, &ParseError{name, line, "missing '!' at end of pattern"}
}

// rleParser holds the state carried across lines: a run count may be
// followed by its tag on the next line in sloppily wrapped files.
type rleParser struct {
	name   string
	line   int
	header bool
	done   bool
	pat    Pattern
	x, y   int  // next cell to be written
	count  int  // pending run count
	counts bool // whether a run count is pending
}

func (p *rleParser) errorf(format string, args ...any) error {
	return &ParseError{p.name, p.line, fmt.Sprintf(format, args...)}
}

func (p *rleParser) feed(line string) error {
	trimmed := strings.TrimSpace(line)
	if trimmed == "" || (!p.counts && trimmed[0] == '#') {
		return nil
	}
	if !p.header {
		return p.parseHeader(trimmed)
	}
	return p.parseBody(trimmed)
}

func (p *rleParser) parseHeader(s string) error {
	if !strings.Contains(s, "=") {
		return p.errorf("unexpected %s, want header \"x = m, y = n\"", quoteFirst(s))
	}
	var haveX, haveY, haveRule bool
	for rest := s; rest != ""; {
		field, after, _ := strings.Cut(rest, ",")
		rest = after
		key, value, ok := strings.Cut(field, "=")
		key = strings.TrimSpace(key)
		if key == "rule" && rest != "" && !strings.Contains(rest, "=") {
			// Rules may contain commas (Golly's bounded-grid suffix
			// ":T20,20"); report the whole rule, not a fragment.
			value, rest = value+","+rest, ""
		}
		value = strings.TrimSpace(value)
		if !ok || key == "" || value == "" {
			return p.errorf("malformed header field %q, want key = value", strings.TrimSpace(field))
		}
		switch key {
		case "x", "y":
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 || n > MaxPatternSide {
				return p.errorf("header %s = %q: want an integer in [0, %d]", key, value, MaxPatternSide)
			}
			if (key == "x" && haveX) || (key == "y" && haveY) {
				return p.errorf("duplicate header key %s", key)
			}
			if key == "x" {
				haveX, p.pat.W = true, n
			} else {
				haveY, p.pat.H = true, n
			}
		case "rule":
			if haveRule {
				return p.errorf("duplicate header key rule")
			}
			haveRule = true
			if !strings.EqualFold(value, "B3/S23") && value != "23/3" {
				return p.errorf("unsupported rule %q: only Conway's B3/S23", value)
			}
		default:
			return p.errorf("unknown header key %q", key)
		}
	}
	if !haveX || !haveY {
		return p.errorf("header needs both x and y")
	}
	p.header = true
	return nil
}

func (p *rleParser) parseBody(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			// Writers put blanks between runs; harmless.
		case c >= '0' && c <= '9':
			p.count = p.count*10 + int(c-'0')
			p.counts = true
			if p.count > MaxPatternSide {
				return p.errorf("run count too large")
			}
		case c == 'b' || c == 'o' || c == '$':
			n := 1
			if p.counts {
				if p.count == 0 {
					return p.errorf("run count 0")
				}
				n = p.count
			}
			p.count, p.counts = 0, false
			if err := p.run(c, n); err != nil {
				return err
			}
		case c == '!':
			p.done = true
			return nil
		default:
			return p.errorf("unexpected %s", quoteFirst(s[i:]))
		}
	}
	return nil
}

func (p *rleParser) run(tag byte, n int) error {
	switch tag {
	case '$':
		// One row past the box is a trailing '$' before '!', which writers
		// emit; more is content outside the declared box.
		if p.y+n > p.pat.H {
			return p.errorf("pattern has more than y = %d rows", p.pat.H)
		}
		p.y += n
		p.x = 0
	case 'b', 'o':
		if p.x+n > p.pat.W {
			return p.errorf("row %d is longer than x = %d", p.y+1, p.pat.W)
		}
		if tag == 'o' {
			if p.y >= p.pat.H {
				return p.errorf("pattern has more than y = %d rows", p.pat.H)
			}
			if len(p.pat.Cells)+n > MaxPatternCells {
				return p.errorf("more than %d live cells", MaxPatternCells)
			}
			for k := range n {
				p.pat.Cells = append(p.pat.Cells, [2]int{p.x + k, p.y})
			}
		}
		p.x += n
	}
	return nil
}

// quoteFirst renders the first character of s for an error message, as Go
// quotes a rune: 'x'.
func quoteFirst(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	return strconv.QuoteRune(r)
}
