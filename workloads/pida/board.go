// Package pida is the parallel IDA* workload: the 15-puzzle with the
// Manhattan-distance heuristic, searched by a cost-bounded depth-first search
// whose explicit stack can be split (work given to an idle worker),
// serialised (checkpoints, migration) and replicated incrementally (the
// stack deltas of FTPIDA*, thesis 004 chapter 3). The sequential driver
// SolveSequential is the reference the distributed search is checked against.
package pida

import (
	"fmt"
	"strconv"
	"strings"
)

// Width is the side of the puzzle; Cells is the number of positions.
const (
	Width = 4
	Cells = Width * Width
)

// Board is a 15-puzzle position in row-major order, 0 standing for the
// blank. The goal (Korf's convention, used by korf15.tsv) has tile k at index
// k, so the blank is in the top-left corner.
type Board [Cells]uint8

// Goal returns the solved board 0 1 2 … 15.
func Goal() Board {
	var b Board
	for i := range b {
		b[i] = uint8(i)
	}
	return b
}

// ParseBoard reads 16 integers separated by spaces, tabs or commas, in
// row-major order, which must be a permutation of 0..15.
func ParseBoard(s string) (Board, error) {
	var b Board
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ',' || r == '\n' || r == '\r'
	})
	if len(fields) != Cells {
		return b, fmt.Errorf("board has %d numbers, want %d (tiles 0..15, 0 = blank)", len(fields), Cells)
	}
	var seen [Cells]bool
	for i, f := range fields {
		v, err := strconv.Atoi(f)
		if err != nil {
			return b, fmt.Errorf("board position %d: %q is not an integer", i+1, f)
		}
		if v < 0 || v >= Cells {
			return b, fmt.Errorf("board position %d: tile %d out of range 0..15", i+1, v)
		}
		if seen[v] {
			return b, fmt.Errorf("board position %d: tile %d appears twice", i+1, v)
		}
		seen[v] = true
		b[i] = uint8(v)
	}
	return b, nil
}

// Valid reports why b is not a permutation of 0..15, or nil if it is.
// Boards not made by ParseBoard (decoded, hand-built) go through it before
// the search trusts them.
func (b Board) Valid() error {
	var seen [Cells]bool
	for i, v := range b {
		if int(v) >= Cells {
			return fmt.Errorf("board position %d: tile %d out of range 0..15", i+1, v)
		}
		if seen[v] {
			return fmt.Errorf("board position %d: tile %d appears twice", i+1, v)
		}
		seen[v] = true
	}
	return nil
}

// String formats b as 16 space-separated numbers, the form ParseBoard reads.
func (b Board) String() string {
	var sb strings.Builder
	for i, v := range b {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.Itoa(int(v)))
	}
	return sb.String()
}

// Blank returns the index of the blank (0..15), or -1 if b has none.
func (b Board) Blank() int {
	for i, v := range b {
		if v == 0 {
			return i
		}
	}
	return -1
}

// Solvable reports whether b can reach the goal. On a board of even width a
// blank move up or down changes the inversion count by an odd number (three
// tiles jumped) and the blank's row by one, so the parity of inversions plus
// the blank's row is invariant; the goal has 0 + 0, hence solvable boards
// have an even sum. Invalid boards are not solvable.
func (b Board) Solvable() bool {
	if b.Valid() != nil {
		return false
	}
	inv := 0
	for i := 0; i < Cells; i++ {
		if b[i] == 0 {
			continue
		}
		for j := i + 1; j < Cells; j++ {
			if b[j] != 0 && b[j] < b[i] {
				inv++
			}
		}
	}
	return (inv+b.Blank()/Width)%2 == 0
}

// Manhattan returns the sum over tiles of the row plus column distance to
// their goal positions: an admissible and consistent heuristic, so IDA*
// with it finds optimal solutions and f never decreases along a path.
func Manhattan(b Board) int {
	h := 0
	for pos, t := range b {
		if t != 0 {
			h += tileDist(t, pos)
		}
	}
	return h
}

// tileDist is the Manhattan distance of tile t at position pos from its goal
// position t.
func tileDist(t uint8, pos int) int {
	dr := int(t>>2) - pos>>2
	dc := int(t&3) - pos&3
	if dr < 0 {
		dr = -dr
	}
	if dc < 0 {
		dc = -dc
	}
	return dr + dc
}

// Move is a move of the blank. The four moves are numbered so that a move's
// reverse is m^1, which keeps undo-avoidance a single XOR.
type Move uint8

// The moves of the blank, in the order the search tries them.
const (
	Up Move = iota
	Down
	Left
	Right
	// NoMove marks a search root, which has no move to avoid undoing.
	NoMove
)

// String returns the move's name.
func (m Move) String() string {
	switch m {
	case Up:
		return "Up"
	case Down:
		return "Down"
	case Left:
		return "Left"
	case Right:
		return "Right"
	case NoMove:
		return "NoMove"
	}
	return "Move(" + strconv.Itoa(int(m)) + ")"
}

// Reverse returns the move that undoes m (NoMove for NoMove).
func (m Move) Reverse() Move {
	if m >= NoMove {
		return NoMove
	}
	return m ^ 1
}

// moveOffset is the change of the blank's index per move.
func moveOffset(m Move) int {
	switch m {
	case Up:
		return -Width
	case Down:
		return Width
	case Left:
		return -1
	default:
		return 1
	}
}

// MoveSet is a set of moves, bit m standing for Move m.
type MoveSet uint8

// Has reports whether m is in s.
func (s MoveSet) Has(m Move) bool { return m < NoMove && s&(1<<m) != 0 }

// LegalMoves returns the moves of a blank at index blank that stay on the
// board.
func LegalMoves(blank int) MoveSet {
	var s MoveSet
	if blank >= Width {
		s |= 1 << Up
	}
	if blank < Cells-Width {
		s |= 1 << Down
	}
	if blank%Width != 0 {
		s |= 1 << Left
	}
	if blank%Width != Width-1 {
		s |= 1 << Right
	}
	return s
}

// CanMove reports whether the blank of b can make move m.
func (b Board) CanMove(m Move) bool {
	p := b.Blank()
	return p >= 0 && LegalMoves(p).Has(m)
}

// Apply returns the board after the blank makes move m; a move off the board
// (see CanMove) leaves the board unchanged rather than corrupting it.
func (b Board) Apply(m Move) Board {
	p := b.Blank()
	if p < 0 || !LegalMoves(p).Has(m) {
		return b
	}
	q := p + moveOffset(m)
	b[p], b[q] = b[q], 0
	return b
}
