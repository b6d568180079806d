package experiment

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Estimate is a sample mean with its 95% confidence interval (Student t).
type Estimate struct {
	Mean, SD, Low, High float64
	N                   int
}

// Estimate95 returns the mean of xs and its 95% confidence interval.
func Estimate95(xs []float64) Estimate {
	n := len(xs)
	if n == 0 {
		return Estimate{Mean: math.NaN(), SD: math.NaN(), Low: math.NaN(), High: math.NaN()}
	}
	m := stat.Mean(xs, nil)
	if n == 1 {
		return Estimate{Mean: m, Low: m, High: m, N: 1}
	}
	sd := stat.StdDev(xs, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	h := t * sd / math.Sqrt(float64(n))
	return Estimate{Mean: m, SD: sd, Low: m - h, High: m + h, N: n}
}

// Summary aggregates the replications of one point.
type Summary struct {
	Runs, Finished, DigestOK, Unrecoverable  int
	Makespan, Efficiency, Failures, Recovery Estimate
	// Detection and Restore are the parts of a recovery until the failure
	// is detected and from there until its lost objects are restored.
	Detection, Restore Estimate
	// FalseSuspicions are the live nodes fenced per run, among Failures.
	FalseSuspicions               Estimate
	Baseline, FaultFree, Overhead float64
	// Metrics are the protocol's own figures (Record.Metrics), over the
	// runs that report them.
	Metrics map[string]Estimate
}

// Summarize aggregates records of one point. Recovery averages over the runs
// that recovered from at least one failure, Detection over those that
// detected one, and Restore over those that restored one: a run whose only
// failure struck too late to be detected, or one stopped before it
// recovered, has no recovery time to count (its recovery_s_mean is 0). A
// record of a store older than the recovered column counts by its recovery
// time.
func Summarize(recs []Record) Summary {
	var s Summary
	var mk, eff, fail, fenced, rec, det, rest []float64
	metrics := map[string][]float64{}
	for _, r := range recs {
		s.Runs++
		for k, v := range r.Metrics {
			metrics[k] = append(metrics[k], v)
		}
		if r.Finished {
			s.Finished++
			mk = append(mk, r.MakespanS)
			eff = append(eff, r.Efficiency)
		}
		if r.DigestOK {
			s.DigestOK++
		}
		if r.Unrecoverable > 0 {
			s.Unrecoverable++
		}
		fail = append(fail, float64(r.Failures))
		fenced = append(fenced, float64(r.FalseSuspicions))
		if r.Recovered > 0 || r.RecoverySMean > 0 {
			rec = append(rec, r.RecoverySMean)
		}
		if r.Detected > 0 {
			det = append(det, r.DetectionSMean)
		}
		if r.Restored > 0 {
			rest = append(rest, r.RestoreSMean)
		}
		s.Baseline, s.FaultFree, s.Overhead = r.BaselineS, r.FaultFreeS, r.Overhead
	}
	s.Makespan, s.Efficiency = Estimate95(mk), Estimate95(eff)
	s.Failures, s.FalseSuspicions, s.Recovery = Estimate95(fail), Estimate95(fenced), Estimate95(rec)
	s.Detection, s.Restore = Estimate95(det), Estimate95(rest)
	if len(metrics) > 0 {
		s.Metrics = make(map[string]Estimate, len(metrics))
		for k, xs := range metrics {
			s.Metrics[k] = Estimate95(xs)
		}
	}
	return s
}
