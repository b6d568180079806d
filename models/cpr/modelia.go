package cpr

import (
	"fmt"
	"maps"
	"slices"

	"ftsim/models/none"
	"ftsim/sim"
)

// TaskFarm is what MPI/FT Model-Ia needs from a master/worker workload: which
// object is the master and how a task is sent. The farm workload implements it.
type TaskFarm interface {
	Master() sim.ObjID
	TaskMessage(task int) (tag int32, size int64, payload []byte)
}

// Resubmitter is implemented by a farm's master object: the tasks a worker
// holds, and the bookkeeping to hand one to another worker.
type Resubmitter interface {
	Outstanding(worker sim.ObjID) []int
	Reassign(task int, from, to sim.ObjID)
}

// ModelIa is MPI/FT's Model-Ia (master/worker): no checkpoint at all. When a
// worker's node dies, the worker (stateless) is re-created on a spare after its
// boot or, with no spare, on a surviving node, and the master resubmits the
// tasks the dead worker held; nobody else stops. The master is in MPI/FT's
// "safe process area"; if its node dies anyway the pattern is reported as
// unrecoverable and the application restarts from scratch.
type ModelIa struct {
	sim.BaseProtocol
	farm    TaskFarm
	booting map[sim.NodeID]sim.NodeID // spare being booted -> worker node it replaces
	next    int                       // round robin over survivors
	scratch *none.Restarter

	// Resubmitted counts the tasks handed out again.
	Resubmitted int
}

// NewModelIa returns the protocol.
func NewModelIa() *ModelIa { return &ModelIa{booting: map[sim.NodeID]sim.NodeID{}} }

// Init checks that the workload is a task farm.
func (p *ModelIa) Init(rt *sim.Runtime) {
	p.BaseProtocol.Init(rt)
	p.farm, _ = rt.Workload().(TaskFarm)
	p.scratch = none.NewRestarter(rt)
}

// Start refuses workloads that are not task farms.
func (p *ModelIa) Start() {
	if p.farm == nil {
		p.RT.Abort("protocol mpift-ia needs a master/worker workload (farm)")
	}
}

// OnFailure re-creates the dead workers and resubmits their tasks.
func (p *ModelIa) OnFailure(f sim.Failure) {
	rt := p.RT
	if containsObj(f.Objects, p.farm.Master()) {
		st := rt.Stats()
		st.Unrecoverable++
		st.UnrecoverableNote = "the master died: Model-Ia assumes it cannot; the application restarted from scratch"
	}
	if p.scratch.Active() || containsObj(f.Objects, p.farm.Master()) {
		// the spares booting for workers' nodes are the restart's now: it
		// re-creates every object once they are in place
		for _, s := range slices.Sorted(maps.Keys(p.booting)) {
			p.scratch.Adopt(s, p.booting[s])
			delete(p.booting, s)
		}
		p.scratch.OnFailure(f)
		return
	}
	if f.WasSpare {
		if failed, ok := p.booting[f.Node]; ok {
			delete(p.booting, f.Node)
			p.replace(failed, rt.ObjectsOn(failed))
		}
		return
	}
	p.replace(f.Node, f.Objects)
}

func containsObj(objs []sim.ObjID, o sim.ObjID) bool {
	for _, x := range objs {
		if x == o {
			return true
		}
	}
	return false
}

// replace moves the workers of failed node n to a spare, or to survivors.
func (p *ModelIa) replace(n sim.NodeID, workers []sim.ObjID) {
	rt := p.RT
	spare, ok := rt.TakeSpare(func(s sim.NodeID) {
		delete(p.booting, s)
		rt.ReplaceSlot(n, s)
		for _, w := range workers {
			p.restart(w, s)
		}
	})
	if ok {
		p.booting[spare] = n
		return
	}
	rt.RemoveSlot(n)
	// not the slots of failed nodes whose spares are booting: their failure
	// is known, and a worker placed there would be lost at once
	replaced := slices.Collect(maps.Values(p.booting))
	slots := slices.DeleteFunc(slices.Clone(rt.Slots()), func(s sim.NodeID) bool { return slices.Contains(replaced, s) })
	if len(slots) == 0 {
		if len(replaced) > 0 {
			rt.Abort("mpift-ia: no live node to re-create the workers on while the spares boot (not modeled)")
			return
		}
		rt.Abort("every node failed and no spare is left")
		return
	}
	for _, w := range workers {
		s := slots[p.next%len(slots)]
		p.next++
		p.restart(w, s)
	}
}

// restart re-creates stateless worker w on node n and resubmits its tasks.
// With the master lost (its node failed, not detected yet) nothing is
// resubmitted: the detection restarts everything from scratch.
func (p *ModelIa) restart(w sim.ObjID, n sim.NodeID) {
	rt := p.RT
	rt.Recreate(w, n)
	master := p.farm.Master()
	if rt.Lost(master) {
		return
	}
	rs, ok := rt.Object(master).(Resubmitter)
	if !ok {
		rt.Abort(fmt.Sprintf("the master (object %d) cannot resubmit tasks", master))
		return
	}
	for _, t := range rs.Outstanding(w) {
		tag, size, payload := p.farm.TaskMessage(t)
		rt.SendApp(master, w, tag, size, payload, sim.Header{})
		p.Resubmitted++
	}
}
