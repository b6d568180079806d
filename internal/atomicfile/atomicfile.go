// Package atomicfile writes a file through a temporary file beside it and a
// rename, so that a reader, a crash or an interruption sees the file's old
// content or its new content, never part of it.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a temporary file that Commit puts in place of its path.
type File struct {
	*os.File
	path string
	done bool
}

// Create opens a temporary file in path's directory. It fails at once when
// path is a directory or its directory cannot take the file, so that a long
// computation can check where its result goes before it starts.
func Create(path string) (*File, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("cannot write %s: it is a directory", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the temporary name would only confuse
		}
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	return &File{File: tmp, path: path}, nil
}

// Commit syncs and closes the file and renames it to its path, readable by
// all as a file os.Create makes would be. On failure it removes the
// temporary file and the path keeps its old content.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: " + f.path + " committed or aborted already")
	}
	f.done = true
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// Abort closes and removes the temporary file, leaving the path as it was.
// After Commit it does nothing, so it can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// Write replaces path with data.
func Write(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
