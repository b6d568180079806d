package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"ftsim/scenarios"
	"ftsim/sim"
)

// searchWorkloads are small instances of every workload, with a checkpoint
// period of about an eighth of each fault-free run.
var searchWorkloads = []searchWorkload{
	{"life", "30us", []string{"width=48", "height=48", "generations=30", "objects_per_node=2"}},
	{"stencil", "8us", []string{"nx=12", "ny=10", "nz=8", "iterations=20", "blocks_per_node=2"}},
	{"dp", "40us", []string{`problem="lcs"`, "random_a=300", "random_b=200"}},
	{"farm", "300us", []string{"width=96", "height=96", "tile=16", "max_iter=300"}},
	{"synthetic", "500ms", []string{"steps=20", "exchange=4096", "objects=8"}},
	{"pida", "1ms", []string{"korf=94", "objects_per_node=2"}}, // korf_file added when the data is there
}

// otherWorkloads are other sizes and options of the workloads, with a
// checkpoint period of about an eighth of each fault-free run: three objects
// per node (life, stencil, pida), knapsack and TSP, work requests (dp),
// random victims (pida), steps without exchanges (synthetic), a knapsack
// whose items fit, on 7 objects (at capacity 300 the weights, 10 to 5,000,
// leave its blocks almost nothing to send each other), one pushing its
// values from three blocks per node, and a stencil summing every iterate
// over the blocks (reduce), also coupled.
var otherWorkloads = []searchWorkload{
	{"life", "17us", []string{"width=40", "height=36", "generations=25", "objects_per_node=3"}},
	{"stencil", "5500ns", []string{"nx=12", "ny=12", "nz=6", "iterations=15", "blocks_per_node=3"}},
	{"stencil", "5500ns", []string{"nx=12", "ny=12", "nz=6", "iterations=15", "blocks_per_node=2", "reduce=true"}},
	{"dp", "8us", []string{`problem="knapsack"`, "random_items=40", "capacity=300", "requests=true", "objects_per_node=2"}},
	{"dp", "4us", []string{`problem="tsp"`, "random_cities=9"}},
	{"dp", "32us", []string{`problem="lcs"`, "random_a=200", "random_b=150", "requests=true", "objects_per_node=2"}},
	{"farm", "100us", []string{"width=64", "height=64", "tile=8", "max_iter=200", "objects_per_node=2"}},
	{"synthetic", "375ms", []string{"steps=15", "exchange=0", "objects=6"}},
	{"pida", "2ms", []string{"korf=12", "objects_per_node=3", `victim="random"`}},
	{"dp", "48us", []string{`problem="knapsack"`, "random_items=30", "capacity=2000", "objects=7", "requests=true"}},
	{"dp", "24us", []string{`problem="knapsack"`, "random_items=25", "capacity=1500", "objects_per_node=3"}},
	{"stencil", "5500ns", []string{"nx=12", "ny=12", "nz=6", "iterations=15", "blocks_per_node=2", "reduce=true", "coupled=true"}},
}

// searchWorkload is a workload of the searches: its kind, checkpoint
// period and keys (without the "workload." prefix).
type searchWorkload struct {
	kind, period string
	keys         []string
}

// fullKeys are the workload's keys with the shared Korf instance file for
// pida; ok is false for pida when that file is not there.
func (w searchWorkload) fullKeys() (keys []string, ok bool) {
	if w.kind != "pida" {
		return w.keys, true
	}
	return append(w.keys[:len(w.keys):len(w.keys)], `korf_file="`+korfFile+`"`), korfFile != ""
}

// searchProtocol is a protocol variant of the searches, on the workloads
// named in only (all when empty). A key's value "PERIOD" stands for the
// workload's checkpoint period.
type searchProtocol struct {
	kind string
	keys []string
	only []string
}

