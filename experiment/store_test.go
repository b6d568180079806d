package experiment

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// storeSweep is the sweep the store tests write: 2 points × 6 replications,
// with failures, so rows differ.
func storeSweep(t *testing.T) (*Sweep, Meta) {
	t.Helper()
	varies := []Vary{{"protocol.kind", []string{"none", "cpr"}}}
	sw, err := NewSweep(smallScenario(t), varies, 6)
	if err != nil {
		t.Fatal(err)
	}
	return sw, Meta{Base: "small.toml", BaseSHA256: "feed", Sets: []string{"seed=5"}, Varies: varies, Reps: 6}
}

// fill runs the shard's pending runs of sw into st, stopping after limit
// records (0: no limit) without closing the store, as a crash would.
func fill(t *testing.T, st *Store, sw *Sweep, shard Shard, limit int) {
	t.Helper()
	errLimit := errors.New("limit")
	n := 0
	err := sw.Run(context.Background(), RunOptions{Shard: shard, Workers: 2, Skip: st.Has,
		Prepared: func(sp *SweepPoint, p *Point) error { return st.AddPoint(NewPointInfo(sp, p)) },
	}, func(r SweepRecord) error {
		if limit > 0 && n == limit {
			return errLimit
		}
		n++
		return st.Append(r)
	})
	if err != nil && !errors.Is(err, errLimit) {
		t.Fatal(err)
	}
}

// writeStore runs a whole shard into a new store in dir and closes it.
func writeStore(t *testing.T, dir string, sw *Sweep, meta Meta) {
	t.Helper()
	st, err := OpenStore(dir, meta, false)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, st, sw, meta.Shard, 0)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// writtenStore writes storeSweep's whole sweep to a new directory and reads
// it back: the reference the store tests compare with.
func writtenStore(t *testing.T) (Meta, string, *Results) {
	t.Helper()
	sw, meta := storeSweep(t)
	dir := t.TempDir()
	writeStore(t, dir, sw, meta)
	res, err := ReadStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return meta, dir, res
}

var storeFiles = []string{RunsCSV, RunsJSONL, PointsJSONL, MetaJSON}

// sameFiles fails unless the store files of a and b are byte-identical.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	for _, f := range storeFiles {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", f, err1, err2)
		}
		if !bytes.Equal(x, y) {
			t.Fatalf("%s differs:\n%s\n---\n%s", f, x, y)
		}
	}
}

func appendFile(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
}

// A sweep killed half-way, with a partial row or a row in one file only,
// resumes to exactly the store an uninterrupted sweep writes.
func TestStoreResumeAfterCrash(t *testing.T) {
	sw, meta := storeSweep(t)
	whole := t.TempDir()
	writeStore(t, whole, sw, meta)
	if recs, err := ReadStore(whole); err != nil || len(recs.Records) != 12 || len(recs.Points) != 2 {
		t.Fatalf("uninterrupted store: %v", err)
	}
	nextRow := func(t *testing.T) SweepRecord { // the row a crash interrupts
		full, err := ReadStore(whole)
		if err != nil {
			t.Fatal(err)
		}
		return full.Records[5]
	}
	crashes := []struct {
		name  string
		crash func(t *testing.T, dir string)
	}{
		{"clean stop", func(*testing.T, string) {}},
		{"partial jsonl row", func(t *testing.T, dir string) {
			r := nextRow(t)
			appendFile(t, filepath.Join(dir, RunsJSONL), r.JSON()[:40])
		}},
		{"partial rows in both", func(t *testing.T, dir string) {
			r := nextRow(t)
			appendFile(t, filepath.Join(dir, RunsJSONL), append(r.JSON(), '\n'))
			appendFile(t, filepath.Join(dir, RunsCSV), csvRows(nil, r)[:25])
			appendFile(t, filepath.Join(dir, PointsJSONL), []byte(`{"point":"protocol.kind=cp`))
		}},
		{"row in jsonl only", func(t *testing.T, dir string) {
			r := nextRow(t)
			appendFile(t, filepath.Join(dir, RunsJSONL), append(r.JSON(), '\n'))
		}},
		{"row in csv only", func(t *testing.T, dir string) {
			appendFile(t, filepath.Join(dir, RunsCSV), csvRows(nil, nextRow(t)))
		}},
	}
	for _, c := range crashes {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := OpenStore(dir, meta, false)
			if err != nil {
				t.Fatal(err)
			}
			fill(t, st, sw, meta.Shard, 5)
			st.closeFiles() // killed: no Close, points.jsonl in preparation order
			st.unlock()     // and the kernel drops the lock
			c.crash(t, dir)
			if _, err := OpenStore(dir, meta, false); err == nil || !strings.Contains(err.Error(), "--resume") {
				t.Fatalf("reopening a store with runs without resume: %v", err)
			}
			st, err = OpenStore(dir, meta, true)
			if err != nil {
				t.Fatal(err)
			}
			done := len(st.Records())
			if done < 5 || done > 6 {
				t.Fatalf("%d runs found on resume, want 5 or 6", done)
			}
			fill(t, st, sw, meta.Shard, 0)
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			sameFiles(t, whole, dir)
		})
	}
}

