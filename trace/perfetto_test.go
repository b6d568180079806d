package trace

import (
	"bytes"
	"encoding/json"
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
	// 2 nodes × 4 metadata events; 1 task + 2 messages × 2 spans; 2 flows × (s, f); 1 instant
	want := map[string]int{"M": 8, "X": 5, "s": 2, "f": 2, "i": 1}
	for ph, n := range want {
		if count[ph] != n {
			t.Errorf("%d %q events, want %d (%v)", count[ph], ph, n, count)
		}
	}
	if ts := doc.Events[4]["ts"].(float64); ts != 1 { // 1000 ns = 1 µs
		t.Errorf("task at %v µs, want 1", ts)
	}
}
