package experiment

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"ftsim/models/abft"
	"ftsim/models/cpr"
	"ftsim/models/dps"
	"ftsim/models/mlog"
	"ftsim/models/replication"
	"ftsim/sim"
)

// Prediction is one closed-form figure for a scenario, with the formula and the
// inputs it used, to print beside the simulated value.
type Prediction struct {
	Name    string
	Value   float64
	Unit    string
	Formula string
	Inputs  string
	// Makespan marks a prediction of the mean makespan (comparable with the
	// simulated mean).
	Makespan bool
}

// detectionDelay is the mean time from a failure to its detection: with
// heartbeats the failure falls uniformly within a period, so on average half a
// period after the last heartbeat, which the network's jitter delays by its
// mean. A node the monitor suspects is fenced and known lost at once, so
// with false suspicions the mean is over both kinds of failure.
func (p *Point) detectionDelay() float64 {
	s := p.Scenario
	d, n := s.Detection, s.Network
	if d.Mode == "oracle" {
		return d.Delay.Seconds()
	}
	delay := d.Timeout.Seconds() + n.Latency.Seconds() + n.Jitter.Seconds() - d.Period.Seconds()/2
	if fenced := float64(s.Cluster.Nodes) * FalseSuspicionRate(s); fenced > 0 {
		if hw := hardwareFailureRate(s); hw > 0 {
			return delay * hw / (hw + fenced)
		}
	}
	return delay
}

// predictions collects a point's analytical figures in order.
type predictions struct {
	out []Prediction
	T   float64 // the fault-free time without protocol
	run runMTBF
	// horizon is the duration of the protocol's makespan prediction (the first
	// one given to headline), horizonOf its name
	horizon   float64
	horizonOf string
}

// add appends a figure, unless its value is not finite (the model does not
// apply).
func (ps *predictions) add(name string, v float64, unit, formula, inputs string, makespan bool) {
	if finite(v) {
		ps.out = append(ps.out, Prediction{name, v, unit, formula, inputs, makespan})
	}
}

// solved appends makespan model f of the platform MTBF, evaluated at the MTBF
// over the run it predicts (runMTBF.solve), and returns its value and that
// MTBF.
func (ps *predictions) solved(name string, f func(mu float64) float64, formula, inputs string, makespan bool) (e, mu float64) {
	e, mu = ps.run.solve(ps.T, f)
	ps.add(name, e, "s", formula, ps.noted(inputs, mu), makespan)
	return e, mu
}

// noted returns a prediction's inputs with what they say of the MTBF mu it
// used (runMTBF.note).
func (ps *predictions) noted(inputs string, mu float64) string {
	if note := ps.run.note(mu); note != "" {
		return strings.TrimPrefix(inputs+", "+note, ", ")
	}
	return inputs
}

// finite reports whether x is a number a prediction can show.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// headline records makespan prediction e as the protocol's, unless one was.
func (ps *predictions) headline(e float64, name string) {
	if ps.horizonOf == "" && finite(e) {
		ps.horizon, ps.horizonOf = e, name
	}
}