func TestStoreRefusesOtherSweeps(t *testing.T) {
	sw, meta := storeSweep(t)
	dir := t.TempDir()
	st, err := OpenStore(dir, meta, false)
	if err != nil {
		t.Fatal(err)
	}
	// an opened store without runs may be overwritten: nothing is lost
	st.Close()
	st, err = OpenStore(dir, meta, false)
	if err != nil {
		t.Fatalf("reopening an empty store: %v", err)
	}
	fill(t, st, sw, meta.Shard, 1)
	st.Close()
	other := func(f func(m *Meta)) Meta {
		m := meta
		f(&m)
		return m
	}
	cases := []struct {
		name   string
		meta   Meta
		resume bool
		want   string
	}{
		{"no resume", meta, false, "already holds sweep results"},
		{"other reps", other(func(m *Meta) { m.Reps = 7 }), true, "replications differ"},
		{"other varies", other(func(m *Meta) { m.Varies = []Vary{{"protocol.kind", []string{"cpr", "none"}}} }), true, "--vary keys differ"},
		{"other sets", other(func(m *Meta) { m.Sets = nil }), true, "--set overrides differ"},
		{"other base", other(func(m *Meta) { m.BaseSHA256 = "beef" }), true, "base scenario differs"},
		{"other shard", other(func(m *Meta) { m.Shard = Shard{1, 2} }), true, "shard"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := OpenStore(dir, c.meta, c.resume); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
	// the same base under another path is the same sweep
	st, err = OpenStore(dir, other(func(m *Meta) { m.Base = "./elsewhere/small.toml" }), true)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
}

// Merging the shards of a sweep gives the bytes of the unsharded sweep.
func TestMergeShards(t *testing.T) {
	sw, meta := storeSweep(t)
	whole := t.TempDir()
	writeStore(t, whole, sw, meta)
	var shards []string
	for i := 0; i < 3; i++ {
		m := meta
		m.Shard = Shard{i, 3}
		d := t.TempDir()
		writeStore(t, d, sw, m)
		shards = append(shards, d)
	}
	out := filepath.Join(t.TempDir(), "merged")
	rep, err := Merge(out, shards)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 12 || rep.Missing != 0 {
		t.Fatalf("report %+v", rep)
	}
	sameFiles(t, whole, out)

	partial := filepath.Join(t.TempDir(), "partial")
	if rep, err := Merge(partial, shards[:2]); err != nil || rep.Runs != 8 || rep.Missing != 4 {
		t.Fatalf("two of three shards: %+v %v", rep, err)
	}
	if _, err := Merge(out, shards); err == nil || !strings.Contains(err.Error(), "already holds") {
		t.Fatalf("merging into a full store: %v", err)
	}
	m := meta
	m.Reps = 2
	sw2, err := NewSweep(smallScenario(t), m.Varies, m.Reps)
	if err != nil {
		t.Fatal(err)
	}
	small := t.TempDir()
	writeStore(t, small, sw2, m)
	if _, err := Merge(t.TempDir(), []string{whole, small}); err == nil || !strings.Contains(err.Error(), "different sweeps") {
		t.Fatalf("merging different sweeps: %v", err)
	}
	if _, err := Merge(t.TempDir(), []string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), MetaJSON) {
		t.Fatalf("merging a directory that is no store: %v", err)
	}
}

// A malformed complete line is an error naming the file and line, not a run
// silently dropped.
func TestReadStoreRejectsCorruptLines(t *testing.T) {
	sw, meta := storeSweep(t)
	dir := t.TempDir()
	writeStore(t, dir, sw, meta)
	appendFile(t, filepath.Join(dir, RunsJSONL), []byte("{\"point\":\"protocol.kind=none\",\"rep\":\n"))
	if _, err := ReadStore(dir); err == nil || !strings.Contains(err.Error(), RunsJSONL+":13") {
		t.Fatalf("error %v, want it to name %s:13", err, RunsJSONL)
	}
	dir = t.TempDir()
	writeStore(t, dir, sw, meta)
	appendFile(t, filepath.Join(dir, RunsJSONL), []byte("{\"point\":\"protocol.kind=mlog\",\"rep\":0}\n"))
	if _, err := ReadStore(dir); err == nil || !strings.Contains(err.Error(), "not a point of the sweep") {
		t.Fatalf("unknown point: %v", err)
	}
	// Two runs on one line: the second used to be dropped without a word.
	dir = t.TempDir()
	writeStore(t, dir, sw, meta)
	appendFile(t, filepath.Join(dir, RunsJSONL), []byte("{\"point\":\"protocol.kind=none\",\"rep\":0} {\"point\":\"protocol.kind=none\",\"rep\":1}\n"))
	if _, err := ReadStore(dir); err == nil || !strings.Contains(err.Error(), RunsJSONL+":13: more after the JSON value that ends at byte 38") {
		t.Fatalf("two values on a line: %v", err)
	}
	dir = t.TempDir()
	writeStore(t, dir, sw, meta)
	appendFile(t, filepath.Join(dir, MetaJSON), []byte("}\n"))
	if _, err := ReadStore(dir); err == nil || !strings.Contains(err.Error(), MetaJSON+": more after the JSON value") {
		t.Fatalf("meta.json with a stray brace: %v", err)
	}
}

// A run written twice (runs.jsonl concatenated by hand, say) counts once
// when the store is read, as when it is resumed or merged: a plot would
// otherwise weigh it double.
func TestReadStoreCountsARunOnce(t *testing.T) {
	_, dir, want := writtenStore(t)
	runs := filepath.Join(dir, RunsJSONL)
	b, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, runs, b[:bytes.IndexByte(b, '\n')+1])
	got, err := ReadStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("with a run written twice the store reads %d runs, want the %d of the clean store", len(got.Records), len(want.Records))
	}
}

