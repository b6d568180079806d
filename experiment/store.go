package experiment

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"ftsim/internal/atomicfile"
)

// Files of a result store directory.
const (
	RunsCSV     = "runs.csv"     // one row per finished run: point, then Columns()
	RunsJSONL   = "runs.jsonl"   // the same runs as JSON lines; the store's source of truth
	MetaJSON    = "meta.json"    // the sweep definition (Meta)
	PointsJSONL = "points.jsonl" // per point: fault-free figures and predictions (PointInfo)
	LockFile    = ".lock"        // locked while a sweep writes the store
)

// errLocked says that another process is writing the store.
var errLocked = errors.New("another ftsim sweep is writing it (two jobs given the same --out?); wait for it to end or choose another --out")

// storeFormat is the version of the store layout written in meta.json.
const storeFormat = 1

// syncEvery bounds how often the store fsyncs. Every row is written with one
// write call, so a killed process loses no row and leaves at most a partial
// last line, which reopening removes; the fsync only matters for an OS crash
// or power loss, where losing the last second of rows is cheaper than an
// fsync per row on sweeps of short runs.
const syncEvery = time.Second

// Meta is the definition of the sweep a store holds (meta.json), so that a
// resumed or merged store is known to continue the same experiment.
type Meta struct {
	Format int `json:"format"`
	// Base is the scenario file or embedded scenario name as given;
	// BaseSHA256 the digest of its text (a file's, or the embedded
	// scenario's), which is what identifies it: the same file may be named
	// by another path on resume, and an embedded scenario may change with
	// ftsim's version.
	Base       string   `json:"base"`
	BaseSHA256 string   `json:"base_sha256,omitempty"`
	Sets       []string `json:"sets,omitempty"` // overrides applied to every point
	Varies     []Vary   `json:"varies"`
	Reps       int      `json:"reps"`
	Shard      Shard    `json:"shard"`
}

// SameSweep returns nil when m and o define the same sweep, shards aside,
// and otherwise an error saying what differs.
func (m *Meta) SameSweep(o *Meta) error {
	base := m.Base == o.Base
	if m.BaseSHA256 != "" || o.BaseSHA256 != "" {
		base = m.BaseSHA256 == o.BaseSHA256
	}
	switch {
	case !base:
		return fmt.Errorf("the base scenario differs (stored %s, sha256 %.12s; given %s, sha256 %.12s)", m.Base, m.BaseSHA256, o.Base, o.BaseSHA256)
	case !slices.Equal(m.Sets, o.Sets):
		return fmt.Errorf("the --set overrides differ (stored %q, given %q)", m.Sets, o.Sets)
	case !slices.EqualFunc(m.Varies, o.Varies, func(a, b Vary) bool { return a.Key == b.Key && slices.Equal(a.Values, b.Values) }):
		return fmt.Errorf("the --vary keys differ (stored %s, given %s)", varyList(m.Varies), varyList(o.Varies))
	case m.Reps != o.Reps:
		return fmt.Errorf("the replications differ (stored %d, given %d)", m.Reps, o.Reps)
	}
	return nil
}

