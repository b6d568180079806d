package sim

import "fmt"

// Stats are the counters of a run. Protocols add to the ones that concern them
// through Runtime.Stats.
type Stats struct {
	AppMsgs, AppBytes     int64 // sent by the application's objects
	ExtraMsgs, ExtraBytes int64 // sent by the protocol (control messages, duplicates, headers)
	HeartbeatMsgs         int64 // failure-detector heartbeats
	HeartbeatBytes        int64
	LostMsgs              int64 // lost to failures or dropped as stale (older epoch)
	ForwardedMsgs         int64 // re-sent because their object moved

	Checkpoints     int   // checkpoints committed
	CheckpointBytes int64 // bytes written by them
	CheckpointTime  Time  // time the application spent paused for them

	Failures        int // node failures that struck
	Detected        int // failures detected
	IgnoredFailures int // planned failures of nodes that were already dead or idle
	FalseSuspicions int // live nodes the heartbeat monitor suspected, and so fenced (counted in Failures)
	Restarts        int // restarts of the whole application from its initial state

	// Unrecoverable counts failure patterns the protocol could not survive as
	// designed; UnrecoverableNote says what it did instead.
	Unrecoverable     int
	UnrecoverableNote string

	PeakMem  [numMemKinds]int64 // peak bytes held cluster-wide, by MemKind
	memTotal [numMemKinds]int64

	// NodeMemPeak is the most memory of all kinds one node held at one
	// instant (MemAdd); NodeMemPeakNode is that node, NodeMemPeakState the
	// modeled size of the application objects it held at that instant.
	NodeMemPeak      int64
	NodeMemPeakState int64
	NodeMemPeakNode  NodeID

	// metrics are figures a protocol measures its own way (mlog's restart
	// time as the paper measures it, say). A fixed array keeps Stats
	// comparable with ==, which determinism tests rely on.
	metrics  [MaxMetrics]Metric
	nMetrics int
}

// MaxMetrics is the number of distinct metrics one run can record.
const MaxMetrics = 8

// MetricProtocolCPU is the metric of the core time a protocol's own work was
// charged (ChargeCPU), in seconds, including charges a node's failure voided.
// Protocols that report it use this name; what each charges for is its own
// (mlog: its steps' costs; dps: network.cpu_load and message_cpu on its transfers).
const MetricProtocolCPU = "protocol_cpu_s"

// Metric is a named figure a protocol measured.
type Metric struct {
	Name  string
	Value float64
}

// SetMetric records a protocol-specific figure under name, replacing an
// earlier value. Names are snake_case with a unit suffix (restart_s). A
// protocol that sets more than MaxMetrics names has a bug: SetMetric
// panics.
func (s *Stats) SetMetric(name string, v float64) {
	for i := range s.nMetrics {
		if s.metrics[i].Name == name {
			s.metrics[i].Value = v
			return
		}
	}
	if s.nMetrics == MaxMetrics {
		panic("sim: more than MaxMetrics metrics set by a protocol")
	}
	s.metrics[s.nMetrics] = Metric{name, v}
	s.nMetrics++
}

// Metrics returns the metrics set, in the order first set.
func (s *Stats) Metrics() []Metric { return s.metrics[:s.nMetrics:s.nMetrics] }