// Predictions returns the analytical figures that apply to the scenario.
func (p *Point) Predictions() []Prediction {
	s := p.Scenario
	mu := PlatformMTBF(s).Seconds()
	T := p.Baseline.Seconds()
	ps := &predictions{T: T}
	ps.add("fault-free time T", T, "s", "simulated, no protocol", "", false)
	if s.Protocol.Kind() == "dps" {
		// the overhead model needs no failure rate
		ps.out = append(ps.out, p.dpsPredictions()...)
	}
	if mu <= 0 {
		return ps.out
	}
	terms, inputs := []string{"N/node MTBF"}, fmt.Sprintf("N=%d", s.Cluster.Nodes)
	if f := s.Failures; f.GroupMTBF > 0 {
		terms, inputs = append(terms, "G/group MTBF"), inputs+fmt.Sprintf(", G=%d groups of %d", appDomains(s), f.GroupSize)
	}
	if rate := FalseSuspicionRate(s); rate > 0 {
		// the live nodes the monitor suspects are fenced: failures too
		terms = append(terms, "N·s")
		inputs += fmt.Sprintf(", s=%.4g false suspicions per node-second (½e^{−(timeout − period)/jitter}/period)", rate)
	}
	formula := "node MTBF / N"
	if len(terms) > 1 {
		formula = "1/(" + strings.Join(terms, " + ") + ")"
	}
	det := p.detectionDelay()
	ps.run = p.runMTBF(mu, det)
	if ps.run.weibull {
		inputs += "; in the long run"
	}
	ps.add("platform MTBF μ", mu, "s", formula, inputs, false)
	// with Weibull failures a row says what MTBF the models took: it goes
	// here, once the protocol's makespan prediction is known
	overRun := len(ps.out)
	boot, downtime := s.Cluster.SpareBoot.Seconds(), s.Failures.Downtime.Seconds()
	// cpr that never checkpoints within the fault-free run restarts from
	// scratch too.
	scratch := s.Protocol.Kind() == "none" || s.Protocol.Kind() == "cpr" && p.FaultFreeStats.Checkpoints == 0
	var e, restart float64
	name := "restart from scratch"
	if s.Cluster.Spares == 0 && s.Cluster.NoSpare == "wait" {
		// every relaunch waits for the failed nodes' repair (each back in
		// the pool at its detection at the earliest), then boots them
		window := math.Max(s.Cluster.Repair.Seconds(), det)
		after := math.Max(boot, det+downtime-window)
		restart = window + after
		nodes := s.Cluster.Nodes
		name += ", waiting for repairs"
		e, _ = ps.solved(name, func(mu float64) float64 {
			return cpr.ScratchMean(1/mu, T, cpr.RepairWait(1/(mu*float64(nodes)), nodes, window), after)
		}, "e^{λR}(1/λ + W)(e^{λT} − 1)", fmt.Sprintf("W=RepairWait(λ/N, N, w), w=%.4g s (repair or detection), R=%.4g s (boot)", window, after), scratch)
	} else {
		if s.Cluster.Spares == 0 {
			boot = 0
		}
		restart = det + math.Max(boot, downtime)
		e, _ = ps.solved(name, func(mu float64) float64 { return cpr.ScratchMean(1/mu, T, 0, restart) },
			"e^{λR}(1/λ + D)(e^{λT} − 1), D=0", fmt.Sprintf("R=%.4g s (detection+boot)", restart), scratch)
	}
	if scratch {
		ps.headline(e, name)
	}
	switch s.Protocol.Kind() {
	case "mlog":
		p.mlogPredictions(ps, restart)
	case "abft":
		if pr, ok := p.ffProto.(*abft.Protocol); ok && pr.Interval() > 0 {
			c := pr.Interval().Seconds()
			gamma := math.Max(0, c*(p.FaultFree.Seconds()/T-1)) // the backups' cost per interval, measured
			name := "T_pf (Kabir §3.4.1, worst case)"
			e, _ := ps.solved(name, func(mu float64) float64 { return abft.TimeProtocolFT(T, gamma, c, mu, restart) },
				"T_o(1 + γ/c)/(1 − (c + δ)/m)", fmt.Sprintf("c=%.4g s, γ=%.4g s, δ=%.4g s", c, gamma, restart), true)
			ps.headline(e, name)
		}
	case "cpr":
		p.cprPredictions(ps, restart)
	case "replication":
		p.replicationPredictions(ps, restart)
	case "dps":
		p.dpsDegradedPrediction(ps)
	}
	if ps.run.weibull {
		if ps.horizonOf == "" {
			ps.horizon, ps.horizonOf = p.FaultFree.Seconds(), "the fault-free run"
		}
		if row := ps.run.row(ps.horizon, ps.horizonOf); finite(row.Value) {
			ps.out = slices.Insert(ps.out, overRun, row)
		}
	}
	return ps.out
}

