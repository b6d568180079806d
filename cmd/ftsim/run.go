package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"ftsim/experiment"
	"ftsim/internal/atomicfile"
	"ftsim/scenarios"
)

type runOpts struct {
	sets    []string
	seed    int64
	reps    int
	format  string
	out     string
	resume  bool
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
any protocol sees the same failure trace.

With --out, the runs are written to the result store DIR as 'ftsim sweep --out'
writes it (runs.csv and runs.jsonl with the run's point first, meta.json,
points.jsonl), so that 'ftsim plot' and 'ftsim merge' read it. A store holding
runs is never overwritten; --resume continues it, skipping the runs it holds.`,
		Example: `  ftsim run
  ftsim run scenarios/exascale.toml --reps 5
  ftsim run my.toml --set cluster.nodes=256 --set failures.node_mtbf=5y --format json
  ftsim run my.toml --reps 100 --out results --resume`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, scenarioArg(args))
		},
	}
	f := c.Flags()
	f.StringArrayVar(&o.sets, "set", nil, "override a scenario key: dotted.key=value (a TOML value; a bare word is a string)")
	f.Int64Var(&o.seed, "seed", 0, "run seed, ≥ 0 (default: the scenario's)")
	f.IntVar(&o.reps, "reps", 0, "replications (default: the scenario's)")
	f.StringVar(&o.format, "format", "table", "output format: table, json (JSON lines) or csv")
	f.StringVar(&o.out, "out", "", "also write the runs to this result store directory (runs.csv, runs.jsonl, meta.json, points.jsonl)")
	f.BoolVar(&o.resume, "resume", false, "continue the runs stored in --out, skipping those it holds")
	f.IntVar(&o.workers, "workers", 0, "parallel replications (default: all cores)")
	f.StringVar(&o.trace, "trace", "", "also write replication 0's timeline to this file (Chrome/Perfetto trace format: open it in ui.perfetto.dev)")
	f.Int64Var(&o.traceN, "trace-messages", 200000, "trace at most this many messages (0 = all)")
	return c
}

// scenarioArg is the scenario file named by a command's optional argument,
// "" (the default scenario) without one.
func scenarioArg(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return ""
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
	if err := checkCounts(o.reps, cmd.Flags().Changed("reps"), o.workers); err != nil {
		return err
	}
	if o.traceN < 0 {
		return fmt.Errorf("--trace-messages: must be ≥ 0 (0 = all messages), got %d", o.traceN)
	}
	if o.resume && o.out == "" {
		return errors.New("--resume needs --out")
	}
	overrides := append([]string(nil), o.sets...)
	if cmd.Flags().Changed("seed") {
		if o.seed < 0 {
			return fmt.Errorf("--seed: must be ≥ 0, got %d", o.seed)
		}
		overrides = append(overrides, "seed="+strconv.FormatInt(o.seed, 10))
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
		so := &sweepOpts{sets: overrides, reps: o.reps, out: o.out, resume: o.resume, workers: o.workers, format: o.format}
		return so.run(cmd, file)
	}
	var trace *atomicfile.File
	if o.trace != "" {
		// before the runs, which may take long, so that a wrong path is
		// an error at once
		if trace, err = atomicfile.Create(o.trace); err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
		defer trace.Abort()
	}
	// One point, run as a sweep so that its fault-free run with the protocol
	// runs beside its replications instead of before them.
	ex, err := openSweep(cmd, sweepSpec{file: file, base: s, sets: overrides, reps: o.reps, out: o.out, resume: o.resume, workers: o.workers})
	if err != nil {
		return err
	}
	defer ex.close()
	sw := ex.sw
	var point *experiment.Point
	if o.trace != "" {
		ex.onPrepared = func(p *experiment.Point) { point = p }
	}
	stdout := bufio.NewWriter(cmd.OutOrStdout())
	defer stdout.Flush()
	var emit func(experiment.SweepRecord) error
	if o.format != "table" {
		// the records alone, as before there was a store: one point has no
		// point column to print
		sink := jsonSink(stdout)
		if o.format == "csv" {
			sink = csvSink(stdout)
		}
		emit = func(r experiment.SweepRecord) error {
			if err := sink(r.Record); err != nil {
				return err
			}
			return stdout.Flush()
		}
	}
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	if err := ex.run(ctx, emit); err != nil {
		return err
	}
	if o.format == "table" {
		if len(ex.infos) == 0 {
			return fmt.Errorf("%s holds runs but not the point's fault-free figures (%s): run again into a new --out", o.out, experiment.PointsJSONL)
		}
		recs := make([]experiment.Record, len(ex.recs))
		for i := range ex.recs {
			recs[i] = ex.recs[i].Record
		}
		printTable(stdout, sw.Points[0].Scenario, &ex.infos[0], recs)
		if len(s.Published) > 0 {
			printPublished(stdout, sw.ComparePublished(s.Published, ex.recs))
		}
	}
	if o.trace != "" {
		if point == nil { // every run was in the store: nothing prepared it
			if point, err = experiment.Prepare(sw.Points[0].Scenario); err != nil {
				return err
			}
		}
		// replication 0's timeline; a failure leaves no partial file
		if _, err := point.Trace(0, trace, o.traceN); err != nil {
			return err
		}
		if err := trace.Commit(); err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
	}
	return nil
}

func jsonSink(w *bufio.Writer) func(experiment.Record) error {
	return func(r experiment.Record) error {
		w.Write(r.JSON())
		return w.WriteByte('\n')
	}
}

func csvSink(w io.Writer) func(experiment.Record) error {
	row := csvRows(w, experiment.Columns())
	return func(r experiment.Record) error { return row(r.Row()) }
}

// printTable prints the runs of one point of scenario s, described by p,
// their means with 95% intervals and the analytical predictions.
func printTable(w io.Writer, s *scenarios.Scenario, p *experiment.PointInfo, recs []experiment.Record) {
	fmt.Fprintf(w, "scenario %s: %s\n", s.Name, s.Description)
	fmt.Fprintf(w, "workload %s, protocol %s, %d nodes + %d spares", s.Workload.Kind(), s.Protocol.Kind(), s.Cluster.Nodes, s.Cluster.Spares)
	if c := s.Cluster; c.NoSpare == "wait" {
		fmt.Fprintf(w, " (then waiting for nodes repaired in %s)", c.Repair)
	}
	fmt.Fprintf(w, ", failures %s", s.Failures.Distribution)
	if f := s.Failures; f.Distribution == "exponential" || f.Distribution == "weibull" {
		weibull := f.Distribution == "weibull"
		fmt.Fprintf(w, " (node MTBF %s", f.NodeMTBF)
		if weibull {
			fmt.Fprintf(w, ", shape %g, nodes %s at the start", f.WeibullShape, strings.ReplaceAll(f.Start, "_", " "))
		}
		if f.GroupMTBF > 0 {
			fmt.Fprintf(w, ", groups of %d nodes with MTBF %s", f.GroupSize, f.GroupMTBF)
		}
		if r := experiment.FalseSuspicionRate(s); r > 0 {
			fmt.Fprintf(w, ", a live node fenced every %.4g s by a late heartbeat", 1/(r*float64(s.Cluster.Nodes)))
		}
		fmt.Fprintf(w, ", platform MTBF %.4g s", experiment.PlatformMTBF(s).Seconds())
		if weibull {
			fmt.Fprint(w, " in the long run")
		}
		fmt.Fprint(w, ")")
	}
	if p.Caveat != "" {
		fmt.Fprintf(w, "\nnote: %s", p.Caveat)
	}
	fmt.Fprintf(w, "\nfault-free: %.6g s without protocol, %.6g s with it (overhead %.2f%%)\n\n",
		p.BaselineS, p.FaultFreeS, 100*(p.FaultFreeS/p.BaselineS-1))
	if len(recs) <= 20 {
		tw := newTable(w, tabwriter.AlignRight)
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
	ignored := 0
	for _, r := range recs {
		ignored += r.IgnoredFailures
	}
	if ignored > 0 {
		// a trace or script naming a node that is down or still a powered-off
		// spare would otherwise look like failures the simulator lost
		what := "planned failures ignored: their node was"
		if ignored == 1 {
			what = "planned failure ignored: its node was"
		}
		fmt.Fprintf(w, "%d %s already down or an idle spare (ignored_failures)\n", ignored, what)
	}
	est := func(name string, e experiment.Estimate, unit string) {
		if e.N == 0 {
			return
		}
		fmt.Fprintf(w, "  %-22s %12.6g %s  95%% CI [%.6g, %.6g]\n", name, e.Mean, unit, e.Low, e.High)
	}
	est("makespan", sum.Makespan, "s")
	est("efficiency", sum.Efficiency, " ")
	est("failures per run", sum.Failures, " ")
	if sum.FalseSuspicions.Mean > 0 {
		est("  of them fenced", sum.FalseSuspicions, " ")
	}
	est("recovery per failure", sum.Recovery, "s")
	est("  detection", sum.Detection, "s")
	est("  restore", sum.Restore, "s")
	fmt.Fprintln(w)
	preds := make([]experiment.Prediction, len(p.Predictions))
	for i, x := range p.Predictions {
		preds[i] = experiment.Prediction(x)
	}
	printPredictions(w, preds, sum.Makespan)
}

// printPredictions lists the analytical figures; makespan predictions are
// shown beside the simulated mean and their relative departure from it.
func printPredictions(w io.Writer, preds []experiment.Prediction, simulated experiment.Estimate) {
	fmt.Fprintln(w, "analytical predictions:")
	tw := newTable(w, 0)
	for _, p := range preds {
		dep := ""
		if p.Makespan && simulated.N > 0 {
			dep = fmt.Sprintf("simulated %.6g s (%+.1f%%)", simulated.Mean, 100*(p.Value/simulated.Mean-1))
		}
		fmt.Fprintf(tw, "  %s\t%.6g %s\t%s\t%s\t%s\n", p.Name, p.Value, p.Unit, p.Formula, p.Inputs, dep)
	}
	tw.Flush()
}
