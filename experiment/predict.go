package experiment

import (
	"fmt"
	"math"

	"ftsim/models/cpr"
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
// period after the last heartbeat.
func (p *Point) detectionDelay() float64 {
	d := p.Scenario.Detection
	if d.Mode == "oracle" {
		return d.Delay.Seconds()
	}
	return d.Timeout.Seconds() + p.Scenario.Network.Latency.Seconds() - d.Period.Seconds()/2
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
	if mu <= 0 {
		return out
	}
	lambda := 1 / mu
	add("platform MTBF μ", mu, "s", "node MTBF / N", fmt.Sprintf("N=%d", s.Cluster.Nodes), false)
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
	if s.Protocol.Kind() != "cpr" {
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
	if pr, ok := p.ffProto.(*cpr.Protocol); ok && pr.Interval() > 0 {
		tau := pr.Interval().Seconds()
		add("interval in use τ", tau, "s", "", "", false)
		add("periodic checkpoint (exact)", cpr.PeriodicMean(lambda, T, tau, c, 0, R), "s",
			"Σ segments e^{λR}(1/λ)(e^{λ(W+C)} − 1)", fmt.Sprintf("W=τ, C=%.4g s, R=%.4g s", c, R), true)
		waste := cpr.FirstOrderWaste(c, tau+c, 0, R, mu)
		add("first-order waste", T/(1-waste), "s", "T / (1 − WASTE)", fmt.Sprintf("WASTE=%.4g", waste), true)
		add("Daly wall time", cpr.DalyWallTime(tau, c, mu, R, T), "s", "μe^{R/μ}(e^{(τ+C)/μ} − 1)T/τ", "", true)
	}
	o := p.FaultFree.Seconds()/T - 1
	add("MPI/FT eq. 1.2", cpr.MPIFTTime(T, o, lambda, R), "s", "T(1+O)(1+λT_rec)", fmt.Sprintf("O=%.4g, T_rec=%.4g s", o, R), true)
	return out
}
