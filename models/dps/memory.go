package dps

import (
	"fmt"

	"ftsim/sim"
)

// Memory overhead (issue: "backup queues, states, split copies are
// measured"). Every byte the protocol keeps is accounted with the runtime as
// sim.MemBackup on the node that holds it (released with the node when it
// fails); the protocol also keeps the breakdown by kind, whose peaks it
// reports as metrics when the run ends.

// memKind is what a byte of protocol memory holds.
type memKind int

const (
	memQueue memKind = iota // duplicates stored by backup threads (and their handling-order log)
	memState                // thread states held by backup threads (checkpoints, regenerated copies)
	memCopy                 // task copies the split keeps until the merge confirms them
	numMemKinds
)

// Names of the metrics the protocol reports (peak bytes held cluster-wide).
const (
	MetricBackupPeak = "backup_peak_bytes"       // all protocol memory together
	MetricQueuePeak  = "backup_queue_peak_bytes" // stored duplicates and order log
	MetricStatePeak  = "backup_state_peak_bytes" // backup thread states
	MetricCopyPeak   = "split_copy_peak_bytes"   // split's task copies
	// MetricStateBytes is the size of one checkpoint of every stateful
	// thread at the end of the run (the sum of their modeled states): the
	// paper's "size of a checkpoint" (32 MB for the 4000×4000 Life of Fig. 12).
	MetricStateBytes = "thread_state_bytes"
)

// memAdd accounts delta bytes of kind k on node n.
func (p *Protocol) memAdd(n sim.NodeID, k memKind, delta int64) {
	rt := p.RT
	rt.MemAdd(n, sim.MemBackup, delta)
	if !rt.Alive(n) {
		return // released with the node, as the runtime does
	}
	if p.memNode == nil {
		p.memNode = make([][numMemKinds]int64, rt.NumNodes())
	}
	m := &p.memNode[n]
	m[k] += delta
	p.memTot[k] += delta
	p.memPeak[k] = max(p.memPeak[k], p.memTot[k])
}

// memFailed releases what node n held: it failed.
func (p *Protocol) memFailed(n sim.NodeID) {
	if p.memNode == nil {
		return
	}
	m := &p.memNode[n]
	for k := range m {
		p.memTot[k] -= m[k]
	}
	*m = [numMemKinds]int64{}
}

var _ sim.Finisher = (*Protocol)(nil)

// OnFinish reports the peak protocol memory: all of it (the runtime's peak of
// sim.MemBackup, which sees node failures at the instant they happen) and the
// peak of each kind; the size of a whole-application checkpoint; and, with
// network.cpu_load or message_cpu, the CPU time its transfers were charged. Before
// that it gives back the stateless threads retired by Shrink (unretire) and
// counts the ticks parked timers skipped.
func (p *Protocol) OnFinish() {
	p.unretire()
	for i := range p.th {
		if id := sim.ObjID(i); p.tickAlive(id) {
			p.stopTick(id, p.RT.Now()) // counts the ticks a parked timer passed over
		}
	}
	st := p.RT.Stats()
	st.SetMetric(MetricBackupPeak, float64(st.PeakMem[sim.MemBackup]))
	st.SetMetric(MetricQueuePeak, float64(p.memPeak[memQueue]))
	st.SetMetric(MetricStatePeak, float64(p.memPeak[memState]))
	st.SetMetric(MetricCopyPeak, float64(p.memPeak[memCopy]))
	var state int64
	for i := range p.th {
		if !p.th[i].stateless {
			state += p.RT.ModeledSize(sim.ObjID(i))
		}
	}
	st.SetMetric(MetricStateBytes, float64(state))
	if c := p.RT.Config(); c.CPULoad > 0 || c.MessageCPU > 0 {
		st.SetMetric(sim.MetricProtocolCPU, p.C.CPU.Seconds())
	}
}

// AuditMemory implements sim.MemoryAuditor. Each live backup counts the
// bytes of its stored duplicates (each the wire size of its message) and
// EntryBytes per handling-order entry; each live node accounts, in the
// protocol's breakdown and with the runtime, what its backups and the
// split's task copies there hold.
func (p *Protocol) AuditMemory() error {
	rt := p.RT
	held := make([][numMemKinds]int64, rt.NumNodes())
	for id := range p.th {
		for _, bk := range p.th[id].backups {
			if !p.valid(bk) {
				continue
			}
			held[bk.node][memQueue] += bk.bytes
			if bk.ready {
				held[bk.node][memState] += bk.ck.size
			}
			want := p.cfg.EntryBytes * int64(len(bk.log))
			for i := range bk.queue.Len() {
				q := bk.queue.At(i)
				if q.wire != q.m.WireSize() {
					return fmt.Errorf("dps: object %d, backup on node %d: a duplicate of %d bytes counted as %d", id, bk.node, q.m.WireSize(), q.wire)
				}
				want += q.wire
			}
			if bk.bytes != want {
				return fmt.Errorf("dps: object %d, backup on node %d: %d bytes counted, %d held", id, bk.node, bk.bytes, want)
			}
		}
	}
	for _, copies := range p.copies {
		for _, c := range copies {
			if rt.Holds(c.node, c.inc) {
				held[c.node][memCopy] += c.size
			}
		}
	}
	total := make([]int64, len(held))
	for n := range held {
		if !rt.Alive(sim.NodeID(n)) {
			continue
		}
		for k := range numMemKinds {
			var got int64
			if p.memNode != nil {
				got = p.memNode[n][k]
			}
			if got != held[n][k] {
				return fmt.Errorf("dps: node %d accounts %d bytes of kind %d, holds %d", n, got, k, held[n][k])
			}
			total[n] += got
		}
	}
	if err := rt.MemMismatch(sim.MemBackup, total, "backups"); err != nil {
		return fmt.Errorf("dps: %w", err)
	}
	return nil
}

var _ sim.MemoryAuditor = (*Protocol)(nil)
