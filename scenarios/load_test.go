package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDefault(t *testing.T) {
	s, err := Parse("empty.toml", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := Default()
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"name", s.Name, ""},
		{"seed", s.Seed, int64(1)},
		{"reps", s.Reps, 1},
		{"duration_limit", s.DurationLimit, Duration(0)},
		{"cluster", s.Cluster, Cluster{Nodes: 64, Cores: 1, Rate: 1e9, Memory: 64 * GiB, NoSpare: "shrink", Placement: "block"}},
		{"network", s.Network, Network{Latency: 2 * Microsecond, Bandwidth: 12.5e9, Topology: "flat",
			HopLatency: 100 * Nanosecond, SwitchPorts: 32, Oversubscription: 1}},
		{"storage", s.Storage, Storage{MemoryBandwidth: 10e9, DiskBandwidth: 500e6, PFSBandwidth: 100e9, PFSNodeBandwidth: 2e9, PFSLatency: Millisecond}},
		{"failures", s.Failures, Failures{Distribution: "none", NodeMTBF: 5 * Year, WeibullShape: 0.7, Start: "new"}},
		{"detection", s.Detection, Detection{Mode: "heartbeat", Period: Second, Timeout: 3 * Second, HeartbeatBytes: 64}},
		{"workload.kind", s.Workload.Kind(), "life"},
		{"protocol.kind", s.Protocol.Kind(), "none"},
		{"workload keys", len(s.Workload.Keys()), 0},
		{"Default() validates", d.Validate(), nil},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
}

func TestLoadFull(t *testing.T) {
	s, err := Load("testdata/full.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Name, want.Description, want.Seed, want.Reps, want.DurationLimit = "full", "every key set", 42, 3, 2*Day
	want.Cluster = Cluster{Nodes: 128, Spares: 4, Cores: 8, Rate: 2.5e9, Memory: 128 * GiB,
		SpareBoot: 30 * Second, Repair: Hour, NoSpare: "wait", Placement: "round_robin"}
	want.Network = Network{Latency: 1500 * Nanosecond, Bandwidth: 12.5e9, CPULoad: 0.5, Topology: "fat_tree",
		HopLatency: 150 * Nanosecond, TorusDims: "4x4x9", SwitchPorts: 16, Oversubscription: 2}
	want.Storage = Storage{MemoryBandwidth: 20e9, DiskBandwidth: 1 << 30, PFSBandwidth: 1e12, PFSNodeBandwidth: 0, PFSLatency: 5 * Millisecond}
	want.Failures = Failures{Distribution: "scripted", NodeMTBF: 10 * Year, WeibullShape: 0.5, Start: "in_service",
		TraceFile: filepath.Join("testdata", "traces", "lanl.txt"),
		Scripted:  []ScriptedFailure{{Node: 3, At: 10 * Second}, {Node: 5, ByProgress: true, Progress: 0.3}},
		Downtime:  2 * Minute, GroupSize: 4}
	want.Detection = Detection{Mode: "oracle", Period: 500 * Millisecond, Timeout: 2 * Second, Delay: 100 * Millisecond, HeartbeatBytes: KiB}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"top", [5]any{s.Name, s.Description, s.Seed, s.Reps, s.DurationLimit}, [5]any{want.Name, want.Description, want.Seed, want.Reps, want.DurationLimit}},
		{"cluster", s.Cluster, want.Cluster},
		{"network", s.Network, want.Network},
		{"storage", s.Storage, want.Storage},
		{"failures", s.Failures, want.Failures},
		{"detection", s.Detection, want.Detection},
		{"workload.kind", s.Workload.Kind(), "stencil"},
		{"workload keys", s.Workload.Keys(), []string{"size", "step_cost"}},
		{"protocol.kind", s.Protocol.Kind(), "cpr"},
		{"protocol keys", s.Protocol.Keys(), []string{"interval"}},
		{"file", s.File, "testdata/full.toml"},
		{"dir", s.Dir, "testdata"},
		{"resolve", s.Resolve("life/glider.rle"), filepath.Join("testdata", "life", "glider.rle")},
		{"resolve abs", s.Resolve("/abs/x"), "/abs/x"},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
}

// errorCase is a scenario text (or overrides) and the exact error it gives.
type errorCase struct {
	name      string
	text      string
	overrides []string
	want      string // the full error message
}

func runErrorCases(t *testing.T, cases []errorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.toml", []byte(tc.text), tc.overrides)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %q is not an *Error", err, err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tc.want)
			}
		})
	}
}

