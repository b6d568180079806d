package experiment

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"ftsim/scenarios"
	"ftsim/sim"
)

// machineChoices are the values a random machine draws from, key by key:
// from a network much faster than the computation to one that dominates
// it (latency, jitter, bandwidth, the CPU cost of communication), slow and fast
// storage with and without a per-writer cap, round-robin placement.
var machineChoices = []struct {
	key    string
	values []string
}{
	{"cluster.nodes", []string{"1", "2", "3", "4", "5", "7", "8"}},
	{"cluster.spares", []string{"0", "1", "2", "4"}},
	{"cluster.cores", []string{"1", "2", "4"}},
	{"cluster.rate", []string{"1e8", "1e9", "1e10"}},
	{"cluster.placement", []string{`"block"`, `"round_robin"`}},
	{"network.latency", []string{`"0s"`, `"200ns"`, `"2us"`, `"50us"`, `"1ms"`}},
	{"network.bandwidth", []string{`"50MB/s"`, `"1GB/s"`, `"12.5GB/s"`, `"1TB/s"`}},
	{"network.cpu_load", []string{"0", "0.25", "1"}},
	{"network.message_cpu", []string{`"0s"`, `"0s"`, `"1us"`, `"50us"`}},
	{"network.jitter", []string{`"0s"`, `"0s"`, `"500ns"`, `"20us"`}},
	{"storage.memory_bandwidth", []string{`"1GB/s"`, `"100GB/s"`}},
	{"storage.disk_bandwidth", []string{`"50MB/s"`, `"10GB/s"`}},
	{"storage.pfs_bandwidth", []string{`"1GB/s"`, `"100GB/s"`}},
	{"storage.pfs_node_bandwidth", []string{"0", `"100MB/s"`, `"2GB/s"`}},
	{"storage.pfs_latency", []string{`"0s"`, `"10us"`, `"1ms"`}},
}

// drawMachine returns the keys of a machine drawn from machineChoices.
func drawMachine(rng *rand.Rand) []string {
	keys := make([]string, len(machineChoices))
	for i, c := range machineChoices {
		keys[i] = c.key + "=" + c.values[rng.IntN(len(c.values))]
	}
	return keys
}

// drawFailures sets the failure process, detection, downtime, repair and
// spare boot of p, whose fault-free run takes ff, from rng: exponential or
// Weibull failures (shape 0.5, 0.7 or 1.5) at a node MTBF of 1.5, 4 or 12
// fault-free runs, times nodes/4 beyond 4 nodes; oracle detection after 0
// to a tenth of the run, or heartbeats every 100th or 20th of it with a
// timeout of one or three periods (or sim.HBJitterMargin jitters more than
// a period if that is longer; the jitter is cut to a 20th of the period);
// no downtime or a 50th of the run; no repair or repair after a quarter or
// a 20th of it; spares that boot at once, in a 20th or (at the two lower
// rates) in half of it. The limits
// keep out machines on which no protocol could finish: with more nodes at
// the same node MTBF, a protocol that restarts from scratch (as cpr does
// when a failure takes its memory checkpoints) rarely gets through; with
// spares booting for half a run at a failure every third of one, no
// recovery ends before the next failure.
func drawFailures(rng *rand.Rand, p *Point, ff sim.Time) {
	frac := func(fs ...float64) float64 { return fs[rng.IntN(len(fs))] }
	pick := func(fs ...float64) scenarios.Duration { return scenarios.Duration(frac(fs...) * float64(ff)) }
	f, d, c := &p.Scenario.Failures, &p.Scenario.Detection, &p.Scenario.Cluster
	rate := frac(1.5, 4, 12)
	f.Distribution, f.NodeMTBF = "exponential", scenarios.Duration(rate*float64(ff)*float64(max(c.Nodes, 4))/4)
	if rng.IntN(2) == 0 {
		f.Distribution, f.WeibullShape = "weibull", frac(0.5, 0.7, 1.5)
	}
	if rng.IntN(2) == 0 {
		d.Mode, d.Delay = "oracle", pick(0, 0.01, 0.1)
	} else {
		d.Mode, d.Period = "heartbeat", pick(0.01, 0.05)
		d.Timeout = d.Period * scenarios.Duration(1+2*rng.IntN(2))
		// at most the jitter the period allows, and a timeout long enough
		// that it almost never fakes a failure (sim tests the false
		// suspicions); a period raised to the jitter's instead made
		// detection slower than a run on the fastest-failing machines
		n := &p.Scenario.Network
		n.Jitter = min(n.Jitter, d.Period/sim.HBJitterMargin)
		d.Timeout = max(d.Timeout, d.Period+sim.HBJitterMargin*n.Jitter)
	}
	f.Downtime = pick(0, 0.02)
	c.Repair = pick(0, 0.25, 0.05)
	c.SpareBoot = pick(0, 0.05, 0.5)
	if rate == 1.5 {
		c.SpareBoot = min(c.SpareBoot, scenarios.Duration(ff/20))
	}
}

// drawNetwork returns the keys of a network topology drawn from rng: flat;
// a torus, the cube closest to the machine, a ring of 16 or a 4×2×2 (room
// for the largest machine drawn); or
// a fat tree of leaves of 1, 2 or 4 ports, full or tapered 4:1; with 0,
// 100 ns or 5 µs more latency per hop beyond the first.
func drawNetwork(rng *rand.Rand) []string {
	hop := fmt.Sprintf("network.hop_latency=%q", []string{"0s", "100ns", "5us"}[rng.IntN(3)])
	switch rng.IntN(3) {
	case 0:
		return []string{`network.topology="flat"`}
	case 1:
		dims := fmt.Sprintf("network.torus_dims=%q", []string{"", "16", "4x2x2"}[rng.IntN(3)])
		return []string{`network.topology="torus"`, dims, hop}
	}
	return []string{`network.topology="fat_tree"`, hop,
		fmt.Sprintf("network.switch_ports=%d", []int{1, 2, 4}[rng.IntN(3)]),
		fmt.Sprintf("network.oversubscription=%d", []int{1, 4}[rng.IntN(2)])}
}

