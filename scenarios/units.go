package scenarios

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Duration is a span of simulated time in nanoseconds, the unit of the
// simulator's clock. In TOML it is a string with units ("90s", "1h30m",
// "2.5d", "5y") or a plain number of seconds.
type Duration int64

// Duration units. A day is 24 hours and a year 365 days: reliability
// figures (MTBF) are quoted in such years.
const (
	Nanosecond  Duration = 1
	Microsecond          = 1000 * Nanosecond
	Millisecond          = 1000 * Microsecond
	Second               = 1000 * Millisecond
	Minute               = 60 * Second
	Hour                 = 60 * Minute
	Day                  = 24 * Hour
	Year                 = 365 * Day
)

// Size is an amount of memory or data in bytes. In TOML it is a number of
// bytes or a string with an SI (kB = 1000 B) or IEC (KiB = 1024 B) unit.
type Size int64

// Size units, SI (powers of 1000) and IEC (powers of 1024).
const (
	Byte Size = 1
	KB        = 1000 * Byte
	MB        = 1000 * KB
	GB        = 1000 * MB
	TB        = 1000 * GB
	PB        = 1000 * TB
	KiB       = 1024 * Byte
	MiB       = 1024 * KiB
	GiB       = 1024 * MiB
	TiB       = 1024 * GiB
	PiB       = 1024 * TiB
)

// Rate is a bandwidth in bytes per second. In TOML it is a number of bytes
// per second or a string such as "12.5GB/s", "100MiB/s" or "100Gb/s"
// (bits; lower-case b or "bit" divides by 8).
type Rate float64

// maxNumberLen bounds the digits of one number in a unit string, so that
// hostile input cannot make the exact (big.Rat) arithmetic slow.
const maxNumberLen = 64

// ParseDuration parses a duration such as "90s", "1h30m", "1.5d", "5y",
// "250us" or "2µs". Units are ns, us (µs), ms, s, m, h, d (24h) and y
// (365d); terms may be compounded as in Go's time.ParseDuration and may be
// fractional. A number without a unit is a number of seconds. Negative
// durations, unknown units and values beyond about 292 years are errors.
// Fractions of a nanosecond are rounded to the nearest nanosecond.
func ParseDuration(s string) (Duration, error) {
	neg, terms, err := parseQuantity("duration", s)
	if err != nil {
		return 0, err
	}
	total := new(big.Rat)
	for i, t := range terms {
		unit := int64(Second) // a lone number means seconds
		if t.unit != "" {
			u, ok := durationUnit(t.unit)
			if !ok {
				return 0, fmt.Errorf("unknown unit %q in duration %q (want ns, us, ms, s, m, h, d or y)", t.unit, s)
			}
			unit = int64(u)
		} else if len(terms) > 1 {
			return 0, fmt.Errorf("missing unit after %s in duration %q", terms[i].text, s)
		}
		total.Add(total, new(big.Rat).Mul(t.num, new(big.Rat).SetInt64(unit)))
	}
	return durationFromNanos(total, neg, strconv.Quote(s))
}

// durationUnit returns the length of a duration unit.
func durationUnit(u string) (Duration, bool) {
	switch u {
	case "ns":
		return Nanosecond, true
	case "us", "µs", "μs": // U+00B5 micro sign and U+03BC Greek mu, as Go accepts
		return Microsecond, true
	case "ms":
		return Millisecond, true
	case "s":
		return Second, true
	case "m":
		return Minute, true
	case "h":
		return Hour, true
	case "d":
		return Day, true
	case "y":
		return Year, true
	}
	return 0, false
}

// durationFromNanos rounds an exact nanosecond count to a Duration. what
// is the input as it should appear in errors.
func durationFromNanos(ns *big.Rat, neg bool, what string) (Duration, error) {
	if ns.Sign() == 0 {
		return 0, nil
	}
	if neg || ns.Sign() < 0 {
		return 0, fmt.Errorf("negative duration %s", what)
	}
	n, ok := roundRat(ns)
	if !ok {
		return 0, fmt.Errorf("duration %s is too large (max about 292y)", what)
	}
	return Duration(n), nil
}

