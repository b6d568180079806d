package abft

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"ftsim/sim"
	"ftsim/sim/simtest"
	"ftsim/workloads/dp"
	"ftsim/workloads/life"
)

const testdata = "../../../shared/testdata/"

func sharedFile(t *testing.T, name string) string {
	t.Helper()
	if _, err := os.Stat(testdata + name); err != nil {
		t.Skipf("shared test data not available: %v", err)
	}
	return testdata + name
}

// dpCase is a DP instance with its published answer.
type dpCase struct {
	name   string
	params func(t *testing.T) dp.Params
	answer string // published (shared/testdata)
}

// The instances: burma14 (optimum 3323, TSPLIB), Burkardt's P01 (309) and
// an LCS of two random 200-base strings checked against the sequential
// reference (the published lcs.txt pairs are a few characters long: they
// are run in TestDPPublishedLCS).
var dpCases = []dpCase{
	{"lcs", func(t *testing.T) dp.Params {
		p := dp.DefaultParams()
		p.RandomA, p.RandomB, p.BlockRows = 200, 180, 20
		return p
	}, ""},
	{"tsp-burma14", func(t *testing.T) dp.Params {
		p := dp.DefaultParams()
		p.Problem, p.TSPLIB = "tsp", sharedFile(t, "tsplib/burma14.tsp.txt")
		return p
	}, "3323"},
	{"knapsack-P01", func(t *testing.T) dp.Params {
		p := dp.DefaultParams()
		p.Problem, p.File, p.Instance = "knapsack", sharedFile(t, "knapsack01.txt"), "P01"
		return p
	}, "309"},
}

type dpRun struct {
	res   sim.Result
	proto *DPProtocol
	w     dp.StagedWorkload
}

func runDPABFT(t *testing.T, p dp.Params, objects, spares int, planned []sim.ScriptedFailure, cfg DPConfig) dpRun {
	t.Helper()
	p.Requests = true
	return runDPMode(t, p, objects, spares, planned, cfg)
}

// runDPMode runs with the messaging mode p selects.
func runDPMode(t *testing.T, p dp.Params, objects, spares int, planned []sim.ScriptedFailure, cfg DPConfig) dpRun {
	t.Helper()
	return runDPBoot(t, p, objects, spares, 20*sim.Microsecond, planned, cfg)
}

// runDPBoot runs with spares that take boot to start.
func runDPBoot(t *testing.T, p dp.Params, objects, spares int, boot sim.Time, planned []sim.ScriptedFailure, cfg DPConfig) dpRun {
	t.Helper()
	p.Objects = int64(objects)
	wl, err := dp.New(p, objects, nil)
	if err != nil {
		t.Fatal(err)
	}
	proto, err := NewDP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := sim.DefaultConfig()
	c.Nodes, c.Spares = objects, spares
	c.SpareBoot = boot
	c.DetectDelay = 5 * sim.Microsecond
	c.Limit = 100 * sim.Second
	if len(planned) > 0 {
		c.Failures, c.Planned = sim.ScriptedFailures, planned
	}
	rt, err := sim.New(c, wl, proto)
	if err != nil {
		t.Fatal(err)
	}
	res := rt.Run()
	simtest.AuditMemory(t, "dp/abft", proto)
	return dpRun{res, proto, wl.(dp.StagedWorkload)}
}

// Failure-free, the explicit critical-data messages are exactly the
// thesis's counts: LCS +2 per iteration after the first (eq. 4.13 - 4.12),
// TSP none (§4.4.2), and every application message of the request-reply
// algorithm is what eqs. 4.12 and 5.6 count.
func TestDPExtraMessages(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8} {
		t.Run(fmt.Sprintf("lcs-%d", n), func(t *testing.T) {
			p := dp.DefaultParams()
			p.RandomA, p.RandomB, p.BlockRows = 60, 80, 10
			r := runDPABFT(t, p, n, 0, nil, DefaultDPConfig())
			if !r.res.Outcome.OK {
				t.Fatalf("outcome %+v", r.res.Outcome)
			}
			S := r.w.Stages()
			if got, want := r.proto.Counters.ExplicitMsgs, int64(LCSExtraMessages(n)*(S-1)); got != want {
				t.Errorf("explicit messages %d, want %d = %d × (%d iterations - 1)", got, want, LCSExtraMessages(n), S)
			}
			if got, want := r.proto.Counters.AppMsgs, int64(LCSMessagesPerIteration(n)*S); got != want {
				t.Errorf("application messages %d, want %d (eq. 4.12 × %d iterations)", got, want, S)
			}
		})
		t.Run(fmt.Sprintf("tsp-%d", n), func(t *testing.T) {
			p := dp.DefaultParams()
			p.Problem, p.RandomCities = "tsp", 9
			r := runDPABFT(t, p, n, 0, nil, DefaultDPConfig())
			if !r.res.Outcome.OK || r.proto.Counters.ExplicitMsgs != int64(TSPExtraMessages(n)) || r.proto.Counters.Piggybacked == 0 {
				t.Fatalf("outcome %+v, %d explicit, %d piggybacked", r.res.Outcome, r.proto.Counters.ExplicitMsgs, r.proto.Counters.Piggybacked)
			}
		})
	}
}

