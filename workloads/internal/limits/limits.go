// Package limits bounds the sizes that workload scenario keys ask for, so
// that a typo or a slip of unit (objects = 1e12, width = 2^40) is an error
// naming the key instead of an out-of-memory crash, an integer overflow
// or a message tag that wraps around. Every error reads
// "workload.KEY: VALUE is too many THINGS (at most N)", the form the
// scenarios package locates at the key's line.
package limits

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxObjects bounds the objects of any workload. The simulator and every
// protocol keep a record per object (inbox, placement, backups, logs) and
// walk all of them at each checkpoint and recovery: 2^22 synthetic objects
// under cpr already hold 4 GB. The bound is far above every scenario
// shipped (the 100,000 blocks of exascale-100k) and far below what a count
// typed wrong asks for.
const MaxObjects = 1 << 22

// Product returns the product of factors when it is at most max, and
// otherwise an error naming workload.key: "workload.key: a × b (desc) is
// too many what (at most max)", desc left out when empty. The product is
// compared with max one factor at a time, so that no factor, however large,
// overflows it. Factors below 1 are refused with the same key: callers
// check them first with their own messages.
func Product(key string, max int64, what, desc string, factors ...int64) (int64, error) {
	p := int64(1)
	over := false
	for _, f := range factors {
		if f < 1 {
			return 0, fmt.Errorf("workload.%s: %s must be at least 1", key, join(factors))
		}
		if f > max/p {
			over = true // and keep looking for a factor below 1
			continue
		}
		p *= f
	}
	if over {
		shown := join(factors)
		if desc != "" {
			shown += " (" + desc + ")"
		}
		return 0, fmt.Errorf("workload.%s: %s is too many %s (at most %d)", key, shown, what, max)
	}
	return p, nil
}

// Objects returns the object count that factors multiply to (a count given
// directly, nodes × objects per node, tiles or blocks along each axis), or
// an error naming workload.key when it is over MaxObjects. desc says what
// the factors are when key alone does not ("cluster.nodes ×
// objects_per_node").
func Objects(key, desc string, factors ...int64) (int, error) {
	n, err := Product(key, MaxObjects, "objects", desc, factors...)
	return int(n), err
}

// Dim is one dimension of a grid: the key that sets it and its value.
type Dim struct {
	Key string
	N   int64
}

// Grid checks that a grid of the given dimensions has at most max points
// (cells, pixels), as Product does; dims is not empty. The error is about the longest
// dimension, the likeliest to be wrong (the first on a tie), and names
// the others in its description: "workload.width: 1099511627776 × 32
// (width × height) is too many cells (at most 268435456)".
func Grid(max int64, what string, dims ...Dim) error {
	longest := 0
	keys := make([]string, len(dims))
	values := make([]int64, len(dims))
	for i, d := range dims {
		if d.N > dims[longest].N {
			longest = i
		}
		keys[i], values[i] = d.Key, d.N
	}
	_, err := Product(dims[longest].Key, max, what, strings.Join(keys, " × "), values...)
	return err
}

// AtMost returns an error naming workload.key when v is over max: "v is
// too many what (at most max)", what saying why there is a bound
// ("generations for a 32-bit message tag").
func AtMost(key string, v, max int64, what string) error {
	if v <= max {
		return nil
	}
	return fmt.Errorf("workload.%s: %d is too many %s (at most %d)", key, v, what, max)
}

// join writes factors as "a × b × c".
func join(factors []int64) string {
	s := make([]string, len(factors))
	for i, f := range factors {
		s[i] = strconv.FormatInt(f, 10)
	}
	return strings.Join(s, " × ")
}
