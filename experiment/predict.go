package experiment

import (
	"fmt"
	"math"
	"strings"

	"ftsim/models/abft"
	"ftsim/models/cpr"
	"ftsim/models/dps"
	"ftsim/models/mlog"
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

// Predictions returns the analytical figures that apply to the scenario.
func (p *Point) Predictions() []Prediction {
	s := p.Scenario
	mu := PlatformMTBF(s).Seconds()
	T := p.Baseline.Seconds()
	var out []Prediction
	add := func(name string, v float64, unit, formula, inputs string, makespan bool) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, Prediction{name, v, unit, formula, inputs, makespan})
		}
	}
	add("fault-free time T", T, "s", "simulated, no protocol", "", false)
	if s.Protocol.Kind() == "dps" {
		// the overhead model needs no failure rate
		out = append(out, p.dpsPredictions()...)
	}
	if mu <= 0 {
		return out
	}
	lambda := 1 / mu
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
	add("platform MTBF μ", mu, "s", formula, inputs, false)
	det := p.detectionDelay()
	boot := s.Cluster.SpareBoot.Seconds()
	if s.Cluster.Spares == 0 {
		boot = 0
	}
	restart := det + math.Max(boot, s.Failures.Downtime.Seconds())
	// cpr that never checkpoints within the fault-free run restarts from
	// scratch too.
	scratch := s.Protocol.Kind() == "none" || s.Protocol.Kind() == "cpr" && p.FaultFreeStats.Checkpoints == 0
	add("restart from scratch", cpr.ScratchMean(lambda, T, 0, restart), "s",
		"e^{λR}(1/λ + D)(e^{λT} − 1), D=0", fmt.Sprintf("R=%.4g s (detection+boot)", restart), scratch)
	switch s.Protocol.Kind() {
	case "mlog":
		return append(out, p.mlogPredictions(mu, restart)...)
	case "abft":
		if pr, ok := p.ffProto.(*abft.Protocol); ok && pr.Interval() > 0 {
			c := pr.Interval().Seconds()
			gamma := math.Max(0, c*(p.FaultFree.Seconds()/T-1)) // the backups' cost per interval, measured
			add("T_pf (Kabir §3.4.1, worst case)", abft.TimeProtocolFT(T, gamma, c, mu, restart), "s",
				"T_o(1 + γ/c)/(1 − (c + δ)/m)", fmt.Sprintf("c=%.4g s, γ=%.4g s, δ=%.4g s", c, gamma, restart), true)
		}
		return out
	case "cpr":
	default:
		return out
	}
	st := p.FaultFreeStats
	if st.Checkpoints == 0 {
		return out
	}
	c := st.CheckpointTime.Seconds() / float64(st.Checkpoints)
	add("checkpoint cost C", c, "s", "measured, fault-free", fmt.Sprintf("%d checkpoints", st.Checkpoints), false)
	add("Young interval", cpr.Young(c, mu), "s", "√(2Cμ)", "", false)
	add("Daly interval", cpr.DalyHigher(c, mu), "s", "√(2Cμ)[1+ξ/3+ξ²/9] − C", "", false)
	R := restart + c // reading the checkpoint back costs about what writing it did
	pr, isCPR := p.ffProto.(*cpr.Protocol)
	if isCPR {
		R = restart + pr.RestoreCost(c)
	}
	if isCPR && pr.Interval() > 0 {
		tau := pr.Interval().Seconds()
		add("interval in use τ", tau, "s", "", "", false)
		// failure domains that hold a node with its buddy make their
		// failures restart the run: the fraction ρ of failures that do
		fatal := sharedDomains(s)
		if fatal.domains > 0 {
			rho := float64(fatal.domains) / s.Failures.GroupMTBF.Seconds() / lambda
			add("periodic checkpoint, domain failures fatal (exact)", cpr.PeriodicMeanFatal(lambda, rho, T, tau, c, 0, R, restart), "s",
				"E_k = A + B·E_{k+1} + G·E_0 over segments", fmt.Sprintf("ρ=%.4g (%d domains), C=%.4g s, R=%.4g s, R0=%.4g s", rho, fatal.domains, c, R, restart), true)
		}
		add("periodic checkpoint (exact)", cpr.PeriodicMean(lambda, T, tau, c, 0, R), "s",
			"Σ segments e^{λR}(1/λ)(e^{λ(W+C)} − 1)", fmt.Sprintf("W=τ, C=%.4g s, R=%.4g s", c, R), fatal.domains == 0)
		waste := cpr.FirstOrderWaste(c, tau+c, 0, R, mu)
		add("first-order waste", T/(1-waste), "s", "T / (1 − WASTE)", fmt.Sprintf("WASTE=%.4g", waste), true)
		add("Daly wall time", cpr.DalyWallTime(tau, c, mu, R, T), "s", "μe^{R/μ}(e^{(τ+C)/μ} − 1)T/τ", "", true)
		add("t'_c (Chakravorty–Kalé, worst case)", mlog.CheckpointRuntime(T, c, tau, mu, R), "s",
			"t0(1 + d/c)/(1 − (c + k_c)/m)", fmt.Sprintf("d=%.4g s, c=τ, k_c=%.4g s", c, R), false)
	}
	o := p.FaultFree.Seconds()/T - 1
	add("MPI/FT eq. 1.2", cpr.MPIFTTime(T, o, lambda, R), "s", "T(1+O)(1+λT_rec)", fmt.Sprintf("O=%.4g, T_rec=%.4g s", o, R), true)
	return out
}

