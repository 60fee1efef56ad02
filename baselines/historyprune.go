package baselines

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// SplitHistory splits records at months months before the newest record:
// kept are the records of those last months (every record when months
// <= 0), older the rest, each in the order given. The history site shows
// the kept ones and `history prune` keeps them in the file.
func SplitHistory(records []Record, months int) (kept, older []Record) {
	if months <= 0 || len(records) == 0 {
		return records, nil
	}
	newest := records[0].Date
	for _, r := range records {
		if r.Date.After(newest) {
			newest = r.Date
		}
	}
	cutoff := newest.AddDate(0, -months, 0)
	for _, r := range records {
		if r.Date.Before(cutoff) {
			older = append(older, r)
		} else {
			kept = append(kept, r)
		}
	}
	return kept, older
}

// Pruned is what PruneHistory did.
type Pruned struct {
	// Kept is the number of records left in the history file, Moved the
	// number taken out of it (into the archives, or dropped without one).
	Kept, Moved int
	// Archives are the archive files written to, in order.
	Archives []string
}

// ArchiveName is the archive file of the records of t's month (UTC):
// "2026-01.jsonl".
func ArchiveName(t time.Time) string { return t.UTC().Format("2006-01") + ".jsonl" }

// PruneHistory keeps the history file at path to its last months months
// (SplitHistory): the older records go, each appended to the archive of
// its month in the directory archive (ArchiveName: a history file of its
// own, read by every history command), or are dropped when archive is
// "". A month's archive is written once, as its records age out, and
// then not again, so each file stays the size of one month and a git
// branch holding them grows by what was added (text that only grows is
// what git stores as deltas). The archives are written before the history
// is rewritten (by a rename), so a prune cut short leaves every record
// in the history, its archive or both, never in neither; a record already
// in its archive (same run id and date) is not written twice, so running
// the prune again completes it. months must be positive.
func PruneHistory(path string, months int, archive string) (Pruned, error) {
	if months <= 0 {
		return Pruned{}, fmt.Errorf("prune: months %d: want 1 or more", months)
	}
	recs, err := ReadHistory(path)
	if err != nil {
		return Pruned{}, err
	}
	kept, older := SplitHistory(recs, months)
	p := Pruned{Kept: len(kept), Moved: len(older)}
	if len(older) == 0 {
		return p, nil
	}
	if archive != "" {
		if p.Archives, err = archiveRecords(archive, older); err != nil {
			return Pruned{}, err
		}
	}
	err = WriteFile(path, func(w io.Writer) error { return writeRecords(w, kept) })
	if err != nil {
		return Pruned{}, fmt.Errorf("prune: %s: %w", path, err)
	}
	return p, nil
}

// archiveRecords appends recs to dir's monthly archives, each record once.
func archiveRecords(dir string, recs []Record) ([]string, error) {
	byMonth := map[string][]Record{}
	var names []string
	for _, r := range recs {
		n := ArchiveName(r.Date)
		if _, ok := byMonth[n]; !ok {
			names = append(names, n)
		}
		byMonth[n] = append(byMonth[n], r)
	}
	slices.Sort(names)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("prune: archive: %w", err)
	}
	var written []string
	for _, n := range names {
		file := filepath.Join(dir, n)
		old, err := ReadHistory(file)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return written, fmt.Errorf("prune: archive: %w", err)
		}
		type key struct {
			run  string
			date int64
		}
		have := map[key]bool{}
		for _, o := range old {
			if o.RunID != "" {
				have[key{o.RunID, o.Date.UnixNano()}] = true
			}
		}
		var add []Record
		for _, r := range byMonth[n] {
			if r.RunID == "" || !have[key{r.RunID, r.Date.UnixNano()}] {
				add = append(add, r)
			}
		}
		if len(add) == 0 {
			continue
		}
		if err := appendRecords(file, add); err != nil {
			return written, fmt.Errorf("prune: archive %s: %w", file, err)
		}
		written = append(written, file)
	}
	return written, nil
}

// writeRecords writes recs as JSON Lines.
func writeRecords(w io.Writer, recs []Record) error {
	bw := bufio.NewWriter(w)
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("history record: %w", err)
		}
		bw.Write(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// appendRecords appends recs to the history file at path as one write,
// synced, starting on a line of its own as AppendHistory does.
func appendRecords(path string, recs []Record) error {
	var b bytes.Buffer
	if needsNewline(path) {
		b.WriteByte('\n')
	}
	if err := writeRecords(&b, recs); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(b.Bytes())
	serr := f.Sync()
	return errors.Join(werr, serr, f.Close())
}
