package pida

import (
	"fmt"
	"math/bits"
)

// MaxBound is the largest cost bound a Stack searches to: depths are kept in
// a byte. Optimal 15-puzzle solutions need at most 80 moves.
const MaxBound = 255

// Frame is one node on the current search path together with the moves not
// yet tried from it. The unexplored work of a stack is exactly the children
// reachable through the frames' Todo sets, which is what Split hands out and
// what FTPIDA* replicates as critical data.
type Frame struct {
	Board Board   // the node's position
	G     uint8   // path cost from the search root to Board
	H     uint8   // Manhattan(Board), kept so a child's h is an O(1) update
	Blank uint8   // index of the blank in Board, kept to avoid a scan per move
	Todo  MoveSet // moves still to try; the move back to the parent is never in it
}

// newFrame builds the frame of board b reached at cost g by move prev
// (NoMove for a root); the reverse of prev is left out of Todo so the search
// never undoes its last move.
func newFrame(b Board, g int, prev Move) Frame {
	p := b.Blank()
	todo := LegalMoves(p)
	if prev < NoMove {
		todo &^= 1 << prev.Reverse()
	}
	return Frame{Board: b, G: uint8(g), H: uint8(Manhattan(b)), Blank: uint8(p), Todo: todo}
}

// Status says what a Step or Run left the stack doing.
type Status uint8

const (
	// Running: work remains below the bound.
	Running Status = iota
	// Solved: a goal was reached within the bound; StepResult.Length holds
	// its path cost from the search root.
	Solved
	// Exhausted: the stack is empty; every node within the bound was searched.
	Exhausted
)