// searchProtocols are variants of every protocol: the tiers and a
// multi-level schedule of cpr, one without draining, two cutting handlers
// (a substep of 1 ns: anywhere); dps with one or two
// backups and without checkpoints; mlog's two restarts, and one cutting
// handlers; abft (pida and dp
// only) on spares or on the survivors; replication, with and without a
// header, restarting from scratch or rolling back to checkpoints, with and
// without restarting lost replicas after them.
var searchProtocols = []searchProtocol{
	{"none", nil, nil},
	{"cpr", []string{`protocol.interval="fixed"`, `protocol.tier="buddy"`, period}, nil},
	{"cpr", []string{`protocol.interval="fixed"`, `protocol.tier="memory"`, period}, nil},
	{"cpr", []string{`protocol.interval="fixed"`, `protocol.tier="pfs"`, "protocol.drain=false", period}, nil},
	{"cpr", []string{`protocol.interval="fixed"`, `protocol.levels=[{tier="memory", every=1}, {tier="pfs", every=3}]`, period}, nil},
	{"cpr", []string{`protocol.interval="fixed"`, `protocol.tier="buddy"`, `protocol.substep="1ns"`, period}, nil},
	{"cpr", []string{`protocol.interval="fixed"`, `protocol.tier="pfs"`, "protocol.drain=false", `protocol.substep="1ns"`, period}, nil},
	{"dps", []string{"protocol.every=5"}, nil},
	{"dps", []string{"protocol.every=3", "protocol.backups=2"}, nil},
	{"dps", []string{"protocol.every=0"}, nil},
	{"mlog", []string{`protocol.restart="fast"`, "protocol.multi_failure=true", period}, nil},
	{"mlog", []string{`protocol.restart="basic"`, period}, nil},
	{"abft", nil, []string{"pida", "dp"}},
	{"abft", []string{"protocol.use_spares=false"}, []string{"pida", "dp"}},
	{"replication", nil, replicatedWorkloads},
	{"replication", []string{"protocol.header_bytes=8"}, replicatedWorkloads},
	{"replication", []string{`protocol.interval="fixed"`, `protocol.tier="buddy"`, period}, replicatedWorkloads},
	{"replication", []string{`protocol.interval="fixed"`, `protocol.levels=[{tier="memory", every=1}, {tier="pfs", every=3}]`, period}, replicatedWorkloads},
	{"replication", []string{`protocol.interval="fixed"`, "protocol.restart_replicas=true", "protocol.header_bytes=8", period}, replicatedWorkloads},
	{"replication", []string{`protocol.interval="fixed"`, `protocol.tier="buddy"`, "protocol.restart_replicas=true", period}, replicatedWorkloads},
	{"mlog", []string{`protocol.restart="fast"`, "protocol.multi_failure=true", `protocol.substep="1ns"`, period}, nil},
}

// replicatedWorkloads are the workloads replication accepts: those whose
// objects do not answer concurrent messages in their arrival order.
var replicatedWorkloads = []string{"life", "stencil", "dp", "synthetic"}

// period is the key that sets a protocol's period to the workload's
// checkpoint period.
const period = "protocol.period=PERIOD"

// searchClusters are the machines of the search.
var searchClusters = [][]string{
	{"cluster.nodes=4", "cluster.spares=0", "detection.mode=oracle"},
	{"cluster.nodes=4", "cluster.spares=3", "detection.mode=oracle"},
	{"cluster.nodes=6", "cluster.spares=0", "cluster.cores=2", `detection.mode="heartbeat"`},
	{"cluster.nodes=5", "cluster.spares=1", "cluster.cores=3", `detection.mode="heartbeat"`, `failures.downtime="5us"`},
}

// Every workload under every protocol variant, with exponential
// failures of a node MTBF of 4 and 12 fault-free runs (about 1.3 and 0.4
// failures per run), ends with its reference answer unless every node
// failed, on four clusters: 4 nodes of one core with 3 spares or none and
// immediate detection; 6 nodes of two cores without spare and 5 of three
// cores with a spare and a downtime, with heartbeats (a period of a 50th of
// the fault-free run, a timeout of a 15th). By default 2 seeds per case;
// FTSIM_SEARCH=1 runs 40.
func TestRandomFailuresEveryProtocol(t *testing.T) {
	t.Parallel()
	seeds := searchSize(2, 40)
	searchRandomFailures(t, searchProtocols, searchClusters, seeds, searchMTBFs)
}

// The search tests call t.Parallel: they share nothing, and together they
// are most of go test's time, which they then spread over the cores.

// searchSize is n, or full with FTSIM_SEARCH set: the seeds or plans of a
// search case in the default test run and in the whole search.
func searchSize(n, full int) int {
	if os.Getenv("FTSIM_SEARCH") != "" {
		return full
	}
	return n
}

// searchMTBFs are the node MTBFs of the random searches, in fault-free runs.
var searchMTBFs = []float64{4, 12}

