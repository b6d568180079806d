package experiment

import (
	"os"
	"path/filepath"
	"runtime"
)

// korfFile is the shared Korf instance file, or "" when the shared test data
// is not checked out beside the repository. It is looked up beside this
// source file first, so that a test binary run from another directory (a
// search's, say) finds it too, then from the working directory (a build
// with -trimpath has no source path).
var korfFile = func() string {
	const rel = "../../shared/testdata/korf15.tsv"
	dirs := []string{"."}
	if _, src, _, ok := runtime.Caller(0); ok && filepath.IsAbs(src) {
		dirs = []string{filepath.Dir(src), "."}
	}
	for _, d := range dirs {
		p, err := filepath.Abs(filepath.Join(d, rel))
		if err != nil {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}()

// withoutKorf is what a search's summary line adds when korfFile is
// missing and the search left its pida cases out, which it would otherwise
// do without a word.
func withoutKorf() string {
	if korfFile != "" {
		return ""
	}
	return " (the pida cases left out: ../shared/testdata/korf15.tsv is not beside the repository)"
}
