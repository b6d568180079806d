package pida

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

const korfPath = "../../../shared/testdata/korf15.tsv"

// loadKorf reads the shared Korf table or skips the test when the shared
// checkout is absent.
func loadKorf(t testing.TB) []KorfInstance {
	t.Helper()
	f, err := os.Open(korfPath)
	if err != nil {
		t.Skipf("shared test data not available: %v", err)
	}
	defer f.Close()
	ins, err := ParseKorf(f, korfPath)
	if err != nil {
		t.Fatal(err)
	}
	return ins
}

func korfByID(t *testing.T, id int) KorfInstance {
	t.Helper()
	for _, in := range loadKorf(t) {
		if in.ID == id {
			return in
		}
	}
	t.Fatalf("Korf instance %d not in %s", id, korfPath)
	return KorfInstance{}
}

func mustBoard(t testing.TB, s string) Board {
	t.Helper()
	b, err := ParseBoard(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseBoard(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string // substring; "" means success
	}{
		{"0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15", ""},
		{"14,13,15,7, 11,12,9,5,6,0,2,1,4,8,10,3", ""},
		{"  14\t13 15 7 11 12 9 5 6 0 2 1 4 8 10 3\n", ""},
		{"0 1 2 3 4 5 6 7 8 9 10 11 12 13 14", "15 numbers, want 16"},
		{"0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", "17 numbers, want 16"},
		{"", "0 numbers"},
		{"0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 x", `position 16: "x" is not an integer`},
		{"0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 16", "tile 16 out of range"},
		{"0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 -1", "tile -1 out of range"},
		{"0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 14", "position 16: tile 14 appears twice"},
	}
	for _, tc := range tests {
		b, err := ParseBoard(tc.in)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("ParseBoard(%q): %v", tc.in, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ParseBoard(%q) error = %v, want it to contain %q", tc.in, err, tc.wantErr)
		case err == nil:
			if again := mustBoard(t, b.String()); again != b {
				t.Errorf("String round trip of %q gave %v", tc.in, again)
			}
		}
	}
}

func TestSolvableAndManhattan(t *testing.T) {
	goal := Goal()
	swapped := goal
	swapped[1], swapped[2] = swapped[2], swapped[1]
	tests := []struct {
		name      string
		b         Board
		solvable  bool
		manhattan int
	}{
		{"goal", goal, true, 0},
		{"one move", goal.Apply(Right), true, 1},
		{"two moves", goal.Apply(Right).Apply(Down), true, 2},
		{"tiles 1 and 2 swapped", swapped, false, 2},
		{"sorted with the blank in row 1", mustBoard(t, "1 2 3 4 0 5 6 7 8 9 10 11 12 13 14 15"), false, 7},
		{"reversed", mustBoard(t, "15 14 13 12 11 10 9 8 7 6 5 4 3 2 1 0"), true, 58},
	}
	for _, tc := range tests {
		if got := tc.b.Solvable(); got != tc.solvable {
			t.Errorf("%s: Solvable = %v, want %v", tc.name, got, tc.solvable)
		}
		if got := Manhattan(tc.b); got != tc.manhattan {
			t.Errorf("%s: Manhattan = %d, want %d", tc.name, got, tc.manhattan)
		}
	}
	var invalid Board // sixteen zeros
	if invalid.Solvable() {
		t.Error("an invalid board reported solvable")
	}
	if l, _ := SolveSequential(swapped); l != -1 {
		t.Errorf("SolveSequential on an unsolvable board = %d, want -1", l)
	}
	for _, in := range loadKorf(t) {
		if !in.Board.Solvable() {
			t.Errorf("Korf %d not solvable", in.ID)
		}
		if got := Manhattan(in.Board); got != in.Manhattan {
			t.Errorf("Korf %d: Manhattan = %d, file says %d", in.ID, got, in.Manhattan)
		}
	}
}

func TestMoves(t *testing.T) {
	goal := Goal() // blank at 0: only Down and Right
	tests := []struct {
		m     Move
		legal bool
		blank int
	}{{Up, false, 0}, {Down, true, 4}, {Left, false, 0}, {Right, true, 1}}
	for _, tc := range tests {
		if got := goal.CanMove(tc.m); got != tc.legal {
			t.Errorf("CanMove(%v) = %v, want %v", tc.m, got, tc.legal)
		}
		after := goal.Apply(tc.m)
		if got := after.Blank(); got != tc.blank {
			t.Errorf("Apply(%v): blank at %d, want %d", tc.m, got, tc.blank)
		}
		if tc.legal && after.Apply(tc.m.Reverse()) != goal {
			t.Errorf("%v then %v does not return to the goal", tc.m, tc.m.Reverse())
		}
	}
}

func TestKorfOptimalLengths(t *testing.T) {
	for _, in := range loadKorf(t) {
		// Korf's node counts rank difficulty; above ~20M nodes this code
		// takes seconds (instance 1: ~3.3 s), the rest well under 0.3 s.
		if testing.Short() && in.Nodes > 20_000_000 {
			t.Logf("Korf %d skipped in -short (%d nodes in Korf's run)", in.ID, in.Nodes)
			continue
		}
		start := time.Now()
		got, expanded := SolveSequential(in.Board)
		t.Logf("Korf %3d: length %d, %d nodes expanded, %v", in.ID, got, expanded, time.Since(start).Round(time.Millisecond))
		if got != in.Optimal {
			t.Errorf("Korf %d: length %d, published optimum %d", in.ID, got, in.Optimal)
		}
	}
}

// iteration runs one cost-bound iteration over a pool of stacks, processed
// round-robin with the given step budget, splitting every stack in two
// whenever the pool is below maxPool. It returns the result and the totals
// that must not depend on how the work was divided.
func iteration(root Board, bound, budget, maxPool int) (r StepResult, minEx int, generated uint64, splits int) {
	var first Stack
	first.Push(root, 0, NoMove)
	pool := []*Stack{&first}
	for live := 1; live > 0; {
		live = 0
		for i := 0; i < len(pool); i++ {
			s := pool[i]
			if s.Len() == 0 {
				continue
			}
			res := s.Run(bound, budget)
			if res.Status == Solved {
				return res, 0, 0, splits
			}
			if res.Status == Running {
				live++
				if len(pool) < maxPool {
					if g, ok := s.Split(); ok {
						pool = append(pool, &g)
						splits++
						live++
					}
				}
			}
		}
	}
	for _, s := range pool {
		minEx = MergeExceeded(minEx, s.MinExceeded)
		generated += s.Generated
	}
	return StepResult{Status: Exhausted}, minEx, generated, splits
}

func TestSplitRoundRobin(t *testing.T) {
	tests := []struct {
		id, budget, maxPool int
	}{
		{94, 1, 64},       // split after every generated node
		{55, 7, 16},       // small budget, moderate pool
		{12, 1000, 8},     // coarse slices
		{79, 50, 1 << 10}, // pool grows to a thousand stacks
	}
	for _, tc := range tests {
		in := korfByID(t, tc.id)
		totalSplits := 0
		for bound := Manhattan(in.Board); ; {
			// The sequential iteration at this bound is the reference.
			var seq Stack
			seq.Push(in.Board, 0, NoMove)
			want := seq.Run(bound, 0)

			got, minEx, gen, splits := iteration(in.Board, bound, tc.budget, tc.maxPool)
			if got.Status != want.Status {
				t.Fatalf("Korf %d bound %d: split search %v, sequential %v", tc.id, bound, got.Status, want.Status)
			}
			if want.Status == Solved {
				if got.Length != in.Optimal || want.Length != in.Optimal {
					t.Errorf("Korf %d: split search length %d, sequential %d, optimum %d", tc.id, got.Length, want.Length, in.Optimal)
				}
				break
			}
			// An exhausted iteration searches the same tree however it is
			// divided: same nodes generated, same next bound.
			if gen != seq.Generated || minEx != seq.MinExceeded {
				t.Fatalf("Korf %d bound %d (%d splits): generated %d, next bound %d; sequential %d, %d",
					tc.id, bound, splits, gen, minEx, seq.Generated, seq.MinExceeded)
			}
			totalSplits += splits
			bound = seq.MinExceeded
		}
		if totalSplits == 0 {
			t.Errorf("Korf %d: no split happened", tc.id)
		}
	}
}

func TestSplitScheme(t *testing.T) {
	var s Stack
	s.Push(Goal().Apply(Down).Apply(Right), 0, NoMove) // blank at 5: four moves
	if r := s.Step(100); r.Status != Running || s.Len() != 2 {
		t.Fatalf("first step: %+v, %d frames", r, s.Len())
	}
	// Root has Down, Left, Right untried: the later two go.
	g, ok := s.Split()
	if !ok || g.Len() != 1 || g.Frames[0].Todo != 1<<Left|1<<Right || s.Frames[0].Todo != 1<<Down {
		t.Fatalf("split 1: ok=%v given %+v, root keeps %04b", ok, g.Frames, s.Frames[0].Todo)
	}
	g2, _ := s.Split() // the last root move goes whole
	if g2.Frames[0].Todo != 1<<Down || s.Frames[0].Todo != 0 {
		t.Fatalf("split 2: given %04b, root keeps %04b", g2.Frames[0].Todo, s.Frames[0].Todo)
	}
	g3, _ := s.Split() // now from the second frame
	if g3.Frames[0].G != 1 {
		t.Fatalf("split 3 came from depth %d, want 1", g3.Frames[0].G)
	}
	var empty Stack
	if _, ok := empty.Split(); ok {
		t.Error("split of an empty stack succeeded")
	}
	last := Stack{Frames: []Frame{{Todo: 1 << Left}, {}}}
	if _, ok := last.Split(); ok || last.Frames[0].Todo != 1<<Left {
		t.Errorf("the donor's last move was given away (root keeps %04b)", last.Frames[0].Todo)
	}
}

// midSearchStack returns a stack part-way through the iteration at bound h+6 of
// Korf 12, with a couple of splits taken out of it.
func midSearchStack(t *testing.T) *Stack {
	in := korfByID(t, 12)
	s := &Stack{}
	s.Push(in.Board, 0, NoMove)
	s.Run(Manhattan(in.Board)+6, 5000)
	s.Split()
	s.Run(Manhattan(in.Board)+6, 300)
	s.Split()
	if s.Len() < 5 {
		t.Fatalf("stack too shallow for the test: %d frames", s.Len())
	}
	return s
}

func TestMarshalRoundTrip(t *testing.T) {
	s := midSearchStack(t)
	given, _ := s.Split()
	for name, st := range map[string]*Stack{"mid-search": s, "split-off": &given, "empty": {}} {
		data, err := st.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if limit := 1 + 3*10 + 10 + st.Len(); len(data) > limit {
			t.Errorf("%s: %d frames encode to %d bytes, want <= %d", name, st.Len(), len(data), limit)
		}
		var back Stack
		if err := back.UnmarshalBinary(data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(back.Frames, st.Frames) || back.MinExceeded != st.MinExceeded ||
			back.Expanded != st.Expanded || back.Generated != st.Generated {
			t.Fatalf("%s: round trip changed the stack", name)
		}
		// Both continue identically.
		ra, rb := st.Run(60, 20000), back.Run(60, 20000)
		if ra != rb || !slices.Equal(back.Frames, st.Frames) || back.Generated != st.Generated {
			t.Errorf("%s: decoded stack diverged: %+v vs %+v", name, rb, ra)
		}
	}
}

func TestDeltaReplication(t *testing.T) {
	live := midSearchStack(t)
	backup := live.Clone()
	live.ResetDelta()
	bound := Manhattan(live.Frames[0].Board) + 6
	for i := 0; i < 400; i++ {
		live.Run(bound, 1+i*37%500)
		if i%5 == 0 {
			live.Split()
		}
		d := live.Delta()
		data, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var wire Delta
		if err := wire.UnmarshalBinary(data); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if err := backup.ApplyDelta(wire); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		live.ResetDelta()
		if !slices.Equal(backup.Frames, live.Frames) || backup.MinExceeded != live.MinExceeded || backup.Generated != live.Generated {
			t.Fatalf("round %d: backup differs from live stack after delta (keep %d, %d frames)", i, d.Keep, len(d.Frames))
		}
		if live.Len() == 0 {
			break
		}
	}
	var empty Stack
	if err := empty.ApplyDelta(Delta{Keep: 3}); err == nil {
		t.Error("delta keeping more frames than the backup has was accepted")
	}
}

func TestUnmarshalErrors(t *testing.T) {
	s := midSearchStack(t)
	good, _ := s.MarshalBinary()
	badBoard := slices.Clone(good)
	// The first frame is full: tag after 1 version byte and 4 varints.
	hdr := 1
	for k := 0; k < 4; k++ {
		for badBoard[hdr] >= 0x80 {
			hdr++
		}
		hdr++
	}
	badBoard[hdr+1] = 0x00 // two blanks
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"empty", nil, "truncated"},
		{"version", append([]byte{9}, good[1:]...), "version 9"},
		{"truncated", good[:len(good)-1], "truncated"},
		{"trailing", append(slices.Clone(good), 0), "trailing"},
		{"bad board", badBoard, "appears twice"},
		{"huge count", []byte{1, 0, 0, 0, 0xff, 0xff, 0x03}, "impossible"},
		{"child first", []byte{1, 0, 0, 0, 1, 0x80}, "bad tag"},
	}
	for _, tc := range tests {
		var st Stack
		err := st.UnmarshalBinary(tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.wantErr)
		}
	}
}