// repairQuarter, among a cluster's keys, makes a failed node return to the
// spare pool a quarter of the fault-free run after it failed.
const repairQuarter = "cluster.repair=FF/4"

// waitForRepair, among a cluster's keys beside repairQuarter, has a job
// relaunched as a whole wait for repaired nodes rather than restart on the
// survivors (cluster.no_spare = "wait", which prepare applies once the
// repair time is set: it needs one).
const waitForRepair = `cluster.no_spare="wait"`

// chassisPairs, among a cluster's keys, groups its nodes in failure domains
// of two, each failing as a whole at a mean interval of four fault-free runs.
const chassisPairs = "failures.group_mtbf=4FF"

// overrides are the keys of the case's scenario with the given seed,
// checkpoint period (for "PERIOD") and failure keys; the cluster's keys
// (but repairQuarter, waitForRepair and chassisPairs' MTBF, which prepare
// applies) come after the failure keys and may override them.
func (c searchCase) overrides(seed int, period string, failureKeys []string) []string {
	over := append([]string{"workload.kind=" + c.workload, "protocol.kind=" + c.protocol.kind, fmt.Sprintf("seed=%d", seed)}, failureKeys...)
	for _, k := range c.cluster {
		switch k {
		case repairQuarter, waitForRepair:
		case chassisPairs:
			over = append(over, "failures.group_size=2")
		default:
			over = append(over, k)
		}
	}
	for _, k := range c.keys {
		over = append(over, "workload."+k)
	}
	for _, k := range c.protocol.keys {
		over = append(over, strings.Replace(k, "PERIOD", period, 1))
	}
	return over
}

// searchRandomFailures runs every workload under protocols on every
// cluster, at node MTBFs of each of mtbfs fault-free runs, with seeds seeds
// each.
func searchRandomFailures(t *testing.T, protocols []searchProtocol, clusters [][]string, seeds int, mtbfs []float64) {
	t.Helper()
	runs, failures := 0, 0
	searchCases(searchWorkloads, protocols, clusters, func(c searchCase) {
		for _, factor := range mtbfs {
			for seed := 1; seed <= seeds; seed++ {
				name := fmt.Sprintf("%s, node MTBF %g fault-free runs, seed %d", c, factor, seed)
				p, ff := c.prepare(t, seed, "failures.distribution=exponential")
				p.Scenario.Failures.NodeMTBF = scenarios.Duration(factor * float64(ff))
				r := runSearch(t, name, p)
				runs++
				failures += r.Failures
			}
		}
	})
	if failures == 0 {
		t.Fatal("no failure struck: the search tests nothing")
	}
	t.Logf("%d runs, %d failures%s", runs, failures, withoutKorf())
}

// searchCase is one workload under one protocol variant on one cluster.
type searchCase struct {
	workload, period string
	keys             []string // the workload's keys, without the "workload." prefix
	protocol         searchProtocol
	cluster          []string
}

func (c searchCase) String() string {
	return fmt.Sprintf("%s/%s %v, %v", c.workload, c.protocol.kind, c.protocol.keys, c.cluster)
}

// searchCases calls each for every workload of workloads (pida only when
// the shared Korf instances are there) under every protocol variant that
// applies to it, on every cluster (of two nodes at least for replication).
func searchCases(workloads []searchWorkload, protocols []searchProtocol, clusters [][]string, each func(searchCase)) {
	for _, wl := range workloads {
		keys, ok := wl.fullKeys()
		if !ok {
			continue
		}
		for _, pr := range protocols {
			if len(pr.only) > 0 && !slices.Contains(pr.only, wl.kind) || !pr.selected(os.Getenv("FTSIM_SEARCH_PROTOCOLS")) {
				continue
			}
			for _, cluster := range clusters {
				if pr.kind == "replication" && slices.Contains(cluster, "cluster.nodes=1") {
					continue // the replicas of an object need two nodes: a configuration error
				}
				each(searchCase{wl.kind, wl.period, keys, pr, cluster})
			}
		}
	}
}

// selected reports whether the variant is among terms, a comma-separated
// list (FTSIM_SEARCH_PROTOCOLS; empty: every variant): its kind or one of
// its keys contains a term. Selecting shifts the case numbers, from which
// the burst searches draw their plans.
func (pr searchProtocol) selected(terms string) bool {
	if terms == "" {
		return true
	}
	for _, term := range strings.Split(terms, ",") {
		if strings.Contains(pr.kind, term) || slices.ContainsFunc(pr.keys, func(k string) bool { return strings.Contains(k, term) }) {
			return true
		}
	}
	return false
}