// drawChassis makes p's nodes also fail in failure domains of 2 or 3
// consecutive nodes (at most the machine's), each failing as a whole at a
// mean interval of 4 or 16 node MTBFs, drawn from rng. Chassis failing as
// often as their nodes would take the fastest-failing machines past the
// limits drawFailures keeps: with a first draw of 1 or 4 node MTBFs, cpr
// with its checkpoints in memory, which restarts from scratch at every
// failure, reached the runtime's limit of 1,000,000 failures on 9 nodes at
// seed 24009.
func drawChassis(rng *rand.Rand, p *Point) {
	f, c := &p.Scenario.Failures, p.Scenario.Cluster
	f.GroupSize = min(2+rng.IntN(2), c.Nodes+c.Spares)
	f.GroupMTBF = f.NodeMTBF * scenarios.Duration(4+12*rng.IntN(2))
}

// Every workload of both lists under every protocol variant of both
// random searches runs on random machines (drawMachine) with random
// failures, detection and repair (drawFailures), with a checkpoint period
// of an eighth of the baseline on that machine, and ends with its
// reference answer unless every node failed. A machine the protocol
// rejects (a scenario error naming the key), or on which the protocol's
// work leaves the application no progress even without failures
// (NoProgressError), is skipped. By default 1
// machine per case; FTSIM_SEARCH=1 runs 40, and FTSIM_MACHINE_SEEDS=N
// starts their seeds at N instead of 1. FTSIM_MACHINE_BURSTS=long (or
// short) replaces the random failures by a burst plan (burstPlans) on
// other machines. FTSIM_MACHINE_EXTRAS=1 also draws the network's
// topology (drawNetwork), with random failures failing chassis
// (drawChassis) and, on a machine that repairs its nodes, half the time a
// relaunch that waits for them (cluster.no_spare = "wait"), all from a
// stream of their own, so that the machines are otherwise those drawn
// without it, and adds the protocols that keep their copies two nodes away
// (offsetProtocols).
func TestRandomFailuresRandomMachines(t *testing.T) {
	t.Parallel()
	seeds := searchSize(1, 40)
	first := 1
	if v := os.Getenv("FTSIM_MACHINE_SEEDS"); v != "" {
		if _, err := fmt.Sscan(v, &first); err != nil {
			t.Fatalf("FTSIM_MACHINE_SEEDS=%q: %v", v, err)
		}
	}
	bursts := os.Getenv("FTSIM_MACHINE_BURSTS")
	if bursts != "" && bursts != "long" && bursts != "short" {
		t.Fatalf("FTSIM_MACHINE_BURSTS=%q: want long or short", bursts)
	}
	extras := os.Getenv("FTSIM_MACHINE_EXTRAS") != ""
	runs, failures, rejected, overloaded := 0, 0, 0, 0
	protocols := machineProtocols(extras)
	searchCases(append(slices.Clone(searchWorkloads), otherWorkloads...), protocols, [][]string{nil}, func(c searchCase) {
		h := fnv.New64a()
		fmt.Fprint(h, c, c.keys)
		if bursts != "" {
			fmt.Fprint(h, "bursts")
		}
		for seed := first; seed < first+seeds; seed++ {
			p, name, err := c.onMachine(t, seed, h.Sum64(), bursts, extras)
			var np *NoProgressError
			if errors.As(err, &np) {
				overloaded++
				continue
			}
			if err != nil {
				rejected++
				continue
			}
			runs++
			failures += runSearch(t, name, p).Failures
		}
	})
	if failures == 0 {
		t.Fatal("no failure struck: the search tests nothing")
	}
	t.Logf("%d runs, %d failures; %d machines rejected, %d on which the protocol leaves no progress%s", runs, failures, rejected, overloaded, withoutKorf())
}

// machineProtocols are the protocol variants of the random-machine search,
// with the extras of FTSIM_MACHINE_EXTRAS or not.
func machineProtocols(extras bool) []searchProtocol {
	ps := append(slices.Clone(searchProtocols), optionProtocols...)
	if extras {
		ps = append(ps, offsetProtocols...)
	}
	return ps
}

// onMachine prepares the case with the given seed on the machine, failures,
// detection and repair drawn from the seed and the case's hash (bursts:
// "long" or "short" for a burst plan instead of random failures; extras: a
// topology and failing chassis too), and names it. Its errors are
// prepareScaled's.
func (c searchCase) onMachine(t *testing.T, seed int, hash uint64, bursts string, extras bool) (*Point, string, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), hash))
	more := rand.New(rand.NewPCG(uint64(seed), ^hash)) // the extras' own stream
	c.cluster = drawMachine(rng)
	if extras {
		c.cluster = append(c.cluster, drawNetwork(more)...)
	}
	p, ff, err := c.prepareScaled(t, seed)
	if err != nil {
		return nil, "", err
	}
	drawFailures(rng, p, ff)
	f := &p.Scenario.Failures
	if bursts != "" {
		f.Distribution = "scripted"
		f.Scripted = burstPlans(rng, ff, p.Scenario.Cluster.Nodes+p.Scenario.Cluster.Spares, 1, bursts == "long")[0]
	} else if extras {
		drawChassis(more, p)
	}
	cl := &p.Scenario.Cluster
	if extras && cl.Repair > 0 && more.IntN(2) == 0 {
		cl.NoSpare = "wait"
	}
	n := p.Scenario.Network
	name := fmt.Sprintf("%s, seed %d, %s MTBF %v (shape %g) chassis of %d MTBF %v plan %v, detection %+v, network %s %q hop %v ports %d oversubscription %g, jitter %v, downtime %v, repair %v (no spare: %s), spare boot %v",
		c, seed, f.Distribution, f.NodeMTBF, f.WeibullShape, f.GroupSize, f.GroupMTBF, f.Scripted, p.Scenario.Detection,
		n.Topology, n.TorusDims, n.HopLatency, n.SwitchPorts, n.Oversubscription, n.Jitter, f.Downtime, cl.Repair, cl.NoSpare, cl.SpareBoot)
	return p, name, nil
}

