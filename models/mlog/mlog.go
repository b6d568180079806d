package mlog

// This file holds the protocol's configuration and state for Chakravorty &
// Kalé's sender-based message logging: per object its sequence numbers per
// sender→receiver pair, tickets (TN), log and processed messages; the
// checkpoint timers; and the run's metrics. The forward path (section 3.1) is
// in tickets.go (the sender's side) and receive.go (the receiver's).

import (
	"cmp"
	"fmt"
	"slices"

	"ftsim/internal/chunk"
	"ftsim/internal/peermap"
	"ftsim/internal/seqset"
	"ftsim/models/none"
	"ftsim/sim"
)

// Restart modes.
const (
	RestartBasic = "basic" // every object of the failed node re-executes on its replacement
	RestartFast  = "fast"  // the failed node's objects are spread over other nodes (section 3.5)
)

// Config configures the protocol. Scenario keys are given beside each field.
type Config struct {
	Period      sim.Time // period: each node's buddy checkpoint period (default 30 s)
	Restart     string   // restart: "basic" or "fast" (default fast)
	MaxLog      int64    // max_log: a sender node whose log exceeds this many bytes asks its receivers to checkpoint; 0 = off
	HeaderBytes int64    // header_bytes: modeled SN/TN header on every application message (default 16)
	TicketBytes int64    // ticket_bytes: modeled size of a ticket request, reply, tuple, acknowledgement (default 32)
	// FullLog is the first half of the multiple-failure extension (section 3.4):
	// every object's whole message log (not only the messages to objects on its
	// own node) is part of its checkpoint (full_log).
	FullLog bool
	// MultiFailure is the whole multiple-failure extension of section 3.4
	// (multi_failure; implies FullLog): a message to another node is sent at
	// once with its SN, without a ticket request; its receiver assigns the TN
	// and logs the (sender, SN, TN) tuple on its own buddy before processing
	// the message, then tells the sender the TN. A node that fails while the
	// objects of an earlier restart still re-execute finds the TNs its objects
	// had handed out in its buddy's remote log, instead of in logs that died
	// with the earlier failure.
	MultiFailure bool
	// BuddyOffset puts each node's buddy (its checkpoints and remote log)
	// on the slot BuddyOffset places further in rank order
	// (sim.Runtime.SlotPartner; 0 means 1, the paper's next node); a
	// multiple of the failure-domain size puts it in another domain
	// (buddy_offset).
	BuddyOffset int
	// Priority gives re-execution priority: while restored objects on a node
	// re-process their logged messages, the node's other objects wait (as a
	// runtime that schedules recovery messages first would), so that a spread
	// object is not slowed by its host's own work (priority).
	Priority bool
	// TraceOrder records, per object, the (sender, SN) processed at each TN, to
	// check that re-execution after a restart follows the pre-failure order.
	TraceOrder bool
	// MeasureRestart attaches a Probe and reports, at the end of the run, the
	// paper's restart time (metric restart_s: the largest increase in
	// iteration time among survivors) and the median iteration time before
	// the first failure (iteration_s) (measure_restart).
	MeasureRestart bool
	// CPU is the core time the protocol's work costs (the rows of the
	// paper's Table 2); none by default.
	CPU CPUCosts
	// Substep is the length of the time steps a handler of a macro-step
	// workload stands for (substep; 0: checkpoints wait for the handler's
	// end). A node's checkpoint then cuts its objects' running handlers at
	// the end of their current step (sim.Runtime.CutObject), as cpr's
	// substep does, so that the period is kept within handlers longer than
	// it: the handler's messages not sent yet leave the log and its SN
	// counts (ReturnCut), go with the checkpoint as part of the cut, and
	// are logged again, with the same SNs, when the rest sends them.
	Substep sim.Time
}

