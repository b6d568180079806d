// Package trace writes a run's timeline in the Chrome trace event format, which
// ui.perfetto.dev and chrome://tracing open: a process per node, a CPU track
// (handlers, protocol work, checkpoints, recoveries; more tracks where tasks
// overlap) and a network track (sends and receives) in each, flow arrows from
// each send to its receive, and instant events for failures and detections —
// the picture of the DPS paper's Fig. 9.
package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"ftsim/sim"
)

// Thread ids within a node's process: the first CPU track, the network
// track, then the CPU tracks added for overlapping tasks (several cores).
const (
	cpuTrack = 1
	netTrack = 2
)

// Writer streams trace events to w. It implements sim.Tracer. Events are
// written as they happen, one per line, so a trace of a long run is never held
// in memory; Close ends the JSON document.
//
// Node n is process n+1: Perfetto reserves process 0 for the idle process of
// Linux traces. Perfetto requires the slices of a thread track to nest, so a
// task that starts before the last of a CPU track ended (on a node's several
// cores, or a recovery reported after the work it spans) goes to another CPU
// track, and a message is a one-nanosecond slice at its send and one at its
// receive, joined by the flow arrow: slices lasting until delivery overlapped
// whenever a node had two messages in flight.
type Writer struct {
	w       *bufio.Writer
	err     error
	first   bool
	flows   uint64
	nodes   map[sim.NodeID]*lanes
	maxMsg  int64 // messages traced at most (0 = all): traces of big runs stay loadable
	msgs    int64
	dropped bool // a message past maxMsg was left out, and the trace says so
}

// lanes are the ends of the last task on each CPU track of a node.
type lanes struct{ ends []sim.Time }

// NewWriter starts a trace on w. maxMessages caps the number of messages traced
// (0 = no cap); tasks, failures and detections are always traced.
func NewWriter(w io.Writer, maxMessages int64) *Writer {
	t := &Writer{w: bufio.NewWriterSize(w, 1<<16), first: true, nodes: map[sim.NodeID]*lanes{}, maxMsg: maxMessages}
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

// pid is node n's process id.
func pid(n sim.NodeID) int64 { return int64(n) + 1 }

// node names node n's process and tracks the first time it is seen.
func (t *Writer) node(n sim.NodeID) *lanes {
	if l := t.nodes[n]; l != nil {
		return l
	}
	l := &lanes{ends: []sim.Time{0}}
	t.nodes[n] = l
	t.event(map[string]any{"ph": "M", "name": "process_name", "pid": pid(n), "args": map[string]any{"name": fmt.Sprintf("node %d", n)}})
	t.event(map[string]any{"ph": "M", "name": "process_sort_index", "pid": pid(n), "args": map[string]any{"sort_index": n}})
	t.thread(n, cpuTrack, "CPU", 0)
	t.thread(n, netTrack, "network", 1<<20) // below every CPU track
	return l
}

// thread names a track of node n and places it among the node's tracks.
func (t *Writer) thread(n sim.NodeID, tid int, name string, order int) {
	t.event(map[string]any{"ph": "M", "name": "thread_name", "pid": pid(n), "tid": tid, "args": map[string]any{"name": name}})
	t.event(map[string]any{"ph": "M", "name": "thread_sort_index", "pid": pid(n), "tid": tid, "args": map[string]any{"sort_index": order}})
}

// cpuTid returns the CPU track of node n for a task from start to end: the
// first whose last task ended by start, or a new one. Tasks are reported as
// they end, so this keeps each track's tasks apart.
func (t *Writer) cpuTid(n sim.NodeID, start, end sim.Time) int {
	l := t.node(n)
	i := 0
	for i < len(l.ends) && l.ends[i] > start {
		i++
	}
	if i == len(l.ends) {
		l.ends = append(l.ends, 0)
		t.thread(n, laneTid(i), fmt.Sprintf("CPU %d", i+1), i)
	}
	l.ends[i] = end
	return laneTid(i)
}

// laneTid is the thread id of CPU track i (0 is the first).
func laneTid(i int) int {
	if i == 0 {
		return cpuTrack
	}
	return netTrack + i
}

// Task records CPU work on node n from start to end: a handler of object obj
// (obj ≥ 0) or protocol work (obj = sim.None) named what.
func (t *Writer) Task(n sim.NodeID, obj sim.ObjID, start, end sim.Time, what string) {
	tid := t.cpuTid(n, start, end)
	args := map[string]any{}
	if obj >= 0 {
		args["object"] = obj
	}
	t.event(map[string]any{"ph": "X", "cat": "cpu", "name": what, "pid": pid(n), "tid": tid,
		"ts": us(start), "dur": us(end - start), "args": args})
}

// Message records a message: a slice at its send and one at its delivery,
// with a flow arrow between the two.
func (t *Writer) Message(m *sim.Message, delivered sim.Time) {
	if t.maxMsg > 0 && t.msgs >= t.maxMsg {
		if !t.dropped {
			t.dropped = true
			t.node(m.To)
			t.event(map[string]any{"ph": "i", "s": "g", "cat": "trace", "pid": pid(m.To), "tid": netTrack, "ts": us(delivered),
				"name": fmt.Sprintf("message trace limit reached: later messages not traced (%d traced)", t.msgs)})
		}
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
	if m.Src < 0 || m.Dst < 0 { // between nodes, not objects
		name = fmt.Sprintf("%s node %d→%d", kind, m.From, m.To)
	}
	args := map[string]any{"bytes": m.WireSize(), "tag": m.Tag, "latency_us": us(delivered - m.SentAt)}
	t.event(map[string]any{"ph": "X", "cat": "net", "name": "send " + name, "pid": pid(m.From), "tid": netTrack,
		"ts": us(m.SentAt), "dur": us(1), "args": args})
	t.event(map[string]any{"ph": "s", "cat": "flow", "name": name, "id": t.flows, "pid": pid(m.From), "tid": netTrack, "ts": us(m.SentAt)})
	t.event(map[string]any{"ph": "X", "cat": "net", "name": "receive " + name, "pid": pid(m.To), "tid": netTrack,
		"ts": us(delivered), "dur": us(1), "args": args})
	t.event(map[string]any{"ph": "f", "bp": "e", "cat": "flow", "name": name, "id": t.flows, "pid": pid(m.To), "tid": netTrack, "ts": us(delivered)})
}

// Instant records a point event on node n (a failure, a detection).
func (t *Writer) Instant(n sim.NodeID, at sim.Time, what string) {
	t.node(n)
	t.event(map[string]any{"ph": "i", "s": "p", "cat": "fault", "name": what, "pid": pid(n), "tid": cpuTrack, "ts": us(at)})
}

// Close ends the document and flushes it; it returns the first write error.
func (t *Writer) Close() error {
	t.raw("]}\n")
	if t.err == nil {
		t.err = t.w.Flush()
	}
	return t.err
}
