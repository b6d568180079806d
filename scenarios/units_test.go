package scenarios

import (
	"math"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Duration
		err  string // substring of the error; "" for success
	}{
		{"0", 0, ""},
		{"0s", 0, ""},
		{"-0s", 0, ""},
		{"90s", 90 * Second, ""},
		{"1.5s", 1500 * Millisecond, ""},
		{"0.1s", 100 * Millisecond, ""},
		{"2us", 2 * Microsecond, ""},
		{"2µs", 2 * Microsecond, ""},
		{"2μs", 2 * Microsecond, ""},
		{"7ns", 7, ""},
		{"0.5ns", 1, ""}, // rounded half up
		{"250ms", 250 * Millisecond, ""},
		{"3m", 3 * Minute, ""},
		{"36h", 36 * Hour, ""},
		{"1h30m", 90 * Minute, ""},
		{"1h 30m", 90 * Minute, ""},
		{"2.5d", 60 * Hour, ""},
		{"5y", 5 * Year, ""},
		{"1y1d", 366 * Day, ""},
		{"+3s", 3 * Second, ""},
		{" 4s ", 4 * Second, ""},
		{"1e3ms", Second, ""},
		{".5s", 500 * Millisecond, ""},
		{"5", 5 * Second, ""}, // unitless: seconds
		{"1.5", 1500 * Millisecond, ""},
		{"292y", 292 * Year, ""},
		{"9223372036854775807ns", math.MaxInt64, ""},
		{"-5y", 0, `negative duration "-5y"`},
		{"-1ns", 0, "negative duration"},
		{"300y", 0, "too large"},
		{"9223372036854775808ns", 0, "too large"},
		{"5 parsecs", 0, `unknown unit "parsecs"`},
		{"5S", 0, `unknown unit "S"`},
		{"1h30", 0, "missing unit"},
		{"", 0, "empty duration"},
		{"   ", 0, "empty duration"},
		{"s", 0, "expected a number"},
		{"1..5s", 0, "missing unit"},
		{"1.5.5s", 0, "missing unit"},
		{"--5s", 0, "expected a number"},
		{"5s!", 0, "expected a number"},
		{"1e999s", 0, "exponent out of range"}, // was `unknown unit "e"`
		{"1e-400s", 0, "exponent out of range"},
		{strings.Repeat("9", 100) + "s", 0, "number too long"},
	} {
		got, err := ParseDuration(tc.in)
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseDuration(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.err)
		}
	}
}

func TestDurationString(t *testing.T) {
	for _, tc := range []struct {
		d    Duration
		want string
	}{
		{0, "0s"},
		{90 * Second, "90s"},
		{36 * Hour, "36h"},
		{5 * Year, "5y"},
		{2 * Day, "2d"},
		{90 * Minute, "90m"},
		{1500 * Millisecond, "1.5s"},
		{2 * Microsecond, "2us"},
		{1234567, "1.234567ms"},
		{7, "7ns"},
		{Hour + 500*Millisecond, "3600.5s"},
		{-3 * Second, "-3s"},
		{math.MinInt64, "-9223372036.854775808s"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("Duration(%d).String() = %q, want %q", int64(tc.d), got, tc.want)
		}
	}
}

