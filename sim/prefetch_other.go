//go:build !amd64

package sim

// prefetch does nothing where no prefetch instruction is wired in.
func prefetch(uintptr) {}
