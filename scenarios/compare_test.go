package scenarios

import (
	"slices"
	"strings"
	"testing"
)

// cprParams stands for a protocol package's parameter struct.
type cprParams struct {
	Interval Duration `toml:"interval"`
	Tier     string   `toml:"tier"`
}

const compareFile = `name = "cmp"
[workload]
kind = "life"

[[protocols]]
kind = "none"

[[protocols]]
label = "cpr-fast"
kind = "cpr"
interval = "10s"

[[protocols]]
label = "cpr-slow"
kind = "cpr"
interval = "60s"
tier = "pfs"

[sweep]
vary = ["cluster.nodes=4,8"]

[[published]]
source = "Table 1"
point = "protocol=cpr-fast;cluster.nodes=4"
metric = "makespan_s"
value = 12.5
`

func TestProtocolsEntries(t *testing.T) {
	s, err := Parse("cmp.toml", []byte(compareFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.ProtocolLabels(), ","); got != "none,cpr-fast,cpr-slow" {
		t.Fatalf("labels %s", got)
	}
	for _, tc := range []struct {
		label     string
		overrides []string
		want      cprParams
	}{
		{"cpr-fast", nil, cprParams{Interval: 10 * Second, Tier: "memory"}},
		{"cpr-slow", nil, cprParams{Interval: 60 * Second, Tier: "pfs"}},
		{"cpr-slow", []string{"protocol.interval=5s"}, cprParams{Interval: 5 * Second, Tier: "pfs"}},
	} {
		c, err := s.WithProtocol(tc.label)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range tc.overrides {
			if err := c.Set(o); err != nil {
				t.Fatal(err)
			}
		}
		if c.Protocol.Kind() != "cpr" || len(c.Protocols) != 0 {
			t.Fatalf("%s: kind %q, %d entries left", tc.label, c.Protocol.Kind(), len(c.Protocols))
		}
		p := cprParams{Tier: "memory"}
		if err := c.Protocol.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p != tc.want {
			t.Errorf("%s %v: got %+v, want %+v", tc.label, tc.overrides, p, tc.want)
		}
	}
	if _, err := s.WithProtocol("mlog"); err == nil {
		t.Error("an unknown label was accepted")
	}
	if len(s.Published) != 1 || s.Published[0].Value != 12.5 || s.Sweep.Vary[0] != "cluster.nodes=4,8" {
		t.Errorf("published %+v, sweep %+v", s.Published, s.Sweep)
	}
	// An entry's keys are decoded strictly, with the entry's line.
	c, _ := s.WithProtocol("cpr-slow")
	err = c.Protocol.Decode(&struct {
		Interval Duration `toml:"interval"`
	}{})
	if err == nil || err.Error() != `cmp.toml:17: unknown key "protocols[2].tier"` {
		t.Errorf("strict decode of an entry: %v", err)
	}
	if err := c.Protocol.Errorf("interval", "too long"); err.Error() != "cmp.toml:16: protocols[2].interval: too long" {
		t.Errorf("Errorf: %v", err)
	}
}

func TestProtocolsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"both tables", "[protocol]\nkind = \"cpr\"\n[[protocols]]\nkind = \"none\"\n",
			"x.toml:2: protocol.kind: a scenario has either one [protocol] table or [[protocols]] entries to compare, not both"},
		{"no kind", "[[protocols]]\nkind = \"none\"\n[[protocols]]\nlabel = \"x\"\n",
			"x.toml:3: protocols[1]: needs a kind"},
		{"duplicate label", "[[protocols]]\nkind = \"cpr\"\n[[protocols]]\nkind = \"cpr\"\n",
			`x.toml:4: protocols[1].kind: "cpr" labels two entries: give each entry a distinct label`},
		{"bad label", "[[protocols]]\nkind = \"cpr\"\nlabel = \"a;b\"\n",
			`x.toml:3: protocols[0].label: "a;b": a label must not contain spaces, ';', '=' or ','`},
		{"label type", "[[protocols]]\nkind = \"cpr\"\nlabel = 3\n",
			`x.toml:3: protocols[0].label: want a string, got an integer`},
		{"bad vary", "[sweep]\nvary = [\"cluster.nodes\"]\n",
			`x.toml:2: sweep.vary[0]: "cluster.nodes": want key=v1,v2,... such as cluster.nodes=64,128`},
		{"bad second vary", "[sweep]\nvary = [\n  \"seed=1,2\",\n  \"=3\",\n]\n",
			`x.toml:2: sweep.vary[1]: "=3": want key=v1,v2,... such as cluster.nodes=64,128`},
		{"empty label", "[[protocols]]\nkind = \"none\"\n[[protocols]]\nlabel = \"\"\nkind = \"cpr\"\n",
			`x.toml:4: protocols[1].label: must not be empty: leave label out to name the entry by its kind`},
		{"no metric", "[[published]]\nvalue = 3\n",
			`x.toml:1: published[0]: needs a metric (a result column such as makespan_s)`},
		{"bad point", "[[published]]\nmetric = \"makespan_s\"\nvalue = 1\npoint = \"nodes\"\n",
			`x.toml:4: published[0].point: point "nodes": want key=value;key=value, such as protocol=cpr;cluster.nodes=64`},
		{"unknown key", "[[published]]\nmetric = \"makespan_s\"\nvalu = 1\n",
			`x.toml:3: unknown key "published[0].valu" (did you mean "value"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.toml", []byte(tc.text), nil)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestParsePoint(t *testing.T) {
	tests := []struct {
		in      string
		want    [][2]string
		wantErr string
	}{
		{"", nil, ""},
		{"  ", nil, ""},
		{"protocol=cpr", [][2]string{{"protocol", "cpr"}}, ""},
		{" protocol = mlog ; cluster.nodes=64", [][2]string{{"protocol", "mlog"}, {"cluster.nodes", "64"}}, ""},
		{"workload.rule=B3/S23=x", [][2]string{{"workload.rule", "B3/S23=x"}}, ""},
		{"nodes", nil, `point "nodes": want key=value`},
		{"a=1;", nil, `point "a=1;": want key=value`},
		{"=1", nil, "want key=value"},
		{"a=", nil, "want key=value"},
		{"a=1; a=2", nil, `point "a=1; a=2": key a is given twice`},
	}
	for _, tc := range tests {
		got, err := ParsePoint(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParsePoint(%q) error %v, want it to contain %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParsePoint(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParsePoint checks that ParsePoint never panics and that an accepted
// point has distinct, trimmed, non-empty keys and values and reads back the
// same when written out again.
func FuzzParsePoint(f *testing.F) {
	for _, s := range []string{"", "protocol=cpr;cluster.nodes=64", " a = b=c ;d=e", "a=1;a=2", ";", "a=1;;b=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kvs, err := ParsePoint(s)
		if err != nil {
			return
		}
		parts := make([]string, len(kvs))
		for i, kv := range kvs {
			k, v := kv[0], kv[1]
			if k == "" || v == "" || k != strings.TrimSpace(k) || v != strings.TrimSpace(v) ||
				strings.ContainsAny(k, "=;") || strings.Contains(v, ";") || slices.ContainsFunc(kvs[:i], func(o [2]string) bool { return o[0] == k }) {
				t.Fatalf("ParsePoint(%q) accepted %q", s, kvs)
			}
			parts[i] = k + "=" + v
		}
		again, err := ParsePoint(strings.Join(parts, ";"))
		if err != nil || !slices.Equal(again, kvs) {
			t.Fatalf("ParsePoint(%q) = %q reads back as %q, %v", s, kvs, again, err)
		}
	})
}
