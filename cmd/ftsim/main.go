// Command ftsim simulates fault-tolerance protocols for parallel applications
// on a cluster with failing nodes and reports what they cost and save.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRoot().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "ftsim:", err)
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "ftsim",
		Short:         "Simulate and compare fault-tolerance protocols for parallel applications",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCmd(), newPredictCmd(), newScenariosCmd(), newVersionCmd(),
		newSweepCmd(), newPlotCmd(), newMergeCmd())
	return root
}
