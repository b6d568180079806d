package main

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/spf13/cobra"

	"ftsim/experiment"
	"ftsim/scenarios"
)

type sweepOpts struct {
	sets    []string
	varies  []string
	reps    int
	out     string
	resume  bool
	shard   string
	workers int
	plots   bool
	format  string // "" or "table": a summary; "json", "csv": every record on stdout
}

func newSweepCmd() *cobra.Command {
	o := &sweepOpts{}
	c := &cobra.Command{
		Use:   "sweep [FILE]",
		Short: "Run a scenario over the cartesian product of varied keys, into a resumable result store",
		Long: `Run a base scenario (a file, or an embedded scenario by name; default: the
default scenario) at every point of the cartesian product of the --vary keys,
each point with the same replications: replication r of every point and
protocol uses the same seed, hence faces the same failure trace, so protocols
are compared pairwise with small variance.

The scenario's own [sweep] vary list and its [[protocols]] entries (key
"protocol", one point per entry) are swept too; a --vary of a key the file
varies replaces the file's values. Any scenario key can be varied,
protocol.kind included; values are written as --set takes them. Linked keys,
k1|k2=a1|a2,b1|b2, take their values together instead of forming a product
(a weak-scaling sweep: cluster.nodes|workload.nx=64|400,512|800; a value
without | goes to every linked key). Points are
ordered as the keys and values were given, the first key outermost. All runs
share one pool of workers; points that differ only in their protocol share
one workload and one fault-free baseline.

The summary ranks the protocols at each setting of the other keys (ratio to
the best, paired over replications) and prints the scenario's [[published]]
figures beside the simulated ones.

With --out, every finished run is appended at once to DIR/runs.csv and
DIR/runs.jsonl (the run's point in the first column), the sweep definition to
DIR/meta.json, and the fault-free figures and analytical predictions of each
point to DIR/points.jsonl. An interrupted sweep (Ctrl-C, kill, crash) continues
where it stopped with the same command and --resume; without --resume a
directory holding results is never overwritten.

--shard i/n runs only the runs whose index is i modulo n, as one task of a
Slurm job array (--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT) or a
Kubernetes Indexed Job; 'ftsim merge' then combines the shards' directories.`,
		Example: `  ftsim sweep my.toml --vary protocol.kind=none,cpr --vary cluster.nodes=64,128,256 --reps 20 --out results
  ftsim sweep my.toml --vary failures.node_mtbf=1y,5y,25y --vary protocol.kind=none,cpr --out mtbf --plots
  ftsim sweep my.toml --vary 'cluster.nodes|workload.nx=64|400,512|800' --vary protocol.kind=none,cpr --out weak
  ftsim sweep my.toml --vary cluster.nodes=1024,4096 --reps 50 --out part3 --shard 3/16
  ftsim sweep my.toml --vary cluster.nodes=1024,4096 --reps 50 --out results --resume`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, scenarioArg(args))
		},
	}
	f := c.Flags()
	f.StringArrayVar(&o.varies, "vary", nil, "vary a scenario key: dotted.key=v1,v2,... (repeatable; the product of all is swept); k1|k2=a1|a2,b1|b2 links keys")
	f.StringArrayVar(&o.sets, "set", nil, "override a scenario key at every point: dotted.key=value")
	f.IntVar(&o.reps, "reps", 0, "replications per point (default: the scenario's)")
	f.StringVar(&o.out, "out", "", "result store directory (runs.csv, runs.jsonl, meta.json, points.jsonl)")
	f.BoolVar(&o.resume, "resume", false, "continue the sweep stored in --out, skipping the runs it holds")
	f.StringVar(&o.shard, "shard", "", "run only shard i/n of the runs (job arrays)")
	f.IntVar(&o.workers, "workers", 0, "parallel runs (default: all cores)")
	f.BoolVar(&o.plots, "plots", false, "draw the figures the sweep supports into --out/plots")
	return c
}