func TestParseKorfErrors(t *testing.T) {
	tests := []struct {
		in, wantErr string
	}{
		{"# only comments\n", "k.tsv:1: no instances"},
		{"1\t0 1 2\t57\t10\n", "k.tsv:1: instance 1: board has 3 numbers"},
		{"id\ttiles\n1\t14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3\n", "k.tsv:2: 2 tab-separated columns"},
		{"x\t14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3\t57\t1\n", `id "x"`},
		{"1\t1 0 2 3 4 5 6 7 8 9 10 11 12 13 15 14\t5\t1\n", "cannot reach the goal"},
		{"1\t14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3\tabc\t1\n", "optimal_length"},
		{"1\t14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3\t57\t-1\n", "node count"},
		{"0\t14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3\t57\t1\n", `id "0" is not a positive integer`},
		{"1\t14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3\t57\t1\n\n1\t0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\t0\t0\n", "k.tsv:3: instance 1 is already on line 1"},
		// Instance 1's Manhattan distance is 41: 39 is too short, 58 of the wrong parity.
		{"1\t14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3\t39\t1\n", "optimal_length 39 is impossible for a board at Manhattan distance 41"},
		{"1\t14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3\t58\t1\n", "optimal_length 58 is impossible"},
		{"1\t14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3\t57\t1\t40\n", `manhattan_h "40" is not the board's Manhattan distance 41`},
		// It used to print "k.tsv: bufio.Scanner: token too long", no line.
		{"# c\n" + strings.Repeat("x", 70000) + "\n", "k.tsv:2: line longer than 64 KiB"},
	}
	for _, tc := range tests {
		_, err := ParseKorf(strings.NewReader(tc.in), "k.tsv")
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseKorf(%q) error %v, want it to contain %q", tc.in, err, tc.wantErr)
		}
	}
}

