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
