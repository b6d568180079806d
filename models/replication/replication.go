// Package replication is process replication (protocol kind "replication"):
// every application object runs twice, on two different nodes, and the
// application survives a failure as long as one replica of every object
// lives. It is the scheme whose mean number of failures to interruption
// Casanova, Robert, Vivien and Zaidouni give in closed form (FGCS 51, 2015),
// with the message protocol rMPI calls "mirror" (Ferreira et al., SC'11).
//
// Placement. Replica A of object i is where the configured policy places i;
// replica B is on the node N/2 slots further (N the application's nodes). Node
// k and node k+N/2 then hold each other's replicas and nothing else: the
// cluster is b = N/2 node pairs, and the application is interrupted when both
// nodes of a pair have failed, the model behind MNFTI = 1 + 4^b / C(2b, b).
// Each node does the work of two, so the fault-free efficiency is at most 1/2.
//
// Messages (mirror). Each replica of a sender sends each message to both
// replicas of its receiver, numbered per (sender, receiver) edge: both replicas
// of a deterministic object send the same k-th message on an edge, so a
// receiver takes the first copy of each number and drops the second. A
// replica whose twin has died therefore needs nothing re-sent, and the
// survivors never wait. Objects whose outputs depend on the arrival order of
// concurrent inputs (pida's work requests, a farm master's assignments) would
// let the two replicas diverge, and the first-copy rule would then mix their
// histories; experiment refuses those workloads.
//
// Failures. A dead replica is not re-created (Casanova et al.'s model: the
// pair runs degraded), and messages to it stop once its failure is detected.
// When a failure takes the last replica of some object, the application is
// interrupted and restarts from scratch, every replica on a live node (spares
// replace the dead ones: none.Restarter).
package replication

import (
	"fmt"

	"ftsim/internal/peermap"
	"ftsim/internal/seqset"
	"ftsim/models/none"
	"ftsim/sim"
)

// Config configures the protocol (scenario kind "replication").
type Config struct {
	// HeaderBytes is the modeled size of the sequence number every
	// application message carries (protocol bytes); 0 ignores it.
	HeaderBytes int64
}

// Counters are what the protocol did in a run.
type Counters struct {
	Copies        int64      // messages sent to the other replica of their receiver
	Duplicates    int64      // copies dropped because the first had arrived
	Interruptions int        // failures that took the last replica of an object
	InterruptedAt []sim.Time // when each of them struck (the node's failure time)
	// AppFailures counts the failures of application nodes reported before
	// the first interruption's report, the interrupting one included.
	AppFailures int
}

// Protocol is process replication; make one per run.
type Protocol struct {
	sim.BaseProtocol
	cfg     Config
	n       int // objects of the application: replica ids are i and i+n
	wl      *Workload
	restart *none.Restarter
	rep     []replicaState // by replica id
	// C counts the protocol's work.
	C Counters
}

// replicaState is what the protocol keeps for one replica.
type replicaState struct {
	out  peermap.Map[sim.ObjID, uint64]     // messages sent to each logical receiver
	in   peermap.Map[sim.ObjID, seqset.Set] // numbers received from each logical sender
	dead bool                               // its failure was detected
	obj  *replica                           // the latest instance
	life uint32                             // instances created so far
}

// New returns the protocol.
func New(cfg Config) (*Protocol, error) {
	if cfg.HeaderBytes < 0 {
		return nil, fmt.Errorf("header_bytes must not be negative (got %d)", cfg.HeaderBytes)
	}
	return &Protocol{cfg: cfg}, nil
}

// WrapWorkload runs every object of wl twice.
func (p *Protocol) WrapWorkload(wl sim.Workload) sim.Workload {
	p.n = wl.NumObjects()
	p.rep = make([]replicaState, 2*p.n)
	p.wl = &Workload{inner: wl, p: p}
	return p.wl
}

// Init creates the restart-from-scratch fallback.
func (p *Protocol) Init(rt *sim.Runtime) {
	p.BaseProtocol.Init(rt)
	p.restart = none.NewRestarter(rt)
}

// Start ends the run at once on a single node, where the two replicas of an
// object cannot be apart.
func (p *Protocol) Start() {
	if rt := p.RT; rt.Config().Nodes < 2 {
		rt.At(0, func() { rt.Abort("replication needs at least 2 nodes: the replicas of an object run on different nodes") })
	}
}

