package benchdata

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/fsx"
)

// TestPruneHistory: 100 nights from 2026-01-01; pruned to 2 months the
// history keeps the nights from 2026-02-10 on (two months before the
// newest, 2026-04-10) and each older night goes to its month's archive,
// once however often the prune runs; every record is in exactly one file.
func TestPruneHistory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "history.jsonl")
	recs := records("aaaaaaaaaaaa", 100, 1, day0, flat(1000), flat(0.004))
	for _, r := range recs {
		if err := AppendHistory(path, r); err != nil {
			t.Fatal(err)
		}
	}
	archive := filepath.Join(dir, "archive")
	p, err := prune(t, path, 2, archive)
	if err != nil {
		t.Fatal(err)
	}
	cutoff := time.Date(2026, 2, 10, 2, 0, 0, 0, time.UTC) // newest 2026-04-10, less two months
	wantKept := 0
	for _, r := range recs {
		if !r.Date.Before(cutoff) {
			wantKept++
		}
	}
	if p.Kept != wantKept || p.Moved != 100-wantKept {
		t.Errorf("kept %d, moved %d; want %d and %d", p.Kept, p.Moved, wantKept, 100-wantKept)
	}
	jan, feb := filepath.Join(archive, "2026-01.jsonl"), filepath.Join(archive, "2026-02.jsonl")
	if !slices.Equal(p.Archives, []string{jan, feb}) {
		t.Errorf("archives %v, want %v", p.Archives, []string{jan, feb})
	}
	kept, err := ReadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	a1, err := ReadHistory(jan)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := ReadHistory(feb)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != wantKept || len(a1) != 31 || len(a2) != 9 || !kept[0].Date.Equal(cutoff) {
		t.Errorf("history %d records from %v, archives %d and %d; want %d from %v, 31 and 9", len(kept), kept[0].Date, len(a1), len(a2), wantKept, cutoff)
	}
	all := slices.Concat(a1, a2, kept)
	for i, r := range all {
		if r.RunID != recs[i].RunID || r.Cells[1] != recs[i].Cells[1] {
			t.Fatalf("record %d is %s, want %s", i, r.RunID, recs[i].RunID)
		}
	}

	// Cut short after the archives were written (the history not yet
	// rewritten): run again, nothing is archived twice.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := AppendHistory(path, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := prune(t, path, 2, archive); err != nil {
		t.Fatal(err)
	}
	if again, _ := ReadHistory(jan); len(again) != 31 {
		t.Errorf("the second prune archived January's records again: %d", len(again))
	}

	// Nothing old enough: nothing changes; without an archive the old
	// records are dropped.
	p, err = prune(t, path, 6, archive)
	if err != nil || p.Moved != 0 || len(p.Archives) != 0 {
		t.Errorf("prune to 6 months of 2: %+v %v", p, err)
	}
	p, err = prune(t, path, 1, "")
	if left, _ := ReadHistory(path); err != nil || p.Moved == 0 || len(left) != p.Kept || len(p.Archives) != 0 {
		t.Errorf("prune without an archive: %+v %v, %d left", p, err, len(left))
	}
	if _, err := PruneHistory(path, nil, 0, archive, time.Time{}); err == nil {
		t.Error("prune to 0 months accepted")
	}
}

