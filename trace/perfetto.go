// Package trace writes a run's timeline in the Chrome trace event format, which
// ui.perfetto.dev and chrome://tracing open: a process per node, a CPU track
// (handlers, protocol work, checkpoints) and a network track (sends and
// receives) in each, flow arrows from each send to its receive, and instant
// events for failures and detections — the picture of the DPS paper's Fig. 9.
package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"ftsim/sim"
)

// Thread ids within a node's process.
const (
	cpuTrack = 1
	netTrack = 2
)

// Writer streams trace events to w. It implements sim.Tracer. Events are
// written as they happen, one per line, so a trace of a long run is never held
// in memory; Close ends the JSON document.
type Writer struct {
	w      *bufio.Writer
	err    error
	first  bool
	flows  uint64
	named  map[sim.NodeID]bool
	maxMsg int64 // messages traced at most (0 = all): traces of big runs stay loadable
	msgs   int64
}

// NewWriter starts a trace on w. maxMessages caps the number of messages traced
// (0 = no cap); tasks, failures and detections are always traced.
func NewWriter(w io.Writer, maxMessages int64) *Writer {
	t := &Writer{w: bufio.NewWriterSize(w, 1<<16), first: true, named: map[sim.NodeID]bool{}, maxMsg: maxMessages}
	t.raw(`{"displayTimeUnit":"ns","traceEvents":[`)
	return t
}

func (t *Writer) raw(s string) {
	if t.err == nil {
		_, t.err = t.w.WriteString(s)
	}
}

// event writes one JSON object.
func (t *Writer) event(fields map[string]any) {
	b, err := json.Marshal(fields)
	if err != nil {
		t.err = err
		return
	}
	if !t.first {
		t.raw(",\n")
	}
	t.first = false
	t.raw(string(b))
}

// us converts simulated time to the format's microseconds, keeping nanoseconds
// as decimals.
func us(x sim.Time) json.Number {
	return json.Number(strconv.FormatFloat(float64(x)/1e3, 'f', -1, 64))
}

func (t *Writer) node(n sim.NodeID) {
	if t.named[n] {
		return
	}
	t.named[n] = true
	t.event(map[string]any{"ph": "M", "name": "process_name", "pid": n, "args": map[string]any{"name": fmt.Sprintf("node %d", n)}})
	t.event(map[string]any{"ph": "M", "name": "process_sort_index", "pid": n, "args": map[string]any{"sort_index": n}})
	t.event(map[string]any{"ph": "M", "name": "thread_name", "pid": n, "tid": cpuTrack, "args": map[string]any{"name": "CPU"}})
	t.event(map[string]any{"ph": "M", "name": "thread_name", "pid": n, "tid": netTrack, "args": map[string]any{"name": "network"}})
}

// Task records CPU work on node n from start to end: a handler of object obj
// (obj ≥ 0) or protocol work (obj = sim.None) named what.
func (t *Writer) Task(n sim.NodeID, obj sim.ObjID, start, end sim.Time, what string) {
	t.node(n)
	args := map[string]any{}
	if obj >= 0 {
		args["object"] = obj
	}
	t.event(map[string]any{"ph": "X", "cat": "cpu", "name": what, "pid": n, "tid": cpuTrack,
		"ts": us(start), "dur": us(end - start), "args": args})
}

// Message records a message from its send to its delivery, with a flow arrow
// between the two.
func (t *Writer) Message(m *sim.Message, delivered sim.Time) {
	if t.maxMsg > 0 && t.msgs >= t.maxMsg {
		return
	}
	t.msgs++
	t.node(m.From)
	t.node(m.To)
	t.flows++
	kind := "app"
	if m.Control {
		kind = "protocol"
	}
	name := fmt.Sprintf("%s %d→%d", kind, m.Src, m.Dst)
	args := map[string]any{"bytes": m.WireSize(), "tag": m.Tag}
	t.event(map[string]any{"ph": "X", "cat": "net", "name": "send " + name, "pid": m.From, "tid": netTrack,
		"ts": us(m.SentAt), "dur": us(max(1, delivered-m.SentAt)), "args": args})
	t.event(map[string]any{"ph": "s", "cat": "flow", "name": name, "id": t.flows, "pid": m.From, "tid": netTrack, "ts": us(m.SentAt)})
	t.event(map[string]any{"ph": "X", "cat": "net", "name": "receive " + name, "pid": m.To, "tid": netTrack,
		"ts": us(delivered), "dur": us(1), "args": args})
	t.event(map[string]any{"ph": "f", "bp": "e", "cat": "flow", "name": name, "id": t.flows, "pid": m.To, "tid": netTrack, "ts": us(delivered)})
}

// Instant records a point event on node n (a failure, a detection).
func (t *Writer) Instant(n sim.NodeID, at sim.Time, what string) {
	t.node(n)
	t.event(map[string]any{"ph": "i", "s": "p", "cat": "fault", "name": what, "pid": n, "tid": cpuTrack, "ts": us(at)})
}

// Close ends the document and flushes it; it returns the first write error.
func (t *Writer) Close() error {
	t.raw("]}\n")
	if t.err == nil {
		t.err = t.w.Flush()
	}
	return t.err
}
