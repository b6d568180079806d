package pida

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"strings"

	"ftsim/sim"
	"ftsim/workloads/internal/limits"
)

// Parallel IDA* (thesis 004, Algorithm 3.1) as message-driven objects.
//
// Every object is a worker holding one DFS Stack. Object 0 is also the
// coordinator: it owns the root, decides when an iteration is over and
// broadcasts the next cost bound. An idle worker asks a victim (random or
// asynchronous round robin) for work; a worker with work answers with
// Stack.Split, one without answers "no work". The search runs in slices of
// `budget` steps, each handler sending itself a continue message, so that
// work requests queued meanwhile are served between slices.
//
// Iteration end is detected by weight throwing (Mattern's credit recovery):
// the coordinator starts an iteration holding credit 1 = 2^0. A donor halves
// its credit 2^-k into 2^-(k+1) kept and 2^-(k+1) sent with the work, so a
// worker's credit is always a single power of two and travels as its
// exponent. A worker whose stack runs empty sends its credit, with its
// smallest exceeded f, back to the coordinator, which adds it to an exact
// binary fraction. Invariant: the credit held by workers, carried by work and
// credit messages in flight and summed at the coordinator is exactly 1, and
// every non-empty stack and every work message in flight holds credit > 0.
// So the sum reaches 1 exactly when no stack holds work and no work is in
// flight, whatever the order in which messages arrive: reordering changes
// when credit comes back, never how much. By then every worker that generated
// a child has reported it, so the minimum of the reported exceeded f is the
// next bound (the same as the sequential search's, since the tree searched is
// the same). A plain "every worker is idle" test would be wrong here: a work
// message in flight makes everyone look idle.
//
// Every message carries (iteration, bound). A worker that sees a newer
// iteration enters it at once, so the bound broadcast, a work message from a
// peer that heard first and the solution broadcast may arrive in any order.
// No work message of an older iteration can arrive (that iteration ended only
// when all its credit, including credit travelling with work, came back).
//
// A goal generated within the bound ends the search: its length equals the
// bound (Stack.Step), hence is optimal, and the finder broadcasts it.

// Message tags.
const (
	tagCont    int32 = iota + 1 // to self: run the next slice
	tagBound                    // coordinator: iteration i has bound b
	tagRequest                  // idle worker asks for work
	tagWork                     // donor: a split-off stack with credit
	tagNoWork                   // donor: nothing to give
	tagCredit                   // worker to coordinator: credit and smallest exceeded f
	tagSolved                   // a goal was found: the optimal length
)

// Params configure the parallel IDA* workload (scenario keys under
// [workload]). The instance is puzzle, or instance korf of korf_file; with
// neither, Korf's instance 94 (the quickest of korf15.tsv).
type Params struct {
	Puzzle         []int64 `toml:"puzzle"`           // 16 tiles, row-major, 0 = blank; goal 0 1 2 … 15
	Korf           int64   `toml:"korf"`             // instance id in korf_file (0 = none)
	KorfFile       string  `toml:"korf_file"`        // Korf table (korf15.tsv format)
	Workers        int64   `toml:"workers"`          // objects; 0 = nodes × objects_per_node
	ObjectsPerNode int64   `toml:"objects_per_node"` // workers per node when workers is 0
	Victim         string  `toml:"victim"`           // "random" or "round_robin"
	Budget         int64   `toml:"budget"`           // search steps (children generated) per handler slice
	ExpandOps      float64 `toml:"expand_ops"`       // modeled operations per node expanded
	Seed           int64   `toml:"seed"`             // seed of the victim choice
	RequestBytes   int64   `toml:"request_bytes"`    // modeled size of a control message, and the fixed part of a work message and of a worker's state
	BytesPerFrame  int64   `toml:"bytes_per_frame"`  // modeled size of one stack frame
}

// DefaultParams is Korf's instance 94 on one worker per node with random
// victims, 2000 steps per slice and 200 operations per expansion.
func DefaultParams() Params {
	return Params{ObjectsPerNode: 1, Victim: "random", Budget: 2000, ExpandOps: 200, Seed: 1,
		RequestBytes: 64, BytesPerFrame: 32}
}