// cprPredictions are the checkpoint/restart models, with the checkpoint cost
// measured on the fault-free run: the optimal intervals, and at the interval
// in use the exact expectation of periodic checkpointing (with fatal domain
// failures when failure domains hold a node and its buddy), the first-order
// waste, Daly's wall time and t'_c; and MPI/FT's eq. 1.2. The optimal
// intervals take the MTBF over the run the exact expectation predicts.
func (p *Point) cprPredictions(ps *predictions, restart float64) {
	s := p.Scenario
	T := ps.T
	st := p.FaultFreeStats
	if st.Checkpoints == 0 {
		return
	}
	c := st.CheckpointTime.Seconds() / float64(st.Checkpoints)
	R := restart + c // reading the checkpoint back costs about what writing it did
	pr, isCPR := p.ffProto.(*cpr.Protocol)
	if isCPR {
		R = restart + pr.RestoreCost(c)
	}
	tau := 0.0 // the periodic models need one interval: not the hazard policy's, which varies
	if isCPR && !pr.IntervalVaried() {
		tau = pr.Interval().Seconds()
	}
	periodic := func(mu float64) float64 { return cpr.PeriodicMean(1/mu, T, tau, c, 0, R) }
	// failure domains that hold a node with its buddy make their failures
	// restart the run: a fraction ρ = G·μ of the failures do
	fatal := sharedDomains(s)
	groups := 0.0
	if fatal.domains > 0 {
		groups = float64(fatal.domains) / s.Failures.GroupMTBF.Seconds()
	}
	periodicFatal := func(mu float64) float64 {
		lambda := 1 / mu
		return cpr.PeriodicMeanFatal(lambda, groups/lambda, T, tau, c, 0, R, restart)
	}
	// the exact models, solved first: the optimal intervals' rows come
	// before them and take the MTBF over the protocol's run (without them,
	// over the fault-free run, as the row of the MTBF over the run then says)
	mu := ps.run.over(p.FaultFree.Seconds())
	var ePeriodic, muPeriodic, eFatal, muFatal float64
	varied := isCPR && pr.IntervalVaried()
	eHazard := math.NaN()
	switch {
	case tau > 0:
		ePeriodic, muPeriodic = ps.run.solve(T, periodic)
		mu = muPeriodic
		if fatal.domains > 0 {
			eFatal, muFatal = ps.run.solve(T, periodicFatal)
			mu = muFatal
		}
	case varied:
		if eHazard = cpr.HazardMakespan(T, c, R, ps.run.failures); finite(eHazard) {
			mu = ps.run.over(eHazard)
		}
	}
	ps.add("checkpoint cost C", c, "s", "measured, fault-free", fmt.Sprintf("%d checkpoints", st.Checkpoints), false)
	ps.add("Young interval", cpr.Young(c, mu), "s", "√(2Cμ)", ps.run.note(mu), false)
	ps.add("Daly interval", cpr.DalyHigher(c, mu), "s", "√(2Cμ)[1+ξ/3+ξ²/9] − C", ps.run.note(mu), false)
	if varied {
		ps.add("mean interval in use", p.FaultFree.Seconds()/float64(st.Checkpoints), "s", "fault-free time / checkpoints", "varies with the nodes' ages", false)
		name := "hazard policy (first order)"
		ps.add(name, eHazard, "s", "T + √(2C)∫₀^E √Λ + R∫₀^E Λ", ps.noted(fmt.Sprintf("C=%.4g s, R=%.4g s", c, R), mu), true)
		ps.headline(eHazard, name)
	}
	if tau > 0 {
		ps.add("interval in use τ", tau, "s", "", "", false)
		if fatal.domains > 0 {
			name := "periodic checkpoint, domain failures fatal (exact)"
			ps.add(name, eFatal, "s", "E_k = A + B·E_{k+1} + G·E_0 over segments", ps.noted(
				fmt.Sprintf("ρ=%.4g (%d domains), C=%.4g s, R=%.4g s, R0=%.4g s", groups/(1/muFatal), fatal.domains, c, R, restart), muFatal), true)
			ps.headline(eFatal, name)
		}
		name := "periodic checkpoint (exact)"
		ps.add(name, ePeriodic, "s", "Σ segments e^{λR}(1/λ)(e^{λ(W+C)} − 1)", ps.noted(fmt.Sprintf("W=τ, C=%.4g s, R=%.4g s", c, R), muPeriodic),
			fatal.domains == 0)
		ps.headline(ePeriodic, name)
		waste := func(mu float64) float64 { return cpr.FirstOrderWaste(c, tau+c, 0, R, mu) }
		wasted, muW := ps.run.solve(T, func(mu float64) float64 { return T / (1 - waste(mu)) })
		ps.add("first-order waste", wasted, "s", "T / (1 − WASTE)", ps.noted(fmt.Sprintf("WASTE=%.4g", waste(muW)), muW), true)
		ps.solved("Daly wall time", func(mu float64) float64 { return cpr.DalyWallTime(tau, c, mu, R, T) }, "μe^{R/μ}(e^{(τ+C)/μ} − 1)T/τ", "", true)
		ps.solved("t'_c (Chakravorty–Kalé, worst case)", func(mu float64) float64 { return mlog.CheckpointRuntime(T, c, tau, mu, R) },
			"t0(1 + d/c)/(1 − (c + k_c)/m)", fmt.Sprintf("d=%.4g s, c=τ, k_c=%.4g s", c, R), false)
	}
	o := p.FaultFree.Seconds()/T - 1
	ps.solved("MPI/FT eq. 1.2", func(mu float64) float64 { return cpr.MPIFTTime(T, o, 1/mu, R) }, "T(1+O)(1+λT_rec)",
		fmt.Sprintf("O=%.4g, T_rec=%.4g s", o, R), true)
}

