package experiment

import (
	"strings"
	"testing"

	"ftsim/scenarios"
)

// keysScenario is a small scenario whose [protocol] table's keys start on
// line 10, so that the cases below can say on which line an error must be.
const keysScenario = `name = "keys"
[cluster]
nodes = 4
[workload]
kind = "life"
width = 32
height = 32
generations = 4
[protocol]
`

// Protocol keys that contradict each other, or that the cluster cannot
// satisfy, are errors located at the key's line ("keys.toml:12:
// protocol.every: ..."), or naming the override that set it; the
// combinations that make sense still build.
func TestProtocolKeyErrors(t *testing.T) {
	cases := []struct {
		name string
		keys []string // the [protocol] table's lines, from line 10
		over []string // overrides
		want string   // the error starts with it; "" = none
	}{
		// cpr: the interval keys
		{"cpr period and every", []string{`kind = "cpr"`, `period = "1s"`, "every = 3"}, nil,
			"keys.toml:12: protocol.every: give period (a checkpoint every period of time) or every (every so many iterations), not both"},
		{"cpr every by override", []string{`kind = "cpr"`, `period = "1s"`}, []string{"protocol.every=3"},
			"--set protocol.every: give period"},
		{"cpr iterations with a period", []string{`kind = "cpr"`, `interval = "iterations"`, "every = 3", `period = "1s"`}, nil,
			`keys.toml:13: protocol.period: interval "iterations" checkpoints every so many iterations (every), not every period of time`},
		{"cpr fixed with every", []string{`kind = "cpr"`, `interval = "fixed"`, "every = 3"}, nil,
			`keys.toml:12: protocol.every: every counts iterations, which only interval "iterations" uses, not "fixed"`},
		{"cpr daly with every", []string{`kind = "cpr"`, `interval = "daly"`, "every = 3"}, nil, "keys.toml:12: protocol.every: "},
		{"cpr auto with both", []string{`kind = "cpr"`, `interval = "auto"`, `period = "1s"`, "every = 3"}, nil, "keys.toml:13: protocol.every: "},
		{"cpr every alone", []string{`kind = "cpr"`, "every = 3"}, nil, ""},
		{"cpr period alone", []string{`kind = "cpr"`, `period = "1s"`}, nil, ""},
		{"cpr iterations", []string{`kind = "cpr"`, `interval = "iterations"`, "every = 3"}, nil, ""},
		{"cpr auto", []string{`kind = "cpr"`, `interval = "auto"`, `period = "1s"`}, nil, ""},
		{"cpr daly falling back on period", []string{`kind = "cpr"`, `interval = "daly"`, `period = "1s"`}, nil, ""},
		// cpr: errors of cpr.New, at the key they name
		{"cpr period 0", []string{`kind = "cpr"`, `interval = "fixed"`, `period = "0s"`}, nil,
			`keys.toml:12: protocol.period: checkpoint interval "fixed" needs a positive period`},
		{"cpr every 0", []string{`kind = "cpr"`, "every = 0"}, nil, `keys.toml:11: protocol.every: checkpoint interval "iterations" needs every ≥ 1`},
		{"cpr unknown interval", []string{`kind = "cpr"`, `interval = "hourly"`}, nil, `keys.toml:11: protocol.interval: unknown checkpoint interval "hourly"`},
		{"cpr tier twice", []string{`kind = "cpr"`, `levels = [{tier = "disk", every = 1}, {tier = "local", every = 4}]`}, nil,
			"keys.toml:11: protocol.levels: level 2: tier disk appears twice"},
		{"cpr level every 0", []string{`kind = "cpr"`, `levels = [{tier = "disk", every = 0}]`}, nil,
			"keys.toml:11: protocol.levels: level 1 (disk): every must be at least 1"},
		{"cpr levels", []string{`kind = "cpr"`, `levels = [{tier = "memory", every = 1}, {tier = "buddy", every = 2}, {tier = "pfs", every = 8}]`}, nil, ""},
		// copies that many slots further: 1 to nodes − 1
		{"cpr buddy offset 0", []string{`kind = "cpr"`, `tier = "buddy"`, "buddy_offset = 0"}, nil,
			"keys.toml:12: protocol.buddy_offset: must be in [1, 3] (1 to nodes − 1), got 0"},
		{"cpr buddy offset beyond", []string{`kind = "cpr"`, `tier = "buddy"`}, []string{"protocol.buddy_offset=4"},
			"--set protocol.buddy_offset: must be in [1, 3]"},
		{"cpr buddy offset", []string{`kind = "cpr"`, `tier = "buddy"`, "buddy_offset = 3"}, nil, ""},
		{"cpr buddy offset without buddy", []string{`kind = "cpr"`, `tier = "pfs"`, "buddy_offset = 2"}, nil,
			"keys.toml:12: protocol.buddy_offset: concerns the copies of the buddy tier, and no level is buddy"},
		{"cpr rebuild without buddy", []string{`kind = "cpr"`, `tier = "disk"`, "rebuild = false"}, nil,
			"keys.toml:12: protocol.rebuild: concerns the copies of the buddy tier, and no level is buddy"},
		{"cpr rebuild off", []string{`kind = "cpr"`, `tier = "buddy"`, "rebuild = false"}, nil, ""},
		// cpr: handlers cut for checkpoints at times only
		{"cpr substep", []string{`kind = "cpr"`, `interval = "fixed"`, `period = "1s"`, `substep = "10ms"`}, nil, ""},
		{"cpr substep with every", []string{`kind = "cpr"`, "every = 3", `substep = "10ms"`}, nil,
			`keys.toml:12: protocol.substep: checkpoints at iteration boundaries (interval "iterations") wait for no handler`},
		{"cpr substep negative", []string{`kind = "cpr"`, `substep = "-1s"`}, nil, "keys.toml:11: protocol.substep: "},
		{"cpr buddy offset on a level", []string{`kind = "cpr"`, `levels = [{tier = "buddy", every = 1}, {tier = "pfs", every = 4}]`, "buddy_offset = 2"}, nil, ""},
		{"mlog buddy offset", []string{`kind = "mlog"`, "buddy_offset = -1"}, nil,
			"keys.toml:11: protocol.buddy_offset: must be ≥ 0, got -1"},
		{"dps backup offset", []string{`kind = "dps"`, "backup_offset = 9"}, nil,
			"keys.toml:11: protocol.backup_offset: must be in [1, 3] (1 to nodes − 1), got 9"},
		{"dps backup offset on one node", []string{`kind = "dps"`, "backup_offset = 1"}, []string{"cluster.nodes=1"}, ""},
		// dps: a thread's backups need other nodes
		{"dps backups on every node", []string{`kind = "dps"`, "backups = 4"}, nil,
			"keys.toml:11: protocol.backups: 4 backups per thread need as many nodes besides the thread's own, and cluster.nodes = 4 (at most 3)"},
		{"dps backups by override", []string{`kind = "dps"`}, []string{"protocol.backups=9"}, "--set protocol.backups: 9 backups per thread"},
		{"dps backups on the other nodes", []string{`kind = "dps"`, "backups = 3"}, nil, ""},
		{"dps default backup on one node", []string{`kind = "dps"`}, []string{"cluster.nodes=1"}, ""},
		// dps: stateless threads are a farm's workers
		{"dps stateless off a farm", []string{`kind = "dps"`, "stateless = [1]"}, nil,
			"keys.toml:11: protocol.stateless: stateless threads are a task farm's workers (workload farm), not life's objects"},
		{"dps stateless id negative", []string{`kind = "dps"`, "stateless = [1, -2]"}, []string{"workload.kind=farm"},
			"keys.toml:11: protocol.stateless: must be ≥ 0, got -2"},
		{"dps stateless id wrapping", []string{`kind = "dps"`, "stateless = [4294967297]"}, []string{"workload.kind=farm"},
			"keys.toml:11: protocol.stateless: entry 0: 4294967297 is not an object id"},
		{"dps stateless on a farm", []string{`kind = "dps"`, "stateless = [1]"}, []string{"workload.kind=farm"}, ""},
		// mlog: multi_failure needs the full log
		{"mlog multi_failure without the full log", []string{`kind = "mlog"`, "multi_failure = true", "full_log = false"}, nil,
			"keys.toml:12: protocol.full_log: multi_failure = true needs the full log in every checkpoint"},
		{"mlog multi_failure", []string{`kind = "mlog"`, "multi_failure = true"}, nil, ""},
		{"mlog multi_failure with the full log", []string{`kind = "mlog"`, "multi_failure = true", "full_log = true"}, nil, ""},
		{"mlog without the full log", []string{`kind = "mlog"`, "full_log = false"}, nil, ""},
		{"mlog unknown restart", []string{`kind = "mlog"`, `restart = "slow"`}, nil, `keys.toml:11: protocol.restart: unknown restart "slow" (basic, fast)`},
		{"mlog period 0", []string{`kind = "mlog"`, `period = "0s"`}, nil, "keys.toml:11: protocol.period: must be positive"},
		{"mlog substep", []string{`kind = "mlog"`, `substep = "1s"`}, nil, ""},
		{"mlog substep negative", []string{`kind = "mlog"`, `substep = "-1s"`}, nil, `keys.toml:11: protocol.substep: negative duration "-1s"`},
		{"mlog substep of a century", []string{`kind = "mlog"`, `substep = "100y"`}, nil, "keys.toml:11: protocol.substep: must be ≥ 0 and under 100 years"},
		// replication: deterministic objects, on two nodes at least
		{"replication of a farm", []string{`kind = "replication"`}, []string{"workload.kind=farm"},
			"keys.toml:10: protocol.kind: replication runs deterministic objects twice, and farm's objects answer concurrent messages in their arrival order"},
		{"replication of pida", []string{`kind = "replication"`}, []string{`workload.kind="pida"`}, "keys.toml:10: protocol.kind: replication runs deterministic objects twice, and pida's"},
		{"replication on one node", []string{`kind = "replication"`}, []string{"cluster.nodes=1"},
			"keys.toml:10: protocol.kind: replication puts the two replicas of an object on different nodes: cluster.nodes must be at least 2, not 1"},
		{"replication header negative", []string{`kind = "replication"`, "header_bytes = -8"}, nil,
			"keys.toml:11: protocol.header_bytes: must be ≥ 0, got -8"},
		{"replication unknown key", []string{`kind = "replication"`, "repair = true"}, nil, `keys.toml:11: unknown key "protocol.repair"`},
		{"replication", []string{`kind = "replication"`, "header_bytes = 8"}, []string{"cluster.nodes=5"}, ""},
		{"replication restarts without checkpoints", []string{`kind = "replication"`, "restart_replicas = true"}, nil,
			`keys.toml:11: protocol.restart_replicas: concerns checkpoints, and interval = "none" takes none`},
		{"replication benoit without restarts", []string{`kind = "replication"`, `interval = "benoit"`}, nil,
			`keys.toml:11: protocol.interval: "benoit" is the period of the restart strategy: set restart_replicas = true`},
		{"replication hazard interval", []string{`kind = "replication"`, `interval = "hazard"`}, nil,
			`keys.toml:11: protocol.interval: replication checkpoints at intervals of time: none, fixed, young, daly, auto or benoit, not "hazard"`},
		{"replication restart strategy", []string{`kind = "replication"`, `interval = "benoit"`, "restart_replicas = true"}, nil, ""},
		// periods a run adds to its clock: under 100 years (sim.CheckDelay)
		{"cpr period of a century", []string{`kind = "cpr"`, `period = "100y"`}, nil,
			"keys.toml:11: protocol.period: must be ≥ 0 and under 100 years, got 100 years"},
		{"cpr max_wait of a century", []string{`kind = "cpr"`, `period = "1s"`, `max_live = "1MB"`, `max_wait = "150y"`}, nil,
			"keys.toml:13: protocol.max_wait: must be ≥ 0 and under 100 years"},
		{"dps period of a century", []string{`kind = "dps"`, `period = "100y"`}, nil, "keys.toml:11: protocol.period: must be ≥ 0 and under 100 years"},
		{"mlog period of a century", []string{`kind = "mlog"`, `period = "100y"`}, nil, "keys.toml:11: protocol.period: must be ≥ 0 and under 100 years"},
		{"abft interval of a century", []string{`kind = "abft"`, `interval = "100y"`}, []string{`workload.kind="pida"`}, "keys.toml:11: protocol.interval: must be ≥ 0 and under 100 years"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := keysScenario + strings.Join(c.keys, "\n") + "\n"
			s, err := scenarios.Parse("keys.toml", []byte(text), c.over)
			if err != nil {
				t.Fatal(err)
			}
			_, err = buildProtocol(s)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Fatalf("error %v, want one starting %q", err, c.want)
			}
		})
	}
}

