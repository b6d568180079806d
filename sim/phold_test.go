package sim

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkPHOLD is the classic PHOLD engine benchmark: 1,000 logical processes,
// one event each in flight; every event schedules one more at a random target after
// a fixed lookahead plus an exponential delay. It measures the event queue and the
// dispatch path with no model work at all.
func BenchmarkPHOLD(b *testing.B) {
	const lps = 1000
	const lookahead = 100 * Nanosecond
	const mean = 1000.0 // ns
	e := NewEngine(1)
	r := rand.New(rand.NewPCG(1, 2))
	count := make([]int64, lps)
	var k Kind
	k = e.NewKind("phold", func(ev Event) {
		count[ev.I]++
		target := int32(r.Uint32N(lps))
		e.After(lookahead+Time(r.ExpFloat64()*mean), k, target, 0)
	})
	for i := 0; i < lps; i++ {
		e.Schedule(Time(r.ExpFloat64()*mean), k, int32(i), 0)
	}
	e.Run(Time(1e6)) // warm up: reach steady state before measuring
	b.ReportAllocs()
	b.ResetTimer()
	start := e.Executed()
	// Run b.N events.
	stop := e.NewKind("stop", func(Event) { e.Stop() })
	_ = stop
	for e.Executed()-start < uint64(b.N) {
		e.runN(uint64(b.N) - (e.Executed() - start))
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// runN executes at most n events; benchmarks use it to run an exact count.
func (e *Engine) runN(n uint64) {
	for ; n > 0 && e.q.len() > 0; n-- {
		e.step()
	}
}