// Metric returns the value of metric name, and whether it was set.
func (s *Stats) Metric(name string) (float64, bool) {
	for _, m := range s.Metrics() {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// Finisher is implemented by protocols that compute figures once the run is
// over (SetMetric from a probe's records): OnFinish runs after the last
// event, before the run's Result is taken.
type Finisher interface {
	OnFinish()
}

// Result is the record of one run.
type Result struct {
	Finished   bool // the workload completed (false: time limit or deadlock)
	AtLimit    bool // unfinished because it reached Config.Limit with events still to run
	Makespan   Time // completion time (or the time the run stopped)
	Outcome    Outcome
	Stats      Stats
	Recoveries []Recovery
	Events     uint64
}

// Detection is the mean time, in seconds (0 if none), from a failure of a
// node of the job to its detection, and the number of failures detected.
func (r *Result) Detection() (mean float64, n int) {
	return r.spans(func(x *Recovery) (Time, Time) { return x.FailedAt, x.DetectedAt })
}

// Restore is the mean time, in seconds (0 if none), from a failure's
// detection until the last object it lost was restored or re-created, and
// the number of failures whose lost objects all came back: the restart part
// of a recovery, detection and reprocessing excluded. The objects are
// awaited from the detection on (onDetect), so RestoredAt comes after
// DetectedAt.
func (r *Result) Restore() (mean float64, n int) {
	return r.spans(func(x *Recovery) (Time, Time) { return x.DetectedAt, x.RestoredAt })
}

// Recovery is the mean time, in seconds (0 if none), from a failure to the
// progress regained, and the number of failures whose progress came back.
// RecoveredAt comes only after the detection (closeRecoveries, finish).
func (r *Result) Recovery() (mean float64, n int) {
	return r.spans(func(x *Recovery) (Time, Time) { return x.FailedAt, x.RecoveredAt })
}

// spans returns the mean, in seconds (0 if none), and the number of the
// spans from, to that span gives for the failures of the job's nodes where
// both ends came (spare nodes' failures left out).
func (r *Result) spans(span func(*Recovery) (from, to Time)) (mean float64, n int) {
	var sum float64
	for i := range r.Recoveries {
		x := &r.Recoveries[i]
		from, to := span(x)
		if x.wasSpare || from == Never || to == Never {
			continue
		}
		sum += (to - from).Seconds()
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

// endTime is when the run ended: its completion, or the time it stopped.
func (rt *Runtime) endTime() Time {
	if rt.finished && !rt.aborted {
		return rt.finishedAt
	}
	return rt.eng.now
}

func (rt *Runtime) result() Result {
	end := rt.endTime()
	rt.settleParked()
	if rt.aborted {
		rt.finished = false
	}
	for i := range rt.nodes {
		rt.countHeartbeats(NodeID(i), end)
	}
	if f, ok := rt.proto.(Finisher); ok {
		f.OnFinish()
	}
	r := Result{Finished: rt.finished, AtLimit: rt.atLimit, Makespan: end, Stats: rt.stats,
		Recoveries: rt.failRecs, Events: rt.eng.executed}
	if !rt.finished {
		r.Outcome = Outcome{OK: false, Detail: "the workload did not finish"}
		switch {
		case rt.aborted:
			r.Outcome.Detail += ": " + rt.stats.UnrecoverableNote
		case rt.atLimit:
			if l := rt.cfg.Limit; l > 0 && l <= MaxDuration {
				r.Outcome.Detail += fmt.Sprintf(": stopped at the duration limit (%v) with events still to run", l)
			} else {
				r.Outcome.Detail += fmt.Sprintf(": stopped after %d years of simulated time, the most a run simulates, with events still to run", MaxYears)
			}
		}
		return r
	}
	objs := make([]Object, len(rt.objs))
	for i := range rt.objs {
		if !rt.lost[i] {
			objs[i] = rt.objs[i].obj
		}
	}
	if id := rt.lostAnswer(objs); id != None {
		r.Outcome = Outcome{OK: false, Detail: fmt.Sprintf("object %d lost at completion", id)}
		return r
	}
	r.Outcome = rt.wl.Check(objs)
	return r
}

// lostAnswer returns an object Check needs that is lost (nil in objs), or None.
func (rt *Runtime) lostAnswer(objs []Object) ObjID {
	if h, ok := rt.wl.(AnswerHolder); ok {
		for _, id := range h.AnswerObjects() {
			if objs[id] == nil {
				return id
			}
		}
		return None
	}
	for i, o := range objs {
		if o == nil {
			return ObjID(i)
		}
	}
	return None
}
