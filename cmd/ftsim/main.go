// Command ftsim simulates fault-tolerance protocols for parallel applications
// on a cluster with failing nodes and reports what they cost and save.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRoot().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "ftsim:", err)
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	var cpuProfile string
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
		PersistentPostRun: func(*cobra.Command, []string) {
			if stopProfile != nil {
				stopProfile()
			}
		},
	}
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile to this file (go tool pprof)")
	root.AddCommand(newRunCmd(), newPredictCmd(), newScenariosCmd(), newVersionCmd(),
		newSweepCmd(), newPlotCmd(), newMergeCmd())
	return root
}