// defaultPuzzle is Korf's instance 94 (optimal length 53, 121126 expansions).
const defaultPuzzle = "5 7 11 8 0 14 9 13 10 12 3 15 6 1 4 2"

// Workload is parallel IDA* on the 15-puzzle, checked against the
// sequential IDA* run in New.
type Workload struct {
	p       Params
	board   Board
	workers int
	random  bool

	// The sequential reference: bound and expansions of every iteration,
	// cum[i] the expansions of iterations 1..i, the optimal length.
	bounds    []int
	iterExp   []uint64
	cum       []uint64
	length    int
	refDigest string
}

// New builds the workload for a cluster of nodes nodes and runs the
// sequential reference. resolve maps a file name in the scenario to a path
// (relative to the scenario file); nil leaves names as they are.
func New(p Params, nodes int, resolve func(string) string) (*Workload, error) {
	w := &Workload{p: p}
	switch p.Victim {
	case "random":
		w.random = true
	case "round_robin":
	default:
		return nil, fmt.Errorf("workload.victim: %q is neither \"random\" nor \"round_robin\"", p.Victim)
	}
	var err error
	switch {
	case p.Workers < 0:
		return nil, fmt.Errorf("workload.workers must not be negative, got %d", p.Workers)
	case p.Workers > 0:
		w.workers, err = limits.Objects("workers", "", p.Workers)
	case p.ObjectsPerNode < 1:
		return nil, fmt.Errorf("workload.objects_per_node must be at least 1, got %d", p.ObjectsPerNode)
	default:
		w.workers, err = limits.Objects("objects_per_node", "cluster.nodes × objects_per_node", int64(nodes), p.ObjectsPerNode)
	}
	if err != nil {
		return nil, err
	}
	if p.Budget < 1 || p.Budget > 1<<30 {
		return nil, fmt.Errorf("workload.budget must be in 1..%d, got %d", 1<<30, p.Budget)
	}
	if p.ExpandOps < 0 || p.RequestBytes < 0 || p.BytesPerFrame < 0 {
		return nil, errors.New("workload.expand_ops, request_bytes and bytes_per_frame must not be negative")
	}
	b, err := instance(p, resolve)
	if err != nil {
		return nil, err
	}
	w.board = b
	w.bounds, w.iterExp, w.length = referenceTrace(b)
	if w.length < 0 {
		return nil, fmt.Errorf("workload: the sequential search found no solution for %v", b)
	}
	w.cum = make([]uint64, len(w.iterExp)+1)
	for i, e := range w.iterExp {
		w.cum[i+1] = w.cum[i] + e
	}
	w.refDigest = digest(w.length, w.bounds[len(w.bounds)-1])
	return w, nil
}

// instance picks the board from the parameters and checks that IDA* can
// solve it: a board that cannot reach the goal would make it search forever.
func instance(p Params, resolve func(string) string) (Board, error) {
	var b Board
	switch {
	case len(p.Puzzle) != 0 && (p.Korf != 0 || p.KorfFile != ""):
		return b, errors.New("workload: give puzzle or korf with korf_file, not both")
	case len(p.Puzzle) != 0:
		if len(p.Puzzle) != Cells {
			return b, fmt.Errorf("workload.puzzle has %d numbers, want %d (tiles 0..15 in row-major order, 0 = blank)", len(p.Puzzle), Cells)
		}
		for i, v := range p.Puzzle {
			if v < 0 || v >= Cells {
				return b, fmt.Errorf("workload.puzzle: position %d: tile %d out of range 0..15", i+1, v)
			}
			b[i] = uint8(v)
		}
		if err := b.Valid(); err != nil {
			return b, fmt.Errorf("workload.puzzle: %v (not a permutation of 0..15)", err)
		}
		if !b.Solvable() {
			return b, fmt.Errorf("workload.puzzle: %v cannot reach the goal 0 1 2 … 15 (wrong permutation parity)", b)
		}
		return b, nil
	case p.Korf != 0 || p.KorfFile != "":
		if p.Korf <= 0 || p.KorfFile == "" {
			return b, errors.New("workload: korf (a positive instance id) and korf_file go together")
		}
		path := p.KorfFile
		if resolve != nil {
			path = resolve(path)
		}
		f, err := os.Open(path)
		if err != nil {
			return b, fmt.Errorf("workload.korf_file: %w", err)
		}
		defer f.Close()
		ins, err := ParseKorf(f, path)
		if err != nil {
			return b, fmt.Errorf("workload.korf_file: %w", err)
		}
		for _, in := range ins {
			if int64(in.ID) == p.Korf {
				return in.Board, nil
			}
		}
		return b, fmt.Errorf("workload.korf: instance %d is not in %s", p.Korf, path)
	}
	return ParseBoard(defaultPuzzle)
}

