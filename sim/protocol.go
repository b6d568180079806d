package sim

// Protocol is the hook interface of a fault-tolerance protocol: middleware
// between the workload's objects and the cluster. The runtime calls the hooks;
// the protocol acts through the Runtime's methods (control messages, timers,
// pause/resume, snapshot/restore/migrate, storage, spares). The five families
// fit it as follows:
//   - coordinated checkpoint: timers, PauseApp + WhenQuiet (drained cut),
//     Snapshot/Restore of every object, storage writes, NewEpoch and
//     CancelStorage on rollback;
//   - DPS backups: OnSend stamps sequence numbers and sends a duplicate of the
//     message (a Clone) to the backup node with SendControl, OnDispatch records
//     the message being processed, OnArrive silently drops re-executed
//     duplicates, Restore on the backup node;
//   - message logging: OnSend returns false and replaces the send by a ticket
//     exchange (SendControl), releasing the message later with Transmit;
//     OnArrive holds messages until their ticket is next and Deliver releases
//     them; survivors never roll back because Restore acts on single objects;
//   - ABFT: piggybacks critical data in Header.Aux on the application's own
//     messages and restores a failed object from its peers' data;
//   - replication: WrapWorkload runs every object twice (a Placer keeps the
//     two apart), OnSend numbers each message and Transmits a Clone to the
//     receiver's other replica, OnArrive drops the second copy, and a failure
//     that leaves one replica of every object is only recorded (or, with
//     restarts, the lost replicas are Restored on a spare, TakeSpare and
//     ReplaceSlot, as copies of their twins after the next checkpoint).
//
// A protocol learns of a failure only when it is detected (OnFailure).
type Protocol interface {
	// Init gives the protocol its runtime before anything runs.
	Init(rt *Runtime)
	// Start runs at time 0, after the objects exist and before they start.
	Start()
	// OnSend sees every application message when its sender emits it. Return
	// true to let the runtime transmit it now; false if the protocol took it and
	// will Transmit (or drop) it later.
	OnSend(m *Message) bool
	// OnArrive sees every application message when it has fully arrived at its
	// destination node. Return true to queue it for its object; false if the
	// protocol took it (to Deliver later, or to drop a duplicate).
	OnArrive(m *Message) bool
	// OnDispatch runs just before object m.Dst handles m.
	OnDispatch(m *Message)
	// OnHandled runs after object obj finished a handler (Start or Handle).
	OnHandled(obj ObjID)
	// OnControl receives a protocol control message at node m.To.
	OnControl(m *Message)
	// OnTimer fires a timer set with SetTimer on a node that is still alive.
	OnTimer(node NodeID, tag int32, arg int64)
	// OnFailure reports a detected node failure.
	OnFailure(f Failure)
}

// MemoryAuditor is implemented by a protocol that accounts memory
// (Runtime.MemAdd): AuditMemory compares what each live node accounts with
// what the protocol keeps there, and describes the first difference. Tests
// call it after runs; the peak-memory figures are only as right as it.
type MemoryAuditor interface {
	AuditMemory() error
}

// WorkloadWrapper is implemented by a protocol that runs the application
// under a workload of its own built on the scenario's (replication runs every
// object twice). New calls WrapWorkload once, before anything else.
type WorkloadWrapper interface {
	WrapWorkload(Workload) Workload
}

// Failure describes a detected node failure.
//
// Objects are the objects the failure lost that are still lost when it is
// detected: those live on the node when it failed, and those restored or
// re-created on it between the failure and its detection. An object lost
// earlier, in another failure, that ReplaceSlot moved onto the node and that
// was not restored before the node failed is not among them: it was lost
// already, and the protocol restoring it there learns of this failure from
// its transfers to the node, which fail, or from Node.
type Failure struct {
	Node       NodeID
	At         Time    // when the node failed
	DetectedAt Time    // when the failure was detected
	Objects    []ObjID // the application objects the failure lost (above)
	WasSpare   bool    // the node was a spare (booting or idle), hosting nothing
}

// BaseProtocol implements every hook as "do nothing special"; protocols embed
// it and override what they need.
type BaseProtocol struct{ RT *Runtime }

// Init stores the runtime.
func (b *BaseProtocol) Init(rt *Runtime) { b.RT = rt }

// Start does nothing.
func (b *BaseProtocol) Start() {}

// OnSend lets the runtime transmit the message.
func (b *BaseProtocol) OnSend(*Message) bool { return true }

// OnArrive queues the message for its object.
func (b *BaseProtocol) OnArrive(*Message) bool { return true }

// OnDispatch does nothing.
func (b *BaseProtocol) OnDispatch(*Message) {}

// OnHandled does nothing.
func (b *BaseProtocol) OnHandled(ObjID) {}

// OnControl ignores the message.
func (b *BaseProtocol) OnControl(*Message) {}

// OnTimer does nothing.
func (b *BaseProtocol) OnTimer(NodeID, int32, int64) {}

// OnFailure does nothing.
func (b *BaseProtocol) OnFailure(Failure) {}