func TestUnknownKeys(t *testing.T) {
	runErrorCases(t, []errorCase{
		{"top level", "name = \"a\"\n\nnodes = 3\n", nil,
			`x.toml:3: unknown key "nodes"`},
		{"top level typo", "sede = 3\n", nil,
			`x.toml:1: unknown key "sede" (did you mean "seed"?)`},
		{"in cluster", "[cluster]\nnodes = 3\n# comment\n  nodez = 4\n", nil,
			`x.toml:4: unknown key "cluster.nodez" (did you mean "nodes"?)`},
		{"unknown table", "[clustr]\nnodes = 3\n", nil,
			`x.toml:1: unknown key "clustr" (did you mean "cluster"?)`},
		{"unknown dotted table", "seed = 1\nclustr.nodes = 3\n", nil,
			`x.toml:2: unknown key "clustr" (did you mean "cluster"?)`},
		{"dotted key in table", "[cluster]\nnodes = 3\nfoo.bar = 1\n", nil,
			`x.toml:3: unknown key "cluster.foo"`},
		{"inline table", "cluster = {nodes = 3,\n  widht = 2}\n", nil,
			`x.toml:2: unknown key "cluster.widht"`},
		{"wrong case", "[cluster]\nNodes = 3\n", nil,
			`x.toml:2: unknown key "cluster.Nodes" (did you mean "nodes"?)`},
		{"wrong case top", "Seed = 3\n", nil,
			`x.toml:1: unknown key "Seed" (did you mean "seed"?)`},
		{"first in file order", "[detection]\nzzz = 1\n[cluster]\naaa = 2\n", nil,
			`x.toml:2: unknown key "detection.zzz"`},
		{"quoted key", "[cluster]\n\"a b\" = 1\n", nil,
			`x.toml:2: unknown key "cluster.\"a b\""`},
		{"File and Dir are not keys", "Dir = \"x\"\n", nil,
			`x.toml:1: unknown key "Dir"`},
		{"scripted element key", "[failures]\ndistribution = \"scripted\"\nscripted = [\n  {node = 1, at = \"1s\"},\n  {node = 2, when = \"2s\"},\n]\n", nil,
			`x.toml:5: failures.scripted[1]: unknown key "when" (want node, and at or progress)`},
	})
}

