package dp

// The LCS table t[i][j] is the LCS length of a[:i] and b[:j]:
//
//	t[i][j] = t[i-1][j-1] + 1                 if a[i-1] == b[j-1]
//	        = max(t[i-1][j], t[i][j-1])       otherwise
//
// with row 0 and column 0 zero. Cells of one anti-diagonal are independent
// (thesis 004 eq. 4.4); the distributed version cuts the table into blocks
// and computes them in wavefront order with LCSBlock. Comparison is by byte
// and case-sensitive.

// LCSLength returns the length of a longest common subsequence of a and b
// in O(len(a)·len(b)) time and O(min) memory.
func LCSLength(a, b string) int {
	if len(b) > len(a) {
		a, b = b, a
	}
	row := make([]int32, len(b)+1)
	for i := 0; i < len(a); i++ {
		lcsRow(a[i], b, row)
	}
	return int(row[len(b)])
}

// lcsRow advances row from t[i-1][·] to t[i][·] for character ai of a. row[0]
// is the column-0 value, the same in both rows.
func lcsRow(ai byte, b string, row []int32) { lcsRowFrom(ai, b, row, row[0]) }

// lcsRowFrom is lcsRow where row[0] already holds t[i][0] and diag is
// t[i-1][0]; the old row[j-1] is carried in diag.
func lcsRowFrom(ai byte, b string, row []int32, diag int32) {
	left := row[0]
	for j := 0; j < len(b); j++ {
		up := row[j+1]
		v := up
		if ai == b[j] {
			v = diag + 1
		} else if left > v {
			v = left
		}
		row[j+1] = v
		diag, left = up, v
	}
}

// LCSBlock computes the block of the LCS table spanned by the substrings a
// (its rows) and b (its columns) from the block's boundary: top holds the
// row above (len(b)+1 values, top[0] being the corner above-left) and left
// the column to the left (len(a)+1 values, left[0] the same corner). It
// writes the block's last row to bottom (len(b)+1 values, bottom[0] =
// left[len(a)]) and its last column to right (len(a)+1 values, right[0] =
// top[len(b)]). bottom may be the same slice as top, so a worker owning a
// column strip can sweep down its strip in place. It does not allocate. It
// panics if a slice length is wrong (a programming error, not bad input).
//
// The boundary values are exactly what a block needs from its neighbours,
// the critical data of the thesis' LCS scheme at block granularity.
func LCSBlock(a, b string, top, left, bottom, right []int32) {
	if len(top) != len(b)+1 || len(bottom) != len(b)+1 || len(left) != len(a)+1 || len(right) != len(a)+1 {
		panic("dp: LCSBlock boundary lengths do not match the substrings")
	}
	if &bottom[0] != &top[0] {
		copy(bottom, top)
	}
	right[0] = bottom[len(b)]
	for i := 0; i < len(a); i++ {
		// The row's column-0 value comes from the left boundary; the old
		// bottom[0] (previous row's) is the diagonal of the first cell.
		diag := bottom[0]
		bottom[0] = left[i+1]
		lcsRowFrom(a[i], b, bottom, diag)
		right[i+1] = bottom[len(b)]
	}
}

// LCSTable returns the full (len(a)+1)×(len(b)+1) table, for recovering an
// LCS string or checking a distributed table; it needs that much memory.
func LCSTable(a, b string) [][]int32 {
	t := make([][]int32, len(a)+1)
	cells := make([]int32, (len(a)+1)*(len(b)+1))
	for i := range t {
		t[i] = cells[i*(len(b)+1) : (i+1)*(len(b)+1)]
	}
	for i := 1; i <= len(a); i++ {
		copy(t[i], t[i-1])
		lcsRow(a[i-1], b, t[i])
	}
	return t
}

// LCS returns one longest common subsequence, walking the table back from
// the corner and preferring a match, then the row above, so equal inputs
// always give the same string. It uses O(len(a)·len(b)) memory.
func LCS(a, b string) string {
	t := LCSTable(a, b)
	out := make([]byte, t[len(a)][len(b)])
	k := len(out)
	for i, j := len(a), len(b); i > 0 && j > 0; {
		switch {
		case a[i-1] == b[j-1]:
			k--
			out[k] = a[i-1]
			i, j = i-1, j-1
		case t[i-1][j] >= t[i][j-1]:
			i--
		default:
			j--
		}
	}
	return string(out)
}

// IsSubsequence reports whether s is a subsequence of t, for checking a
// claimed LCS against both inputs.
func IsSubsequence(s, t string) bool {
	i := 0
	for j := 0; i < len(s) && j < len(t); j++ {
		if s[i] == t[j] {
			i++
		}
	}
	return i == len(s)
}

// RandomDNA returns n bases from ACGT, uniform and determined by seed alone.
func RandomDNA(n int, seed uint64) string {
	const bases = "ACGT"
	r := newRand(seed, 0x444e41) // stream "DNA"
	out := make([]byte, n)
	for i := 0; i < n; {
		// Two bits per base, 32 bases per draw.
		for x, k := r.Uint64(), 0; k < 32 && i < n; k, i = k+1, i+1 {
			out[i] = bases[x&3]
			x >>= 2
		}
	}
	return string(out)
}