// Fine-grained knapsack (one capacity column per process, N = C+1): item i
// adds exactly 2w_i explicit flag-bit messages (eq. 5.8 - 5.6) to the
// 2(N-w_i) of the algorithm; w = 1 is the best case (+2), w = N-1 the worst
// (+2(N-1)), and weights 1..N-1 once each average +N (eq. 5.7).
func TestDPKnapsackExtraMessages(t *testing.T) {
	const N = 7
	cases := []struct {
		name    string
		weights []int64
	}{
		{"best", []int64{3, 1, 1, 1, 1}},
		{"worst", []int64{3, N - 1, N - 1, N - 1}},
		{"average", []int64{2, 1, 2, 3, 4, 5, 6}},
		{"mixed", []int64{1, 5, 2, 6, 3, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := dp.DefaultParams()
			p.Problem, p.Capacity, p.Weights = "knapsack", N-1, c.weights
			for i := range c.weights {
				p.Profits = append(p.Profits, int64(3+5*i%7))
			}
			r := runDPABFT(t, p, N, 0, nil, DefaultDPConfig())
			if !r.res.Outcome.OK {
				t.Fatalf("outcome %+v", r.res.Outcome)
			}
			var extra, app int
			for i := 1; i < len(c.weights); i++ { // item 0 reads row -1: no messages
				extra += KnapsackExtraMessages(N, int(c.weights[i]))
				app += KnapsackMessagesPerIteration(N, int(c.weights[i]))
			}
			if got := r.proto.Counters.ExplicitMsgs; got != int64(extra) {
				t.Errorf("explicit messages %d, want %d", got, extra)
			}
			if got := r.proto.Counters.AppMsgs; got != int64(app) {
				t.Errorf("application messages %d, want %d", got, app)
			}
			items := int64(len(c.weights) - 1)
			switch c.name {
			case "best":
				if r.proto.Counters.ExplicitMsgs != items*int64(KnapsackExtraMessagesBest(N)) {
					t.Errorf("best case: %d, want +%d per item", r.proto.Counters.ExplicitMsgs, KnapsackExtraMessagesBest(N))
				}
			case "worst":
				if r.proto.Counters.ExplicitMsgs != items*int64(KnapsackExtraMessagesWorst(N)) {
					t.Errorf("worst case: %d, want +%d per item", r.proto.Counters.ExplicitMsgs, KnapsackExtraMessagesWorst(N))
				}
			case "average":
				if r.proto.Counters.ExplicitMsgs != items*int64(KnapsackExtraMessagesAverage(N)) {
					t.Errorf("average: %d, want +%d per item", r.proto.Counters.ExplicitMsgs, KnapsackExtraMessagesAverage(N))
				}
			}
		})
	}
}

