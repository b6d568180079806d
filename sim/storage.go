package sim

import (
	"fmt"
	"math"
)

// Tier is a storage level a protocol can write a copy to.
type Tier int

// The storage tiers. A copy on Memory or Disk lives on its node and dies with it;
// PFS is shared by all nodes and survives failures. Remote (buddy) memory is a
// network Transfer to the partner node followed by a Memory write there.
const (
	Memory Tier = iota
	Disk
	PFS
)

// String names the tier as scenarios do.
func (t Tier) String() string {
	switch t {
	case Memory:
		return "memory"
	case Disk:
		return "disk"
	case PFS:
		return "pfs"
	}
	return "unknown"
}

// StorageWrite writes size bytes from node n to tier t and calls done(true) when
// the write is complete, done(false) if n failed first. Memory and disk writes
// queue behind earlier ones on the same node; parallel file system writes share
// its aggregate bandwidth with every concurrent transfer (each also capped at the
// per-node bandwidth) after its latency.
func (rt *Runtime) StorageWrite(n NodeID, t Tier, size int64, done func(ok bool)) {
	rt.storage(n, t, size, done)
}

// StorageRead reads size bytes into node n from tier t; timing as StorageWrite.
func (rt *Runtime) StorageRead(n NodeID, t Tier, size int64, done func(ok bool)) {
	rt.storage(n, t, size, done)
}

func (rt *Runtime) storage(n NodeID, t Tier, size int64, done func(bool)) {
	nd := &rt.nodes[n]
	c := rt.calls.put(call{node: n, inc: rt.links[n].inc, io: nd.io, done: done})
	switch t {
	case Memory, Disk:
		free, bw, key := &nd.memFree, rt.cfg.MemBandwidth, "storage.memory_bandwidth"
		if t == Disk {
			free, bw, key = &nd.diskFree, rt.cfg.DiskBandwidth, "storage.disk_bandwidth"
		}
		start := max(rt.eng.now, *free)
		*free = start.plus(rt.bounded(TransferTime(size, bw), key))
		rt.eng.Schedule(*free, rt.kDisk, int32(n), int64(c))
	case PFS:
		rt.eng.After(rt.cfg.PFSLatency, rt.kDisk, int32(n), int64(c)|pfsStart<<32)
		rt.calls.get(c).size = size
	}
}

const pfsStart = 1

func (rt *Runtime) onStorageDone(ev Event) {
	ref := int32(ev.J & math.MaxUint32)
	if ev.J>>32 == pfsStart {
		cl := rt.calls.get(ref)
		if !rt.storageValid(cl) {
			rt.calls.take(ref).done(false)
			return
		}
		rt.pfs.add(rt, ref, cl.node, cl.size)
		return
	}
	cl := rt.calls.take(ref)
	cl.done(rt.storageValid(&cl))
}

// storageValid reports whether storage operation cl still stands: its node
// has neither failed nor cancelled its storage operations since it began.
func (rt *Runtime) storageValid(cl *call) bool {
	return rt.links[cl.node].inc == cl.inc && rt.nodes[cl.node].io == cl.io
}

// CancelStorage aborts node n's storage operations in flight, as when the
// processes that issued them are killed: its parallel file system transfers
// stop sharing the bandwidth at once, its memory and disk queues empty, and
// every one of them reports done(false) (a transfer at once, the others when
// they would have ended). A coordinated rollback kills the whole
// application: without this, the reads of a recovery that a failure
// restarted would go on competing with the next attempt's.
func (rt *Runtime) CancelStorage(n NodeID) {
	nd := &rt.nodes[n]
	nd.io++
	nd.memFree = min(nd.memFree, rt.eng.now)
	nd.diskFree = min(nd.diskFree, rt.eng.now)
	rt.pfs.drop(rt, n)
}

// psShare is a processor-sharing bandwidth: k concurrent flows each get
// min(rate/k, perFlow). All flows progress at the same speed, so one "virtual"
// byte counter v serves them all: a flow finishes when v reaches its start value
// plus its size, and the flows are kept in a min-heap of those values.
// Flows added at the same instant (every node writing its checkpoint) cost one
// rescheduling, not one each.
type psShare struct {
	rate, perFlow float64
	v             float64 // bytes served to every active flow since the start
	last          Time
	flows         psHeap
	gen           int64
	kick          bool // a rescheduling is pending at the current instant
}

type psFlow struct {
	ref    int32 // calls slot
	node   NodeID
	finish float64 // value of v at which it completes
}

type psHeap []psFlow

func (h psHeap) less(i, j int) bool {
	if h[i].finish != h[j].finish {
		return h[i].finish < h[j].finish
	}
	return h[i].ref < h[j].ref
}

