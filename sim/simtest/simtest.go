// Package simtest holds what tests of workloads and protocols share: a run
// helper and a protocol that proves an object's serialised state holds
// everything it needs.
package simtest

import (
	"bytes"
	"testing"

	"ftsim/sim"
)

// Run simulates wl under proto on cfg and fails t if the run does not finish.
func Run(t testing.TB, cfg sim.Config, wl sim.Workload, proto sim.Protocol) sim.Result {
	t.Helper()
	rt, err := sim.New(cfg, wl, proto)
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run()
	if !res.Finished {
		t.Fatalf("run did not finish: %s", res.Stats.UnrecoverableNote)
	}
	return res
}

// RoundTrip replaces every object, after each of its handlers, by one rebuilt
// from its own serialised state and inbox. A run that still ends with the
// reference proves the state holds everything, buffered messages included. It
// also checks that re-marshalling the rebuilt object gives the same bytes, the
// same progress and size, and (on a sample) that truncated states are refused.
type RoundTrip struct {
	sim.BaseProtocol
	T testing.TB
	// Inspect, when set, sees each object just before its round trip.
	Inspect func(id sim.ObjID, o sim.Object)
	// Restores counts the round trips made.
	Restores int
}

// OnHandled makes the round trip at once: the handler has just ended, so the
// object is idle and its next message not yet taken.
func (p *RoundTrip) OnHandled(id sim.ObjID) {
	if !p.RT.Lost(id) {
		p.roundTrip(id)
	}
}

func (p *RoundTrip) roundTrip(id sim.ObjID) {
	rt := p.RT
	t := p.T
	snap, err := rt.Snapshot(id)
	if err != nil {
		t.Fatal(err)
	}
	state := snap.State
	live := rt.Object(id)
	if p.Inspect != nil {
		p.Inspect(id, live)
	}
	fresh := rt.Workload().NewObject(id)
	if err := fresh.UnmarshalBinary(state); err != nil {
		t.Fatalf("object %d: %v", id, err)
	}
	if again, _ := fresh.MarshalBinary(); !bytes.Equal(again, state) {
		t.Fatalf("object %d: state changed in a round trip", id)
	}
	if fresh.Progress() != live.Progress() || fresh.ModeledSize() != live.ModeledSize() {
		t.Fatalf("object %d: progress or size changed in a round trip", id)
	}
	if p.Restores%7 == 0 { // sampled: each cut decodes the state again
		for _, cut := range []int{0, 1, len(state) / 2, len(state) - 1} {
			if cut < 0 || cut >= len(state) {
				continue
			}
			if err := rt.Workload().NewObject(id).UnmarshalBinary(state[:cut]); err == nil {
				t.Fatalf("object %d: state truncated to %d of %d bytes accepted", id, cut, len(state))
			}
		}
	}
	if err := rt.Restore(id, rt.NodeOf(id), snap); err != nil {
		t.Fatal(err)
	}
	p.Restores++
}

// TimedPlans lists failure plans at given times for a run of nodes nodes
// whose fault-free makespan is ff: each node fails at k/20 of ff, k = 1..19,
// alone or followed by the failure of one of the next three nodes 1/200,
// 1/50 or 1/10 of ff later. Failures at given times can strike in the middle
// of a transfer or of a recovery's steps, where failures triggered by
// progress fire between two handlers.
func TimedPlans(ff sim.Time, nodes int) [][]sim.ScriptedFailure {
	var plans [][]sim.ScriptedFailure
	for first := range sim.NodeID(nodes) {
		for k := sim.Time(1); k <= 19; k++ {
			at := ff * k / 20
			plans = append(plans, []sim.ScriptedFailure{{Node: first, At: at}})
			for next := sim.NodeID(1); next <= 3 && int(next) < nodes; next++ {
				for _, later := range []sim.Time{ff / 200, ff / 50, ff / 10} {
					plans = append(plans, []sim.ScriptedFailure{{Node: first, At: at},
						{Node: (first + next) % sim.NodeID(nodes), At: at + later}})
				}
			}
		}
	}
	return plans
}

// Reorder delivers application messages out of order, as a protocol that
// sends messages again after a failure may (message logging hands a
// restarted object the order of the messages it receives again as their
// tickets come in): on every sender→receiver pair with the lower sender id,
// every other message waits for the pair's next one, which is delivered
// first, or for Wait if none comes by then. (Holding back both directions
// of a pair could make two objects wait for each other until Wait.)
type Reorder struct {
	sim.BaseProtocol
	Wait sim.Time
	// Swapped counts the messages delivered after a later one of their pair.
	Swapped int
	held    map[[2]sim.ObjID]*sim.Message
	count   map[[2]sim.ObjID]int
}

// OnArrive holds or delivers m.
func (p *Reorder) OnArrive(m *sim.Message) bool {
	if p.held == nil {
		p.held, p.count = map[[2]sim.ObjID]*sim.Message{}, map[[2]sim.ObjID]int{}
	}
	k := [2]sim.ObjID{m.Src, m.Dst}
	if h := p.held[k]; h != nil {
		delete(p.held, k)
		p.RT.Deliver(m)
		p.RT.Deliver(h)
		p.Swapped++
		return false
	}
	if m.Src >= m.Dst {
		return true
	}
	if p.count[k]++; p.count[k]%2 == 0 {
		return true
	}
	p.held[k] = m
	p.RT.At(p.RT.Now()+p.Wait, func() {
		if p.held[k] == m {
			delete(p.held, k)
			p.RT.Deliver(m)
		}
	})
	return false
}

// AuditMemory fails t, naming the run, if protocol a's memory accounting is
// off (sim.MemoryAuditor): protocol tests call it after their runs.
func AuditMemory(t testing.TB, name string, a sim.MemoryAuditor) {
	t.Helper()
	if err := a.AuditMemory(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
