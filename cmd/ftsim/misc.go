package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"ftsim/scenarios"
)

// version is the release of ftsim.
const version = "0.1.0"

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			rev := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" && len(s.Value) >= 12 {
						rev = s.Value[:12]
					}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "ftsim %s (commit %s, %s)\n", version, rev, bi.GoVersion)
				return
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ftsim %s\n", version)
		},
	}
}

func newScenariosCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "scenarios",
		Short: "List the embedded scenarios",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := newTable(cmd.OutOrStdout(), 0)
			for _, name := range scenarios.Embedded() {
				s, _, err := scenarios.LoadEmbedded(name, nil)
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%s\t%s\n", name, s.Description)
			}
			return tw.Flush()
		},
	}
}