// Seconds returns the duration as a floating-point number of seconds.
func (d Duration) Seconds() float64 { return float64(d) / float64(Second) }

// String formats the duration so that ParseDuration reads it back exactly:
// a whole number of the largest calendar unit that divides it ("5y",
// "36h", "90m"), otherwise a decimal number of the largest of s, ms, us, ns
// that it reaches ("90s", "1.5s", "2us").
func (d Duration) String() string {
	if d < 0 {
		// Negate in uint64: -math.MinInt64 does not fit an int64.
		return "-" + formatNanos(uint64(-(d+1))+1)
	}
	return formatNanos(uint64(d))
}

// formatNanos implements Duration.String for a non-negative count.
func formatNanos(u uint64) string {
	if u == 0 {
		return "0s"
	}
	for _, c := range [...]struct {
		unit Duration
		name string
	}{{Year, "y"}, {Day, "d"}, {Hour, "h"}, {Minute, "m"}} {
		if n := uint64(c.unit); u >= n && u%n == 0 {
			return strconv.FormatUint(u/n, 10) + c.name
		}
	}
	for _, c := range [...]struct {
		unit   Duration
		name   string
		digits int
	}{{Second, "s", 9}, {Millisecond, "ms", 6}, {Microsecond, "us", 3}, {Nanosecond, "ns", 0}} {
		n := uint64(c.unit)
		if u < n && c.unit != Nanosecond {
			continue
		}
		s := strconv.FormatUint(u/n, 10)
		if frac := u % n; frac != 0 {
			f := strconv.FormatUint(frac, 10)
			f = strings.Repeat("0", c.digits-len(f)) + f
			s += "." + strings.TrimRight(f, "0")
		}
		return s + c.name
	}
	panic("unreachable: the nanosecond case always returns")
}

// UnmarshalTOML implements toml.Unmarshaler: a string with units, or an
// integer or float number of seconds.
func (d *Duration) UnmarshalTOML(v any) error {
	var (
		x   Duration
		err error
	)
	switch v := v.(type) {
	case string:
		x, err = ParseDuration(v)
	case int64:
		x, err = durationFromNanos(new(big.Rat).Mul(big.NewRat(v, 1), big.NewRat(int64(Second), 1)), false, strconv.FormatInt(v, 10))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("invalid duration %v", v)
		}
		x, err = durationFromNanos(new(big.Rat).Mul(new(big.Rat).SetFloat64(v), big.NewRat(int64(Second), 1)), false, strconv.FormatFloat(v, 'g', -1, 64))
	default:
		return fmt.Errorf(`want a duration such as "90s" or a number of seconds, got %s`, tomlTypeOf(v))
	}
	if err != nil {
		return err
	}
	*d = x
	return nil
}

// MarshalText implements encoding.TextMarshaler with String's format, so
// durations encode to TOML and JSON as readable strings.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseDuration.
func (d *Duration) UnmarshalText(b []byte) error {
	x, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = x
	return nil
}

// ParseSize parses a size such as "512B", "10kB", "1.5MB", "64KiB" or
// "2GiB"; a number without a unit is a number of bytes. SI units (kB or KB,
// MB, GB, TB, PB) are powers of 1000, IEC units (KiB, MiB, GiB, TiB, PiB)
// powers of 1024. Fractions of a byte are rounded to the nearest byte.
func ParseSize(s string) (Size, error) {
	neg, terms, err := parseQuantity("size", s)
	if err != nil {
		return 0, err
	}
	if len(terms) != 1 {
		return 0, fmt.Errorf("invalid size %q: want one number and one unit", s)
	}
	unit := int64(1)
	if u := terms[0].unit; u != "" {
		n, ok := sizeUnit(u)
		if !ok {
			return 0, fmt.Errorf("unknown unit %q in size %q (want B, kB, MB, GB, TB, PB, KiB, MiB, GiB, TiB or PiB)", u, s)
		}
		unit = n
	}
	return sizeFromBytes(new(big.Rat).Mul(terms[0].num, new(big.Rat).SetInt64(unit)), neg, strconv.Quote(s))
}

