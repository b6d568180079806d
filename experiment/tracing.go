package experiment

import (
	"io"

	"ftsim/trace"
)

// Trace runs replication rep again with its timeline written to w in the
// Chrome/Perfetto trace format (at most maxMessages messages; 0 = all), and
// returns its record, identical to Run's. Like Run, it reports a panic of the
// simulation as an error naming the scenario and the seed.
func (p *Point) Trace(rep int, w io.Writer, maxMessages int64) (Record, error) {
	cfg, err := p.runConfig(rep)
	if err != nil {
		return Record{}, err
	}
	tw := trace.NewWriter(w, maxMessages)
	res, err := p.simulate(cfg, p.protocol, nil, tw)
	if err != nil {
		return Record{}, err
	}
	if err := tw.Close(); err != nil {
		return Record{}, err
	}
	return newRecord(p, rep, p.Seed(rep), &res), nil
}