// CPUCosts are the core times of the protocol's steps, one per row of the
// paper's Table 2. Each is charged to a core of the node doing the step, ahead
// of the application work queued there (sim.Runtime.ChargeCPU): the node's
// application work waits for it, the protocol's messages do not.
type CPUCosts struct {
	// Log (log_cpu) is the sender's, per application message: stamping its
	// SN and copying it into the log (Table 2's increase of Message Send).
	Log sim.Time
	// TicketRequest (ticket_request_cpu) is the sender's, per ticket request
	// it sends (Ticket Request Send).
	TicketRequest sim.Time
	// Ticket (ticket_cpu) is the receiver's, per ticket it sends to a
	// sender on another node, answers to duplicates included (Ticket Send;
	// a local-mode ticket is part of Local); with multi_failure, per reply
	// telling a sender on another node the TN, duplicates included.
	Ticket sim.Time
	// Local (local_cpu) is the local-mode protocol's (Local Message
	// Protocol): the sender's, per local-mode message it sends (its ticket
	// and the tuple it logs on the buddy); with multi_failure also the
	// receiver's, per new message from another node (its TN and tuple).
	Local sim.Time
}

// DefaultConfig is the configuration of the paper's experiments: checkpoints
// every 30 s, fast restart.
func DefaultConfig() Config {
	return Config{Period: 30 * sim.Second, Restart: RestartFast, HeaderBytes: 16, TicketBytes: 32, Priority: true}
}

// Counters are the protocol's own statistics.
type Counters struct {
	Tickets          int64    // tickets handed out (new TNs)
	OldTickets       int64    // ticket requests answered "old" (already processed)
	LocalMessages    int64    // messages sent in local mode (tuple logged at the buddy)
	Duplicates       int64    // application messages dropped because already processed or held
	ReceiverTuples   int64    // multi_failure: tuples logged at a receiver's buddy for messages from other nodes
	Resent           int64    // logged messages resent after a restart
	ResentOthers     int64    // of those, resent by a restored object to an object not restored with it
	MissingTNs       int64    // TNs handed out before a crash that never reached their requester, handed out again
	Checkpoints      int64    // node checkpoints committed at a buddy
	Cuts             int64    // handlers a checkpoint cut (Config.Substep)
	Returned         int64    // messages those cuts gave back to be logged again when sent
	GCMessages       int64    // garbage-collection messages
	Restarts         int64    // node restarts from buddy checkpoints
	Migrations       int64    // objects spread by fast restart
	SourceCrashes    int64    // restarting nodes that crashed while spreading the restored objects
	DestCrashes      int64    // multi_failure: destinations of such migrations that crashed meanwhile (restarted with the first failure)
	Concurrent       int64    // multi_failure: restarts begun while others waited for their resends
	MigrationQueries int64    // unfinished migrations D asked E and F about after such a crash
	MigrationsKept   int64    // unfinished migrations that stood after a crash of C or E: the object lives on E (or E's replacement, from F)
	MigrationsUndone int64    // unfinished migrations undone after a crash of C or E: the object lives on C (or C's replacement)
	OrderMismatches  int64    // TNs re-processed with another (sender, SN) than before the failure (TraceOrder)
	Reprocessed      int64    // TNs processed again after a restart with the same (sender, SN) (TraceOrder)
	CPU              sim.Time // core time charged for the protocol's steps (Config.CPU), including charges a failure voided
}

// Protocol tags of the protocol's transfers (any value not used by the runtime).
const (
	tagTicket int32 = 100 + iota
	tagReply
	tagTuple
	tagAck
	tagCheckpoint
	tagGC
	tagResend
	tagDone
	tagFetch
	tagMigrate
	tagCkptRequest
)

// Timer tags.
const (
	timerCheckpoint int32 = 1
	timerSend       int32 = 2 // an entry's first send (sendAt)
)

