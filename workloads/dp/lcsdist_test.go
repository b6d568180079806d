package dp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ftsim/sim"
)

// Every published pair of lcs.txt, distributed over 1, 2, 3 and 5 objects
// (more objects than columns for the short strings), gives its length.
func TestLCSDistributedPublished(t *testing.T) {
	for _, c := range lcsCases(t) {
		for _, objects := range []int{1, 2, 3, 5} {
			t.Run(fmt.Sprintf("%s-%d", c.id, objects), func(t *testing.T) {
				p := DefaultParams()
				p.A, p.B, p.Objects = c.a, c.b, int64(objects)
				_, res := runDP(t, build(t, p, nodesFor(objects)), nodesFor(objects), sim.DefaultConfig(), &sim.BaseProtocol{})
				if !res.Outcome.OK || res.Outcome.Answer != fmt.Sprint(c.length) {
					t.Fatalf("outcome %+v, published length %d", res.Outcome, c.length)
				}
			})
		}
	}
}

// Random strings of many shapes, block heights and object counts end with
// LCSLength and the reference digest.
func TestLCSDistributedRandom(t *testing.T) {
	cases := []struct{ na, nb, objects, blockRows int }{
		{1, 1, 1, 0},
		{0, 9, 3, 0}, // no rows: no stages
		{9, 0, 3, 0}, // no columns: every object empty
		{50, 50, 1, 0},
		{50, 50, 4, 0},
		{50, 50, 4, 1},
		{50, 50, 4, 50},
		{50, 50, 4, 7},
		{13, 80, 7, 3},
		{80, 13, 7, 0},
		{30, 5, 9, 4}, // more objects than columns
		{257, 129, 6, 0},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%dx%d-%d-%d", c.na, c.nb, c.objects, c.blockRows), func(t *testing.T) {
			p := DefaultParams()
			p.RandomA, p.RandomB, p.Seed = int64(c.na), int64(c.nb), int64(i+1)
			p.Objects, p.BlockRows = int64(c.objects), int64(c.blockRows)
			if c.na == 0 && c.nb == 0 {
				t.Skip()
			}
			w := build(t, p, nodesFor(c.objects)).(*LCSWorkload)
			a, b := w.Strings()
			if len(a) != c.na || len(b) != c.nb || (c.na > 9 && a == b) {
				t.Fatalf("random strings %q %q", a, b)
			}
			rt, res := runDP(t, w, nodesFor(c.objects), sim.DefaultConfig(), &sim.BaseProtocol{})
			if want := LCSLength(a, b); !res.Outcome.OK || res.Outcome.Answer != fmt.Sprint(want) {
				t.Fatalf("outcome %+v, LCSLength %d", res.Outcome, want)
			}
			// The directions the objects hold are the reference table's.
			tab := LCSTable(a, b)
			for k := 0; k < c.objects; k++ {
				o := rt.Object(sim.ObjID(k)).(*LCSObject)
				lo, hi := o.Columns()
				for i := 1; i <= len(a); i++ {
					for j := lo + 1; j <= hi; j++ {
						if got, want := o.Direction(i, j), lcsDirection(tab, a, b, i, j); got != want {
							t.Fatalf("object %d cell (%d, %d): direction %d, want %d", k, i, j, got, want)
						}
					}
				}
				for j := lo; j <= hi && hi > lo; j++ {
					if o.Row()[j-lo] != tab[len(a)][j] {
						t.Fatalf("object %d: last row differs at column %d", k, j)
					}
				}
			}
		})
	}
}

// lcsDirection is which input gave t[i][j], by eq. 4.4 and LCS's tie rule.
func lcsDirection(tab [][]int32, a, b string, i, j int) byte {
	switch {
	case a[i-1] == b[j-1]:
		return LCSDiag
	case tab[i-1][j] >= tab[i][j-1]:
		return LCSUp
	}
	return LCSLeft
}

