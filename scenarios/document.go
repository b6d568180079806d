package scenarios

import (
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// This file holds a parsed TOML document and finds where its keys are.
// BurntSushi/toml keeps key positions private; see probe for how they are
// recovered, and elementLines for array elements, which it does not tell
// apart at all.

// document is one parsed TOML text: a scenario file, one override or a
// section's share of either.
type document struct {
	src  source
	text string // as parsed; byte offsets index it
	md   toml.MetaData
	top  map[string]toml.Primitive

	ranks map[string]int // see rank; built on first use
}

// parseDocument parses text, reporting syntax errors on the line
// syntaxLine finds from BurntSushi's position.
func parseDocument(src source, text string) (doc *document, err error) {
	// BurntSushi skips a UTF-8 byte order mark; dropping it here keeps the
	// byte offsets it reports in step with text.
	text = strings.TrimPrefix(text, "\uFEFF")
	defer func() {
		// BurntSushi panics on its own internal errors ("BUG: ..."); user
		// input must never crash ftsim, so that becomes an error too.
		if r := recover(); r != nil {
			doc, err = nil, src.errorf(0, "", "TOML parser failed: %v", r)
		}
	}()
	if line := tooDeep(text); line > 0 {
		return nil, src.errorf(line, "", "keys or inline tables nested more than %d deep", maxKeyDepth)
	}
	doc = &document{src: src, text: text}
	doc.md, err = toml.Decode(text, &doc.top)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, src.errorf(syntaxLine(text, pe), literalKey(pe), "%s", pe.Message)
		}
		return nil, src.errorf(0, "", "%v", err)
	}
	return doc, nil
}

// maxKeyDepth bounds the parts of a dotted key (a.b.c) and the nesting of
// inline tables ({a = {b = ...}}). Scenario keys are a few levels deep;
// BurntSushi's memory grows with the square of the depth, so a few hundred
// kilobytes of a.a.a... used to exhaust memory before it could fail.
const maxKeyDepth = 32

// tooDeep returns the line on which text first nests keys deeper than
// maxKeyDepth, or 0. It runs before parsing, on any text: strings and
// comments are skipped, and a run of dots counts as one key unless
// something other than key characters, strings and blanks separates them.
func tooDeep(text string) int {
	line, braces, dots := 1, 0, 0
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '"' || c == '\'':
			i, line = skipString(text, i, line)
			continue
		case c == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			continue
		case c == '\n':
			line, dots = line+1, 0
		case c == '.':
			dots++
		case c == '{':
			braces, dots = braces+1, 0
		case c == '}':
			braces, dots = braces-1, 0
		case c == ' ' || c == '\t' || c == '\r' || isKeyRune(rune(c)):
		default:
			dots = 0
		}
		if dots >= maxKeyDepth || braces > maxKeyDepth {
			return line
		}
		i++
	}
	return 0
}

// syntaxLine returns the line a syntax error is on. BurntSushi's lexer
// counts a newline as it reads it, so an error about a newline it read
// rather than peeked at ("[cluster" without its "]") names the line after.
// The error's Start, where the token began, is still on the newline's line,
// so such an error past Start's line is moved back one line.
func syntaxLine(text string, pe toml.ParseError) int {
	line, start := pe.Position.Line, pe.Position.Start
	if !strings.Contains(pe.Message, `'\n'`) || start < 0 || start > len(text) {
		return line
	}
	if startLine := 1 + strings.Count(text[:start], "\n"); line > startLine {
		return line - 1
	}
	return line
}

// literalKey returns the key whose value a syntax error is in, when the
// error is about a number literal ("1e400 is out of range for float64").
// BurntSushi's LastKey is that key while a value is parsed, but may be the
// previous one for errors in keys and table headers, so it is used only for
// these messages.
func literalKey(pe toml.ParseError) string {
	m := pe.Message
	if strings.Contains(m, " is out of range for ") || strings.HasPrefix(m, "Invalid integer") || strings.HasPrefix(m, "Invalid float") {
		return pe.LastKey
	}
	return ""
}

// pos is where a key's value starts in a document.
type pos struct {
	line  int // 1-based, 0 when unknown
	start int // byte offset
}

// probe learns a value's position. BurntSushi keeps key positions private
// but attaches the position of the key being decoded to the error an
// Unmarshaler returns (toml.ParseError.Position), so decoding into a type
// whose UnmarshalTOML always fails reveals it.
type probe struct{}

// UnmarshalTOML implements toml.Unmarshaler by failing, see probe.
func (*probe) UnmarshalTOML(any) error { return errors.New("probe") }

// probe returns the recorded position of the value p.
func (d *document) probe(p toml.Primitive) pos {
	var pe toml.ParseError
	if err := d.md.PrimitiveDecode(p, &probe{}); errors.As(err, &pe) {
		return pos{line: pe.Position.Line, start: pe.Position.Start}
	}
	return pos{}
}

// pos returns the position of key, whose value is p. A table made
// implicitly by a dotted key (a.b = 1 makes a) has no position of its own;
// it gets that of the first key written under it.
func (d *document) pos(key toml.Key, p toml.Primitive) pos {
	if at := d.probe(p); at.line > 0 {
		return at
	}
	for _, k := range d.md.Keys() {
		if len(k) > len(key) && slices.Equal(k[:len(key)], key) {
			if sub, ok := d.primitive(k); ok {
				if at := d.probe(sub); at.line > 0 {
					return at
				}
			}
		}
	}
	return pos{}
}