// prepareScaled prepares the case with the given seed, with the protocol's
// period an eighth of the baseline run on the case's machine (measured
// first without protocol), and returns the point and the longer of its
// baseline and fault-free run. The errors prepareKeys returns are
// returned; any other failure is fatal.
func (c searchCase) prepareScaled(t *testing.T, seed int) (*Point, sim.Time, error) {
	t.Helper()
	bare := c
	bare.protocol = searchProtocol{kind: "none"}
	b, err := c.prepareKeys(t, bare.overrides(seed, "", nil))
	if err != nil {
		return nil, 0, err
	}
	p, err := c.prepareKeys(t, c.overrides(seed, fmt.Sprintf("%dns", max(b.Baseline/8, 1)), nil))
	if err != nil {
		return nil, 0, err
	}
	return p, max(p.FaultFree, p.Baseline), nil
}

// prepareKeys prepares the scenario of the given keys. It returns a
// scenario error (a key the protocol or workload rejects) or a
// NoProgressError (the protocol's work leaves the application no progress
// on the machine), and fails the test on any other.
func (c searchCase) prepareKeys(t *testing.T, keys []string) (*Point, error) {
	t.Helper()
	s, err := scenarios.Parse("search.toml", []byte(`name = "search"`), keys)
	if err != nil {
		return nil, err
	}
	p, err := Prepare(s)
	var serr *scenarios.Error
	var nerr *NoProgressError
	if err != nil && !errors.As(err, &serr) && !errors.As(err, &nerr) {
		t.Fatalf("%s: %v", c, err)
	}
	return p, err
}

// A local message's tuple (sender and receiver on one node) on its way to
// the buddy when that node fails belongs to the receiver's dead life: the
// restored receiver hands the TN out again, to another message, and a
// second failure of the receiver before its next checkpoint must not
// restore the stale tuple's TN (found by the burst search on random
// machines: the re-executed receiver waited for ever for a TN whose message
// carried another). The keys are the search's case; the first failure
// makes mlog restart from scratch, node 0's failure 22 µs after the fresh
// start strikes while the tuple of object 5's first message to object 0 is
// on its way, and node 6's failure strikes object 0 again.
func TestStaleLocalTupleAfterRestore(t *testing.T) {
	keys := []string{"workload.kind=stencil", "protocol.kind=mlog", "seed=2", "cluster.nodes=5", "cluster.spares=4",
		"cluster.cores=4", "cluster.rate=1e8", `cluster.placement="round_robin"`, `cluster.repair="216.916us"`, `cluster.spare_boot="0s"`,
		`network.latency="50us"`, `network.bandwidth="50MB/s"`, "network.cpu_load=1",
		`storage.memory_bandwidth="1GB/s"`, `storage.disk_bandwidth="50MB/s"`, `storage.pfs_bandwidth="100GB/s"`,
		`storage.pfs_node_bandwidth="2GB/s"`, `storage.pfs_latency="10us"`,
		"workload.nx=12", "workload.ny=10", "workload.nz=8", "workload.iterations=20", "workload.blocks_per_node=2",
		`protocol.restart="fast"`, `protocol.max_log="2KB"`, "protocol.period=210600ns",
		`failures.distribution="scripted"`, `detection.mode="oracle"`,
		`failures.scripted=[{node=8, at="1.36192ms"}, {node=1, at="1.36192ms"}, {node=0, at="1.383611ms"}, {node=6, at="1.817443ms"}]`}
	if r := runKeys(t, keys); !r.Finished || !r.DigestOK || r.Failures != 3 || r.Restarts != 1 {
		t.Fatalf("finished %v, digest_ok %v, %d failures, %d restarts from scratch: %s", r.Finished, r.DigestOK, r.Failures, r.Restarts, r.Note)
	}
}

// A failure that a restart from scratch took in, handed over again, changes
// nothing (found by the burst search on random machines with relaunches
// that wait for repairs, session 45). dps, whose recovery waits out the
// downtime, gave up at node 0's failure and restarted from scratch, taking
// in nodes 1 and 2's failures, detected at the same instant; their own
// recoveries, due a downtime later, handed them to the restart again just
// before it began, and it dropped nodes 1 and 2, repaired and back in the
// slots since. Waiting for their repair, the run never ended; shrinking, it
// went on without them. Both now run on the four nodes, to the same end.
func TestFailureRecoveredAfterARestart(t *testing.T) {
	keys := []string{"workload.kind=dp", "protocol.kind=dps", "seed=92006", `workload.problem="knapsack"`,
		"workload.random_items=25", "workload.capacity=1500", "workload.objects_per_node=3", "protocol.every=3", "protocol.backups=2",
		"cluster.nodes=4", "cluster.spares=0", "cluster.cores=1", "cluster.rate=1e9", `cluster.placement="round_robin"`,
		`cluster.repair="163.535us"`, `cluster.spare_boot="0s"`,
		`network.latency="50us"`, `network.bandwidth="50MB/s"`, "network.cpu_load=1",
		`storage.memory_bandwidth="1GB/s"`, `storage.disk_bandwidth="50MB/s"`, `storage.pfs_bandwidth="100GB/s"`,
		"storage.pfs_node_bandwidth=0", `storage.pfs_latency="1ms"`,
		`network.topology="fat_tree"`, `network.hop_latency="5us"`, "network.switch_ports=2", "network.oversubscription=4",
		`detection.mode="oracle"`, `detection.delay="327.07us"`, `failures.downtime="65.414us"`, `failures.distribution="scripted"`,
		`failures.scripted=[{node=0, at="2.698451ms"}, {node=1, at="2.763865ms"}, {node=2, at="2.763865ms"}]`}
	var makespans []float64
	for _, policy := range []string{"shrink", "wait"} {
		r := runKeys(t, append(slices.Clone(keys), `cluster.no_spare="`+policy+`"`))
		if !r.Finished || !r.DigestOK || r.Failures != 3 || r.Restarts != 1 {
			t.Fatalf("%s: finished %v, digest_ok %v, %d failures, %d restarts from scratch: %s", policy, r.Finished, r.DigestOK, r.Failures, r.Restarts, r.Note)
		}
		makespans = append(makespans, r.MakespanS)
	}
	if makespans[0] != makespans[1] {
		t.Fatalf("makespans %v shrinking and waiting: the restart from scratch must keep its four nodes either way", makespans)
	}
}