// lcsBlockDirs computes what LCSBlock computes.
func TestLCSBlockDirsMatchesLCSBlock(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		a, b := RandomDNA(int(seed%7)+1, seed), RandomDNA(int(seed%5)+1, seed+100)
		top, left := make([]int32, len(b)+1), make([]int32, len(a)+1)
		for j := range top {
			top[j] = int32(j / 2)
		}
		left[0] = top[0]
		for i := 1; i < len(left); i++ {
			left[i] = left[i-1] + int32(i%2)
		}
		bottom, right := make([]int32, len(b)+1), make([]int32, len(a)+1)
		LCSBlock(a, b, top, left, bottom, right)
		row, right2 := append([]int32(nil), top...), make([]int32, len(a)+1)
		dirs := make([]byte, (len(a)*len(b)+3)/4+1)
		lcsBlockDirs(a, b, row, left, right2, dirs, 0)
		if fmt.Sprint(row, right2) != fmt.Sprint(bottom, right) {
			t.Fatalf("seed %d: lcsBlockDirs %v %v, LCSBlock %v %v", seed, row, right2, bottom, right)
		}
	}
}

// The wavefront: each non-empty object waits for its left neighbour only and
// sends one right edge per row block, of BlockRows+1 values.
func TestLCSWavefrontMessages(t *testing.T) {
	p := DefaultParams()
	p.RandomA, p.RandomB, p.Objects, p.BlockRows = 10, 4, 6, 3 // 6 objects over 4 columns: 0 and 3 own none
	w := build(t, p, 3).(*LCSWorkload)
	if w.Stages() != 4 {
		t.Fatalf("%d stages, want 4 row blocks of 3, 3, 3, 1 rows", w.Stages())
	}
	var nonEmpty []sim.ObjID
	for k := 0; k < 6; k++ {
		if lo, hi := w.Columns(sim.ObjID(k)); hi > lo {
			nonEmpty = append(nonEmpty, sim.ObjID(k))
		}
	}
	if len(nonEmpty) != 4 {
		t.Fatalf("non-empty objects %v", nonEmpty)
	}
	for x, k := range nonEmpty {
		var left, right []sim.ObjID
		if x > 0 {
			left = []sim.ObjID{nonEmpty[x-1]}
		}
		if x < 3 {
			right = []sim.ObjID{nonEmpty[x+1]}
		}
		if got := w.ReceiverSet(2, k); fmt.Sprint(got) != fmt.Sprint(left) {
			t.Errorf("ReceiverSet(2, %d) = %v, want %v", k, got, left)
		}
		if got := w.SenderSet(2, k); fmt.Sprint(got) != fmt.Sprint(right) {
			t.Errorf("SenderSet(2, %d) = %v, want %v", k, got, right)
		}
	}
	r := &recorder{}
	_, res := runDP(t, w, 3, sim.DefaultConfig(), r)
	if !res.Outcome.OK {
		t.Fatalf("outcome %+v", res.Outcome)
	}
	// 3 links × 4 row blocks; edges of 4, 4, 4 and 2 values of 4 bytes.
	if len(r.msgs) != 12 {
		t.Fatalf("%d messages, want 12", len(r.msgs))
	}
	var bytes int64
	for _, m := range r.msgs {
		bytes += m.size
		if int64(m.payload) != m.size {
			t.Errorf("message %+v: real and modeled sizes differ at bytes_per_cell 4", m)
		}
	}
	if bytes != 3*(4+4+4+2)*4 {
		t.Fatalf("%d bytes, want %d", bytes, 3*14*4)
	}
}

// A FASTA file with two records is the instance; the key is resolved.
func TestLCSFromFASTA(t *testing.T) {
	dir := t.TempDir()
	fa := ">x first\nABCB\nDAB\n>y second\nBDCABA\n"
	if err := os.WriteFile(filepath.Join(dir, "pair.fa"), []byte(fa), 0o644); err != nil {
		t.Fatal(err)
	}
	p := DefaultParams()
	p.FASTA, p.Objects = "pair.fa", 3
	w, err := New(p, 3, func(s string) string { return filepath.Join(dir, s) })
	if err != nil {
		t.Fatal(err)
	}
	_, res := runDP(t, w, 3, sim.DefaultConfig(), &sim.BaseProtocol{})
	if !res.Outcome.OK || res.Outcome.Answer != "4" {
		t.Fatalf("outcome %+v, want the CLRS length 4", res.Outcome)
	}
	if err := os.WriteFile(filepath.Join(dir, "three.fa"), []byte(fa+">z\nAC\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.FASTA = "three.fa"
	if _, err := New(p, 3, func(s string) string { return filepath.Join(dir, s) }); err == nil || !strings.Contains(err.Error(), "workload.fasta") {
		t.Fatalf("three records: %v", err)
	}
}
