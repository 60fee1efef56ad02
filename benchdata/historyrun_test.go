package benchdata

import (
	"path/filepath"
	"testing"
)

// TestInHistory: a run is in the history when a record has its run id
// and date; a missing file holds no run, and a run without an id is
// never found.
func TestInHistory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "h", "history.jsonl")
	recs := records("3f2a", 3, 1, day0, flat(1000), flat(0.004))
	check := func(what string, r Record, want bool) {
		t.Helper()
		got, err := InHistory(path, r)
		if err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", what, got, err, want)
		}
	}
	check("missing file", recs[0], false)
	for _, r := range recs[:2] {
		if err := AppendHistory(path, r); err != nil {
			t.Fatal(err)
		}
	}
	check("appended", recs[1], true)
	check("not appended", recs[2], false)
	later := recs[1]
	later.Date = later.Date.Add(1)
	check("same run id, another date", later, false)
	anon := recs[0]
	anon.RunID = ""
	if err := AppendHistory(path, anon); err != nil {
		t.Fatal(err)
	}
	check("no run id", anon, false)

	if _, err := InHistory(filepath.Dir(path), recs[0]); err == nil {
		t.Error("a directory as the history file: no error")
	}
}