func (o *sweepOpts) run(cmd *cobra.Command, file string) error {
	var varies []experiment.Vary
	for _, v := range o.varies {
		x, err := experiment.ParseVary(v)
		if err != nil {
			return err
		}
		varies = append(varies, x)
	}
	var shard experiment.Shard
	if o.shard != "" {
		var err error
		if shard, err = experiment.ParseShard(o.shard); err != nil {
			return err
		}
	}
	if o.out == "" && (o.resume || o.plots) {
		return errors.New("--resume and --plots need --out")
	}
	if err := checkCounts(o.reps, cmd.Flags().Changed("reps"), o.workers); err != nil {
		return err
	}
	base, err := loadScenario(file, o.sets)
	if err != nil {
		return err
	}
	ex, err := openSweep(cmd, sweepSpec{file: file, base: base, sets: o.sets, varies: varies, reps: o.reps,
		shard: shard, out: o.out, resume: o.resume, workers: o.workers})
	if err != nil {
		return err
	}
	defer ex.close()
	sw, meta := ex.sw, ex.meta

	w := cmd.OutOrStdout()
	var emit func(experiment.SweepRecord) error
	if o.format == "json" || o.format == "csv" {
		emit = streamRecords(w, o.format)
		w = io.Discard // the records are the output
	}
	total, mine := sw.Runs(), len(sw.Pending(shard, nil))
	todo := len(sw.Pending(shard, ex.opts.Skip))
	fmt.Fprintf(w, "sweep of %s: %d points × %d replications = %d runs", meta.Base, len(sw.Points), meta.Reps, total)
	if mine != total {
		fmt.Fprintf(w, "; shard %s: %d runs", shard, mine)
	}
	if todo != mine {
		fmt.Fprintf(w, "; %d already stored", mine-todo)
	}
	fmt.Fprintln(w)

	ctx, stop := signalContext(cmd.Context())
	defer stop()
	if err := ex.run(ctx, emit); err != nil {
		return err
	}
	fmt.Fprintln(w)
	printSweepSummary(w, ex.recs, sw, ex.infos, base.Published)
	if o.plots {
		res, err := readPlottable(o.out)
		if err != nil {
			return err
		}
		if _, err := drawPlots(w, res, filepath.Join(o.out, "plots"), []string{"png", "svg"}); err != nil {
			return err
		}
	}
	return nil
}

// checkCounts refuses counts given on the command line that no run can
// use: a --reps outside [1, scenarios.MaxReps] (left out, the scenario's
// reps apply, which the scenario bounds) and a negative --workers.
func checkCounts(reps int, repsGiven bool, workers int) error {
	if repsGiven && (reps < 1 || reps > scenarios.MaxReps) {
		return fmt.Errorf("--reps: must be between 1 and %d, got %d", scenarios.MaxReps, reps)
	}
	if workers < 0 {
		return fmt.Errorf("--workers: must be ≥ 0 (0 = all cores), got %d", workers)
	}
	return nil
}

// execution runs a sweep for 'ftsim run' and 'ftsim sweep' alike: into a
// result store when given one, so that both write the same store and
// resume it the same way, else collecting the results in memory.
type execution struct {
	sw   *experiment.Sweep
	meta experiment.Meta
	st   *experiment.Store // nil without --out
	out  string
	opts experiment.RunOptions
	// onPrepared, if set, receives each point prepared ('ftsim run
	// --trace' traces its point again).
	onPrepared func(*experiment.Point)

	mu    sync.Mutex
	recs  []experiment.SweepRecord // every run of the shard: stored before, or run now; in run order after run
	infos []experiment.PointInfo   // the points' descriptions
}

// sweepSpec is what 'ftsim run' and 'ftsim sweep' make a sweep of.
type sweepSpec struct {
	file    string // as given on the command line ("" = the default scenario)
	base    *scenarios.Scenario
	sets    []string // the --set overrides
	varies  []experiment.Vary
	reps    int // 0: the scenario's
	shard   experiment.Shard
	out     string
	resume  bool
	workers int
}

// openSweep builds the sweep sp describes, checks the figures its scenario
// publishes, and opens its execution (newExecution).
func openSweep(cmd *cobra.Command, sp sweepSpec) (*execution, error) {
	reps := sp.base.Reps
	if sp.reps > 0 {
		reps = sp.reps
	}
	sw, err := experiment.NewSweep(sp.base, sp.varies, reps)
	if err != nil {
		return nil, err
	}
	if err := sw.CheckPublished(sp.base); err != nil {
		return nil, err
	}
	meta, err := sweepMeta(sp.file, sp.sets, sw.Varies, reps, sp.shard)
	if err != nil {
		return nil, err
	}
	return newExecution(cmd, sw, meta, sp.out, sp.resume, sp.workers)
}

