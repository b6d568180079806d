package experiment

import (
	"bytes"
	"encoding/json"
	"testing"

	"ftsim/scenarios"
)

// The trace is one valid JSON document in the Chrome trace event format with
// a process per node, CPU and network spans, flow arrows, checkpoint spans and
// the failure and its detection; tracing changes nothing in the record.
func TestTraceIsValidChromeFormat(t *testing.T) {
	s, err := scenarios.Parse("t.toml", []byte(small), []string{"protocol.kind=cpr", `protocol.interval="fixed"`,
		`protocol.period="200ms"`, "failures.distribution=scripted", "failures.scripted=[{node=1, progress=0.5}]"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec, err := p.Trace(0, &buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := p.Run(0)
	if string(rec.JSON()) != string(plain.JSON()) {
		t.Fatal("tracing changed the run")
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	seen := map[string]int{}
	for _, e := range doc.TraceEvents {
		seen[e["ph"].(string)+" "+e["name"].(string)]++
	}
	for _, want := range []string{"M process_name", "X compute", "X checkpoint", "X recovery", "i failure", "i failure detected"} {
		if seen[want] == 0 {
			t.Errorf("no %q event", want)
		}
	}
	flows := 0
	for k, n := range seen {
		if k[0] == 's' {
			flows += n
		}
	}
	if flows == 0 {
		t.Error("no flow arrow from a send to its receive")
	}
}
