package sim

import (
	"slices"
	"sync"
	"testing"
)

// Fraction follows the workload's progress, and another goroutine may read
// it while the run goes on (run with -race).
func TestFraction(t *testing.T) {
	var seen []float64
	var rt *Runtime
	wl := &scriptWL{n: 2, total: 4,
		start: only0(func(c *Ctx) {
			for i := range 4 {
				c.Compute(1e6)
				c.Send(1, int32(i), 100, nil)
			}
		}),
		on: func(*Ctx, *scriptObj, *Message) { seen = append(seen, rt.Fraction()) },
	}
	rt, err := New(testConfig(2), wl, &recordProto{})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				if f := rt.Fraction(); f < 0 || f > 1 {
					t.Errorf("Fraction %g outside [0, 1]", f)
					return
				}
			}
		}
	}()
	res := rt.Run()
	close(stop)
	wg.Wait()
	if !res.Finished {
		t.Fatal("did not finish")
	}
	// a handler sees the progress of the handlers before it
	want := []float64{0, 0.25, 0.5, 0.75}
	if !slices.Equal(seen, want) {
		t.Fatalf("seen %v, want %v", seen, want)
	}
	if f := rt.Fraction(); f != 1 {
		t.Fatalf("Fraction at the end = %g, want 1", f)
	}
}
