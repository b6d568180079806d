package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"ftsim/experiment"
)

func newMergeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "merge OUT DIR...",
		Short: "Combine the result stores of a sweep's shards into one",
		Long: `Combine result stores written by 'ftsim sweep --shard i/n' into the new
store OUT, in the sweep's run order, so that merging every shard gives the
same files as running the sweep unsharded. The stores must hold the same sweep
and must not overlap (no run in two of them: the same shard given twice, or
shards of different counts). OUT must be new or empty; the merged files are
written in full before they are moved into it, so an interrupted merge can
simply be run again.`,
		Example: `  ftsim merge results shard-0 shard-1 shard-2 shard-3
  ftsim merge results shard-*`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := experiment.Merge(args[0], args[1:])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "merged %d runs from %d stores into %s\n", rep.Runs, len(args)-1, args[0])
			if rep.Missing > 0 {
				fmt.Fprintf(w, "%d runs of the sweep are in none of the stores: run the missing shards, or resume them\n", rep.Missing)
			}
			return nil
		},
	}
}
