package dp

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

const testdata = "../../../shared/testdata/"

// readShared returns a shared test file or skips the test when the shared
// checkout is absent.
func readShared(t testing.TB, rel string) string {
	t.Helper()
	data, err := os.ReadFile(testdata + rel)
	if err != nil {
		t.Skipf("shared test data not available: %v", err)
	}
	return string(data)
}

type lcsCase struct {
	id, a, b, lcs string
	length        int
}

// lcsCases parses lcs.txt: '#' comments, a header row, then tab-separated
// id, A, B, published LCS, length, source.
func lcsCases(t *testing.T) []lcsCase {
	var out []lcsCase
	for i, line := range strings.Split(readShared(t, "lcs.txt"), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' || strings.HasPrefix(line, "id\t") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 6 {
			t.Fatalf("lcs.txt:%d: %d columns, want 6", i+1, len(cols))
		}
		n, err := strconv.Atoi(cols[4])
		if err != nil {
			t.Fatalf("lcs.txt:%d: %v", i+1, err)
		}
		out = append(out, lcsCase{cols[0], cols[1], cols[2], cols[3], n})
	}
	if len(out) == 0 {
		t.Fatal("lcs.txt holds no cases")
	}
	return out
}

func TestLCSPublished(t *testing.T) {
	for _, c := range lcsCases(t) {
		if got := LCSLength(c.a, c.b); got != c.length {
			t.Errorf("%s: LCSLength = %d, published %d", c.id, got, c.length)
		}
		if got := LCSLength(c.b, c.a); got != c.length {
			t.Errorf("%s: LCSLength swapped = %d, published %d", c.id, got, c.length)
		}
		if !IsSubsequence(c.lcs, c.a) || !IsSubsequence(c.lcs, c.b) {
			t.Errorf("%s: published LCS %q is not common to both strings", c.id, c.lcs)
		}
		s := LCS(c.a, c.b)
		if len(s) != c.length || !IsSubsequence(s, c.a) || !IsSubsequence(s, c.b) {
			t.Errorf("%s: LCS = %q, not a common subsequence of length %d", c.id, s, c.length)
		}
		// lcs.txt: the LCS is unique for every pair except CLRS-1.
		if c.id != "CLRS-1" && s != c.lcs {
			t.Errorf("%s: LCS = %q, published (unique) %q", c.id, s, c.lcs)
		}
	}
}

// bruteLCS tries every subsequence of a (len(a) <= 12).
func bruteLCS(a, b string) int {
	best := 0
	for mask := 0; mask < 1<<len(a); mask++ {
		var sub []byte
		for i := range a {
			if mask&(1<<i) != 0 {
				sub = append(sub, a[i])
			}
		}
		if len(sub) > best && IsSubsequence(string(sub), b) {
			best = len(sub)
		}
	}
	return best
}

func TestLCSAgainstBruteForce(t *testing.T) {
	tests := []struct{ a, b string }{
		{"", ""}, {"", "ACGT"}, {"A", "A"}, {"AB", "BA"}, {"aA", "Aa"},
	}
	for seed := uint64(0); seed < 40; seed++ {
		a, b := RandomDNA(int(seed%9), seed), RandomDNA(int(seed*7%11), seed+100)
		tests = append(tests, struct{ a, b string }{a, b})
	}
	for _, tc := range tests {
		want := bruteLCS(tc.a, tc.b)
		if got := LCSLength(tc.a, tc.b); got != want {
			t.Errorf("LCSLength(%q, %q) = %d, brute force %d", tc.a, tc.b, got, want)
		}
		if got := len(LCS(tc.a, tc.b)); got != want {
			t.Errorf("len(LCS(%q, %q)) = %d, brute force %d", tc.a, tc.b, got, want)
		}
	}
}

