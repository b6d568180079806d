package sim

import "encoding"

// ObjID names an application object (a tile, a block, a worker). Objects are
// numbered 0..n-1 by the workload.
type ObjID int32

// NodeID names a physical node. Primary nodes are 0..Nodes-1, spares follow.
type NodeID int32

// None is the NodeID or ObjID of nothing.
const None = -1

// Object is one message-driven piece of an application (a DPS thread, a Charm++
// chare, a LuNA fragment). Handlers must be deterministic: the same state and the
// same message give the same new state and the same sends (piecewise
// determinism), because protocols re-execute them after failures.
type Object interface {
	// Start runs once when the object is created from its initial state (at time 0
	// and after every restart from scratch), not after a restore from a checkpoint.
	Start(ctx *Ctx)
	// Handle processes one message. It must not keep m after returning; the
	// payload is immutable and may be kept.
	Handle(ctx *Ctx, m *Message)
	// Progress is the work this object has completed, in the workload's units.
	// The run ends when the sum over objects reaches Workload.TotalProgress.
	Progress() int64
	// ModeledSize is the size of the object's state in the modeled problem: what a
	// checkpoint or a migration moves and what memory it holds.
	ModeledSize() int64
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// Workload creates the objects of an application and checks its final state
// against a sequential reference computed without the simulator.
type Workload interface {
	// NumObjects is the number of objects; it does not change during a run.
	NumObjects() int
	// NewObject returns object id in its initial state.
	NewObject(id ObjID) Object
	// TotalProgress is the sum of all objects' Progress at completion.
	TotalProgress() int64
	// Check compares the final objects with the sequential reference.
	Check(objs []Object) Outcome
}

// Placer is implemented by a workload that places its objects itself (the
// replication protocol's puts the two replicas of an object on different
// nodes). PlaceObjects fills place, one node per object, from the slots, given
// the configured policy; PolicySlot is that policy.
type Placer interface {
	PlaceObjects(policy Placement, slots []NodeID, place []NodeID)
}

// ProgressLinker is implemented by a workload whose objects' Progress may
// depend on another object's (a replica reports its pair's, the further of
// the two). When object id is lost, the runtime reads again the progress of
// ProgressLink(id), which may have counted id's: a report the loss made
// stale would otherwise stand until that object's next handler ends (or a
// protocol's RefreshProgress), and could end the run on the progress of an
// object that no longer exists.
type ProgressLinker interface {
	// ProgressLink returns the object whose progress may count id's,
	// None if there is none.
	ProgressLink(id ObjID) ObjID
}

// AnswerHolder is implemented by a workload whose answer lives in some of its
// objects only (the task farm's master). A run can complete while an object
// whose progress counts for nothing (a farm worker) is lost: its node failed
// after the object's last step and the failure is not yet recovered. Check
// then gets nil in its place, when it is not one of AnswerObjects; for other
// workloads, and for a lost answer object, the run's outcome is "object lost
// at completion".
type AnswerHolder interface {
	// AnswerObjects returns the objects Check reads.
	AnswerObjects() []ObjID
}

// Outcome is a workload's verdict on a finished run.
type Outcome struct {
	Digest string // digest of the final distributed state
	Answer string // the workload's answer (final population, optimal length, ...)
	OK     bool   // digest and answer equal the sequential reference
	Detail string // what differed, when not OK
}

// Header is the protocol part of a message: sequence numbers, tickets, epochs
// and piggybacked data. The runtime never interprets it except for Bytes.
type Header struct {
	Seq   uint64 // DPS sequence number / generic per-sender counter
	Op    uint64 // DPS operation identifier
	SN    uint64 // message-logging send sequence number
	TN    uint64 // message-logging ticket number
	Inc   uint32 // incarnation of the sender object when sent
	Flags uint32 // protocol-defined
	Aux   []byte // piggybacked protocol data (critical data, tuples)
	Bytes int64  // modeled size of the header on the wire, counted as protocol bytes
}

// Message is an application or protocol message. Payload holds real bytes; Size
// is what the network charges (the modeled problem), which may differ.
type Message struct {
	Src, Dst ObjID  // application endpoints; None for protocol control messages
	From, To NodeID // physical endpoints, fixed when the message is transmitted
	Tag      int32  // workload- or protocol-defined type
	toInc    uint32 // the receiver's incarnation at transmission (here, it fills the padding after Tag)
	Size     int64  // modeled payload size in bytes
	Payload  []byte // real content, immutable once sent
	Hdr      Header
	Epoch    uint32 // application epoch when sent; older epochs are dropped on arrival
	Control  bool   // protocol-to-protocol message, delivered to Protocol.OnControl
	SentAt   Time   // when the sender handed it to the network

	fromInc uint32 // the sender's incarnation at transmission
	// ref is its slot in Runtime.msgs while the network holds it: a cut
	// (cut.go) empties the slot of a message that has not left yet
	ref    int32
	outEnd Time // when the last byte left the sender
}

// WireSize is the number of bytes the network carries for m.
func (m *Message) WireSize() int64 { return m.Size + m.Hdr.Bytes }

// Clone returns a copy of m that shares the immutable payload. Protocols use it to
// log or duplicate a message.
func (m *Message) Clone() *Message {
	c := *m
	return &c
}