// referenceTrace is SolveSequential recording each iteration's bound and
// expansions, which the progress measure needs; the tests check that it
// agrees with SolveSequential. A goal board is one iteration at bound 0
// with nothing expanded.
func referenceTrace(b Board) (bounds []int, expanded []uint64, length int) {
	if !b.Solvable() {
		return nil, nil, -1
	}
	h := Manhattan(b)
	if h == 0 {
		return []int{0}, []uint64{0}, 0
	}
	s := Stack{Frames: make([]Frame, 0, MaxBound+1)}
	for bound := h; ; {
		before := s.Expanded
		s.Reset()
		s.Push(b, 0, NoMove)
		r := s.Run(bound, 0)
		bounds = append(bounds, bound)
		expanded = append(expanded, s.Expanded-before)
		if r.Status == Solved {
			return bounds, expanded, r.Length
		}
		if s.MinExceeded == 0 || s.MinExceeded > MaxBound {
			return bounds, expanded, -1
		}
		bound = s.MinExceeded
	}
}

// digest identifies a result by what the search decides: the length found
// and the bound of the iteration that found it.
func digest(length, bound int) string {
	sum := sha256.Sum256([]byte("pida length=" + strconv.Itoa(length) + " bound=" + strconv.Itoa(bound)))
	return hex.EncodeToString(sum[:8])
}

// Board is the start position.
func (w *Workload) Board() Board { return w.board }

// Workers is the number of worker objects.
func (w *Workload) Workers() int { return w.workers }

// Optimal is the reference's optimal solution length.
func (w *Workload) Optimal() int { return w.length }

// Bounds returns the cost bound of each iteration of the reference, in order.
func (w *Workload) Bounds() []int { return append([]int(nil), w.bounds...) }

// ReferenceExpanded returns the nodes the sequential reference expanded in
// all its iterations and in all but the last. The parallel search expands
// exactly the latter before its last iteration (the same trees, partitioned
// among workers); in the last one it stops at a different point.
func (w *Workload) ReferenceExpanded() (total, beforeLast uint64) {
	k := len(w.iterExp)
	return w.cum[k], w.cum[k-1]
}

// NumObjects implements sim.Workload.
func (w *Workload) NumObjects() int { return w.workers }

// TotalProgress implements sim.Workload. Progress counts node expansions
// against the reference's, so that "at 30% progress" means about 30% of the
// work, and one more unit per worker when it learns the solution. A worker
// is credited with an equal share of each finished iteration's expansions
// and of its own expansions in the current one up to one less than its
// share of it: completed iterations are exact (the parallel search expands
// exactly the reference's nodes in them), and the sum stays below the total
// until every worker knows the answer, however the last iteration goes.
func (w *Workload) TotalProgress() int64 {
	return int64(w.cum[len(w.cum)-1]) + int64(w.workers)
}

// share is worker id's part of x units split as evenly as possible among n
// workers; it never decreases as x grows.
func share(x uint64, id, n int) uint64 {
	q, r := x/uint64(n), x%uint64(n)
	if uint64(id) < r {
		q++
	}
	return q
}

