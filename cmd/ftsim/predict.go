package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"ftsim/experiment"
)

func newPredictCmd() *cobra.Command {
	var sets []string
	c := &cobra.Command{
		Use:   "predict [FILE]",
		Short: "Print the analytical predictions that apply to a scenario",
		Long: `Print the closed-form predictions for a scenario (restart from scratch,
Young and Daly intervals, the exact periodic-checkpoint expectation, first-order
waste, MPI/FT eq. 1.2, Chakravorty & Kalé's t'_c and t'_ml with the α threshold,
Gerlach & Hersch's DPS overhead), beside the parameters they used, for every
point and protocol the scenario declares. Only the fault-free reference runs
are simulated.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			base, err := loadScenario(scenarioArg(args), sets)
			if err != nil {
				return err
			}
			sw, err := experiment.NewSweep(base, nil, 1)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			return sw.Prepare(func(sp *experiment.SweepPoint, p *experiment.Point) error {
				s := p.Scenario
				if sp.ID != "" {
					fmt.Fprintf(w, "\npoint %s\n", sp.ID)
				}
				fmt.Fprintf(w, "scenario %s: %s, protocol %s, %d nodes\n", s.Name, s.Workload.Kind(), s.Protocol.Label(), s.Cluster.Nodes)
				printPredictions(w, p.Predictions(), experiment.Estimate{})
				return nil
			})
		},
	}
	c.Flags().StringArrayVar(&sets, "set", nil, "override a scenario key: dotted.key=value")
	return c
}