// primitive returns the value at key by descending through tables.
func (d *document) primitive(key toml.Key) (toml.Primitive, bool) {
	p, ok := d.top[key[0]]
	for _, k := range key[1:] {
		if !ok {
			break
		}
		m, isTable := d.table(p)
		if !isTable {
			return p, false
		}
		p, ok = m[k]
	}
	return p, ok
}

// table returns the keys of the table p, or false when p is not a table.
// Decoding a non-table into a map is not an error for BurntSushi (it
// leaves the map nil), so the raw value's type is checked first.
func (d *document) table(p toml.Primitive) (map[string]toml.Primitive, bool) {
	var raw any
	if d.md.PrimitiveDecode(p, &raw) != nil {
		return nil, false
	}
	if _, ok := raw.(map[string]any); !ok {
		return nil, false
	}
	var m map[string]toml.Primitive
	if d.md.PrimitiveDecode(p, &m) != nil {
		return nil, false
	}
	return m, true
}

// elementLines returns the line of each of the n elements of the array
// at key, whose value starts at arr. It falls back to the array's own
// line where the elements cannot be told apart.
func (d *document) elementLines(key toml.Key, arr pos, n int) []int {
	lines := make([]int, n)
	for i := range lines {
		lines[i] = arr.line
	}
	if arr.start > 0 && arr.start <= len(d.text) && d.text[arr.start-1] == '[' {
		// An inline array: BurntSushi's position is just inside "[".
		scanArray(d.text, arr.start, lines)
		return lines
	}
	// An array of tables: one [[key]] header per element.
	parts := make([]string, len(key))
	for i, k := range key {
		parts[i] = regexp.QuoteMeta(k)
	}
	re := regexp.MustCompile(`(?m)^[ \t]*\[\[[ \t]*` + strings.Join(parts, `[ \t]*\.[ \t]*`) + `[ \t]*\]\]`)
	if locs := re.FindAllStringIndex(d.text, -1); len(locs) == n {
		for i, l := range locs {
			lines[i] = 1 + strings.Count(d.text[:l[0]], "\n")
		}
	}
	return lines
}

// elementSpan returns the line and span of element i of the n-element
// array of tables at key, whose value is arr.
func elementSpan(d *document, key toml.Key, arr toml.Primitive, n, i int) (int, span) {
	lines := d.elementLines(key, d.probe(arr), n)
	sp := span{lo: lines[i]}
	if i+1 < n {
		sp.hi = max(lines[i+1], sp.lo+1)
	}
	return lines[i], sp
}

// scanArray fills lines with the line on which each element of the
// inline array starting at text[start:] (just inside "[") begins. The text
// is valid TOML, already parsed, so only strings, comments and nesting
// need care.
func scanArray(text string, start int, lines []int) {
	line := 1 + strings.Count(text[:start], "\n")
	depth, el, want := 0, 0, true
	for i := start; i < len(text) && el < len(lines); {
		c := text[i]
		switch {
		case c == '\n':
			line, i = line+1, i+1
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case depth == 0 && c == ',':
			want, i = true, i+1
		case depth == 0 && c == ']':
			return
		default:
			if depth == 0 && want {
				lines[el], el, want = line, el+1, false
			}
			switch c {
			case '[', '{':
				depth, i = depth+1, i+1
			case ']', '}':
				depth, i = depth-1, i+1
			case '"', '\'':
				i, line = skipString(text, i, line)
			default:
				i++
			}
		}
	}
}

// skipString returns the index just past the TOML string starting at
// text[i] and the line it ends on.
func skipString(text string, i, line int) (int, int) {
	q := text[i]
	delim := text[i : i+1]
	if strings.HasPrefix(text[i:], strings.Repeat(delim, 3)) {
		delim = strings.Repeat(delim, 3)
	}
	i += len(delim)
	for i < len(text) {
		switch {
		case q == '"' && text[i] == '\\':
			if i+1 < len(text) && text[i+1] == '\n' {
				line++
			}
			i += 2
		case strings.HasPrefix(text[i:], delim):
			i += len(delim)
			for len(delim) == 3 && i < len(text) && text[i] == q {
				i++ // up to two quotes may end a multi-line string
			}
			return i, line
		default:
			if text[i] == '\n' {
				line++
			}
			i++
		}
	}
	return i, line
}

// rank orders keys as they appear in the document (MetaData.Keys), so
// that the first error reported is the first in the file rather than a
// random one from map iteration. Tables made implicitly by dotted keys
// rank with the first key under them.
func (d *document) rank(key toml.Key) int {
	if d.ranks == nil {
		d.ranks = map[string]int{}
		for i, k := range d.md.Keys() {
			for j := 1; j <= len(k); j++ {
				if _, ok := d.ranks[k[:j].String()]; !ok {
					d.ranks[k[:j].String()] = i
				}
			}
		}
	}
	if r, ok := d.ranks[key.String()]; ok {
		return r
	}
	return math.MaxInt
}
