package mlog

import (
	"slices"

	"ftsim/sim"
)

// Probe records when each object completes each unit of progress (an
// iteration of the stencil), to measure restart time the way the paper does:
// the largest increase in iteration time among the objects that survived.
type Probe struct {
	done   [][]sim.Time // per object: completion time of iteration k+1 (first completion only)
	lost   map[sim.ObjID]bool
	failAt sim.Time
	fails  int
}

// NewProbe returns a probe for n objects.
func NewProbe(n int) *Probe {
	return &Probe{done: make([][]sim.Time, n), lost: map[sim.ObjID]bool{}}
}

func (pr *Probe) handled(rt *sim.Runtime, id sim.ObjID) {
	for int64(len(pr.done[id])) < rt.ObjectProgress(id) {
		pr.done[id] = append(pr.done[id], rt.Now())
	}
}

func (pr *Probe) failed(f sim.Failure) {
	if pr.fails == 0 {
		pr.failAt = f.At
	}
	pr.fails++
	for _, id := range f.Objects {
		pr.lost[id] = true
	}
}

// RestartTime is the largest increase, over the objects that never failed, of
// an iteration time after the first failure over that object's median
// iteration time before it. It is 0 without failures.
func (pr *Probe) RestartTime() sim.Time {
	if pr.fails == 0 {
		return 0
	}
	var worst sim.Time
	for id, ts := range pr.done {
		if pr.lost[sim.ObjID(id)] || len(ts) < 3 {
			continue
		}
		var before []sim.Time
		var longest sim.Time
		for k := 1; k < len(ts); k++ {
			d := ts[k] - ts[k-1]
			if ts[k] <= pr.failAt {
				before = append(before, d)
			} else {
				longest = max(longest, d)
			}
		}
		if len(before) == 0 {
			continue
		}
		slices.Sort(before)
		worst = max(worst, longest-before[len(before)/2])
	}
	return worst
}

// IterationTime is the median time between successive iterations of the
// surviving objects before the first failure (over the whole run without one).
func (pr *Probe) IterationTime() sim.Time {
	var all []sim.Time
	for id, ts := range pr.done {
		if pr.lost[sim.ObjID(id)] {
			continue
		}
		for k := 1; k < len(ts); k++ {
			if pr.fails == 0 || ts[k] <= pr.failAt {
				all = append(all, ts[k]-ts[k-1])
			}
		}
	}
	if len(all) == 0 {
		return 0
	}
	slices.Sort(all)
	return all[len(all)/2]
}
