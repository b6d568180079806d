package experiment

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ftsim/sim"
)

// Progress reports how many of total runs are done: a live bar with an ETA on a
// terminal, a plain line every few seconds otherwise (CI logs stay readable),
// nothing at all for runs that finish within the first interval. Once it
// follows the workers' meters, it reports between completions too, with how
// far each simulation under way is: one run of a large scenario takes
// minutes.
type Progress struct {
	w        io.Writer
	tty      bool
	interval time.Duration
	every    time.Duration // how often a followed Progress samples its meters (sampleEvery)
	start    time.Time

	mu      sync.Mutex // Add and the ticker report concurrently
	total   int
	done    int
	last    time.Time
	printed bool
	meters  []*meter
	sims    int           // simulations the meters will run in all
	stop    chan struct{} // closed by Stop, ends the ticker
	ticker  sync.WaitGroup
}

// NewProgress reports to w; a terminal is detected when w is one.
func NewProgress(w io.Writer, total int) *Progress {
	p := &Progress{w: w, total: total, start: time.Now(), interval: 5 * time.Second, every: sampleEvery}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty, p.interval = true, 200*time.Millisecond
		}
	}
	p.last = p.start
	return p
}

// follow makes p report every interval from the workers' meters, which will
// run sims simulations in all (the runs, and the fault-free runs and
// baselines they need), until Stop.
func (p *Progress) follow(meters []*meter, sims int) {
	p.mu.Lock()
	p.meters, p.sims = meters, sims
	p.mu.Unlock()
	stop := make(chan struct{})
	p.stop = stop
	p.ticker.Add(1)
	go func() {
		defer p.ticker.Done()
		tick := min(p.interval, p.every)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				p.mu.Lock()
				// a report by Add less than an interval ago (give or take
				// half a tick) stands for this one
				if p.done < p.total && now.Sub(p.last) >= p.interval-tick/2 {
					p.report(now)
				} else {
					p.sample()
				}
				p.mu.Unlock()
			}
		}
	}()
}

// sampleEvery is how often a followed Progress looks at the simulations
// under way, between reports too: a look every report interval (5 s) would
// miss most rollbacks of short runs (see simUnderWay).
const sampleEvery = 200 * time.Millisecond

// sample records the share done of each simulation under way.
func (p *Progress) sample() {
	for _, m := range p.meters {
		if rt, started := m.current(); rt != nil {
			m.observe(started, rt.Fraction())
		}
	}
}

// Add records n more runs done.
func (p *Progress) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	now := time.Now()
	if now.Sub(p.last) < p.interval && p.done < p.total {
		return
	}
	if p.done == p.total && !p.printed {
		return // finished before anything was shown: stay quiet
	}
	p.report(now)
}

// report prints the state at now. With the meters followed, the share done
// counts the simulations done and the share of the running ones done (a
// simulation's progress is its workload's, which a rollback sets back), and
// the ETA comes from estimateLeft; otherwise both come from the runs done.
func (p *Progress) report(now time.Time) {
	p.last = now
	p.printed = true
	el := now.Sub(p.start)
	done, of := float64(p.done), float64(p.total)
	var left time.Duration
	known := done > 0
	var running []string
	if p.sims == 0 {
		if known {
			left = time.Duration(float64(el) / done * max(0, of-done))
		}
	} else {
		var finished int
		var spent time.Duration
		var underWay []simUnderWay
		for _, m := range p.meters {
			finished += int(m.done.Load())
			spent += time.Duration(m.spent.Load())
			if rt, started := m.current(); rt != nil {
				f := rt.Fraction()
				m.observe(started, f)
				running = append(running, fmt.Sprintf("%.0f%%", 100*f))
				underWay = append(underWay, simUnderWay{now.Sub(time.Unix(0, started)), f, m.gained})
			}
		}
		done, of = float64(finished), float64(p.sims)
		for _, u := range underWay {
			done += u.share
		}
		left, known = estimateLeft(p.sims, len(p.meters), finished, spent, underWay)
		if p.done == p.total {
			done, left, known = of, 0, true
		}
	}
	eta := "?"
	if known {
		eta = left.Round(time.Second).String()
	}
	under := ""
	if len(running) > 0 {
		under = " (running: " + strings.Join(running, ", ") + ")"
	}
	if p.tty {
		const width = 30
		k := min(width, int(width*done/max(of, 1)))
		fmt.Fprintf(p.w, "\r[%s%s] %d/%d runs%s  %s elapsed  ETA %s \x1b[K", strings.Repeat("=", k), strings.Repeat(" ", width-k),
			p.done, p.total, under, el.Round(time.Second), eta)
		if p.done == p.total {
			fmt.Fprintln(p.w)
		}
		return
	}
	fmt.Fprintf(p.w, "progress: %d/%d runs%s, %s elapsed, ETA %s\n", p.done, p.total, under, el.Round(time.Second), eta)
}

