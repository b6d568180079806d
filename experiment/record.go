package experiment

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"ftsim/models/cpr"
	"ftsim/models/dps"
	"ftsim/models/replication"
	"ftsim/sim"
)

// Record is the result of one run, in the form written to CSV and JSON lines.
// Times are in seconds. It holds no wall-clock figure, so that the same
// scenario and seed give byte-identical output.
type Record struct {
	Scenario        string  `json:"scenario"`
	Workload        string  `json:"workload"`
	Protocol        string  `json:"protocol"`
	Nodes           int     `json:"nodes"`
	Rep             int     `json:"rep"`
	Seed            uint64  `json:"seed"`
	Finished        bool    `json:"finished"`
	MakespanS       float64 `json:"makespan_s"`
	BaselineS       float64 `json:"baseline_s"`   // no protocol, no failures
	FaultFreeS      float64 `json:"fault_free_s"` // this protocol, no failures
	Overhead        float64 `json:"overhead"`     // fault_free/baseline − 1
	Efficiency      float64 `json:"efficiency"`   // baseline/makespan
	Failures        int     `json:"failures"`
	FalseSuspicions int     `json:"false_suspicions"` // live nodes fenced, among Failures
	IgnoredFailures int     `json:"ignored_failures"` // planned failures of a node already down or an idle spare
	Detected        int     `json:"detected"`
	Restored        int     `json:"restored"`  // failures whose lost objects all came back
	Recovered       int     `json:"recovered"` // failures whose progress came back
	Restarts        int     `json:"restarts"`
	DetectionSMean  float64 `json:"detection_s_mean"` // failure to detection
	RestoreSMean    float64 `json:"restore_s_mean"`   // detection to the last lost object restored
	RecoverySMean   float64 `json:"recovery_s_mean"`  // failure to the progress regained
	AppMsgs         int64   `json:"app_msgs"`
	ExtraMsgs       int64   `json:"extra_msgs"`
	AppBytes        int64   `json:"app_bytes"`
	ExtraBytes      int64   `json:"extra_bytes"`
	HeartbeatMsgs   int64   `json:"heartbeat_msgs"`
	LostMsgs        int64   `json:"lost_msgs"`
	Checkpoints     int     `json:"checkpoints"`
	CheckpointBytes int64   `json:"checkpoint_bytes"`
	PeakMemBytes    int64   `json:"peak_mem_bytes"`
	NodeMemPeak     int64   `json:"node_mem_peak_bytes"` // the most one node held at once
	DigestOK        bool    `json:"digest_ok"`
	Digest          string  `json:"digest"`
	Answer          string  `json:"answer"`
	Unrecoverable   int     `json:"unrecoverable"`
	Note            string  `json:"note"`
	Events          uint64  `json:"events"`
	// Metrics are figures the protocol measures its own way (sim.Stats.Metrics).
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// Columns are the CSV header, in the order of Row.
var columns = []string{"scenario", "workload", "protocol", "nodes", "rep", "seed", "finished",
	"makespan_s", "baseline_s", "fault_free_s", "overhead", "efficiency", "failures",
	"false_suspicions", "ignored_failures", "detected", "restored", "recovered", "restarts", "detection_s_mean", "restore_s_mean", "recovery_s_mean", "app_msgs", "extra_msgs", "app_bytes", "extra_bytes",
	"heartbeat_msgs", "lost_msgs", "checkpoints", "checkpoint_bytes", "peak_mem_bytes",
	"node_mem_peak_bytes", "digest_ok", "digest", "answer", "unrecoverable", "note", "events", "metrics"}

// Columns returns the CSV header.
func Columns() []string { return append([]string(nil), columns...) }

// Row returns the record's CSV fields, in the order of Columns.
func (r *Record) Row() []string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	i := func(x int64) string { return strconv.FormatInt(x, 10) }
	b := strconv.FormatBool
	return []string{r.Scenario, r.Workload, r.Protocol, i(int64(r.Nodes)), i(int64(r.Rep)),
		strconv.FormatUint(r.Seed, 10), b(r.Finished), f(r.MakespanS), f(r.BaselineS), f(r.FaultFreeS),
		f(r.Overhead), f(r.Efficiency), i(int64(r.Failures)), i(int64(r.FalseSuspicions)), i(int64(r.IgnoredFailures)), i(int64(r.Detected)), i(int64(r.Restored)), i(int64(r.Recovered)), i(int64(r.Restarts)),
		f(r.DetectionSMean), f(r.RestoreSMean), f(r.RecoverySMean), i(r.AppMsgs), i(r.ExtraMsgs), i(r.AppBytes), i(r.ExtraBytes),
		i(r.HeartbeatMsgs), i(r.LostMsgs), i(int64(r.Checkpoints)), i(r.CheckpointBytes), i(r.PeakMemBytes), i(r.NodeMemPeak),
		b(r.DigestOK), r.Digest, r.Answer, i(int64(r.Unrecoverable)), r.Note, strconv.FormatUint(r.Events, 10),
		r.metricsText()}
}

// metricsText writes Metrics as "name=value;name=value", names sorted.
func (r *Record) metricsText() string {
	parts := make([]string, 0, len(r.Metrics))
	for _, k := range slices.Sorted(maps.Keys(r.Metrics)) {
		parts = append(parts, k+"="+strconv.FormatFloat(r.Metrics[k], 'g', -1, 64))
	}
	return strings.Join(parts, ";")
}