// prune is PruneHistory of the file as ReadHistory reads it, now 2027.
func prune(t *testing.T, path string, months int, archive string) (Pruned, error) {
	t.Helper()
	recs, err := ReadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	return PruneHistory(path, recs, months, archive, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
}

func TestSplitHistory(t *testing.T) {
	t.Parallel()
	recs := records("aaaaaaaaaaaa", 40, 1, day0, flat(1000), flat(0.004))
	slices.Reverse(recs) // any order: the newest is found
	kept, older := SplitHistory(recs, 1, time.Time{})
	if len(kept)+len(older) != 40 || len(older) != 8 || !kept[0].Date.Equal(recs[0].Date) {
		t.Errorf("kept %d (first %v), older %d", len(kept), kept[0].Date, len(older))
	}
	if k, o := SplitHistory(recs, 0, time.Time{}); len(k) != 40 || o != nil {
		t.Errorf("months 0: %d kept, %d older", len(k), len(o))
	}
}

// TestDirectionFromRecords: a metric the gate decided better higher
// (customBiggerIsBetter's "score") drifts for the worse when it drops,
// though its name alone would say lower is better; records of a default
// metric carry no direction.
func TestDirectionFromRecords(t *testing.T) {
	t.Parallel()
	recs := records("aaaaaaaaaaaa", 12, 1, day0, flat(1000), flat(0.004))
	for i := range recs {
		v := 100.0
		if i >= 6 {
			v = 50
		}
		recs[i].Cells = append(recs[i].Cells, RecordCell{Cell: recs[i].Cells[0].Cell, Target: "candidate", Metric: "score", Mean: v, HalfWidth: 1, N: 5})
		recs[i].HigherBetter = map[string]bool{"score": true}
	}
	d := AnalyzeDrift(recs, ChangePointOptions{})
	var found bool
	for _, f := range d.Findings {
		if f.Metric == "score" {
			found = true
			if !f.Worse {
				t.Errorf("score halved, declared better higher: not worse: %+v", f)
			}
		}
	}
	if !found {
		t.Fatal("no change point in score")
	}
	if !recs[0].HigherIsBetter("score") || !recs[0].HigherIsBetter("rps") || recs[0].HigherIsBetter("p95") {
		t.Error("Record.HigherIsBetter: want the declared direction, else the name's")
	}
}

// TestNewRecordDirections: the record keeps the directions the gate
// declared against the metric's name, and only those.
func TestNewRecordDirections(t *testing.T) {
	t.Parallel()
	res := &Results{Env: Environment{Start: day0}}
	s := gate.Summary{N: 3, Mean: 10, HalfWidth: 1}
	c := gate.Comparison{Cells: []gate.CellResult{{Key: gate.CellKey{Class: "b"}, Decisions: []gate.Decision{
		{Metric: "score", Baseline: s, Candidate: s}, {Metric: "sec/op", Baseline: s, Candidate: s}, {Metric: "B/s", Baseline: s, Candidate: s},
	}}}}
	c.Settings.HigherBetterFor = map[gate.Metric]bool{"score": true, "B/s": true, "sec/op": false}
	r := NewRecord(res, c)
	if len(r.HigherBetter) != 1 || !r.HigherBetter["score"] {
		t.Errorf("HigherBetter %v, want score alone (B/s and sec/op go by their names)", r.HigherBetter)
	}
}

// TestPruneHistoryRobust: a record dated after now moves no cut; a record
// without a run id archived by a prune cut short is not archived twice; an
// append that fails (to /dev/full) is an error.
func TestPruneHistoryRobust(t *testing.T) {
	t.Parallel()
	recs := records("aaaaaaaaaaaa", 90, 1, day0, flat(1000), flat(0.004))
	now := recs[89].Date.Add(time.Hour)
	future := recs[0]
	future.Date, future.RunID = time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), "future"
	kept, older := SplitHistory(append(slices.Clone(recs), future), 1, now)
	if len(kept) != 30 || len(older) != 61 {
		t.Errorf("a record of 2099 moved the cut: %d kept, %d older; want 30 (Mar 3 to 31, the cut of Mar 31 less a month, and 2099) and 61", len(kept), len(older))
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "h.jsonl")
	for i := range recs {
		recs[i].RunID = ""
		if err := AppendHistory(path, recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "archive")
	all, _ := ReadHistory(path)
	if _, err := PruneHistory(path, all, 1, archive, now); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, orig, 0o644); err != nil { // as a crash before the rename leaves it
		t.Fatal(err)
	}
	if _, err := PruneHistory(path, all, 1, archive, now); err != nil {
		t.Fatal(err)
	}
	if jan, _ := ReadHistory(filepath.Join(archive, "2026-01.jsonl")); len(jan) != 31 {
		t.Errorf("January archived %d times over: %d records, want 31", len(jan)/31, len(jan))
	}

	if _, err := os.Stat("/dev/full"); err == nil {
		if err := appendRecords("/dev/full", recs[:1]); err == nil {
			t.Error("an append to /dev/full reported no error")
		}
	}
}

