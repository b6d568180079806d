package sim

import "testing"

func TestSetMetric(t *testing.T) {
	var a, b Stats
	a.SetMetric("restart_s", 1)
	a.SetMetric("iteration_s", 2)
	a.SetMetric("restart_s", 3)
	b.SetMetric("iteration_s", 2)
	b.SetMetric("restart_s", 3)
	if got := a.Metrics(); len(got) != 2 || got[0] != (Metric{"restart_s", 3}) || got[1] != (Metric{"iteration_s", 2}) {
		t.Errorf("metrics %v", got)
	}
	if a == b {
		t.Error("Stats with metrics set in another order compare equal") // order is part of the record
	}
	var c Stats
	c.SetMetric("restart_s", 3)
	c.SetMetric("iteration_s", 2)
	if a != c {
		t.Error("equal Stats compare unequal")
	}
	if v, ok := a.Metric("restart_s"); !ok || v != 3 {
		t.Errorf("Metric(restart_s) = %v, %v; want the value set last, 3", v, ok)
	}
	if v, ok := a.Metric("protocol_cpu_s"); ok || v != 0 {
		t.Errorf("Metric of a name never set = %v, %v", v, ok)
	}
}
