package experiment

import (
	"slices"
	"testing"
)

// optionProtocols are the protocol options searchProtocols leaves at their
// defaults: cpr's other intervals and tiers, deferred checkpoints and
// process images, MPI/FT Model-Ia; dps checkpoints by progress, by time
// and by both, spread backups, re-created farm workers, a logged handling
// order (with one backup, and with two, whose re-activations may leave one
// stale), a farm whose workers are stateful; mlog's fast restart without the
// multiple-failure extension, basic restart with it, a log cap, no priority
// for re-execution, full logs, the CPU time of its steps (with and without
// the extension: ticket requests are the basic protocol's).
var optionProtocols = []searchProtocol{
	{"cpr", []string{`protocol.interval="iterations"`, "protocol.every=3", `protocol.tier="disk"`}, []string{"life", "stencil", "synthetic"}},
	{"cpr", []string{`protocol.interval="auto"`, `protocol.tier="memory"`, period}, nil},
	{"cpr", []string{`protocol.interval="hazard"`, `protocol.tier="buddy"`}, nil},
	{"cpr", []string{`protocol.interval="fixed"`, `protocol.tier="pfs"`, `protocol.image="1MB"`, `protocol.max_live="1B"`, `protocol.max_wait="5us"`, period}, nil},
	{"mpift-ia", nil, []string{"farm"}},
	{"dps", []string{"protocol.every_progress=2"}, nil},
	{"dps", []string{"protocol.every=0", period}, nil},
	{"dps", []string{"protocol.every=4", "protocol.spread=true"}, nil},
	{"dps", []string{"protocol.every=4", "protocol.shrink=false"}, []string{"farm"}},
	{"dps", []string{"protocol.every=4", "protocol.log_order=true"}, nil},
	{"mlog", []string{`protocol.restart="fast"`, period}, nil},
	{"mlog", []string{`protocol.restart="basic"`, "protocol.multi_failure=true", period}, nil},
	{"mlog", []string{`protocol.restart="fast"`, `protocol.max_log="2KB"`, period}, nil},
	{"mlog", []string{`protocol.restart="basic"`, "protocol.priority=false", "protocol.full_log=true", period}, nil},
	{"dps", []string{"protocol.every=2", "protocol.backups=2", "protocol.log_order=true"}, nil},
	{"dps", []string{"protocol.every=3", "protocol.auto_stateless=false"}, []string{"farm"}},
	{"mlog", []string{`protocol.restart="fast"`, "protocol.multi_failure=true", `protocol.log_cpu="500ns"`, `protocol.ticket_cpu="300ns"`, `protocol.local_cpu="200ns"`, period}, nil},
	{"mlog", []string{`protocol.restart="basic"`, `protocol.log_cpu="500ns"`, `protocol.ticket_request_cpu="400ns"`, `protocol.ticket_cpu="300ns"`, `protocol.local_cpu="200ns"`, period}, nil},
	{"dps", []string{"protocol.every_progress=3", period, "protocol.every=0"}, nil},
	{"mlog", []string{`protocol.restart="basic"`, `protocol.substep="1ns"`, `protocol.log_cpu="500ns"`, period}, nil},
}

// TestRandomFailuresProtocolOptions is TestRandomFailuresEveryProtocol over
// optionProtocols: 1 seed per case by default, 40 with FTSIM_SEARCH=1.
func TestRandomFailuresProtocolOptions(t *testing.T) {
	t.Parallel()
	seeds := searchSize(1, 40)
	searchRandomFailures(t, optionProtocols, searchClusters, seeds, searchMTBFs)
}

// smallClusters are machines of one and two nodes, with one core or two.
var smallClusters = [][]string{
	{"cluster.nodes=1", "cluster.spares=2", "detection.mode=oracle"},
	{"cluster.nodes=1", "cluster.spares=1", "cluster.cores=2", `detection.mode="heartbeat"`},
	{"cluster.nodes=2", "cluster.spares=0", "cluster.cores=2", `detection.mode="heartbeat"`},
	{"cluster.nodes=2", "cluster.spares=1", "detection.mode=oracle"},
}

