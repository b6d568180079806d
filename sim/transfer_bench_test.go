package sim

import "testing"

// relayProto gives every application message between nodes the transfers of
// message logging with a buddy (mlog with multi_failure), and nothing else:
// the receiver holds the message, sends a tuple to its node's buddy, is
// acknowledged, delivers the message and sends the TN back to the sender.
// Its records come from a free list, so the benchmark measures what the
// engine and the network cost a logging protocol, without the protocol's
// own tables: the floor under mlog's events.
type relayProto struct {
	BaseProtocol
	nodes NodeID
	free  []*relay
	lost  int // transfers lost: none, without failures
}

// relay is one held message's three transfers.
type relay struct {
	p     *relayProto
	m     *Message
	stage int
}

func (p *relayProto) OnArrive(m *Message) bool {
	if m.From == m.To {
		return true
	}
	var r *relay
	if n := len(p.free); n > 0 {
		r, p.free = p.free[n-1], p.free[:n-1]
	} else {
		r = &relay{p: p}
	}
	r.m, r.stage = m, 0
	p.RT.TransferTo(m.To, p.buddy(m.To), 64, 0, r)
	return false
}

func (p *relayProto) Init(rt *Runtime) {
	p.RT, p.nodes = rt, NodeID(rt.Config().Nodes)
}

func (p *relayProto) buddy(n NodeID) NodeID { return (n + 1) % p.nodes }

func (r *relay) TransferDone(_ int32, ok bool) {
	p, m := r.p, r.m
	if !ok {
		p.lost++
		return
	}
	switch r.stage {
	case 0: // the tuple is at the buddy: acknowledge
		r.stage = 1
		p.RT.TransferTo(p.buddy(m.To), m.To, 64, 1, r)
	case 1: // logged: the message is processable, its TN goes to the sender
		r.stage = 2
		p.RT.Deliver(m)
		p.RT.TransferTo(m.To, m.From, 64, 2, r)
	default:
		r.m = nil
		p.free = append(p.free, r)
	}
}

// BenchmarkTransferScale is BenchmarkStencilScale's 10,000 nodes with three
// transfers for every halo (relayProto): 572,000 messages and 1.716 M
// transfers a run, 4.68 M events. It reports events/s, so that the engine's
// cost per event under a logging protocol can be set beside a protocol's
// (README, "The 60 s target").
func BenchmarkTransferScale(b *testing.B) {
	cfg, w := stencilScale()
	b.ReportAllocs()
	var events uint64
	for range b.N {
		p := &relayProto{}
		rt, _ := runToEnd(b, cfg, w, p)
		if p.lost > 0 {
			b.Fatalf("%d transfers lost", p.lost)
		}
		events += rt.eng.Executed()
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// The benchmark's protocol makes what it claims: three transfers for every
// message between nodes, none lost, and every message handled (the stencil
// finishes only if each face arrives).
func TestRelayTransfers(t *testing.T) {
	w := &stencilWL{nx: 4, ny: 3, nz: 2, iters: 3, face: 1 << 10, ops: 1e3}
	cfg := DefaultConfig()
	cfg.Nodes = w.NumObjects()
	_, plain := runToEnd(t, cfg, w, &BaseProtocol{})
	p := &relayProto{}
	_, res := runToEnd(t, cfg, w, p)
	// faces: (3·3·2 + 4·2·2 + 4·3·1) pairs, both ways, 3 iterations
	const msgs = 2 * (18 + 16 + 12) * 3
	if plain.Stats.AppMsgs != msgs || res.Stats.AppMsgs != msgs {
		t.Fatalf("messages: %d and %d, want %d", plain.Stats.AppMsgs, res.Stats.AppMsgs, msgs)
	}
	if p.lost != 0 || res.Stats.ExtraMsgs != 3*msgs {
		t.Fatalf("transfers: %d, %d lost; want %d", res.Stats.ExtraMsgs, p.lost, 3*msgs)
	}
}
