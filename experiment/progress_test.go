package experiment

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"ftsim/sim"
)

// Between run completions, a followed Progress still reports, with the
// share done of each simulation under way, and extrapolates its ETA from the
// simulations done plus those shares; a run-count-only Progress stays quiet.
func TestProgressFollowsMeters(t *testing.T) {
	s := smallScenario(t)
	w, err := buildWorkload(s)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clusterConfig(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sim.New(cfg, w, buildNone())
	if err != nil {
		t.Fatal(err)
	}
	if res := rt.Run(); !res.Finished {
		t.Fatal("the small scenario did not finish")
	}
	busy, idle := &meter{}, &meter{}
	busy.done.Store(2)
	busy.rt.Store(rt) // as if still running: its workload is done
	var b bytes.Buffer
	p := NewProgress(&b, 2)
	p.interval = time.Millisecond
	p.follow([]*meter{busy, idle}, 4)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		p.mu.Lock()
		printed := p.printed
		p.mu.Unlock()
		if printed || time.Now().After(deadline) {
			break
		}
	}
	p.Stop()
	line, _, _ := strings.Cut(b.String(), "\n")
	if !strings.HasPrefix(line, "progress: 0/2 runs (running: 100%), ") || strings.HasSuffix(line, "ETA ?") {
		t.Fatalf("report between completions %q: want 0/2 runs, one simulation at 100%% and an ETA (3 of 4 simulations done)", line)
	}
	n := b.Len()
	time.Sleep(5 * time.Millisecond)
	if b.Len() != n {
		t.Fatal("reports continued after Stop")
	}
}
