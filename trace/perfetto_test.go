package trace

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"ftsim/sim"
)

// The writer produces one JSON document with named processes, and caps the
// number of messages traced.
func TestWriterDocument(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, 2)
	w.Task(3, 1, 1000, 2500, "compute")
	for i := 0; i < 5; i++ {
		w.Message(&sim.Message{From: 3, To: 4, Src: 1, Dst: 2, Size: 64, SentAt: sim.Time(3000 + i)}, sim.Time(5000+i))
	}
	w.Instant(4, 6000, "failure")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Unit   string           `json:"displayTimeUnit"`
		Events []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	count := map[string]int{}
	for _, e := range doc.Events {
		count[e["ph"].(string)]++
	}
	// 2 nodes × 6 metadata events (process name and order, name and order of
	// 2 tracks); 1 task + 2 messages × 2 slices; 2 flows × (s, f); 1 failure
	// and the mark of the message cap
	want := map[string]int{"M": 12, "X": 5, "s": 2, "f": 2, "i": 2}
	for ph, n := range want {
		if count[ph] != n {
			t.Errorf("%d %q events, want %d (%v)", count[ph], ph, n, count)
		}
	}
	for _, e := range doc.Events {
		if e["name"] == "compute" {
			if ts := e["ts"].(float64); ts != 1 { // 1000 ns = 1 µs
				t.Errorf("task at %v µs, want 1", ts)
			}
		}
	}
}

// slice is an "X" event in integer nanoseconds, as Perfetto reads it.
type slice struct {
	pid, tid   int
	start, end int64
	name       string
}

// decode parses a trace and returns its events and its slices.
func decode(t *testing.T, b []byte) ([]map[string]any, []slice) {
	t.Helper()
	var doc struct {
		Events []map[string]any `json:"traceEvents"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	ns := func(v any) int64 {
		r, ok := new(big.Rat).SetString(string(v.(json.Number)))
		if !ok {
			t.Fatalf("bad time %v", v)
		}
		r.Mul(r, big.NewRat(1000, 1))
		if !r.IsInt() {
			t.Fatalf("time %v µs is not a whole number of ns", v)
		}
		return r.Num().Int64()
	}
	num := func(v any) int {
		i, err := v.(json.Number).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return int(i)
	}
	var sl []slice
	for _, e := range doc.Events {
		if e["ph"] == "X" {
			s := ns(e["ts"])
			sl = append(sl, slice{num(e["pid"]), num(e["tid"]), s, s + ns(e["dur"]), e["name"].(string)})
		}
	}
	return doc.Events, sl
}

// Perfetto requires the slices of a thread track to nest: two that
// partially overlap are drawn wrong or dropped. Concurrent messages of a
// node (their sends used to last until delivery) and tasks of a node's
// several cores used to overlap on the one network and CPU tracks.
func TestSlicesNest(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, 0)
	// two cores of node 1: tasks overlapping, reported as they end
	w.Task(1, 0, 0, 3000, "compute")
	w.Task(1, 1, 1000, 4000, "compute")
	w.Task(1, 2, 3000, 5000, "compute")
	w.Task(1, sim.None, 500, 6000, "recovery") // a span reported at its end
	// messages in flight together from node 1
	w.Message(&sim.Message{From: 1, To: 2, Src: 0, Dst: 5, Size: 64, SentAt: 1000}, 5000)
	w.Message(&sim.Message{From: 1, To: 3, Src: 1, Dst: 6, Size: 64, SentAt: 2000}, 7000)
	w.Message(&sim.Message{From: 2, To: 1, Src: 5, Dst: 0, Size: 64, SentAt: 2500}, 4500)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, sl := decode(t, buf.Bytes())
	for i, a := range sl {
		for _, b := range sl[i+1:] {
			if a.pid != b.pid || a.tid != b.tid {
				continue
			}
			disjoint := a.end <= b.start || b.end <= a.start
			nested := (a.start <= b.start && b.end <= a.end) || (b.start <= a.start && a.end <= b.end)
			if !disjoint && !nested {
				t.Errorf("pid %d tid %d: %s [%d, %d] and %s [%d, %d] overlap", a.pid, a.tid, a.name, a.start, a.end, b.name, b.start, b.end)
			}
		}
	}
	// every task is there, whole
	var cpu int64
	for _, s := range sl {
		if s.name == "compute" || s.name == "recovery" {
			cpu += s.end - s.start
		}
	}
	if cpu != 3000+3000+2000+5500 {
		t.Errorf("tasks last %d ns in all, want %d", cpu, 3000+3000+2000+5500)
	}
}

// Node 0 is not process 0, which Perfetto reserves (the idle "swapper"
// process of Linux traces); every process and thread used has a name.
func TestProcessesAndThreadsNamed(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, 0)
	w.Task(0, 0, 0, 3000, "compute")
	w.Task(0, 1, 1000, 2000, "compute") // a second core
	w.Message(&sim.Message{From: 0, To: 1, Src: sim.None, Dst: sim.None, Size: 64, Control: true, SentAt: 1000}, 2000)
	w.Instant(1, 2500, "failure")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	evs, _ := decode(t, buf.Bytes())
	procs := map[string]string{}
	threads := map[[2]string]string{}
	for _, e := range evs {
		pid := string(e["pid"].(json.Number))
		if pid == "0" {
			t.Errorf("event on pid 0: %v", e)
		}
		if e["ph"] != "M" {
			continue
		}
		name := e["args"].(map[string]any)["name"]
		switch e["name"] {
		case "process_name":
			procs[pid] = name.(string)
		case "thread_name":
			threads[[2]string{pid, string(e["tid"].(json.Number))}] = name.(string)
		}
	}
	for _, e := range evs {
		if e["ph"] == "M" {
			continue
		}
		pid := string(e["pid"].(json.Number))
		if procs[pid] == "" {
			t.Errorf("process %s has no name", pid)
		}
		if tid, ok := e["tid"].(json.Number); ok && threads[[2]string{pid, string(tid)}] == "" && e["ph"] != "i" {
			t.Errorf("thread %s of process %s has no name", tid, pid)
		}
		if strings.Contains(e["name"].(string), "-1") {
			t.Errorf("event named after no object: %q", e["name"])
		}
	}
	if procs["1"] != "node 0" || procs["2"] != "node 1" {
		t.Errorf("processes %v, want node 0 as 1, node 1 as 2", procs)
	}
}

// Past the message cap the trace says that it stops showing messages, so
// that a reader does not take their absence for silence.
func TestMessageCapMarked(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, 1)
	for i := 0; i < 3; i++ {
		w.Message(&sim.Message{From: 1, To: 2, Src: 1, Dst: 2, Size: 64, SentAt: sim.Time(1000 * i)}, sim.Time(1000*i+500))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	evs, _ := decode(t, buf.Bytes())
	n := 0
	for _, e := range evs {
		if e["ph"] == "i" && strings.Contains(e["name"].(string), "limit") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d limit markers, want 1", n)
	}
}