// TestReadHistories: files read as one history, in date order, a record
// in two of them once; a missing file named.
func TestReadHistories(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := records("aaaaaaaaaaaa", 10, 1, day0, flat(1000), flat(0.004))
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	for i, r := range recs {
		if i >= 4 {
			if err := AppendHistory(a, r); err != nil { // the later ones first
				t.Fatal(err)
			}
		}
		if i <= 5 {
			if err := AppendHistory(b, r); err != nil { // 4 and 5 in both
				t.Fatal(err)
			}
		}
	}
	got, err := ReadHistories([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("%d records, want 10", len(got))
	}
	for i, r := range got {
		if r.RunID != recs[i].RunID {
			t.Errorf("record %d is %s, want %s", i, r.RunID, recs[i].RunID)
		}
	}
	if _, err := ReadHistories([]string{a, filepath.Join(dir, "nope.jsonl")}); err == nil || !strings.Contains(err.Error(), "nope.jsonl") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestPruneArchiveLinks: prune writes only inside its archive directory. A
// symbolic link for a month's file, dangling or to a file, for the
// directory or for one on its path is a *LinkError; nothing outside is
// created or appended to, the history is unchanged; a FIFO is refused
// without blocking.
func TestPruneArchiveLinks(t *testing.T) {
	t.Parallel()
	recs := records("aaaaaaaaaaaa", 70, 1, day0, flat(1000), flat(0.004)) // 2026-01-01 on: January and February are archived
	setup := func(t *testing.T) (dir, path string) {
		dir = t.TempDir()
		path = filepath.Join(dir, "history.jsonl")
		for _, r := range recs {
			if err := AppendHistory(path, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(filepath.Join(dir, "outside"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "outside", "y"), []byte("keep\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir, path
	}
	for _, c := range []struct {
		name    string
		links   [][2]string // link, target
		archive string      // below dir
		link    string      // the link named, below dir
	}{
		{"dangling month", [][2]string{{"archive/2026-01.jsonl", "../outside/x"}}, "archive", "archive/2026-01.jsonl"},
		{"a later month", [][2]string{{"archive/2026-02.jsonl", "../outside/x"}}, "archive", "archive/2026-02.jsonl"},
		{"month to a file", [][2]string{{"archive/2026-01.jsonl", "../outside/y"}}, "archive", "archive/2026-01.jsonl"},
		{"the directory", [][2]string{{"linked", "outside"}}, "linked", "linked"},
		{"a directory on the path", [][2]string{{"linked", "outside"}}, "linked/archive", "linked"},
		{"a dangling directory", [][2]string{{"linked", "outside/none"}}, "linked", "linked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, path := setup(t)
			os.MkdirAll(filepath.Join(dir, "archive"), 0o755)
			for _, l := range c.links {
				if err := os.Symlink(l[1], filepath.Join(dir, l[0])); err != nil {
					t.Fatal(err)
				}
			}
			orig, _ := os.ReadFile(path)
			all, err := ReadHistory(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = PruneHistory(path, all, 1, filepath.Join(dir, c.archive), recs[69].Date)
			var le *LinkError
			if !errors.As(err, &le) || le.Path != filepath.Join(dir, c.link) {
				t.Fatalf("error %v, want a LinkError for %s", err, c.link)
			}
			ents, _ := os.ReadDir(filepath.Join(dir, "outside"))
			if len(ents) != 1 || ents[0].Name() != "y" {
				t.Errorf("outside holds %v, want y only", ents)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "outside", "y")); string(b) != "keep\n" {
				t.Errorf("outside/y holds %q", b)
			}
			if now, _ := os.ReadFile(path); string(now) != string(orig) {
				t.Error("the history was rewritten")
			}
			if _, err := os.Stat(filepath.Join(dir, "archive", "2026-01.jsonl")); c.link != "archive/2026-01.jsonl" && !os.IsNotExist(err) {
				t.Errorf("an archive was written before the refusal: %v", err)
			}
		})
	}
	t.Run("fifo", func(t *testing.T) {
		t.Parallel()
		dir, path := setup(t)
		os.MkdirAll(filepath.Join(dir, "archive"), 0o755)
		if err := syscall.Mkfifo(filepath.Join(dir, "archive", "2026-01.jsonl"), 0o644); err != nil {
			t.Skip(err)
		}
		all, _ := ReadHistory(path)
		done := make(chan error, 1)
		go func() {
			_, err := PruneHistory(path, all, 1, filepath.Join(dir, "archive"), recs[69].Date)
			done <- err
		}()
		select {
		case err := <-done:
			var nr *fsx.NotRegularError
			if !errors.As(err, &nr) {
				t.Errorf("a FIFO archive: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("prune still blocked on a FIFO after 10 s")
		}
	})
}
