package benchdata

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
	"syscall"
	"time"

	"github.com/benchgate/benchgate/internal/fsx"
)

// SplitHistory splits records at months months before the newest record:
// kept are the records of those last months (every record when months
// <= 0), older the rest, each in the order given. The history site shows
// the kept ones and `history prune` keeps them in the file. A record
// dated after now (a runner whose clock is wrong) does not move the cut:
// the newest record at or before now does; a zero now puts no such cap.
func SplitHistory(records []Record, months int, now time.Time) (kept, older []Record) {
	if months <= 0 || len(records) == 0 {
		return records, nil
	}
	var newest time.Time
	for _, r := range records {
		if r.Date.After(newest) && (now.IsZero() || !r.Date.After(now)) {
			newest = r.Date
		}
	}
	if newest.IsZero() { // every record is after now: keep them all
		return records, nil
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

// PruneHistory keeps the history file at path, whose records are recs
// (as ReadHistory read them), to its last months months before the newest
// record not after now (SplitHistory): the older records go, each
// appended to the archive of its month in the directory archive
// (ArchiveName: a history file of its own, read by every history
// command), or are dropped when archive is "". A month's archive is
// written once, as its records age out, and then not again, so each file
// stays the size of one month and a git branch holding them grows by
// what was added (text that only grows is what git stores as deltas).
// The archives are written before the history is rewritten (by a
// rename), and an append that fails is cut back off, so a prune cut short
// leaves every record in the history, its archive or both, never in
// neither, and no broken line; a record already in its archive (the same
// JSON line) is not written twice, so running the prune again completes
// it. months must be positive. Its errors are writing's: the records were
// read and checked before.
func PruneHistory(path string, recs []Record, months int, archive string, now time.Time) (Pruned, error) {
	if months <= 0 {
		return Pruned{}, fmt.Errorf("prune: months %d: want 1 or more", months)
	}
	kept, older := SplitHistory(recs, months, now)
	p := Pruned{Kept: len(kept), Moved: len(older)}
	if len(older) == 0 {
		return p, nil
	}
	var err error
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

// LinkError is a symbolic link where prune writes an archive: the
// archive directory, a directory on its path, or a month's file. The
// archive may be a checkout of a branch a pull request could write, and a
// link there would make prune create or append to a file outside it.
type LinkError struct {
	Path string
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("prune: archive: %s is a symbolic link: refused, prune writes only inside the archive directory (replace the link with the directory or file itself)", e.Path)
}

// refuseLinks returns a *LinkError for the first of dir's directories, as
// given (every prefix of the cleaned path, the outermost first), that is a
// symbolic link; nil when none is, or when the rest does not exist yet.
func refuseLinks(dir string) error {
	var paths []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		paths = append(paths, p)
		if d := filepath.Dir(p); d == p || d == "." {
			break
		}
	}
	slices.Reverse(paths)
	for _, p := range paths {
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return fmt.Errorf("prune: archive: %w", err)
		case st.Mode()&fs.ModeSymlink != 0:
			return &LinkError{Path: p}
		}
	}
	return nil
}

// openArchive opens a month's archive file for reading and appending,
// creating it; a symbolic link there (dangling or not) is refused, never
// followed, and so is anything but a regular file.
func openArchive(file string) (*os.File, error) {
	if st, err := os.Lstat(file); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return nil, &LinkError{Path: file}
	}
	// O_NOFOLLOW: a link made since the Lstat fails the open (ELOOP)
	// rather than being followed; O_NONBLOCK: a FIFO does not block it.
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_APPEND|oNoFollow|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		if st, lerr := os.Lstat(file); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, &LinkError{Path: file}
		}
		return nil, err
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, err
	case !st.Mode().IsRegular():
		f.Close()
		return nil, &fsx.NotRegularError{Path: file, Mode: st.Mode()}
	case st.Size() > MaxHistoryBytes:
		f.Close()
		return nil, &fsx.TooLargeError{Path: file, Limit: MaxHistoryBytes}
	}
	return f, nil
}