// mlogPredictions are Chakravorty & Kalé's worst-case runtime t'_ml of
// message logging with fast (or basic: v = 1) restart, the t'_c of
// checkpoint/restart at the same interval, and the slowdown α below which
// message logging wins (at the MTBF over the run t'_ml predicts).
func (p *Point) mlogPredictions(ps *predictions, restart float64) {
	cfg, err := mlogConfig(p.Scenario)
	if err != nil || cfg.Period <= 0 {
		return
	}
	T, c := ps.T, cfg.Period.Seconds()
	st := p.FaultFreeStats
	d := 0.0
	if st.Checkpoints > 0 {
		d = st.CheckpointTime.Seconds() / float64(st.Checkpoints)
	}
	v := 1.0
	if cfg.Restart == "fast" {
		v = float64(p.workload.NumObjects()) / float64(p.Scenario.Cluster.Nodes)
	}
	alpha := p.FaultFree.Seconds() / mlog.CheckpointFaultFree(T, d, c)
	ps.add("α (measured slowdown)", alpha, "", "t_ml / (t0(1 + d/c)), fault-free", fmt.Sprintf("d=%.4g s, c=%.4g s", d, c), false)
	name := "t'_ml (Chakravorty–Kalé, worst case)"
	e, mu := ps.solved(name, func(mu float64) float64 { return mlog.MessageLoggingRuntime(alpha, T, d, c, v, mu, restart) },
		"αt0(1 + d/c)/(1 − (c/v + k_ml)/m)", fmt.Sprintf("v=%.4g, k_ml=%.4g s", v, restart), true)
	ps.headline(e, name)
	ps.solved("t'_c at the same interval", func(mu float64) float64 { return mlog.CheckpointRuntime(T, d, c, mu, restart) },
		"t0(1 + d/c)/(1 − (c + k_c)/m)", fmt.Sprintf("k_c=%.4g s", restart), false)
	ps.add("α threshold (mlog wins below)", mlog.AlphaThreshold(c, v, mu, restart, restart), "",
		"(m − c/v − k_ml)/(m − c − k_c)", ps.run.note(mu), false)
}