// Twin is the other replica of replica id.
func (p *Protocol) Twin(id sim.ObjID) sim.ObjID {
	if int(id) < p.n {
		return id + sim.ObjID(p.n)
	}
	return id - sim.ObjID(p.n)
}

// logical is the application object replica id runs.
func (p *Protocol) logical(id sim.ObjID) sim.ObjID { return id % sim.ObjID(p.n) }

// OnSend numbers the message on its edge and sends it to both replicas of its
// receiver, its own side's first (a message to oneself stays on its side).
func (p *Protocol) OnSend(m *sim.Message) bool {
	rt := p.RT
	src, dst := p.logical(m.Src), p.logical(m.Dst)
	side := m.Src - src // 0 for replica A, n for replica B
	next := p.rep[m.Src].out.Ptr(dst)
	*next++
	m.Hdr.Seq = *next
	if hb := p.cfg.HeaderBytes; hb > 0 {
		m.Hdr.Bytes += hb
		rt.Stats().ExtraBytes += hb
	}
	m.Dst = dst + side
	other := p.Twin(m.Dst)
	if dst != src && !p.rep[other].dead {
		c := m.Clone()
		c.Dst = other
		st := rt.Stats()
		st.ExtraMsgs++
		st.ExtraBytes += c.WireSize()
		p.C.Copies++
		if d := rt.MessageCPU(c.Size); d > 0 {
			rt.ChargeCPU(m.From, d, nil)
		}
		if !p.rep[m.Dst].dead {
			rt.Transmit(m)
		}
		rt.Transmit(c)
		return false
	}
	return !p.rep[m.Dst].dead
}

// OnArrive delivers the first copy of each message and drops the second; the
// object sees its sender's logical id.
func (p *Protocol) OnArrive(m *sim.Message) bool {
	src := p.logical(m.Src)
	got := p.rep[m.Dst].in.Ptr(src)
	if got.Has(m.Hdr.Seq) {
		p.C.Duplicates++
		if d := p.RT.MessageCPU(m.Size); d > 0 {
			p.RT.ChargeCPU(m.To, d, nil) // received before it could be dropped
		}
		return false
	}
	got.Add(m.Hdr.Seq)
	m.Src = src
	return true
}

// OnHandled keeps the pair's progress current: replica A reports it, and a
// handler of replica B may have moved it.
func (p *Protocol) OnHandled(id sim.ObjID) {
	if int(id) >= p.n {
		p.RT.RefreshProgress(p.Twin(id))
	}
}

// OnFailure lets the pairs that lost one replica run on the other, and
// restarts the application when a pair lost both.
func (p *Protocol) OnFailure(f sim.Failure) {
	rt := p.RT
	if p.restart.Active() {
		p.restart.OnFailure(f)
		return
	}
	if f.WasSpare || len(f.Objects) == 0 {
		return // a spare, or a node already emptied: nothing ran there
	}
	if p.C.Interruptions == 0 {
		p.C.AppFailures++
	}
	interrupted := false
	for _, id := range f.Objects {
		p.rep[id].dead = true
		if rt.Lost(p.Twin(id)) {
			interrupted = true
		}
	}
	if interrupted {
		p.C.Interruptions++
		p.C.InterruptedAt = append(p.C.InterruptedAt, f.At)
		p.report()
		p.restart.OnFailure(f)
		return
	}
	for _, id := range f.Objects {
		rt.RefreshProgress(p.Twin(id)) // the survivor reports the pair now
	}
	p.report()
}

// report publishes the counters as run metrics.
func (p *Protocol) report() {
	st := p.RT.Stats()
	st.SetMetric("interruptions", float64(p.C.Interruptions))
	if len(p.C.InterruptedAt) > 0 {
		st.SetMetric("first_interruption_s", p.C.InterruptedAt[0].Seconds())
	}
	st.SetMetric("duplicates", float64(p.C.Duplicates))
}

// pairProgress is replica id's report: the pair's progress from replica A
// (the further of the two live replicas), from B once A is lost, else 0. A
// twin not yet re-created by a restart in progress counts for nothing.
func (p *Protocol) pairProgress(id sim.ObjID) int64 {
	r, t := &p.rep[id], &p.rep[p.Twin(id)]
	own := r.obj.Object.Progress()
	if t.life != r.life || p.RT.Lost(p.Twin(id)) {
		return own
	}
	if int(id) >= p.n {
		return 0
	}
	return max(own, t.obj.Object.Progress())
}