// Single, simultaneous non-adjacent, simultaneous adjacent and successive
// failures, on spares or on survivors: every run ends with the published
// answer, the failed objects are rebuilt from their peers' copies, and
// with non-adjacent failures nobody else rolls back.
func TestDPRecovery(t *testing.T) {
	const objects = 6
	at := func(p float64, nodes ...int) []sim.ScriptedFailure {
		var out []sim.ScriptedFailure
		for _, n := range nodes {
			out = append(out, sim.ScriptedFailure{Node: sim.NodeID(n), Progress: p, ByProgress: true})
		}
		return out
	}
	patterns := []struct {
		name      string
		planned   []sim.ScriptedFailure
		spares    int
		failures  int
		noForcing bool
	}{
		{"single-spare", at(0.4, 2), 1, 1, true},
		{"single-survivor", at(0.4, 2), 0, 1, true},
		{"first-object", at(0.5, 0), 1, 1, true},
		{"last-object", at(0.5, objects-1), 0, 1, true},
		{"simultaneous", at(0.5, 1, 3, 5), 3, 3, true},
		{"simultaneous-survivors", at(0.5, 0, 2, 4), 0, 3, true},
		{"adjacent", at(0.45, 2, 3), 2, 2, true},
		// Object 1 fails twice (its first spare is node objects), then 4.
		{"successive", append(at(0.25, 1), append(at(0.55, objects), at(0.8, 4)...)...), 3, 3, true},
		// Object 2 fails after its neighbour 1 was rebuilt: a knapsack
		// back-tracking into items before 1's rebuild finds 1's messages of
		// then gone and reads the values from 1's flag bits instead (§5.4
		// case 1.2.2).
		{"successive-neighbours", append(at(0.25, 1), append(at(0.5, 4), at(0.75, 2)...)...), 3, 3, true},
		// Both holders of object 2's copies fail one after the other, then 2
		// itself: the rebuilt holders got their copies back (restock), so 2
		// is rebuilt near where it was, not from its first stages.
		{"holders-then-owner", append(at(0.25, 1), append(at(0.5, 3), at(0.75, 2)...)...), 3, 3, true},
		{"early", at(0.02, 3), 1, 1, true},
		{"late", at(0.97, 3), 1, 1, true},
	}
	for _, c := range dpCases {
		for _, f := range patterns {
			t.Run(c.name+"/"+f.name, func(t *testing.T) {
				r := runDPABFT(t, c.params(t), objects, f.spares, f.planned, DefaultDPConfig())
				if !r.res.Finished || !r.res.Outcome.OK {
					t.Fatalf("finished %v, outcome %+v, counters %+v", r.res.Finished, r.res.Outcome, r.proto.Counters)
				}
				if c.answer != "" && r.res.Outcome.Answer != c.answer {
					t.Fatalf("answer %s, published %s", r.res.Outcome.Answer, c.answer)
				}
				if got := r.proto.Counters.Recovered; got != int64(f.failures) {
					t.Errorf("%d objects recovered, want %d (counters %+v)", got, f.failures, r.proto.Counters)
				}
				if f.name != "early" && r.proto.Counters.FromScratch != 0 {
					t.Errorf("%d objects rebuilt from scratch, not from their peers' copies", r.proto.Counters.FromScratch)
				}
				if r.proto.Counters.StagesRedone > 3*int64(f.failures) {
					t.Errorf("%d stages redone over %d failures", r.proto.Counters.StagesRedone, f.failures)
				}
				if f.noForcing && r.proto.Counters.Forced != 0 {
					t.Errorf("%d live objects rolled back", r.proto.Counters.Forced)
				}
			})
		}
	}
}

// The published LCS pairs (CLRS, LeetCode) survive a failure too.
func TestDPPublishedLCS(t *testing.T) {
	sharedFile(t, "lcs.txt")
	pairs := []struct{ a, b, answer string }{
		{"ABCBDAB", "BDCABA", "4"}, {"abcde", "ace", "3"}, {"abc", "abc", "3"}, {"abc", "def", "0"},
	}
	for _, pr := range pairs {
		t.Run(pr.a+"-"+pr.b, func(t *testing.T) {
			p := dp.DefaultParams()
			p.A, p.B, p.BlockRows = pr.a, pr.b, 1
			r := runDPABFT(t, p, 3, 1, []sim.ScriptedFailure{{Node: 1, Progress: 0.5, ByProgress: true}}, DefaultDPConfig())
			if !r.res.Outcome.OK || r.res.Outcome.Answer != pr.answer {
				t.Fatalf("outcome %+v, published %s", r.res.Outcome, pr.answer)
			}
		})
	}
}