func TestDurationUnmarshalTOML(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want Duration
		err  string
	}{
		{int64(90), 90 * Second, ""},
		{1.5, 1500 * Millisecond, ""},
		{0.1, 100 * Millisecond, ""},
		{"5y", 5 * Year, ""},
		{int64(-5), 0, "negative duration -5"},
		{-0.5, 0, "negative duration"},
		{int64(math.MaxInt64), 0, "too large"},
		{1e300, 0, "too large"},
		{math.NaN(), 0, "invalid duration"},
		{math.Inf(1), 0, "invalid duration"},
		{true, 0, "got a boolean"},
		{[]any{int64(1)}, 0, "got an array"},
	} {
		var d Duration
		err := d.UnmarshalTOML(tc.in)
		if tc.err == "" {
			if err != nil || d != tc.want {
				t.Errorf("UnmarshalTOML(%v) = %v, %v; want %v", tc.in, d, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("UnmarshalTOML(%v) error %v, want one containing %q", tc.in, err, tc.err)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Size
		err  string
	}{
		{"0", 0, ""},
		{"512", 512, ""},
		{"512B", 512, ""},
		{"10kB", 10000, ""},
		{"10KB", 10000, ""},
		{"1.5MB", 1500000, ""},
		{"64KiB", 65536, ""},
		{"64 KiB", 65536, ""},
		{"2GiB", 2 << 30, ""},
		{"1.5KiB", 1536, ""},
		{"3TB", 3e12, ""},
		{"1TiB", 1 << 40, ""},
		{"2PB", 2e15, ""},
		{"1PiB", 1 << 50, ""},
		{"0.4B", 0, ""},
		{"8191PiB", 8191 << 50, ""},
		{"8192PiB", 0, "too large"},
		{"-1KiB", 0, `negative size "-1KiB"`},
		{"5 parsecs", 0, `unknown unit "parsecs"`},
		{"10kb", 0, `unknown unit "kb"`}, // bits are not a size
		{"10MB5kB", 0, "want one number and one unit"},
		{"", 0, "empty size"},
		{"KiB", 0, "expected a number"},
	} {
		got, err := ParseSize(tc.in)
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("ParseSize(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseSize(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.err)
		}
	}
}

func TestSizeStringAndNumbers(t *testing.T) {
	for _, tc := range []struct {
		s    Size
		want string
	}{
		{0, "0B"}, {512, "512B"}, {64 * GiB, "64GiB"}, {10 * KB, "10kB"}, {1500 * KB, "1500kB"},
		{1024000, "1000KiB"}, {1 << 50, "1PiB"}, {1001, "1001B"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("Size(%d).String() = %q, want %q", int64(tc.s), got, tc.want)
		}
		if back, err := ParseSize(tc.s.String()); err != nil || back != tc.s {
			t.Errorf("ParseSize(%q) = %v, %v; want %d", tc.s.String(), back, err, int64(tc.s))
		}
	}
	for _, tc := range []struct {
		in   any
		want Size
		err  string
	}{
		{int64(4096), 4096, ""},
		{64e9, 64 * GB, ""},
		{int64(-1), 0, "negative size -1"},
		{-1.5, 0, "negative size"},
		{1e30, 0, "too large"},
		{"x", 0, "expected a number"},
		{false, 0, "got a boolean"},
	} {
		var s Size
		err := s.UnmarshalTOML(tc.in)
		if tc.err == "" {
			if err != nil || s != tc.want {
				t.Errorf("Size.UnmarshalTOML(%v) = %v, %v; want %v", tc.in, s, err, tc.want)
			}
		} else if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Size.UnmarshalTOML(%v) error %v, want one containing %q", tc.in, err, tc.err)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rate
		err  string
	}{
		{"0", 0, ""},
		{"1e9", 1e9, ""},
		{"12.5GB/s", 12.5e9, ""},
		{"100MiB/s", 100 << 20, ""},
		{"9MB/s", 9e6, ""},
		{"500B/s", 500, ""},
		{"10kB/s", 1e4, ""},
		{"100Gb/s", 12.5e9, ""},
		{"10Gbit/s", 1.25e9, ""},
		{"10Gbps", 1.25e9, ""},
		{"8b/s", 1, ""},
		{"8kb/s", 1000, ""},
		{"8Kibit/s", 1024, ""},
		{"1GBps", 1e9, ""},
		{"1 TB/s", 1e12, ""},
		{"-1GB/s", 0, `negative rate "-1GB/s"`},
		{"12.5GB", 0, `unknown unit "GB"`}, // a size is not a rate
		{"5 parsecs/s", 0, `unknown unit "parsecs/s"`},
		{"1GB/h", 0, "unknown unit"},
		{"", 0, "empty rate"},
		{"1e400PB/s", 0, "exponent out of range"}, // exponents have at most two digits
		{"99e83PB/s", 9.9e99, ""},
		{"99e99PB/s", 0, `rate "99e99PB/s" is out of range`}, // String would print 9.9e+115
		{"8700010007007000e87", 0, "out of range"},
		{"1e-99", 1e-99, ""},
		{"0.1e-99B/s", 0, "out of range"},
		{"0e-99", 0, ""},
	} {
		got, err := ParseRate(tc.in)
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("ParseRate(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseRate(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.err)
		}
	}
}

func TestRateStringAndNumbers(t *testing.T) {
	for _, tc := range []struct {
		r    Rate
		want string
	}{
		{12.5e9, "12.5GB/s"}, {500e6, "500MB/s"}, {100, "100B/s"}, {0, "0B/s"}, {1 << 20, "1.048576MB/s"},
		{9.9e99, "9.9e+84PB/s"}, {1e-99, "1e-99B/s"}, // the range's ends
	} {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("Rate(%g).String() = %q, want %q", float64(tc.r), got, tc.want)
		}
		if back, err := ParseRate(tc.r.String()); err != nil || back != tc.r {
			t.Errorf("ParseRate(%q) = %v, %v; want %g", tc.r.String(), back, err, float64(tc.r))
		}
	}
	for _, tc := range []struct {
		in   any
		want Rate
		err  string
	}{
		{int64(1000), 1000, ""},
		{2.5e9, 2.5e9, ""},
		{"1GB/s", 1e9, ""},
		{int64(-1), 0, "negative rate"},
		{-1e9, 0, "negative rate"},
		{math.NaN(), 0, "invalid rate"},
		{1e300, 0, "rate 1e+300 is out of range"},
		{5e-324, 0, "out of range"},
		{[]any{}, 0, "got an array"},
	} {
		var r Rate
		err := r.UnmarshalTOML(tc.in)
		if tc.err == "" {
			if err != nil || r != tc.want {
				t.Errorf("Rate.UnmarshalTOML(%v) = %v, %v; want %v", tc.in, r, err, tc.want)
			}
		} else if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Rate.UnmarshalTOML(%v) error %v, want one containing %q", tc.in, err, tc.err)
		}
	}
}