// TestLCSBlockWavefront tiles the table into blocks, computes them block by
// block from their boundaries only, and checks every boundary against the
// full table: what the distributed wavefront does.
func TestLCSBlockWavefront(t *testing.T) {
	a, b := RandomDNA(157, 1), RandomDNA(203, 2)
	full := LCSTable(a, b)
	tests := []struct{ rows, cols int }{{1, 1}, {7, 13}, {157, 203}, {50, 1}, {16, 64}}
	for _, tc := range tests {
		// colRow holds the row above the current block row; each block
		// sweeps its part down in place. Neighbouring blocks share the
		// boundary column j1, which a block overwrites with its bottom-right
		// value while the next block still needs the old one as its corner,
		// so the old value is put back for it (the next block then writes
		// the same new value there as bottom[0]).
		colRow := make([]int32, len(b)+1)
		for i0 := 0; i0 < len(a); i0 += tc.rows {
			i1 := min(i0+tc.rows, len(a))
			left := make([]int32, i1-i0+1) // column 0 is all zeros
			for j0 := 0; j0 < len(b); j0 += tc.cols {
				j1 := min(j0+tc.cols, len(b))
				top := colRow[j0 : j1+1]
				corner := top[len(top)-1] // top-right, which the block overwrites
				right := make([]int32, i1-i0+1)
				LCSBlock(a[i0:i1], b[j0:j1], top, left, top, right)
				if j1 < len(b) {
					top[len(top)-1] = corner
				}
				if right[0] != corner {
					t.Fatalf("block %dx%d at (%d,%d): right[0] = %d, want the old top-right %d", tc.rows, tc.cols, i0, j0, right[0], corner)
				}
				for i := range right {
					if right[i] != full[i0+i][j1] {
						t.Fatalf("block %dx%d at (%d,%d): right column differs at row %d", tc.rows, tc.cols, i0, j0, i0+i)
					}
				}
				for j := range top[:len(top)-1] {
					if top[j] != full[i1][j0+j] {
						t.Fatalf("block %dx%d at (%d,%d): bottom row differs at column %d", tc.rows, tc.cols, i0, j0, j0+j)
					}
				}
				left = right
			}
		}
		if got, want := colRow[len(b)], int32(LCSLength(a, b)); got != want {
			t.Errorf("blocks %dx%d: corner %d, LCSLength %d", tc.rows, tc.cols, got, want)
		}
	}
}

func TestRandomDNA(t *testing.T) {
	a, b, c := RandomDNA(1000, 7), RandomDNA(1000, 7), RandomDNA(1000, 8)
	if a != b {
		t.Error("same seed gave different sequences")
	}
	if a == c {
		t.Error("different seeds gave the same sequence")
	}
	if len(a) != 1000 || strings.Trim(a, "ACGT") != "" {
		t.Errorf("RandomDNA: length %d or bases outside ACGT", len(a))
	}
	for _, base := range "ACGT" {
		if n := strings.Count(a, string(base)); n < 200 || n > 300 {
			t.Errorf("base %c appears %d times in 1000, expected about 250", base, n)
		}
	}
	if RandomDNA(0, 1) != "" {
		t.Error("RandomDNA(0) not empty")
	}
	// Pinned so that generated workloads never change silently.
	if got := RandomDNA(16, 42); got != pinnedDNA {
		t.Errorf("RandomDNA(16, 42) = %q, pinned %q", got, pinnedDNA)
	}
}

const pinnedDNA = "ACAGCGTGGAGATCTG"

func TestParseFASTA(t *testing.T) {
	good := ">seq1 first sequence\nACGT acgt\n\tNNRY\n;old-style comment\n>seq2\tdesc with tab\n*-ACG\n>empty\n"
	recs, err := ParseFASTA(strings.NewReader(good), "good.fa")
	if err != nil {
		t.Fatal(err)
	}
	want := []FastaRecord{
		{ID: "seq1", Description: "first sequence", Seq: "ACGTacgtNNRY", Line: 1},
		{ID: "seq2", Description: "desc with tab", Seq: "*-ACG", Line: 5},
		{ID: "empty", Seq: "", Line: 7},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i := range want {
		if recs[i] != want[i] {
			t.Errorf("record %d = %+v, want %+v", i, recs[i], want[i])
		}
	}
	errs := []struct{ in, want string }{
		{"ACGT\n>x\nACGT\n", "f.fa:1:1: sequence data before the first '>' header"},
		{"\n  GG\n", "f.fa:2:3: sequence data before"},
		{">x\nAC1T\n", "f.fa:2:3: illegal sequence character '1'"},
		{">x\nACGT\r\nAC.T\n", "f.fa:3:3: illegal sequence character '.'"},
		{"", "f.fa:1: no FASTA records"},
		{"; only a comment\n", "f.fa:1: no FASTA records"},
	}
	for _, tc := range errs {
		_, err := ParseFASTA(strings.NewReader(tc.in), "f.fa")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFASTA(%q) error %v, want %q", tc.in, err, tc.want)
		}
	}
	// A long single-line sequence is not limited by a scanner buffer.
	long := RandomDNA(200000, 3)
	recs, err = ParseFASTA(strings.NewReader(">long\n"+long+"\n"), "long.fa")
	if err != nil || recs[0].Seq != long {
		t.Errorf("long line: %v", err)
	}
}

func TestFASTAToLCS(t *testing.T) {
	var sb strings.Builder
	cases := lcsCases(t)
	for _, c := range cases {
		sb.WriteString(">" + c.id + "-A\n" + c.a + "\n>" + c.id + "-B\n" + c.b + "\n")
	}
	recs, err := ParseFASTA(strings.NewReader(sb.String()), "lcs.fa")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if got := LCSLength(recs[2*i].Seq, recs[2*i+1].Seq); got != c.length {
			t.Errorf("%s via FASTA: %d, want %d", c.id, got, c.length)
		}
	}
}