// A thread re-activated from its backup must not be handed copies of the
// objects its lost incarnation sent itself after the checkpoint: its
// re-execution posts them again. Found by a scratch search of dps with
// checkpoints both by progress and by time, on random machines with long
// bursts: node 0's failure moved objects 0 and 1 to node 1; node 1's, 88 µs
// later, took them with objects 2 and 3, all re-activated on node 2. The
// self-addressed ticks of object 2 (a DP block in request mode, which
// notes in a flag that is not state that a tick is on its way) were still
// on their way to its backup as it was re-activated there; taken as they
// came, one of them arrived before the re-execution had sent it, the block
// dropped its own re-post as received and waited for that tick for ever
// (the run stopped with nothing left to run, objects 2 to 7 at stage 12 of
// 29).
func TestDPSOwnCopiesAfterRestore(t *testing.T) {
	keys := []string{"workload.kind=dp", "protocol.kind=dps", "seed=8024", "cluster.nodes=4", "cluster.spares=0",
		"cluster.cores=4", "cluster.rate=1e8", `cluster.placement="block"`, `cluster.repair="875.746us"`, `cluster.spare_boot="0s"`,
		`network.latency="0s"`, `network.bandwidth="12.5GB/s"`, "network.cpu_load=1", `network.jitter="20us"`,
		`network.topology="torus"`, `network.torus_dims="4x2x2"`, `network.hop_latency="5us"`,
		`storage.pfs_latency="10us"`, `workload.problem="lcs"`, "workload.random_a=200", "workload.random_b=150",
		"workload.requests=true", "workload.objects_per_node=2",
		"protocol.every_progress=3", `protocol.period="323.9us"`, "protocol.every=0",
		`failures.distribution="scripted"`, `detection.mode="oracle"`, `detection.delay="0s"`,
		`failures.scripted=[{node=0, at="1.18255ms"}, {node=0, at="1.200064ms"}, {node=1, at="1.270123ms"}, {node=1, at="1.620421ms"}, {node=0, at="1.69048ms"}]`}
	if r := runKeys(t, keys); !r.Finished || !r.DigestOK || r.Failures != 2 || r.Restarts != 0 {
		t.Fatalf("finished %v, digest_ok %v, %d failures, %d restarts from scratch: %s", r.Finished, r.DigestOK, r.Failures, r.Restarts, r.Note)
	}
}

// abft's rebuild plans for the 0/1 knapsack, on machines of scratch
// searches of workload settings: the first three in request mode (30
// random items and the default capacity, half their weight, on 7 objects;
// the searches' knapsack of capacity 300 leaves almost no item to fit, and
// its blocks almost nothing to send each other), the last pushing its
// values, with 3 objects per node. Each run waited for ever:
//   - "resendable": node 0 then node 2 failed 297 µs apart. Objects 0-2
//     restarted from stage 0; then 5 was rebuilt at stage 22 and 6 at 0,
//     and the plan counted on 5 building 6's data of stages 9-21 again
//     from the flag bits, which the restarted 0-2 no longer had. 5 had
//     answered 6's requests for them before its failure and ignored the
//     new ones; 6 waited at stage 9.
//   - "forced rebuild planned again": three failures; the second round
//     planned object 3 back to stage 6, but objects restarted in the same
//     round no longer had the flag bits its rebuild needed: its install
//     asked for a new round, which, nothing being lost, planned nothing.
//     Object 4 waited at stage 8 for 3's data. Either fix alone ends this
//     run: the plan now counts the flag bits an owner planned back to an
//     earlier stage will not have, and a round plans a forced rebuild again
//     when nothing is lost.
//   - "every message waited for" (spares used; 4 nodes, three failures): the
//     third round rebuilt object 5 at stage 14 while the live object 6,
//     restarted at stage 0, would ask it for its data of stages 1 to 13. The
//     plan checked only the first of those, which the flag bits gave; those
//     of stages 9 to 13 they did not, and 6 waited at stage 9.
//   - "forced rebuild keeps its inputs" (4 nodes, no spare, nodes 0 and 3
//     failing 189 ns apart at 82% of the run): the second round forced the
//     live object 7, at stage 20, back to stage 1, counting on object 4's
//     logged data of stage 16 among others. Until its restart 5 µs later 7
//     kept computing, and on reaching stage 21 it pruned that message from
//     4's log (it keeps its receiver's last four stages); 4, at stage 22,
//     could not build it again from the flag bits, and 7 waited at stage 16.
//     A forced rebuild now prunes nothing until it restarts.
func TestABFTKnapsackRebuilds(t *testing.T) {
	knapsack := []string{"workload.kind=dp", "protocol.kind=abft", `workload.problem="knapsack"`, `failures.distribution="scripted"`}
	requests := []string{"workload.random_items=30", "workload.objects=7", "workload.requests=true"}
	for _, c := range []struct {
		name     string
		workload []string
		keys     []string
		failures int
	}{
		{"resendable", requests, []string{"seed=39", "protocol.use_spares=false", "cluster.nodes=3", "cluster.spares=4", "cluster.cores=2", "cluster.rate=1e10",
			`cluster.repair="3.7146ms"`, `cluster.spare_boot="0s"`, `network.latency="2us"`, `network.bandwidth="1GB/s"`,
			"network.cpu_load=1", `network.message_cpu="50us"`, `network.jitter="20us"`, `storage.memory_bandwidth="100GB/s"`,
			`detection.mode="oracle"`, `detection.delay="1.48584ms"`, `failures.downtime="297.168us"`,
			`failures.scripted=[{node=0, at="10.330149ms"}, {node=2, at="10.627317ms"}]`}, 2},
		{"forced rebuild planned again", requests, []string{"seed=4", "protocol.use_spares=false", "cluster.nodes=5", "cluster.spares=1", "cluster.cores=4", "cluster.rate=1e8",
			`cluster.placement="round_robin"`, `cluster.repair="3.049079ms"`, `cluster.spare_boot="3.049079ms"`,
			`network.latency="50us"`, `network.bandwidth="50MB/s"`, "network.cpu_load=0.25", `storage.memory_bandwidth="100GB/s"`,
			`network.topology="torus"`, `network.torus_dims="4x2x2"`, `network.hop_latency="5us"`,
			`detection.mode="heartbeat"`, `detection.period="3.049079ms"`, `detection.timeout="3.049079ms"`, `failures.downtime="1.219631ms"`,
			`failures.scripted=[{node=0, at="27.208665ms"}, {node=1, at="42.45406ms"}, {node=4, at="42.515041ms"}]`}, 3},
		{"every message waited for", requests, []string{"seed=639", "cluster.nodes=4", "cluster.spares=0", "cluster.cores=1",
			"cluster.rate=1e9", `cluster.placement="round_robin"`, `network.latency="0s"`, `network.bandwidth="1GB/s"`,
			`network.jitter="20us"`, `storage.memory_bandwidth="100GB/s"`, `network.topology="torus"`, `network.torus_dims="16"`,
			`detection.mode="heartbeat"`, `detection.period="456.553us"`, `detection.timeout="856.553us"`,
			`failures.scripted=[{node=0, at="3.543834ms"}, {node=0, at="3.726455ms"}, {node=1, at="6.00922ms"}, {node=2, at="6.054875ms"}, {node=2, at="6.10053ms"}]`}, 3},
		{"forced rebuild keeps its inputs", []string{"workload.random_items=25", "workload.capacity=1500", "workload.objects_per_node=3"},
			[]string{"seed=1", "cluster.nodes=4", "cluster.spares=0", "detection.mode=oracle",
				`failures.scripted=[{node=0, at="155.025us"}, {node=3, at="155.214us"}]`}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := runKeys(t, slices.Concat(knapsack, c.workload, c.keys)); !r.Finished || !r.DigestOK || r.Failures != c.failures {
				t.Fatalf("finished %v, digest_ok %v, %d failures: %s", r.Finished, r.DigestOK, r.Failures, r.Note)
			}
		})
	}
}