// sizeUnit returns the number of bytes in a size unit.
func sizeUnit(u string) (int64, bool) {
	switch u {
	case "B":
		return 1, true
	case "kB", "KB":
		return int64(KB), true
	case "MB":
		return int64(MB), true
	case "GB":
		return int64(GB), true
	case "TB":
		return int64(TB), true
	case "PB":
		return int64(PB), true
	case "KiB":
		return int64(KiB), true
	case "MiB":
		return int64(MiB), true
	case "GiB":
		return int64(GiB), true
	case "TiB":
		return int64(TiB), true
	case "PiB":
		return int64(PiB), true
	}
	return 0, false
}

// sizeFromBytes rounds an exact byte count to a Size.
func sizeFromBytes(b *big.Rat, neg bool, what string) (Size, error) {
	if b.Sign() == 0 {
		return 0, nil
	}
	if neg || b.Sign() < 0 {
		return 0, fmt.Errorf("negative size %s", what)
	}
	n, ok := roundRat(b)
	if !ok {
		return 0, fmt.Errorf("size %s is too large", what)
	}
	return Size(n), nil
}

// String formats the size with the unit that gives the smallest whole
// number ("64GiB", "10kB", "512B"), so ParseSize reads it back exactly.
func (s Size) String() string {
	if s < 0 {
		return strconv.FormatInt(int64(s), 10) + "B"
	}
	best, bestUnit := int64(s), "B"
	for _, u := range [...]string{"KiB", "MiB", "GiB", "TiB", "PiB", "kB", "MB", "GB", "TB", "PB"} {
		n, _ := sizeUnit(u)
		if int64(s)%n == 0 && int64(s)/n < best && s != 0 {
			best, bestUnit = int64(s)/n, u
		}
	}
	return strconv.FormatInt(best, 10) + bestUnit
}

// UnmarshalTOML implements toml.Unmarshaler: a number of bytes or a string
// with a unit.
func (s *Size) UnmarshalTOML(v any) error {
	var (
		x   Size
		err error
	)
	switch v := v.(type) {
	case string:
		x, err = ParseSize(v)
	case int64:
		x, err = sizeFromBytes(new(big.Rat).SetInt64(v), false, strconv.FormatInt(v, 10))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("invalid size %v", v)
		}
		x, err = sizeFromBytes(new(big.Rat).SetFloat64(v), false, strconv.FormatFloat(v, 'g', -1, 64))
	default:
		return fmt.Errorf(`want a size such as "64KiB" or a number of bytes, got %s`, tomlTypeOf(v))
	}
	if err != nil {
		return err
	}
	*s = x
	return nil
}

// MarshalText implements encoding.TextMarshaler with String's format.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseSize.
func (s *Size) UnmarshalText(b []byte) error {
	x, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = x
	return nil
}

// ParseRate parses a bandwidth such as "12.5GB/s", "100MiB/s", "9MB/s",
// "100Gb/s", "10Gbit/s" or "10Gbps"; a number without a unit is a number of
// bytes per second. Byte units are those of ParseSize; bit units (b or
// bit, with the same prefixes) are divided by 8.
func ParseRate(s string) (Rate, error) {
	neg, terms, err := parseQuantity("rate", s)
	if err != nil {
		return 0, err
	}
	if len(terms) != 1 {
		return 0, fmt.Errorf("invalid rate %q: want one number and one unit", s)
	}
	unit := big.NewRat(1, 1)
	if u := terms[0].unit; u != "" {
		r, ok := rateUnit(u)
		if !ok {
			return 0, fmt.Errorf("unknown unit %q in rate %q (want e.g. B/s, MB/s, GiB/s, Gb/s, Gbit/s or Gbps)", u, s)
		}
		unit = r
	}
	v := new(big.Rat).Mul(terms[0].num, unit)
	if v.Sign() == 0 {
		return 0, nil
	}
	if neg {
		return 0, fmt.Errorf("negative rate %q", s)
	}
	f, _ := v.Float64()
	if err := checkRateRange(f); err != nil {
		return 0, fmt.Errorf("rate %q %w", s, err)
	}
	return Rate(f), nil
}

