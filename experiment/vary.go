package experiment

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// This file holds what a sweep varies: keys, linked keys and their values,
// and the points they make.

// Vary is one varied scenario key and its values, in the order given on the
// command line (--vary key=v1,v2,...). Values are override texts, exactly as
// --set takes them (cpr, 5y, 256, [2, 2]).
//
// Linked keys, "k1|k2=a1|a2,b1|b2", take their values together instead of
// forming a product: the first point sets k1=a1 and k2=a2, the second
// k1=b1 and k2=b2 (a weak-scaling sweep varies the nodes and the problem
// size so). A value without "|" goes to every linked key: "k1|k2=2,16"
// sets both to 2, then both to 16.
type Vary struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// linkSep separates linked keys, and their values.
const linkSep = "|"

// Keys returns the keys v sets: its key, or its linked keys.
func (v Vary) Keys() []string { return strings.Split(v.Key, linkSep) }

// settings returns the settings of v's value val, one per key.
func (v Vary) settings(val string) []Setting {
	keys := v.Keys()
	if len(keys) == 1 {
		return []Setting{{v.Key, val}}
	}
	vals := splitTop(val, '|')
	out := make([]Setting, len(keys))
	for i, k := range keys {
		out[i] = Setting{k, vals[min(i, len(vals)-1)]}
	}
	return out
}

// overlaps reports whether v and w vary a key in common.
func (v Vary) overlaps(w Vary) bool {
	return slices.ContainsFunc(v.Keys(), func(k string) bool { return slices.Contains(w.Keys(), k) })
}

// ParseVary parses "key=v1,v2,..." or linked keys "k1|k2=a1|a2,b1|b2".
// Commas and bars inside brackets, braces or quotes do not split, so array
// and table values can be varied too (workload.grid=[2,2],[4,4]).
func ParseVary(text string) (Vary, error) {
	v, err := parseVary(text)
	if err != nil {
		return Vary{}, fmt.Errorf("--vary %s: %w", text, err)
	}
	return v, nil
}

// parseVary is ParseVary with errors that do not name their source, so
// that those of a scenario's [sweep] vary list can name their entry.
func parseVary(text string) (Vary, error) {
	key, vals, ok := strings.Cut(text, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return Vary{}, errors.New("want key=v1,v2,... such as cluster.nodes=64,128")
	}
	keys := strings.Split(key, linkSep)
	for i, k := range keys {
		keys[i] = strings.TrimSpace(k)
		switch {
		case keys[i] == "":
			return Vary{}, fmt.Errorf("empty key in %q", key)
		case len(keys) > 1 && (keys[i] == ProtocolKey || keys[i] == "protocol.kind"):
			return Vary{}, fmt.Errorf("%s cannot be linked: protocols are compared across its values, so vary it apart", keys[i])
		case slices.Contains(keys[:i], keys[i]):
			return Vary{}, fmt.Errorf("key %s linked twice", keys[i])
		}
	}
	v := Vary{Key: strings.Join(keys, linkSep)}
	seen := map[string]bool{}
	for _, x := range splitTop(vals, ',') {
		switch {
		case x == "":
			return Vary{}, errors.New("empty value")
		case seen[x]:
			return Vary{}, fmt.Errorf("value %q given twice", x)
		}
		seen[x] = true
		if len(keys) > 1 {
			parts := splitTop(x, '|')
			if n := len(parts); n != 1 && n != len(keys) {
				return Vary{}, fmt.Errorf("value %q has %d parts for %d linked keys: give one part, or one per key", x, n, len(keys))
			}
			if slices.Contains(parts, "") {
				return Vary{}, fmt.Errorf("value %q has an empty part", x)
			}
		}
		v.Values = append(v.Values, x)
	}
	return v, nil
}

// splitTop splits s at each sep outside brackets, braces and quotes, and
// trims the parts.
func splitTop(s string, sep rune) []string {
	var out []string
	depth, quote, start := 0, rune(0), 0
	for i, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == sep && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// String returns the vary in the form ParseVary reads.
func (v Vary) String() string { return v.Key + "=" + strings.Join(v.Values, ",") }

// Setting is one key=value of a sweep point.
type Setting struct {
	Key, Value string
}

// String returns "key=value", the override text.
func (s Setting) String() string { return s.Key + "=" + s.Value }

// PointID names a point by its settings, "k1=v1;k2=v2" in the order the keys
// were varied. It is the point column of the result store, so it must stay
// stable: the same varies always give the same IDs.
func PointID(settings []Setting) string {
	parts := make([]string, len(settings))
	for i, s := range settings {
		parts[i] = s.String()
	}
	return strings.Join(parts, ";")
}

// Product returns the settings of every point of the cartesian product of
// varies, the first key outermost and values in the order given, so the
// point order is a pure function of the command line. No varies give one
// point with no settings.
func Product(varies []Vary) [][]Setting {
	out := [][]Setting{nil}
	for _, v := range varies {
		next := make([][]Setting, 0, len(out)*len(v.Values))
		for _, prefix := range out {
			for _, val := range v.Values {
				p := append(append([]Setting(nil), prefix...), v.settings(val)...)
				next = append(next, p)
			}
		}
		out = next
	}
	return out
}

// withValue returns the settings of the point where varies[k] takes value
// val and the other varies the settings others (one of Product of varies
// without varies[k]).
func withValue(varies []Vary, k int, others []Setting, val string) []Setting {
	at := 0
	for _, v := range varies[:k] {
		at += len(v.Keys())
	}
	return slices.Insert(slices.Clone(others), at, varies[k].settings(val)...)
}

// PointIDs returns the IDs of the points of varies, in sweep order.
func PointIDs(varies []Vary) []string {
	prod := Product(varies)
	ids := make([]string, len(prod))
	for i, p := range prod {
		ids[i] = PointID(p)
	}
	return ids
}