func (h *psHeap) push(f psFlow) {
	*h = append(*h, f)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a.less(i, p) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *psHeap) pop() psFlow {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && a.less(l, m) {
			m = l
		}
		if l+1 < n && a.less(l+1, m) {
			m = l + 1
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}

func (p *psShare) speed() float64 {
	s := p.rate / float64(len(p.flows))
	if p.perFlow > 0 && p.perFlow < s {
		s = p.perFlow
	}
	return s
}

func (p *psShare) advance(now Time) {
	if len(p.flows) > 0 {
		p.v += p.speed() * float64(now-p.last) / 1e9
	}
	p.last = now
}

func (p *psShare) add(rt *Runtime, ref int32, n NodeID, size int64) {
	p.advance(rt.eng.now)
	p.flows.push(psFlow{ref: ref, node: n, finish: p.v + float64(size)})
	p.touch(rt)
}

// touch asks for one rescheduling at the current instant.
func (p *psShare) touch(rt *Runtime) {
	p.gen++ // the completion event scheduled before is void
	if !p.kick {
		p.kick = true
		rt.eng.Schedule(rt.eng.now, rt.kPFS, 1, 0)
	}
}

// drop aborts the transfers of node n (failed, or cancelling them).
func (p *psShare) drop(rt *Runtime, n NodeID) {
	p.advance(rt.eng.now)
	var keep psHeap
	var dropped []int32
	for _, f := range p.flows {
		if f.node == n {
			dropped = append(dropped, f.ref)
			continue
		}
		keep.push(f)
	}
	if len(dropped) == 0 {
		return
	}
	p.flows = keep
	for _, ref := range dropped {
		rt.calls.take(ref).done(false)
	}
	p.touch(rt)
}

func (p *psShare) reschedule(rt *Runtime) {
	p.gen++
	if len(p.flows) == 0 {
		return
	}
	d := Time(math.Ceil((p.flows[0].finish - p.v) / p.speed() * 1e9))
	rt.eng.After(max(d, 0), rt.kPFS, 0, p.gen)
}

// pfsEpsilon absorbs the rounding of completion times to whole nanoseconds.
const pfsEpsilon = 1e-3

// onPFS is a rescheduling request (I = 1) or a completion (I = 0).
func (rt *Runtime) onPFS(ev Event) {
	p := &rt.pfs
	if ev.I == 1 {
		p.kick = false
		p.advance(rt.eng.now)
		p.reschedule(rt)
		return
	}
	if ev.J != p.gen {
		return
	}
	p.advance(rt.eng.now)
	var doneRefs []int32
	for len(p.flows) > 0 && p.flows[0].finish <= p.v+pfsEpsilon {
		doneRefs = append(doneRefs, p.flows.pop().ref)
	}
	p.reschedule(rt)
	for _, ref := range doneRefs {
		rt.calls.take(ref).done(true)
	}
}

// MemKind classifies memory a protocol holds, for the peak-memory report.
type MemKind int

// The memory kinds.
const (
	MemLog        MemKind = iota // message logs
	MemBackup                    // backup copies of objects and queued duplicates
	MemCheckpoint                // checkpoints held in memory
	numMemKinds
)

// Mem is the memory of kind k node n holds now, as accounted by MemAdd (0
// on a failed node).
func (rt *Runtime) Mem(n NodeID, k MemKind) int64 { return rt.nodes[n].mem[k] }

// MemMismatch compares the memory of kind k each live node accounts with
// held[n], what a protocol finds it keeps there (MemoryAuditor), and
// describes the first difference; what names that memory.
func (rt *Runtime) MemMismatch(k MemKind, held []int64, what string) error {
	for n, h := range held {
		if got := rt.Mem(NodeID(n), k); rt.Alive(NodeID(n)) && got != h {
			return fmt.Errorf("node %d accounts %d bytes of %s, holds %d", n, got, what, h)
		}
	}
	return nil
}

// MemAdd accounts delta bytes of kind k held on node n (negative to release).
// Memory on a node that fails is released with it.
func (rt *Runtime) MemAdd(n NodeID, k MemKind, delta int64) {
	if rt.links[n].state == nodeFailed {
		return
	}
	nd := &rt.nodes[n]
	nd.mem[k] += delta
	rt.stats.memTotal[k] += delta
	if rt.stats.memTotal[k] > rt.stats.PeakMem[k] {
		rt.stats.PeakMem[k] = rt.stats.memTotal[k]
	}
	if delta > 0 {
		var held int64
		for _, b := range nd.mem {
			held += b
		}
		if held > rt.stats.NodeMemPeak {
			// The application's state is sampled only when the peak rises
			// (rarely once the protocol's memory is in its steady cycle):
			// held + state is then what the node really held at that instant.
			rt.stats.NodeMemPeak, rt.stats.NodeMemPeakState, rt.stats.NodeMemPeakNode = held, rt.stateOn(n), n
		}
	}
}

// stateOn is the modeled size of the application objects on node n.
func (rt *Runtime) stateOn(n NodeID) int64 {
	var b int64
	for _, id := range rt.ObjectsOn(n) {
		if o := &rt.objs[id]; o.obj != nil && !rt.lost[id] {
			b += o.obj.ModeledSize()
		}
	}
	return b
}