// Protocol is sender-based message logging with buddy checkpoints and basic or
// fast restart. Survivors never roll back: only the objects of a failed node are
// restored (from their buddy checkpoint) and re-execute the logged messages
// other objects resend, in their original TN order.
type Protocol struct {
	sim.BaseProtocol
	cfg  Config
	objs []*object

	floors       map[pairKey]uint64 // src→dst: entries with SN ≤ floor were lost with src's log
	ckBusy       map[sim.NodeID]bool
	armed        map[sim.NodeID]uint32 // checkpoint timer armed on node (its incarnation)
	recs         []*recovery
	booting      map[sim.NodeID]*recovery
	bootingGroup map[sim.NodeID]groupSpare // spares booting for a crashed destination's group
	retry        []*pendingLocal           // local-mode tuples waiting for a live buddy
	retryRecv    []*receipt                // multi_failure: receivers' tuples waiting for a live buddy
	receipts     []*receipt                // multi_failure: receipts done with, for reuse
	// entries are the log's, one per application message, cut from blocks;
	// never reused (a pruned one may still be referenced, and is known by
	// its done flag), a block is freed once none of its entries is
	// referenced, about a checkpoint period after it was cut
	entries      chunk.Alloc[entry]
	sends        [][]*entry // entries waiting for their first send, by timer (sendAt), in send order; empty: free
	sendFree     []int64    // free slots of sends (a slot whose timer died with its node stays taken)
	lastSend     sendTimer  // the last first-send timer set (sendAt)
	timerPerSend bool       // set by tests: a first-send timer for each send, none shared
	scratch      *none.Restarter
	fallen       bool     // an unrecoverable pattern: restarting from scratch
	life         int64    // bumped by each restart from scratch: older checkpoint timers are void
	restarted    sim.Time // when the last restart completed
	lastProgress map[sim.NodeID]int64
	dormant      int                      // nodes whose checkpoint timer stopped for want of progress
	holds        []int32                  // by object: reasons it is paused (checkpoint, priority)
	prio         map[sim.NodeID]*priority // nodes giving restored objects priority
	gen          int

	// Stats are the protocol's counters.
	Stats Counters
	// Probe, when set, records per-object iteration completion times.
	Probe *Probe
	trace []map[uint64]pair
	// hook, set by tests, sees protocol events to strike a node at that
	// moment: the steps of a migration ("send", "at E", "at F": C, E, F), a
	// checkpoint committed ("committed": node, buddy), a spare in a failed
	// node's slot ("replaced": failed node, spare), the resend phase of a
	// restart beginning ("resend": failed node, restarting node) and a
	// restart complete ("restarted": failed node, restarting node)
	hook func(event string, a, b, c sim.NodeID)
}

// sendTimer is a first-send timer: its slot in Protocol.sends (-1: none), the sender
// object and the time it fires at, and the runtime's EventMark just after
// it was set.
type sendTimer struct {
	slot int64
	obj  sim.ObjID
	at   sim.Time
	mark sim.EventMark
}

// pair names a message by its sender and sequence number.
type pair struct {
	src sim.ObjID
	sn  uint64
}

// pairKey is a sender→receiver pair.
type pairKey struct{ src, dst sim.ObjID }

// entry is one message in a sender's log.
type entry struct {
	m      *sim.Message // the message as sent, Hdr.SN set
	dst    sim.ObjID
	oldGen uint32 // with old: the receiver's generation that had processed it
	sn, tn uint64
	wire   int64  // m.WireSize(): the log's accounting reads it here, not from m (a miss per entry pruned)
	gen    uint32 // the sender's generation when logged: void after the sender is restored
	asking bool   // a ticket request or tuple log is outstanding
	old    bool   // the receiver had already processed it
	done   bool   // pruned
	// given: m itself went to the network with the first transmit (later
	// sends copy it). What the log reads of m (Src, Tag, Size, Payload,
	// Hdr but its TN) neither the runtime nor the receiver changes; a copy
	// of the entry (a checkpoint's) has it set, so that only the entry that
	// never gave m away can give it.
	given bool
}

// snSet is the set of SNs from one sender an object has processed.
type snSet struct {
	seqset.Set
	// mark is the receiver's sendersMark when the sender was last added to
	// its senders: a sender is recorded once per checkpoint without a set
	// (a map write per message processed) beside done
	mark uint32
}

func (s *snSet) has(sn uint64) bool { return s != nil && s.Has(sn) }

// clone copies the SNs (not the mark: the copy is the state of another life,
// or of a checkpoint, whose senders start empty).
func (s *snSet) clone() snSet { return snSet{Set: s.Set.Clone()} }

// ticketReq is a ticket request waiting for a restarted receiver's resends.
type ticketReq struct {
	s     *object
	e     *entry
	at    sim.NodeID // node the request reached
	local bool
}

// tuple is an entry of the remote message log, held on a buddy node.
type tuple struct {
	src    sim.ObjID
	sn, tn uint64
	holder sim.NodeID
	inc    uint32
}