// checkRateRange returns an error when a positive rate of f bytes per
// second is outside [1e-99, 1e100): beyond it String would print an exponent
// of three digits, which no quantity accepts, and no machine comes near
// either bound.
func checkRateRange(f float64) error {
	if f >= 1e100 || f > 0 && f < 1e-99 {
		return errors.New("is out of range: a rate is 0 or from 1e-99 B/s up to (not including) 1e100 B/s")
	}
	return nil
}

// rateUnit returns the number of bytes per second in a rate unit.
func rateUnit(u string) (*big.Rat, bool) {
	var base string
	switch {
	case strings.HasSuffix(u, "/s"):
		base = strings.TrimSuffix(u, "/s")
	case strings.HasSuffix(u, "ps"):
		base = strings.TrimSuffix(u, "ps")
	default:
		return nil, false
	}
	if n, ok := sizeUnit(base); ok {
		return big.NewRat(n, 1), true
	}
	if n, ok := bitUnit(base); ok {
		return big.NewRat(n, 8), true
	}
	return nil, false
}

// bitUnit returns the number of bits in a bit unit ("b", "kbit", "Gb",
// "Mib", ...).
func bitUnit(u string) (int64, bool) {
	prefix, ok := strings.CutSuffix(u, "bit")
	if !ok {
		if prefix, ok = strings.CutSuffix(u, "b"); !ok {
			return 0, false
		}
	}
	if prefix == "" {
		return 1, true
	}
	if prefix == "k" {
		prefix = "K" // kb and Kb both mean 1000 bits
	}
	if n, ok := sizeUnit(prefix + "B"); ok && prefix != "" {
		return n, true
	}
	return 0, false
}

// Float64 returns the rate in bytes per second.
func (r Rate) Float64() float64 { return float64(r) }

// String formats the rate with the largest SI unit it reaches ("12.5GB/s",
// "500MB/s"), falling back to plain bytes per second when the scaled
// number would not read back exactly.
func (r Rate) String() string {
	f := float64(r)
	if f > 0 && !math.IsInf(f, 0) {
		for _, u := range [...]string{"PB", "TB", "GB", "MB", "kB"} {
			n, _ := sizeUnit(u)
			if f < float64(n) {
				continue
			}
			s := strconv.FormatFloat(f/float64(n), 'g', -1, 64) + u + "/s"
			if back, err := ParseRate(s); err == nil && back == r {
				return s
			}
			break
		}
	}
	return strconv.FormatFloat(f, 'g', -1, 64) + "B/s"
}

// UnmarshalTOML implements toml.Unmarshaler: a number of bytes per second
// or a string with a unit.
func (r *Rate) UnmarshalTOML(v any) error {
	var x Rate
	switch v := v.(type) {
	case string:
		var err error
		if x, err = ParseRate(v); err != nil {
			return err
		}
	case int64:
		if v < 0 {
			return fmt.Errorf("negative rate %d", v)
		}
		x = Rate(v)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("invalid rate %v", v)
		}
		if v < 0 {
			return fmt.Errorf("negative rate %v", v)
		}
		if err := checkRateRange(v); err != nil {
			return fmt.Errorf("rate %v %w", v, err)
		}
		x = Rate(v)
	default:
		return fmt.Errorf(`want a rate such as "12.5GB/s" or a number of bytes per second, got %s`, tomlTypeOf(v))
	}
	*r = x
	return nil
}

