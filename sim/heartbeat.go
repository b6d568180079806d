package sim

import (
	"math"
	"math/rand/v2"
)

// The heartbeat failure detector. A powered-on node sends heartbeat k at
// a + k·period (a: when it was powered on); it reaches the monitor latency
// plus J_k later, J_k the network's exponential jitter (mean μ), drawn
// independently for each heartbeat. The monitor declares the node failed a
// timeout after the last heartbeat it heard. So a live node whose heartbeat
// k+1 is late by more than timeout − period beyond heartbeat k's delay
// (J_{k+1} − J_k > d = timeout − period, a chance of ½·e^{−d/μ}: the
// difference of two exponentials is a Laplace variable) is suspected at
// heartbeat k's arrival plus the timeout. The suspicion is final, as in
// fail-stop runtimes (ULFM's, or a resource manager's): the suspected node is
// fenced, that is killed, and its loss is known at once.
//
// Simulating every heartbeat would cost a draw per node and period (10⁹ in a
// day of 10,000 nodes); startHeartbeats draws only the ones that could matter.
// A suspicion at k needs J_{k+1} > d, whose chance p = e^{−d/μ} is the same
// for every heartbeat, so the gap to the next heartbeat delayed beyond d (a
// candidate) is geometric, its delay d plus an exponential (memorylessness),
// and the delay of the heartbeat before it, unless that was a candidate too,
// an exponential conditioned on being at most d. That is exact for the
// model above, and the draws per node are a few per suspicion.
//
// The model times each heartbeat's delay independently. ftsim's messages
// keep their order (a head does not pass an earlier one), and heartbeats
// that did would be held behind a late one; Config.validate therefore asks
// for a period of at least HBJitterMargin jitters, which makes a delay
// beyond the next heartbeat's sending a chance of e^{−20}.

// heartbeatLife is the monitor's record of one node's current life: the
// heartbeats whose delay is decided, and the suspicion they lead to.
type heartbeatLife struct {
	rng *rand.Rand // the node's stream, kept across its lives
	// heartbeats 0..last have a decided delay: those in drawn (in order)
	// the values there, the others at most d (not drawn yet)
	last  int64
	drawn []drawnDelay
	// suspectAt is when the monitor suspects the node, if it is still
	// alive then (Never: not in this run); the late heartbeat is last
	suspectAt Time
}

// drawnDelay is heartbeat k's delay J_k, in nanoseconds.
type drawnDelay struct {
	k int64
	j float64
}

// heartbeatOf returns node n's heartbeat record, made on first use with its
// stream, which is named by the node alone: the suspicions a node sees do
// not depend on the protocol or on other nodes.
func (rt *Runtime) heartbeatOf(n NodeID) *heartbeatLife {
	if rt.heartbeats == nil {
		rt.heartbeats = make([]heartbeatLife, len(rt.nodes))
	}
	h := &rt.heartbeats[n]
	if h.rng == nil {
		h.rng = rt.eng.Stream("heartbeat", uint64(n))
		h.last, h.suspectAt = -1, Never
	}
	return h
}

// jittered reports whether heartbeats are delayed by jitter (and so
// drawn): with heartbeat detection and Config.Jitter.
func (rt *Runtime) jittered() bool { return !rt.cfg.OracleDetection && rt.cfg.Jitter > 0 }

// suspects reports whether the monitor may suspect live nodes: heartbeats
// are jittered in a run with failures (a fault-free run is one without
// false suspicions too).
func (rt *Runtime) suspects() bool { return rt.jittered() && rt.cfg.Failures != NoFailures }

