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
// pair runs degraded; but see Restarts below), and messages to it stop once
// its failure is detected.
// When a failure takes the last replica of some object, the application is
// interrupted: it restarts from scratch (none.Restarter), or, with
// Config.Checkpoint, rolls back to the newest coordinated checkpoint (cpr),
// every replica on a live node (spares replace the dead ones, the failures
// it survived included).
//
// Checkpoints (Ferreira et al.'s replication with checkpoint/restart). cpr
// takes them as for any application, but a checkpoint holds one piece per
// object: the state of its live replica A, or of B once A is lost, written by
// that replica's node, and both replicas are restored from it (cpr.Replicas).
// A replica's piece carries its message numbers (replica.MarshalBinary), so
// that after the rollback both replicas number and drop messages as the one
// saved did. A piece may come from replica A of one object and B of another
// while A of the second was ahead of B: the cut then holds messages received
// from a replica ahead of the saved sender, which the restored sender sends
// again, under the same number, and its receivers drop; deterministic
// objects make that copy the same message. The interval policies young and
// daly take the mean time to interruption in place of the platform MTBF.
//
// Restarts (Config.RestartReplicas: Benoit, Herault, Le Fèvre and Robert's
// restart strategy, SC'19). A failure the application survives boots a
// spare for the failed node's slot; after the next checkpoint, the
// application still paused at its cut, each lost replica whose node has been
// replaced is re-created there as a copy of its twin, sent from the twin's
// node (RestartReplicas), so that every period starts with every pair whole.
// RestartPeriod is that strategy's period; Periodic models both strategies.
package replication

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"

	"ftsim/internal/peermap"
	"ftsim/internal/seqset"
	"ftsim/models/cpr"
	"ftsim/models/none"
	"ftsim/sim"
)

// Config configures the protocol (scenario kind "replication").
type Config struct {
	// HeaderBytes is the modeled size of the sequence number every
	// application message carries (protocol bytes); 0 ignores it.
	HeaderBytes int64
	// Checkpoint, when set, takes coordinated checkpoints with these
	// settings, to which an interruption rolls back; nil restarts from
	// scratch. Its interval policy is fixed, young, daly, auto or given
	// (iteration boundaries and node hazards mean nothing to degraded
	// pairs), with drained networks (a recorded message would bypass the
	// numbering).
	Checkpoint *cpr.Config
	// RestartReplicas re-creates the replicas lost to failures the
	// application survived after each checkpoint, on spares booted when
	// the failures were detected (Benoit et al.'s restart strategy); false
	// leaves the pairs degraded until an interruption (no-restart). It
	// needs Checkpoint.
	RestartReplicas bool
	// Audit checks the premise of the first-copy rule in every run (for
	// tests): the copies of the k-th message on an edge, from either
	// replica of the sender and from any life of it, are the same message
	// (tag, size and payload). A workload that breaks it would have the
	// receivers mix two histories.
	Audit bool
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
	// Restarted counts the replicas re-created after checkpoints
	// (Config.RestartReplicas), RestartTime the time the application
	// waited for them, RestartBytes the bytes copied to their nodes.
	Restarted    int
	RestartTime  sim.Time
	RestartBytes int64
	// Audited counts the copies Config.Audit compared with an earlier copy
	// of their message, Mismatches those that differed from it.
	Audited, Mismatches int64
}

// Protocol is process replication; make one per run.
type Protocol struct {
	sim.BaseProtocol
	cfg     Config
	n       int             // objects of the application: replica ids are i and i+n
	restart *none.Restarter // without checkpoints
	ckpt    *cpr.Protocol   // with checkpoints
	rep     []replicaState  // by replica id
	// survived are the failures the application survived since its last
	// start or rollback: an interruption hands them to the recovery, whose
	// spares replace their nodes too.
	survived []sim.Failure
	// booting are the spares booting for failures survived, by the node
	// each replaces (RestartReplicas); interruptions counts the
	// interruptions so far, which void a restart in progress.
	booting       map[sim.NodeID]sim.NodeID
	interruptions int
	// C counts the protocol's work.
	C Counters
	// first is each message's fingerprint, by logical sender, logical
	// receiver and number, as its first copy arrived (Config.Audit)
	first map[[3]uint64]uint64
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
		return nil, fmt.Errorf("protocol.header_bytes: must not be negative (got %d)", cfg.HeaderBytes)
	}
	p := &Protocol{cfg: cfg, booting: map[sim.NodeID]sim.NodeID{}}
	if cfg.RestartReplicas && cfg.Checkpoint == nil {
		return nil, fmt.Errorf("protocol.restart_replicas: replicas are restarted after checkpoints: set interval")
	}
	if c := cfg.Checkpoint; c != nil {
		switch c.Policy {
		case cpr.PolicyIterations, cpr.PolicyHazard:
			return nil, fmt.Errorf("protocol.interval: replication checkpoints at intervals of time (fixed, young, daly, auto, benoit), not %q", c.Policy)
		}
		if c.NoDrain {
			return nil, fmt.Errorf("protocol.drain: replication's checkpoints drain the network (a recorded message would bypass its numbering)")
		}
		var err error
		if p.ckpt, err = cpr.New(*c); err != nil {
			return nil, err
		}
		p.ckpt.Replicated(p)
	}
	return p, nil
}