func varyList(vs []Vary) string {
	var b bytes.Buffer
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v.String())
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// StoredPrediction is a Prediction as written in points.jsonl.
type StoredPrediction struct {
	Name     string  `json:"name"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Formula  string  `json:"formula,omitempty"`
	Inputs   string  `json:"inputs,omitempty"`
	Makespan bool    `json:"makespan,omitempty"`
}

// PointInfo is what a sweep knows about a point besides its runs: the
// fault-free figures and the analytical predictions, which figures plot
// beside the simulated values.
type PointInfo struct {
	Point    string `json:"point"`
	Protocol string `json:"protocol"` // the label of a [[protocols]] entry, else the kind
	// Kind is the protocol's kind, so that figures draw a labelled entry
	// in its kind's style; empty in stores written before it was recorded.
	Kind          string  `json:"kind,omitempty"`
	Workload      string  `json:"workload"`
	Nodes         int     `json:"nodes"`
	NodeMTBFS     float64 `json:"node_mtbf_s"`     // 0 when failures are not a renewal process
	PlatformMTBFS float64 `json:"platform_mtbf_s"` // node MTBF / nodes
	BaselineS     float64 `json:"baseline_s"`
	FaultFreeS    float64 `json:"fault_free_s"`
	// CommS is the modeled communication time per node of the fault-free
	// run: its application bytes per node over the bandwidth. Latency is
	// left out: messages overlap in flight, so summing their latencies
	// would count the same wait many times.
	CommS       float64            `json:"comm_s"`
	Predictions []StoredPrediction `json:"predictions"`
	// Published are the scenario's [[published]] figures of this point
	// (those that are not ratios), for figures to draw beside the results.
	Published []PublishedValue `json:"published,omitempty"`
	// Caveat says that the point's protocol cannot recover on its cluster
	// (see Caveat); empty when it can.
	Caveat string `json:"caveat,omitempty"`
}

// PublishedValue is a published figure of a point.
type PublishedValue struct {
	Source string  `json:"source"`
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
}

// CommCompRatio is the communication/computation ratio of the point,
// taking computation as the fault-free time not spent communicating (exact
// for bulk-synchronous steps that do not overlap the two), or NaN when
// communication fills the whole time.
func (pi *PointInfo) CommCompRatio() float64 {
	comp := pi.BaselineS - pi.CommS
	if comp <= 0 {
		return math.NaN()
	}
	return pi.CommS / comp
}

// NewPointInfo describes a prepared point.
func NewPointInfo(sp *SweepPoint, p *Point) PointInfo {
	s := p.Scenario
	pi := PointInfo{Point: sp.ID, Protocol: s.Protocol.Label(), Kind: s.Protocol.Kind(), Workload: s.Workload.Kind(), Nodes: s.Cluster.Nodes,
		BaselineS: p.Baseline.Seconds(), FaultFreeS: p.FaultFree.Seconds(), PlatformMTBFS: PlatformMTBF(s).Seconds(),
		Predictions: []StoredPrediction{}, Caveat: Caveat(s)}
	if pi.PlatformMTBFS > 0 {
		pi.NodeMTBFS = s.Failures.NodeMTBF.Seconds()
	}
	if n := float64(s.Cluster.Nodes); n > 0 && s.Network.Bandwidth > 0 {
		st := &p.FaultFreeStats // application traffic is the same with or without protocol
		pi.CommS = float64(st.AppBytes) / n / s.Network.Bandwidth.Float64()
	}
	for _, x := range p.Predictions() {
		pi.Predictions = append(pi.Predictions, StoredPrediction(x))
	}
	for _, pub := range s.Published {
		if pub.RatioTo == "" && sp.hasSettings(pub.Point) {
			pi.Published = append(pi.Published, PublishedValue{pub.Source, pub.Metric, pub.Value})
		}
	}
	return pi
}

// Results is the content of a result store.
type Results struct {
	Meta    Meta
	Records []SweepRecord // in run order
	Points  []PointInfo   // in point order
}

// Store is a result directory being written by a sweep. Its methods are
// safe for concurrent use.
type Store struct {
	dir      string
	meta     Meta
	order    map[string]int // point ID → index
	mu       sync.Mutex
	jsonl    *os.File
	csv      *os.File
	pointsF  *os.File
	recs     []SweepRecord
	have     map[RunKey]bool
	points   map[string]PointInfo
	lastSync time.Time
	closed   bool
	unlock   func() error // releases the store's lock
}

// OpenStore opens dir for the sweep meta describes, locking it until Close
// so that a second sweep given the same directory is refused instead of
// interleaving its rows with this one's. A new or empty store is created.
// A store holding runs is an error unless resume is set; then
// it must hold the same sweep and shard, a partial last line left by an
// interrupted write is cut off, runs.csv is rewritten from runs.jsonl (the
// two agree even if the crash fell between their writes), and the runs
// already present are reported by Has so the sweep skips them.
func OpenStore(dir string, meta Meta, resume bool) (*Store, error) {
	meta.Format = storeFormat
	meta.Shard = meta.Shard.norm()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("result store: %w", err)
	}
	unlock, err := lockDir(dir)
	if errors.Is(err, errLocked) {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err != nil {
		return nil, err
	}
	st, err := openStore(dir, meta, resume, unlock)
	if err != nil {
		unlock()
		return nil, err
	}
	return st, nil
}

// openStore is OpenStore on a locked dir.
func openStore(dir string, meta Meta, resume bool, unlock func() error) (*Store, error) {
	st := &Store{dir: dir, meta: meta, order: pointOrder(meta.Varies), have: map[RunKey]bool{}, points: map[string]PointInfo{}, unlock: unlock}
	full, err := holdsRuns(dir)
	if err != nil {
		return nil, err
	}
	if full && !resume {
		return nil, fmt.Errorf("%s already holds sweep results: pass --resume to continue that sweep, or choose another --out", dir)
	}
	if full {
		old, err := readMeta(dir)
		if err != nil {
			return nil, err
		}
		if err := old.SameSweep(&meta); err != nil {
			return nil, fmt.Errorf("%s: cannot resume: it holds another sweep: %w", dir, err)
		}
		if old.Shard.norm() != meta.Shard {
			return nil, fmt.Errorf("%s: cannot resume: it holds shard %s, given shard %s", dir, old.Shard, meta.Shard)
		}
		recs, err := readRuns(dir, true, &meta)
		if err != nil {
			return nil, err
		}
		pts, err := readPoints(dir, true, st.order)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			st.have[r.Key()] = true
		}
		st.recs = recs
		for _, p := range pts {
			st.points[p.Point] = p
		}
		if err := atomicfile.Write(filepath.Join(dir, RunsCSV), csvBytes(st.recs)); err != nil {
			return nil, err
		}
	} else {
		if err := atomicfile.Write(filepath.Join(dir, RunsJSONL), nil); err != nil {
			return nil, err
		}
		if err := atomicfile.Write(filepath.Join(dir, RunsCSV), csvBytes(nil)); err != nil {
			return nil, err
		}
		if err := atomicfile.Write(filepath.Join(dir, PointsJSONL), nil); err != nil {
			return nil, err
		}
	}
	if err := writeMeta(dir, &meta); err != nil {
		return nil, err
	}
	open := func(name string) (*os.File, error) {
		return os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	}
	if st.jsonl, err = open(RunsJSONL); err == nil {
		if st.csv, err = open(RunsCSV); err == nil {
			st.pointsF, err = open(PointsJSONL)
		}
	}
	if err != nil {
		st.closeFiles()
		return nil, err
	}
	st.lastSync = time.Now()
	return st, nil
}

// Has reports whether run k is in the store.
func (st *Store) Has(k RunKey) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.have[k]
}

// Records returns the runs in the store: those found on opening, then those
// appended, as they finished; in run order once the store is closed.
func (st *Store) Records() []SweepRecord {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.recs)
}

// Points returns the point descriptions in the store, in point order.
func (st *Store) Points() []PointInfo {
	st.mu.Lock()
	defer st.mu.Unlock()
	return sortedPoints(st.points, st.order)
}

// Append writes a finished run to runs.jsonl and then runs.csv, each row in
// one write call. jsonl comes first because it is the source of truth: a
// crash between the two writes leaves a run that reopening restores to the
// CSV.
func (st *Store) Append(r SweepRecord) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return errors.New("store: append after close")
	}
	if _, err := st.jsonl.Write(append(r.JSON(), '\n')); err != nil {
		return err
	}
	// stored from here on, even if the CSV write fails: Close rewrites
	// runs.jsonl from recs
	st.have[r.Key()] = true
	st.recs = append(st.recs, r)
	if _, err := st.csv.Write(csvRows(nil, r)); err != nil {
		return err
	}
	if time.Since(st.lastSync) >= syncEvery {
		st.lastSync = time.Now()
		if err := st.jsonl.Sync(); err != nil {
			return err
		}
		return st.csv.Sync()
	}
	return nil
}

// AddPoint records a point's description, once per point.
func (st *Store) AddPoint(pi PointInfo) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, ok := st.points[pi.Point]; ok || st.closed {
		return nil
	}
	b, err := json.Marshal(&pi)
	if err != nil {
		return fmt.Errorf("point %s: %w", pi.Point, err)
	}
	if _, err := st.pointsF.Write(append(b, '\n')); err != nil {
		return err
	}
	st.points[pi.Point] = pi
	// Synced at once (one fsync per point), before any run of the point is
	// appended: after an OS crash a resume never prepares a point whose runs
	// are all stored, so a lost description would stay lost.
	return st.pointsF.Sync()
}

// Close syncs the store and rewrites points.jsonl in point order, since
// points are prepared in whatever order the workers reach them, and the runs
// in run order if they were appended as they finished: the store of a sweep
// is then the same whatever the number of workers and interruptions.
func (st *Store) Close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil
	}
	st.closed = true
	err := errors.Join(st.jsonl.Sync(), st.csv.Sync())
	err = errors.Join(err, st.closeFiles())
	if err == nil && !sortedRuns(st.recs, st.order) {
		sortRuns(st.recs, st.order)
		// runs.jsonl first, as in Append: a crash between the two leaves
		// runs.csv for a resume to rewrite
		var jl bytes.Buffer
		for i := range st.recs {
			jl.Write(st.recs[i].JSON())
			jl.WriteByte('\n')
		}
		err = atomicfile.Write(filepath.Join(st.dir, RunsJSONL), jl.Bytes())
		if err == nil {
			err = atomicfile.Write(filepath.Join(st.dir, RunsCSV), csvBytes(st.recs))
		}
	}
	if err == nil {
		err = atomicfile.Write(filepath.Join(st.dir, PointsJSONL), pointsBytes(sortedPoints(st.points, st.order)))
	}
	return errors.Join(err, st.unlock())
}

func (st *Store) closeFiles() error {
	var err error
	for _, f := range []*os.File{st.jsonl, st.csv, st.pointsF} {
		if f != nil {
			err = errors.Join(err, f.Close())
		}
	}
	return err
}

// ReadStore reads a result store without changing it. A partial last line
// (a write interrupted by a crash) is ignored; any other malformed line is
// an error naming the file and line.
func ReadStore(dir string) (*Results, error) {
	meta, err := readMeta(dir)
	if err != nil {
		return nil, err
	}
	recs, err := readRuns(dir, false, meta)
	if err != nil {
		return nil, err
	}
	sortRuns(recs, pointOrder(meta.Varies)) // a store being written holds them as they finished
	pts, err := readPoints(dir, false, pointOrder(meta.Varies))
	if err != nil {
		return nil, err
	}
	return &Results{Meta: *meta, Records: recs, Points: pts}, nil
}

// MergeReport says what Merge did.
type MergeReport struct {
	Runs, Missing int
}

// Merge combines the stores of the shards of one sweep into a new store out,
// in run order, so that merging all shards gives the same bytes as running
// the sweep unsharded. The inputs must hold the same sweep and must not
// overlap: a run found in two stores (the same shard twice, or shards of
// different counts) is an error rather than a copy silently chosen, since
// the two may come from different builds. out must be new or empty; the
// merged files are written in full before they are moved into it, so that
// an interrupted merge can simply be run again.
func Merge(out string, dirs []string) (MergeReport, error) {
	var rep MergeReport
	if len(dirs) == 0 {
		return rep, errors.New("merge: no store to merge")
	}
	var meta *Meta
	var all []SweepRecord
	from := map[RunKey]int{} // run → the index in dirs of the store holding it
	shards := make([]Shard, len(dirs))
	pts := map[string]PointInfo{}
	for i, d := range dirs {
		r, err := ReadStore(d)
		if err != nil {
			return rep, err
		}
		if meta == nil {
			meta = &r.Meta
		} else if err := meta.SameSweep(&r.Meta); err != nil {
			return rep, fmt.Errorf("merge: %s and %s hold different sweeps: %w", dirs[0], d, err)
		}
		shards[i] = r.Meta.Shard
		for _, rec := range r.Records {
			if j, ok := from[rec.Key()]; ok {
				return rep, fmt.Errorf("merge: %s (shard %s) and %s (shard %s) overlap: both hold run %d of point %q; give each shard once",
					dirs[j], shards[j], d, shards[i], rec.Rep, rec.Point)
			}
			from[rec.Key()] = i
			all = append(all, rec)
		}
		for _, p := range r.Points {
			if _, ok := pts[p.Point]; !ok {
				pts[p.Point] = p
			}
		}
	}
	m := *meta
	m.Shard = Shard{0, 1}
	order := pointOrder(m.Varies)
	sortRuns(all, order)
	rep.Runs = len(all)
	rep.Missing = len(order)*m.Reps - len(all)

	if err := checkEmpty(out); err != nil {
		return rep, err
	}
	var jl bytes.Buffer
	for i := range all {
		jl.Write(all[i].JSON())
		jl.WriteByte('\n')
	}
	m.Format = storeFormat
	meta1, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		return rep, err
	}
	files := map[string][]byte{
		RunsJSONL:   jl.Bytes(),
		RunsCSV:     csvBytes(all),
		PointsJSONL: pointsBytes(sortedPoints(pts, order)),
		MetaJSON:    append(meta1, '\n'),
	}
	return rep, writeDirAtomic(out, files)
}

// mergeTmp starts the name of the directory a merge writes its files into
// inside the output directory before moving them into place.
const mergeTmp = ".merge-tmp"

// checkEmpty returns nil when dir does not exist or is empty but for what
// an interrupted merge left there, which it removes.
func checkEmpty(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), mergeTmp) {
			if full, _ := holdsRuns(dir); full {
				return fmt.Errorf("merge: %s already holds sweep results; choose a new or empty directory", dir)
			}
			return fmt.Errorf("merge: %s is not empty; choose a new or empty directory", dir)
		}
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
	}
	return nil
}

// writeDirAtomic fills the new or empty directory dir with files, meta.json
// last. The files are written and synced in a temporary directory inside dir
// first (the same file system, even when dir is a mount point) and then
// renamed into place, so that a merge interrupted while writing leaves only
// that directory, which the next merge into dir removes.
func writeDirAtomic(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("result store: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, mergeTmp+"*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	names := make([]string, 0, len(files))
	for name := range files {
		if name != MetaJSON {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	names = append(names, MetaJSON) // last: a store without it is no store
	for _, name := range names {
		if err := writeSynced(filepath.Join(tmp, name), files[name]); err != nil {
			return err
		}
	}
	for _, name := range names {
		if err := os.Rename(filepath.Join(tmp, name), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// writeSynced writes a new file and syncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// pointOrder maps each point ID of varies to its index.
func pointOrder(varies []Vary) map[string]int {
	m := map[string]int{}
	for i, id := range PointIDs(varies) {
		m[id] = i
	}
	return m
}

// sortRuns orders runs by point, then replication: the run order of a sweep.
func sortRuns(recs []SweepRecord, order map[string]int) {
	slices.SortStableFunc(recs, runOrder(order))
}

// sortedRuns reports whether recs are in run order.
func sortedRuns(recs []SweepRecord, order map[string]int) bool {
	return slices.IsSortedFunc(recs, runOrder(order))
}

// runOrder compares runs by point (in order), then replication.
func runOrder(order map[string]int) func(a, b SweepRecord) int {
	return func(a, b SweepRecord) int {
		if c := cmp.Compare(order[a.Point], order[b.Point]); c != 0 {
			return c
		}
		return cmp.Compare(a.Rep, b.Rep)
	}
}

func sortedPoints(m map[string]PointInfo, order map[string]int) []PointInfo {
	out := make([]PointInfo, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return order[out[i].Point] < order[out[j].Point] })
	return out
}

// holdsRuns reports whether dir holds at least one stored run.
func holdsRuns(dir string) (bool, error) {
	for _, name := range []string{RunsJSONL, RunsCSV} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return false, err
		}
		if name == RunsCSV {
			_, b, _ = bytes.Cut(b, []byte{'\n'}) // the header alone is no run
		}
		if len(bytes.TrimSpace(b)) > 0 {
			return true, nil
		}
	}
	return false, nil
}

func readMeta(dir string) (*Meta, error) {
	path := filepath.Join(dir, MetaJSON)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no %s: not a store written by 'ftsim sweep'", dir, MetaJSON)
		}
		return nil, err
	}
	var m Meta
	if err := strictUnmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Format != storeFormat {
		return nil, fmt.Errorf("%s: store format %d, this ftsim reads format %d", path, m.Format, storeFormat)
	}
	if m.Reps < 1 {
		return nil, fmt.Errorf("%s: reps must be ≥ 1, got %d", path, m.Reps)
	}
	return &m, nil
}

func writeMeta(dir string, m *Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, MetaJSON), append(b, '\n'))
}

// completeLines returns the complete lines of a JSON-lines file and the
// length of the prefix they occupy; a last line without its newline is an
// interrupted write. A missing file has no lines.
func completeLines(path string) ([][]byte, int, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	n := bytes.LastIndexByte(b, '\n') + 1
	var lines [][]byte
	for line := range bytes.Lines(b[:n]) {
		lines = append(lines, line)
	}
	return lines, n, n < len(b), nil
}

// readJSONL decodes every complete line of path with decode; with truncate
// it cuts a partial last line off the file.
func readJSONL(path string, truncate bool, decode func(line []byte, where string) error) error {
	lines, n, partial, err := completeLines(path)
	if err != nil {
		return err
	}
	if partial && truncate {
		if err := os.Truncate(path, int64(n)); err != nil {
			return err
		}
	}
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := decode(line, fmt.Sprintf("%s:%d", path, i+1)); err != nil {
			return err
		}
	}
	return nil
}

// strictUnmarshal decodes the one JSON value of b into v, refusing unknown
// fields and anything after the value: a line holding a record and more
// (two runs written as one by a hand edit or a bad merge) would otherwise
// lose the rest silently.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("more after the JSON value that ends at byte %d", end)
	}
	return nil
}

// readRuns reads runs.jsonl, checking that every run belongs to the sweep.
// A run found twice (a hand-concatenated file) is kept once, the first copy,
// so that a resume, a merge and a plot of the store all count the same runs.
func readRuns(dir string, truncate bool, meta *Meta) ([]SweepRecord, error) {
	order := pointOrder(meta.Varies)
	var recs []SweepRecord
	seen := map[RunKey]bool{}
	err := readJSONL(filepath.Join(dir, RunsJSONL), truncate, func(line []byte, where string) error {
		var r SweepRecord
		if err := strictUnmarshal(line, &r); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if _, ok := order[r.Point]; !ok {
			return fmt.Errorf("%s: point %q is not a point of the sweep in %s", where, r.Point, MetaJSON)
		}
		if r.Rep < 0 || r.Rep >= meta.Reps {
			return fmt.Errorf("%s: rep %d outside [0, %d)", where, r.Rep, meta.Reps)
		}
		if !seen[r.Key()] {
			seen[r.Key()] = true
			recs = append(recs, r)
		}
		return nil
	})
	return recs, err
}

// readPoints reads points.jsonl, one description per point.
func readPoints(dir string, truncate bool, order map[string]int) ([]PointInfo, error) {
	m := map[string]PointInfo{}
	err := readJSONL(filepath.Join(dir, PointsJSONL), truncate, func(line []byte, where string) error {
		var p PointInfo
		if err := strictUnmarshal(line, &p); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if _, ok := order[p.Point]; !ok {
			return fmt.Errorf("%s: point %q is not a point of the sweep in %s", where, p.Point, MetaJSON)
		}
		if _, ok := m[p.Point]; !ok {
			m[p.Point] = p
		}
		return nil
	})
	return sortedPoints(m, order), err
}

// csvRows appends the CSV encoding of recs to b.
func csvRows(b []byte, recs ...SweepRecord) []byte {
	buf := bytes.NewBuffer(b)
	w := csv.NewWriter(buf)
	for i := range recs {
		w.Write(recs[i].Row()) // a bytes.Buffer does not fail
	}
	w.Flush()
	return buf.Bytes()
}

// csvBytes is the whole runs.csv for recs: the header, then a row per run.
func csvBytes(recs []SweepRecord) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(SweepColumns())
	w.Flush()
	return csvRows(buf.Bytes(), recs...)
}

func pointsBytes(pts []PointInfo) []byte {
	var buf bytes.Buffer
	for i := range pts {
		b, _ := json.Marshal(&pts[i]) // finite floats: predictions drop NaN and Inf
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}
