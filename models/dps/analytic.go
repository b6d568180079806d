// Package dps implements fault-tolerant Dynamic Parallel Schedules (backup threads,
// duplicated data objects, sequence numbers) and its closed-form overhead model.
package dps

// This file holds the overhead model of Gerlach & Hersch, "Fault-tolerant Parallel
// Applications with Dynamic Parallel Schedules", §7 (Performance evaluation). The paper
// states the model in words, not as equations; the form below is our transcription:
//
//   - Only the extra network traffic caused by fault tolerance is modelled: the duplicate
//     data objects sent to backup threads and the thread-state checkpoints sent to them.
//     The factors are the communication/computation ratio, the network bandwidth, the
//     relative CPU load of network transfers, and the size of the extra transfers.
//   - Compute-bound application: the CPU time needed to process the duplicate transfers
//     is added to the fault-free execution time (the transfers themselves overlap the
//     computation, Fig. 9).
//   - Communication-bound application: the full network transfer time of the duplicates
//     is added.
//   - Duplicates sent at the very end of the flow graph (e.g. results to the final merge)
//     are ignored: the program ends before they are sent. Callers leave them out of the
//     duplicated byte count.
//   - Checkpoints are predicted "using the same model as the message duplication
//     overheads", since they are transferred to the backup threads during execution; the
//     only additional cost is locking each thread to take a consistent image of it.
//
// Hence, per iteration of one node (all times in seconds, sizes in bytes):
//
//	compute-bound:        ΔT = B_dup · c_b               (c_b: CPU seconds per byte)
//	communication-bound:  ΔT = B_dup / BW                 (BW: bytes per second)
//	relative overhead     O  = ΔT / T_iter
//
// with T_iter the fault-free iteration time: T_comp when compute-bound (communication
// hidden behind computation) and ρ·T_comp when communication-bound (ρ the ratio of pure
// communication time to pure computation time, the paper's footnote 1). A checkpoint of
// S bytes costs ΔT(S) + L (L the lock/serialisation time of the thread), paid once every
// k iterations, i.e. (ΔT(S) + L)/(k·T_iter) per iteration.
//
// Proportionality to the ratio (Fig. 10): when the duplicated bytes are a fixed fraction
// f of the application's own traffic, B_dup = f·ρ·T_comp·BW, the compute-bound overhead is
// O = f·ρ·(c_b·BW) = f·ρ·load, proportional to ρ (load = c_b·BW is the CPU fraction used
// by transfers at full bandwidth; 50 % at 9 MB/s in the paper's Sun Ultra 10 testbed).
// In the communication-bound limit O = f: duplicating every object doubles the traffic.
//
// The CPU cost per byte assumes symmetric traffic, as in the paper's rotated backup
// mapping: each node sends B_dup bytes to its backups while receiving B_dup bytes as the
// backup of another node, and the measured load (50 % for full-duplex transfers at
// 9 MB/s in each direction) covers both directions, so c_b = load/BW per duplicated byte
// sent.
//
// ftsim adds a cost per message the paper does not have (network.message_cpu, LogP's
// overhead o): N_dup duplicates cost N_dup·c_m more CPU time, c_m = 2o for the
// sending and the storing end, and a checkpoint one c_m. With o = 0 (the default)
// the model is the paper's.
//
// Checkpoint overhead is nearly independent of the node count (Fig. 12) because both
// the per-node state S and the per-node iteration time scale as 1/N.

import "math"

// Regime says which resource bounds an iteration of the application.
type Regime int

const (
	// ComputeBound: communication is hidden behind computation; fault tolerance adds the
	// CPU time of its extra transfers (Gerlach & Hersch §7).
	ComputeBound Regime = iota
	// CommunicationBound: the network is the bottleneck; fault tolerance adds the full
	// transfer time of its extra data (Gerlach & Hersch §7).
	CommunicationBound
	// Overlapped is our generalisation covering both cases: an iteration lasts the longer
	// of its CPU path (T_comp + CPU time of the extra transfers) and its network path
	// (ρ·T_comp + transfer time of the extra data). It reduces to ComputeBound or
	// CommunicationBound when one path dominates before and after fault tolerance, and
	// handles the crossover between them.
	Overlapped
)