// prepare builds the case's scenario with the given seed and failure keys
// (the cluster's keys come after them and may override them), prepares it,
// and returns the point and the longer of its baseline and fault-free run
// (tryPrepare); a scenario it cannot prepare ends the test.
func (c searchCase) prepare(t *testing.T, seed int, failureKeys ...string) (*Point, sim.Time) {
	t.Helper()
	p, ff, err := c.tryPrepare(t, seed, failureKeys...)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	return p, ff
}

// tryPrepare is prepare, returning the error of a scenario that does not
// prepare. A cluster with repairQuarter repairs failed nodes a quarter of
// the longer run after they fail (and with waitForRepair waits for them),
// one with chassisPairs fails its pairs of nodes four times that time apart
// on average; with heartbeats, the period is a 50th of it, the timeout a
// 15th and the network's jitter at most what the period allows.
func (c searchCase) tryPrepare(t *testing.T, seed int, failureKeys ...string) (*Point, sim.Time, error) {
	t.Helper()
	s, err := scenarios.Parse("search.toml", []byte(`name = "search"`), c.overrides(seed, c.period, failureKeys))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(s)
	if err != nil {
		return nil, 0, err
	}
	ff := max(p.FaultFree, p.Baseline)
	if slices.Contains(c.cluster, repairQuarter) {
		p.Scenario.Cluster.Repair = scenarios.Duration(ff / 4)
	}
	if slices.Contains(c.cluster, waitForRepair) {
		p.Scenario.Cluster.NoSpare = "wait"
	}
	if slices.Contains(c.cluster, chassisPairs) {
		p.Scenario.Failures.GroupMTBF = scenarios.Duration(4 * ff)
	}
	if d, n := &p.Scenario.Detection, &p.Scenario.Network; d.Mode == "heartbeat" {
		d.Period, d.Timeout = scenarios.Duration(ff/50), scenarios.Duration(ff/15)
		n.Jitter = min(n.Jitter, d.Period/sim.HBJitterMargin) // as drawFailures
	}
	return p, ff, nil
}

// runSearch runs replication 0 of p and reports an error unless it ended
// with the reference answer, or could not: every node failed (without
// repair, as many failures as nodes and spares), or every object. A run
// stopped at the duration limit (SafetyFactor times the fault-free time and a recovery)
// runs again with a limit searchLimitFactor times longer: a checkpoint the
// fault-free run never took (due after its end) may alone take longer than
// the limit, which is the machine's cost, not a protocol's bug.
func runSearch(t *testing.T, name string, p *Point) Record {
	t.Helper()
	r := runAudited(t, name, p, 1)
	if !r.Finished && strings.Contains(r.Note, "stopped at the duration limit") {
		r = runAudited(t, name, p, searchLimitFactor)
	}
	s := p.Scenario
	allFailed := s.Cluster.Repair == 0 && r.Failures >= s.Cluster.Nodes+s.Cluster.Spares
	if (!r.Finished || !r.DigestOK) && !allFailed && !noAnswerExpected(r) {
		t.Errorf("%s: finished %v, digest_ok %v, %d failures: %s", name, r.Finished, r.DigestOK, r.Failures, r.Note)
	}
	if err := checkRecord(r); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	return r
}

