package sim

import "testing"

// Started turns true when an object's Start begins (its code runs then), not
// when it is created: on one core, object 1's Start waits for object 0's.
func TestStarted(t *testing.T) {
	// each Start takes a second, then sends itself the message the run waits for
	wl := &scriptWL{n: 2, total: 2, start: func(c *Ctx) {
		c.Spend(Second)
		c.Send(c.Self(), 0, 1, nil)
	}}
	cfg := testConfig(1)
	rt, err := New(cfg, wl, &recordProto{})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range []struct {
		at     Time
		want01 [2]bool
	}{
		{500 * Millisecond, [2]bool{true, false}},
		{1500 * Millisecond, [2]bool{true, true}},
	} {
		rt.At(c.at, func() {
			checked++
			if got := [2]bool{rt.Started(0), rt.Started(1)}; got != c.want01 {
				t.Errorf("at %v: Started(0), Started(1) = %v, want %v", c.at, got, c.want01)
			}
		})
	}
	if res := rt.Run(); !res.Finished || checked != 2 {
		t.Fatalf("finished %v at %v, %d of 2 checks ran", res.Finished, res.Makespan, checked)
	}
}
