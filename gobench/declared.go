package gobench

import (
	"bytes"
	"regexp"
	"strings"
)

// benchRE matches the declaration of a benchmark as go test finds one:
// Benchmark alone or followed by a character that is not lower case.
// (internal/scaffold, which imports nothing of benchgate, has its own.)
var benchRE = regexp.MustCompile(`(?m)^func (Benchmark(?:[^a-z(\s][\p{L}\p{N}_]*)?)\(`)

// Declared returns the names of the benchmarks a Go test file declares,
// in file order, read from its text alone: what can be known of a
// package's benchmarks without building it. Build constraints are not
// read, and sub-benchmarks (b.Run) are not seen.
func Declared(src []byte) []string {
	if !bytes.Contains(src, []byte("func Benchmark")) {
		return nil
	}
	var names []string
	for _, m := range benchRE.FindAllSubmatch(src, -1) {
		names = append(names, string(m[1]))
	}
	return names
}

// SkippedDir says whether go's "./..." pattern passes over a directory of
// this name: testdata, vendor, and names that start with "." or "_".
// (A directory holding its own go.mod is another module, passed over as
// well.)
func SkippedDir(name string) bool {
	return name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// ModulePath is the module path a go.mod declares; "" when it declares
// none.
func ModulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			rest, _, _ = strings.Cut(rest, "//")
			return strings.Trim(strings.TrimSpace(rest), `"`+"`")
		}
	}
	return ""
}
