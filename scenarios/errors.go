// Package scenarios defines the TOML schema of an ftsim scenario, its units
// (durations, sizes, rates), a strict loader that rejects unknown keys and
// bad values with the file, line and key at fault, command-line overrides,
// kind-specific sections decoded by the workload and protocol packages, and
// the failure trace file format.
package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a problem with user input: a scenario file, an override or a
// trace file. It prints as "file:line: key: message".
type Error struct {
	// File names the input: a file name as given to Load or Parse, or
	// "--set key" for an override. Empty when the input has no name.
	File string
	// Line is the 1-based line in File, or 0 when there is no line to
	// point at (overrides, values set programmatically).
	Line int
	// Key is the full dotted key at fault ("cluster.nodes",
	// "failures.scripted[1]"), or empty for syntax errors.
	Key string
	// Msg says what is wrong.
	Msg string
}

// Error formats the error as "file:line: key: msg". The line is omitted when
// it is 0, and the key when the location or the message already names it,
// so that messages read `x.toml:12: unknown key "workload.widht"` rather
// than repeating the key.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Key != "" && !e.keyNamed() {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// keyNamed reports whether the file or the message already names e.Key,
// quoted or as the message's subject ("workload.width and height must
// ...", "workload.offset must be [x, y]").
func (e *Error) keyNamed() bool {
	if e.File == "--set "+e.Key || strings.Contains(e.Msg, strconv.Quote(e.Key)) {
		return true
	}
	rest, ok := strings.CutPrefix(e.Msg, e.Key)
	if !ok {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return rest != "" && !isKeyRune(r) && r != '['
}

// source says where a TOML document came from, so that errors can point
// at it.
type source struct {
	file     string // file name for errors; used when override is empty
	override string // key of a --set override, empty for files
}

// errorf builds an *Error located at line of the source. Overrides have no
// lines: they are named "--set key" instead.
func (src source) errorf(line int, key, format string, args ...any) *Error {
	e := &Error{File: src.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
	if src.override != "" {
		e.File, e.Line = "--set "+src.override, 0
	}
	return e
}

// origin records where a key got its current value, for errors found after
// decoding (validation).
type origin struct {
	src  source
	line int
}
