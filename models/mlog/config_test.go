package mlog

import (
	"strings"
	"testing"

	"ftsim/sim"
)

// Every configuration error starts with the scenario key it is about, so
// that the scenario loader can point at its line.
func TestConfigErrors(t *testing.T) {
	cases := []struct {
		set  func(c *Config)
		want string // the error starts with it
	}{
		{func(c *Config) { c.Period = 0 }, "protocol.period: must be positive"},
		{func(c *Config) { c.Restart = "slow" }, `protocol.restart: unknown restart "slow" (basic, fast)`},
		{func(c *Config) { c.MaxLog = -1 }, "protocol.max_log: must not be negative, got -1"},
		{func(c *Config) { c.HeaderBytes = -1 }, "protocol.header_bytes: "},
		{func(c *Config) { c.TicketBytes = -1 }, "protocol.ticket_bytes: "},
		{func(c *Config) { c.CPU.Log = -1 }, "protocol.log_cpu: must be ≥ 0"},
		{func(c *Config) { c.CPU.TicketRequest = -1 }, "protocol.ticket_request_cpu: "},
		{func(c *Config) { c.CPU.Ticket = sim.MaxDuration }, "protocol.ticket_cpu: "},
		{func(c *Config) { c.CPU.Local = -1 }, "protocol.local_cpu: "},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		c.set(&cfg)
		if _, err := New(cfg); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("error %v, want one starting %q", err, c.want)
		}
	}
}
