package mlog

import (
	"fmt"
	"testing"

	"ftsim/sim"
	"ftsim/workloads/pida"
)

func TestPidaProbe(t *testing.T) {
	bad := 0
	for _, korf := range []int64{0, 12, 55, 79} {
		for _, per := range []int64{1, 2, 3} {
			for _, victim := range []string{"random", "round_robin"} {
				p := pida.DefaultParams()
				p.ObjectsPerNode = per
				p.Victim = victim
				if korf != 0 {
					p.Korf, p.KorfFile = korf, "/work/shared/testdata/korf15.tsv"
				}
				w, err := pida.New(p, 4, nil)
				if err != nil {
					t.Fatal(err)
				}
				cfg := sim.DefaultConfig()
				cfg.Nodes, cfg.Spares, cfg.Rate = 4, 3, 1e9
				cfg.Latency, cfg.Bandwidth = 2*sim.Microsecond, 12.5e9
				cfg.OracleDetection = true
				rt, _ := sim.New(cfg, w, &plain{})
				base := rt.Run()
				cfg.Failures = sim.ScriptedFailures
				for _, fl := range [][2]float64{{0.3, 0.65}, {0.1, 0.5}, {0.5, 0.9}, {0.2, 0.4}} {
					cfg.Planned = []sim.ScriptedFailure{{Node: 1, Progress: fl[0], ByProgress: true}, {Node: 2, Progress: fl[1], ByProgress: true}}
					cfg.Limit = 200 * base.Makespan
					for _, mode := range []string{RestartBasic, RestartFast} {
						for _, per8 := range []sim.Time{8, 3, 20} {
							pc := DefaultConfig()
							pc.Period = base.Makespan / per8
							pc.Restart = mode
							pr := mustNew(t, pc)
							w2, _ := pida.New(p, 4, nil)
							rt2, _ := sim.New(cfg, w2, pr)
							res := rt2.Run()
							if !res.Finished || !res.Outcome.OK {
								bad++
								s := fmt.Sprintf("korf %d per %d %s %v %s /%d: finished %v at %v (base %v) outcome %+v stats %+v unrec %q", korf, per, victim, fl, mode, per8, res.Finished, res.Makespan, base.Makespan, res.Outcome, pr.Stats, res.Stats.UnrecoverableNote)
								for _, o := range pr.objs {
									s += fmt.Sprintf("\n obj %d node %d gated %v delivered %d proc %d tnCount %d held %v queued %d missing %v waitFor %v lost %v holds %d running %v catch %d", o.id, o.node, o.gated, o.delivered, o.tnProcessed, o.tnCount, len(o.held), len(o.queued), o.missing, o.waitFor, rt2.Lost(o.id), pr.holds[o.id], rt2.Running(o.id), o.catchUp)
								}
								if bad < 3 {
									t.Error(s)
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d bad", bad)
}