// newExecution opens the store out (unless out is empty) for the sweep
// meta describes: a store holding runs is refused unless resume is set,
// and then its runs are skipped.
func newExecution(cmd *cobra.Command, sw *experiment.Sweep, meta experiment.Meta, out string, resume bool, workers int) (*execution, error) {
	ex := &execution{sw: sw, meta: meta, out: out}
	ex.opts = experiment.RunOptions{Shard: meta.Shard, Workers: workers, Progress: cmd.ErrOrStderr(), Prepared: ex.prepared}
	if out == "" {
		return ex, nil
	}
	st, err := experiment.OpenStore(out, meta, resume)
	if err != nil {
		return nil, err
	}
	ex.st = st
	ex.opts.Skip = st.Has
	// stored as each finishes, so an interruption loses none; run reads
	// them back from the store
	ex.opts.Finished = st.Append
	return ex, nil
}

// prepared describes a point as it is prepared, from a worker goroutine.
func (ex *execution) prepared(sp *experiment.SweepPoint, p *experiment.Point) error {
	if ex.onPrepared != nil {
		ex.onPrepared(p)
	}
	info := experiment.NewPointInfo(sp, p)
	if ex.st != nil {
		return ex.st.AddPoint(info)
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.infos = append(ex.infos, info)
	return nil
}

// run executes the pending runs, passing each record to emit (if not nil)
// in run order, and gathers in recs and infos every run and point of the
// shard: those stored before and those run now. An error says how many
// runs are stored and how to continue.
func (ex *execution) run(ctx context.Context, emit func(experiment.SweepRecord) error) error {
	runErr := ex.sw.Run(ctx, ex.opts, func(r experiment.SweepRecord) error {
		if ex.st == nil {
			ex.recs = append(ex.recs, r)
		}
		if emit != nil {
			return emit(r)
		}
		return nil
	})
	if runErr != nil && ctx.Err() != nil {
		runErr = interrupted(ctx) // rather than a bare "context canceled"
	}
	if ex.st == nil {
		return runErr
	}
	if err := ex.st.Close(); err != nil && runErr == nil {
		runErr = err
	}
	ex.recs, ex.infos = ex.st.Records(), ex.st.Points()
	if runErr != nil && len(ex.recs) > 0 {
		total, mine := ex.sw.Runs(), len(ex.sw.Pending(ex.opts.Shard, nil))
		of := "of the sweep"
		if mine != total {
			of = "of this shard"
		}
		return fmt.Errorf("%w\n%d of %d runs %s are stored in %s; run the same command with --resume to continue",
			runErr, len(ex.recs), mine, of, ex.out)
	}
	return runErr
}

// close releases the store when the command stops before run.
func (ex *execution) close() {
	if ex.st != nil {
		ex.st.Close()
	}
}

// interrupted is the error of a command stopped by a signal, naming it.
func interrupted(ctx context.Context) error {
	return fmt.Errorf("interrupted: %w", context.Cause(ctx))
}

// sweepMeta describes the sweep for meta.json. The base file is identified
// by the digest of its text, so that a resume finds it under another path
// but notices an edited file.
func sweepMeta(file string, sets []string, varies []experiment.Vary, reps int, shard experiment.Shard) (experiment.Meta, error) {
	m := experiment.Meta{Base: file, Sets: sets, Varies: varies, Reps: reps, Shard: shard}
	if m.Base == "" {
		m.Base = "default"
	}
	if m.Varies == nil {
		m.Varies = []experiment.Vary{}
	}
	// the same precedence as loadScenario: a file, else an embedded scenario
	var text []byte
	if _, err := os.Stat(m.Base); err == nil {
		if text, err = os.ReadFile(m.Base); err != nil {
			return m, err
		}
	} else if src, ok := scenarios.EmbeddedSource(m.Base); ok {
		text = src
	}
	if text != nil {
		sum := sha256.Sum256(text)
		m.BaseSHA256 = hex.EncodeToString(sum[:])
	}
	return m, nil
}

// printSweepSummary prints a line per point (means and 95% intervals; ok
// counts the runs that ended with the reference answer; makespan and
// efficiency average the finished runs), the protocols ranked at each
// setting of the other keys, the paired makespan ratios between protocols,
// and the published figures beside the simulated ones.
func printSweepSummary(w io.Writer, recs []experiment.SweepRecord, sw *experiment.Sweep, infos []experiment.PointInfo, pubs []scenarios.Published) {
	sums := experiment.SummarizePoints(recs, sw.Varies)
	// the live nodes the heartbeat monitor fenced, when it fenced any
	fenced := slices.ContainsFunc(sums, func(s experiment.PointSummary) bool { return s.FalseSuspicions.Mean > 0 })
	tw := newTable(w, 0)
	fmt.Fprint(tw, "point\tprotocol\truns\tfinished\tok\tmakespan_s\t95% CI\tefficiency\toverhead\trecovery_s\tfailures/run\t")
	if fenced {
		fmt.Fprint(tw, "fenced/run\t")
	}
	fmt.Fprintln(tw)
	for _, s := range sums {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%.2f%%\t%s\t%s\t", pointName(s.Point), s.Protocol, s.Runs, s.Finished, s.DigestOK,
			num(s.Makespan.Mean), ci(s.Makespan), num(s.Efficiency.Mean), 100*s.Overhead, num(s.Recovery.Mean), num(s.Failures.Mean))
		if fenced {
			fmt.Fprintf(tw, "%s\t", num(s.FalseSuspicions.Mean))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, pi := range infos {
		if pi.Caveat != "" {
			fmt.Fprintf(w, "note: at %s, %s\n", pointName(pi.Point), pi.Caveat)
		}
	}
	for _, c := range experiment.CompareProtocols(recs, sw.Varies, infos) {
		printComparison(w, c)
	}
	// With more than two protocols every pair is too many lines: the
	// comparisons above give each one's paired ratio to the best.
	if prs := experiment.PairedRatios(recs, sw.Varies, experiment.ProtocolVaryKey(sw.Varies)); len(prs) > 0 && protocolCount(sw.Varies) == 2 {
		fmt.Fprintln(w, "\npaired makespan ratios (replication r of both protocols faces the same failures):")
		tw = newTable(w, 0)
		for _, p := range prs {
			// the unpaired figure is the ratio of the means, not the mean of
			// the ratios: with heavy tails (restarts from scratch) the two differ
			fmt.Fprintf(tw, "  %s\t%s/%s\t%s\t95%% CI %s\t%d pairs\tratio of means %s, unpaired CI %s\t\n", pointName(p.Rest), p.Num, p.Den,
				num(p.Paired.Mean), ci(p.Paired), p.Pairs, num(p.Unpaired.Mean), ci(p.Unpaired))
		}
		tw.Flush()
	}
	if len(pubs) > 0 {
		printPublished(w, sw.ComparePublished(pubs, recs))
	}
}

// pointName is a point's id as the summary prints it: the settings it
// varies, or "(base)" for a sweep that varies nothing.
func pointName(id string) string {
	if id == "" {
		return "(base)"
	}
	return id
}

// protocolCount is the number of protocols a sweep compares.
func protocolCount(varies []experiment.Vary) int {
	key := experiment.ProtocolVaryKey(varies)
	for _, v := range varies {
		if v.Key == key {
			return len(v.Values)
		}
	}
	return 1
}

// printComparison prints the protocols compared at one setting of the other
// keys, best first in the ranking column, and says which wins and by how
// much.
func printComparison(w io.Writer, c experiment.Comparison) {
	at := c.Rest
	if at == "" {
		at = "the scenario's settings"
	}
	fmt.Fprintf(w, "\nprotocols compared at %s (replication r of each faces the same failures):\n", at)
	// the predictions' columns only where a model applies (not to
	// scripted failures, which have no MTBF)
	predicted := slices.ContainsFunc(c.Rows, func(r experiment.ComparisonRow) bool { return !math.IsNaN(r.Predicted) })
	tw := newTable(w, 0)
	fmt.Fprint(tw, "  protocol\tok/runs\tmakespan_s\t95% CI\tvs best (paired)\toverhead\trecovery_s\trestore_s\tefficiency\t")
	if predicted {
		fmt.Fprint(tw, "predicted_s\tmodel\t")
	}
	fmt.Fprintln(tw)
	for _, r := range c.Rows {
		restore := "-" // no failure of its runs lost objects that came back
		if r.Restore.N > 0 {
			restore = num(r.Restore.Mean)
		}
		fmt.Fprintf(tw, "  %s\t%d/%d\t%s\t%s\t%s\t%.2f%%\t%s\t%s\t%s\t", r.Protocol, r.DigestOK, r.Runs,
			num(r.Makespan.Mean), ci(r.Makespan), num(r.ToBest.Mean), 100*r.Overhead, num(r.Recovery.Mean),
			restore, num(r.Efficiency.Mean))
		switch {
		case !predicted:
		case math.IsNaN(r.Predicted):
			fmt.Fprint(tw, "-\t\t")
		default:
			fmt.Fprintf(tw, "%s\t%s\t", num(r.Predicted), r.PredictedName)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if c.Best < 0 {
		fmt.Fprintln(w, "  no protocol finished")
		return
	}
	best := c.Rows[c.Best]
	second := -1
	for i, r := range c.Rows {
		if i != c.Best && r.Makespan.N > 0 && (second < 0 || r.ToBest.Mean < c.Rows[second].ToBest.Mean) {
			second = i
		}
	}
	if second < 0 {
		return
	}
	r := c.Rows[second]
	fmt.Fprintf(w, "  winner: %s (mean makespan %s s); the runner-up %s takes %.1f%% longer (paired 95%% CI %s)\n",
		best.Protocol, num(best.Makespan.Mean), r.Protocol, 100*(r.ToBest.Mean-1), pctCI(r.ToBest))
}

// printPublished prints the "published vs simulated" table.
func printPublished(w io.Writer, rows []experiment.PublishedRow) {
	fmt.Fprintln(w, "\npublished vs simulated:")
	tw := newTable(w, 0)
	fmt.Fprintln(tw, "  source\tpoint\tmetric\tpublished\tsimulated\tdiff\tnote\t")
	for _, r := range rows {
		point := pointName(r.Point)
		if r.RatioTo != "" {
			point = "[" + r.RatioTo + "] / [" + r.Point + "]"
		}
		diff := "-"
		if d := r.Diff(); !math.IsNaN(d) {
			diff = fmt.Sprintf("%+.1f%%", 100*d)
		}
		unit := ""
		if r.Unit != "" {
			unit = " " + r.Unit
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s%s\t%s%s\t%s\t%s\t\n", r.Source, point, r.Metric, num(r.Value), unit,
			num(r.Simulated), unit, diff, r.Note)
	}
	tw.Flush()
}

// pctCI writes a ratio's interval as percentages above 1.
func pctCI(e experiment.Estimate) string {
	if e.N < 2 || math.IsNaN(e.Low) {
		return "-"
	}
	return fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*(e.Low-1), 100*(e.High-1))
}

// streamRecords writes each record to w as a JSON line or a CSV row (header
// first).
func streamRecords(w io.Writer, format string) func(experiment.SweepRecord) error {
	row := csvRows(w, experiment.SweepColumns())
	return func(r experiment.SweepRecord) error {
		if format == "json" {
			_, err := w.Write(append(r.JSON(), '\n'))
			return err
		}
		return row(r.Row())
	}
}

// csvRows returns a writer of CSV rows to w, header first, each flushed as
// it is written (a run's row is out as soon as the run is).
func csvRows(w io.Writer, header []string) func(row []string) error {
	cw := csv.NewWriter(w)
	return func(row []string) error {
		if header != nil {
			cw.Write(header)
			header = nil
		}
		cw.Write(row)
		cw.Flush()
		return cw.Error()
	}
}

// num formats a figure for the summary table, "-" when there is none.
func num(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

func ci(e experiment.Estimate) string {
	if e.N < 2 || math.IsNaN(e.Low) {
		return "-"
	}
	return "[" + num(e.Low) + ", " + num(e.High) + "]"
}
