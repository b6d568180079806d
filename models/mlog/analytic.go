// Package mlog implements sender-based message logging with fast restart and its
// closed-form models.
package mlog

// This file holds the runtime model of Chakravorty & Kalé's fast-restart message-logging
// paper (section "rough analysis of the fast restart protocol"), which compares an
// application under coordinated checkpoint/restart with the same application under
// message logging with fast restart. Symbols of the paper and the parameter names used
// here:
//
//	t0   cleanRuntime     runtime without any fault-tolerance support
//	d    ckptDuration     duration of one checkpoint
//	c    ckptInterval     time between checkpoints (not counting the checkpoint itself)
//	m    mtbf             mean time between failures of the system
//	k_c  restartCkpt      constant overhead of one restart under checkpoint/restart
//	α    alpha            ratio runtime-with-message-logging / runtime-without (α ≥ 1)
//	v    objectsPerProc   number of migratable objects per processor
//	k_ml restartFast      constant overhead of one fast restart
//
// Both models are worst case: every failure loses a whole checkpoint interval c (for
// checkpoint/restart: all processors roll back and redo c) or c/v (fast restart: the
// failed processor's v objects are re-executed in parallel on v other processors,
// dividing the re-execution time by v), and the number of failures is the mean
// n = t'/m over the whole (failure-stretched) run. Times in seconds (any consistent unit).

import "math"

// CheckpointFaultFree is the fault-free runtime with checkpoints, t_c = t0(1 + d/c)
// (Chakravorty & Kalé): one checkpoint of duration d every c units of work.
func CheckpointFaultFree(cleanRuntime, ckptDuration, ckptInterval float64) float64 {
	return cleanRuntime * (1 + ckptDuration/ckptInterval)
}

// MessageLoggingFaultFree is the fault-free runtime under message logging,
// t_ml = α t0 (1 + d/c) (Chakravorty & Kalé): α scales the checkpointed runtime.
func MessageLoggingFaultFree(alpha, cleanRuntime, ckptDuration, ckptInterval float64) float64 {
	return alpha * CheckpointFaultFree(cleanRuntime, ckptDuration, ckptInterval)
}

// CheckpointRuntime is the worst-case runtime with failures under checkpoint/restart,
//
//	t'_c = t0 (1 + d/c) / (1 − (c + k_c)/m),
//
// from Chakravorty & Kalé: t'_c = t_c + n(c + k_c) with n = t'_c/m failures, each losing
// a whole interval c plus the restart overhead k_c. It returns +Inf when m ≤ c + k_c (the
// model diverges: failures come faster than one interval plus a restart).
func CheckpointRuntime(cleanRuntime, ckptDuration, ckptInterval, mtbf, restartCkpt float64) float64 {
	den := 1 - (ckptInterval+restartCkpt)/mtbf
	if den <= 0 {
		return math.Inf(1)
	}
	return CheckpointFaultFree(cleanRuntime, ckptDuration, ckptInterval) / den
}

// MessageLoggingRuntime is the worst-case runtime with failures under message logging
// with fast restart,
//
//	t'_ml = α t0 (1 + d/c) / (1 − (c/v + k_ml)/m),
//
// from Chakravorty & Kalé: each failure costs the re-execution of one interval divided
// among the v objects of the failed processor (c/v) plus the fast-restart overhead k_ml,
// with n = t'_ml/m failures. It returns +Inf when m ≤ c/v + k_ml.
func MessageLoggingRuntime(alpha, cleanRuntime, ckptDuration, ckptInterval, objectsPerProc, mtbf, restartFast float64) float64 {
	den := 1 - (ckptInterval/objectsPerProc+restartFast)/mtbf
	if den <= 0 {
		return math.Inf(1)
	}
	return MessageLoggingFaultFree(alpha, cleanRuntime, ckptDuration, ckptInterval) / den
}

// AlphaThreshold is the message-logging slowdown α below which message logging with
// fast restart finishes sooner than checkpoint/restart, i.e. the solution of
// t'_ml < t'_c (Chakravorty & Kalé):
//
//	α < (m − (c/v + k_ml)) / (m − (c + k_c)).
//
// t0 and d cancel. At α equal to the threshold both runtimes are equal. When only the
// checkpoint model diverges (c/v + k_ml < m ≤ c + k_c) every α wins and +Inf is
// returned; when the message-logging model diverges (m ≤ c/v + k_ml) no α wins and 0 is
// returned.
func AlphaThreshold(ckptInterval, objectsPerProc, mtbf, restartCkpt, restartFast float64) float64 {
	num := mtbf - (ckptInterval/objectsPerProc + restartFast)
	den := mtbf - (ckptInterval + restartCkpt)
	switch {
	case num <= 0:
		return 0
	case den <= 0:
		return math.Inf(1)
	}
	return num / den
}

// CheckpointMinMTBF is the MTBF c + k_c at which the checkpoint/restart model
// t'_c diverges (Chakravorty & Kalé).
func CheckpointMinMTBF(ckptInterval, restartCkpt float64) float64 {
	return ckptInterval + restartCkpt
}

// MessageLoggingMinMTBF is the MTBF c/v + k_ml at which the fast-restart model t'_ml
// diverges (Chakravorty & Kalé): smaller than c + k_c as long as k_ml is not much larger
// than k_c, so fast restart tolerates higher failure rates.
func MessageLoggingMinMTBF(ckptInterval, objectsPerProc, restartFast float64) float64 {
	return ckptInterval/objectsPerProc + restartFast
}