// object is the protocol's state of one application object. It lives on the
// object's node (node, inc): what is not in a checkpoint dies with that node.
type object struct {
	id   sim.ObjID
	gen  uint32
	node sim.NodeID
	inc  uint32

	// sender side, by receiver (peer maps: a lookup per message without a
	// hash; see tables.go)
	sn       peermap.Map[sim.ObjID, uint64]   // the last SN sent
	log      peermap.Map[sim.ObjID, []*entry] // logged messages, none empty
	logBytes int64

	// receiver side
	tnCount, tnProcessed, delivered uint64
	// tns is the TNTable, by sender then SN (each a window of that
	// sender's SNs: they are dense); byTN is its inverse, by TN (see tables.go)
	tns         peermap.Map[sim.ObjID, window[snSlot]]
	byTN        window[tnSlot]
	done        peermap.Map[sim.ObjID, snSet] // by sender (values: a set is read per message arriving, and a pointer to follow was a cache miss more)
	held        window[*sim.Message]          // by TN, above delivered
	logged      map[pair]bool                 // tuples already in the remote message log (restored from it; nil until then)
	senders     []sim.ObjID                   // senders since the last checkpoint (garbage collection), each once
	sendersMark uint32                        // numbers the senders sets: a sender's done.mark equals it once in senders

	ckptTN uint64 // TNCheckpointed
	ckpt   *objCkpt
	// with Substep, the entries logged by the handler that ran at unsentAt
	// (or is running): what a cut gives back of them (ReturnCut)
	unsent   []*entry
	unsentAt sim.Time
	rlog     []tuple // the remote message log of messages to this object

	// restart
	gated   bool
	waitFor map[sim.NodeID]bool
	queued  []ticketReq
	missing []uint64
	catchUp uint64 // re-executing up to this TN with priority (0: not)
	// replayTo: after a restart, the object re-processes up to this TN what it
	// had processed before the crash, regenerating the messages it had sent
	// (0: not re-executing)
	replayTo uint64
	waiting  []*sim.Message // multi_failure: messages arrived while gated
	// the multi_failure flag "tuple on its way to the buddy" is in tns
}

// addSender records src, whose done set is d, among o's senders.
func (o *object) addSender(src sim.ObjID, d *snSet) {
	if d.mark != o.sendersMark {
		d.mark = o.sendersMark
		o.senders = append(o.senders, src)
	}
}

// New returns the protocol with configuration cfg. Its errors start with
// the scenario key at fault ("protocol.period: ..."), which the scenarios
// package locates at the key's line.
func New(cfg Config) (*Protocol, error) {
	if cfg.Period <= 0 {
		return nil, fmt.Errorf("protocol.period: must be positive, got %v", cfg.Period)
	}
	if err := sim.CheckDelay("protocol.period", cfg.Period); err != nil {
		return nil, err
	}
	switch cfg.Restart {
	case RestartBasic, RestartFast:
	case "":
		cfg.Restart = RestartFast
	default:
		return nil, fmt.Errorf("protocol.restart: unknown restart %q (basic, fast)", cfg.Restart)
	}
	if cfg.MultiFailure {
		cfg.FullLog = true
	}
	if cfg.BuddyOffset < 0 {
		return nil, fmt.Errorf("protocol.buddy_offset: must be ≥ 1, got %d", cfg.BuddyOffset)
	}
	for _, c := range []struct {
		key string
		v   int64
	}{{"max_log", cfg.MaxLog}, {"header_bytes", cfg.HeaderBytes}, {"ticket_bytes", cfg.TicketBytes}} {
		if c.v < 0 {
			return nil, fmt.Errorf("protocol.%s: must not be negative, got %d", c.key, c.v)
		}
	}
	for _, c := range []struct {
		key string
		d   sim.Time
	}{{"log_cpu", cfg.CPU.Log}, {"ticket_request_cpu", cfg.CPU.TicketRequest}, {"ticket_cpu", cfg.CPU.Ticket}, {"local_cpu", cfg.CPU.Local}, {"substep", cfg.Substep}} {
		if err := sim.CheckDelay("protocol."+c.key, c.d); err != nil {
			return nil, err
		}
	}
	return &Protocol{cfg: cfg}, nil
}

