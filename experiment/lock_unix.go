//go:build unix

package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive lock on dir, failing at once with errLocked
// when another store holds it. flock rather than a lock file's existence:
// the kernel releases it when the process dies, however it dies, so a
// killed sweep never leaves a stale lock behind for --resume to trip on.
func lockDir(dir string) (unlock func() error, err error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return f.Close, nil
}