// Overlapping stores are refused, not deduplicated: the same run in two
// stores may come from two builds, and keeping either one would hide it.
// A refused merge leaves nothing behind.
func TestMergeRefusesOverlap(t *testing.T) {
	sw, meta := storeSweep(t)
	store := func(s Shard) string {
		m := meta
		m.Shard = s
		d := t.TempDir()
		writeStore(t, d, sw, m)
		return d
	}
	s03, s13, s23 := store(Shard{0, 3}), store(Shard{1, 3}), store(Shard{2, 3})
	s02, s12, s14, s34 := store(Shard{0, 2}), store(Shard{1, 2}), store(Shard{1, 4}), store(Shard{3, 4})
	whole := store(Shard{})
	for _, c := range []struct {
		name string
		dirs []string
		want string // "" = merges
	}{
		{"all shards", []string{s03, s13, s23}, ""},
		{"mixed counts without overlap", []string{s02, s14, s34}, ""},
		{"shard given twice", []string{s03, s13, s23, s13}, "overlap"},
		{"whole and a shard", []string{whole, s13}, "overlap"},
		{"shards of different counts", []string{s03, s02}, "overlap"},
		{"whole and its halves", []string{s02, s12, whole}, "overlap"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, err := Merge(out, c.dirs)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				sameFiles(t, whole, out)
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
				t.Fatalf("a refused merge left %s behind: %v", out, serr)
			}
		})
	}
}

