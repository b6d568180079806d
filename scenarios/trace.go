package scenarios

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
)

// TraceFailure is one failure read from a trace file.
type TraceFailure struct {
	Node int      // failing node, ≥ 0
	At   Duration // simulated time of the failure
	Line int      // line of the trace file, for error messages
}

// maxTraceLine bounds one line of a trace file.
const maxTraceLine = 1 << 20

// LoadTrace reads a failure trace file (the "trace" distribution): text
// with one failure per line, "node time", where time is a number of
// seconds or a duration with units ("3600", "1.5h"). Columns may be
// separated by spaces, tabs or a comma; "#" starts a comment; blank lines
// are ignored; the first line may be a header "node,time". Failures are
// returned ordered by time (file order among equal times). Errors are
// *Error values naming the file and line.
func LoadTrace(path string) ([]TraceFailure, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{File: path, Msg: err.Error()}
	}
	defer f.Close()
	return ParseTrace(path, f)
}

// ParseTrace is LoadTrace for a trace from any reader; name is what errors
// print.
func ParseTrace(name string, r io.Reader) ([]TraceFailure, error) {
	var out []TraceFailure
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxTraceLine)
	line, seen := 0, false
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		cols := traceColumns(text)
		first := !seen
		seen = true
		if first && len(cols) == 2 && strings.EqualFold(cols[0], "node") && strings.EqualFold(cols[1], "time") {
			continue // header
		}
		if len(cols) != 2 {
			return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("want 2 columns (node, time), got %d", len(cols))}
		}
		node, err := strconv.ParseInt(cols[0], 10, 64)
		if err != nil || node < 0 || node > MaxNodes {
			return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("node %q: want an integer in [0, %d]", cols[0], MaxNodes)}
		}
		at, err := ParseDuration(cols[1])
		if err != nil {
			return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("time: %v", err)}
		}
		out = append(out, TraceFailure{Node: int(node), At: at, Line: line})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line longer than %d bytes", maxTraceLine)
		}
		return nil, &Error{File: name, Line: line + 1, Msg: err.Error()}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out, nil
}

// traceColumns splits a trace line on a comma when it has one, else on
// spaces and tabs.
func traceColumns(text string) []string {
	if !strings.Contains(text, ",") {
		return strings.Fields(text)
	}
	cols := strings.Split(text, ",")
	for i := range cols {
		cols[i] = strings.TrimSpace(cols[i])
	}
	return cols
}

// Trace loads the scenario's failure trace and checks that every node it
// names exists (node < nodes + spares).
func (s *Scenario) Trace() ([]TraceFailure, error) {
	tr, err := LoadTrace(s.Failures.TraceFile)
	if e, ok := err.(*Error); ok && e.Line == 0 {
		// The file could not be read at all: point at the key naming it.
		return nil, s.errorf("failures.trace_file", "%v", err)
	}
	if err != nil {
		return nil, err
	}
	total := s.Cluster.Nodes + s.Cluster.Spares
	for _, f := range tr {
		if f.Node >= total {
			return nil, &Error{File: s.Failures.TraceFile, Line: f.Line,
				Msg: fmt.Sprintf("node %d does not exist: the cluster has nodes+spares = %d", f.Node, total)}
		}
	}
	return tr, nil
}