// Metric returns the numeric figure called name: a numeric column of the
// record (makespan_s, overhead, extra_msgs...) or one of its Metrics.
func (r *Record) Metric(name string) (float64, bool) {
	if x, ok := r.Metrics[name]; ok {
		return x, true
	}
	i := slices.Index(columns, name)
	if i < 0 {
		return 0, false
	}
	x, err := strconv.ParseFloat(r.Row()[i], 64)
	return x, err == nil && numericColumn(name)
}

// protocolMetrics are the figures protocols measure their own way and
// report in Record.Metrics (sim.Stats.SetMetric).
var protocolMetrics = []string{
	"restart_s", "iteration_s", // mlog: the paper's restart and iteration times
	"abft_explicit_msgs", "abft_app_msgs", "abft_extra_msg_ratio", "abft_cd_bytes",
	"abft_recovered", "abft_forced_rollbacks", "abft_stages_redone", "abft_recovery_overhead",
	cpr.MetricRebuildBytes,
	dps.MetricBackupPeak, dps.MetricQueuePeak, dps.MetricStatePeak, dps.MetricCopyPeak, dps.MetricStateBytes,
	replication.MetricInterruptions, replication.MetricFirstInterruption, replication.MetricDuplicates, replication.MetricRewritten, replication.MetricRetaken,
	replication.MetricRestarted, replication.MetricRestartTime,
}

// Metrics returns the names Record.Metric knows: the numeric columns of
// runs.csv, then the protocols' own metrics. It is the one list of them, so
// that a [[published]] figure quoting a misspelt metric is refused before
// the runs rather than printed without a simulated value after them.
func Metrics() []string {
	var out []string
	for _, c := range columns {
		if numericColumn(c) {
			out = append(out, c)
		}
	}
	return append(out, protocolMetrics...)
}

// numericColumn reports whether a column holds a number (not a name, a
// flag or a digest).
func numericColumn(name string) bool {
	switch name {
	case "scenario", "workload", "protocol", "finished", "digest_ok", "digest", "answer", "note", "metrics", "seed", "rep":
		return false
	}
	return true
}

// JSON returns the record as one line of JSON.
func (r *Record) JSON() []byte {
	b, _ := json.Marshal(r) // a struct of plain fields always marshals
	return b
}

func newRecord(p *Point, rep int, seed uint64, res *sim.Result) Record {
	st := &res.Stats
	detection, _ := res.Detection()
	restore, restored := res.Restore()
	recovery, recovered := res.Recovery()
	var peak int64
	for _, m := range st.PeakMem {
		peak += m
	}
	r := Record{
		Scenario: p.Scenario.Name, Workload: p.Scenario.Workload.Kind(), Protocol: p.Scenario.Protocol.Label(),
		Nodes: p.Scenario.Cluster.Nodes, Rep: rep, Seed: seed, Finished: res.Finished,
		MakespanS: res.Makespan.Seconds(), BaselineS: p.Baseline.Seconds(), FaultFreeS: p.FaultFree.Seconds(),
		Failures: st.Failures, FalseSuspicions: st.FalseSuspicions, IgnoredFailures: st.IgnoredFailures, Detected: st.Detected, Restored: restored, Recovered: recovered, Restarts: st.Restarts,
		DetectionSMean: detection, RestoreSMean: restore, RecoverySMean: recovery,
		AppMsgs: st.AppMsgs, ExtraMsgs: st.ExtraMsgs, AppBytes: st.AppBytes, ExtraBytes: st.ExtraBytes,
		HeartbeatMsgs: st.HeartbeatMsgs, LostMsgs: st.LostMsgs,
		Checkpoints: st.Checkpoints, CheckpointBytes: st.CheckpointBytes, PeakMemBytes: peak, NodeMemPeak: st.NodeMemPeak,
		DigestOK: res.Outcome.OK, Digest: res.Outcome.Digest, Answer: res.Outcome.Answer,
		Unrecoverable: st.Unrecoverable, Note: st.UnrecoverableNote, Events: res.Events,
	}
	for _, m := range st.Metrics() {
		if r.Metrics == nil {
			r.Metrics = map[string]float64{}
		}
		r.Metrics[m.Name] = m.Value
	}
	switch {
	case res.Outcome.OK:
	case r.Note == "":
		r.Note = res.Outcome.Detail
	case res.AtLimit:
		// what the protocol reported, and that the run then reached the limit
		r.Note += "; " + res.Outcome.Detail
	}
	if over := memoryNote(st, int64(p.Scenario.Cluster.Memory)); over != "" {
		if r.Note != "" {
			r.Note += "; "
		}
		r.Note += over
	}
	if p.Baseline > 0 {
		r.Overhead = float64(p.FaultFree)/float64(p.Baseline) - 1
		if res.Finished && res.Makespan > 0 {
			r.Efficiency = float64(p.Baseline) / float64(res.Makespan)
		}
	}
	return r
}

// memoryNote says when a node held more than its memory (cluster.memory; 0
// checks nothing): the protocol's logs, backups and checkpoints at their
// peak on one node, with the application state that node held at that
// instant. The run itself goes on as if the memory were there.
func memoryNote(st *sim.Stats, memory int64) string {
	used := st.NodeMemPeak + st.NodeMemPeakState
	if memory <= 0 || used <= memory {
		return ""
	}
	gib := func(b int64) string { return strconv.FormatFloat(float64(b)/(1<<30), 'g', 4, 64) + " GiB" }
	return "memory exceeded: node " + strconv.Itoa(int(st.NodeMemPeakNode)) + " held " + gib(st.NodeMemPeak) +
		" of logs, backups and checkpoints beside " + gib(st.NodeMemPeakState) + " of application state, more than its " +
		gib(memory) + " (cluster.memory)"
}