// NewObject implements sim.Workload: worker id before the search.
func (w *Workload) NewObject(id sim.ObjID) sim.Object {
	k := &Worker{w: w, id: int(id)}
	k.stack.Frames = make([]Frame, 0, 64)
	k.rng = splitmix(uint64(w.p.Seed) ^ (uint64(id)+1)*0x9e3779b97f4a7c15)
	if w.workers > 1 {
		k.rr = (int(id) + 1) % w.workers
	}
	return k
}

// Check implements sim.Workload: every worker must know the solution, and
// its length and final bound must equal the sequential reference's.
func (w *Workload) Check(objs []sim.Object) sim.Outcome {
	length, bound := -1, -1
	for i, o := range objs {
		k, ok := o.(*Worker)
		if !ok {
			return sim.Outcome{Detail: fmt.Sprintf("object %d is a %T, not a pida worker", i, o)}
		}
		if !k.done {
			return sim.Outcome{Detail: fmt.Sprintf("worker %d ended in iteration %d (bound %d) without the solution", i, k.iter, k.bound)}
		}
		if i == 0 {
			length, bound = k.length, k.bound
		} else if k.length != length || k.bound != bound {
			return sim.Outcome{Detail: fmt.Sprintf("workers disagree: worker 0 has length %d at bound %d, worker %d length %d at bound %d",
				length, bound, i, k.length, k.bound)}
		}
	}
	d := digest(length, bound)
	st := w.SearchStats(objs)
	total, before := w.ReferenceExpanded()
	// The answer alone would not show a subtree lost in an iteration before
	// the last, where no solution is to be found anyway: those iterations
	// expand exactly the sequential reference's nodes, whatever the schedule,
	// so a count that differs is a search that skipped or repeated work.
	out := sim.Outcome{Digest: d, Answer: strconv.Itoa(length),
		OK: d == w.refDigest && length == w.length && st.BeforeLast == before && st.Anomalies == 0}
	switch {
	case d != w.refDigest || length != w.length:
		out.Detail = fmt.Sprintf("length %d at bound %d, reference length %d at bound %d",
			length, bound, w.length, w.bounds[len(w.bounds)-1])
	case st.BeforeLast != before:
		out.Detail = fmt.Sprintf("expanded %d nodes before the last iteration, the sequential reference %d", st.BeforeLast, before)
	default:
		out.Detail = fmt.Sprintf("expanded %d nodes in %d iterations (sequential %d), %d before the last (sequential %d)",
			st.Expanded, st.Iterations, total, st.BeforeLast, before)
	}
	if st.Anomalies > 0 {
		out.Detail += fmt.Sprintf("; %d protocol anomalies (stale work, duplicate credit)", st.Anomalies)
	}
	return out
}

// SearchStats is the search effort of a run summed over workers, for
// reports.
type SearchStats struct {
	Expanded   uint64   // nodes expanded, all workers, all iterations
	Generated  uint64   // children generated, all workers
	BeforeLast uint64   // nodes expanded before each worker entered its final iteration
	PerWorker  []uint64 // nodes expanded by each worker
	Iterations int      // the highest iteration any worker reached
	Requests   uint64   // work requests sent
	Given      uint64   // work messages sent (successful splits)
	Anomalies  uint64   // messages that cannot occur under a correct protocol
}

// SearchStats sums the workers' counters. Objects that are not workers of
// this package are skipped.
func (w *Workload) SearchStats(objs []sim.Object) SearchStats {
	var s SearchStats
	for _, o := range objs {
		k, ok := o.(*Worker)
		if !ok {
			continue
		}
		s.Expanded += k.stack.Expanded
		s.Generated += k.stack.Generated
		s.BeforeLast += k.iterStart
		s.PerWorker = append(s.PerWorker, k.stack.Expanded)
		s.Iterations = max(s.Iterations, k.iter)
		s.Requests += k.requests
		s.Given += k.given
		s.Anomalies += k.anomalies
	}
	return s
}