// In an entry of [[protocols]] the error names the entry and is located at
// its key, whether the rule is checked here or by the protocol package; a
// sweep is refused before it runs.
func TestProtocolsEntryKeyErrors(t *testing.T) {
	cases := []struct {
		keys []string // the entry's lines after its label, from line 13
		want string
	}{
		{[]string{`kind = "cpr"`, `period = "1s"`, "every = 3"}, "sweep point protocol=bad: keys.toml:15: protocols[1].every: give period"},
		{[]string{`kind = "cpr"`, `levels = [{tier = "buddy", every = 1}, {tier = "partner", every = 2}]`},
			"sweep point protocol=bad: keys.toml:14: protocols[1].levels: level 2: tier buddy appears twice"},
		{[]string{`kind = "mlog"`, `restart = "slow"`}, `sweep point protocol=bad: keys.toml:14: protocols[1].restart: unknown restart "slow"`},
		{[]string{`kind = "dps"`, "backups = 5"}, "sweep point protocol=bad: keys.toml:14: protocols[1].backups: 5 backups per thread"},
	}
	for _, c := range cases {
		entries := "[[protocols]]\nkind = \"none\"\n[[protocols]]\nlabel = \"bad\"\n" + strings.Join(c.keys, "\n") + "\n"
		text := strings.Replace(keysScenario, "[protocol]\n", entries, 1)
		s, err := scenarios.Parse("keys.toml", []byte(text), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewSweep(s, nil, 1); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("error %v, want one starting %q", err, c.want)
		}
	}
}

