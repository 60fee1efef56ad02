package baselines

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
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
	p, err := PruneHistory(path, 2, archive)
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
	if _, err := PruneHistory(path, 2, archive); err != nil {
		t.Fatal(err)
	}
	if again, _ := ReadHistory(jan); len(again) != 31 {
		t.Errorf("the second prune archived January's records again: %d", len(again))
	}

	// Nothing old enough: nothing changes; without an archive the old
	// records are dropped.
	p, err = PruneHistory(path, 6, archive)
	if err != nil || p.Moved != 0 || len(p.Archives) != 0 {
		t.Errorf("prune to 6 months of 2: %+v %v", p, err)
	}
	p, err = PruneHistory(path, 1, "")
	if left, _ := ReadHistory(path); err != nil || p.Moved == 0 || len(left) != p.Kept || len(p.Archives) != 0 {
		t.Errorf("prune without an archive: %+v %v, %d left", p, err, len(left))
	}
	if _, err := PruneHistory(path, 0, archive); err == nil {
		t.Error("prune to 0 months accepted")
	}
	if _, err := PruneHistory(filepath.Join(dir, "missing.jsonl"), 1, archive); err == nil {
		t.Error("a missing history was pruned")
	}
}

func TestSplitHistory(t *testing.T) {
	t.Parallel()
	recs := records("aaaaaaaaaaaa", 40, 1, day0, flat(1000), flat(0.004))
	slices.Reverse(recs) // any order: the newest is found
	kept, older := SplitHistory(recs, 1)
	if len(kept)+len(older) != 40 || len(older) != 8 || !kept[0].Date.Equal(recs[0].Date) {
		t.Errorf("kept %d (first %v), older %d", len(kept), kept[0].Date, len(older))
	}
	if k, o := SplitHistory(recs, 0); len(k) != 40 || o != nil {
		t.Errorf("months 0: %d kept, %d older", len(k), len(o))
	}
}