// Worker is one process of the parallel search (the coordinator when its
// id is 0). Its whole state, the DFS stack included, is what MarshalBinary
// encodes.
type Worker struct {
	w  *Workload
	id int

	iter  int   // current iteration, 1-based; 0 before the first is known
	bound int   // its cost bound
	stack Stack // this worker's part of the iteration's search
	// credit is the exponent k of the credit 2^-k this worker holds; it is
	// valid when hasCredit, which holds exactly while the stack has work.
	credit    uint32
	hasCredit bool
	iterStart uint64 // stack.Expanded when this iteration was entered

	contPending bool // a continue message to self is in flight
	requesting  bool // a work request is outstanding
	rng         uint64
	rr          int // next round-robin victim

	done   bool
	length int

	// Coordinator: credit returned in this iteration as a binary fraction
	// (bit k of acc stands for 2^-k) and the smallest exceeded f reported.
	acc   []uint64
	minEx int

	requests, given, anomalies uint64
}

// Stack is the worker's live DFS stack, for critical-data replication
// (Stack.Delta) and recovery by a protocol.
func (k *Worker) Stack() *Stack { return &k.stack }

// Start begins the search on the coordinator; the other workers wait for
// its bound broadcast.
func (k *Worker) Start(ctx *sim.Ctx) {
	if k.id != 0 || k.iter != 0 {
		return
	}
	h := Manhattan(k.w.board)
	if h == 0 { // the start is the goal: nothing to search
		k.iter, k.bound = 1, 0
		k.finish(ctx, 0)
		return
	}
	k.startIteration(ctx, 1, h)
}

// startIteration is the coordinator opening iteration iter: everyone learns
// the bound, the coordinator takes the root and all the credit.
func (k *Worker) startIteration(ctx *sim.Ctx, iter, bound int) {
	k.enter(iter, bound)
	for i := 0; i < k.w.workers; i++ {
		if i != k.id {
			k.send(ctx, i, tagBound, nil)
		}
	}
	k.stack.Push(k.w.board, 0, NoMove)
	k.credit, k.hasCredit = 0, true
	k.kick(ctx)
}

// enter moves the worker to a newer iteration. Its stack is empty and it
// holds no credit: the previous iteration ended only when all work was done
// and all credit returned.
func (k *Worker) enter(iter, bound int) {
	if k.hasCredit || k.stack.Len() != 0 {
		k.anomalies++
	}
	k.iter, k.bound = iter, bound
	k.stack.Reset()
	k.hasCredit = false
	k.iterStart = k.stack.Expanded
	if k.id == 0 {
		k.acc = k.acc[:0]
		k.minEx = 0
	}
}

// Handle implements sim.Object.
func (k *Worker) Handle(ctx *sim.Ctx, m *sim.Message) {
	if m.Tag == tagCont {
		k.contPending = false
		k.slice(ctx)
		return
	}
	d := decoder{data: m.Payload}
	iter, bound := int(d.uvarint("iteration")), int(d.uvarint("bound"))
	if d.err != nil || bound > MaxBound || iter > 1<<30 {
		k.anomalies++
		return
	}
	if k.done {
		return // the answer is known; requesters learn it from the broadcast
	}
	// Only the bound and solution broadcasts and work move a worker to a
	// newer iteration. Requests and "no work" answers carry their sender's
	// iteration as information: a fault-tolerance protocol holds back only
	// the messages that carry work, credit or the search's outcome, so a
	// "no work" may come from a coordinator state that a recovery then rolls
	// back to the iteration before.
	if iter > k.iter && (m.Tag == tagBound || m.Tag == tagWork || m.Tag == tagSolved) {
		k.enter(iter, bound)
	}
	src := int(m.Src)
	switch m.Tag {
	case tagBound:
		// entering the iteration was all there was to do
	case tagRequest:
		k.serve(ctx, src)
	case tagNoWork:
		k.requesting = false
	case tagWork:
		k.requesting = false
		exp := d.uvarint("credit")
		var given Stack
		if d.err != nil || exp > 1<<20 || given.UnmarshalBinary(d.data) != nil || iter < k.iter {
			k.anomalies++ // impossible: work never outlives its iteration
			break
		}
		// Frames need not continue the one below (Step only looks at the
		// top), so the work goes on top of whatever is left. Appending keeps
		// the frames below untouched, so Stack.Delta stays correct.
		k.stack.Frames = append(k.stack.Frames, given.Frames...)
		if k.hasCredit {
			// Our own credit already covers the stack the work joins, so
			// the incoming credit can go home at once.
			k.returnCredit(ctx, uint32(exp), k.stack.MinExceeded)
		} else {
			k.credit, k.hasCredit = uint32(exp), true
		}
	case tagCredit:
		exp := d.uvarint("credit")
		minEx := d.uvarint("exceeded")
		if d.err != nil || exp > 1<<20 || minEx > 3*MaxBound || k.id != 0 {
			k.anomalies++
			break
		}
		if iter == k.iter {
			k.absorb(ctx, uint32(exp), int(minEx))
		} else {
			k.anomalies++ // credit cannot outlive its iteration either
		}
	case tagSolved:
		l := d.uvarint("length")
		if d.err != nil || l > MaxBound+1 {
			k.anomalies++
			break
		}
		k.done, k.length = true, int(l)-1
		return
	default:
		k.anomalies++
	}
	k.kick(ctx)
}