// startHeartbeats begins a new life of node n, powered on now: it draws
// the heartbeats up to the first that makes the monitor suspect n, and
// schedules the suspicion.
func (rt *Runtime) startHeartbeats(n NodeID) {
	if !rt.suspects() {
		return
	}
	h := rt.heartbeatOf(n)
	h.last, h.drawn, h.suspectAt = -1, h.drawn[:0], Never
	mu := float64(rt.cfg.Jitter)
	d := float64(rt.cfg.HBTimeout - rt.cfg.HBPeriod)
	logMiss := math.Log1p(-math.Exp(-d / mu)) // log of a heartbeat's chance of a delay ≤ d
	a, p := rt.eng.now, float64(rt.cfg.HBPeriod)
	for {
		skip := 0.0
		if logMiss < 0 {
			skip = math.Floor(math.Log(1-h.rng.Float64()) / logMiss)
		} else if logMiss == 0 {
			skip = math.Inf(1) // d/μ so large that no heartbeat is ever a candidate
		}
		next := float64(h.last) + 1 + skip
		if next*p >= float64(Never-a) {
			h.last = math.MaxInt64 // no candidate within any run: every delay is at most d
			return
		}
		k := int64(next)
		jk := d + h.rng.ExpFloat64()*mu
		if k == 0 {
			h.drawn = append(h.drawn, drawnDelay{k, jk})
			h.last = k
			continue
		}
		prev, ok := h.delay(k - 1)
		if !ok {
			prev = truncatedExp(h.rng, mu, d)
			h.drawn = append(h.drawn, drawnDelay{k - 1, prev})
		}
		h.drawn = append(h.drawn, drawnDelay{k, jk})
		h.last = k
		if jk <= prev+d {
			continue
		}
		at := a.plus(Time(k-1) * rt.cfg.HBPeriod).plus(rt.cfg.Latency).plus(Time(min(prev, float64(MaxDuration)))).plus(rt.cfg.HBTimeout)
		if at < Never {
			h.suspectAt = at
			rt.eng.Schedule(at, rt.kSuspect, int32(n), int64(rt.links[n].inc))
		}
		return
	}
}

// delay returns the drawn delay of heartbeat k, if it was drawn.
func (h *heartbeatLife) delay(k int64) (float64, bool) {
	for i := len(h.drawn) - 1; i >= 0 && h.drawn[i].k >= k; i-- {
		if h.drawn[i].k == k {
			return h.drawn[i].j, true
		}
	}
	return 0, false
}

// truncatedExp draws an exponential of mean mu conditioned on being at most
// d, by inversion.
func truncatedExp(rng *rand.Rand, mu, d float64) float64 {
	return -mu * math.Log1p(rng.Float64()*math.Expm1(-d/mu))
}

// onSuspect fences node ev.I, which the monitor suspects while it is alive.
func (rt *Runtime) onSuspect(ev Event) {
	n := NodeID(ev.I)
	l := &rt.links[n]
	if uint32(ev.J) != l.inc || (l.state != nodeActive && l.state != nodeBooting) || rt.finished {
		return // an earlier life, failed meanwhile
	}
	rt.stats.FalseSuspicions++
	rt.failNode(n, true)
}

// detectTime is when the failure of node n at time f is detected. With
// heartbeats, n sent one every period since it was powered on; the monitor
// declares it dead a timeout after the last heartbeat it received, which
// network jitter delays like any message.
func (rt *Runtime) detectTime(n NodeID, f Time) Time {
	if rt.cfg.OracleDetection {
		return f + rt.cfg.DetectDelay
	}
	a := rt.nodes[n].activeSince
	p := rt.cfg.HBPeriod
	k := (f - a) / p
	last := a + k*p
	if last >= f && k > 0 {
		last -= p // a heartbeat due at the instant of failure is not sent
		k--
	}
	heard := last.plus(rt.cfg.Latency)
	if rt.jittered() {
		h := rt.heartbeatOf(n)
		if h.suspectAt != Never && int64(k) >= h.last {
			// the late heartbeat was sent: nothing arrives after it, and the
			// monitor suspects n when it would have had n lived
			return max(h.suspectAt, f)
		}
		j, ok := h.delay(int64(k))
		switch {
		case ok:
		case int64(k) <= h.last:
			j = truncatedExp(h.rng, float64(rt.cfg.Jitter), float64(rt.cfg.HBTimeout-rt.cfg.HBPeriod))
		default:
			j = h.rng.ExpFloat64() * float64(rt.cfg.Jitter)
		}
		heard = heard.plus(Time(min(j, float64(MaxDuration))))
	}
	return heard.plus(rt.cfg.HBTimeout)
}

// countHeartbeats adds the heartbeats node n sent since it was powered on.
func (rt *Runtime) countHeartbeats(n NodeID, until Time) {
	if rt.cfg.OracleDetection {
		return
	}
	if s := rt.links[n].state; s != nodeActive && s != nodeBooting {
		return
	}
	nd := &rt.nodes[n]
	p := rt.cfg.HBPeriod
	beats := int64((until - nd.activeSince + p - 1) / p)
	rt.stats.HeartbeatMsgs += beats
	rt.stats.HeartbeatBytes += beats * rt.cfg.HBBytes
}