// checkRecord reports the first way record r contradicts itself: a count
// beyond what bounds it, losses or restarts without a failure, a derived
// column that is not what it derives from, or a record that does not
// survive its JSON line.
func checkRecord(r Record) error {
	switch {
	case r.Detected > r.Failures:
		return fmt.Errorf("%d failures detected of %d", r.Detected, r.Failures)
	case r.FalseSuspicions > r.Failures:
		return fmt.Errorf("%d false suspicions among %d failures", r.FalseSuspicions, r.Failures)
	case r.Failures == 0 && (r.Restarts > 0 || r.LostMsgs > 0):
		return fmt.Errorf("no failure, but %d restarts, %d lost messages", r.Restarts, r.LostMsgs)
	case r.Restored > r.Detected || r.Recovered > r.Detected:
		return fmt.Errorf("%d failures restored and %d recovered of %d detected", r.Restored, r.Recovered, r.Detected)
	case r.Detected == 0 && r.DetectionSMean != 0:
		return fmt.Errorf("no detection, but %g s of detection", r.DetectionSMean)
	case r.Recovered == 0 && r.RecoverySMean != 0:
		return fmt.Errorf("no failure recovered, but %g s of recovery", r.RecoverySMean)
	case r.Restored == 0 && r.RestoreSMean != 0:
		return fmt.Errorf("no failure restored, but %g s of restore", r.RestoreSMean)
	case r.Finished && math.Abs(r.Efficiency-r.BaselineS/r.MakespanS) > 1e-12*r.Efficiency:
		return fmt.Errorf("efficiency %g, baseline/makespan %g", r.Efficiency, r.BaselineS/r.MakespanS)
	case !r.Finished && r.Efficiency != 0:
		return fmt.Errorf("unfinished with efficiency %g", r.Efficiency)
	case r.MakespanS < 0 || r.DetectionSMean < 0 || r.RestoreSMean < 0 || r.RecoverySMean < 0 || r.AppMsgs < 0 || r.ExtraMsgs < 0 || r.LostMsgs < 0 || r.Checkpoints < 0 || r.PeakMemBytes < 0:
		return fmt.Errorf("a negative count: %s", r.JSON())
	}
	var back Record
	if err := json.Unmarshal(r.JSON(), &back); err != nil || !reflect.DeepEqual(back, r) {
		return fmt.Errorf("the JSON line %q does not read back (%v)", r.JSON(), err)
	}
	return nil
}

// searchLimitFactor lengthens the duration limit of a search run that
// reached it (runSearch).
const searchLimitFactor = 1000

