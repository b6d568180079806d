package experiment

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Progress reports how many of total runs are done: a live bar with an ETA on a
// terminal, a plain line every few seconds otherwise (CI logs stay readable),
// nothing at all for runs that finish within the first interval.
type Progress struct {
	w        io.Writer
	tty      bool
	total    int
	done     int
	start    time.Time
	last     time.Time
	interval time.Duration
	printed  bool
}

// NewProgress reports to w; a terminal is detected when w is one.
func NewProgress(w io.Writer, total int) *Progress {
	p := &Progress{w: w, total: total, start: time.Now(), interval: 5 * time.Second}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty, p.interval = true, 200*time.Millisecond
		}
	}
	p.last = p.start
	return p
}

// Add records n more runs done.
func (p *Progress) Add(n int) {
	p.done += n
	now := time.Now()
	if now.Sub(p.last) < p.interval && p.done < p.total {
		return
	}
	if p.done == p.total && !p.printed {
		return // finished before anything was shown: stay quiet
	}
	p.last = now
	p.printed = true
	el := now.Sub(p.start)
	eta := "?"
	if p.done > 0 {
		eta = (time.Duration(float64(el) / float64(p.done) * float64(p.total-p.done))).Round(time.Second).String()
	}
	if p.tty {
		const width = 30
		k := width * p.done / max(p.total, 1)
		fmt.Fprintf(p.w, "\r[%s%s] %d/%d runs  %s elapsed  ETA %s ", strings.Repeat("=", k), strings.Repeat(" ", width-k),
			p.done, p.total, el.Round(time.Second), eta)
		if p.done == p.total {
			fmt.Fprintln(p.w)
		}
		return
	}
	fmt.Fprintf(p.w, "progress: %d/%d runs, %s elapsed, ETA %s\n", p.done, p.total, el.Round(time.Second), eta)
}

// Stop ends the bar's line if the runs stopped before the last one, so that
// what is printed next (the reason they stopped) starts on a line of its own.
func (p *Progress) Stop() {
	if p.tty && p.printed && p.done < p.total {
		fmt.Fprintln(p.w)
	}
}
