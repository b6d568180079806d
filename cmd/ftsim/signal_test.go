package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// A command stopped by a signal exits as a shell reports a process the
// signal killed (128 + its number), however deep the error wraps the cause;
// any other error exits 1.
func TestExitCode(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(signalError{syscall.SIGTERM})
	stored := fmt.Errorf("%w\n3 of 9 runs are stored", interrupted(ctx))
	for _, c := range []struct {
		err  error
		want int
	}{
		{interrupted(ctx), 143},
		{stored, 143},
		{fmt.Errorf("interrupted: %w", signalError{os.Interrupt}), 130},
		{fmt.Errorf("interrupted: %w", context.Canceled), 1},
		{errors.New("x.toml:3: unknown key"), 1},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exit code of %q: %d, want %d", c.err, got, c.want)
		}
	}
}
