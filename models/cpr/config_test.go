package cpr

import (
	"strings"
	"testing"

	"ftsim/sim"
)

// Every configuration error starts with the scenario key it is about, so
// that the scenario loader can point at its line; a tier listed twice in
// a multi-level checkpoint is one of them.
func TestConfigErrors(t *testing.T) {
	fixed := Config{Policy: PolicyFixed, Period: sim.Second}
	cases := []struct {
		name string
		set  func(c *Config)
		want string // the error starts with it; "" = accepted
	}{
		{"fixed without period", func(c *Config) { c.Period = 0 }, `protocol.period: checkpoint interval "fixed" needs a positive period`},
		{"auto without period", func(c *Config) { c.Policy, c.Period = PolicyAuto, -1 }, "protocol.period: "},
		{"iterations without every", func(c *Config) { c.Policy = PolicyIterations }, `protocol.every: checkpoint interval "iterations" needs every ≥ 1`},
		{"daly without failures", func(c *Config) { c.Policy = PolicyDaly }, `protocol.interval: checkpoint interval "daly" needs failures with a finite MTBF`},
		{"hazard without failures", func(c *Config) { c.Policy = PolicyHazard }, `protocol.interval: checkpoint interval "hazard" needs exponential or Weibull failures`},
		{"unknown interval", func(c *Config) { c.Policy = "hourly" }, `protocol.interval: unknown checkpoint interval "hourly"`},
		{"negative image", func(c *Config) { c.Image = -1 }, "protocol.image: "},
		{"level every 0", func(c *Config) { c.Levels = []Level{{Tier: Disk, Every: 1}, {Tier: PFS, Every: 0}} }, "protocol.levels: level 2 (pfs): every must be at least 1"},
		{"tier twice", func(c *Config) {
			c.Levels = []Level{{Tier: Disk, Every: 1}, {Tier: Buddy, Every: 2}, {Tier: Disk, Every: 4}}
		}, "protocol.levels: level 3: tier disk appears twice"},
		{"same every twice", func(c *Config) { c.Levels = []Level{{Tier: Memory, Every: 1}, {Tier: Memory, Every: 1}} }, "protocol.levels: level 2: tier memory"},
		{"every tier once", func(c *Config) {
			c.Levels = []Level{{Tier: Memory, Every: 1}, {Tier: Disk, Every: 2}, {Tier: Buddy, Every: 4}, {Tier: PFS, Every: 8}}
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := fixed
			c.set(&cfg)
			_, err := New(cfg)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Fatalf("error %v, want one starting %q", err, c.want)
			}
		})
	}
}