func FuzzParseBoard(f *testing.F) {
	f.Add("0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15")
	f.Add("14,13,15,7,11,12,9,5,6,0,2,1,4,8,10,3")
	f.Add("0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 14")
	f.Add("0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 99999999999999999999")
	f.Add(",,, -0 +1")
	if data, err := os.ReadFile(korfPath); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if cols := strings.Split(line, "\t"); len(cols) > 1 {
				f.Add(cols[1])
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBoard(s)
		if err != nil {
			return
		}
		if b.Valid() != nil {
			t.Fatalf("ParseBoard(%q) accepted an invalid board %v", s, b)
		}
		if again, err := ParseBoard(b.String()); err != nil || again != b {
			t.Fatalf("round trip of %v: %v, %v", b, again, err)
		}
		_ = b.Solvable()
	})
}

// FuzzParseKorf checks that ParseKorf never panics, that every error names
// a line of the input, and that what it accepts is consistent and reads
// back the same when written out again.
func FuzzParseKorf(f *testing.F) {
	if data, err := os.ReadFile(korfPath); err == nil {
		f.Add(string(data))
	}
	f.Add("id\ttiles\toptimal_length\tnodes\n1\t14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3\t57\t276361933\t41\n")
	f.Add("7\t0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\t0\t0\n7\t1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15\t1\t1\n")
	f.Add("# c\n\n2\t1 2 3 0 4 5 6 7 8 9 10 11 12 13 14 15\t3\t9\t3\n")
	f.Fuzz(func(t *testing.T, in string) {
		ins, err := ParseKorf(strings.NewReader(in), "k.tsv")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > strings.Count(in, "\n")+1 {
				t.Fatalf("ParseKorf(%q): error %v does not name a line of the input", in, err)
			}
			return
		}
		var out strings.Builder
		ids := make(map[int]bool)
		for _, k := range ins {
			h := Manhattan(k.Board)
			if k.ID < 1 || ids[k.ID] || !k.Board.Solvable() || k.Optimal < h || (k.Optimal-h)%2 != 0 || (k.Manhattan != -1 && k.Manhattan != h) {
				t.Fatalf("ParseKorf(%q) accepted an inconsistent row %+v (h = %d)", in, k, h)
			}
			ids[k.ID] = true
			fmt.Fprintf(&out, "%d\t%v\t%d\t%d", k.ID, k.Board, k.Optimal, k.Nodes)
			if k.Manhattan >= 0 {
				fmt.Fprintf(&out, "\t%d", k.Manhattan)
			}
			out.WriteByte('\n')
		}
		again, err := ParseKorf(strings.NewReader(out.String()), "k.tsv")
		if err != nil || !slices.Equal(again, ins) {
			t.Fatalf("round trip of %q through %q: %+v, %v", in, out.String(), again, err)
		}
	})
}

func FuzzUnmarshalStack(f *testing.F) {
	var s Stack
	s.Push(mustBoard(f, "14 1 9 6 4 8 12 5 7 2 3 0 10 11 13 15"), 0, NoMove)
	s.Run(41, 3000)
	good, _ := s.MarshalBinary()
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var st Stack
		if st.UnmarshalBinary(data) != nil {
			return
		}
		again, _ := st.MarshalBinary()
		var back Stack
		if err := back.UnmarshalBinary(again); err != nil || !slices.Equal(back.Frames, st.Frames) {
			t.Fatalf("re-encoding a decoded stack failed: %v", err)
		}
		st.Run(MaxBound, 100) // decoded stacks are safe to search
	})
}