func TestBadValues(t *testing.T) {
	runErrorCases(t, []errorCase{
		{"negative nodes", "[cluster]\nnodes = -3\n", nil,
			`x.toml:2: cluster.nodes: must be ≥ 1, got -3`},
		{"zero nodes", "\n\n[cluster]\nnodes = 0\n", nil,
			`x.toml:4: cluster.nodes: must be ≥ 1, got 0`},
		{"negative spares", "[cluster]\nspares = -1\n", nil,
			`x.toml:2: cluster.spares: must be ≥ 0, got -1`},
		{"too many nodes", "[cluster]\nnodes = 100000000\n", nil,
			`x.toml:2: cluster.nodes: nodes + spares must be ≤ 16777216, got 100000000 + 0`},
		{"reps", "reps = 0\n", nil,
			`x.toml:1: reps: must be ≥ 1, got 0`},
		{"negative seed", "seed = -5\n", nil,
			`x.toml:1: seed: must be ≥ 0, got -5`},
		{"huge reps", "reps = 99999999999\n", nil, // was an out-of-memory kill
			`x.toml:1: reps: must be ≤ 1048576, got 99999999999`},
		{"negative duration", "[failures]\ndistribution = \"exponential\"\n\n\n\n\nnode_mtbf = \"-5y\"\n", nil,
			`x.toml:7: failures.node_mtbf: negative duration "-5y"`},
		{"negative duration number", "[cluster]\nspare_boot = -1\n", nil,
			`x.toml:2: cluster.spare_boot: negative duration -1`},
		{"latency of a century", "[network]\nlatency = \"100y\"\n", nil, // wrapped the simulated clock around
			`x.toml:2: network.latency: must be ≥ 0 and under 100 years, got 100y`},
		{"negative jitter", "[network]\njitter = \"-1us\"\n", nil,
			`x.toml:2: network.jitter: negative duration "-1us"`},
		{"jitter of a century", "[network]\njitter = \"100y\"\n", nil,
			`x.toml:2: network.jitter: must be ≥ 0 and under 100 years, got 100y`},
		{"spares that never boot", "[cluster]\nspare_boot = \"250y\"\n", nil,
			`x.toml:2: cluster.spare_boot: must be ≥ 0 and under 100 years, got 250y`},
		{"bad unit", "[network]\nlatency = \"5 parsecs\"\n", nil,
			`x.toml:2: network.latency: unknown unit "parsecs" in duration "5 parsecs" (want ns, us, ms, s, m, h, d or y)`},
		{"negative size", "[cluster]\nmemory = \"-1GiB\"\n", nil,
			`x.toml:2: cluster.memory: negative size "-1GiB"`},
		{"zero bandwidth", "[network]\nbandwidth = 0\n", nil,
			`x.toml:2: network.bandwidth: must be > 0 and finite, got 0`},
		{"infinite rate", "[cluster]\nrate = inf\n", nil,
			`x.toml:2: cluster.rate: must be > 0 and finite, got +Inf`},
		{"nan cpu_load", "[network]\ncpu_load = nan\n", nil,
			`x.toml:2: network.cpu_load: must be in [0, 1], got NaN`},
		{"cpu_load", "[network]\ncpu_load = 1.5\n", nil,
			`x.toml:2: network.cpu_load: must be in [0, 1], got 1.5`},
		{"negative message_cpu", "[network]\nmessage_cpu = \"-2us\"\n", nil,
			`x.toml:2: network.message_cpu: negative duration "-2us"`},
		{"message_cpu of a century", "[network]\nmessage_cpu = \"100y\"\n", nil,
			`x.toml:2: network.message_cpu: must be ≥ 0 and under 100 years, got 100y`},
		{"string for float", "[cluster]\nrate = \"fast\"\n", nil, // was BurntSushi's "incompatible types: ..."
			`x.toml:2: cluster.rate: want a number, got a string`},
		{"exponent too long", "[failures]\nnode_mtbf = \"1e400s\"\n", nil,
			`x.toml:2: failures.node_mtbf: invalid duration "1e400s": exponent out of range (at most two digits)`},
		{"wrong type", "[cluster]\nnodes = \"many\"\n", nil,
			`x.toml:2: cluster.nodes: want an integer, got a string`},
		{"float for int", "[cluster]\nnodes = 1.5\n", nil,
			`x.toml:2: cluster.nodes: want an integer, got a float`},
		{"table for value", "[cluster]\nnodes = {a = 1}\n", nil,
			`x.toml:2: cluster.nodes: want an integer, got a table`},
		{"value for table", "cluster = 3\n", nil,
			`x.toml:1: cluster: want a table, got an integer`},
		{"bool for duration", "duration_limit = true\n", nil,
			`x.toml:1: duration_limit: want a duration such as "90s" or a number of seconds, got a boolean`},
		{"bad placement", "[cluster]\nplacement = \"random\"\n", nil,
			`x.toml:2: cluster.placement: must be one of block, round_robin; got "random"`},
		{"bad no_spare", "[cluster]\nno_spare = \"shrunk\"\n", nil,
			`x.toml:2: cluster.no_spare: must be one of shrink, wait; got "shrunk"`},
		{"wait without repair", "[cluster]\nno_spare = \"wait\"\n", nil,
			`x.toml:2: cluster.no_spare: "wait" needs cluster.repair > 0: with failed nodes never repaired, a job out of spares would wait for ever`},
		{"bad topology", "[network]\ntopology = \"hypercube\"\n", nil,
			`x.toml:2: network.topology: must be one of flat, torus, fat_tree; got "hypercube"`},
		{"torus too small for spares", "[cluster]\nnodes = 60\nspares = 5\n[network]\ntopology = \"torus\"\ntorus_dims = \"4x4x4\"\n", nil,
			`x.toml:6: network.torus_dims: 4x4x4 has room for 64 nodes, the cluster has 65 (nodes + spares)`},
		{"bad torus dims", "[network]\ntorus_dims = \"4 by 4\"\n", nil,
			`x.toml:2: network.torus_dims: want 1 to 8 extents ≥ 1 joined by "x", such as "25x20x20"; got "4 by 4"`},
		{"zero torus extent", "[network]\ntopology = \"torus\"\ntorus_dims = \"8x0x8\"\n", nil,
			`x.toml:3: network.torus_dims: want 1 to 8 extents ≥ 1 joined by "x", such as "25x20x20"; got "8x0x8"`},
		{"switch_ports", "[network]\nswitch_ports = 0\n", nil,
			`x.toml:2: network.switch_ports: must be ≥ 1 and ≤ 1024, got 0`},
		{"switch_ports of a giant switch", "[network]\nswitch_ports = 100000\n", nil,
			`x.toml:2: network.switch_ports: must be ≥ 1 and ≤ 1024, got 100000`},
		{"oversubscription", "[network]\noversubscription = 0.5\n", nil,
			`x.toml:2: network.oversubscription: must be ≥ 1 and ≤ 1e6, got 0.5`},
		{"nan oversubscription", "[network]\noversubscription = nan\n", nil,
			`x.toml:2: network.oversubscription: must be ≥ 1 and ≤ 1e6, got NaN`},
		{"torus of nine dimensions", "[network]\ntorus_dims = \"2x2x2x2x2x2x2x2x2\"\n", nil,
			`x.toml:2: network.torus_dims: want 1 to 8 extents ≥ 1 joined by "x", such as "25x20x20"; got "2x2x2x2x2x2x2x2x2"`},
		{"torus too large", "[network]\ntorus_dims = \"32x32x5\"\n", nil,
			`x.toml:2: network.torus_dims: 32x32x5 has more than 4096 positions, the most for 64 nodes (nodes + spares): 64 per node, or 4096`},
		{"torus too large for the machine", "[cluster]\nnodes = 100\n[network]\ntorus_dims = \"32x20x11\"\n", nil,
			`x.toml:4: network.torus_dims: 32x20x11 has more than 6400 positions, the most for 100 nodes (nodes + spares): 64 per node, or 4096`},
		{"torus with a trailing x", "[network]\ntorus_dims = \"4x4x\"\n", nil,
			`x.toml:2: network.torus_dims: want 1 to 8 extents ≥ 1 joined by "x", such as "25x20x20"; got "4x4x"`},
		{"hop latency", "[network]\nhop_latency = \"200y\"\n", nil,
			`x.toml:2: network.hop_latency: must be ≥ 0 and under 100 years, got 200y`},
		{"bad distribution", "[failures]\ndistribution = \"poisson\"\n", nil,
			`x.toml:2: failures.distribution: must be one of none, exponential, weibull, trace, scripted; got "poisson"`},
		{"bad mode", "[detection]\nmode = \"psychic\"\n", nil,
			`x.toml:2: detection.mode: must be one of heartbeat, oracle; got "psychic"`},
		{"timeout < period", "[detection]\nperiod = \"2s\"\ntimeout = \"1s\"\n", nil,
			`x.toml:3: detection.timeout: timeout (1s) must be ≥ period (2s)`},
		{"period > default timeout", "[detection]\nperiod = \"10s\"\n", nil,
			`x.toml:2: detection.period: timeout (3s) must be ≥ period (10s)`},
		{"jitter beyond the heartbeats' margin", "[network]\njitter = \"51ms\"\n[detection]\nperiod = \"1s\"\ntimeout = \"3s\"\n", nil,
			`x.toml:2: network.jitter: with network.jitter = 51ms, detection.period (1s) must be at least 20 jitters: ftsim times each heartbeat's delay on its own, which holds while one is almost never delayed past the next`},
		{"jitter too long for the default detection", "[network]\njitter = \"50.000001ms\"\n", nil,
			`x.toml:2: network.jitter: with network.jitter = 50.000001ms, detection.period (1s) must be at least 20 jitters: ftsim times each heartbeat's delay on its own, which holds while one is almost never delayed past the next`},
		{"zero period", "[detection]\nperiod = 0\ntimeout = 0\n", nil,
			`x.toml:2: detection.period: must be > 0 in heartbeat mode, got 0s`},
		{"mtbf zero", "[failures]\ndistribution = \"weibull\"\nnode_mtbf = 0\n", nil,
			`x.toml:3: failures.node_mtbf: must be > 0 for the weibull distribution`},
		{"weibull shape", "[failures]\nweibull_shape = 0\n", nil,
			`x.toml:2: failures.weibull_shape: must be > 0 and finite, got 0`},
		{"weibull shape tiny", "[failures]\nweibull_shape = 0.005\n", nil,
			`x.toml:2: failures.weibull_shape: must be ≥ 0.01 (below, nearly every lifetime is 0 and the mean rests on a few of astronomical length), got 0.005`},
		{"failures start", "[failures]\nstart = \"old\"\n", nil,
			`x.toml:2: failures.start: must be one of new, in_service; got "old"`},
		{"group mtbf negative", "[failures]\ngroup_size = 4\ngroup_mtbf = \"-1y\"\n", nil,
			`x.toml:3: failures.group_mtbf: negative duration "-1y"`},
		{"group without size", "[failures]\ngroup_mtbf = \"10y\"\n", nil,
			`x.toml:2: failures.group_mtbf: group failures (failures.group_mtbf) need a group size ≥ 1`},
		{"group size range", "[cluster]\nnodes = 4\nspares = 1\n[failures]\ngroup_size = 6\n", nil,
			`x.toml:5: failures.group_size: must be in [0, nodes+spares] = [0, 5] (a group of the whole machine is the largest), got 6`},
		{"group negative size", "[failures]\ngroup_size = -2\n", nil,
			`x.toml:2: failures.group_size: must be in [0, nodes+spares] = [0, 64] (a group of the whole machine is the largest), got -2`},
		{"group with trace", "[failures]\ndistribution = \"trace\"\ntrace_file = \"t.txt\"\ngroup_size = 4\ngroup_mtbf = \"1y\"\n", nil,
			`x.toml:5: failures.group_mtbf: group failures add to the exponential and weibull distributions, not to "trace"`},
		{"trace without file", "[failures]\ndistribution = \"trace\"\n", nil,
			`x.toml:2: failures.distribution: the trace distribution needs failures.trace_file`},
		{"scripted without list", "[failures]\ndistribution = \"scripted\"\n", nil,
			`x.toml:2: failures.distribution: the scripted distribution needs a non-empty failures.scripted list`},
		{"scripted empty list", "[failures]\ndistribution = \"scripted\"\nscripted = []\n", nil,
			`x.toml:3: failures.scripted: the scripted distribution needs a non-empty failures.scripted list`},
		{"scripted node range", "[cluster]\nnodes = 4\nspares = 1\n[failures]\nscripted = [{node = 1, at = 0},\n  {node = 5, at = \"1s\"}]\n", nil,
			`x.toml:6: failures.scripted[1]: node must be in [0, nodes+spares) = [0, 5), got 5`},
		{"scripted negative node", "[failures]\nscripted = [{node = -1, at = 0}]\n", nil,
			`x.toml:2: failures.scripted[0]: node: must be in [0, 16777216], got -1`},
		{"scripted both", "[failures]\nscripted = [{node = 1, at = 0, progress = 0.5}]\n", nil,
			`x.toml:2: failures.scripted[0]: want exactly one of at and progress`},
		{"scripted neither", "[failures]\nscripted = [{node = 1}]\n", nil,
			`x.toml:2: failures.scripted[0]: want exactly one of at and progress`},
		{"scripted no node", "[failures]\nscripted = [{at = \"1s\"}]\n", nil,
			`x.toml:2: failures.scripted[0]: missing node`},
		{"scripted progress range", "[failures]\nscripted = [\n\n {node = 1, progress = 1.5}]\n", nil,
			`x.toml:4: failures.scripted[0]: progress must be in [0, 1], got 1.5`},
		{"scripted bad at", "[failures]\nscripted = [\n {node = 1, at = \"1s\"}, {node = 1, progress = 1},\n {node = 2, at = \"-3s\"}, # c\n]\n", nil,
			`x.toml:4: failures.scripted[2]: at: negative duration "-3s"`},
		{"scripted not a table", "[failures]\nscripted = [1]\n", nil,
			`x.toml:2: failures.scripted[0]: want a table such as {node = 3, at = "10s"}, got an integer`},
		{"scripted not an array", "[failures]\nscripted = 1\n", nil,
			`x.toml:2: failures.scripted: want an array, got an integer`},
		{"scripted array of tables", "[failures]\ndistribution = \"scripted\"\n[[failures.scripted]]\nnode = 1\nat = \"1s\"\n[[failures.scripted]]\nnode = 900\nat = \"2s\"\n", nil,
			`x.toml:6: failures.scripted[1]: node must be in [0, nodes+spares) = [0, 64), got 900`},
		{"kind not a string", "[workload]\nkind = 3\n", nil,
			`x.toml:2: workload.kind: want a string, got an integer`},
		{"kind empty", "[workload]\n\nkind = \"\"\n", nil,
			`x.toml:3: workload.kind: must not be empty`},
		{"section not a table", "protocol = \"cpr\"\n", nil,
			`x.toml:1: protocol: want a table, got a string`},
		{"syntax", "[cluster]\nnodes = = 3\n", nil,
			`x.toml:2: expected value but found '=' instead`},
		{"table header not closed", "seed = 1\n[cluster\nnodes = 3\n", nil,
			`x.toml:2: expected '.' or ']' to end table name, but got '\n' instead`},
		{"array table header not closed", "seed = 1\n\n[[cluster.a.\nnodes = 3\n", nil,
			`x.toml:3: expected '.' or ']' to end table name, but got '\n' instead`},
		{"key without a value", "seed = 1\nnodes\n", nil,
			`x.toml:2: expected '.' or '=', but got '\n' instead`},
		{"value missing at the line's end", "seed = 1\nnodes = \n", nil,
			`x.toml:2: expected value but found '\n' instead`},
		{"float out of range", "[cluster]\n\nrate = 1e400\n", nil, // named no key
			`x.toml:3: cluster.rate: 1e400 is out of range for float64`},
		{"integer out of range", "[cluster]\nnodes = 99999999999999999999\n", nil,
			`x.toml:2: cluster.nodes: 99999999999999999999 is out of range for int64`},
		{"bad integer in inline table", "cluster = {nodes = 1_}\n", nil,
			`x.toml:1: cluster.nodes: Invalid integer "1_": underscores must be surrounded by digits`},
		// These used to exhaust memory inside the TOML parser.
		{"deep dotted key", "seed = 1\n" + strings.Repeat("a.", 10000) + "a = 1\n", nil,
			`x.toml:2: keys or inline tables nested more than 32 deep`},
		{"deep quoted key", strings.Repeat("'a' . ", 40) + "a = 1\n", nil,
			`x.toml:1: keys or inline tables nested more than 32 deep`},
		{"deep inline tables", "a = " + strings.Repeat("{b = ", 10000) + "1" + strings.Repeat("}", 10000) + "\n", nil,
			`x.toml:1: keys or inline tables nested more than 32 deep`},
		{"deep but in strings", "name = \"" + strings.Repeat("a.", 100) + "\" # " + strings.Repeat("{.", 100) + "\nseed = \"x\"\n", nil,
			`x.toml:2: seed: want an integer, got a string`},
		{"duplicate key", "seed = 1\nseed = 2\n", nil,
			`x.toml:2: Key 'seed' has already been defined.`},
	})
}

