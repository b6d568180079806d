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
