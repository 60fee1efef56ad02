package archtest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxCommandLines is what cmd/benchgate's non-test Go lines stay under:
// the commands' flags and the calls between packages, and nothing a
// package should own (docs/architecture.md, "Wiring"). It grew to 1,302
// once, each command keeping a check or a rule of its own; reaching the
// bound is a sign that something belongs in a package.
const maxCommandLines = 1000

// TestCommandStaysThin counts cmd/benchgate's non-test Go lines, its
// testdata aside (a fake target's program lives there).
func TestCommandStaysThin(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(moduleRoot(t), "cmd", "benchgate")
	lines := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "testdata":
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		b, err := os.ReadFile(path)
		lines += bytes.Count(b, []byte("\n"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if lines >= maxCommandLines {
		t.Errorf("cmd/benchgate holds %d non-test lines, not under %d: move what is not flags and wiring into the package it belongs to (docs/architecture.md, Wiring)", lines, maxCommandLines)
	}
	t.Logf("cmd/benchgate: %d non-test lines", lines)
}