// archiveRecords appends recs to dir's monthly archives, each record once.
// It writes only inside dir: a symbolic link for dir, for a directory on
// its path or for a month's file is refused (a *LinkError), never
// followed.
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
	if err := refuseLinks(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("prune: archive: %w", err)
	}
	if err := refuseLinks(dir); err != nil { // made one since?
		return nil, err
	}
	// Every month's file is looked at before any is written, so that a
	// link refused leaves every archive as it was; the open of each
	// refuses one made since.
	for _, n := range names {
		if st, err := os.Lstat(filepath.Join(dir, n)); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, &LinkError{Path: filepath.Join(dir, n)}
		}
	}
	var written []string
	for _, n := range names {
		file := filepath.Join(dir, n)
		f, err := openArchive(file)
		if err != nil {
			var le *LinkError
			if errors.As(err, &le) {
				return written, err
			}
			return written, fmt.Errorf("prune: archive: %w", err)
		}
		w, err := archiveMonth(f, file, byMonth[n])
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("prune: archive %s: %w", file, cerr)
		}
		if err != nil {
			return written, err
		}
		if w {
			written = append(written, file)
		}
	}
	return written, nil
}

// archiveMonth appends to the open archive f those of recs it does not
// hold yet, and says whether it wrote any.
func archiveMonth(f *os.File, file string, recs []Record) (bool, error) {
	old, err := ParseHistory(f, file)
	if err != nil {
		return false, fmt.Errorf("prune: archive: %w", err)
	}
	// A record is in the archive when its JSON line is: a prune cut
	// short and run again finds the very records it wrote, run id or
	// none.
	have := map[string]bool{}
	for _, o := range old {
		have[recordKey(o)] = true
	}
	var add []Record
	for _, r := range recs {
		if k := recordKey(r); !have[k] {
			have[k] = true
			add = append(add, r)
		}
	}
	if len(add) == 0 {
		return false, nil
	}
	if err := appendTo(f, add); err != nil {
		return false, fmt.Errorf("prune: archive %s: %w", file, err)
	}
	return true, nil
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
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	return errors.Join(appendTo(f, recs), f.Close())
}

// appendTo appends recs to f, a history file opened for appending (and
// reading, to see whether its last line lacks its newline), as one write,
// synced; a write that fails is cut back off.
func appendTo(f *os.File, recs []Record) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			b.WriteByte('\n')
		}
	}
	if err := writeRecords(&b, recs); err != nil {
		return err
	}
	_, werr := f.Write(b.Bytes())
	serr := f.Sync()
	if werr != nil || serr != nil {
		// A write cut short (the disk full) leaves no broken line: the
		// file is what it was.
		if terr := f.Truncate(st.Size()); terr != nil {
			werr = errors.Join(werr, fmt.Errorf("cutting the failed write back off: %w", terr))
		}
	}
	return errors.Join(werr, serr)
}

// recordKey is a record's identity as the files hold it: its JSON line.
// Two records with the same key are one run written twice (a prune cut
// short, the same archive given twice), whatever their run ids.
func recordKey(r Record) string {
	b, _ := json.Marshal(r) // a record read from a file marshals again
	return string(b)
}

// ReadHistories reads several history files as one history: the records
// of all of them in date order, a record in two of them (as a prune cut
// short leaves it, in its archive and in the history) once. Each file is
// read as ReadHistory reads it, and together they may hold at most
// MaxHistoryBytes.
func ReadHistories(paths []string) ([]Record, error) {
	if len(paths) == 1 {
		return ReadHistory(paths[0])
	}
	var all []Record
	var total int64
	seen := map[string]bool{}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if total += st.Size(); total > MaxHistoryBytes {
			return nil, fmt.Errorf("%s: the history files together hold more than %d MiB, the most a history may: give fewer", p, MaxHistoryBytes>>20)
		}
		recs, err := ReadHistory(p)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if k := recordKey(r); !seen[k] {
				seen[k] = true
				all = append(all, r)
			}
		}
	}
	slices.SortStableFunc(all, func(a, b Record) int { return a.Date.Compare(b.Date) })
	return all, nil
}