func TestOverrides(t *testing.T) {
	const file = "[cluster]\nnodes = 8\n[failures]\ndistribution = \"exponential\"\n[workload]\nkind = \"life\"\nwidth = 3\n"
	for _, tc := range []struct {
		name      string
		overrides []string
		check     func(s *Scenario) any
		want      any
	}{
		{"number", []string{"cluster.nodes=128"}, func(s *Scenario) any { return s.Cluster.Nodes }, 128},
		{"spaces", []string{" cluster.nodes = 16 "}, func(s *Scenario) any { return s.Cluster.Nodes }, 16},
		{"later wins", []string{"cluster.nodes=2", "cluster.nodes=3"}, func(s *Scenario) any { return s.Cluster.Nodes }, 3},
		{"float", []string{"cluster.rate=2.5e9"}, func(s *Scenario) any { return s.Cluster.Rate }, 2.5e9},
		{"int into float", []string{"network.cpu_load=1"}, func(s *Scenario) any { return s.Network.CPULoad }, 1.0},
		{"quoted string", []string{`name="run 1"`}, func(s *Scenario) any { return s.Name }, "run 1"},
		{"bare word", []string{"failures.node_mtbf=5y"}, func(s *Scenario) any { return s.Failures.NodeMTBF }, 5 * Year},
		{"bare compound", []string{"failures.node_mtbf=1h30m"}, func(s *Scenario) any { return s.Failures.NodeMTBF }, 90 * Minute},
		{"bare rate", []string{"network.bandwidth=100Gb/s"}, func(s *Scenario) any { return s.Network.Bandwidth }, Rate(12.5e9)},
		{"bare string", []string{"description=a b # c"}, func(s *Scenario) any { return s.Description }, "a b # c"},
		{"empty string", []string{"description="}, func(s *Scenario) any { return s.Description }, ""},
		{"number as seconds", []string{"detection.period=2", "detection.timeout=2.5"},
			func(s *Scenario) any { return [2]Duration{s.Detection.Period, s.Detection.Timeout} }, [2]Duration{2 * Second, 2500 * Millisecond}},
		{"inline table", []string{`failures.distribution=scripted`, `failures.scripted=[{node=1, at="3s"}, {node = 2, progress = 0.5}]`},
			func(s *Scenario) any { return s.Failures.Scripted },
			[]ScriptedFailure{{Node: 1, At: 3 * Second}, {Node: 2, ByProgress: true, Progress: 0.5}}},
		{"whole table", []string{`detection={mode="oracle", delay="5ms"}`},
			func(s *Scenario) any { return [2]any{s.Detection.Mode, s.Detection.Delay} }, [2]any{"oracle", 5 * Millisecond}},
		{"value injection is a string", []string{"name=x\nseed = 99"},
			func(s *Scenario) any { return [2]any{s.Name, s.Seed} }, [2]any{"x\nseed = 99", int64(1)}},
		{"section key", []string{"workload.width=5"}, func(s *Scenario) any { return s.Workload.Keys() }, []string{"width"}},
		{"kind same keeps keys", []string{"workload.kind=life"},
			func(s *Scenario) any { return [2]any{s.Workload.Kind(), s.Workload.Keys()} }, [2]any{"life", []string{"width"}}},
		{"kind change drops keys", []string{"workload.kind=stencil", "workload.n=4"},
			func(s *Scenario) any { return [2]any{s.Workload.Kind(), s.Workload.Keys()} }, [2]any{"stencil", []string{"n"}}},
		{"protocol kind", []string{"protocol.kind=cpr"}, func(s *Scenario) any { return s.Protocol.Kind() }, "cpr"},
		{"trace file stays relative to cwd", []string{"failures.distribution=trace", "failures.trace_file=t.txt"},
			func(s *Scenario) any { return s.Failures.TraceFile }, "t.txt"},
		{"combination valid only at the end", []string{"detection.period=10s", "detection.timeout=30s"},
			func(s *Scenario) any { return s.Detection.Timeout }, 30 * Second},
		{"jitter at the heartbeats' margin", []string{"network.jitter=50ms"}, func(s *Scenario) any { return s.Network.Jitter }, 50 * Millisecond},
		{"jitter with oracle detection", []string{"network.jitter=1s", "detection.mode=oracle"}, func(s *Scenario) any { return s.Network.Jitter }, Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("x.toml", []byte(file), tc.overrides)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.check(s); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestOverrideErrors(t *testing.T) {
	runErrorCases(t, []errorCase{
		{"unknown key", "", []string{"cluster.foo=1"},
			`--set cluster.foo: unknown key "cluster.foo"`},
		{"unknown table", "", []string{"clustre.nodes=1"},
			`--set clustre.nodes: unknown key "clustre" (did you mean "cluster"?)`},
		{"wrong case", "", []string{"cluster.Nodes=1"},
			`--set cluster.Nodes: unknown key "cluster.Nodes" (did you mean "nodes"?)`},
		{"no equals", "", []string{"cluster.nodes"},
			`--set cluster.nodes: want key=value, with a dotted key such as cluster.nodes=128`},
		{"bad key", "", []string{"cluster nodes=3"},
			`--set cluster nodes=3: want key=value, with a dotted key such as cluster.nodes=128`},
		{"empty key", "", []string{"=3"},
			`--set =3: want key=value, with a dotted key such as cluster.nodes=128`},
		{"bad value type", "", []string{"cluster.nodes=many"},
			`--set cluster.nodes: want an integer, got a string`},
		{"negative duration", "", []string{"failures.node_mtbf=-5y"},
			`--set failures.node_mtbf: negative duration "-5y"`},
		{"malformed array", "", []string{"failures.scripted=[{node=1"},
			`--set failures.scripted: expected a comma or an inline table terminator '}', but got end of file instead`},
		{"range checked after", "", []string{"cluster.nodes=0"},
			`--set cluster.nodes: must be ≥ 1, got 0`},
		{"range inside table", "", []string{"cluster={nodes=0}"},
			`--set cluster: cluster.nodes: must be ≥ 1, got 0`},
		{"scripted element", "", []string{`failures.scripted=[{node=1, at="1s"}, {node=1, at="x"}]`},
			`--set failures.scripted: failures.scripted[1]: at: invalid duration "x": expected a number at "x"`},
		{"file error first", "seed = \"x\"\n", []string{"cluster.foo=1"},
			`x.toml:1: seed: want an integer, got a string`},
		{"override of file key blames override", "[detection]\nperiod = \"1s\"\n", []string{"detection.timeout=500ms"},
			`--set detection.timeout: timeout (500ms) must be ≥ period (1s)`},
		{"combination blames the override", "[cluster]\nnodes = 16\n", []string{"cluster.spares=100000000"},
			`--set cluster.spares: nodes + spares must be ≤ 16777216, got 16 + 100000000`},
	})
}

func TestSetIsAtomic(t *testing.T) {
	s := Default()
	if err := s.Set(`cluster={nodes=5, cores="many"}`); err == nil {
		t.Fatal("no error")
	}
	if s.Cluster.Nodes != 64 {
		t.Errorf("failed Set changed nodes to %d", s.Cluster.Nodes)
	}
	if err := s.Set("cluster.nodes=7"); err != nil || s.Cluster.Nodes != 7 {
		t.Errorf("Set = %v, nodes %d", err, s.Cluster.Nodes)
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
}

func TestZeroScenario(t *testing.T) {
	var s Scenario
	if err := s.Validate(); err == nil {
		t.Error("zero scenario validates")
	}
	c := s.Clone()
	if err := c.Set("workload.kind=life"); err != nil || c.Workload.Kind() != "life" {
		t.Errorf("Set on a zero scenario = %v, kind %q", err, c.Workload.Kind())
	}
	var p struct{}
	if err := s.Protocol.Decode(&p); err != nil || s.Protocol.Kind() != "" || s.Protocol.Has("kind") {
		t.Errorf("nil section: %v", err)
	}
}

func TestClone(t *testing.T) {
	s, err := Load("testdata/full.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Clone()
	if !reflect.DeepEqual(s, c) {
		t.Fatal("clone differs from the original")
	}
	c.Failures.Scripted[0].Node = 99
	c.Cluster.Nodes = 1
	for _, o := range []string{"workload.extra=1", "protocol.kind=mlog", "cluster.spares=0"} {
		if err := c.Set(o); err != nil {
			t.Fatal(err)
		}
	}
	if s.Failures.Scripted[0].Node != 3 || s.Cluster.Nodes != 128 || s.Cluster.Spares != 4 {
		t.Errorf("changing the clone changed the original: %+v %+v", s.Failures.Scripted, s.Cluster)
	}
	if got := s.Workload.Keys(); !reflect.DeepEqual(got, []string{"size", "step_cost"}) {
		t.Errorf("original workload keys = %v", got)
	}
	if s.Protocol.Kind() != "cpr" || !s.Protocol.Has("interval") {
		t.Errorf("original protocol = %q %v", s.Protocol.Kind(), s.Protocol.Keys())
	}
	if c.Protocol.Kind() != "mlog" || c.Protocol.Has("interval") {
		t.Errorf("clone protocol = %q %v", c.Protocol.Kind(), c.Protocol.Keys())
	}
	// Errors found after Set on the clone point at the override.
	if err := c.Set("cluster.nodes=0"); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err == nil || err.Error() != `--set cluster.nodes: must be ≥ 1, got 0` {
		t.Errorf("Validate = %v", err)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("original no longer valid: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	_, err := Load("testdata/missing.toml", nil)
	if err == nil || err.Error() != "testdata/missing.toml: no such file or directory" {
		t.Errorf("Load missing = %v", err)
	}
	_, err = Load("testdata/full.toml", []string{"workload.kind=life", "cluster.nodes=4", "cluster.spares=1"})
	if err == nil || err.Error() != "testdata/full.toml:44: failures.scripted[1]: node must be in [0, nodes+spares) = [0, 5), got 5" {
		t.Errorf("Load = %v", err)
	}
	// An endless file used to be read whole: an out-of-memory crash.
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err = Load("/dev/zero", nil)
		if err == nil || err.Error() != "/dev/zero: larger than 64 MiB: not a scenario file" {
			t.Errorf("Load /dev/zero = %v", err)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "a.toml", Line: 3, Key: "cluster.nodes", Msg: "bad"}, "a.toml:3: cluster.nodes: bad"},
		{Error{File: "a.toml", Key: "cluster.nodes", Msg: "bad"}, "a.toml: cluster.nodes: bad"},
		{Error{File: "a.toml", Line: 2, Msg: "syntax"}, "a.toml:2: syntax"},
		{Error{Key: "k", Msg: "bad"}, "k: bad"},
		{Error{Line: 4, Msg: "bad"}, "line 4: bad"},
		{Error{File: "a.toml", Line: 1, Key: "x", Msg: `unknown key "x"`}, `a.toml:1: unknown key "x"`},
		{Error{File: "--set a.b", Key: "a.b", Msg: "bad"}, "--set a.b: bad"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v.Error() = %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestScenarioErrorf(t *testing.T) {
	s, err := Parse("x.toml", []byte("[cluster]\n\nnodes = 8\n"), []string{"cluster.cores=2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, want string
	}{
		{"cluster.nodes", "x.toml:3: cluster.nodes: too few"},
		{"cluster.cores", "--set cluster.cores: too few"},
		{"cluster.spares", "x.toml: cluster.spares: too few"},
	} {
		if got := s.Errorf(tc.key, "too few").Error(); got != tc.want {
			t.Errorf("Errorf(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

func TestBOMAndCRLF(t *testing.T) {
	text := "\uFEFF[cluster]\r\nnodes = 8\r\n[failures]\r\nscripted = [\r\n {node = 1, at = 1},\r\n {node = 99, at = 2}]\r\n"
	_, err := Parse("x.toml", []byte(text), nil)
	if err == nil || err.Error() != "x.toml:6: failures.scripted[1]: node must be in [0, nodes+spares) = [0, 8), got 99" {
		t.Errorf("Parse = %v", err)
	}
}

// FuzzParseScenario checks that no scenario text or override makes the
// loader panic, and that every error it returns is an *Error.
func FuzzParseScenario(f *testing.F) {
	f.Add("[cluster]\nnodes = 8\n", "cluster.spares=1")
	f.Add("[failures]\ndistribution = \"scripted\"\nscripted = [{node = 1, at = \"1s\"}, {node=2, progress=0.5}]\n", "failures.node_mtbf=5y")
	f.Add("[[failures.scripted]]\nnode = 1\nat = 3\n", `failures.scripted=[{node=1,at="1s"}]`)
	f.Add("[workload]\nkind = \"life\"\nwidth = 3\n[protocol]\nkind=\"cpr\"\n", "workload.kind=stencil")
	f.Add("a.b.c = [1, [2, {x = \"]\"}]]\n", "x=[")
	f.Add("name = \"\"\"\nmulti\nline\"\"\"\ncluster = {nodes = 1}\n", "detection={mode=\"oracle\"}")
	f.Fuzz(func(t *testing.T, text, override string) {
		s, err := Parse("fuzz.toml", []byte(text), []string{override})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %q is not an *Error", err, err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.toml") && !strings.HasPrefix(err.Error(), "--set") {
				t.Fatalf("error %q names neither the file nor the override", err)
			}
			return
		}
		c := s.Clone()
		_ = c.Set(override)
		var p struct {
			Width int64 `toml:"width"`
		}
		_ = c.Workload.Decode(&p)
		_ = c.Protocol.Decode(&p)
	})
}

// TorusExtents: the extents given, or the 3-D torus closest to a cube with
// room for the cluster.
func TestTorusExtents(t *testing.T) {
	for _, tc := range []struct {
		dims  string
		nodes int
		want  []int
	}{
		{"", 1, []int{1, 1, 1}},
		{"", 8, []int{2, 2, 2}},
		{"", 9, []int{3, 2, 2}},
		{"", 64, []int{4, 4, 4}},
		{"", 10500, []int{22, 22, 22}},
		{"", 100000 + 5000, []int{48, 47, 47}},
		{"25x20x20", 10000, []int{25, 20, 20}},
		{"8x8x8x8x4x4", 65536, []int{8, 8, 8, 8, 4, 4}},
		{" 7 ", 7, []int{7}},
		{"32x20x10", 100, []int{32, 20, 10}}, // the most positions for 100 nodes
		{"64x64", 1, []int{64, 64}},          // at least 4096
	} {
		got, err := Network{TorusDims: tc.dims}.TorusExtents(tc.nodes)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q for %d nodes = %v, %v; want %v", tc.dims, tc.nodes, got, err, tc.want)
		}
		room := 1
		for _, d := range got {
			room *= d
		}
		if room < tc.nodes {
			t.Errorf("%q for %d nodes: %v has room for %d", tc.dims, tc.nodes, got, room)
		}
	}
}