// The runs of the random-machine search whose memory audit failed (with
// FTSIM_SEARCH=1), each case at its seed on every variant of its workload:
// cpr's buddy copies sent to a node down but not yet detected looked held
// once the node was repaired (accounted below zero), and abft's restore of
// a DP object forgot, without releasing it, the critical data its new node
// had kept for it meanwhile.
func TestMachineSearchAuditCases(t *testing.T) {
	runMachineCases(t, []machineCase{
		{"stencil", "cpr", `protocol.tier="buddy"`, 8, "", false},
		{"stencil", "cpr", `protocol.tier="buddy"`, 17, "", false},
		{"stencil", "cpr", `protocol.tier="buddy"`, 29, "", false},
		{"dp", "cpr", `protocol.tier="buddy"`, 33, "", false},
		{"pida", "cpr", `protocol.tier="buddy"`, 5, "", false},
		{"dp", "replication", `protocol.tier="buddy"`, 23, "", false},
		{"synthetic", "replication", "protocol.restart_replicas=true", 23, "", false},
		{"dp", "abft", "", 32, "", false},
		{"dp", "abft", "", 33, "", false},
	})
}

// Runs of the random-machine search with the extras (FTSIM_MACHINE_SEEDS=54000,
// long and short bursts) whose dps oracle audit, on in the searches since
// session 39, counted originals dropped that were not re-posts. Each was an
// original dropped after its duplicate: the receiver, re-activated on its
// backup's node, took the duplicate that arrived there (OnControl), and the
// original, the same object, came second. The audit now counts those apart
// (CopiesFirst); every run found ended with the reference answer.
func TestMachineSearchDuplicateBeforeOriginal(t *testing.T) {
	runMachineCases(t, []machineCase{
		{"stencil", "dps", "protocol.spread=true", 54033, "short", true},
		{"stencil", "dps", "protocol.backups=2", 54011, "long", true},
		{"life", "dps", "protocol.backups=2", 54016, "long", true},
		{"life", "dps", "protocol.every=0", 54028, "short", true},
	})
}

// Runs of the random-machine search with the extras (FTSIM_MACHINE_SEEDS=56000,
// long bursts) that never finished: life and dp under mlog's fast restart
// with multi_failure and buddy_offset = 2. Both hang on the build before a
// restored object's gate reserved the TNs the checkpoint logs of lost
// objects hold for it (TestFailureBurstRegressions, "TNs resent after the
// gate opened"), and finish with it. The cause is the same: a gate opened
// while the sender's log held TNs for the receiver (57 and 58 for three
// life tiles, 1 for a dp block), handed them to other messages, and the
// sender's resends, arriving below the receiver's delivered TN, were
// dropped as duplicates.
func TestMachineSearchGateReservesResentTNs(t *testing.T) {
	runMachineCases(t, []machineCase{
		{"life", "mlog", "protocol.buddy_offset=2", 56014, "long", true},
		{"dp", "mlog", "protocol.buddy_offset=2", 56036, "long", true},
	})
}