// dpsPredictions are Gerlach & Hersch's overhead model applied to the whole
// fault-free run: the protocol's extra bytes per node cost their CPU time
// or their transfer time, whichever path (computation or communication)
// bounds the run.
func (p *Point) dpsPredictions() []Prediction {
	s := p.Scenario
	n := float64(s.Cluster.Nodes)
	bw := s.Network.Bandwidth.Float64()
	T := p.Baseline.Seconds()
	comm := float64(p.FaultFreeStats.AppBytes) / n / bw
	if comm >= T || bw <= 0 {
		return nil
	}
	m := dps.OverheadModel{
		CommCompRatio:       comm / (T - comm),
		ComputePerIteration: T - comm,
		Bandwidth:           bw,
		// every byte costs cpu_load at both ends: per node, twice the
		// load per byte it sends
		CPUPerByte:                 dps.CPUPerByteFromLoad(2*s.Network.CPULoad, bw),
		DuplicateBytesPerIteration: float64(p.FaultFreeStats.ExtraBytes) / n,
		// and every message network.message_cpu at both ends
		CPUPerMessage:          2 * s.Network.MessageCPU.Seconds(),
		DuplicatesPerIteration: float64(p.FaultFreeStats.ExtraMsgs) / n,
		Regime:                 dps.Overlapped,
	}
	o := m.DuplicationOverhead()
	if !finite(o) {
		return nil
	}
	inputs := fmt.Sprintf("ρ=%.3g, B=%.4g bytes/node (duplicates, checkpoints, headers)", m.CommCompRatio, m.DuplicateBytesPerIteration)
	formula := "max(T_comp + B·c_b, ρT_comp + B/BW)/max(T_comp, ρT_comp) − 1"
	if m.CPUPerMessage > 0 {
		formula = "max(T_comp + B·c_b + N·c_m, ρT_comp + B/BW)/max(T_comp, ρT_comp) − 1"
		inputs += fmt.Sprintf(", N=%.4g messages/node, c_m=%.3g s", m.DuplicatesPerIteration, m.CPUPerMessage)
	}
	out := []Prediction{{Name: "DPS fault-free overhead (Gerlach–Hersch §7)", Value: 100 * o, Unit: "%",
		Formula: formula, Inputs: inputs}}
	if PlatformMTBF(s) <= 0 {
		// without failures the fault-free time is the makespan
		out = append(out, Prediction{Name: "DPS fault-free time (Gerlach–Hersch §7)", Value: T * (1 + o), Unit: "s",
			Formula: "T(1 + overhead)", Inputs: inputs, Makespan: true})
	}
	return out
}

// dpsDegradedName names dps.Degraded's prediction.
const dpsDegradedName = "DPS degraded, load of the longest dead run (ours)"

// dpsDegradedPrediction is the makespan of a bulk-synchronous workload under
// DPS whose failed nodes' threads stay on the next live node of the plain
// rotation (dps.Degraded): for exponential failures without domains or
// false suspicions, and while runs of three dead nodes, which the model
// leaves out, stay rare.
func (p *Point) dpsDegradedPrediction(ps *predictions) {
	s := p.Scenario
	pr, ok := p.ffProto.(*dps.Protocol)
	if !ok || pr.Config().Spread || pr.Config().Backups < 1 || s.Failures.Distribution != "exponential" ||
		s.Failures.GroupMTBF > 0 || FalseSuspicionRate(s) > 0 {
		return
	}
	switch s.Workload.Kind() {
	case "stencil", "life", "synthetic":
	default:
		return // not every thread does the same work each step
	}
	lambda := 1 / sim.Time(s.Failures.NodeMTBF).Seconds()
	m := dps.Degraded{Work: p.FaultFree.Seconds(), Nodes: s.Cluster.Nodes, Lambda: lambda}
	e := m.Mean()
	failures := e * lambda * float64(m.Nodes)
	if runs := m.RunsOfThree(failures); !(runs <= 0.1) {
		return
	}
	name := dpsDegradedName
	ps.add(name, e, "s", "T + ∫₀ᵀP(ω₂ ≤ w)dw + ∫₀ᵀP(ω₃ ≤ w)dw, ω_L the work done when a node first carries L nodes' threads",
		fmt.Sprintf("T=%.4g s (fault-free, with DPS), Nλ=%.4g/s, %.3g failures", m.Work, lambda*float64(m.Nodes), failures), true)
	ps.headline(e, name)
}

