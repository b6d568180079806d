package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"ftsim/scenarios"
	"ftsim/sim"
)

// Shard selects the runs of a sweep that one job of a job array executes:
// run k belongs to shard k mod N. Interleaving rather than cutting blocks
// gives every shard a share of each point, so shards take about the same
// time even when points differ widely in cost. The zero value (and 0/1) is
// the whole sweep.
type Shard struct {
	I, N int
}

// ParseShard parses "i/n" with 0 ≤ i < n.
func ParseShard(text string) (Shard, error) {
	a, b, ok := strings.Cut(text, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("--shard %s: want i/n with 0 ≤ i < n, such as 3/16 (a job array's index and size)", text)
	}
	return Shard{i, n}, nil
}

// norm maps the zero value to 0/1.
func (s Shard) norm() Shard {
	if s.N <= 0 {
		return Shard{0, 1}
	}
	return s
}

// Has reports whether run index k belongs to the shard.
func (s Shard) Has(k int) bool {
	s = s.norm()
	return k%s.N == s.I
}

// String returns "i/n".
func (s Shard) String() string {
	s = s.norm()
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// MarshalText writes the shard as "i/n" in meta.json.
func (s Shard) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads "i/n".
func (s *Shard) UnmarshalText(b []byte) error {
	x, err := ParseShard(string(b))
	if err != nil {
		return err
	}
	*s = x
	return nil
}

// SweepPoint is one point of a sweep: the base scenario with its settings
// applied and validated.
type SweepPoint struct {
	Index    int
	ID       string
	Settings []Setting
	Scenario *scenarios.Scenario
}

// Sweep is a base scenario × the cartesian product of varied keys × Reps
// replications. Run k is replication k mod Reps of point k / Reps.
type Sweep struct {
	Varies []Vary
	Reps   int
	Points []SweepPoint
	base   *scenarios.Scenario // the scenario of the points, which locates errors in its [sweep] list
	// fileVary maps a key varied by the base scenario's [sweep] vary list
	// (not replaced by a command-line vary) to its index in the list, so
	// that errors about its values name the entry the user wrote.
	fileVary map[string]int
}

// ProtocolKey is the sweep key that selects a [[protocols]] entry by label.
const ProtocolKey = "protocol"

// NewSweep builds every point of the sweep up front, so that a bad key or
// value is reported before any run starts rather than hours into a sweep.
//
// The varied keys are the scenario's own ([sweep] vary), each replaced by a
// vary of the same key in varies, then the other varies in order. A
// scenario with [[protocols]] is also varied over its entries, key
// "protocol", first, unless varies chooses among them.
//
// At each point the protocol entry is chosen first, then settings of a
// section's kind (protocol.kind, workload.kind), then the other settings:
// setting a kind drops the section's keys set before, which would silently
// undo a varied protocol.interval.
func NewSweep(base *scenarios.Scenario, varies []Vary, reps int) (*Sweep, error) {
	// A sweep lists its runs up front (Pending), so a huge count would
	// exhaust memory before the first run: the scenario's own bound.
	if reps < 1 || reps > scenarios.MaxReps {
		return nil, fmt.Errorf("sweep: reps must be between 1 and %d, got %d", scenarios.MaxReps, reps)
	}
	varies, fileVary, err := effectiveVaries(base, varies)
	if err != nil {
		return nil, err
	}
	sw := &Sweep{Varies: varies, Reps: reps, base: base, fileVary: fileVary}
	for i, set := range Product(varies) {
		s, err := applySettings(base, set)
		if err != nil {
			if located, ok := sw.varyErr(set, err); ok {
				return nil, located
			}
			return nil, err
		}
		sw.Points = append(sw.Points, SweepPoint{Index: i, ID: PointID(set), Settings: set, Scenario: s})
		if err := s.Validate(); err != nil {
			return nil, sw.pointErr(i, err)
		}
		if _, err := buildProtocol(s); err != nil {
			return nil, sw.pointErr(i, err)
		}
	}
	return sw, nil
}

// effectiveVaries merges the scenario's [sweep] varies with the command
// line's and adds the [[protocols]] entries, checking that no key is varied
// twice. It also returns the index in the [sweep] list of each key whose
// values come from it.
func effectiveVaries(base *scenarios.Scenario, cli []Vary) ([]Vary, map[string]int, error) {
	var out []Vary
	fileVary := map[string]int{}
	if labels := base.ProtocolLabels(); labels != nil && !slices.ContainsFunc(cli, func(v Vary) bool { return v.Key == ProtocolKey }) {
		out = append(out, Vary{Key: ProtocolKey, Values: labels})
	}
	for i, text := range base.Sweep.Vary {
		v, err := parseVary(text)
		if err != nil {
			return nil, nil, varyEntryErr(base, i, "%q: %v", text, err)
		}
		if slices.ContainsFunc(out, v.overlaps) {
			return nil, nil, varyEntryErr(base, i, "%s is varied twice", v.Key)
		}
		if j := slices.IndexFunc(cli, func(x Vary) bool { return x.Key == v.Key }); j >= 0 {
			v = cli[j] // the command line replaces the file's values
		} else {
			for _, k := range v.Keys() {
				fileVary[k] = i
			}
		}
		out = append(out, v)
	}
	for _, v := range cli {
		if len(v.Values) == 0 {
			return nil, nil, fmt.Errorf("--vary %s: no values", v.Key)
		}
		if v.Key == ProtocolKey && base.ProtocolLabels() == nil {
			return nil, nil, fmt.Errorf("--vary %s: the scenario has no [[protocols]] entries to choose from (vary protocol.kind instead)", v)
		}
		if !slices.ContainsFunc(base.Sweep.Vary, func(t string) bool { x, _ := ParseVary(t); return x.Key == v.Key }) {
			if slices.ContainsFunc(out, v.overlaps) {
				return nil, nil, fmt.Errorf("--vary %s: key varied twice", v.Key)
			}
			if v.Key == ProtocolKey {
				out = append([]Vary{v}, out...)
			} else {
				out = append(out, v)
			}
		}
	}
	return out, fileVary, nil
}

// varyEntryErr returns an error about entry i of the scenario's [sweep]
// vary list, located as the scenario's own errors are: file, line (of the
// list: the scenario records no line per element) and key sweep.vary[i].
func varyEntryErr(base *scenarios.Scenario, i int, format string, args ...any) error {
	err := base.Errorf("sweep.vary", format, args...)
	var e *scenarios.Error
	if errors.As(err, &e) {
		e.Key = fmt.Sprintf("sweep.vary[%d]", i)
	}
	return err
}

// varyErr locates an error about a value a varied key took at a point of
// settings set where the user gave it: the value is applied as an override,
// so the scenario reports it as "--set key", which the user never wrote. A
// value of the scenario's [sweep] vary list is reported at its entry, one of
// a --vary flag as "--vary key=value". It reports false for other errors.
func (sw *Sweep) varyErr(set []Setting, err error) (error, bool) {
	var e *scenarios.Error
	if !errors.As(err, &e) {
		return err, false
	}
	key, ok := strings.CutPrefix(e.File, "--set ")
	if !ok {
		return err, false
	}
	j := slices.IndexFunc(set, func(st Setting) bool { return st.Key == key })
	if i, fromFile := sw.fileVary[key]; fromFile {
		if j < 0 {
			return varyEntryErr(sw.base, i, "%s", e.Msg), true
		}
		return varyEntryErr(sw.base, i, "%s: %s", set[j], e.Msg), true
	}
	if j < 0 {
		return err, false
	}
	flag := *e
	flag.File = "--vary " + set[j].String()
	if flag.Key == key {
		flag.Key = "" // the flag names it
	}
	return &flag, true
}

// applySettings returns base with a point's settings applied, in the order
// NewSweep describes.
func applySettings(base *scenarios.Scenario, set []Setting) (*scenarios.Scenario, error) {
	s := base
	if i := slices.IndexFunc(set, func(st Setting) bool { return st.Key == ProtocolKey }); i >= 0 {
		var err error
		if s, err = base.WithProtocol(set[i].Value); err != nil {
			return nil, fmt.Errorf("--vary %s: %w", set[i], err)
		}
	} else {
		s = base.Clone()
	}
	for _, kinds := range []bool{true, false} {
		for _, st := range set {
			if st.Key == ProtocolKey || strings.HasSuffix(st.Key, ".kind") != kinds {
				continue
			}
			if err := s.Set(st.String()); err != nil {
				return nil, fmt.Errorf("--vary %s: %w", st, err)
			}
		}
	}
	return s, nil
}

// Runs returns the number of runs of the whole sweep.
func (sw *Sweep) Runs() int { return len(sw.Points) * sw.Reps }

// RunKey identifies one run of a sweep.
type RunKey struct {
	Point string
	Rep   int
}

// Pending returns the run indices of shard that skip does not claim, in
// order. skip may be nil.
func (sw *Sweep) Pending(shard Shard, skip func(RunKey) bool) []int {
	var out []int
	for k := 0; k < sw.Runs(); k++ {
		if !shard.Has(k) {
			continue
		}
		if skip != nil && skip(RunKey{sw.Points[k/sw.Reps].ID, k % sw.Reps}) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// SweepRecord is a Record with the identity of its sweep point, the unit of
// the result store.
type SweepRecord struct {
	Point string `json:"point"`
	Record
}

// Key returns the run's identity in the sweep.
func (r *SweepRecord) Key() RunKey { return RunKey{r.Point, r.Rep} }

// SweepColumns is the CSV header of the store: point, then Columns().
func SweepColumns() []string { return append([]string{"point"}, columns...) }

// Row returns the CSV fields, in the order of SweepColumns.
func (r *SweepRecord) Row() []string { return append([]string{r.Point}, r.Record.Row()...) }

// JSON returns the record as one line of JSON (without the newline).
func (r *SweepRecord) JSON() []byte {
	b, _ := json.Marshal(r) // plain fields always marshal
	return b
}

// RunOptions says which runs of a sweep to execute and how.
type RunOptions struct {
	Shard   Shard
	Workers int // parallel runs, 0 = all cores
	// Skip claims runs already done (a resumed store); nil runs them all.
	Skip func(RunKey) bool
	// Prepared, if set, is called once for each point this process
	// prepares, from a worker goroutine, once its baseline and fault-free
	// run are known and before any of its records, e.g. to store the
	// point's predictions.
	Prepared func(*SweepPoint, *Point) error
	// Progress, if set, receives progress reports (see NewProgress).
	Progress io.Writer
	// Finished, if set, is called with each record as soon as its run and
	// its point's fault-free run are done, in the order runs finish, before
	// emit receives it in run order. A result store appends here: a run that
	// finished while an earlier, slower one was still going would otherwise
	// wait in memory for it, and be lost to a kill and run again on resume.
	Finished func(SweepRecord) error
}

// preparedPoint is a point of a running sweep, prepared in two stages, each
// once, by the first worker that needs it: the point itself (its protocol on
// its group's workload), then its fault-free run with the protocol, after
// which it takes its group's baseline. The fault-free run is a job of its
// own that runs beside the point's failure runs, and so is the group's
// baseline: a comparison of a few slow protocols, one replication each,
// would otherwise run each protocol's simulations one after the other. Only
// the records need them, and the failure runs when their duration limit
// derives from them (no duration_limit); such a point takes its baseline in
// the first stage. The point is forgotten once its last record is out, so a
// long sweep holds only the workloads it still needs.
type preparedPoint struct {
	once, ffOnce sync.Once
	p            *Point
	err, ffErr   error
	ffDone       bool  // seen by the collector: the fault-free job reported
	left         int   // records still to build (collector only)
	held         []int // slots whose results wait for ffDone (collector only)
}

// sweepJob is a job of Sweep.Run: a pending run (its slot in todo), the
// fault-free run of a point, or the run without protocol of a point's group.
type sweepJob struct {
	kind  jobKind
	slot  int // runJob: the run's slot in todo
	point int // faultFreeJob, baseJob: the point
}

// jobKind says what a sweepJob runs.
type jobKind uint8

const (
	runJob jobKind = iota
	faultFreeJob
	baseJob
)

// Run executes the pending runs of o.Shard on a pool of workers shared by all
// points, passes each record to o.Finished as soon as it is done, and calls
// emit with each record in run order, as soon as it and every earlier pending
// run are done: the output is the same whatever the number of workers, and
// an interrupted sweep leaves a prefix of it. It stops at the first error (a
// failed Prepare, Run, Finished or emit) or when ctx is cancelled, without
// waiting for runs in progress.
func (sw *Sweep) Run(ctx context.Context, o RunOptions, emit func(SweepRecord) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	todo := sw.Pending(o.Shard, o.Skip)
	if len(todo) == 0 {
		return nil
	}
	pts := make([]preparedPoint, len(sw.Points))
	var order []int // points with pending runs, in order
	for _, k := range todo {
		pi := k / sw.Reps
		if pts[pi].left == 0 {
			order = append(order, pi)
		}
		pts[pi].left++
	}
	jobs := sweepJobs(sw, todo, order)
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(jobs))
	bases := newBaseCache(sw, todo)
	meters := make([]*meter, workers)
	var prog *Progress
	if o.Progress != nil {
		for w := range meters {
			meters[w] = &meter{}
		}
		prog = NewProgress(o.Progress, len(todo))
		prog.follow(meters, simulations(sw, todo, order, bases.n))
		defer prog.Stop()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	get := func(i int, m *meter) (*Point, error) {
		pp := &pts[i]
		pp.once.Do(func() {
			defer recoverAsError(&pp.err, nil) // building a workload computes its reference
			pp.p, pp.err = bases.prepare(i)
			if pp.err == nil && pp.p.limitFromFaultFree() {
				pp.err = bases.setBaseline(i, pp.p, m)
			}
			pp.err = sw.pointErr(i, pp.err)
		})
		return pp.p, pp.err
	}
	faultFree := func(i int, m *meter) error {
		p, err := get(i, m)
		if err != nil {
			return err
		}
		pp := &pts[i]
		pp.ffOnce.Do(func() {
			defer recoverAsError(&pp.ffErr, nil)
			err := p.runFaultFree(m)
			if err == nil && !p.limitFromFaultFree() {
				err = bases.setBaseline(i, p, m)
			}
			err = sw.pointErr(i, err)
			if err == nil && o.Prepared != nil {
				err = o.Prepared(&sw.Points[i], p)
			}
			pp.ffErr = err
		})
		return pp.ffErr
	}

	type done struct {
		job sweepJob
		res sim.Result
		err error
	}
	jobc := make(chan sweepJob)
	out := make(chan done, workers)
	// run runs job j on meter m. A panic outside a simulation is an error
	// too, as inside one (meter.run): in a worker it would end the process.
	// Those in a point's or a base's once are kept as its error, which
	// every later job of it reports.
	run := func(j sweepJob, m *meter) (d done) {
		d.job = j
		defer recoverAsError(&d.err, nil)
		switch j.kind {
		case baseJob:
			d.err = sw.pointErr(j.point, bases.run(j.point, m))
		case faultFreeJob:
			d.err = faultFree(j.point, m)
		default:
			pi, rep := todo[j.slot]/sw.Reps, todo[j.slot]%sw.Reps
			p, err := get(pi, m)
			if err == nil && p.limitFromFaultFree() {
				err = faultFree(pi, m)
			}
			if err == nil {
				d.res, err = p.runRep(rep, m)
			}
			d.err = err
		}
		return d
	}
	for _, m := range meters {
		go func() {
			for j := range jobc {
				d := run(j, m)
				select {
				case out <- d:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobc)
		for _, j := range jobs {
			select {
			case jobc <- j:
			case <-ctx.Done():
				return
			}
		}
	}()

	results := map[int]sim.Result{} // slot → result waiting for its point's fault-free run
	recs := map[int]SweepRecord{}   // slot → record waiting for its turn to be emitted
	build := func(slot int) error {
		k := todo[slot]
		pi, rep := k/sw.Reps, k%sw.Reps
		pp := &pts[pi]
		res := results[slot]
		delete(results, slot)
		rec := SweepRecord{Point: sw.Points[pi].ID, Record: newRecord(pp.p, rep, pp.p.Seed(rep), &res)}
		if pp.left--; pp.left == 0 {
			pp.p = nil
		}
		recs[slot] = rec
		if prog != nil {
			prog.Add(1)
		}
		if o.Finished != nil {
			return o.Finished(rec)
		}
		return nil
	}
	next := 0
	for next < len(todo) {
		var d done
		select {
		case d = <-out:
		case <-ctx.Done():
			return ctx.Err()
		}
		if d.err != nil {
			return d.err
		}
		// build the records that are done, once their point's fault-free time is known
		switch d.job.kind {
		case baseJob: // its points' fault-free jobs wait for it
		case faultFreeJob:
			pp := &pts[d.job.point]
			pp.ffDone = true
			for _, slot := range pp.held {
				if err := build(slot); err != nil {
					return err
				}
			}
			pp.held = nil
		default:
			results[d.job.slot] = d.res
			pp := &pts[todo[d.job.slot]/sw.Reps]
			if !pp.ffDone {
				pp.held = append(pp.held, d.job.slot)
			} else if err := build(d.job.slot); err != nil {
				return err
			}
		}
		// emit what is built, in order
		for next < len(todo) {
			rec, ok := recs[next]
			if !ok {
				break
			}
			delete(recs, next)
			next++
			if err := emit(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// pointErr names point i in err, unless the sweep has a single point or
// err is about a value of the scenario's [sweep] vary list, which names its
// entry instead.
func (sw *Sweep) pointErr(i int, err error) error {
	if err == nil {
		return nil
	}
	if located, ok := sw.varyErr(sw.Points[i].Settings, err); ok {
		return located
	}
	if sw.Points[i].ID == "" {
		return err
	}
	return fmt.Errorf("sweep point %s: %w", sw.Points[i].ID, err)
}

// sweepJobs orders the jobs of a sweep. The run without protocol of each
// group of points comes before the group's first job. A point without
// duration_limit has its fault-free run one point ahead of its failure runs,
// which wait for it: the fault-free run of the next point starts while the
// runs of this one are under way. A point with a duration_limit has its
// first failure run first, as nothing waits for it and a failure run is
// usually the longest job (a fault-free run meets no failure), then its
// fault-free run, which its records wait for, then its other runs.
func sweepJobs(sw *Sweep, todo, order []int) []sweepJob {
	runs := map[int][]sweepJob{}
	for slot, k := range todo {
		pi := k / sw.Reps
		runs[pi] = append(runs[pi], sweepJob{kind: runJob, slot: slot})
	}
	var jobs []sweepJob
	based, queued := map[string]bool{}, map[int]bool{}
	add := func(pi int, js ...sweepJob) {
		if key := baseKey(sw.Points[pi].Settings); !based[key] {
			based[key] = true
			jobs = append(jobs, sweepJob{kind: baseJob, point: pi})
		}
		jobs = append(jobs, js...)
	}
	faultFree := func(pi int) {
		queued[pi] = true
		add(pi, sweepJob{kind: faultFreeJob, point: pi})
	}
	waits := func(pi int) bool { return sw.Points[pi].Scenario.DurationLimit == 0 }
	for i, pi := range order {
		if !waits(pi) {
			add(pi, runs[pi][0])
			faultFree(pi)
			add(pi, runs[pi][1:]...)
			continue
		}
		if !queued[pi] {
			faultFree(pi)
		}
		if i+1 < len(order) && waits(order[i+1]) {
			faultFree(order[i+1])
		}
		add(pi, runs[pi]...)
	}
	return jobs
}

// simulations counts what a sweep's workers simulate for the pending runs
// todo of the points in order: the runs, a fault-free run per point with a
// protocol, and a run without protocol per group of points sharing a base.
func simulations(sw *Sweep, todo, order []int, groups int) int {
	n := len(todo) + groups
	for _, pi := range order {
		if sw.Points[pi].Scenario.Protocol.Kind() != "none" {
			n++
		}
	}
	return n
}

// Prepare prepares every point in order, without running any replication,
// and passes each to each: what 'ftsim predict' needs. Points that differ
// only in their protocol share one baseline.
func (sw *Sweep) Prepare(each func(*SweepPoint, *Point) error) error {
	idx := make([]int, len(sw.Points))
	for i := range idx {
		idx[i] = i * sw.Reps
	}
	bases := newBaseCache(sw, idx)
	for i := range sw.Points {
		p, err := bases.prepare(i)
		if err == nil {
			err = bases.setBaseline(i, p, nil)
		}
		if err == nil {
			err = p.runFaultFree(nil)
		}
		if err != nil {
			return sw.pointErr(i, err)
		}
		if err := each(&sw.Points[i], p); err != nil {
			return err
		}
	}
	return nil
}

// baseCache shares the workload and the fault-free run without protocol
// among the points of a sweep that differ only in their protocol settings,
// so that comparing protocols computes each baseline once.
type baseCache struct {
	sw     *Sweep
	mu     sync.Mutex
	groups []*baseGroup // by point; nil once the point has its baseline
	n      int          // groups
}

// baseGroup is one shared base, built once and run once. It is dropped once
// every point of the group that has pending runs has its baseline.
type baseGroup struct {
	once    sync.Once // builds b
	b       *base
	err     error
	runOnce sync.Once // runs b
	runErr  error
}

// newBaseCache finds the group of each point that todo will prepare.
func newBaseCache(sw *Sweep, todo []int) *baseCache {
	c := &baseCache{sw: sw, groups: make([]*baseGroup, len(sw.Points))}
	byKey := map[string]*baseGroup{}
	for _, k := range todo {
		pi := k / sw.Reps
		key := baseKey(sw.Points[pi].Settings)
		if byKey[key] == nil {
			byKey[key] = &baseGroup{}
			c.n++
		}
		c.groups[pi] = byKey[key]
	}
	return c
}

// baseKey identifies the group of a point: its settings other than the
// protocol's.
func baseKey(set []Setting) string {
	var rest []Setting
	for _, st := range set {
		if st.Key != ProtocolKey && !strings.HasPrefix(st.Key, ProtocolKey+".") {
			rest = append(rest, st)
		}
	}
	return PointID(rest)
}

func (c *baseCache) group(i int) *baseGroup {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.groups[i]
}

// build builds the base of point i's group unless it is built.
func (c *baseCache) build(i int, g *baseGroup) error {
	g.once.Do(func() {
		defer recoverAsError(&g.err, nil)
		g.b, g.err = newBase(c.sw.Points[i].Scenario)
	})
	return g.err
}

// prepare builds point i on its group's base, without running anything.
func (c *baseCache) prepare(i int) (*Point, error) {
	sp := &c.sw.Points[i]
	if _, err := buildProtocol(sp.Scenario); err != nil {
		return nil, err
	}
	g := c.group(i)
	if err := c.build(i, g); err != nil {
		return nil, err
	}
	return pointOn(sp.Scenario, g.b)
}

// run runs the base of point i's group without protocol on meter m (the
// base job), unless it has run or is running.
func (c *baseCache) run(i int, m *meter) error {
	g := c.group(i)
	if g == nil {
		return nil // point i has its baseline: the group has run
	}
	return c.runGroup(i, g, m)
}

// runGroup runs g, point i's group, on meter m unless it has run; if it is
// running, it waits for it.
func (c *baseCache) runGroup(i int, g *baseGroup, m *meter) error {
	if err := c.build(i, g); err != nil {
		return err
	}
	g.runOnce.Do(func() {
		defer recoverAsError(&g.runErr, nil)
		g.runErr = g.b.run(c.sw.Points[i].Scenario, m)
	})
	return g.runErr
}

// setBaseline gives point p, prepared for point i, its group's baseline,
// running it on meter m unless it has run; if it is running, it waits for
// it. It is called once per point.
func (c *baseCache) setBaseline(i int, p *Point, m *meter) error {
	g := c.group(i)
	if err := c.runGroup(i, g, m); err != nil {
		return err
	}
	p.setBase(g.b)
	c.mu.Lock()
	c.groups[i] = nil
	c.mu.Unlock()
	return nil
}