// A run of the random-machine search (FTSIM_MACHINE_SEEDS=10000) that ended
// with a wrong answer: under replication a Game of Life tile's neighbour
// ran on the borders of the tile's twin, which was ahead, and sent borders
// two generations ahead of the tile, which took the parity slot of its
// current generation. A tile now keeps them for later.
func TestMachineSearchReplicaFarBehind(t *testing.T) {
	runMachineCases(t, []machineCase{
		{"life", "replication", `protocol.tier="buddy"`, 10015, "", false},
		{"life", "replication", "", 11032, "long", false}, // FTSIM_MACHINE_SEEDS=11000 FTSIM_MACHINE_BURSTS=long
	})
}

// Runs of the random-machine search in its long-burst mode
// (FTSIM_MACHINE_BURSTS=long or short, FTSIM_MACHINE_SEEDS=9000 to 11000) that never
// finished: under replication with the buddy tier, a node died after it had
// received a buddy copy of the checkpoint being written. The pieces it
// wrote were written again by the other replicas' nodes, and the part one
// of them added to its piece followed the piece's copy to the dead node,
// where it was never settled: the checkpoint waited for ever. Every copy
// the dead node held now goes whole to the owner's next buddy, unless the
// owner is known to be dead too (the last three cases, from seeds 12000,
// hung with a first version of the fix that had the dead owner send it).
func TestMachineSearchBuddyCopyHeldByTheDead(t *testing.T) {
	runMachineCases(t, []machineCase{
		{"stencil", "replication", `protocol.tier="buddy"`, 9031, "long", false},
		{"stencil", "replication", `protocol.tier="buddy"`, 10018, "long", false},
		{"dp", "replication", "protocol.restart_replicas=true", 9021, "long", false},
		{"dp", "replication", "protocol.restart_replicas=true", 11007, "long", false},
		{"dp", "replication", "protocol.restart_replicas=true", 9021, "short", false},
		{"stencil", "replication", "protocol.restart_replicas=true", 12005, "long", false},
		{"dp", "replication", `protocol.tier="buddy"`, 12031, "long", false},
		{"dp", "replication", `protocol.tier="buddy"`, 12032, "long", false},
	})
}

// Runs of the random-machine search in its burst modes (FTSIM_MACHINE_SEEDS
// 10000 and 11000) that never finished: under dps with shrink = false, a
// failure took a farm's master and a worker at once. The master, with no
// checkpoint yet, was activated from its initial state and ran Start, whose
// task to the worker went to it while it was still lost; the worker was
// re-created just after, and the resend that follows skips the workers
// Start served. The lost workers are now re-created first.
func TestMachineSearchFarmMasterRestartsWithWorker(t *testing.T) {
	runMachineCases(t, []machineCase{
		{"farm", "dps", "protocol.shrink=false", 10003, "short", false},
		{"farm", "dps", "protocol.shrink=false", 11029, "short", false},
		{"farm", "dps", "protocol.shrink=false", 11016, "long", false},
	})
}

// A run of the random-machine search's long-burst mode (FTSIM_MACHINE_SEEDS=
// 9000) that never finished: under mlog's multiple-failure extension the
// spare restarting a failed node crashed while it spread the objects, and an
// object to recreate on the next restarting node needed tuples of its
// remote message log that the crashed node held. Its fetch waited for a
// detection that had already come. The restart now falls back to a restart
// from scratch, reported, as for any lost log.
func TestMachineSearchRestartingNodeHeldTuples(t *testing.T) {
	runMachineCases(t, []machineCase{{"pida", "mlog", "protocol.multi_failure=true", 9000, "long", false}})
}

// A run of the random-machine search's short-burst mode (FTSIM_MACHINE_SEEDS=
// 10000) that never finished: under mlog without the multiple-failure
// extension, a ticket reply left the receiver's node just before it failed
// and reached the sender after the restart's resend phase had asked it for
// a new ticket. The sender took the dead life's TN, which the restored
// receiver gave to another message, and the message was dropped as stale:
// the receiver waited for ever for the TN it handed out again. A reply from
// a life that has failed since is now ignored.
func TestMachineSearchTicketFromADeadLife(t *testing.T) {
	runMachineCases(t, []machineCase{{"dp", "mlog", "protocol.full_log=true", 10027, "short", false}})
}

// A run of the random-machine search's long-burst mode (FTSIM_MACHINE_SEEDS=
// 16000) that stopped with an internal error: under abft for dynamic
// programming, a forced rebuild not restarted yet was planned back to its
// stage after a second failure had taken the copies of critical data that
// stage needs. It now goes back to the stage its surviving copies allow.
func TestMachineSearchForcedRebuildLostCopies(t *testing.T) {
	runMachineCases(t, []machineCase{{"dp", "abft", "", 16013, "long", false}})
}

// machineCase is a run of the random-machine search: a workload, a protocol
// kind and one of its variant's keys ("" for any variant), at one seed, with
// random failures or a burst plan ("long" or "short", as
// FTSIM_MACHINE_BURSTS), with the extras of FTSIM_MACHINE_EXTRAS or not.
type machineCase struct {
	workload, protocol, key string
	seed                    int
	bursts                  string
	extras                  bool
}

// runMachineCases runs each case on every variant of its workload (and
// every variant of its protocol holding its key) on the machine the search
// draws for that seed.
func runMachineCases(t *testing.T, cases []machineCase) {
	t.Helper()
	protocols := machineProtocols(slices.ContainsFunc(cases, func(k machineCase) bool { return k.extras }))
	runs := 0
	searchCases(append(slices.Clone(searchWorkloads), otherWorkloads...), protocols, [][]string{nil}, func(c searchCase) {
		for _, k := range cases {
			if c.workload != k.workload || c.protocol.kind != k.protocol || (k.key != "" && !slices.Contains(c.protocol.keys, k.key)) {
				continue
			}
			h := fnv.New64a() // the machine's stream, as the search draws it
			fmt.Fprint(h, c, c.keys)
			if k.bursts != "" {
				fmt.Fprint(h, "bursts")
			}
			p, name, err := c.onMachine(t, k.seed, h.Sum64(), k.bursts, k.extras)
			if err != nil {
				continue // a machine the case rejects: as in the search
			}
			runs++
			runSearch(t, name, p)
		}
	})
	if runs == 0 {
		if korfFile == "" && slices.ContainsFunc(cases, func(k machineCase) bool { return k.workload == "pida" }) {
			t.Skip("pida needs the shared Korf instances, not checked out beside the repository")
		}
		t.Fatal("no case ran")
	}
	t.Logf("%d runs", runs)
}