// The workloads' size limits start their errors with the key, so they too
// are located at its line (or, for a key left at its default, at the
// workload's kind).
func TestWorkloadLimitErrorsAreLocated(t *testing.T) {
	cases := []struct {
		over []string
		want string
	}{
		{nil, ""},
		{[]string{"workload.width=1099511627776"}, "--set workload.width: 1099511627776 × 32 (width × height) is too many cells"},
		{[]string{"cluster.nodes=8388608"}, "keys.toml:5: workload.objects_per_node: 8388608 × 1 (cluster.nodes × objects_per_node) is too many objects (at most 4194304)"},
	}
	for _, c := range cases {
		s, err := scenarios.Parse("keys.toml", []byte(keysScenario+`kind = "none"`+"\n"), c.over)
		if err != nil {
			t.Fatal(err)
		}
		_, err = buildWorkload(s)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: error %v, want none", c.over, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%v: error %v, want one starting %q", c.over, err, c.want)
		}
	}
	text := strings.Replace(keysScenario, "generations = 4", "generations = 268435456", 1)
	s, err := scenarios.Parse("keys.toml", []byte(text+`kind = "none"`+"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "keys.toml:8: workload.generations: 268435456 is too many generations for a 32-bit message tag (at most 268435455)"
	if _, err := buildWorkload(s); err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// dps logs the handling order by default where a thread's outputs depend on
// the arrival order of its inputs: pida's workers, and a farm's master
// when its workers are stateful (with stateless ones it is their split,
// which does not re-execute). An explicit log_order wins.
func TestDPSLogOrderDefault(t *testing.T) {
	cases := []struct {
		keys []string
		want bool
	}{
		{[]string{"workload.kind=life"}, false},
		{[]string{"workload.kind=pida"}, true},
		{[]string{"workload.kind=farm"}, false},
		{[]string{"workload.kind=farm", "protocol.auto_stateless=false"}, true},
		{[]string{"workload.kind=farm", "protocol.auto_stateless=false", "protocol.log_order=false"}, false},
		{[]string{"workload.kind=pida", "protocol.log_order=false"}, false},
		{[]string{"workload.kind=life", "protocol.log_order=true"}, true},
	}
	for _, c := range cases {
		s, err := scenarios.Parse("order.toml", []byte(`name = "order"`), append([]string{`protocol.kind="dps"`}, c.keys...))
		if err != nil {
			t.Fatalf("%v: %v", c.keys, err)
		}
		cfg, err := dpsConfig(s)
		if err != nil || cfg.LogOrder != c.want {
			t.Errorf("%v: log_order %v (%v), want %v", c.keys, cfg.LogOrder, err, c.want)
		}
	}
}
