package dp

import (
	"io"
	"os"
	"strings"
	"testing"
)

// addSeeds adds the given texts and broken variants of each to the fuzz
// corpus: cut in half, a line dropped, a line duplicated, a digit replaced
// by a letter, line endings changed to CRLF.
func addSeeds(f *testing.F, texts ...string) {
	for _, s := range texts {
		f.Add(s)
		f.Add(s[:len(s)/2])
		lines := strings.Split(s, "\n")
		if len(lines) > 3 {
			mid := len(lines) / 2
			f.Add(strings.Join(append(append([]string{}, lines[:mid]...), lines[mid+1:]...), "\n"))
			f.Add(strings.Join(append(append([]string{}, lines[:mid+1]...), lines[mid:]...), "\n"))
		}
		if k := strings.IndexAny(s[len(s)/2:], "0123456789"); k >= 0 {
			k += len(s) / 2
			f.Add(s[:k] + "x" + s[k+1:])
		}
		f.Add(strings.ReplaceAll(s, "\n", "\r\n"))
	}
}

// sharedSeeds reads shared test files, leaving out any that are missing:
// the fuzz targets still run on their built-in seeds.
func sharedSeeds(rels ...string) []string {
	var out []string
	for _, rel := range rels {
		if data, err := os.ReadFile(testdata + rel); err == nil {
			out = append(out, string(data))
		}
	}
	return out
}

func FuzzParseTSPLIB(f *testing.F) {
	addSeeds(f, sharedSeeds("tsplib/burma14.tsp.txt", "tsplib/ulysses16.tsp.txt", "tsplib/gr17.tsp.txt")...)
	addSeeds(f,
		"NAME: t\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 3 0\n3 0 4\nEOF\n",
		"DIMENSION: 4\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: LOWER_ROW\nEDGE_WEIGHT_SECTION\n1\n2 3\n4 5 6\nDISPLAY_DATA_SECTION\n1 0 0\n",
		"DIMENSION: 2\nEDGE_WEIGHT_TYPE: GEO\nNODE_COORD_SECTION\n1 1e308 -1e308\n2 90 180\n",
		"DIMENSION: 16777216\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: FULL_MATRIX\nEDGE_WEIGHT_SECTION\n1 2 3\n",
	)
	f.Fuzz(func(t *testing.T, s string) {
		tsp, err := ParseTSPLIB(strings.NewReader(s), "fuzz.tsp")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.tsp:") {
				t.Fatalf("error without file position: %v", err)
			}
			return
		}
		for i := 0; i < tsp.N && i < 5; i++ {
			tsp.Dist(i, tsp.N-1-i)
		}
		if tsp.N <= 9 {
			if length, tour, err := HeldKarp(tsp); err == nil {
				if got, err := tsp.TourLength(tour); err != nil || got != length {
					t.Fatalf("Held-Karp tour %v: length %d (%v), claimed %d", tour, got, err, length)
				}
			}
		}
	})
}

func FuzzParseFASTA(f *testing.F) {
	addSeeds(f, ">a desc\nACGT\nNNN\n>b\n\nac-gt*\n", ">x\n", "; c\n>y\tz\n  A C  \n")
	if lcs := sharedSeeds("lcs.txt"); len(lcs) > 0 {
		var sb strings.Builder
		for _, line := range strings.Split(lcs[0], "\n") {
			if cols := strings.Split(line, "\t"); len(cols) > 2 && !strings.HasPrefix(line, "#") {
				sb.WriteString(">" + cols[0] + "\n" + cols[1] + "\n" + cols[2] + "\n")
			}
		}
		addSeeds(f, sb.String(), lcs[0])
	}
	f.Fuzz(func(t *testing.T, s string) {
		recs, err := ParseFASTA(strings.NewReader(s), "fuzz.fa")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.fa:") {
				t.Fatalf("error without file position: %v", err)
			}
			return
		}
		for _, r := range recs {
			if strings.ContainsAny(r.Seq, " \t\r\n>") {
				t.Fatalf("sequence %q kept whitespace or a header", r.Seq)
			}
		}
		if len(recs) >= 2 && len(recs[0].Seq)*len(recs[1].Seq) <= 1<<20 {
			if LCSLength(recs[0].Seq, recs[1].Seq) != len(LCS(recs[0].Seq, recs[1].Seq)) {
				t.Fatal("LCSLength and LCS disagree")
			}
		}
	})
}

func FuzzParseKnapsack(f *testing.F) {
	addSeeds(f, sharedSeeds("knapsack01.txt")...)
	addSeeds(f,
		"name: A\nn: 2\ncapacity: 10\nweights: 3 4\nprofits: 5 6\noptimal_selection: 1 1\noptimal_value: 11\n",
		"name: B\nn: 1\ncapacity: 2147483647\nweights: 2147483647\nprofits: 2147483647\n",
		"name: C\nn: 99999999999\ncapacity: 1\nweights:\nprofits:\n",
	)
	f.Fuzz(func(t *testing.T, s string) {
		ins, err := ParseKnapsackFile(strings.NewReader(s), "fuzz.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.txt:") {
				t.Fatalf("error without file position: %v", err)
			}
			return
		}
		for _, in := range ins {
			if err := in.Validate(); err != nil {
				t.Fatalf("parser accepted an invalid instance: %v", err)
			}
			if len(in.Weights)*(in.Capacity+1) <= 1<<16 {
				v, take := in.Solve()
				if w, p := in.Evaluate(take); p != v || w > in.Capacity {
					t.Fatalf("Solve: value %d, selection worth %d weighing %d", v, p, w)
				}
				if in.OptimalValue >= 0 && in.Selection != nil && v < in.OptimalValue {
					t.Fatalf("Solve %d below a feasible claimed selection worth %d", v, in.OptimalValue)
				}
			}
		}
	})
}

// endless is a reader that repeats its text forever, like /dev/zero.
type endless string

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e[i%len(e)]
	}
	return len(p) - len(p)%len(e), nil
}

// TestParseEndlessInput feeds each parser an endless file: one endless
// line, and endless valid lines. They used to read it all into memory
// until the process was killed.
func TestParseEndlessInput(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MiB six times")
	}
	long := strings.Repeat("x", 1000)
	for _, tc := range []struct {
		name  string
		parse func(io.Reader) error
		lines string // a valid line to repeat
	}{
		{"FASTA", func(r io.Reader) error { _, err := ParseFASTA(r, "f"); return err }, ">x\n" + strings.Repeat("A", 1000) + "\n"},
		{"TSPLIB", func(r io.Reader) error { _, err := ParseTSPLIB(r, "f"); return err }, "COMMENT: " + long + "\n"},
		{"knapsack", func(r io.Reader) error { _, err := ParseKnapsackFile(r, "f"); return err }, "# " + long + "\n"},
	} {
		for _, in := range []endless{"A", endless(tc.lines)} {
			err := tc.parse(in)
			if err == nil || !strings.Contains(err.Error(), "file larger than 64 MiB") {
				t.Errorf("%s on endless %.10q...: %v, want a file larger than 64 MiB", tc.name, string(in), err)
			}
		}
	}
}
