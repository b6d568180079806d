package scenarios

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseTrace(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []TraceFailure
		err  string // the full error; "" for success
	}{
		{"spaces and units", "3 10\n1 1.5h\n", []TraceFailure{{3, 10 * Second, 1}, {1, 90 * Minute, 2}}, ""},
		{"sorted by time, stable", "5 20s\n1 10s\n2 20s\n", []TraceFailure{{1, 10 * Second, 2}, {5, 20 * Second, 1}, {2, 20 * Second, 3}}, ""},
		{"header, commas, tabs, comments", "# a trace\n\nnode,time\n1,2\n2\t3 # late\n  3 , 4.5 \n",
			[]TraceFailure{{1, 2 * Second, 4}, {2, 3 * Second, 5}, {3, 4500 * Millisecond, 6}}, ""},
		{"header any case", "Node, Time\n0 1ms\n", []TraceFailure{{0, Millisecond, 2}}, ""},
		{"empty", "# nothing\n\n", nil, ""},
		{"crlf", "1 2\r\n3 4\r\n", []TraceFailure{{1, 2 * Second, 1}, {3, 4 * Second, 2}}, ""},
		{"header not first", "1 2\nnode time\n", nil, `t.txt:2: node "node": want an integer in [0, 16777216]`},
		{"one column", "1 2\n\n7\n", nil, "t.txt:3: want 2 columns (node, time), got 1"},
		{"three columns", "1 2 3\n", nil, "t.txt:1: want 2 columns (node, time), got 3"},
		{"empty column", "1,,2\n", nil, "t.txt:1: want 2 columns (node, time), got 3"},
		{"negative node", "# c\n-1 5\n", nil, `t.txt:2: node "-1": want an integer in [0, 16777216]`},
		{"huge node", "99999999999999999999 5\n", nil, `t.txt:1: node "99999999999999999999": want an integer in [0, 16777216]`},
		{"float node", "1.5 5\n", nil, `t.txt:1: node "1.5": want an integer in [0, 16777216]`},
		{"negative time", "1 -5\n", nil, `t.txt:1: time: negative duration "-5"`},
		{"garbage time", "1 5parsecs\n", nil, `t.txt:1: time: unknown unit "parsecs" in duration "5parsecs" (want ns, us, ms, s, m, h, d or y)`},
		{"long line", "1 2\n" + strings.Repeat("x", maxTraceLine+1), nil, "t.txt:2: line longer than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTrace("t.txt", strings.NewReader(tc.text))
			if tc.err != "" {
				var e *Error
				if !errors.As(err, &e) || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestLoadTrace(t *testing.T) {
	got, err := LoadTrace("testdata/trace.txt")
	want := []TraceFailure{{2, 10 * Second, 5}, {3, Hour, 3}, {1, 90 * Minute, 4}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("LoadTrace = %v, %v; want %v", got, err, want)
	}
	if _, err := LoadTrace("testdata/none.txt"); err == nil || err.Error() != "testdata/none.txt: no such file or directory" {
		t.Errorf("LoadTrace missing = %v", err)
	}
}

func TestScenarioTrace(t *testing.T) {
	s, err := Load("testdata/full.toml", []string{"failures.distribution=trace", "failures.trace_file=testdata/trace.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := s.Trace(); err != nil || len(tr) != 3 {
		t.Errorf("Trace = %v, %v", tr, err)
	}
	if err := s.Set("cluster.nodes=2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("cluster.spares=1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Trace(); err == nil || err.Error() != "testdata/trace.txt:3: node 3 does not exist: the cluster has nodes+spares = 3" {
		t.Errorf("Trace = %v", err)
	}
	// A trace that cannot be read is blamed on the key naming it, which
	// the error did not name.
	s, err = Parse("x.toml", []byte("[failures]\ndistribution = \"trace\"\ntrace_file = \"testdata/none.txt\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Trace(); err == nil || err.Error() != "x.toml:3: failures.trace_file: testdata/none.txt: no such file or directory" {
		t.Errorf("Trace missing = %v", err)
	}
}

// FuzzLoadTrace checks that no trace text makes the parser panic, that
// every error is an *Error naming the file, and that results are sorted.
func FuzzLoadTrace(f *testing.F) {
	for _, s := range []string{"node,time\n1,2\n", "3 10s\n1 1.5h\n# c\n", "1\t2\n\n", "-1 5", "1 2 3", "x y\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ParseTrace("fuzz.txt", bytes.NewReader(data))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File != "fuzz.txt" {
				t.Fatalf("error %T %v does not name the file", err, err)
			}
			return
		}
		for i, f := range tr {
			if f.Node < 0 || f.At < 0 || (i > 0 && f.At < tr[i-1].At) {
				t.Fatalf("bad trace %v", tr)
			}
		}
	})
}
