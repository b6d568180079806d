// Command ftsim simulates fault-tolerance protocols for parallel applications
// on a cluster with failing nodes and reports what they cost and save.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/cobra"

	"ftsim/internal/atomicfile"
)

func main() {
	root, prof := newRootProfiled()
	err := root.Execute()
	// after an error or an interruption too: the profile of what ran
	if perr := prof.finish(); err == nil {
		err = perr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ftsim:", err)
		os.Exit(exitCode(err))
	}
}

// exitCode is the exit status for err: 128 + the signal's number for a
// command a signal stopped (130 for Ctrl-C, 143 for SIGTERM), as a shell
// reports a process the signal killed, so that a batch script or a job
// array tells an interruption from a failure; 1 otherwise.
func exitCode(err error) int {
	var sig signalError
	if errors.As(err, &sig) {
		if s, ok := sig.sig.(syscall.Signal); ok {
			return 128 + int(s)
		}
	}
	return 1
}

// signalError is the cause of a command stopped by a signal.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return e.sig.String() + " signal received" }

// signalContext is signal.NotifyContext for SIGINT and SIGTERM, whose
// cause, once a signal came, is a signalError naming it.
func signalContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(signalError{s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// newRootProfiled is the ftsim command and the profiles its flags ask for,
// which the caller finishes once the command has returned.
func newRootProfiled() (*cobra.Command, *profiles) {
	prof := &profiles{}
	root := &cobra.Command{
		Use:           "ftsim",
		Short:         "Simulate and compare fault-tolerance protocols for parallel applications",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return prof.start()
		},
	}
	root.PersistentFlags().StringVar(&prof.cpuPath, "cpuprofile", "", "write a CPU profile to this file (go tool pprof)")
	root.PersistentFlags().StringVar(&prof.memPath, "memprofile", "", "write an allocation profile to this file at the end (go tool pprof -sample_index=alloc_space)")
	root.AddCommand(newRunCmd(), newPredictCmd(), newScenariosCmd(), newVersionCmd(),
		newSweepCmd(), newPlotCmd(), newMergeCmd())
	return root, prof
}

// profiles are the --cpuprofile and --memprofile files. Both are created
// before the command runs, so that a path that cannot be written is an
// error at once, and written when it has returned, whether it succeeded,
// failed or was interrupted.
type profiles struct {
	cpuPath, memPath string
	cpu, mem         *atomicfile.File
}

// start creates the files and starts the CPU profile; on failure it leaves
// no file and nothing for finish to do.
func (p *profiles) start() (err error) {
	defer func() {
		if err != nil {
			p.abort()
		}
	}()
	if p.memPath != "" {
		if p.mem, err = atomicfile.Create(p.memPath); err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
	}
	if p.cpuPath != "" {
		if p.cpu, err = atomicfile.Create(p.cpuPath); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(p.cpu); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	return nil
}

func (p *profiles) abort() {
	if p.cpu != nil {
		p.cpu.Abort()
	}
	if p.mem != nil {
		p.mem.Abort()
	}
	p.cpu, p.mem = nil, nil
}

// finish writes the profiles started, if any.
func (p *profiles) finish() error {
	var errs []error
	if p.cpu != nil {
		pprof.StopCPUProfile()
		if err := p.cpu.Commit(); err != nil {
			errs = append(errs, fmt.Errorf("--cpuprofile: %w", err))
		}
	}
	if p.mem != nil {
		err := pprof.Lookup("allocs").WriteTo(p.mem, 0)
		if err != nil {
			p.mem.Abort()
		} else {
			err = p.mem.Commit() // which removes the file if it fails
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--memprofile: %w", err))
		}
	}
	return errors.Join(errs...)
}