// TestRandomFailuresSmallClusters runs the variants of both searches (but
// two dps backups, which need three nodes) on smallClusters, where every
// object shares a node, and on one core a core, with the others: 1 seed per
// case by default, 40 with FTSIM_SEARCH=1. On one node dps has no backup
// and abft no surviving neighbour: a failure restarts them from scratch.
func TestRandomFailuresSmallClusters(t *testing.T) {
	t.Parallel()
	seeds := searchSize(1, 40)
	var ps []searchProtocol
	for _, p := range append(slices.Clone(searchProtocols), optionProtocols...) {
		if !slices.Contains(p.keys, "protocol.backups=2") {
			ps = append(ps, p)
		}
	}
	searchRandomFailures(t, ps, smallClusters, seeds, searchMTBFs)
}

// weibullHalf is cluster c with Weibull failures of shape 0.5.
func weibullHalf(c []string) []string {
	return append(slices.Clone(c), `failures.distribution="weibull"`, "failures.weibull_shape=0.5")
}

// TestRandomFailuresWeibullRepair runs the variants of both searches on
// searchClusters with Weibull failures of shape 0.5 (the decreasing hazard
// measured on real machines: a node that has just started, or been
// repaired, fails soonest, so failures come in bursts and strike during
// recoveries), without repair, with failed nodes repaired a quarter of
// the fault-free run after they fail, and with jobs relaunched as a whole
// waiting for those repairs rather than shrinking: 1 seed per case by
// default, 40 with FTSIM_SEARCH=1.
func TestRandomFailuresWeibullRepair(t *testing.T) {
	t.Parallel()
	seeds := searchSize(1, 40)
	var clusters [][]string
	for _, c := range searchClusters {
		clusters = append(clusters, weibullHalf(c), append(weibullHalf(c), repairQuarter),
			append(weibullHalf(c), repairQuarter, waitForRepair))
	}
	searchRandomFailures(t, append(slices.Clone(searchProtocols), optionProtocols...), clusters, seeds, searchMTBFs)
}

// TestRandomFailuresHighRate runs the variants of both searches on
// searchClusters at a node MTBF of 1.5 fault-free runs (on 4-6 nodes, two
// to four failures a run, often during a recovery), with exponential
// failures and with Weibull failures of shape 0.5: 1 seed per case by
// default, 40 with FTSIM_SEARCH=1.
func TestRandomFailuresHighRate(t *testing.T) {
	t.Parallel()
	seeds := searchSize(1, 40)
	var clusters [][]string
	for _, c := range searchClusters {
		clusters = append(clusters, c, weibullHalf(c))
	}
	searchRandomFailures(t, append(slices.Clone(searchProtocols), optionProtocols...), clusters, seeds, []float64{1.5})
}

// offsetProtocols keep a node's copies two nodes further, out of its
// failure domain when nodes fail in pairs (chassisPairs).
var offsetProtocols = []searchProtocol{
	{"cpr", []string{`protocol.interval="fixed"`, `protocol.tier="buddy"`, "protocol.buddy_offset=2", period}, nil},
	{"mlog", []string{`protocol.restart="fast"`, "protocol.multi_failure=true", "protocol.buddy_offset=2", period}, nil},
	{"mlog", []string{`protocol.restart="basic"`, "protocol.buddy_offset=2", period}, nil},
	{"dps", []string{"protocol.every=5", "protocol.backup_offset=2"}, nil},
	{"dps", []string{"protocol.every=3", "protocol.backups=2", "protocol.backup_offset=3"}, nil},
}

// TestRandomFailuresChassis runs the variants of both searches, and each
// protocol with its copies two nodes further (offsetProtocols), on
// searchClusters whose nodes also fail in pairs (chassisPairs), at a node
// MTBF of 12 fault-free runs: 1 seed per case by default, 40 with
// FTSIM_SEARCH=1. A pair's failure takes a node with its neighbour, and
// often with the node that holds its copies.
func TestRandomFailuresChassis(t *testing.T) {
	t.Parallel()
	seeds := searchSize(1, 40)
	var clusters [][]string
	for _, c := range searchClusters {
		clusters = append(clusters, append(slices.Clone(c), chassisPairs))
	}
	ps := append(append(slices.Clone(searchProtocols), optionProtocols...), offsetProtocols...)
	searchRandomFailures(t, ps, clusters, seeds, []float64{12})
}