// slice runs one bounded piece of search and charges it.
func (k *Worker) slice(ctx *sim.Ctx) {
	if k.done || !k.hasCredit {
		k.kick(ctx)
		return
	}
	before := k.stack.Expanded
	r := k.stack.Run(k.bound, int(k.w.p.Budget))
	ctx.Compute(float64(k.stack.Expanded-before) * k.w.p.ExpandOps)
	switch r.Status {
	case Solved:
		k.finish(ctx, r.Length)
		return
	case Exhausted:
		k.hasCredit = false
		k.returnCredit(ctx, k.credit, k.stack.MinExceeded)
	}
	k.kick(ctx)
}

// kick keeps the worker going: another slice while it has work, a work
// request when it has none (and none is outstanding).
func (k *Worker) kick(ctx *sim.Ctx) {
	switch {
	case k.done:
	case k.hasCredit:
		if !k.contPending {
			k.contPending = true
			ctx.Send(ctx.Self(), tagCont, 0, nil)
		}
	case !k.requesting && k.w.workers > 1 && k.iter > 0:
		k.requesting = true
		k.requests++
		k.send(ctx, k.victim(), tagRequest, nil)
	}
}

// victim picks the worker to ask for work: uniformly among the others, or
// the next one in this worker's own cyclic order (asynchronous round robin).
func (k *Worker) victim() int {
	n := k.w.workers
	if k.w.random {
		var x uint64
		k.rng, x = splitmixNext(k.rng)
		v := int(x % uint64(n-1))
		if v >= k.id {
			v++
		}
		return v
	}
	v := k.rr
	if v == k.id {
		v = (v + 1) % n
	}
	k.rr = (v + 1) % n
	return v
}

// serve answers a work request with half of the untried moves of the frame
// nearest the root (Stack.Split) and half of this worker's credit.
func (k *Worker) serve(ctx *sim.Ctx, to int) {
	if k.hasCredit {
		if given, ok := k.stack.Split(); ok {
			k.credit++
			k.given++
			data, _ := given.MarshalBinary() // a Stack always encodes
			payload := binary.AppendUvarint(k.header(), uint64(k.credit))
			payload = append(payload, data...)
			size := k.w.p.RequestBytes + int64(given.Len())*k.w.p.BytesPerFrame
			ctx.Send(sim.ObjID(to), tagWork, size, payload)
			return
		}
	}
	k.send(ctx, to, tagNoWork, nil)
}