// String returns the status name.
func (s Status) String() string {
	switch s {
	case Running:
		return "Running"
	case Solved:
		return "Solved"
	case Exhausted:
		return "Exhausted"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// StepResult is the outcome of Step or Run.
type StepResult struct {
	Status Status // what the stack is doing now
	Length int    // solution length when Status is Solved
}

// Stack is the explicit DFS stack of one worker for one cost-bound
// iteration. Frames[0] is the node nearest the root (the search root, or the
// node a split handed over), the last frame is the node being expanded.
//
// Changes made through the methods are tracked for Delta; code that edits
// Frames directly must call ResetDelta (or send a full copy) afterwards.
type Stack struct {
	// Frames is the search path, root first, with each node's untried moves.
	Frames []Frame
	// MinExceeded is the smallest f = g+h above the bound among the children
	// generated since Reset, 0 if none (every generated child has f >= 1).
	// The next iteration's bound is the minimum over all workers.
	MinExceeded int
	// Expanded counts nodes pushed: each has its children generated.
	Expanded uint64
	// Generated counts children generated, whether pushed or pruned; it is
	// the unit of modeled compute.
	Generated uint64

	// clean is the number of bottom frames unchanged since ResetDelta.
	clean int
}

// Reset empties the stack and clears MinExceeded for a new iteration. The
// counters are kept: they total a worker's effort over the whole run.
func (s *Stack) Reset() {
	s.Frames = s.Frames[:0]
	s.MinExceeded = 0
	s.clean = 0
}

// Push puts board b, reached from the search root at cost g by move prev
// (NoMove for a root), on top of the stack with all its moves untried
// except the one undoing prev, and counts it as expanded. b must be valid
// (ParseBoard or Board.Valid); g must be in 0..MaxBound.
func (s *Stack) Push(b Board, g int, prev Move) {
	if g < 0 || g > MaxBound {
		panic(fmt.Sprintf("pida: Push with path cost %d outside 0..%d", g, MaxBound))
	}
	s.Frames = append(s.Frames, newFrame(b, g, prev))
	s.Expanded++
}

// Len returns the number of frames.
func (s *Stack) Len() int { return len(s.Frames) }

// MergeExceeded combines two MinExceeded values (0 meaning none), for
// reducing over workers or over split-off stacks.
func MergeExceeded(a, b int) int {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// Step generates one child: it pops exhausted frames, takes the next untried
// move of the top frame and either prunes the child (f > bound, recorded in
// MinExceeded), reports it as a goal, or pushes it. A goal is recognised
// when generated (h = 0) within the bound; because Manhattan is consistent
// and bound is the smallest f that exceeded the previous bound, its cost
// equals bound, so the first goal any worker finds is optimal. Bounds above
// MaxBound are treated as MaxBound. Step allocates only while Frames grows
// past its capacity (give it cap MaxBound+1 to never allocate).
func (s *Stack) Step(bound int) StepResult {
	if bound > MaxBound {
		bound = MaxBound
	}
	for {
		n := len(s.Frames)
		if n == 0 {
			return StepResult{Status: Exhausted}
		}
		top := &s.Frames[n-1]
		if s.clean > n-1 {
			s.clean = n - 1
		}
		if top.Todo == 0 {
			s.Frames = s.Frames[:n-1]
			continue
		}
		m := Move(bits.TrailingZeros8(uint8(top.Todo)))
		top.Todo &^= 1 << m
		s.Generated++

		p := int(top.Blank)
		q := p + moveOffset(m)
		t := top.Board[q]
		h := int(top.H) + tileDist(t, p) - tileDist(t, q)
		g := int(top.G) + 1
		if f := g + h; f > bound {
			s.MinExceeded = MergeExceeded(s.MinExceeded, f)
			return StepResult{Status: Running}
		}
		if h == 0 {
			return StepResult{Status: Solved, Length: g}
		}
		child := Frame{Board: top.Board, G: uint8(g), H: uint8(h), Blank: uint8(q), Todo: LegalMoves(q) &^ (1 << m.Reverse())}
		child.Board[p], child.Board[q] = t, 0
		s.Frames = append(s.Frames, child)
		s.Expanded++
		return StepResult{Status: Running}
	}
}

// Run calls Step until the stack is solved or exhausted, or budget children
// have been generated (budget <= 0: no limit). A worker of the parallel
// search runs a budget per handler call and charges it as modeled compute.
func (s *Stack) Run(bound int, budget int) StepResult {
	for i := 0; budget <= 0 || i < budget; i++ {
		if r := s.Step(bound); r.Status != Running {
			return r
		}
	}
	return StepResult{Status: Running}
}

// Split gives away part of the unexplored work, for a work request.
//
// Scheme: the frame nearest the root that still has untried moves donates
// the later half (rounded up) of them, the moves the donor would have tried
// last, so the donor's own search order is undisturbed and the receiver gets
// the largest remaining subtrees (they hang closest to the root). The given
// stack is a single frame, a copy of the donor frame carrying only the
// donated moves; its node is already counted as expanded by the donor. Both
// stacks together cover exactly the work the donor had, so the union of
// their searches is the donor's search. The donor keeps its very last
// untried move: giving it only made the donor idle in turn, and two idle
// workers on one core handed a single move back and forth forever (each got
// the other's request before its own next slice, and on one node that
// exchange costs no simulated time). ok is false when there is nothing to
// give.
func (s *Stack) Split() (given Stack, ok bool) {
	for i := range s.Frames {
		todo := s.Frames[i].Todo
		if todo == 0 {
			continue
		}
		if todo&(todo-1) == 0 && !s.todoAbove(i) {
			return Stack{}, false // the donor's last move
		}
		var give MoveSet
		for k := (bits.OnesCount8(uint8(todo)) + 1) / 2; k > 0; k-- {
			hi := MoveSet(1) << (7 - bits.LeadingZeros8(uint8(todo&^give)))
			give |= hi
		}
		s.Frames[i].Todo = todo &^ give
		if s.clean > i {
			s.clean = i
		}
		f := s.Frames[i]
		f.Todo = give
		return Stack{Frames: []Frame{f}}, true
	}
	return Stack{}, false
}

// todoAbove reports whether a frame above frame i has untried moves.
func (s *Stack) todoAbove(i int) bool {
	for _, f := range s.Frames[i+1:] {
		if f.Todo != 0 {
			return true
		}
	}
	return false
}

// Clone returns an independent copy (its own frame slice), for keeping a
// backup or handing a stack to another object.
func (s *Stack) Clone() Stack {
	c := *s
	c.Frames = append([]Frame(nil), s.Frames...)
	return c
}
