package scenarios

import (
	"cmp"
	"encoding"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// This file holds the strict decoder shared by the scenario loader and
// Section.Decode. BurntSushi/toml decodes leniently: it matches keys to
// fields case-insensitively, ignores unknown keys, wraps negative numbers
// into unsigned fields and does not say where a key is. So the decoder
// walks the document table by table itself, matches each key exactly
// against the struct's toml tags, and hands only leaf values to
// BurntSushi (MetaData.PrimitiveDecode). MetaData.Undecoded is not needed:
// no key reaches BurntSushi without having been matched first.

// walker decodes one document into Go values, strictly.
type walker struct {
	doc *document
	// origins, when not nil, receives where each decoded key was set.
	origins map[string]origin
	// params is set when decoding a Section into a caller's struct: the
	// section's "kind" is skipped and negative integers are rejected
	// unless the field is tagged ftsim:"signed".
	params bool
}

// node is a value being decoded.
type node struct {
	p    toml.Primitive
	key  toml.Key // the key as BurntSushi knows it, without array indices
	name string   // the key as errors print it: "failures.scripted[1]"
	line int      // its line when known, 0 to look it up
	elem span     // the array element it is in, if any
	at   int      // 1 + its index when it is an element of an array, else 0
}

// span is the range of lines [lo, hi) of one array element; hi is 0 for
// the last element. The zero span means "not inside an array".
type span struct{ lo, hi int }

// within returns line if it lies in the span, else the span's first line.
// BurntSushi records one position per dotted key, so keys repeated in
// several elements of an array of tables all get the last one's; a
// position outside the element is such a stray and is replaced.
func (sp span) within(line int) int {
	if sp.lo == 0 || line >= sp.lo && (sp.hi == 0 || line < sp.hi) {
		return line
	}
	return sp.lo
}

// line returns n's line. It is looked up only when needed, for an error
// or an origin, because each lookup costs a pass over the text (see
// probe); overrides have no lines.
func (w *walker) line(n node) int {
	if n.line == 0 && w.doc.src.override == "" {
		n.line = n.elem.within(w.doc.pos(n.key, n.p).line)
	}
	return n.line
}

// errorf reports a problem with n.
func (w *walker) errorf(n node, format string, args ...any) *Error {
	return w.doc.src.errorf(w.line(n), n.name, format, args...)
}

// record notes where the value of n was set.
func (w *walker) record(n node) {
	if w.origins != nil {
		w.origins[n.name] = origin{src: w.doc.src, line: w.line(n)}
	}
}

// children returns the keys of the table m under n, in document order.
func (w *walker) children(n node, m map[string]toml.Primitive) []node {
	cs := make([]node, 0, len(m))
	for k, p := range m {
		cs = append(cs, node{p: p, key: childKey(n.key, k), name: childName(n.name, k), elem: n.elem})
	}
	slices.SortFunc(cs, func(a, b node) int {
		return cmp.Or(cmp.Compare(w.doc.rank(a.key), w.doc.rank(b.key)), strings.Compare(a.name, b.name))
	})
	return cs
}

// table decodes the TOML table n into the struct rv.
func (w *walker) table(n node, rv reflect.Value) error {
	m, ok := w.doc.table(n.p)
	if !ok {
		return w.errorf(n, "want a table, got %s", w.rawType(n.p))
	}
	return w.fields(n, m, rv)
}

// fields decodes the keys of the table m, which is n, into the fields of
// the struct rv, rejecting keys that match no field's name exactly.
func (w *walker) fields(n node, m map[string]toml.Primitive, rv reflect.Value) error {
	fs := structFields(rv.Type())
	for _, c := range w.children(n, m) {
		k := c.key[len(c.key)-1]
		if w.params && len(n.key) == 1 && (k == "kind" || k == "label") {
			continue // the section's kind and label are the loader's business
		}
		f, ok := lookupField(fs, k)
		if !ok {
			return w.errorf(c, "unknown key %q%s", c.name, suggest(k, fs))
		}
		if err := w.value(c, rv.FieldByIndex(f.index), f.signed); err != nil {
			return err
		}
	}
	return nil
}

// value decodes n into v, descending into tables and arrays of tables.
func (w *walker) value(n node, v reflect.Value, signed bool) error {
	t := v.Type()
	switch {
	case t == reflect.TypeFor[*Section]():
		if v.IsNil() { // a [[protocols]] entry, or a Scenario built in Go rather than by Default
			v.Set(reflect.ValueOf(newSection(n.key[len(n.key)-1], "")))
		}
		return w.section(n, v.Interface().(*Section))
	case unmarshaler(t):
		return w.leaf(n, v, signed)
	case t.Kind() == reflect.Struct:
		return w.table(n, v)
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && !unmarshaler(t.Elem()):
		// Fill a copy: the pointer may be a caller's shared default.
		nv := reflect.New(t.Elem())
		if !v.IsNil() {
			nv.Elem().Set(v.Elem())
		}
		v.Set(nv)
		return w.table(n, nv.Elem())
	case t.Kind() == reflect.Slice && (t.Elem().Kind() == reflect.Struct || t.Elem().Kind() == reflect.Pointer):
		return w.array(n, v, signed)
	}
	return w.leaf(n, v, signed)
}

// array decodes an array element by element, so that errors name the
// element ("failures.scripted[1]") and its line.
func (w *walker) array(n node, v reflect.Value, signed bool) error {
	var elems []toml.Primitive
	if err := w.doc.md.PrimitiveDecode(n.p, &elems); err != nil {
		return w.errorf(n, "want an array, got %s", w.rawType(n.p))
	}
	var lines []int
	if n.elem == (span{}) {
		lines = w.doc.elementLines(n.key, w.doc.probe(n.p), len(elems))
	} else {
		// An array inside an array element: its positions are unreliable.
		lines = slices.Repeat([]int{n.elem.lo}, len(elems))
	}
	s := reflect.MakeSlice(v.Type(), len(elems), len(elems))
	if w.origins != nil {
		// A shorter list must not leave origins of elements it dropped.
		for k := range w.origins {
			if strings.HasPrefix(k, n.name+"[") {
				delete(w.origins, k)
			}
		}
	}
	for i, p := range elems {
		sp := span{lo: lines[i]}
		if i+1 < len(lines) {
			sp.hi = max(lines[i+1], sp.lo+1) // elements on one line share it
		}
		e := node{p: p, key: n.key, name: fmt.Sprintf("%s[%d]", n.name, i), line: lines[i], elem: sp, at: i + 1}
		if err := w.value(e, s.Index(i), signed); err != nil {
			return err
		}
		w.record(e)
	}
	v.Set(s)
	w.record(n)
	return nil
}

// leaf decodes a value BurntSushi handles on its own: a scalar, an array
// of scalars, a map, or a type with its own UnmarshalTOML.
func (w *walker) leaf(n node, v reflect.Value, signed bool) error {
	if w.params && !signed && integer(v.Type()) {
		var raw any
		_ = w.doc.md.PrimitiveDecode(n.p, &raw)
		if x, ok := firstNegative(raw); ok {
			return w.errorf(n, "must be ≥ 0, got %d", x)
		}
	}
	if w.params && float(v.Type()) {
		// TOML has nan and inf; no workload or protocol parameter means
		// them, and a NaN passes every "x < 0" check the packages make.
		var raw any
		_ = w.doc.md.PrimitiveDecode(n.p, &raw)
		if x, ok := firstNonFinite(raw); ok {
			return w.errorf(n, "must be finite, got %g", x)
		}
	}
	// Decode into a fresh value and assign it: BurntSushi decodes a slice
	// into the existing backing array and merges into an existing map,
	// which would write through to a caller's preset defaults or to a
	// clone sharing them.
	nv := reflect.New(v.Type())
	if err := w.doc.md.PrimitiveDecode(n.p, nv.Interface()); err != nil {
		return w.errorf(n, "%s", w.mismatch(n.p, v.Type(), err))
	}
	v.Set(nv.Elem())
	w.record(n)
	return nil
}

// section records a [workload] or [protocol] table: its kind now, its
// other keys as a layer that Section.Decode decodes later.
func (w *walker) section(n node, sec *Section) error {
	m, ok := w.doc.table(n.p)
	if !ok {
		return w.errorf(n, "want a table, got %s", w.rawType(n.p))
	}
	l := layer{src: w.doc.src, text: w.doc.text, table: n.key[0], elem: n.at, lines: map[string]int{}}
	if sec.name == "" || n.at > 0 {
		sec.name = l.name()
	}
	kind, kindSet := "", false
	for _, c := range w.children(n, m) {
		k := c.key[len(c.key)-1]
		if k == "label" && n.at > 0 {
			if err := w.doc.md.PrimitiveDecode(c.p, &sec.label); err != nil {
				return w.errorf(c, "want a string, got %s", w.rawType(c.p))
			}
			if sec.label == "" {
				// Label would fall back to the kind: leaving it out says that
				return w.errorf(c, "must not be empty: leave label out to name the entry by its kind")
			}
			sec.labelAt = origin{src: w.doc.src, line: w.line(c)}
			w.record(c)
			continue
		}
		if k != "kind" {
			l.keys = append(l.keys, k)
			l.lines[k] = w.line(c)
			continue
		}
		if err := w.doc.md.PrimitiveDecode(c.p, &kind); err != nil {
			return w.errorf(c, "want a string, got %s", w.rawType(c.p))
		}
		if kind == "" {
			return w.errorf(c, "must not be empty")
		}
		kindSet = true
		sec.kindAt = origin{src: w.doc.src, line: w.line(c)}
		w.record(c)
	}
	if kindSet && kind != sec.kind {
		// Keys written for another kind do not apply to this one.
		sec.kind, sec.layers = kind, nil
	}
	if len(l.keys) > 0 {
		sec.layers = append(sec.layers, l)
	}
	return nil
}

// rawType names the TOML type of p for error messages.
func (w *walker) rawType(p toml.Primitive) string {
	var raw any
	_ = w.doc.md.PrimitiveDecode(p, &raw)
	return tomlTypeOf(raw)
}

// mismatch turns a BurntSushi decoding error into a message without its
// "toml: line N (last key ...)" prefix, which would repeat what Error
// prints.
func (w *walker) mismatch(p toml.Primitive, t reflect.Type, err error) string {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		// Errors from UnmarshalTOML and range checks carry a clean message.
		return pe.Message
	}
	if want, got := goTypeOf(t), w.rawType(p); want != "" && want != got {
		return "want " + want + ", got " + got
	}
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		// BurntSushi would say "incompatible types: TOML value has type
		// string; destination has type integer": name the element.
		var raw []any
		if w.doc.md.PrimitiveDecode(p, &raw) == nil {
			want := goTypeOf(t.Elem())
			for i, e := range raw {
				if got := tomlTypeOf(e); want != "" && !compatible(want, got) {
					return fmt.Sprintf("want an array of %s, but element %d is %s", plural(want), i, got)
				}
			}
		}
	}
	msg := strings.TrimPrefix(err.Error(), "toml: ")
	if _, rest, ok := strings.Cut(msg, "): "); ok {
		msg = rest
	}
	return msg
}

