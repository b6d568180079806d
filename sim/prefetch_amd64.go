package sim

// prefetch asks the processor to bring the cache line at addr closer. It has
// no effect on the program's results, and never faults. The address is a
// uintptr, not a pointer the collector would check: it may lie past the end
// of an object.
//
//go:noescape
func prefetch(addr uintptr)
