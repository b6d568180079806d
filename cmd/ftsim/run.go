package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"ftsim/experiment"
	"ftsim/scenarios"
)

type runOpts struct {
	sets    []string
	seed    int64
	reps    int
	format  string
	out     string
	workers int
	trace   string
	traceN  int64
}

func newRunCmd() *cobra.Command {
	o := &runOpts{}
	c := &cobra.Command{
		Use:   "run [FILE]",
		Short: "Run a scenario (default: the embedded default scenario)",
		Long: `Run a scenario file, or one of the embedded scenarios by name (see
'ftsim scenarios'). Every replication runs with its own seed; replication r of
any protocol sees the same failure trace.`,
		Example: `  ftsim run
  ftsim run scenarios/exascale.toml --reps 5
  ftsim run my.toml --set cluster.nodes=256 --set failures.node_mtbf=5y --format json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := ""
			if len(args) == 1 {
				file = args[0]
			}
			return o.run(cmd, file)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&o.sets, "set", nil, "override a scenario key: dotted.key=value (a TOML value; a bare word is a string)")
	f.Int64Var(&o.seed, "seed", -1, "run seed (default: the scenario's)")
	f.IntVar(&o.reps, "reps", 0, "replications (default: the scenario's)")
	f.StringVar(&o.format, "format", "table", "output format: table, json (JSON lines) or csv")
	f.StringVar(&o.out, "out", "", "also write runs.csv and runs.jsonl to this directory")
	f.IntVar(&o.workers, "workers", 0, "parallel replications (default: all cores)")
	f.StringVar(&o.trace, "trace", "", "also write replication 0's timeline to this file (Chrome/Perfetto trace format: open it in ui.perfetto.dev)")
	f.Int64Var(&o.traceN, "trace-messages", 200000, "trace at most this many messages (0 = all)")
	return c
}

// loadScenario reads a scenario file, or an embedded one when no such file
// exists (so "scenarios/exascale.toml" works from any directory).
func loadScenario(file string, overrides []string) (*scenarios.Scenario, error) {
	if file == "" {
		file = "default"
	}
	if _, err := os.Stat(file); err == nil {
		return scenarios.Load(file, overrides)
	}
	s, ok, err := scenarios.LoadEmbedded(file, overrides)
	if !ok {
		return nil, fmt.Errorf("%s: no such file, and no embedded scenario of that name (see 'ftsim scenarios')", file)
	}
	return s, err
}

func (o *runOpts) run(cmd *cobra.Command, file string) error {
	switch o.format {
	case "table", "json", "csv":
	default:
		return fmt.Errorf("--format: %q is not table, json or csv", o.format)
	}
	overrides := append([]string(nil), o.sets...)
	if o.seed >= 0 {
		overrides = append(overrides, "seed="+strconv.FormatInt(o.seed, 10))
	}
	if o.reps > 0 {
		overrides = append(overrides, "reps="+strconv.Itoa(o.reps))
	}
	s, err := loadScenario(file, overrides)
	if err != nil {
		return err
	}
	if len(s.Protocols) > 0 || len(s.Sweep.Vary) > 0 {
		// Several protocols or points: run them as a sweep, whose summary
		// compares the protocols and the published figures.
		if o.trace != "" {
			return fmt.Errorf("--trace records one run: %s compares several protocols or points; trace one with 'ftsim run %s --set ...' on a copy holding a single [protocol]", s.File, s.File)
		}
		so := &sweepOpts{sets: overrides, out: o.out, workers: o.workers, format: o.format}
		return so.run(cmd, file)
	}
	// One point, run as a sweep so that its fault-free run with the protocol
	// runs beside its replications instead of before them.
	sw, err := experiment.NewSweep(s, nil, s.Reps)
	if err != nil {
		return err
	}
	stdout := bufio.NewWriter(cmd.OutOrStdout())
	defer stdout.Flush()

	var sinks []func(experiment.Record) error
	switch o.format {
	case "json":
		sinks = append(sinks, jsonSink(stdout))
	case "csv":
		sinks = append(sinks, csvSink(stdout))
	}
	if o.out != "" {
		closeOut, outSinks, err := fileSinks(o.out)
		if err != nil {
			return err
		}
		defer closeOut()
		sinks = append(sinks, outSinks...)
	}
	var recs []experiment.Record
	var point *experiment.Point
	opts := experiment.RunOptions{Workers: o.workers, Progress: cmd.ErrOrStderr(),
		Prepared: func(_ *experiment.SweepPoint, p *experiment.Point) error { point = p; return nil }}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = sw.Run(ctx, opts, func(r experiment.SweepRecord) error {
		recs = append(recs, r.Record)
		for _, sink := range sinks {
			if err := sink(r.Record); err != nil {
				return err
			}
		}
		return stdout.Flush()
	})
	if err != nil && ctx.Err() != nil {
		return interrupted(ctx)
	}
	if err != nil {
		return err
	}
	if o.format == "table" {
		printTable(stdout, point, recs)
	}
	if o.trace != "" {
		if err := writeTrace(point, o.trace, o.traceN); err != nil {
			return err
		}
	}
	return nil
}

// writeTrace writes replication 0's timeline; a failure leaves no partial file.
func writeTrace(p *experiment.Point, path string, maxMessages int64) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := p.Trace(0, f, maxMessages); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

func jsonSink(w *bufio.Writer) func(experiment.Record) error {
	return func(r experiment.Record) error {
		w.Write(r.JSON())
		return w.WriteByte('\n')
	}
}

func csvSink(w io.Writer) func(experiment.Record) error {
	cw := csv.NewWriter(w)
	header := false
	return func(r experiment.Record) error {
		if !header {
			cw.Write(experiment.Columns())
			header = true
		}
		cw.Write(r.Row())
		cw.Flush()
		return cw.Error()
	}
}

// fileSinks opens DIR/runs.csv and DIR/runs.jsonl. Every record is written
// whole and flushed at once, so an interrupted run leaves complete rows.
func fileSinks(dir string) (func(), []func(experiment.Record) error, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	cf, err := os.Create(filepath.Join(dir, "runs.csv"))
	if err != nil {
		return nil, nil, err
	}
	jf, err := os.Create(filepath.Join(dir, "runs.jsonl"))
	if err != nil {
		cf.Close()
		return nil, nil, err
	}
	closeAll := func() { cf.Close(); jf.Close() }
	csvW := csvSink(cf)
	jsonW := func(r experiment.Record) error {
		_, err := jf.Write(append(r.JSON(), '\n'))
		return err
	}
	return closeAll, []func(experiment.Record) error{csvW, jsonW}, nil
}

func printTable(w io.Writer, p *experiment.Point, recs []experiment.Record) {
	s := p.Scenario
	fmt.Fprintf(w, "scenario %s: %s\n", s.Name, s.Description)
	fmt.Fprintf(w, "workload %s, protocol %s, %d nodes + %d spares, failures %s",
		s.Workload.Kind(), s.Protocol.Kind(), s.Cluster.Nodes, s.Cluster.Spares, s.Failures.Distribution)
	if s.Failures.Distribution == "exponential" || s.Failures.Distribution == "weibull" {
		fmt.Fprintf(w, " (node MTBF %s, platform MTBF %.4g s)", s.Failures.NodeMTBF,
			s.Failures.NodeMTBF.Seconds()/float64(s.Cluster.Nodes))
	}
	fmt.Fprintf(w, "\nfault-free: %.6g s without protocol, %.6g s with it (overhead %.2f%%)\n\n",
		p.Baseline.Seconds(), p.FaultFree.Seconds(), 100*(float64(p.FaultFree)/float64(p.Baseline)-1))
	if len(recs) <= 20 {
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "rep\tseed\tmakespan_s\tfailures\trestarts\trecovery_s\tefficiency\tanswer\tdigest_ok\t")
		for _, r := range recs {
			fmt.Fprintf(tw, "%d\t%d\t%.6g\t%d\t%d\t%.4g\t%.3f\t%s\t%v\t\n", r.Rep, r.Seed, r.MakespanS,
				r.Failures, r.Restarts, r.RecoverySMean, r.Efficiency, r.Answer, r.DigestOK)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	sum := experiment.Summarize(recs)
	fmt.Fprintf(w, "%d runs, %d finished, %d with the reference answer, %d unrecoverable\n",
		sum.Runs, sum.Finished, sum.DigestOK, sum.Unrecoverable)
	est := func(name string, e experiment.Estimate, unit string) {
		if e.N == 0 {
			return
		}
		fmt.Fprintf(w, "  %-22s %12.6g %s  95%% CI [%.6g, %.6g]\n", name, e.Mean, unit, e.Low, e.High)
	}
	est("makespan", sum.Makespan, "s")
	est("efficiency", sum.Efficiency, " ")
	est("failures per run", sum.Failures, " ")
	est("recovery per failure", sum.Recovery, "s")
	fmt.Fprintln(w)
	printPredictions(w, p.Predictions(), sum.Makespan)
}

// printPredictions lists the analytical figures; makespan predictions are
// shown beside the simulated mean and their relative departure from it.
func printPredictions(w io.Writer, preds []experiment.Prediction, simulated experiment.Estimate) {
	fmt.Fprintln(w, "analytical predictions:")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, p := range preds {
		dep := ""
		if p.Makespan && simulated.N > 0 {
			dep = fmt.Sprintf("simulated %.6g s (%+.1f%%)", simulated.Mean, 100*(p.Value/simulated.Mean-1))
		}
		fmt.Fprintf(tw, "  %s\t%.6g %s\t%s\t%s\t%s\n", p.Name, p.Value, p.Unit, p.Formula, p.Inputs, dep)
	}
	tw.Flush()
}