// WrapWorkload runs every object of wl twice.
func (p *Protocol) WrapWorkload(wl sim.Workload) sim.Workload {
	p.n = wl.NumObjects()
	p.rep = make([]replicaState, 2*p.n)
	return &Workload{inner: wl, p: p}
}

// Init prepares the recovery.
func (p *Protocol) Init(rt *sim.Runtime) {
	p.BaseProtocol.Init(rt)
	if p.ckpt != nil {
		p.ckpt.Init(rt)
		return
	}
	p.restart = none.NewRestarter(rt)
}

// Start ends the run at once on a single node, where the two replicas of an
// object cannot be apart, and arms the first checkpoint.
func (p *Protocol) Start() {
	if rt := p.RT; rt.Config().Nodes < 2 {
		rt.At(0, func() {
			rt.Abort("replication needs at least 2 nodes: the replicas of an object run on different nodes")
		})
	}
	if p.ckpt != nil {
		p.ckpt.Start()
	}
}

// RestartsReplicas reports whether lost replicas are restarted after each
// checkpoint (Config.RestartReplicas).
func (p *Protocol) RestartsReplicas() bool { return p.cfg.RestartReplicas }

// Checkpointer is the checkpoint protocol run under replication (nil
// without checkpoints).
func (p *Protocol) Checkpointer() *cpr.Protocol { return p.ckpt }

// AuditMemory implements sim.MemoryAuditor: the memory is its checkpoints'.
func (p *Protocol) AuditMemory() error {
	if p.ckpt == nil {
		return nil
	}
	return p.ckpt.AuditMemory()
}

// Writer implements cpr.Replicas: the piece of an object is its replica A's
// state while A lives, else B's.
func (p *Protocol) Writer(id sim.ObjID) sim.ObjID {
	a := p.logical(id)
	switch rt := p.RT; {
	case !rt.Lost(a):
		return a
	case !rt.Lost(p.Twin(a)):
		return p.Twin(a)
	}
	return sim.None
}

