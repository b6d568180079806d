package replication

import (
	"testing"

	"ftsim/models/none"
	"ftsim/sim"
	"ftsim/workloads/life"
)

// lifeJob is a 48×48 torus in 8 tiles (2 per node on 4 nodes) for 30
// generations: 0.3 s of computation per node without replication.
func lifeJob(t *testing.T) *life.Workload {
	t.Helper()
	p := life.DefaultParams()
	p.Width, p.Height, p.Generations = 48, 48, 30
	p.ObjectsPerNode = 2
	p.CellOps = 1000
	w, err := life.New(p, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func run(t *testing.T, cfg sim.Config, wl sim.Workload, proto sim.Protocol) sim.Result {
	t.Helper()
	rt, err := sim.New(cfg, wl, proto)
	if err != nil {
		t.Fatal(err)
	}
	return rt.Run()
}

func newProtocol(t *testing.T, cfg Config) *Protocol {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFaultFree: every object runs twice and every message travels four
// times (each replica of the sender to each replica of the receiver); each
// receiver drops one of its two copies, and the answer is the application's.
func TestFaultFree(t *testing.T) {
	cfg := sim.DefaultConfig()
	base := run(t, cfg, lifeJob(t), none.New())
	p := newProtocol(t, Config{HeaderBytes: 8})
	res := run(t, cfg, lifeJob(t), p)
	if !res.Finished || !res.Outcome.OK {
		t.Fatalf("finished %v, outcome %+v", res.Finished, res.Outcome)
	}
	if res.Outcome.Digest != base.Outcome.Digest {
		t.Errorf("digest %s, the application's %s", res.Outcome.Digest, base.Outcome.Digest)
	}
	st := res.Stats
	if st.AppMsgs != 2*base.Stats.AppMsgs {
		t.Errorf("application messages %d, want twice the application's %d", st.AppMsgs, base.Stats.AppMsgs)
	}
	if p.C.Copies != st.AppMsgs || p.C.Duplicates != p.C.Copies {
		t.Errorf("copies %d, duplicates %d: want both %d (one per message sent)", p.C.Copies, p.C.Duplicates, st.AppMsgs)
	}
	if st.ExtraMsgs != p.C.Copies {
		t.Errorf("extra messages %d, want the %d copies", st.ExtraMsgs, p.C.Copies)
	}
	// every message carries its 8-byte number, a copy its payload as well
	if want := 2*8*st.AppMsgs + st.AppBytes; st.ExtraBytes != want {
		t.Errorf("extra bytes %d, want %d", st.ExtraBytes, want)
	}
	// each node computes its own tiles and its partner's: twice the work
	if r := res.Makespan.Seconds() / base.Makespan.Seconds(); r < 1.95 || r > 2.1 {
		t.Errorf("makespan %v is %.3f times the application's %v, want about 2", res.Makespan, r, base.Makespan)
	}
	if p.C.Interruptions != 0 || res.Stats.Restarts != 0 {
		t.Errorf("interruptions %d, restarts %d without failures", p.C.Interruptions, res.Stats.Restarts)
	}
}

// TestPlacement: replica B of each object is half the nodes away from A, so
// that nodes k and k+N/2 hold each other's replicas and nothing else.
func TestPlacement(t *testing.T) {
	for _, policy := range []sim.Placement{sim.Block, sim.RoundRobin} {
		cfg := sim.DefaultConfig()
		cfg.Nodes, cfg.Placement = 6, policy
		p := newProtocol(t, Config{})
		lp := life.DefaultParams()
		lp.Width, lp.Height, lp.ObjectsPerNode = 36, 36, 2
		w, err := life.New(lp, 6, nil)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := sim.New(cfg, w, p)
		if err != nil {
			t.Fatal(err)
		}
		rt.Place()
		n := w.NumObjects()
		for i := range n {
			a, b := rt.NodeOf(sim.ObjID(i)), rt.NodeOf(sim.ObjID(i+n))
			if b != (a+3)%6 {
				t.Errorf("policy %d: object %d on node %d, its replica on %d, want %d", policy, i, a, b, (a+3)%6)
			}
			if want := sim.NodeID(sim.PolicySlot(policy, i, n, 6)); a != want {
				t.Errorf("policy %d: object %d on node %d, the policy's %d", policy, i, a, want)
			}
		}
	}
}

// TestFailures: a failure that leaves one replica of every object lets the
// application go on without a restart; losing both nodes of a pair interrupts
// it, and it restarts from scratch. Every run gives the application's answer.
func TestFailures(t *testing.T) {
	base := run(t, sim.DefaultConfig(), lifeJob(t), none.New())
	free := run(t, sim.DefaultConfig(), lifeJob(t), newProtocol(t, Config{}))
	at := free.Makespan / 2
	gap := free.Makespan / 10
	cases := []struct {
		name          string
		nodes         []sim.NodeID
		interruptions int
	}{
		{"one node", []sim.NodeID{1}, 0},
		{"one node of each pair", []sim.NodeID{0, 3}, 0},
		{"both nodes of a pair", []sim.NodeID{1, 3}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := sim.DefaultConfig()
			cfg.Spares = 2
			cfg.DetectDelay = sim.Millisecond
			cfg.Failures = sim.ScriptedFailures
			for i, n := range c.nodes {
				cfg.Planned = append(cfg.Planned, sim.ScriptedFailure{Node: n, At: at + sim.Time(i)*gap})
			}
			p := newProtocol(t, Config{})
			res := run(t, cfg, lifeJob(t), p)
			if !res.Finished || !res.Outcome.OK || res.Outcome.Digest != base.Outcome.Digest {
				t.Fatalf("finished %v, outcome %+v", res.Finished, res.Outcome)
			}
			if p.C.Interruptions != c.interruptions || res.Stats.Restarts != c.interruptions {
				t.Errorf("interruptions %d, restarts %d, want %d", p.C.Interruptions, res.Stats.Restarts, c.interruptions)
			}
			if c.interruptions > 0 {
				if got := p.C.InterruptedAt[0]; got != at+gap {
					t.Errorf("interrupted at %v, want the second failure's %v", got, at+gap)
				}
				if res.Makespan <= at+gap+free.Makespan {
					t.Errorf("makespan %v: want more than the interruption at %v and a whole run (%v) after it", res.Makespan, at+gap, free.Makespan)
				}
			} else if res.Makespan > free.Makespan*11/10 {
				t.Errorf("makespan %v: the survivors should finish about when a fault-free run does (%v)", res.Makespan, free.Makespan)
			}
		})
	}
}
