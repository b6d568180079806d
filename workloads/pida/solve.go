package pida

// SolveSequential finds the optimal solution length of b by IDA*: the first
// bound is h(root), each further bound the smallest f that exceeded the
// previous one. It returns the length and the nodes expanded over all
// iterations, or -1 for a board that is invalid or cannot reach the goal
// (IDA* would never terminate on it).
func SolveSequential(b Board) (length int, expanded uint64) {
	if !b.Solvable() {
		return -1, 0
	}
	h := Manhattan(b)
	if h == 0 {
		return 0, 0
	}
	s := Stack{Frames: make([]Frame, 0, 96)}
	for bound := h; ; {
		s.Reset()
		s.Push(b, 0, NoMove)
		r := s.Run(bound, 0)
		if r.Status == Solved {
			return r.Length, s.Expanded
		}
		if s.MinExceeded == 0 || s.MinExceeded > MaxBound {
			return -1, s.Expanded // unreachable for solvable boards (<= 80 moves)
		}
		bound = s.MinExceeded
	}
}