// Paper testbed (Gerlach & Hersch §7: Sun Ultra 10 workstations on Fast Ethernet).
const (
	// PaperBandwidth is the measured full-duplex transfer rate, 9 MB/s in each
	// direction, taken as 9·10⁶ bytes per second.
	PaperBandwidth = 9e6
	// PaperCPULoad is the fraction of the CPU consumed by full-duplex transfers at
	// PaperBandwidth (50 %).
	PaperCPULoad = 0.5
	// PaperCheckpointBytes is the checkpoint size of the 4000×4000 Game of Life of
	// Fig. 12 (32 MB, taken as 32·2²⁰ bytes), for the whole world.
	PaperCheckpointBytes = 32 << 20
)

// CPUPerByteFromLoad converts the CPU load fraction consumed by network transfers at
// full bandwidth (e.g. PaperCPULoad at PaperBandwidth) into CPU seconds per transferred
// byte, load/bandwidth (symmetric traffic, see the file comment). Non-positive bandwidth
// gives NaN.
func CPUPerByteFromLoad(load, bandwidth float64) float64 {
	if !(bandwidth > 0) {
		return math.NaN()
	}
	return load / bandwidth
}

// CommCompRatio is the communication/computation ratio of footnote 1 of Gerlach &
// Hersch, pure communication time over pure computation time, for one iteration that
// transfers bytesPerIteration at bandwidth and computes computePerIteration seconds.
func CommCompRatio(bytesPerIteration, bandwidth, computePerIteration float64) float64 {
	return bytesPerIteration / bandwidth / computePerIteration
}

// DuplicateBytesForRatio is the number of duplicated bytes per iteration when a fraction
// duplicatedFraction of the application's own traffic is duplicated to backup threads and
// that traffic has communication/computation ratio ratio: f·ρ·T_comp·BW. In the paper's
// Game of Life every border object is also sent to the receiver's backup, f = 1.
func DuplicateBytesForRatio(ratio, computePerIteration, bandwidth, duplicatedFraction float64) float64 {
	return duplicatedFraction * ratio * computePerIteration * bandwidth
}

// OverheadModel holds the inputs of the Gerlach & Hersch §7 overhead model for one node
// and one iteration. See the file comment for the equations and assumptions.
type OverheadModel struct {
	// CommCompRatio is ρ, pure communication time over pure computation time (footnote
	// 1); it sets the fault-free iteration time when communication-bound.
	CommCompRatio float64
	// ComputePerIteration is T_comp, the pure computation time of one iteration, seconds.
	ComputePerIteration float64
	// Bandwidth is BW, the network bandwidth per direction, bytes per second.
	Bandwidth float64
	// CPUPerByte is c_b, the CPU seconds consumed per byte of fault-tolerance traffic
	// (CPUPerByteFromLoad converts a load fraction at full bandwidth).
	CPUPerByte float64
	// DuplicateBytesPerIteration is B_dup, the bytes of duplicate data objects one node
	// sends to backup threads per iteration (excluding duplicates at the end of the
	// flow graph, which are never sent).
	DuplicateBytesPerIteration float64
	// CPUPerMessage is c_m, the CPU seconds a fault-tolerance message costs whatever
	// its size (not in the paper: LogP's overhead, network.message_cpu, twice since
	// it is paid at both ends); 0 leaves the paper's model.
	CPUPerMessage float64
	// DuplicatesPerIteration is N_dup, the number of duplicate data objects one node
	// sends per iteration, each costing c_m.
	DuplicatesPerIteration float64
	// Regime says whether the application is compute- or communication-bound.
	Regime Regime
}