// replicationPredictions are Casanova et al.'s mean number of failures to
// interruption of the b = N/2 node pairs and the mean time to the first
// interruption, which assume independent exponential node failures and an
// even number of nodes (node k pairs with node k+N/2); with checkpoints, the
// exact model of either strategy (replication.Periodic), and for pairs left
// degraded the usual approximation beside it: cpr's periodic model with
// interruptions in place of failures, as if they came at the constant rate
// 1/MTTI (they do not: a whole platform needs two failures to be
// interrupted, so early ones are rarer than that).
func (p *Point) replicationPredictions(ps *predictions, restart float64) {
	s := p.Scenario
	n := s.Cluster.Nodes
	if s.Failures.Distribution != "exponential" || s.Failures.GroupMTBF > 0 || FalseSuspicionRate(s) > 0 || n%2 != 0 {
		return
	}
	b := n / 2
	inputs := fmt.Sprintf("b=N/2=%d node pairs", b)
	mtti := replication.MTTI(sim.Time(s.Failures.NodeMTBF), b).Seconds()
	ps.add("failures to interruption MNFTI", replication.MNFTI(b), "failures", "1 + 4^b/C(2b,b) (Casanova et al.), dead nodes' included", inputs, false)
	ps.add("mean time to interruption", mtti, "s", "node MTBF·MNFTI/(2b)", inputs, false)
	pr, ok := p.ffProto.(*replication.Protocol)
	if !ok {
		return
	}
	st := p.FaultFreeStats
	lambda := 1 / sim.Time(s.Failures.NodeMTBF).Seconds()
	if pr.Checkpointer() == nil || st.Checkpoints == 0 {
		// an interruption restarts the replicated run from scratch: the
		// exact model of a single segment
		W := p.FaultFree.Seconds()
		m := replication.Periodic{Lambda: lambda, Pairs: b, Work: W, Tau: W, R: restart}
		name := "replicated, restart from scratch"
		e := m.Mean()
		ps.add(name, e, "s", "(∫₀ᵂS(t)dt + (1 − S(W))R')/S(W), S(t) = (2e^{−λt} − e^{−2λt})^b",
			fmt.Sprintf("W=%.4g s (replicated run), R=%.4g s (%.4g s with its restarts)", W, restart, m.Recovery()), true)
		ps.headline(e, name)
		return
	}
	ck := pr.Checkpointer()
	c := st.CheckpointTime.Seconds() / float64(st.Checkpoints)
	tau := ck.Interval().Seconds()
	W := p.FaultFree.Seconds() - st.CheckpointTime.Seconds() // the replicated work
	R := restart + 2*ck.RestoreCost(c)                       // both replicas of every object read its piece
	ps.add("checkpoint cost C", c, "s", "measured, fault-free", fmt.Sprintf("%d checkpoints", st.Checkpoints), false)
	ps.add("interval in use τ", tau, "s", "", "", false)
	m := replication.Periodic{Lambda: lambda, Pairs: b, Work: W, Tau: tau, C: c, R: R, Restart: pr.RestartsReplicas()}
	given := fmt.Sprintf("W=%.4g s (replicated work), C=%.4g s, R=%.4g s (%.4g s with its restarts)", W, c, R, m.Recovery())
	name := "periodic checkpoint, pairs degraded"
	if m.Restart {
		ps.add("restart strategy's period", replication.RestartPeriod(c, lambda, b), "s", "(3C/(4bλ²))^⅓ (first order, Benoit et al.)", inputs, false)
		name = "periodic checkpoint, replicas restarted"
		m.Ready = p.detectionDelay() + s.Cluster.SpareBoot.Seconds()
		if s.Cluster.Spares == 0 {
			m.Ready = math.Inf(1) // never whole again: the model does not apply
		}
		m.Copy = pr.RestartCopyCost()
		given += fmt.Sprintf(", replacements ready %.4g s after a failure, copies %.4g s", m.Ready, m.Copy)
	}
	e := m.Mean()
	ps.add(name, e, "s", "Σ segments Σ_m w_m(∫₀ᴸP_m^b + (1 − P_m(L)^b)(R' + M₀)), m segments since whole pairs", given, true)
	ps.headline(e, name)
	if finite(e) {
		best, at := m.BestTau()
		ps.add("best period, exact model", best, "s", "τ = W/n least", fmt.Sprintf("%.0f segments: %.6g s", math.Round(W/best), at), false)
	}
	if !m.Restart {
		ps.add("periodic checkpoint at μ = MTTI", cpr.PeriodicMean(1/mtti, W, tau, c, 0, R), "s", "Σ segments e^{λR}(1/λ)(e^{λ(W+C)} − 1), λ = 1/MTTI",
			fmt.Sprintf("W=%.4g s (replicated work), C=%.4g s, R=%.4g s; interruptions taken as Poisson", W, c, R), true)
	}
}