// goTypeOf names the TOML type a Go type wants, as tomlTypeOf does, or ""
// when it is not obvious.
func goTypeOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Float32, reflect.Float64:
		return "a number" // integers decode into floats, so never reached with one
	case reflect.Map, reflect.Struct:
		return "a table"
	}
	return "" // interfaces take anything
}

// compatible reports whether a TOML value of type got (as tomlTypeOf names
// it) decodes into a field that wants want (as goTypeOf names it).
func compatible(want, got string) bool {
	return want == got || want == "a number" && (got == "a float" || got == "an integer")
}

// plural turns "an integer" into "integers" for messages about arrays.
func plural(what string) string {
	_, noun, _ := strings.Cut(what, " ")
	return noun + "s"
}

// fieldInfo is a struct field as the decoder sees it.
type fieldInfo struct {
	name   string // TOML key: the toml tag's name, else the Go name
	index  []int  // for reflect.Value.FieldByIndex
	signed bool   // tagged ftsim:"signed": negative integers allowed
}

// structFields lists the decodable fields of struct type t, with embedded
// exported structs flattened as BurntSushi does.
func structFields(t reflect.Type) []fieldInfo {
	var fs []fieldInfo
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct && !unmarshaler(f.Type) {
			for _, sub := range structFields(f.Type) {
				sub.index = append([]int{i}, sub.index...)
				fs = append(fs, sub)
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		signed := slices.Contains(strings.Split(f.Tag.Get("ftsim"), ","), "signed")
		fs = append(fs, fieldInfo{name: name, index: []int{i}, signed: signed})
	}
	return fs
}

// lookupField finds the field named exactly k.
func lookupField(fs []fieldInfo, k string) (fieldInfo, bool) {
	for _, f := range fs {
		if f.name == k {
			return f, true
		}
	}
	return fieldInfo{}, false
}

// suggest returns a "did you mean" hint for an unknown key k: the field
// whose name differs only in case, or by at most two edits.
func suggest(k string, fs []fieldInfo) string {
	best, bestDist := "", 3
	for _, f := range fs {
		if strings.EqualFold(f.name, k) {
			return fmt.Sprintf(" (did you mean %q?)", f.name)
		}
		if d := editDistance(k, f.name); d < bestDist && d < len(k) {
			best, bestDist = f.name, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b)) // not worth comparing; keeps it cheap
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// unmarshaler reports whether t (or *t) decodes itself.
func unmarshaler(t reflect.Type) bool {
	for _, i := range []reflect.Type{reflect.TypeFor[toml.Unmarshaler](), reflect.TypeFor[encoding.TextUnmarshaler]()} {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	return t == reflect.TypeFor[toml.Primitive]()
}

// integer reports whether t is a plain integer type, or a slice, array or
// pointer of them; types that decode themselves (Duration, Size) check
// their own sign.
func integer(t reflect.Type) bool {
	for {
		if unmarshaler(t) {
			return false
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array, reflect.Pointer:
			t = t.Elem()
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return true
		default:
			return false
		}
	}
}

// float reports whether t is a float type, or a slice, array or pointer of
// them.
func float(t reflect.Type) bool {
	for {
		switch t.Kind() {
		case reflect.Slice, reflect.Array, reflect.Pointer:
			t = t.Elem()
		case reflect.Float32, reflect.Float64:
			return true
		default:
			return false
		}
	}
}

// firstNonFinite returns the first NaN or infinity in a raw TOML value.
func firstNonFinite(raw any) (float64, bool) {
	switch v := raw.(type) {
	case float64:
		return v, math.IsNaN(v) || math.IsInf(v, 0)
	case []any:
		for _, e := range v {
			if x, ok := firstNonFinite(e); ok {
				return x, true
			}
		}
	}
	return 0, false
}

// firstNegative returns the first negative integer in a raw TOML value.
func firstNegative(raw any) (int64, bool) {
	switch v := raw.(type) {
	case int64:
		return v, v < 0
	case []any:
		for _, e := range v {
			if n, ok := firstNegative(e); ok {
				return n, true
			}
		}
	}
	return 0, false
}

// childKey returns key extended by k, never sharing key's backing array.
func childKey(key toml.Key, k string) toml.Key {
	return append(key[:len(key):len(key)], k)
}

// childName returns the printed dotted key of k under name, quoting k when
// TOML needs it.
func childName(name, k string) string {
	k = toml.Key{k}.String()
	if name == "" {
		return k
	}
	return name + "." + k
}