// A merge interrupted before its rename leaves the output directory as it
// was, so running it again succeeds; a directory holding anything else is
// refused rather than mixed with.
func TestMergeOutput(t *testing.T) {
	sw, meta := storeSweep(t)
	whole := t.TempDir()
	writeStore(t, whole, sw, meta)

	empty := t.TempDir() // an existing empty directory is fine
	if _, err := Merge(empty, []string{whole}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, whole, empty)

	// what a merge killed half-way through writing leaves: its temporary
	// directory inside the output, none of the output
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(filepath.Join(out, mergeTmp+"123"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, mergeTmp+"123", RunsJSONL), []byte("{\"point\""), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(out, []string{whole}); err != nil {
		t.Fatalf("merge after an interrupted one: %v", err)
	}
	sameFiles(t, whole, out)
	if ents, err := os.ReadDir(out); err != nil || len(ents) != len(storeFiles) {
		t.Fatalf("the merged store holds %d files, want %d: %v", len(ents), len(storeFiles), err)
	}

	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(other, []string{whole}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("merging into a directory holding other files: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(other, "notes.txt")); err != nil || string(b) != "mine" {
		t.Fatalf("the other files were touched: %q %v", b, err)
	}
}

// Two sweeps writing one store at once would interleave their rows and
// repeat runs: the second is refused while the first holds the store, and
// the store is free again once it is closed.
func TestStoreRefusesConcurrentWriters(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	sw, meta := storeSweep(t)
	dir := t.TempDir()
	st, err := OpenStore(dir, meta, false)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, st, sw, meta.Shard, 3)
	for _, resume := range []bool{false, true} {
		if _, err := OpenStore(dir, meta, resume); err == nil || !strings.Contains(err.Error(), "another ftsim sweep is writing it") {
			t.Fatalf("resume=%v: a second writer: %v", resume, err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = OpenStore(dir, meta, true)
	if err != nil {
		t.Fatalf("after the first writer closed: %v", err)
	}
	fill(t, st, sw, meta.Shard, 0)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	whole := t.TempDir()
	writeStore(t, whole, sw, meta)
	sameFiles(t, whole, dir)
}

// Runs appended as they finish, out of run order, are read back in run
// order, and Close leaves the store an in-order sweep writes.
func TestStoreSortsRunsOnClose(t *testing.T) {
	meta, whole, res := writtenStore(t)
	dir := t.TempDir()
	st, err := OpenStore(dir, meta, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(res.Points) - 1; i >= 0; i-- {
		if err := st.AddPoint(res.Points[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := len(res.Records) - 1; i >= 0; i-- {
		if err := st.Append(res.Records[i]); err != nil {
			t.Fatal(err)
		}
	}
	open, err := ReadStore(dir) // as a plot of a running or killed sweep reads it
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(open.Records, res.Records, func(a, b SweepRecord) bool { return a.Key() == b.Key() }) {
		t.Fatal("ReadStore of a store written out of order does not give run order")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, whole, dir)
	if recs := st.Records(); !sortedRuns(recs, st.order) {
		t.Fatal("Records after Close are not in run order")
	}
}

// A run written to runs.jsonl stays stored when its CSV row fails to be
// written: Close, putting the runs in order, must not drop it.
func TestStoreKeepsRunWhoseCSVRowFailed(t *testing.T) {
	meta, _, res := writtenStore(t)
	dir := t.TempDir()
	st, err := OpenStore(dir, meta, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{2, 1} { // out of order, as runs finish
		if err := st.Append(res.Records[i]); err != nil {
			t.Fatal(err)
		}
	}
	st.csv.Close() // CSV writes fail from here on; syncs still succeed
	if st.csv, err = os.Open(filepath.Join(dir, RunsCSV)); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(res.Records[0]); err == nil {
		t.Fatal("a failed CSV write was not reported")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Records) != 3 || got.Records[0].Key() != res.Records[0].Key() {
		t.Fatalf("stored %d runs, want all 3, in order", len(got.Records))
	}
}