// Stop ends the reports between completions and the bar's line if the runs
// stopped before the last one, so that what is printed next (the reason they
// stopped) starts on a line of its own.
func (p *Progress) Stop() {
	if p.stop != nil {
		close(p.stop)
		p.ticker.Wait()
		p.stop = nil
	}
	if p.tty && p.printed && p.done < p.total {
		fmt.Fprintln(p.w)
	}
}

// simUnderWay is a running simulation as the ETA sees it: how long it has
// run, the share of its workload done, and the share gained in all, which
// counts again the work a rollback undid. The rate it has run at is elapsed
// over gained: elapsed over share, after a restart from scratch sets share
// back near 0, made a run of seconds look like one of minutes. A rate is
// trusted from minGained on, before which a rollback that came before the
// first look would make it wild too.
type simUnderWay struct {
	elapsed time.Duration
	share   float64
	gained  float64
}

// estimateLeft estimates the wall time left for sims simulations on workers
// workers, of which finished took spent in all and running are under way.
// Each running simulation is projected from its own rate, and those not
// started yet are taken to last the mean of the durations known and
// projected: a large scenario's simulations differ tenfold (a fault-free
// baseline and a message-logging run under failures), and one rate for all
// made the ETA of the long ones far too short. It reports false while no
// duration is known, or while a simulation that has gained less than
// minGained has run longer than the mean.
func estimateLeft(sims, workers, finished int, spent time.Duration, running []simUnderWay) (time.Duration, bool) {
	sum, n := float64(spent), finished
	for _, r := range running {
		if r.gained >= minGained {
			sum += float64(r.elapsed) + r.left()
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	mean := sum / float64(n)
	var work, longest float64
	for _, r := range running {
		left := mean - float64(r.elapsed)
		if r.gained >= minGained {
			left = r.left()
		} else if left < 0 {
			// longer than the others without progress: a run that
			// restarts from scratch may go on to its duration limit
			return 0, false
		}
		work += left
		longest = max(longest, left)
	}
	work += float64(max(0, sims-finished-len(running))) * mean
	return time.Duration(max(longest, work/float64(max(1, workers)))), true
}

// minGained is the share a simulation must have gained for its own rate to
// project it.
const minGained = 0.01

// left is the time r has left, in nanoseconds, at the rate it has run at.
func (r simUnderWay) left() float64 {
	return float64(r.elapsed) / r.gained * (1 - min(1, r.share))
}

// meter lets a progress display follow the simulations one worker runs: the
// one under way and when it started, how many are done and how long they
// took.
type meter struct {
	rt      atomic.Pointer[sim.Runtime]
	started atomic.Int64 // Unix nanoseconds
	done    atomic.Int64
	spent   atomic.Int64 // nanoseconds

	// what the progress display has seen of the simulation that started
	// at seenStart, under Progress.mu: its share done when last seen and
	// the share it has gained in all (see simUnderWay)
	seenStart         int64
	seenShare, gained float64
}

// current returns the simulation under way, nil if none, and when it
// started. The worker stores the start before the simulation, so a start
// that is the same before and after reading the simulation is its own.
func (m *meter) current() (*sim.Runtime, int64) {
	started := m.started.Load()
	rt := m.rt.Load()
	if m.started.Load() != started {
		return nil, 0
	}
	return rt, started
}

// observe records that the simulation that started at started has done
// share of its workload. Gains are summed between observations, so a
// rollback, seen as a fall of the share, does not undo the work before it.
func (m *meter) observe(started int64, share float64) {
	if started != m.seenStart {
		m.seenStart, m.seenShare, m.gained = started, 0, 0
	}
	m.gained += max(0, share-m.seenShare)
	m.seenShare = share
}

// run runs rt to its end, visible to the progress display meanwhile (m may
// be nil: nothing follows it). A panic of the simulation (a bug: a protocol
// or workload broke an invariant) comes back as an error with the simulated
// time and the stack, instead of ending the process: a sweep then stops, and
// the records it wrote are kept.
func (m *meter) run(rt *sim.Runtime) (res sim.Result, err error) {
	defer recoverAsError(&err, rt)
	if m == nil {
		return rt.Run(), nil
	}
	start := time.Now()
	m.started.Store(start.UnixNano())
	m.rt.Store(rt)
	defer m.rt.Store(nil)
	res = rt.Run()
	m.spent.Add(int64(time.Since(start)))
	m.done.Add(1)
	return res, nil
}

// recoverAsError, deferred, turns a panic of the function deferring it (a
// bug: a protocol, a workload or the runtime broke an invariant) into *err,
// with the stack and, when rt is not nil, the simulated time it struck at:
// no panic reaches the user, and a sweep stops with the records it wrote.
func recoverAsError(err *error, rt *sim.Runtime) {
	r := recover()
	if r == nil {
		return
	}
	at := ""
	if rt != nil {
		at = fmt.Sprintf(", at simulated time %v", rt.Now())
	}
	*err = fmt.Errorf("internal error, a bug in ftsim (please report it with the scenario and the seed): %v%s\n%s", r, at, debug.Stack())
}
