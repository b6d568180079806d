package scenarios

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Section is the [workload] or [protocol] table of a scenario: a kind that
// selects the implementation, and keys that only that implementation
// knows. The owning package decodes them strictly with Decode:
//
//	p := life.Params{Width: 64} // defaults
//	if err := s.Workload.Decode(&p); err != nil { ... }
//
// A Section keeps the text of every document that set its keys (the file,
// then each override) and re-parses it on each Decode, so Decode reports
// the file, line and key of a bad value, and sections are safe to share
// between goroutines once loaded.
type Section struct {
	table   string  // "workload" or "protocol", or "protocols" for an entry of [[protocols]]
	kind    string  // selected implementation
	kindAt  origin  // where kind was set, zero for the default
	label   string  // name of a [[protocols]] entry, empty for a plain table
	name    string  // how errors name the table ("protocols[1]"); table when empty
	labelAt origin  // where label was set
	layers  []layer // documents that set keys here, in order; immutable once appended
}

// layer is one document's share of a section.
type layer struct {
	src   source
	text  string         // the whole document, re-parsed by Decode
	table string         // the table holding the keys in text ("protocol", "protocols")
	elem  int            // 1 + the index of the table in an array of tables, 0 for a plain table
	keys  []string       // the section's keys it sets, in document order, without kind and label
	lines map[string]int // line of each of keys
}

// name is how errors name the layer's table: "protocol" or "protocols[1]".
func (l *layer) name() string {
	if l.elem == 0 {
		return l.table
	}
	return fmt.Sprintf("%s[%d]", l.table, l.elem-1)
}

// newSection returns an empty section of a table with a default kind.
func newSection(table, kind string) *Section {
	return &Section{table: table, kind: kind}
}

// Kind returns the implementation the section selects ("life", "cpr").
// The methods of Section accept a nil receiver, an empty section.
func (sec *Section) Kind() string {
	if sec == nil {
		return ""
	}
	return sec.kind
}

// Label returns the name of a [[protocols]] entry: its label key, else its
// kind. It is the kind for a plain [protocol] or [workload] table.
func (sec *Section) Label() string {
	if sec == nil {
		return ""
	}
	if sec.label != "" {
		return sec.label
	}
	return sec.kind
}

