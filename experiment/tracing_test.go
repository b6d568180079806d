package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"testing"

	"ftsim/scenarios"
	"ftsim/sim"
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

// Every workload under every protocol variant, with failures (a node MTBF
// of 4 fault-free runs), traces a valid timeline that changes nothing in the
// record (see checkTrace): by default 1 seed per case on a two-core machine
// without spares and with heartbeats; FTSIM_SEARCH=1 runs 8 seeds, there and
// on a one-core machine with spares and immediate detection.
func TestTraceEveryProtocol(t *testing.T) {
	t.Parallel()
	seeds := searchSize(1, 8)
	clusters := searchClusters[2:3]
	if seeds > 1 {
		clusters = [][]string{searchClusters[1], searchClusters[2]}
	}
	runs, failures := 0, 0
	searchCases(searchWorkloads, searchProtocols, clusters, func(c searchCase) {
		for seed := 1; seed <= seeds; seed++ {
			name := fmt.Sprintf("%s, seed %d", c, seed)
			p, ff := c.prepare(t, seed, "failures.distribution=exponential")
			p.Scenario.Failures.NodeMTBF = scenarios.Duration(4 * ff)
			var buf bytes.Buffer
			traced, err := p.Trace(0, &buf, 0)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			plain, err := p.Run(0)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if string(traced.JSON()) != string(plain.JSON()) {
				t.Errorf("%s: tracing changed the run:\n%s\n%s", name, traced.JSON(), plain.JSON())
			}
			if err := checkTrace(buf.Bytes(), traced); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			runs++
			failures += traced.Failures
		}
	})
	if failures == 0 {
		t.Fatal("no failure struck: the search tests nothing")
	}
	t.Logf("%d runs, %d failures%s", runs, failures, withoutKorf())
}

// traceEvent is the part of a trace event checkTrace reads, its times in
// nanoseconds.
type traceEvent struct {
	Ph, Name string
	Pid, Tid int64
	ID       uint64
	Ts, Dur  sim.Time
}

// checkTrace reports the first way the trace doc of the run rec is not a
// valid Perfetto timeline of it: an event on process 0 or on a node with no
// name, a slice of negative duration or outside the run, slices of a track
// that overlap without nesting, a node's work going on past its failure, a
// flow arrow without both ends or going back in time, or a count of failure
// and detection instants that is not the record's.
func checkTrace(doc []byte, rec Record) error {
	var raw struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	end := sim.Time(math.Round(rec.MakespanS * 1e9))
	named := map[int64]bool{}
	tracks := map[traceTrack][]traceEvent{}
	type flowEnds struct {
		n  [2]int // starts, ends
		at [2]sim.Time
	}
	flows := map[uint64]*flowEnds{}
	instants := map[string]int{}
	failedAt := map[int64][]sim.Time{} // by process
	for i, e := range raw.TraceEvents {
		ev, err := decodeTraceEvent(e)
		if err != nil {
			return fmt.Errorf("event %d %v: %v", i, e, err)
		}
		if ev.Pid < 1 {
			return fmt.Errorf("event %d %v on process %d", i, e, ev.Pid)
		}
		switch ev.Ph {
		case "M":
			if ev.Name == "process_name" {
				named[ev.Pid] = true
			}
			continue
		case "X":
			if ev.Dur < 0 || ev.Ts < 0 || ev.Ts+ev.Dur > end+1 { // +1: a message's 1 ns slice at the end
				return fmt.Errorf("slice %v outside the run [0, %v]", e, end)
			}
			k := traceTrack{ev.Pid, ev.Tid}
			tracks[k] = append(tracks[k], ev)
		case "s", "f":
			f := flows[ev.ID]
			if f == nil {
				f = &flowEnds{}
				flows[ev.ID] = f
			}
			j := 0 // a start; 1 an end
			if ev.Ph == "f" {
				j = 1
			}
			f.n[j]++
			f.at[j] = ev.Ts
		case "i":
			instants[ev.Name]++
			if ev.Name == "failure" || ev.Name == "false suspicion: fenced" {
				failedAt[ev.Pid] = append(failedAt[ev.Pid], ev.Ts)
			}
		default:
			return fmt.Errorf("event %d: unexpected phase %q", i, ev.Ph)
		}
		if !named[ev.Pid] {
			return fmt.Errorf("event %d %v on process %d before its name", i, e, ev.Pid)
		}
	}
	for k, sl := range tracks {
		if err := checkTrack(k, sl, failedAt[k.pid]); err != nil {
			return err
		}
	}
	for id, f := range flows {
		if f.n != [2]int{1, 1} || f.at[1] < f.at[0] {
			return fmt.Errorf("flow %d: %d starts and %d ends, at %v", id, f.n[0], f.n[1], f.at)
		}
	}
	if got, want := instants["failure"]+instants["false suspicion: fenced"], rec.Failures; got != want {
		return fmt.Errorf("%d failure instants (%v), the record has %d failures", got, instants, want)
	}
	if got, want := instants["false suspicion: fenced"], rec.FalseSuspicions; got != want {
		return fmt.Errorf("%d fenced instants, the record has %d false suspicions", got, want)
	}
	if got, want := instants["failure detected"], rec.Detected; got != want {
		return fmt.Errorf("%d detection instants, the record has %d detections", got, want)
	}
	return nil
}

// traceTrack is a thread track of a process.
type traceTrack struct{ pid, tid int64 }

// checkTrack reports two slices of track k that overlap without nesting,
// or a slice that goes on past a failure of its node (at failedAt).
func checkTrack(k traceTrack, sl []traceEvent, failedAt []sim.Time) error {
	sort.Slice(sl, func(i, j int) bool {
		if sl[i].Ts != sl[j].Ts {
			return sl[i].Ts < sl[j].Ts
		}
		return sl[i].Dur > sl[j].Dur
	})
	var open []traceEvent // the enclosing slices, innermost last
	for _, s := range sl {
		for _, f := range failedAt {
			if s.Ts < f && f < s.Ts+s.Dur {
				return fmt.Errorf("process %d: %s [%v, %v] goes on past its node's failure at %v", k.pid, s.Name, s.Ts, s.Ts+s.Dur, f)
			}
		}
		for len(open) > 0 && open[len(open)-1].Ts+open[len(open)-1].Dur <= s.Ts {
			open = open[:len(open)-1]
		}
		if len(open) > 0 {
			if o := open[len(open)-1]; s.Ts+s.Dur > o.Ts+o.Dur {
				return fmt.Errorf("process %d track %d: %s [%v, %v] overlaps %s [%v, %v]", k.pid, k.tid,
					o.Name, o.Ts, o.Ts+o.Dur, s.Name, s.Ts, s.Ts+s.Dur)
			}
		}
		open = append(open, s)
	}
	return nil
}

// decodeTraceEvent reads the fields of e that checkTrace checks.
func decodeTraceEvent(e map[string]any) (traceEvent, error) {
	var ev traceEvent
	ev.Ph, _ = e["ph"].(string)
	ev.Name, _ = e["name"].(string)
	var err error
	num := func(key string, scale float64) int64 {
		v, ok := e[key].(json.Number)
		if !ok {
			return 0
		}
		f, perr := v.Float64()
		if perr != nil && err == nil {
			err = fmt.Errorf("%s: %v", key, perr)
		}
		return int64(math.Round(f * scale))
	}
	ev.Pid, ev.Tid = num("pid", 1), num("tid", 1)
	ev.ID = uint64(num("id", 1))
	ev.Ts, ev.Dur = sim.Time(num("ts", 1e3)), sim.Time(num("dur", 1e3))
	return ev, err
}
