package sim

import "testing"

// pairWL is scriptWL whose object 0 reports the further of its own progress
// and object 1's, as long as object 1 lives (a replica reporting its pair's),
// and object 1 reports nothing.
type pairWL struct {
	*scriptWL
	rt *Runtime
}

type pairObj struct {
	*scriptObj
	wl *pairWL
}

func (w *pairWL) NewObject(id ObjID) Object {
	return &pairObj{w.scriptWL.NewObject(id).(*scriptObj), w}
}

func (o *pairObj) Progress() int64 {
	switch o.id {
	case 0:
		if twin := o.wl.rt.Object(1); twin != nil {
			return max(o.got, twin.(*pairObj).got)
		}
		return o.got
	case 1:
		return 0
	}
	return o.got
}

// linkedPairWL is pairWL as a ProgressLinker: objects 0 and 1 are linked.
type linkedPairWL struct{ *pairWL }

func (w linkedPairWL) ProgressLink(id ObjID) ObjID {
	switch id {
	case 0:
		return 1
	case 1:
		return 0
	}
	return None
}

// pairProto refreshes object 0's report when object 1 has handled a
// message, as replication does for a replica B.
type pairProto struct{ recordProto }

func (p *pairProto) OnHandled(id ObjID) {
	if id == 1 {
		p.RT.RefreshProgress(0)
	}
}

// An object whose report counts another's (object 0 counts object 1's, which
// is ahead) reports its own progress from the instant the other is lost, not
// from the failure's detection (10 s later here) or its own next handler:
// otherwise object 2's step at 1 s completes the run on the progress of an
// object that no longer exists, with object 0 a step short.
func TestLinkedProgressAtLoss(t *testing.T) {
	for _, c := range []struct {
		name     string
		link     bool
		at06     int64 // object 0's report at 0.6 s, after object 1's loss
		finished Time  // the run's end, no earlier than
	}{
		{"linked", true, 2, 2 * Second},
		// without the link the report stays stale and the run ends early:
		// the case the link exists for does arise in this set-up
		{"not linked", false, 3, Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			// object i on node i: object 3 sends object 1 three messages
			// and object 0 two at once, object 2 one at 1 s and object 0
			// its third at 2 s; node 1 fails at 0.5 s
			script := &scriptWL{n: 4, total: 4, start: func(c *Ctx) {
				if c.Self() != 3 {
					return
				}
				for range 3 {
					c.Send(1, 0, 10, nil)
				}
				c.Send(0, 0, 10, nil)
				c.Send(0, 0, 10, nil)
				c.Spend(Second)
				c.Send(2, 0, 10, nil)
				c.Spend(Second)
				c.Send(0, 0, 10, nil)
			}}
			pw := &pairWL{scriptWL: script}
			var wl Workload = pw
			if c.link {
				wl = linkedPairWL{pw}
			}
			cfg := testConfig(4)
			cfg.DetectDelay = 10 * Second
			cfg.Failures, cfg.Planned = ScriptedFailures, []ScriptedFailure{{Node: 1, At: Second / 2}}
			rt, err := New(cfg, wl, &pairProto{})
			if err != nil {
				t.Fatal(err)
			}
			pw.rt = rt
			var at06 int64
			rt.At(600*Millisecond, func() { at06 = rt.ObjectProgress(0) })
			res := rt.Run()
			if at06 != c.at06 {
				t.Errorf("object 0's report at 0.6 s = %d, want %d", at06, c.at06)
			}
			if !res.Finished || res.Makespan < c.finished || res.Makespan > c.finished+Millisecond {
				t.Errorf("finished %v at %v, want at %v", res.Finished, res.Makespan, c.finished)
			}
		})
	}
}
