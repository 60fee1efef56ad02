package benchdata

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
	m, _, err := MergeFiles([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Rungs) != 5 || len(m.Shards) != 2 || m.Status != "complete" {
		t.Errorf("merged %d rungs, %d shards, status %s", len(m.Rungs), len(m.Shards), m.Status)
	}

	missing := filepath.Join(dir, "missing.json")
	if _, _, err := MergeFiles([]string{a, missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing shard file: %v", err)
	}

	full := shard("full.json", 1, MaxRungs)
	want := fmt.Sprintf("merge: the shards up to %s hold more than %d rungs, more than one results file can", b, MaxRungs)
	if _, _, err := MergeFiles([]string{full, b}); err == nil || err.Error() != want {
		t.Errorf("too many rungs together: %v\nwant %s", err, want)
	}
}

// TestMergeProfiles: a merge takes the shards' profiles along, in shard
// order whatever the order of the files given, each file copied to the
// merged directory under a name of its shard; a file that is missing, or
// named outside its shard's directory (a forged results file), leaves
// its cell's profile skipped with why, and the merge goes on.
func TestMergeProfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shard := func(index int, profiles string) string {
		write(fmt.Sprintf("s%d/results.json", index), fmt.Sprintf(`{"version":%d,"status":"complete","shard":{"index":%d,"count":2},"rungs":[],"profiles":[%s]}`, FormatVersion, index, profiles))
		return filepath.Join(dir, fmt.Sprintf("s%d", index), "results.json")
	}
	write("s1/profiles/cell01-baseline.pb.gz", "base of shard 1")
	write("s1/profiles/cell01-candidate.pb.gz", "candidate of shard 1")
	write("s2/profiles/cell01-baseline.pb.gz", "base of shard 2")
	write("secret", "not a profile")
	s1 := shard(1, `{"cell":{"class":"a"},"source":"perf","baseline":{"file":"profiles/cell01-baseline.pb.gz","requests":10},"candidate":{"file":"profiles/cell01-candidate.pb.gz","requests":12}}`)
	s2 := shard(2, `{"cell":{"class":"b"},"source":"perf","baseline":{"file":"profiles/cell01-baseline.pb.gz"},"candidate":{"file":"profiles/cell01-candidate.pb.gz"}},`+
		`{"cell":{"class":"c"},"source":"perf","baseline":{"file":"../secret"},"candidate":{"file":"profiles/cell02-candidate.pb.gz"}},`+
		`{"cell":{"class":"d"},"skipped":"not profiled"}`)

	m, copies, err := MergeFiles([]string{s2, s1})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "merged")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	CopyProfiles(out, m, copies)

	var cells []string
	for _, p := range m.Profiles {
		cells = append(cells, p.Cell.Class)
	}
	if got := strings.Join(cells, " "); got != "a b c d" {
		t.Fatalf("merged profiles of cells %s, want a b c d (shard order)", got)
	}
	a := m.Profiles[0]
	if a.Skipped != "" || a.Baseline.File != "profiles/shard1-cell01-baseline.pb.gz" || a.Candidate.File != "profiles/shard1-cell01-candidate.pb.gz" || a.Candidate.Requests != 12 {
		t.Errorf("shard 1's profile: %+v", a)
	}
	for file, want := range map[string]string{a.Baseline.File: "base of shard 1", a.Candidate.File: "candidate of shard 1"} {
		if b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(file))); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", file, b, err, want)
		}
	}
	if b := m.Profiles[1]; !strings.Contains(b.Skipped, "could not be taken along") || !strings.Contains(b.Skipped, "cell01-candidate.pb.gz") {
		t.Errorf("a missing profile file: skipped %q", b.Skipped)
	}
	if c := m.Profiles[2]; !strings.Contains(c.Skipped, `shard 2's profile file "../secret" is not within its results directory`) {
		t.Errorf("a profile file outside its shard: skipped %q", c.Skipped)
	}
	if _, err := os.Stat(filepath.Join(out, "profiles", "shard2-secret")); err == nil {
		t.Error("a file outside the shard's directory was copied")
	}
	if d := m.Profiles[3]; d.Skipped != "not profiled" {
		t.Errorf("a cell not profiled: %+v", d)
	}
}
