package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"ftsim/experiment"
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

Sweeps are given on the command line only; the scenario file describes one
point. Any scenario key can be varied, protocol.kind included; values are
written as --set takes them. Points are ordered as the keys and values were
given, the first key outermost. All runs share one pool of workers.

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
  ftsim sweep my.toml --vary cluster.nodes=1024,4096 --reps 50 --out part3 --shard 3/16
  ftsim sweep my.toml --vary cluster.nodes=1024,4096 --reps 50 --out results --resume`,
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
	f.StringArrayVar(&o.varies, "vary", nil, "vary a scenario key: dotted.key=v1,v2,... (repeatable; the product of all is swept)")
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
	if o.reps < 0 {
		return fmt.Errorf("--reps: must be ≥ 1, got %d", o.reps)
	}
	base, err := loadScenario(file, o.sets)
	if err != nil {
		return err
	}
	reps := base.Reps
	if o.reps > 0 {
		reps = o.reps
	}
	sw, err := experiment.NewSweep(base, varies, reps)
	if err != nil {
		return err
	}
	meta, err := sweepMeta(file, o.sets, varies, reps, shard)
	if err != nil {
		return err
	}

	var st *experiment.Store
	opts := experiment.RunOptions{Shard: shard, Workers: o.workers, Progress: cmd.ErrOrStderr()}
	var recs []experiment.SweepRecord
	emit := func(r experiment.SweepRecord) error {
		recs = append(recs, r)
		return nil
	}
	if o.out != "" {
		if st, err = experiment.OpenStore(o.out, meta, o.resume); err != nil {
			return err
		}
		defer st.Close()
		opts.Skip = st.Has
		opts.Prepared = func(sp *experiment.SweepPoint, p *experiment.Point) error {
			return st.AddPoint(experiment.NewPointInfo(sp, p))
		}
		emit = st.Append
	}
	w := cmd.OutOrStdout()
	total, mine := sw.Runs(), len(sw.Pending(shard, nil))
	todo := len(sw.Pending(shard, opts.Skip))
	fmt.Fprintf(w, "sweep of %s: %d points × %d replications = %d runs", meta.Base, len(sw.Points), reps, total)
	if mine != total {
		fmt.Fprintf(w, "; shard %s: %d runs", shard, mine)
	}
	if todo != mine {
		fmt.Fprintf(w, "; %d already stored", mine-todo)
	}
	fmt.Fprintln(w)

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runErr := sw.Run(ctx, opts, emit)
	if st != nil {
		if err := st.Close(); err != nil && runErr == nil {
			runErr = err
		}
		recs = st.Records()
	}
	if runErr != nil {
		if st != nil && len(recs) > 0 {
			return fmt.Errorf("%w\n%d of %d runs of this shard are stored in %s; run the same command with --resume to continue",
				runErr, len(recs), mine, o.out)
		}
		return runErr
	}
	fmt.Fprintln(w)
	printSweepSummary(w, recs, varies)
	if o.plots {
		res, err := experiment.ReadStore(o.out)
		if err != nil {
			return err
		}
		if _, err := drawPlots(w, res, filepath.Join(o.out, "plots"), []string{"png", "svg"}); err != nil {
			return err
		}
	}
	return nil
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
	if _, err := os.Stat(file); err == nil {
		b, err := os.ReadFile(file)
		if err != nil {
			return m, err
		}
		sum := sha256.Sum256(b)
		m.BaseSHA256 = hex.EncodeToString(sum[:])
	}
	return m, nil
}

// printSweepSummary prints a line per point (means and 95% intervals; ok
// counts the runs that ended with the reference answer; makespan and
// efficiency average the finished runs) and the paired makespan ratios
// between protocols.
func printSweepSummary(w io.Writer, recs []experiment.SweepRecord, varies []experiment.Vary) {
	sums := experiment.SummarizePoints(recs, varies)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "point\tprotocol\truns\tfinished\tok\tmakespan_s\t95% CI\tefficiency\toverhead\trecovery_s\tfailures/run\t")
	for _, s := range sums {
		point := s.Point
		if point == "" {
			point = "(base)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%.2f%%\t%s\t%s\t\n", point, s.Protocol, s.Runs, s.Finished, s.DigestOK,
			num(s.Makespan.Mean), ci(s.Makespan), num(s.Efficiency.Mean), 100*s.Overhead, num(s.Recovery.Mean), num(s.Failures.Mean))
	}
	tw.Flush()
	prs := experiment.PairedRatios(recs, varies, "protocol.kind")
	if len(prs) == 0 {
		return
	}
	fmt.Fprintln(w, "\npaired makespan ratios (replication r of both protocols faces the same failures):")
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, p := range prs {
		at := p.Rest
		if at == "" {
			at = "(base)"
		}
		fmt.Fprintf(tw, "  %s\t%s/%s\t%s\t95%% CI %s\t%d pairs\tunpaired CI %s\t\n", at, p.Num, p.Den,
			num(p.Paired.Mean), ci(p.Paired), p.Pairs, ci(p.Unpaired))
	}
	tw.Flush()
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
