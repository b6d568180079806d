package sim

import (
	"reflect"
	"testing"
)

// span is a task as a Tracer receives it.
type span struct {
	node       NodeID
	obj        ObjID
	start, end Time
	what       string
}

// spans records the tasks of a run.
type spans struct{ got []span }

func (s *spans) Task(n NodeID, obj ObjID, start, end Time, what string) {
	s.got = append(s.got, span{n, obj, start, end, what})
}
func (s *spans) Message(*Message, Time)       {}
func (s *spans) Instant(NodeID, Time, string) {}

// onStartProto runs start when the run starts.
type onStartProto struct {
	BaseProtocol
	start func(rt *Runtime)
}

func (p *onStartProto) Start() { p.start(p.RT) }

// A traced task ends when its work does: at its end, or cut short by its
// node's failure, by a restore of its object, or by the end of the run; a
// protocol's span ends at its node's failure. The trace used to show every
// task whole from its start, as if a failed node had worked on.
func TestTracedTasksEndWithTheirWork(t *testing.T) {
	const d = 10_000 // each object's Start computes 10 µs
	for _, c := range []struct {
		name  string
		fail  []ScriptedFailure
		limit Time
		start func(rt *Runtime)
		want  []span
	}{
		{"whole", nil, 0, func(*Runtime) {},
			[]span{{0, 0, 0, d, "compute"}, {1, 1, 0, d, "compute"}}},
		{"node failure", []ScriptedFailure{{Node: 1, At: 4000}}, 0, func(*Runtime) {},
			[]span{{1, 1, 0, 4000, "compute"}, {0, 0, 0, d, "compute"}}},
		{"protocol work cut by a failure", []ScriptedFailure{{Node: 1, At: 4000}}, 0,
			func(rt *Runtime) { rt.ChargeCPU(1, 6000, nil) },
			[]span{{1, None, 0, 4000, "protocol work"}, {0, 0, 0, d, "compute"}}},
		{"protocol work whole", nil, 0,
			func(rt *Runtime) { rt.ChargeCPU(1, 6000, nil) },
			[]span{{1, None, 0, 6000, "protocol work"}, {0, 0, 0, d, "compute"}, {1, 1, 6000, 6000 + d, "compute"}}},
		{"restore", nil, 0, func(rt *Runtime) {
			rt.At(3000, func() {
				state, _ := rt.Object(0).MarshalBinary()
				if err := rt.Restore(0, 0, Snap{State: state}); err != nil {
					t.Error(err)
				}
			})
		}, []span{{0, 0, 0, 3000, "compute"}, {1, 1, 0, d, "compute"}, {0, 0, 3000, 3000 + d, "compute"}}},
		{"end of the run", nil, 5000, func(rt *Runtime) { rt.At(5000, func() {}) },
			[]span{{0, 0, 0, 5000, "compute"}, {1, 1, 0, 5000, "compute"}}},
		{"protocol spans", []ScriptedFailure{{Node: 1, At: 4000}}, 0, func(rt *Runtime) {
			rt.At(20_000, func() {
				rt.Span(0, 1000, 15_000, "checkpoint") // node 0 never failed: whole
				rt.Span(1, 1000, 15_000, "checkpoint") // cut at node 1's failure
				rt.Span(1, 4000, 15_000, "checkpoint") // node 1 down from its start: left out
			})
		}, []span{{1, 1, 0, 4000, "compute"}, {0, 0, 0, d, "compute"},
			{0, None, 1000, 15_000, "checkpoint"}, {1, None, 1000, 4000, "checkpoint"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			wl := &scriptWL{n: 2, total: 10, start: func(c *Ctx) { c.Spend(d) }}
			cfg := testConfig(2)
			cfg.Limit = c.limit
			if c.fail != nil {
				cfg.Failures, cfg.Planned = ScriptedFailures, c.fail
			}
			rt, err := New(cfg, wl, &onStartProto{start: c.start})
			if err != nil {
				t.Fatal(err)
			}
			tr := &spans{}
			rt.SetTracer(tr)
			rt.Run()
			if !reflect.DeepEqual(tr.got, c.want) {
				t.Errorf("tasks %v, want %v", tr.got, c.want)
			}
		})
	}
}
