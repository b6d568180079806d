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
	data, ok := EmbeddedSource(name)
	if !ok {
		return nil, false, nil
	}
	s, err := Parse("scenarios/"+embeddedBase(name)+".toml", data, overrides)
	return s, true, err
}

// EmbeddedSource returns the text of the shipped scenario name (named as
// LoadEmbedded takes it), and whether there is one.
func EmbeddedSource(name string) ([]byte, bool) {
	data, err := files.ReadFile(embeddedBase(name) + ".toml")
	return data, err == nil
}

func embeddedBase(name string) string { return strings.TrimSuffix(path.Base(name), ".toml") }
