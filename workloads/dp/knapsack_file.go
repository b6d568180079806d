package dp

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// KnapsackInstance is one record of a knapsack instance file.
type KnapsackInstance struct {
	Name string // the record's name (e.g. "P01")
	Line int    // line of the record's "name:" key
	Knapsack
	// Selection is the file's optimal selection, nil when not given.
	Selection []bool
	// OptimalValue and OptimalWeight are the file's claims, -1 when absent.
	OptimalValue, OptimalWeight int
}

// knapsackKeyList names the keys of a record, in file order, for messages.
const knapsackKeyList = "name, n, capacity, weights, profits, optimal_selection, optimal_value, optimal_weight"

// ParseKnapsackFile reads knapsack records in the layout of the shared
// knapsack01.txt: '#' comment lines and blank lines anywhere; each record
// starts with "name: X" followed by "key: value" lines for n, capacity,
// weights and profits (whitespace-separated lists) and optionally
// optimal_selection (0/1 per item), optimal_value and optimal_weight.
// Checked, with name:line: unknown or repeated keys, keys before a name,
// missing keys, non-integers, negative or oversized numbers, list lengths
// different from n, a selection that is not 0/1, overweight, or disagrees
// with optimal_value/optimal_weight, duplicate record names. name is used
// only in errors.
func ParseKnapsackFile(r io.Reader, name string) ([]KnapsackInstance, error) {
	lr := newLineReader(r, name)
	var out []KnapsackInstance
	var rec *knapsackRecord
	for {
		text, ok, err := lr.nextData()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		key, val, found := strings.Cut(text, ":")
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		if !found {
			return nil, lr.errorf("expected \"key: value\", got %q", clip(text))
		}
		if key == "name" {
			if rec != nil {
				in, err := rec.finish(name)
				if err != nil {
					return nil, err
				}
				out = append(out, in)
			}
			if val == "" {
				return nil, lr.errorf("empty instance name")
			}
			for _, prev := range out {
				if prev.Name == val {
					return nil, lr.errorf("instance %q already defined at line %d", val, prev.Line)
				}
			}
			rec = &knapsackRecord{name: val, lines: map[string]int{"name": lr.line}, vals: map[string][]int{}}
			continue
		}
		if !isKnapsackKey(key) {
			return nil, lr.errorf("unknown key %q (want one of %s)", key, knapsackKeyList)
		}
		if rec == nil {
			return nil, lr.errorf("key %q before the first \"name:\" line", key)
		}
		if l, dup := rec.lines[key]; dup {
			return nil, lr.errorf("key %q repeated in instance %q (first at line %d)", key, rec.name, l)
		}
		nums, err := parseInts(val)
		if err != nil {
			return nil, lr.errorf("%s: %v", key, err)
		}
		switch key {
		case "weights", "profits", "optimal_selection":
		default:
			if len(nums) != 1 {
				return nil, lr.errorf("%s: want one number, got %d", key, len(nums))
			}
		}
		rec.lines[key] = lr.line
		rec.vals[key] = nums
	}
	if rec != nil {
		in, err := rec.finish(name)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	if len(out) == 0 {
		return nil, lr.errorf("no knapsack instances (no \"name:\" line)")
	}
	return out, nil
}

// knapsackRecord collects one record's keys until the next "name:".
type knapsackRecord struct {
	name  string
	lines map[string]int   // key -> line
	vals  map[string][]int // key -> numbers
}

func (rec *knapsackRecord) finish(file string) (KnapsackInstance, error) {
	at := func(key string, format string, a ...any) error {
		return &ParseError{Name: file, Line: rec.lines[key], Msg: fmt.Sprintf("instance %q: ", rec.name) + fmt.Sprintf(format, a...)}
	}
	for _, key := range []string{"n", "capacity", "weights", "profits"} {
		if _, ok := rec.lines[key]; !ok {
			return KnapsackInstance{}, at("name", "missing key %q", key)
		}
	}
	n := rec.vals["n"][0]
	in := KnapsackInstance{
		Name: rec.name,
		Line: rec.lines["name"],
		Knapsack: Knapsack{
			Capacity: rec.vals["capacity"][0],
			Weights:  rec.vals["weights"],
			Profits:  rec.vals["profits"],
		},
		OptimalValue:  -1,
		OptimalWeight: -1,
	}
	for _, key := range []string{"weights", "profits", "optimal_selection"} {
		if l, ok := rec.lines[key]; ok && len(rec.vals[key]) != n {
			return in, &ParseError{Name: file, Line: l, Msg: fmt.Sprintf("instance %q: %s has %d entries, n is %d", rec.name, key, len(rec.vals[key]), n)}
		}
	}
	if err := in.Validate(); err != nil {
		return in, at("name", "%v", err)
	}
	if v, ok := rec.vals["optimal_value"]; ok {
		in.OptimalValue = v[0]
	}
	if v, ok := rec.vals["optimal_weight"]; ok {
		in.OptimalWeight = v[0]
	}
	if sel, ok := rec.vals["optimal_selection"]; ok {
		in.Selection = make([]bool, n)
		for i, s := range sel {
			if s != 0 && s != 1 {
				return in, at("optimal_selection", "optimal_selection entry %d is %d, want 0 or 1", i+1, s)
			}
			in.Selection[i] = s == 1
		}
		w, p := in.Evaluate(in.Selection)
		switch {
		case w > in.Capacity:
			return in, at("optimal_selection", "optimal_selection weighs %d, over capacity %d", w, in.Capacity)
		case in.OptimalValue >= 0 && p != in.OptimalValue:
			return in, at("optimal_value", "optimal_selection is worth %d, optimal_value says %d", p, in.OptimalValue)
		case in.OptimalWeight >= 0 && w != in.OptimalWeight:
			return in, at("optimal_weight", "optimal_selection weighs %d, optimal_weight says %d", w, in.OptimalWeight)
		}
	}
	return in, nil
}

func isKnapsackKey(key string) bool {
	switch key {
	case "name", "n", "capacity", "weights", "profits", "optimal_selection", "optimal_value", "optimal_weight":
		return true
	}
	return false
}

// parseInts reads a whitespace-separated list of integers in
// 0..MaxKnapsackValue.
func parseInts(s string) ([]int, error) {
	fields := strings.Fields(s)
	out := make([]int, 0, len(fields))
	for i, f := range fields {
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %q is not an integer", i+1, clip(f))
		}
		if v < 0 || v > MaxKnapsackValue {
			return nil, fmt.Errorf("entry %d: %d outside 0..%d", i+1, v, MaxKnapsackValue)
		}
		out = append(out, v)
	}
	return out, nil
}

// clip shortens s for quoting in an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