// RestartCopyCost is the time a restart's copies take when one node's
// replicas are all restarted: the modeled bytes of the replicas on the
// busiest node, sent from its twins' node (the placement puts a node's
// twins on one node). The restart strategy's model pauses this long after a
// checkpoint that restarts replicas.
func (p *Protocol) RestartCopyCost() float64 {
	rt := p.RT
	bytes := map[sim.NodeID]int64{}
	for i := range rt.NumObjects() {
		id := sim.ObjID(i)
		bytes[rt.NodeOf(id)] += rt.ModeledSize(id)
	}
	var worst sim.Time
	bw := rt.Config().Bandwidth
	for i := range rt.NumObjects() {
		id := sim.ObjID(i)
		n, from := rt.NodeOf(id), rt.NodeOf(p.Twin(id))
		worst = max(worst, rt.Latency(from, n)+sim.TransferTime(bytes[n], bw))
	}
	return worst.Seconds()
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
	if p.cfg.Audit {
		p.audit(src, m)
	}
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

// audit compares message m, from logical sender src, with the first copy
// of its message that arrived (Config.Audit).
func (p *Protocol) audit(src sim.ObjID, m *sim.Message) {
	if p.first == nil {
		p.first = map[[3]uint64]uint64{}
	}
	var hdr [12]byte
	binary.LittleEndian.PutUint32(hdr[:4], uint32(m.Tag))
	binary.LittleEndian.PutUint64(hdr[4:], uint64(m.Size))
	h := fnv.New64a()
	h.Write(hdr[:])
	h.Write(m.Payload)
	k, fp := [3]uint64{uint64(src), uint64(p.logical(m.Dst)), m.Hdr.Seq}, h.Sum64()
	old, seen := p.first[k]
	if !seen {
		p.first[k] = fp
		return
	}
	p.C.Audited++
	if old != fp {
		p.C.Mismatches++
	}
}

// EnableAudit turns Config.Audit on for a protocol made by New, before its run.
func (p *Protocol) EnableAudit() { p.cfg.Audit = true }

// AuditErr reports the copies Config.Audit found different from an earlier
// copy of their message.
func (p *Protocol) AuditErr() error {
	if p.C.Mismatches > 0 {
		return fmt.Errorf("replication audit: %d of %d copies compared differ from the first copy of their message (sender, receiver and number)", p.C.Mismatches, p.C.Audited)
	}
	return nil
}

// OnHandled keeps the pair's progress current: replica A reports it, and a
// handler of replica B may have moved it.
func (p *Protocol) OnHandled(id sim.ObjID) {
	if int(id) >= p.n {
		p.RT.RefreshProgress(p.Twin(id))
	}
	if p.ckpt != nil {
		p.ckpt.OnHandled(id)
	}
}

// OnFailure lets the pairs that lost one replica run on the other, and
// recovers when a pair lost both.
func (p *Protocol) OnFailure(f sim.Failure) {
	rt := p.RT
	if p.recovering() {
		p.recover(f)
		return
	}
	if f.WasSpare {
		// an idle spare, where nothing ran, or one booting to replace a
		// failed node: another takes its place
		if old, ok := p.booting[f.Node]; ok {
			delete(p.booting, f.Node)
			p.replace(old)
		}
		return
	}
	if p.C.Interruptions == 0 {
		p.C.AppFailures++
	}
	interrupted, at := false, f.At
	for _, id := range f.Objects {
		p.rep[id].dead = true
		if twin := p.Twin(id); rt.Lost(twin) {
			// the interruption is the later of the two failures, which
			// may be the twin's, not detected yet
			interrupted = true
			if t := rt.FailedAt(rt.NodeOf(twin)); t != sim.Never {
				at = max(at, t)
			}
		}
	}
	if !interrupted {
		p.survived = append(p.survived, f)
		if p.ckpt != nil {
			p.ckpt.Survived(f.Node)
		}
		if p.cfg.RestartReplicas {
			p.replace(f.Node)
		}
		return
	}
	p.C.Interruptions++
	p.C.InterruptedAt = append(p.C.InterruptedAt, at)
	p.interruptions++
	// the spares booting for the failures survived now boot for the
	// recovery, which would otherwise take others for the same nodes
	adopted := map[sim.NodeID]bool{}
	for _, s := range slices.Sorted(maps.Keys(p.booting)) {
		p.ckpt.Adopt(s, p.booting[s])
		adopted[p.booting[s]] = true
	}
	clear(p.booting)
	for _, g := range p.survived {
		if !adopted[g.Node] {
			p.recover(g)
		}
	}
	p.survived = p.survived[:0]
	p.recover(f)
}

// recovering reports whether the application is being restarted or rolled
// back after an interruption.
func (p *Protocol) recovering() bool {
	if p.ckpt != nil {
		return p.ckpt.Recovering()
	}
	return p.restart.Active()
}

// recover hands failure f to the recovery.
func (p *Protocol) recover(f sim.Failure) {
	if p.ckpt != nil {
		p.ckpt.OnFailure(f)
		return
	}
	p.restart.OnFailure(f)
}

// OnFinish reports the protocol's figures.
func (p *Protocol) OnFinish() {
	if p.ckpt != nil {
		p.ckpt.OnFinish()
	}
	p.report()
}

// replace boots a spare to take the slot of failed node n, where the
// replicas n held are restarted after the next checkpoint; none when no
// spare is left (n's pairs stay degraded).
func (p *Protocol) replace(n sim.NodeID) {
	if s, ok := p.RT.TakeSpare(p.booted); ok {
		p.booting[s] = n
	}
}

// booted puts spare s in the slot of the node it replaces: the replicas lost
// there are placed on s, still lost until restarted, and an interruption's
// recovery has nothing left to do for that node's failure.
func (p *Protocol) booted(s sim.NodeID) {
	if n, ok := p.booting[s]; ok {
		delete(p.booting, s)
		p.RT.ReplaceSlot(n, s)
		p.survived = slices.DeleteFunc(p.survived, func(f sim.Failure) bool { return f.Node == n })
	}
}

// RestartReplicas implements cpr.ReplicaRestarter: after a checkpoint, every
// replica lost to a failure the application survived whose node has been
// replaced is re-created there as a copy of its twin, the state and the
// messages waiting for it, sent from the twin's node (the application is
// paused at the cut: the twin's state is the one just saved). The
// application resumes when every copy has arrived. The new replica numbers
// and drops messages as its twin does, and receives both copies of each
// message again.
func (p *Protocol) RestartReplicas(resume func()) {
	rt := p.RT
	if !p.cfg.RestartReplicas {
		resume()
		return
	}
	began, epoch := rt.Now(), p.interruptions
	type route struct{ from, to sim.NodeID }
	var todo []restartCopy
	bytes := map[route]int64{}
	for i := range p.rep {
		id := sim.ObjID(i)
		to, twin := rt.NodeOf(id), p.Twin(id)
		if !p.rep[id].dead || rt.Lost(twin) || !rt.Alive(to) {
			continue // alive, lost with its twin (an interruption), or not replaced yet
		}
		c, err := p.copyOf(twin, id)
		if err != nil {
			rt.Abort(fmt.Sprintf("restart replica: %v", err))
			return
		}
		todo = append(todo, c)
		bytes[route{rt.NodeOf(twin), to}] += c.size
	}
	if len(todo) == 0 {
		resume()
		return
	}
	pending := 1
	done := func(bool) {
		if pending--; pending > 0 || epoch != p.interruptions {
			return
		}
		for _, c := range todo {
			p.restore(c)
		}
		p.C.RestartTime += rt.Now() - began
		for _, n := range rt.Slots() {
			rt.Span(n, began, rt.Now(), "restart")
		}
		resume()
	}
	routes := slices.SortedFunc(maps.Keys(bytes), func(a, b route) int {
		return cmp.Or(cmp.Compare(a.to, b.to), cmp.Compare(a.from, b.from))
	})
	for _, r := range routes {
		pending++
		p.C.RestartBytes += bytes[r]
		rt.Transfer(r.from, r.to, bytes[r], sim.TagTransfer, done)
	}
	done(true)
}

// restartCopy is the copy of a replica's twin that re-creates it.
type restartCopy struct {
	id   sim.ObjID
	snap sim.Snap // its inbox readdressed to id (replicated handlers are never cut: OnSend takes their messages)
	size int64    // modeled bytes: the state and the waiting messages
}

// copyOf copies replica twin's state and waiting messages for replica id.
func (p *Protocol) copyOf(twin, id sim.ObjID) (restartCopy, error) {
	rt := p.RT
	s, err := rt.Snapshot(twin)
	if err != nil {
		return restartCopy{}, err
	}
	c := restartCopy{id: id, snap: s, size: rt.ModeledSize(twin) + s.WireSize()}
	c.snap.Inbox = make([]*sim.Message, len(s.Inbox))
	for i, m := range s.Inbox {
		c.snap.Inbox[i] = m.Clone()
		c.snap.Inbox[i].Dst = id
	}
	return c, nil
}

// restore re-creates lost replica c.id on its node from copy c, if its twin
// (the source) and its node both still live; a failure survived meanwhile
// leaves it to the next checkpoint.
func (p *Protocol) restore(c restartCopy) {
	rt := p.RT
	id, twin := c.id, p.Twin(c.id)
	if rt.Lost(twin) || !rt.Alive(rt.NodeOf(id)) || !rt.Lost(id) {
		return
	}
	if err := rt.Restore(id, rt.NodeOf(id), c.snap); err != nil {
		rt.Abort(fmt.Sprintf("restart replica: %v", err))
		return
	}
	// one instance of the pair again: its progress counts once
	// (pairProgress)
	p.rep[id].life = p.rep[twin].life
	rt.RefreshProgress(id)
	rt.RefreshProgress(twin)
	p.C.Restarted++
}

// The protocol's metrics (sim.Stats.SetMetric).
const (
	MetricInterruptions     = "replication_interruptions"        // failures that took both replicas of an object
	MetricFirstInterruption = "replication_first_interruption_s" // when the first of them struck
	MetricDuplicates        = "replication_duplicates"           // second copies dropped
	MetricRewritten         = "replication_pieces_rewritten"     // of checkpoints being written, lost in a failure survived and written again
	MetricRetaken           = "replication_checkpoints_retaken"  // voided by such a failure and taken again (a piece had no replica left)
	MetricRestarted         = "replication_replicas_restarted"   // re-created after checkpoints (restart_replicas)
	MetricRestartTime       = "replication_restart_s"            // the time the application waited for them
)

// report publishes the counters as run metrics.
func (p *Protocol) report() {
	st := p.RT.Stats()
	st.SetMetric(MetricInterruptions, float64(p.C.Interruptions))
	if len(p.C.InterruptedAt) > 0 {
		st.SetMetric(MetricFirstInterruption, p.C.InterruptedAt[0].Seconds())
	}
	st.SetMetric(MetricDuplicates, float64(p.C.Duplicates))
	if p.ckpt != nil {
		st.SetMetric(MetricRewritten, float64(p.ckpt.Rewritten))
		st.SetMetric(MetricRetaken, float64(p.ckpt.Retaken))
	}
	if p.cfg.RestartReplicas {
		st.SetMetric(MetricRestarted, float64(p.C.Restarted))
		st.SetMetric(MetricRestartTime, p.C.RestartTime.Seconds())
	}
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

var _ sim.MemoryAuditor = (*Protocol)(nil)