// Init creates the per-object state.
func (p *Protocol) Init(rt *sim.Runtime) {
	p.BaseProtocol.Init(rt)
	p.scratch = none.NewRestarter(rt)
	p.scratch.Restarted = p.takeOver
	p.objs = make([]*object, rt.NumObjects())
	for i := range p.objs {
		p.objs[i] = &object{id: sim.ObjID(i), ckpt: &objCkpt{initial: true}}
		p.objs[i].reset()
	}
	p.floors = map[pairKey]uint64{}
	p.ckBusy = map[sim.NodeID]bool{}
	p.armed = map[sim.NodeID]uint32{}
	p.booting = map[sim.NodeID]*recovery{}
	p.bootingGroup = map[sim.NodeID]groupSpare{}
	p.holds = make([]int32, rt.NumObjects())
	p.lastSend.slot = -1 // none yet
	p.lastProgress = map[sim.NodeID]int64{}
	p.prio = map[sim.NodeID]*priority{}
	if p.cfg.MeasureRestart && p.Probe == nil {
		p.Probe = NewProbe(rt.NumObjects())
	}
	if p.cfg.TraceOrder {
		p.trace = make([]map[uint64]pair, rt.NumObjects())
		for i := range p.trace {
			p.trace[i] = map[uint64]pair{}
		}
	}
}

// reset empties an object's volatile state (a new life).
func (o *object) reset() {
	o.gen++
	o.sn, o.log = peermap.Map[sim.ObjID, uint64]{}, peermap.Map[sim.ObjID, []*entry]{}
	o.logBytes = 0
	o.tnCount, o.tnProcessed, o.delivered = 0, 0, 0
	o.tns, o.byTN = peermap.Map[sim.ObjID, window[snSlot]]{}, window[tnSlot]{}
	o.done = peermap.Map[sim.ObjID, snSet]{}
	o.held = window[*sim.Message]{}
	o.logged = nil
	o.senders, o.sendersMark = nil, 1 // marks of fresh or cloned done sets are 0
	o.gated, o.waitFor, o.queued, o.missing, o.catchUp = false, nil, nil, nil, 0
	o.replayTo, o.waiting = 0, nil
}

// Start records where every object lives and arms the checkpoint timers.
func (p *Protocol) Start() {
	rt := p.RT
	for _, o := range p.objs {
		o.node = rt.NodeOf(o.id)
		o.inc = rt.Incarnation(o.node)
	}
	for _, n := range rt.Slots() {
		p.arm(n)
	}
}

// arm starts node n's checkpoint timer unless it runs already.
func (p *Protocol) arm(n sim.NodeID) {
	rt := p.RT
	if inc, ok := p.armed[n]; ok && rt.Holds(n, inc) {
		return
	}
	p.armed[n] = rt.Incarnation(n)
	rt.SetTimer(n, rt.Now()+p.cfg.Period, timerCheckpoint, p.life)
}

// OnTimer makes an entry's first send (timerSend) or takes node n's periodic
// checkpoint (timerCheckpoint).
func (p *Protocol) OnTimer(n sim.NodeID, tag int32, life int64) {
	if tag == timerSend { // life is the slot in p.sends
		es := p.sends[life]
		for _, e := range es {
			p.firstSend(p.objs[e.m.Src], e)
		}
		clear(es)
		p.sends[life] = es[:0] // free, its room kept for the next timer
		p.sendFree = append(p.sendFree, life)
		return
	}
	if tag != timerCheckpoint || p.fallen || life != p.life {
		return
	}
	rt := p.RT
	done, _ := rt.Progress()
	if done == p.lastProgress[n] && !p.cutting(n) {
		// nothing progressed for a whole period: stop ticking (a run whose
		// application cannot go on must be able to end); OnHandled wakes it
		delete(p.armed, n)
		p.dormant++
		return
	}
	p.lastProgress[n] = done
	rt.SetTimer(n, rt.Now()+p.cfg.Period, timerCheckpoint, p.life)
	p.checkpoint(n)
}

// cutting reports whether node n runs a handler its checkpoint would cut
// (Config.Substep), or holds the rest of one a cut left (a checkpoint's, or
// a stall's: sim/coupled.go): a handler longer than the period makes no
// progress within it, but the application is going on.
func (p *Protocol) cutting(n sim.NodeID) bool {
	if p.cfg.Substep <= 0 {
		return false
	}
	for _, id := range p.RT.ObjectsOn(n) {
		if p.RT.HandlerPending(id) {
			return true
		}
	}
	return false
}

// memAdd accounts memory on node n if it is still the incarnation inc.
func (p *Protocol) memAdd(n sim.NodeID, inc uint32, k sim.MemKind, d int64) {
	if p.RT.Holds(n, inc) {
		p.RT.MemAdd(n, k, d)
	}
}

