package mlog_test

import (
	"strings"
	"testing"

	"ftsim/experiment"
	"ftsim/scenarios"
)

// The scenario key measure_restart reaches the protocol: a run with a failure
// reports the metrics restart_s (positive) and iteration_s, which [[published]]
// rows can quote; without the key none is reported.
func TestMeasureRestartKey(t *testing.T) {
	for _, measure := range []bool{true, false} {
		over := []string{"workload.kind=stencil", "workload.nx=16", "workload.ny=16", "workload.nz=16", "workload.iterations=40",
			"workload.blocks_per_node=2", "workload.modeled_nx=160", "workload.modeled_ny=160", "workload.modeled_nz=160",
			"cluster.nodes=4", "cluster.spares=1", "failures.distribution=scripted", `failures.scripted=[{node=1, progress=0.5}]`,
			"detection.mode=oracle", "protocol.kind=mlog", "protocol.period=5ms", "protocol.restart=fast", "protocol.multi_failure=true"}
		if measure {
			over = append(over, "protocol.measure_restart=true")
		}
		s, err := scenarios.Parse("test.toml", []byte(`name = "t"`), over)
		if err != nil {
			t.Fatal(err)
		}
		p, err := experiment.Prepare(s)
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.Run(0)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Finished || !r.DigestOK || r.Failures != 1 || r.Unrecoverable != 0 {
			t.Fatalf("finished %v, digest ok %v, failures %d, unrecoverable %d: %s", r.Finished, r.DigestOK, r.Failures, r.Unrecoverable, r.Note)
		}
		restart, ok1 := r.Metrics["restart_s"]
		iter, ok2 := r.Metrics["iteration_s"]
		if measure && (!ok1 || !ok2 || restart <= 0 || iter <= 0) || !measure && len(r.Metrics) != 0 {
			t.Fatalf("measure_restart %v: metrics %v", measure, r.Metrics)
		}
		t.Logf("measure_restart %v: metrics %v, makespan %.4g s", measure, r.Metrics, r.MakespanS)
	}
}

// A bad [protocol] value of kind mlog is an error naming its key.
func TestScenarioKeyErrors(t *testing.T) {
	cases := []struct{ set, key string }{
		{"protocol.period=0", "period"},
		{`protocol.restart="sometimes"`, "restart"},
		{"protocol.max_log=-1", "max_log"},
		{"protocol.header_bytes=-1", "header_bytes"},
		{"protocol.ticket_bytes=-1", "ticket_bytes"},
		{`protocol.log_cpu="-1us"`, "log_cpu"},
		{`protocol.ticket_request_cpu="5 parsecs"`, "ticket_request_cpu"},
		{"protocol.ticket_cpu=true", "ticket_cpu"},
		{`protocol.local_cpu="1000y"`, "local_cpu"},
	}
	for _, c := range cases {
		s, err := scenarios.Parse("test.toml", []byte(`name = "t"`), []string{"protocol.kind=mlog", c.set})
		if err == nil {
			_, err = experiment.Prepare(s)
		}
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: error %v, want one naming %q", c.set, err, c.key)
		}
	}
}