// Keys returns the section's keys present in the scenario, other than
// kind, in the order they were first set.
func (sec *Section) Keys() []string {
	if sec == nil {
		return nil
	}
	var keys []string
	for _, l := range sec.layers {
		for _, k := range l.keys {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// Has reports whether key (a key of the section, such as "width", or
// "kind") was set by the scenario file or an override.
func (sec *Section) Has(key string) bool {
	if sec == nil {
		return false
	}
	if key == "kind" {
		return sec.kindAt != origin{}
	}
	return slices.Contains(sec.Keys(), key)
}

// Decode fills the struct v points to from the section's keys, the file's
// first and then each override's, so an absent key leaves the field as
// the caller preset it. Keys match the fields' toml tags exactly; a key
// with no field, a key spelled in another case, a value of the wrong type
// and a negative integer are errors naming the file, line and key.
// Integer fields may hold negative values only when tagged
// `ftsim:"signed"`; Duration, Size and Rate are never negative; float
// fields never hold nan or inf. On error v
// may be partly filled.
func (sec *Section) Decode(v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("scenarios: Section.Decode needs a non-nil pointer to a struct, got %T", v)
	}
	if sec == nil {
		return nil
	}
	for _, l := range sec.layers {
		doc, err := parseDocument(l.src, l.text)
		if err != nil {
			return err // not reached: the text parsed when it was loaded
		}
		p, ok := doc.primitive([]string{l.table})
		if !ok {
			continue
		}
		n := node{p: p, key: []string{l.table}, name: l.name()}
		if l.elem > 0 {
			var elems []toml.Primitive
			if doc.md.PrimitiveDecode(p, &elems) != nil || len(elems) < l.elem {
				continue // not reached: the layer was recorded from this element
			}
			n.p = elems[l.elem-1]
			n.line, n.elem = elementSpan(doc, n.key, p, len(elems), l.elem-1)
		}
		w := walker{doc: doc, params: true}
		if err := w.table(n, rv.Elem()); err != nil {
			return err
		}
	}
	return nil
}

// Errorf returns an *Error about key of the section ("width", or a dotted
// "pattern.file") located where the key was last set, for values that
// decode but are wrong for the workload or protocol. The key printed is
// the full one ("workload.width"). A key the scenario does not set is
// located at the section (its kind's line), so that the error still names
// the file.
//
// An empty key means the section as a whole, for errors of a workload or
// protocol built from its keys. When the message starts by naming one of
// the section's keys, as the workload packages write them
// ("workload.tsplib: f.tsp:3: ..."), the error is located at that key.
func (sec *Section) Errorf(key, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if sec == nil {
		return &Error{Key: key, Msg: msg}
	}
	if key == "" {
		key, msg = sec.keyOf(msg)
	}
	full := cmp.Or(sec.name, sec.table)
	if key != "" {
		full += "." + key
	}
	switch {
	case key == "kind" && sec.kindAt != (origin{}):
		return sec.kindAt.src.errorf(sec.kindAt.line, full, "%s", msg)
	case key == "label" && sec.labelAt != (origin{}):
		return sec.labelAt.src.errorf(sec.labelAt.line, full, "%s", msg)
	}
	top, _, _ := strings.Cut(key, ".")
	for i := len(sec.layers) - 1; i >= 0; i-- {
		l := sec.layers[i]
		if line, ok := l.lines[top]; ok {
			return l.src.errorf(line, l.name()+"."+key, "%s", msg)
		}
	}
	if o := sec.at(); o != (origin{}) {
		return o.src.errorf(o.line, full, "%s", msg)
	}
	return &Error{Key: full, Msg: msg}
}

// keyOf finds the key a message about the whole section starts with:
// "workload.tsplib: rest" gives tsplib and rest, "workload: rest" gives ""
// and rest. A key the section does not set, or one followed by more text
// than a colon ("workload.width and height must ..."), leaves the message
// whole, since it reads as a sentence.
func (sec *Section) keyOf(msg string) (key, rest string) {
	// Messages name the table as the scenario file's reader knows it:
	// "protocol.every" also for an entry of [[protocols]].
	base := strings.TrimSuffix(sec.table, "s")
	after, ok := strings.CutPrefix(msg, base)
	if !ok {
		return "", msg
	}
	if r, ok := strings.CutPrefix(after, ": "); ok {
		return "", r
	}
	after, ok = strings.CutPrefix(after, ".")
	if !ok {
		return "", msg
	}
	n := strings.IndexFunc(after, func(r rune) bool { return !isKeyRune(r) })
	if n <= 0 {
		return "", msg
	}
	k := after[:n]
	if !sec.Has(k) {
		return "", msg
	}
	if r, ok := strings.CutPrefix(after[n:], ": "); ok {
		return k, r
	}
	return k, msg
}

// isKeyRune reports whether r can be part of a bare TOML key.
func isKeyRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// at returns where the section was written: the line of its kind, else of
// its first key; the zero origin when no document set it.
func (sec *Section) at() origin {
	if sec.kindAt != (origin{}) {
		return sec.kindAt
	}
	for _, l := range sec.layers {
		if len(l.keys) > 0 {
			return origin{src: l.src, line: l.lines[l.keys[0]]}
		}
	}
	return origin{}
}

// clone returns a copy that can be changed (kind, new layers) without
// changing sec. Layers themselves are immutable and shared.
func (sec *Section) clone() *Section {
	if sec == nil {
		return nil
	}
	c := *sec
	c.layers = slices.Clone(sec.layers)
	return &c
}