// Without request-reply messaging (the workloads' push mode) there is no
// request to piggyback on: the critical data rides on the data messages to
// P_S only, plus the explicit wrap-around messages, and recovery still ends
// with the published answers.
func TestDPPushMode(t *testing.T) {
	at := func(p float64, nodes ...int) []sim.ScriptedFailure {
		var out []sim.ScriptedFailure
		for _, n := range nodes {
			out = append(out, sim.ScriptedFailure{Node: sim.NodeID(n), Progress: p, ByProgress: true})
		}
		return out
	}
	for _, c := range dpCases {
		for _, f := range [][]sim.ScriptedFailure{at(0.4, 2), at(0.5, 1, 3), at(0.5, 2, 3)} {
			t.Run(fmt.Sprintf("%s/%d", c.name, len(f)), func(t *testing.T) {
				r := runDPMode(t, c.params(t), 6, len(f), f, DefaultDPConfig())
				if !r.res.Outcome.OK || (c.answer != "" && r.res.Outcome.Answer != c.answer) {
					t.Fatalf("outcome %+v, published %q, counters %+v", r.res.Outcome, c.answer, r.proto.Counters)
				}
				if r.proto.Counters.Recovered != int64(len(f)) {
					t.Fatalf("counters %+v", r.proto.Counters)
				}
			})
		}
	}
}

// Knapsack §5.4 case 2: when an object and the peers holding its latest
// flag bits fail together, its bits of the last items are gone and it is
// rebuilt at an earlier item: here three processes in a row out of seven,
// one column each, so for the items of weight 1 both holders of process
// 3's bits (processes 2 and 4) fail with it. The run still ends with the
// reference value.
func TestDPKnapsackLostFlags(t *testing.T) {
	p := dp.DefaultParams()
	p.Problem, p.Capacity = "knapsack", 6
	p.Weights = []int64{1, 2, 1, 3, 1, 2, 1, 1, 2, 1, 3, 1}
	for i := range p.Weights {
		p.Profits = append(p.Profits, int64(2+(7*i)%5))
	}
	planned := []sim.ScriptedFailure{{Node: 2, Progress: 0.6, ByProgress: true},
		{Node: 3, Progress: 0.6, ByProgress: true}, {Node: 4, Progress: 0.6, ByProgress: true}}
	r := runDPABFT(t, p, 7, 3, planned, DefaultDPConfig())
	if !r.res.Outcome.OK || r.proto.Counters.Recovered != 3 {
		t.Fatalf("outcome %+v, counters %+v", r.res.Outcome, r.proto.Counters)
	}
	if r.proto.Counters.StagesRedone == 0 {
		t.Errorf("no object went back past its last item: counters %+v", r.proto.Counters)
	}
}

// A failure while another is being recovered: the first failed object's
// spare is still booting when its left neighbour (which holds copies of its
// critical data) fails too, so the plan is made again with the copies left.
func TestDPFailureDuringRecovery(t *testing.T) {
	for _, c := range dpCases {
		t.Run(c.name, func(t *testing.T) {
			planned := []sim.ScriptedFailure{{Node: 2, Progress: 0.4, ByProgress: true}, {Node: 1, Progress: 0.45, ByProgress: true}}
			p := c.params(t)
			p.Requests = true
			r := runDPBoot(t, p, 6, 2, 2*sim.Millisecond, planned, DefaultDPConfig())
			if !r.res.Outcome.OK || (c.answer != "" && r.res.Outcome.Answer != c.answer) || r.proto.Counters.Recovered != 2 {
				t.Fatalf("outcome %+v, counters %+v", r.res.Outcome, r.proto.Counters)
			}
			if r.proto.Counters.Forced != 0 || r.proto.Counters.FromScratch != 0 || r.proto.Counters.Rounds < 2 {
				t.Errorf("counters %+v: want two rounds, nothing forced or from scratch", r.proto.Counters)
			}
		})
	}
}

// The DP protocol refuses any other workload: the run stops at once with
// the reason, and CheckDPWorkload says so before a run.
func TestDPNeedsDP(t *testing.T) {
	lp := life.DefaultParams()
	lp.Width, lp.Height, lp.Generations = 16, 16, 2
	w, _ := life.New(lp, 4, nil)
	if CheckDPWorkload(w) == nil {
		t.Fatal("life accepted")
	}
	proto, err := NewDP(DefaultDPConfig())
	if err != nil {
		t.Fatal(err)
	}
	rt, _ := sim.New(sim.DefaultConfig(), w, proto)
	res := rt.Run()
	if res.Finished || !strings.Contains(res.Stats.UnrecoverableNote, "dp workload") {
		t.Fatalf("finished %v, note %q", res.Finished, res.Stats.UnrecoverableNote)
	}
	if _, err := NewDP(DPConfig{HeaderBytes: -1}); err == nil {
		t.Fatal("negative header_bytes accepted")
	}
}
