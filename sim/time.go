package sim

import (
	"math"
	"time"
)

// Time is simulated time in integer nanoseconds. Integer time keeps runs exactly
// reproducible: no rounding depends on the order in which events were added.
type Time int64

// Common durations in simulated time.
const (
	Nanosecond  Time = 1
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
	Minute           = 60 * Second
	Hour             = 60 * Minute
	// Never is a time later than any event; it marks "not scheduled".
	Never Time = math.MaxInt64
	// MaxDuration bounds a run's simulated time (Run stops there), the
	// configured delays (Config.validate) and each transfer and computation
	// the runtime simulates: one as long (a bandwidth or rate in the wrong
	// unit) ends the run, reported unfinished with the reason, instead of
	// wrapping around. It is under half the range of Time, so that adding
	// a delay to a time of the run cannot overflow.
	MaxDuration = MaxYears * year
	// MaxYears is MaxDuration in years of 365 days, for messages.
	MaxYears = 100
	year     = 365 * 24 * Hour
)

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// String formats t like a Go duration ("1.5s", "3h0m0s").
func (t Time) String() string {
	if t == Never {
		return "never"
	}
	return time.Duration(t).String()
}

// plus returns t + d for d ≥ 0, or Never if that is later: the busy-until
// times of a resource (a network interface, a disk) add up the work queued
// on it, each piece bounded but not their sum.
func (t Time) plus(d Time) Time {
	if t > Never-d {
		return Never
	}
	return t + d
}

// FromSeconds converts seconds to simulated time, rounding to the nearest nanosecond.
// It saturates at Never so that absurd inputs cannot wrap around.
func FromSeconds(s float64) Time {
	ns := s * 1e9
	if ns >= math.MaxInt64 {
		return Never
	}
	if ns <= math.MinInt64 {
		return math.MinInt64
	}
	return Time(math.Round(ns))
}

// TransferTime is the time to move size bytes at rate bytes/s, rounded up to a
// whole nanosecond so that a transfer never takes zero time unless size is zero.
func TransferTime(size int64, rate float64) Time {
	if size <= 0 {
		return 0
	}
	if rate <= 0 || math.IsInf(rate, 1) {
		return 0
	}
	ns := math.Ceil(float64(size) * 1e9 / rate)
	if ns >= math.MaxInt64 {
		return Never
	}
	return Time(ns)
}
