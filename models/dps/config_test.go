package dps

import (
	"strings"
	"testing"

	"ftsim/sim"
)

// Every configuration error starts with the scenario key it is about, so
// that the scenario loader can point at its line.
func TestConfigErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		set  func(c *Config)
		want string // the error starts with it
	}{
		{func(c *Config) { c.Backups = -1 }, "protocol.backups: must not be negative, got -1"},
		{func(c *Config) { c.Every = -1 }, "protocol.every: "},
		{func(c *Config) { c.EveryProgress = -1 }, "protocol.every_progress: "},
		{func(c *Config) { c.Period = -sim.Second }, "protocol.period: "},
		{func(c *Config) { c.HeaderBytes = -1 }, "protocol.header_bytes: "},
		{func(c *Config) { c.EntryBytes = -1 }, "protocol.entry_bytes: "},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		c.set(&cfg)
		if _, err := New(cfg); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("error %v, want one starting %q", err, c.want)
		}
	}
	if _, err := New(DefaultConfig()); err != nil {
		t.Fatalf("default configuration: %v", err)
	}
}

// A thread's backups live on distinct nodes other than its own, so a
// cluster of n nodes holds at most n − 1 of them.
func TestCheckNodes(t *testing.T) {
	cases := []struct {
		backups, nodes int
		want           string // the error starts with it; "" = accepted
	}{
		{0, 1, ""},
		{1, 2, ""},
		{3, 4, ""},
		{1, 1, "protocol.backups: 1 backups per thread need as many nodes besides the thread's own, and cluster.nodes = 1 (at most 0)"},
		{4, 4, "protocol.backups: 4 backups per thread need as many nodes besides the thread's own, and cluster.nodes = 4 (at most 3)"},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		cfg.Backups = c.backups
		err := cfg.CheckNodes(c.nodes)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%d backups on %d nodes: %v", c.backups, c.nodes, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%d backups on %d nodes: error %v, want one starting %q", c.backups, c.nodes, err, c.want)
		}
	}
}

// A stateless id that names no object ends the run with the key to fix,
// rather than being ignored (the run would be another experiment).
func TestStatelessOutOfRange(t *testing.T) {
	pc := DefaultConfig()
	pc.Stateless = []sim.ObjID{99}
	res, _ := runDPS(t, baseConfig(), farmJob(t), pc)
	if res.Finished || !strings.Contains(res.Stats.UnrecoverableNote, "protocol.stateless: object 99 does not exist") {
		t.Fatalf("finished %v, note %q", res.Finished, res.Stats.UnrecoverableNote)
	}
}

// A farm with some workers stateless and others not ends the run with the
// key to fix: the master, their split, restarts from its checkpoint and
// would re-post its hand-outs to the stateful ones in another order.
func TestStatelessSomeWorkers(t *testing.T) {
	pc := DefaultConfig()
	pc.AutoStateless = false
	pc.Stateless = []sim.ObjID{1}
	res, _ := runDPS(t, baseConfig(), farmJob(t), pc)
	if res.Finished || !strings.Contains(res.Stats.UnrecoverableNote, "protocol.stateless: worker 2 is stateful while others are stateless") {
		t.Fatalf("finished %v, note %q", res.Finished, res.Stats.UnrecoverableNote)
	}
	pc.Stateless = nil // all stateful: a run like any other
	if res, _ := runDPS(t, baseConfig(), farmJob(t), pc); !res.Finished {
		t.Fatalf("stateful workers: finished %v, note %q", res.Finished, res.Stats.UnrecoverableNote)
	}
}