// Runs of the random-machine search with its extras (FTSIM_MACHINE_EXTRAS=1,
// FTSIM_MACHINE_SEEDS=20000, short bursts, and 22000, long bursts) that
// ended with a wrong answer: a replica kept reporting its pair's progress,
// counting its twin's after the twin's node had failed, until the failure
// was detected, and the run ended on it with a stencil block an iteration
// short. The runtime now reads the report again when the twin is lost
// (sim.ProgressLinker).
func TestMachineSearchExtrasReplication(t *testing.T) {
	runMachineCases(t, []machineCase{
		{"stencil", "replication", "protocol.restart_replicas=true", 20023, "short", true},
		{"stencil", "replication", "protocol.restart_replicas=true", 22038, "long", true},
	})
}

// Runs of the random-machine search with its extras (FTSIM_MACHINE_EXTRAS=1,
// FTSIM_MACHINE_SEEDS=21000, short and long bursts) that hung: dps with a
// task farm and shrink = false, two failures (at once, or 11 µs apart) of
// the master's node and of a node of workers. The master, restarted from
// its initial state, ran Start while those workers were lost, and their
// tasks were lost with them; the workers, re-created when their failure was
// recovered, were not lost any more when the master finished Start, and
// were left without tasks.
func TestMachineSearchFarmStartMissedWorkers(t *testing.T) {
	runMachineCases(t, []machineCase{
		{"farm", "dps", "protocol.shrink=false", 21003, "short", true},
		{"farm", "dps", "protocol.shrink=false", 21034, "long", true},
	})
}

// A run of the random-machine search with its extras (FTSIM_MACHINE_EXTRAS=1,
// FTSIM_MACHINE_SEEDS=25000, short bursts) that hung: dps without log_order,
// dp in request mode on a torus ring with 5 µs per extra hop. When a backup
// was activated, a duplicate was still on its way to it (two hops from its
// sender, where the original had taken one), so re-execution handled the
// thread's own later tick before the data that tick follows; the new tick
// re-posted under the replayed one's operation identifier was dropped as its
// duplicate, and the block waited for ever. Re-execution now waits for the
// duplicates live senders' counters say are in flight to the backup. Its
// first version hung in turn at seed 32014 (FTSIM_MACHINE_SEEDS=32000,
// short bursts): thread 1 waited for a duplicate from thread 2, whose node
// failed 2.4 µs later, before it had left; thread 2, re-executed, did not
// post it again while thread 1 waited. A wait for a sender lost since now
// ends.
func TestMachineSearchDuplicateInFlightAtActivation(t *testing.T) {
	runMachineCases(t, []machineCase{
		{"dp", "dps", "protocol.every=0", 25029, "short", true},
		{"dp", "dps", "protocol.backup_offset=2", 32014, "short", true},
	})
}

// A run of the random-machine search with its extras (FTSIM_MACHINE_EXTRAS=1,
// FTSIM_MACHINE_SEEDS=64000) stopped after 1,000,000 failures: the farm
// under cpr on two levels (memory every checkpoint, the PFS every third) on
// 8 nodes and a spare of node MTBF 504 µs (and chassis of 3), with a PFS of
// 1 ms latency. A fault-free run takes 168 µs and two checkpoints. A
// failure loses a node's memory copy, and the job restarts from scratch;
// once an attempt had committed checkpoints 1 and 2, every later attempt's
// first checkpoint was number 3, to the PFS, which no failure-free window
// lets end. A job restarted counts its checkpoints from the one it
// restores, from 1 after a restart from scratch (models/cpr
// TestLevelsCountFromTheRestart), and the run finishes after 35 failures.
func TestMachineSearchLevelsCountFromTheRestart(t *testing.T) {
	runMachineCases(t, []machineCase{
		{"farm", "cpr", `protocol.levels=[{tier="memory", every=1}, {tier="pfs", every=3}]`, 64030, "", true},
	})
}

// A run of the random-machine search with its extras (FTSIM_MACHINE_EXTRAS=1,
// FTSIM_MACHINE_SEEDS=24000) that never finished: dp under cpr to a PFS of
// 1 ms latency, on 4 nodes failing every 7.2 µs (and chassis of 3). Its
// checkpoint, deferred by max_live up to max_wait, starts about 5.6 µs
// after each start and never completes under these failures: an attempt
// must end before it (a fault-free run takes 4.795 µs on 4 nodes, 5.525 µs
// on 3). Three nodes failed within 0.12 µs with one spare left, the restart
// went on with 3 nodes, and later restarts kept 3 while repaired nodes sat
// in the pool; the run never finished. A node set that shrank now takes
// nodes back from the pool at the next failure (none.Replacer).
func TestMachineSearchRestartRegrows(t *testing.T) {
	runMachineCases(t, []machineCase{{"dp", "cpr", `protocol.image="1MB"`, 24029, "", true}})
}

// A run of the random-machine search with its extras (FTSIM_MACHINE_EXTRAS=1,
// FTSIM_MACHINE_SEEDS=38000, short bursts) that stopped with nothing left
// to run: pida under dps with two backups per thread, rotated three nodes
// on, as nodes 1, 0 and 3 of 4 failed one after another. Node 1's failure
// regenerated thread 0's second backup, on node 2, with the order
// regenerate foresees for the inbox (ranks 36 to 38, object {7 2} at 37).
// Node 0's failure re-activated thread 0 from its other backup, whose log
// was empty, and the new incarnation handled {7 2} at rank 36; node 3's then
// re-activated it from node 2, whose log now listed {7 2} at 36 and at 37,
// and the replay waited for ever for a second {7 2}. An activation now
// drops, at every backup of the thread, the ranks after the prefix it
// replays.
func TestMachineSearchStaleOrderLog(t *testing.T) {
	runMachineCases(t, []machineCase{{"pida", "dps", "protocol.backup_offset=3", 38026, "short", true}})
}

