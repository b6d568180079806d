package experiment

import (
	"slices"
	"strings"
	"testing"
)

func TestParseVary(t *testing.T) {
	cases := []struct {
		in   string
		key  string
		vals []string
		err  string
	}{
		{in: "cluster.nodes=1,2,4", key: "cluster.nodes", vals: []string{"1", "2", "4"}},
		{in: " protocol.kind = none , cpr ", key: "protocol.kind", vals: []string{"none", "cpr"}},
		{in: "workload.grid=[2,2],[4, 4]", key: "workload.grid", vals: []string{"[2,2]", "[4, 4]"}},
		{in: `workload.name="a,b",'c,d',e`, key: "workload.name", vals: []string{`"a,b"`, `'c,d'`, "e"}},
		{in: "failures.node_mtbf=5y", key: "failures.node_mtbf", vals: []string{"5y"}},
		{in: "cluster.nodes", err: "want key=v1,v2"},
		{in: "=1,2", err: "want key=v1,v2"},
		{in: "cluster.nodes=1,,2", err: "empty value"},
		{in: "cluster.nodes=", err: "empty value"},
		{in: "cluster.nodes=1,2,1", err: "given twice"},
		// linked keys
		{in: "cluster.nodes | workload.tiles = 1|[1,1], 2|[1,2]", key: "cluster.nodes|workload.tiles", vals: []string{"1|[1,1]", "2|[1,2]"}},
		{in: "workload.width|workload.height=2,16", key: "workload.width|workload.height", vals: []string{"2", "16"}},
		{in: `a|b="x|y",'p|q'`, key: "a|b", vals: []string{`"x|y"`, `'p|q'`}},
		{in: "a|b=1|2|3", err: `value "1|2|3" has 3 parts for 2 linked keys`},
		{in: "a|b=1|", err: `value "1|" has an empty part`},
		{in: "a||b=1", err: `empty key in "a||b"`},
		{in: "a|a=1", err: "key a linked twice"},
		{in: "protocol|seed=x|1", err: "protocol cannot be linked"},
		{in: "seed|protocol.kind=1|cpr", err: "protocol.kind cannot be linked"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			v, err := ParseVary(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || v.Key != c.key || !slices.Equal(v.Values, c.vals) {
				t.Fatalf("got %+v, %v; want %s %q", v, err, c.key, c.vals)
			}
			// String is what error messages quote: the form ParseVary reads
			if w, err := ParseVary(v.String()); err != nil || w.Key != v.Key || !slices.Equal(w.Values, v.Values) {
				t.Fatalf("%q reads back as %+v, %v", v.String(), w, err)
			}
		})
	}
}

// The product runs the first key outermost, values in the order given.
func TestProductOrder(t *testing.T) {
	cases := []struct {
		varies []Vary
		want   []string
	}{
		{nil, []string{""}},
		{[]Vary{{"a", []string{"1", "2"}}}, []string{"a=1", "a=2"}},
		{[]Vary{{"a", []string{"2", "1"}}, {"b", []string{"x", "y", "z"}}},
			[]string{"a=2;b=x", "a=2;b=y", "a=2;b=z", "a=1;b=x", "a=1;b=y", "a=1;b=z"}},
		{[]Vary{{"a", []string{"1"}}, {"b", []string{"x", "y"}}, {"c", []string{"p", "q"}}},
			[]string{"a=1;b=x;c=p", "a=1;b=x;c=q", "a=1;b=y;c=p", "a=1;b=y;c=q"}},
		// linked keys take their values together, one part each or the same
		{[]Vary{{"a|b", []string{"1|x", "2|y"}}, {"c", []string{"p", "q"}}},
			[]string{"a=1;b=x;c=p", "a=1;b=x;c=q", "a=2;b=y;c=p", "a=2;b=y;c=q"}},
		{[]Vary{{"c", []string{"p"}}, {"a|b", []string{"[1|2]", "3"}}},
			[]string{"c=p;a=[1|2];b=[1|2]", "c=p;a=3;b=3"}},
	}
	for _, c := range cases {
		if got := PointIDs(c.varies); !slices.Equal(got, c.want) {
			t.Errorf("%v: got %q, want %q", c.varies, got, c.want)
		}
	}
}

// FuzzParseVary checks that parsing never panics and that a parsed vary
// reads back from its String (the form error messages quote and meta.json
// stores).
func FuzzParseVary(f *testing.F) {
	for _, s := range []string{"cluster.nodes=1,2,4", "workload.grid=[2,2],[4, 4]", `a|b="x|y",'p|q'`, "a|b=1|[1,1],2", "k=]1,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVary(s)
		if err != nil {
			return
		}
		w, err := ParseVary(v.String())
		if err != nil || w.Key != v.Key || !slices.Equal(w.Values, v.Values) {
			t.Fatalf("ParseVary(%q) = %+v; %q reads back as %+v, %v", s, v, v.String(), w, err)
		}
	})
}