// returnCredit gives credit 2^-exp back to the coordinator with the
// smallest f this worker saw exceed the bound.
func (k *Worker) returnCredit(ctx *sim.Ctx, exp uint32, minEx int) {
	if k.id == 0 {
		k.absorb(ctx, exp, minEx)
		return
	}
	tail := binary.AppendUvarint(nil, uint64(exp))
	tail = binary.AppendUvarint(tail, uint64(minEx))
	k.send(ctx, 0, tagCredit, tail)
}

// absorb adds returned credit at the coordinator; when the whole credit is
// back the iteration is over and the next one starts.
func (k *Worker) absorb(ctx *sim.Ctx, exp uint32, minEx int) {
	k.minEx = MergeExceeded(k.minEx, minEx)
	if !k.addCredit(int(exp)) {
		k.anomalies++ // more than the whole credit: a duplicated message
	}
	if k.acc[0]&1 == 0 {
		return
	}
	if k.minEx == 0 || k.minEx > MaxBound {
		// Nothing exceeded the bound: the space is exhausted without a
		// goal, impossible for a solvable board.
		k.finish(ctx, -1)
		return
	}
	k.startIteration(ctx, k.iter+1, k.minEx)
}

// addCredit adds 2^-e to the binary fraction acc, carrying into larger
// powers. It reports false if the sum exceeds 1 (a duplicated credit
// message); the sum then counts as 1.
func (k *Worker) addCredit(e int) bool {
	if len(k.acc) > 0 && k.acc[0]&1 != 0 {
		return false
	}
	for {
		for len(k.acc) <= e/64 {
			k.acc = append(k.acc, 0)
		}
		bit := uint64(1) << (e % 64)
		if k.acc[e/64]&bit == 0 {
			k.acc[e/64] |= bit
			break
		}
		k.acc[e/64] &^= bit
		if e == 0 {
			k.acc[0] |= 1
			return false
		}
		e--
	}
	if k.acc[0]&1 == 0 {
		return true
	}
	over := k.acc[0] != 1
	for _, x := range k.acc[1:] {
		over = over || x != 0
	}
	if over {
		clear(k.acc)
		k.acc[0] = 1
	}
	return !over
}

// finish records the solution and tells everyone.
func (k *Worker) finish(ctx *sim.Ctx, length int) {
	k.done, k.length = true, length
	k.hasCredit = false
	tail := binary.AppendUvarint(nil, uint64(length+1)) // 0: no solution exists
	for i := 0; i < k.w.workers; i++ {
		if i != k.id {
			k.send(ctx, i, tagSolved, tail)
		}
	}
}

// header is the (iteration, bound) every message but continue starts with.
func (k *Worker) header() []byte {
	b := binary.AppendUvarint(make([]byte, 0, 16), uint64(k.iter))
	return binary.AppendUvarint(b, uint64(k.bound))
}

func (k *Worker) send(ctx *sim.Ctx, to int, tag int32, tail []byte) {
	ctx.Send(sim.ObjID(to), tag, k.w.p.RequestBytes, append(k.header(), tail...))
}

// Progress implements sim.Object; see Workload.TotalProgress.
func (k *Worker) Progress() int64 {
	w := k.w
	last := len(w.iterExp)
	if k.done {
		return int64(share(w.cum[last], k.id, w.workers)) + 1
	}
	if k.iter == 0 {
		return 0
	}
	i := min(k.iter, last)
	lo, hi := share(w.cum[i-1], k.id, w.workers), share(w.cum[i], k.id, w.workers)
	if hi > lo {
		lo += min(k.stack.Expanded-k.iterStart, hi-lo-1)
	}
	return int64(lo)
}

// ModeledSize implements sim.Object: the fixed part plus the stack frames.
func (k *Worker) ModeledSize() int64 {
	return k.w.p.RequestBytes + int64(k.stack.Len())*k.w.p.BytesPerFrame
}

const workerVersion = 1

const (
	flagDone = 1 << iota
	flagCredit
	flagCont
	flagRequesting
)