// runAudited runs replication 0 of p with its duration limit times factor
// and reports an error if the protocol's memory accounting is off at the
// end (sim.MemoryAuditor), whatever became of the run, or if its oracle
// audit found an anomaly (oracleAuditor).
func runAudited(t *testing.T, name string, p *Point, factor sim.Time) Record {
	t.Helper()
	cfg, err := p.runConfig(0)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if factor > 1 {
		cfg.Limit = min(cfg.Limit, sim.MaxDuration/factor) * factor // the most a run simulates
	}
	var proto sim.Protocol
	res, err := p.simulate(cfg, func() sim.Protocol {
		proto = p.protocol()
		if a, ok := proto.(oracleAuditor); ok {
			a.EnableAudit()
		}
		return proto
	}, nil, nil)
	if err != nil {
		t.Fatalf("%s (limit %v): %v", name, cfg.Limit, err)
	}
	if err := checkRecoveries(res.Recoveries); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	if a, ok := proto.(sim.MemoryAuditor); ok {
		if err := a.AuditMemory(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if a, ok := proto.(oracleAuditor); ok {
		if err := a.AuditErr(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	return newRecord(p, 0, p.Seed(0), &res)
}

// checkRecoveries reports the first failure record whose times are out of
// order: detected before it struck, restored or recovered before (or
// without) its detection.
func checkRecoveries(recs []sim.Recovery) error {
	for i, r := range recs {
		detected := r.DetectedAt != sim.Never
		switch {
		case detected && r.DetectedAt < r.FailedAt,
			r.RestoredAt != sim.Never && (!detected || r.RestoredAt < r.DetectedAt),
			r.RecoveredAt != sim.Never && (!detected || r.RecoveredAt < r.DetectedAt):
			return fmt.Errorf("failure %d of node %d: struck %v, detected %v, restored %v, recovered %v",
				i, r.Node, r.FailedAt, r.DetectedAt, r.RestoredAt, r.RecoveredAt)
		}
	}
	return nil
}

// oracleAuditor is a protocol with oracle bookkeeping (dps's Config.Audit)
// that a search turns on before a run and checks after it.
type oracleAuditor interface {
	EnableAudit()
	AuditErr() error
}

// noAnswerExpected reports whether a run could not end with the reference
// answer whatever the protocol: every node or object failed.
func noAnswerExpected(r Record) bool {
	return strings.HasPrefix(r.Note, "every node failed") || strings.Contains(r.Note, "abft: every object is lost")
}

// Under mlog's fast restart the restarting node spread its restored objects;
// it crashed after one of them, restored on node 0, had logged messages
// there, and the object was recreated from the restart's copy. Node 0 kept
// accounting the discarded log (found by the memory audit of the random
// search: node 0 accounted 2,560 bytes of logs and held 1,456).
func TestMigrationDiscardReleasesTheLog(t *testing.T) {
	c := searchCase{workload: "stencil", period: "8us", keys: searchWorkloads[1].keys,
		protocol: searchProtocol{"mlog", []string{`protocol.restart="fast"`, "protocol.multi_failure=true", period}, nil},
		cluster:  []string{"cluster.nodes=4", "cluster.spares=3", "detection.mode=oracle"}}
	p, ff := c.prepare(t, 2, "failures.distribution=exponential")
	p.Scenario.Failures.NodeMTBF = scenarios.Duration(4 * float64(ff))
	if r := runAudited(t, c.String(), p, 1); !r.Finished || !r.DigestOK || r.Failures != 3 {
		t.Fatalf("finished %v, digest_ok %v, %d failures: %s", r.Finished, r.DigestOK, r.Failures, r.Note)
	}
}

// A failure the application survives under replication refreshes the
// progress of several replicas at once; one that rises (a replica B now
// reporting its pair) must not end the run before one that falls (a replica
// A whose twin, ahead of it, died) is refreshed (found by the Weibull search
// with repair: the run ended with a tile 7 generations short). The keys are
// the search's case, its failures scripted at the times they struck.
func TestReplicationProgressRefreshOrder(t *testing.T) {
	keys := []string{"workload.kind=life", "protocol.kind=replication", "seed=23", "cluster.nodes=4", "cluster.spares=0",
		`cluster.repair="841.596us"`, "detection.mode=oracle", "workload.width=48", "workload.height=48",
		"workload.generations=30", "workload.objects_per_node=2", `protocol.interval="fixed"`,
		`protocol.levels=[{tier="memory", every=1}, {tier="pfs", every=3}]`, "protocol.period=30us",
		`failures.distribution="scripted"`,
		`failures.scripted=[{node=1, at="116.034us"}, {node=3, at="2.659571ms"}, {node=1, at="5.866548ms"}]`}
	if r := runKeys(t, keys); !r.Finished || !r.DigestOK || r.Failures != 3 || r.Metrics["replication_interruptions"] != 1 {
		t.Fatalf("finished %v, digest_ok %v, %d failures, metrics %v: %s", r.Finished, r.DigestOK, r.Failures, r.Metrics, r.Note)
	}
}

// Under replication, two failures 2 µs apart while a checkpoint with a buddy
// tier is written: the first moves the dead node's pieces to its twins and
// sends the copies it was receiving to another buddy, the second kills that
// buddy. The copies must go to the owner's new buddy before the pieces moved
// to the owner are sent after them (found by the burst search: the moved
// piece went to the dead buddy, and the checkpoint waited for ever).
func TestReplicationBuddyResentBeforeRewrite(t *testing.T) {
	keys := []string{"workload.kind=stencil", "protocol.kind=replication", "cluster.nodes=4", "cluster.spares=0",
		"detection.mode=oracle", "workload.nx=12", "workload.ny=10", "workload.nz=8", "workload.iterations=20",
		"workload.blocks_per_node=2", `protocol.interval="fixed"`, `protocol.tier="buddy"`, "protocol.period=8us",
		`failures.distribution="scripted"`, `failures.scripted=[{node=0, at="21.958us"}, {node=1, at="24.207us"}]`}
	if r := runKeys(t, keys); !r.Finished || !r.DigestOK || r.Failures != 2 || r.Metrics["replication_pieces_rewritten"] == 0 {
		t.Fatalf("finished %v, digest_ok %v, %d failures, metrics %v: %s", r.Finished, r.DigestOK, r.Failures, r.Metrics, r.Note)
	}
}

func TestSearchProtocolSelection(t *testing.T) {
	cut := searchProtocols[5] // cpr to buddy memory, cutting handlers
	for _, tc := range []struct {
		terms string
		want  bool
	}{
		{"", true},
		{"cpr", true},
		{"substep", true},
		{"mlog,substep", true},
		{"mlog", false},
		{"dps,replication", false},
	} {
		if got := cut.selected(tc.terms); got != tc.want {
			t.Errorf("%v selected by %q: %v, want %v", cut, tc.terms, got, tc.want)
		}
	}
}
