package scenarios

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// Load reads the scenario file at path, applies overrides (see Set) in
// order, and validates the result. Errors are *Error values naming the
// file, line and key. Relative paths in the file (failures.trace_file, and
// a workload's files through Scenario.Resolve) resolve against the file's
// directory.
func Load(path string, overrides []string) (*Scenario, error) {
	data, err := readFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is already in Error.File
		}
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return parse(path, filepath.Dir(path), data, overrides)
}

// MaxFileBytes bounds a scenario file. Scenarios are a few kilobytes; the
// bound keeps a wrong path (a disk image, /dev/zero) from exhausting
// memory before the TOML parser can object.
const MaxFileBytes = 64 << 20

// readFile reads at most MaxFileBytes of the file at path.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d MiB: not a scenario file", MaxFileBytes>>20)
	}
	return data, nil
}

// Parse is Load for a scenario already in memory; name is what errors
// print. The scenario has no directory, so relative paths in it stay
// relative to the working directory.
func Parse(name string, data []byte, overrides []string) (*Scenario, error) {
	return parse(name, "", data, overrides)
}

// parse implements Load and Parse.
func parse(name, dir string, data []byte, overrides []string) (*Scenario, error) {
	s := Default()
	s.File, s.Dir = name, dir
	if err := s.apply(source{file: name}, string(data)); err != nil {
		return nil, err
	}
	for _, o := range overrides {
		if err := s.set(o); err != nil {
			return nil, err
		}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Set applies one override, "dotted.key=value", on top of what s holds,
// as the command line's --set does. The value is a TOML value (5, 1.5,
// true, "x", [2, 2], {node = 1, at = "3s"}); text that is not valid TOML
// is taken as a string, so failures.node_mtbf=5y and workload.kind=life
// need no quotes. Setting a section's kind to a different kind drops the
// section's keys set before, which were written for the old kind.
//
// Set checks the key and the value's type and units but not ranges or
// combinations of values: a sweep may need several Sets to reach a valid
// scenario, so call Validate after the last. On error s is unchanged.
func (s *Scenario) Set(override string) error {
	c := s.Clone()
	if err := c.set(override); err != nil {
		return err
	}
	*s = *c
	return nil
}

// set implements Set without the copy that makes it atomic.
func (s *Scenario) set(override string) error {
	key, value, ok := strings.Cut(override, "=")
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if !ok || !bareDottedKey(key) {
		return &Error{File: "--set " + override, Msg: "want key=value, with a dotted key such as cluster.nodes=128"}
	}
	src := source{override: key}
	doc, err := parseDocument(src, key+" = "+value)
	if err != nil && value != "" && strings.ContainsRune(`[{"'`, rune(value[0])) {
		return err // meant as an array, table or string, but malformed
	}
	if err != nil || !singleValue(doc, key) {
		// Not one TOML value: take the text as a string.
		if doc, err = parseDocument(src, key+" = "+quoteTOML(value)); err != nil {
			return err
		}
	}
	return s.decode(doc)
}

// bareDottedKey reports whether key is bare TOML keys joined by dots, the
// only keys overrides take.
func bareDottedKey(key string) bool {
	for part := range strings.SplitSeq(key, ".") {
		if part == "" {
			return false
		}
		for _, c := range part {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				return false
			}
		}
	}
	return true
}

// singleValue reports whether the override document sets only key (and
// keys inside its value), so that a value such as "1\nseed = 2" cannot set
// a second key behind the user's back.
func singleValue(doc *document, key string) bool {
	want := strings.Split(key, ".")
	for _, k := range doc.md.Keys() {
		if len(k) < len(want) || !slices.Equal(k[:len(want)], want) {
			return false
		}
	}
	return true
}

// quoteTOML returns s as a TOML basic string.
func quoteTOML(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// apply parses text and decodes it on top of s.
func (s *Scenario) apply(src source, text string) error {
	doc, err := parseDocument(src, text)
	if err != nil {
		return err
	}
	return s.decode(doc)
}

// decode decodes a parsed document on top of s: keys it does not set keep
// their values.
func (s *Scenario) decode(doc *document) error {
	if s.origins == nil {
		s.origins = map[string]origin{}
	}
	w := walker{doc: doc, origins: s.origins}
	if err := w.fields(node{}, doc.top, reflect.ValueOf(s).Elem()); err != nil {
		return err
	}
	if doc.src.override == "" && doc.md.IsDefined("failures", "trace_file") {
		s.Failures.TraceFile = s.Resolve(s.Failures.TraceFile)
	}
	return nil
}
