package experiment

import (
	"os"
	"path/filepath"
)

// korfFile is the shared Korf instance file, or "" when the shared test data
// is not checked out beside the repository.
var korfFile = func() string {
	p, _ := filepath.Abs("../../shared/testdata/korf15.tsv")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}()

// withoutKorf is what a search's summary line adds when korfFile is
// missing and the search left its pida cases out: a test binary run from
// another directory than experiment/ does not find the shared test data,
// and the search would otherwise shrink without a word.
func withoutKorf() string {
	if korfFile != "" {
		return ""
	}
	return " (the pida cases left out: ../../shared/testdata/korf15.tsv is not there)"
}