func TestUnitsText(t *testing.T) {
	var d Duration
	if err := d.UnmarshalText([]byte("1h30m")); err != nil || d != 90*Minute {
		t.Fatalf("UnmarshalText = %v, %v", d, err)
	}
	if b, _ := d.MarshalText(); string(b) != "90m" {
		t.Errorf("MarshalText = %q", b)
	}
	if (90 * Second).Seconds() != 90 {
		t.Errorf("Seconds() = %v", (90 * Second).Seconds())
	}
	var sz Size
	if err := sz.UnmarshalText([]byte("64KiB")); err != nil || sz != 64*KiB {
		t.Errorf("Size.UnmarshalText = %v, %v", sz, err)
	}
	var r Rate
	if err := r.UnmarshalText([]byte("100Gb/s")); err != nil || r.Float64() != 12.5e9 {
		t.Errorf("Rate.UnmarshalText = %v, %v", r, err)
	}
	for _, u := range []interface{ UnmarshalText([]byte) error }{&d, &sz, &r} {
		if err := u.UnmarshalText([]byte("-1")); err == nil {
			t.Errorf("%T.UnmarshalText(-1) accepted", u)
		}
	}
	// Encoding uses MarshalText, so scenarios write back readably.
	var b strings.Builder
	v := struct {
		D Duration `toml:"d"`
		S Size     `toml:"s"`
		R Rate     `toml:"r"`
	}{36 * Hour, 64 * GiB, 12.5e9}
	if err := toml.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	if want := "d = \"36h\"\ns = \"64GiB\"\nr = \"12.5GB/s\"\n"; b.String() != want {
		t.Errorf("encoded %q, want %q", b.String(), want)
	}
}

// FuzzParseDuration checks that parsing never panics and that String
// reads back exactly.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"90s", "1h30m", "5y", "2µs", "1.5", "-0", "1e3ms", "300y", "5 parsecs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %d < 0", s, d)
		}
		back, err := ParseDuration(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %d; String %q reads back as %d, %v", s, d, d.String(), back, err)
		}
	})
}

// FuzzParseSizeRate checks that sizes and rates never panic and that their
// String reads back exactly.
func FuzzParseSizeRate(f *testing.F) {
	for _, s := range []string{"64KiB", "1.5MB", "12.5GB/s", "100Gb/s", "10Gbps", "0.4B", "-1", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if sz, err := ParseSize(s); err == nil {
			if back, err := ParseSize(sz.String()); err != nil || back != sz {
				t.Fatalf("ParseSize(%q) = %d; String %q reads back as %d, %v", s, sz, sz.String(), back, err)
			}
		}
		if r, err := ParseRate(s); err == nil {
			if back, err := ParseRate(r.String()); err != nil || back != r {
				t.Fatalf("ParseRate(%q) = %g; String %q reads back as %g, %v", s, float64(r), r.String(), float64(back), err)
			}
		}
	})
}
