package scenarios

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// files holds the scenarios shipped with ftsim (read-only).
//
//go:embed *.toml
var files embed.FS

// Embedded lists the names of the shipped scenarios ("default", "exascale", ...).
func Embedded() []string {
	ents, _ := fs.ReadDir(files, ".")
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".toml"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// LoadEmbedded parses the shipped scenario name (with or without ".toml" and a
// leading "scenarios/"); errors name it as scenarios/NAME.toml.
func LoadEmbedded(name string, overrides []string) (*Scenario, bool, error) {
	base := strings.TrimSuffix(path.Base(name), ".toml")
	data, err := files.ReadFile(base + ".toml")
	if err != nil {
		return nil, false, nil
	}
	s, err := Parse("scenarios/"+base+".toml", data, overrides)
	return s, true, err
}
