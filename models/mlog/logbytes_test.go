package mlog

import (
	"fmt"
	"testing"

	"ftsim/sim"
)

// checkLogBytes checks each object's log accounting (runWith calls it after
// every run): an entry carries its message's wire size so that pruning does
// not read the message, the copy must match the message, and logBytes must
// be the sum over the entries the log holds.
func checkLogBytes(t *testing.T, p *Protocol) {
	t.Helper()
	for _, s := range p.objs {
		var sum int64
		for i := range s.log.Len() {
			for _, e := range *s.log.At(i) {
				if e.wire != e.m.WireSize() {
					t.Fatalf("object %d, entry SN %d: wire %d, message %d", s.id, e.sn, e.wire, e.m.WireSize())
				}
				sum += e.wire
			}
		}
		if s.logBytes != sum {
			t.Fatalf("object %d: logBytes %d, its entries %d", s.id, s.logBytes, sum)
		}
	}
	checkNodeMemory(t, p)
}

// checkNodeMemory checks what each live node accounts against what the
// protocol keeps there: as MemLog the logs of the objects it runs and the
// remote-log tuples it holds, as MemCheckpoint the checkpoints it holds.
func checkNodeMemory(t *testing.T, p *Protocol) {
	t.Helper()
	rt := p.RT
	type mem struct{ log, ckpt int64 }
	held := make([]mem, rt.NumNodes())
	here := func(n sim.NodeID, inc uint32) bool { return n >= 0 && rt.Alive(n) && rt.Incarnation(n) == inc }
	for _, o := range p.objs {
		if here(o.node, o.inc) {
			held[o.node].log += o.logBytes
		}
		for _, x := range o.rlog {
			if here(x.holder, x.inc) {
				held[x.holder].log += p.cfg.TicketBytes
			}
		}
		if c := o.ckpt; c != nil && here(c.holder, c.inc) {
			held[c.holder].ckpt += c.size
		}
	}
	for n, h := range held {
		if !rt.Alive(sim.NodeID(n)) {
			continue
		}
		if got := rt.Mem(sim.NodeID(n), sim.MemLog); got != h.log {
			t.Fatalf("node %d accounts %d bytes of logs, holds %d", n, got, h.log)
		}
		if got := rt.Mem(sim.NodeID(n), sim.MemCheckpoint); got != h.ckpt {
			t.Fatalf("node %d accounts %d bytes of checkpoints, holds %d", n, got, h.ckpt)
		}
	}
}

// The log accounting holds after garbage collection, failures, restores and
// their replays, with either restart and either failure mode.
func TestLogBytesMatchTheEntries(t *testing.T) {
	for _, restart := range []string{RestartBasic, RestartFast} {
		for _, multi := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/multi=%v", restart, multi), func(t *testing.T) {
				cfg := testCluster(4)
				base := runWith(t, cfg, stencilJob(t, 4, 2, 40), &plain{})
				cfg.Failures = sim.ScriptedFailures
				cfg.Planned = []sim.ScriptedFailure{
					{Node: 1, Progress: 0.3, ByProgress: true},
					{Node: 2, Progress: 0.7, ByProgress: true},
				}
				pc := DefaultConfig()
				pc.Restart, pc.MultiFailure, pc.Period = restart, multi, base.Makespan/6
				p := mustNew(t, pc)
				res := runWith(t, cfg, stencilJob(t, 4, 2, 40), p) // checks the accounting
				if res.Stats.Failures != 2 || p.Stats.GCMessages == 0 {
					t.Fatalf("%d failures, %d garbage-collection messages: the run does not exercise the log", res.Stats.Failures, p.Stats.GCMessages)
				}
			})
		}
	}
}
