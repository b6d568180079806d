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

// MaxInputBytes bounds what the instance parsers read from one file. The
// largest instances the workloads accept are far smaller; the bound keeps a
// wrong path (a disk image, /dev/zero, a whole genome) from exhausting
// memory in one endless line.
const MaxInputBytes = 64 << 20

// lineReader yields lines of any length up to MaxInputBytes (FASTA files
// often hold a whole sequence on one line, beyond bufio.Scanner's token
// limit) without their line terminator, counting line numbers.
type lineReader struct {
	name string
	br   *bufio.Reader
	line int
	read int64 // bytes read so far
}

func newLineReader(r io.Reader, name string) *lineReader {
	return &lineReader{name: name, br: bufio.NewReader(r)}
}

// next returns the next line; ok is false at the end of input. err is an I/O
// error, already prefixed with the file name, or a ParseError for input
// beyond MaxInputBytes.
func (lr *lineReader) next() (text string, ok bool, err error) {
	var line []byte
	for {
		chunk, rerr := lr.br.ReadSlice('\n')
		lr.read += int64(len(chunk))
		if lr.read > MaxInputBytes {
			lr.line++
			return "", false, lr.errorf("file larger than %d MiB (wrong file?)", MaxInputBytes>>20)
		}
		line = append(line, chunk...)
		if errors.Is(rerr, bufio.ErrBufferFull) {
			continue
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return "", false, fmt.Errorf("%s: %w", lr.name, rerr)
		}
		break
	}
	if len(line) == 0 {
		return "", false, nil
	}
	lr.line++
	return strings.TrimRight(string(line), "\r\n"), true, nil
}

// nextData returns the next line that is neither blank nor a '#' comment,
// trimmed of surrounding space; ok is false at the end of input.
func (lr *lineReader) nextData() (text string, ok bool, err error) {
	for {
		if text, ok, err = lr.next(); !ok || err != nil {
			return "", false, err
		}
		if text = strings.TrimSpace(text); text != "" && text[0] != '#' {
			return text, true, nil
		}
	}
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
