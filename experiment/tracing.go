package experiment

import (
	"io"

	"ftsim/sim"
	"ftsim/trace"
)

// Trace runs replication rep again with its timeline written to w in the
// Chrome/Perfetto trace format (at most maxMessages messages; 0 = all), and
// returns its record, identical to Run's.
func (p *Point) Trace(rep int, w io.Writer, maxMessages int64) (Record, error) {
	cfg, err := p.runConfig(rep)
	if err != nil {
		return Record{}, err
	}
	rt, err := sim.New(cfg, p.workload, p.protocol())
	if err != nil {
		return Record{}, err
	}
	tw := trace.NewWriter(w, maxMessages)
	rt.SetTracer(tw)
	res := rt.Run()
	if err := tw.Close(); err != nil {
		return Record{}, err
	}
	return newRecord(p, rep, p.Seed(rep), &res), nil
}
