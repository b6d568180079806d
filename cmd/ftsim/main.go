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
)

func main() {
	if err := newRoot().Execute(); err != nil {
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

func newRoot() *cobra.Command {
	var cpuProfile, memProfile string
	var stopProfile func()
	root := &cobra.Command{
		Use:           "ftsim",
		Short:         "Simulate and compare fault-tolerance protocols for parallel applications",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if cpuProfile == "" {
				return nil
			}
			f, err := os.Create(cpuProfile)
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return err
			}
			stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
			return nil
		},
		PersistentPostRunE: func(*cobra.Command, []string) error {
			if stopProfile != nil {
				stopProfile()
			}
			if memProfile == "" {
				return nil
			}
			f, err := os.Create(memProfile)
			if err != nil {
				return err
			}
			defer f.Close()
			return pprof.Lookup("allocs").WriteTo(f, 0)
		},
	}
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile to this file (go tool pprof)")
	root.PersistentFlags().StringVar(&memProfile, "memprofile", "", "write an allocation profile to this file at the end (go tool pprof -sample_index=alloc_space)")
	root.AddCommand(newRunCmd(), newPredictCmd(), newScenariosCmd(), newVersionCmd(),
		newSweepCmd(), newPlotCmd(), newMergeCmd())
	return root
}
