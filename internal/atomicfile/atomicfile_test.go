package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Write replaces a file's content and leaves nothing else in its directory.
func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	for _, content := range []string{"old\n", "new\n"} {
		if err := Write(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != content {
			t.Fatalf("read %q, %v; want %q", b, err, content)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want -rw-r--r--", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want the file alone", len(entries))
	}
}

// A file being written is not at its path until committed; an aborted one
// leaves the old content and no temporary file.
func TestCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.json")
	if err := Write(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half")
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("before the commit the path holds %q, want the old content", b)
	}
	f.Abort()
	f.Abort() // twice is harmless
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("after an abort the path holds %q, want the old content", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d entries after an abort, want the file alone", len(entries))
	}
	if err := f.Commit(); err == nil {
		t.Error("a commit after an abort succeeded")
	}

	f, err = Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // deferred after a commit: nothing
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("after the commit the path holds %q, want the new content", b)
	}
}

// Create fails at once, naming the path the user gave, when it is a
// directory or its directory does not exist.
func TestCreateRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ path, want string }{
		{dir, "cannot write " + dir + ": it is a directory"},
		{filepath.Join(dir, "missing", "t.json"), "cannot write " + filepath.Join(dir, "missing", "t.json") + ": no such file or directory"},
	} {
		f, err := Create(tc.path)
		if err == nil {
			f.Abort()
			t.Fatalf("Create(%q) succeeded", tc.path)
		}
		if err.Error() != tc.want || strings.Contains(err.Error(), ".tmp") {
			t.Errorf("Create(%q) = %v, want %q", tc.path, err, tc.want)
		}
	}
}
