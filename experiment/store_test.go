package experiment

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
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
	rep, err := Merge(out, append(shards, shards[1]))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 12 || rep.Missing != 0 || rep.Duplicates != 4 {
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
}