// MarshalText implements encoding.TextMarshaler with String's format.
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseRate.
func (r *Rate) UnmarshalText(b []byte) error {
	x, err := ParseRate(string(b))
	if err != nil {
		return err
	}
	*r = x
	return nil
}

// term is one number with its unit in a quantity such as "1h30m".
type term struct {
	text string   // the number as written, for errors
	num  *big.Rat // its exact value
	unit string   // the unit, "" when absent
}

// parseQuantity splits s into an optional sign and a sequence of
// number-unit terms. Whitespace may surround terms and separate a number
// from its unit ("64 KiB", "1h 30m"). Numbers are decimal with an optional
// fraction and exponent; they are kept exact so "0.1s" is 100ms to the
// nanosecond.
func parseQuantity(what, s string) (neg bool, terms []term, err error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return false, nil, fmt.Errorf("empty %s", what)
	}
	switch in[0] {
	case '-':
		neg, in = true, in[1:]
	case '+':
		in = in[1:]
	}
	for in = strings.TrimLeft(in, " \t"); in != ""; in = strings.TrimLeft(in, " \t") {
		n := scanNumber(in)
		if n == 0 {
			return false, nil, fmt.Errorf("invalid %s %q: expected a number at %q", what, s, in)
		}
		if n > maxNumberLen {
			return false, nil, fmt.Errorf("invalid %s %q: number too long", what, s)
		}
		if longExponent(in[n:]) {
			// scanNumber left the exponent as a unit: "1e400s" would
			// read as an unknown unit "e".
			return false, nil, fmt.Errorf("invalid %s %q: exponent out of range (at most two digits)", what, s)
		}
		t := term{text: in[:n], num: new(big.Rat)}
		if _, ok := t.num.SetString(in[:n]); !ok {
			return false, nil, fmt.Errorf("invalid %s %q: bad number %q", what, s, in[:n])
		}
		in = strings.TrimLeft(in[n:], " \t")
		u := 0
		for u < len(in) {
			r, w := utf8.DecodeRuneInString(in[u:])
			if !unicode.IsLetter(r) && r != '/' {
				break
			}
			u += w
		}
		t.unit, in = in[:u], in[u:]
		terms = append(terms, t)
	}
	if len(terms) == 0 {
		return false, nil, fmt.Errorf("invalid %s %q: expected a number", what, s)
	}
	return neg, terms, nil
}

// scanNumber returns the length of the decimal number at the start of s:
// digits with an optional fraction and an optional exponent of at most two
// digits, or 0 when s does not start with a number. The exponent is
// consumed only when digits follow, so a unit that starts with e or E is
// not mistaken for one.
func scanNumber(s string) int {
	i, digits := 0, 0
	for i < len(s) && isDigit(s[i]) {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) && k-j < 2 {
			k++
		}
		if k > j && (k == len(s) || !isDigit(s[k])) {
			i = k
		}
	}
	return i
}

// longExponent reports whether s, the text after a number, is an exponent
// that scanNumber did not take because it has more than two digits.
func longExponent(s string) bool {
	if s == "" || s[0] != 'e' && s[0] != 'E' {
		return false
	}
	s = strings.TrimLeft(s[1:], "+-")
	return len(s) > 2 && isDigit(s[0]) && isDigit(s[1]) && isDigit(s[2])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// roundRat rounds a non-negative rational to the nearest integer, halves
// up, and reports whether it fits an int64.
func roundRat(r *big.Rat) (int64, bool) {
	n := new(big.Int).Mul(r.Num(), big.NewInt(2))
	n.Add(n, r.Denom())
	d := new(big.Int).Mul(r.Denom(), big.NewInt(2))
	n.Quo(n, d)
	if !n.IsInt64() {
		return 0, false
	}
	return n.Int64(), true
}

// tomlTypeOf names the TOML type of a value decoded by BurntSushi/toml,
// for error messages.
func tomlTypeOf(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case time.Time:
		return "a datetime"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}