// MarshalBinary encodes the whole worker state: a version byte, the
// counters and flags as uvarints, the coordinator's credit sum, then the
// stack in its own format.
func (k *Worker) MarshalBinary() ([]byte, error) {
	var flags uint64
	if k.done {
		flags |= flagDone
	}
	if k.hasCredit {
		flags |= flagCredit
	}
	if k.contPending {
		flags |= flagCont
	}
	if k.requesting {
		flags |= flagRequesting
	}
	b := make([]byte, 0, 64+8*len(k.acc)+k.stack.Len())
	b = append(b, workerVersion)
	for _, v := range []uint64{uint64(k.iter), uint64(k.bound), flags, uint64(k.credit), k.iterStart,
		k.rng, uint64(k.rr), uint64(k.length + 1), uint64(k.minEx), k.requests, k.given, k.anomalies,
		uint64(len(k.acc))} {
		b = binary.AppendUvarint(b, v)
	}
	for _, x := range k.acc {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	data, err := k.stack.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return append(b, data...), nil
}

// UnmarshalBinary restores what MarshalBinary encoded, rejecting truncated
// or inconsistent data.
func (k *Worker) UnmarshalBinary(data []byte) error {
	d := decoder{data: data}
	if v := d.byte("version"); d.err == nil && v != workerVersion {
		return fmt.Errorf("pida: worker %d: unknown state version %d", k.id, v)
	}
	var f [13]uint64
	names := [...]string{"iteration", "bound", "flags", "credit", "iteration start", "rng", "victim",
		"length", "exceeded", "requests", "given", "anomalies", "credit words"}
	for i := range f {
		f[i] = d.uvarint(names[i])
	}
	if d.err != nil {
		return fmt.Errorf("pida: worker %d: %w", k.id, d.err)
	}
	switch {
	case f[0] > 1<<30, f[1] > MaxBound, f[2] >= 1<<4, f[3] > 1<<20, f[6] >= uint64(max(k.w.workers, 1)),
		f[7] > MaxBound+1, f[8] > 3*MaxBound, f[12] > uint64(len(d.data))/8:
		return fmt.Errorf("pida: worker %d: state field out of range", k.id)
	}
	acc := make([]uint64, f[12])
	for i := range acc {
		acc[i] = binary.LittleEndian.Uint64(d.data)
		d.data = d.data[8:]
	}
	var st Stack
	if err := st.UnmarshalBinary(d.data); err != nil {
		return fmt.Errorf("pida: worker %d: %w", k.id, err)
	}
	k.iter, k.bound = int(f[0]), int(f[1])
	k.done, k.hasCredit = f[2]&flagDone != 0, f[2]&flagCredit != 0
	k.contPending, k.requesting = f[2]&flagCont != 0, f[2]&flagRequesting != 0
	k.credit, k.iterStart, k.rng, k.rr = uint32(f[3]), f[4], f[5], int(f[6])
	k.length, k.minEx = int(f[7])-1, int(f[8])
	k.requests, k.given, k.anomalies = f[9], f[10], f[11]
	k.acc = acc
	k.stack = st
	return nil
}

// String summarises the worker for traces and test failures.
func (k *Worker) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "worker %d: iteration %d bound %d, %d frames, %d expanded", k.id, k.iter, k.bound, k.stack.Len(), k.stack.Expanded)
	if k.hasCredit {
		fmt.Fprintf(&sb, ", credit 2^-%d", k.credit)
	}
	if k.done {
		fmt.Fprintf(&sb, ", done: length %d", k.length)
	}
	if k.id == 0 {
		n := 0
		for _, x := range k.acc {
			n += bits.OnesCount64(x)
		}
		fmt.Fprintf(&sb, ", %d credit bits back", n)
	}
	return sb.String()
}

// splitmix seeds a victim generator; splitmixNext advances it. SplitMix64
// has a one-word state, which keeps the generator inside the worker state
// (handlers are re-executed, so the choice must be reproducible from it).
func splitmix(seed uint64) uint64 {
	_, x := splitmixNext(seed)
	return x
}

func splitmixNext(s uint64) (state, out uint64) {
	s += 0x9e3779b97f4a7c15
	z := s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return s, z ^ z>>31
}
