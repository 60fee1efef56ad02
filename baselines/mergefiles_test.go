package baselines

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeFiles: the shards' files merge as their results do; a file
// that does not read is its error, and shards whose rungs add up past
// what one results file may hold are refused at the file that does it.
func TestMergeFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shard := func(name string, index, rungs int) string {
		t.Helper()
		path := filepath.Join(dir, name)
		doc := fmt.Sprintf(`{"version":%d,"status":"complete","shard":{"index":%d,"count":2},"rungs":[%s]}`, FormatVersion, index, repeat("{}", rungs))
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b := shard("a.json", 1, 2), shard("b.json", 2, 3)
	m, err := MergeFiles([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Rungs) != 5 || len(m.Shards) != 2 || m.Status != "complete" {
		t.Errorf("merged %d rungs, %d shards, status %s", len(m.Rungs), len(m.Shards), m.Status)
	}

	missing := filepath.Join(dir, "missing.json")
	if _, err := MergeFiles([]string{a, missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing shard file: %v", err)
	}

	full := shard("full.json", 1, MaxRungs)
	want := fmt.Sprintf("merge: the shards up to %s hold more than %d rungs, more than one results file can", b, MaxRungs)
	if _, err := MergeFiles([]string{full, b}); err == nil || err.Error() != want {
		t.Errorf("too many rungs together: %v\nwant %s", err, want)
	}
}