// Runs of the random-machine search with its extras (FTSIM_MACHINE_EXTRAS=1,
// FTSIM_MACHINE_SEEDS=94000, long bursts) that never finished: replication
// with buddy checkpoints and restart_replicas on two nodes, no spare, and
// repairs. The interruption's rollback took the node repaired from the
// failure survived as a spare and dropped the other's slot; the spare died
// booting, and the node set, empty with nothing booting, did not watch the
// pool the other node was about to join. It now waits for the first
// repaired node (none.Replacer, TestEmptyNodeSetWaitsForARepair).
func TestMachineSearchReplicationTwoNodes(t *testing.T) {
	runMachineCases(t, []machineCase{
		{"life", "replication", "protocol.restart_replicas=true", 94009, "long", true},
		{"dp", "replication", "protocol.restart_replicas=true", 94030, "long", true},
	})
}

// Runs of the random-machine search with its extras (FTSIM_MACHINE_EXTRAS=1,
// session 64: FTSIM_MACHINE_SEEDS=150000 with long bursts, 151000 with
// short ones) that stopped with nothing left to run: replication of the
// stencil that sums every iterate, on 5 to 7 nodes (151017 under
// restart_replicas). One replica of block 1 got the total of an iterate
// (its twin's partial sum had completed it) before its own children's
// partial sums, swept on, and never sent its own partial sum up: from then
// on its messages to block 0 were numbered one lower than its twin's. When
// the twin's node failed, block 0 dropped the partial sum it waited for as
// a copy of the face it had taken under that number. A block now sends its
// partial sum before it passes the total on or sweeps from it
// (models/replication TestReplicasSendTheSameMessages).
func TestMachineSearchReplicatedReduction(t *testing.T) {
	runMachineCases(t, []machineCase{
		{"stencil", "replication", "", 150008, "long", true},
		{"stencil", "replication", "", 151014, "short", true},
		{"stencil", "replication", "", 151017, "short", true},
		{"stencil", "replication", "", 151018, "short", true},
	})
}

// edgeMachines are the machines of TestEdgeMachines: searchClusters[1]
// (4 nodes, 3 spares, immediate detection) with one key, or a pair, at an
// extreme the random machines do not draw: no latency or a huge one,
// networks and storage tiers a million times slower or faster, messages
// that take a core's time, 64 cores, spares that boot at once or for
// longer than a run, 4 KiB of node memory (checked, not enforced), a
// machine of 1 or 2 nodes, no spare, heartbeats under jitter, the
// topologies.
var edgeMachines = [][]string{
	{`network.latency="0s"`}, {`network.latency="1ns"`}, {`network.latency="10ms"`},
	{`network.bandwidth="10KB/s"`}, {`network.bandwidth="1PB/s"`},
	{`network.message_cpu="100us"`}, {`network.cpu_load=1`},
	{`network.jitter="50us"`}, {`detection.mode="heartbeat"`, `network.jitter="2us"`},
	{`cluster.cores=64`}, {`cluster.spare_boot="0s"`}, {`cluster.spare_boot="1s"`},
	{`failures.downtime="0s"`}, {`failures.downtime="100us"`},
	{`storage.memory_bandwidth="1MB/s"`}, {`storage.disk_bandwidth="1MB/s"`},
	{`storage.pfs_bandwidth="1MB/s"`}, {`storage.pfs_bandwidth="1PB/s"`},
	{`storage.pfs_node_bandwidth="1KB/s"`}, {`storage.pfs_latency="10ms"`},
	{`cluster.memory="4KiB"`}, {`cluster.placement="round_robin"`},
	{`cluster.nodes=1`}, {`cluster.nodes=2`}, {`cluster.spares=0`},
	{`network.topology="torus"`}, {`network.topology="fat_tree"`, "network.oversubscription=4"},
}

// Every workload under every protocol variant on machines at the extremes
// (edgeMachines), with exponential failures at a node MTBF of 4 fault-free
// runs, ends with its reference answer unless every node failed, and its
// record and recoveries are consistent. A machine a protocol cannot use is
// refused before any run, by a configuration error naming the key or
// because its fault-free run makes no progress (a checkpoint at 1 KB/s
// outlasts a thousand runs without protocol); never by a bug. By default
// life and stencil, one seed; FTSIM_SEARCH=1 every workload, two seeds.
func TestEdgeMachines(t *testing.T) {
	t.Parallel()
	workloads, seeds := searchWorkloads, searchSize(1, 2)
	if seeds == 1 {
		workloads = workloads[:2]
	}
	clusters := make([][]string, len(edgeMachines))
	for i, keys := range edgeMachines {
		clusters[i] = append(slices.Clone(searchClusters[1]), keys...)
	}
	runs, failures, refused := 0, 0, 0
	searchCases(workloads, searchProtocols, clusters, func(c searchCase) {
		for seed := 1; seed <= seeds; seed++ {
			name := fmt.Sprintf("%s, seed %d", c, seed)
			p, ff, err := c.tryPrepare(t, seed, "failures.distribution=exponential")
			var np *NoProgressError
			switch {
			case errors.As(err, &np) || err != nil && strings.HasPrefix(err.Error(), "--set "):
				refused++
				continue
			case err != nil:
				t.Errorf("%s: %v", name, err)
				continue
			}
			p.Scenario.Failures.NodeMTBF = scenarios.Duration(4 * ff)
			r := runSearch(t, name, p)
			runs++
			failures += r.Failures
		}
	})
	if failures == 0 {
		t.Fatal("no failure struck: the search tests nothing")
	}
	t.Logf("%d runs, %d failures, %d machines refused%s", runs, failures, refused, withoutKorf())
}
