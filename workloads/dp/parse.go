// Package dp holds the dynamic-programming workloads of thesis 004 (chapters
// 4-5): longest common subsequence (anti-diagonal wavefront), 0/1 knapsack
// (row by row, the flag bits of the ABFT scheme) and the travelling salesman
// problem by Held-Karp (stage = subset size). Each has a sequential
// reference, the per-cell or per-block building blocks the distributed
// versions call, readers for the field's instance formats (FASTA, TSPLIB,
// Burkardt's knapsack records) and seeded generators.
package dp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"strings"
)

// ParseError is an error in an input file; it prints as "name:line: message"
// (with ":col" when a column is known), the form editors jump to.
type ParseError struct {
	Name string // file name as given to the parser
	Line int    // 1-based line number
	Col  int    // 1-based column, 0 when not meaningful
	Msg  string // what is wrong
}

// Error implements error.
func (e *ParseError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.Name, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg)
}

// lineReader yields lines of any length (FASTA files often hold a whole
// sequence on one line, beyond bufio.Scanner's token limit) without their
// line terminator, counting line numbers.
type lineReader struct {
	name string
	br   *bufio.Reader
	line int
}

func newLineReader(r io.Reader, name string) *lineReader {
	return &lineReader{name: name, br: bufio.NewReader(r)}
}

// next returns the next line; ok is false at the end of input. err is an I/O
// error, already prefixed with the file name.
func (lr *lineReader) next() (text string, ok bool, err error) {
	s, rerr := lr.br.ReadString('\n')
	if len(s) == 0 {
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return "", false, fmt.Errorf("%s: %w", lr.name, rerr)
		}
		return "", false, nil
	}
	if rerr != nil && !errors.Is(rerr, io.EOF) {
		return "", false, fmt.Errorf("%s: %w", lr.name, rerr)
	}
	lr.line++
	return strings.TrimRight(s, "\r\n"), true, nil
}

// errorf builds a ParseError at the current line.
func (lr *lineReader) errorf(format string, a ...any) error {
	return &ParseError{Name: lr.name, Line: max(lr.line, 1), Msg: fmt.Sprintf(format, a...)}
}

// newRand returns the PCG generator of a seeded generator; stream separates
// the generators so that equal seeds do not give correlated instances.
func newRand(seed, stream uint64) *rand.PCG {
	return rand.NewPCG(seed, stream)
}

// uniform returns a uniform integer in [lo, hi] from the raw PCG output by
// Lemire's multiply-shift with rejection. It is spelled out here rather than
// taken from rand.Rand so that generated instances can never change with the
// standard library's reduction method.
func uniform(r *rand.PCG, lo, hi int) int {
	n := uint64(hi-lo) + 1
	for {
		h, l := bits.Mul64(r.Uint64(), n)
		if l >= n || l >= -n%n {
			return lo + int(h)
		}
	}
}