// AuditMemory implements sim.MemoryAuditor. Each object's logBytes is the
// sum over the entries its log holds, each entry's size its message's (the
// entry keeps it so that pruning does not read the message); each live node
// accounts as MemLog the logs of the objects it runs and the remote-log
// tuples it holds, and as MemCheckpoint the checkpoints it holds.
func (p *Protocol) AuditMemory() error {
	rt := p.RT
	logs, ckpts := make([]int64, rt.NumNodes()), make([]int64, rt.NumNodes())
	for _, o := range p.objs {
		var sum int64
		for i := range o.log.Len() {
			for _, e := range *o.log.At(i) {
				if e.wire != e.m.WireSize() {
					return fmt.Errorf("mlog: object %d, entry SN %d: %d bytes counted, message of %d", o.id, e.sn, e.wire, e.m.WireSize())
				}
				sum += e.wire
			}
		}
		if o.logBytes != sum {
			return fmt.Errorf("mlog: object %d counts %d bytes of log, its entries %d", o.id, o.logBytes, sum)
		}
		if rt.Holds(o.node, o.inc) {
			logs[o.node] += o.logBytes
		}
		for _, x := range o.rlog {
			if rt.Holds(x.holder, x.inc) {
				logs[x.holder] += p.cfg.TicketBytes
			}
		}
		if c := o.ckpt; c != nil && rt.Holds(c.holder, c.inc) {
			ckpts[c.holder] += c.size
		}
	}
	if err := cmp.Or(rt.MemMismatch(sim.MemLog, logs, "logs"), rt.MemMismatch(sim.MemCheckpoint, ckpts, "checkpoints")); err != nil {
		return fmt.Errorf("mlog: %w", err)
	}
	return nil
}

// buddy is the node that holds node n's checkpoint and remote message log:
// the application node BuddyOffset places further in rank order (None when n
// is alone or not a slot).
func (p *Protocol) buddy(n sim.NodeID) sim.NodeID {
	return p.RT.SlotPartner(n, p.cfg.BuddyOffset)
}

var _ sim.Finisher = (*Protocol)(nil)

// OnFinish reports the run's metrics: protocol_cpu_s (the core time of the
// protocol's steps) when Config.CPU charges any, and the probe's figures
// restart_s and iteration_s when measure_restart is on.
func (p *Protocol) OnFinish() {
	st := p.RT.Stats()
	if p.cfg.CPU != (CPUCosts{}) {
		st.SetMetric(sim.MetricProtocolCPU, p.Stats.CPU.Seconds())
	}
	if !p.cfg.MeasureRestart || p.Probe == nil {
		return
	}
	st.SetMetric("restart_s", p.Probe.RestartTime().Seconds())
	st.SetMetric("iteration_s", p.Probe.IterationTime().Seconds())
}

// spend charges d of a core of node n for a step of the protocol (Config.CPU).
func (p *Protocol) spend(n sim.NodeID, d sim.Time) {
	if d > 0 {
		p.Stats.CPU += d
		p.RT.ChargeCPU(n, d, nil)
	}
}

// logFull asks the nodes of the receivers of s's log to checkpoint, so that
// their acknowledgements garbage-collect it (the max_log trigger).
func (p *Protocol) logFull(s *object) {
	rt := p.RT
	var nodes []sim.NodeID
	for i := range s.log.Len() {
		dst := s.log.Key(i)
		n := p.objs[dst].node
		if !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	slices.Sort(nodes)
	for _, n := range nodes {
		if p.ckBusy[n] || n == sim.None {
			continue
		}
		if n == s.node {
			p.checkpoint(n)
			continue
		}
		p.ckBusy[n] = true // one request at a time
		rt.Transfer(s.node, n, p.cfg.TicketBytes, tagCkptRequest, func(ok bool) {
			delete(p.ckBusy, n)
			if ok {
				p.checkpoint(n)
			}
		})
	}
}

// wake re-arms the checkpoint timers that stopped while nothing progressed.
func (p *Protocol) wake() {
	p.dormant = 0
	for _, n := range p.RT.Slots() {
		if p.RT.Alive(n) {
			p.arm(n)
		}
	}
}

var _ sim.MemoryAuditor = (*Protocol)(nil)