func (m OverheadModel) valid() bool {
	for _, x := range []float64{m.CommCompRatio, m.ComputePerIteration, m.Bandwidth, m.CPUPerByte, m.DuplicateBytesPerIteration,
		m.CPUPerMessage, m.DuplicatesPerIteration} {
		if math.IsNaN(x) || x < 0 {
			return false
		}
	}
	return m.Bandwidth > 0 && m.ComputePerIteration > 0 && m.Regime >= ComputeBound && m.Regime <= Overlapped
}

// IterationTime is the fault-free iteration time T_iter of the model: T_comp when
// compute-bound, ρ·T_comp when communication-bound, max(T_comp, ρ·T_comp) when
// Overlapped. Invalid inputs (negative, NaN, zero bandwidth or compute, unknown regime)
// give NaN.
func (m OverheadModel) IterationTime() float64 {
	if !m.valid() {
		return math.NaN()
	}
	cpu, net := m.ComputePerIteration, m.CommCompRatio*m.ComputePerIteration
	switch m.Regime {
	case ComputeBound:
		return cpu
	case CommunicationBound:
		return net
	default:
		return math.Max(cpu, net)
	}
}

// addedTime is the extra iteration time caused by extra fault-tolerance traffic of
// msgs messages of `bytes` bytes in all: its CPU time when compute-bound, its
// transfer time when communication-bound, the growth of the longer path when
// Overlapped.
func (m OverheadModel) addedTime(bytes, msgs float64) float64 {
	cpuCost, netCost := bytes*m.CPUPerByte+msgs*m.CPUPerMessage, bytes/m.Bandwidth
	switch m.Regime {
	case ComputeBound:
		return cpuCost
	case CommunicationBound:
		return netCost
	default:
		cpu, net := m.ComputePerIteration, m.CommCompRatio*m.ComputePerIteration
		return math.Max(cpu+cpuCost, net+netCost) - math.Max(cpu, net)
	}
}

// DuplicationTime is the time fault tolerance adds to one iteration by sending the
// duplicate data objects to the backup threads (Gerlach & Hersch §7): B_dup·c_b
// (+ N_dup·c_m) when compute-bound, B_dup/BW when communication-bound.
func (m OverheadModel) DuplicationTime() float64 {
	if !m.valid() {
		return math.NaN()
	}
	return m.addedTime(m.DuplicateBytesPerIteration, m.DuplicatesPerIteration)
}

// DuplicationOverhead is the predicted relative overhead of duplicating data objects,
// DuplicationTime/IterationTime (Gerlach & Hersch §7, Fig. 10): T(ft)/T(no ft) − 1.
func (m OverheadModel) DuplicationOverhead() float64 {
	return m.DuplicationTime() / m.IterationTime()
}

// CheckpointTime is the time one checkpoint of stateBytes adds (Gerlach & Hersch §7,
// Fig. 12): the transfer of the thread state to its backup (one message), costed like the duplicate
// objects (CPU time when compute-bound, full transfer time when communication-bound),
// plus lockTime, the time the thread is locked to take a consistent image (waiting for
// the running operation to end or suspend, and serialising the state). stateBytes is the
// state of the node's threads plus their suspended operations and processed-object lists.
func (m OverheadModel) CheckpointTime(stateBytes, lockTime float64) float64 {
	if !m.valid() || math.IsNaN(stateBytes) || stateBytes < 0 || math.IsNaN(lockTime) || lockTime < 0 {
		return math.NaN()
	}
	return m.addedTime(stateBytes, 1) + lockTime
}

// CheckpointOverhead is the predicted relative checkpoint overhead per iteration with
// one checkpoint every itersPerCheckpoint iterations, CheckpointTime/(k·IterationTime)
// (Gerlach & Hersch §7, Fig. 12: it shrinks as 1/k). itersPerCheckpoint < 1 gives NaN.
func (m OverheadModel) CheckpointOverhead(stateBytes, lockTime, itersPerCheckpoint float64) float64 {
	if !(itersPerCheckpoint >= 1) {
		return math.NaN()
	}
	return m.CheckpointTime(stateBytes, lockTime) / (itersPerCheckpoint * m.IterationTime())
}