// mlogPredictions are Chakravorty & Kalé's worst-case runtime t'_ml of
// message logging with fast (or basic: v = 1) restart, the t'_c of
// checkpoint/restart at the same interval, and the slowdown α below which
// message logging wins.
func (p *Point) mlogPredictions(mu, restart float64) []Prediction {
	cfg, err := mlogConfig(p.Scenario)
	if err != nil || cfg.Period <= 0 {
		return nil
	}
	T, c := p.Baseline.Seconds(), cfg.Period.Seconds()
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
	var out []Prediction
	add := func(name string, x float64, unit, formula, inputs string, makespan bool) {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, Prediction{name, x, unit, formula, inputs, makespan})
		}
	}
	add("α (measured slowdown)", alpha, "", "t_ml / (t0(1 + d/c)), fault-free", fmt.Sprintf("d=%.4g s, c=%.4g s", d, c), false)
	add("t'_ml (Chakravorty–Kalé, worst case)", mlog.MessageLoggingRuntime(alpha, T, d, c, v, mu, restart), "s",
		"αt0(1 + d/c)/(1 − (c/v + k_ml)/m)", fmt.Sprintf("v=%.4g, k_ml=%.4g s", v, restart), true)
	add("t'_c at the same interval", mlog.CheckpointRuntime(T, d, c, mu, restart), "s",
		"t0(1 + d/c)/(1 − (c + k_c)/m)", fmt.Sprintf("k_c=%.4g s", restart), false)
	add("α threshold (mlog wins below)", mlog.AlphaThreshold(c, v, mu, restart, restart), "",
		"(m − c/v − k_ml)/(m − c − k_c)", "", false)
	return out
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
		Regime:                     dps.Overlapped,
	}
	o := m.DuplicationOverhead()
	if math.IsNaN(o) || math.IsInf(o, 0) {
		return nil
	}
	inputs := fmt.Sprintf("ρ=%.3g, B=%.4g bytes/node (duplicates, checkpoints, headers)", m.CommCompRatio, m.DuplicateBytesPerIteration)
	out := []Prediction{{Name: "DPS fault-free overhead (Gerlach–Hersch §7)", Value: 100 * o, Unit: "%",
		Formula: "max(T_comp + B·c_b, ρT_comp + B/BW)/max(T_comp, ρT_comp) − 1", Inputs: inputs}}
	if PlatformMTBF(s) <= 0 {
		// without failures the fault-free time is the makespan
		out = append(out, Prediction{Name: "DPS fault-free time (Gerlach–Hersch §7)", Value: T * (1 + o), Unit: "s",
			Formula: "T(1 + overhead)", Inputs: inputs, Makespan: true})
	}
	return out
}
