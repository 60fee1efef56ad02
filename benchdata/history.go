package benchdata

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/fsx"
	"github.com/benchgate/benchgate/internal/textsafe"
)

// HistoryVersion is the version of the history records this code writes.
// A record of a newer version is refused rather than read in part.
const HistoryVersion = 1

// Record is one run in the history: what a nightly keeps of its decided
// comparison, one JSON line of the history file. It is compact on
// purpose: per cell, target and metric only the centre, the interval and
// the number of repetitions, enough to follow a trend and to find where
// it stepped.
type Record struct {
	Version int `json:"version"`
	// Date is when the run started (the results' environment start).
	Date     time.Time `json:"date"`
	Scenario string    `json:"scenario"`
	Profile  string    `json:"profile,omitempty"`
	RunID    string    `json:"run_id,omitempty"`
	// BaselineCommit and CandidateCommit are the commits measured. In the
	// nightly reference comparison the baseline is the pinned reference
	// and the candidate the head of the default branch.
	BaselineCommit  string `json:"baseline_commit,omitempty"`
	CandidateCommit string `json:"candidate_commit,omitempty"`
	// Fingerprint is the machine's Environment.Fingerprint(): only records
	// with equal fingerprints are compared. Machine is the same for a
	// person (Environment.FingerprintText()). A merged run takes its
	// shards' common fingerprint; shards on machines of different
	// fingerprints give MixedPrefix and theirs, which drift skips.
	Fingerprint string       `json:"fingerprint"`
	Machine     string       `json:"machine,omitempty"`
	Cells       []RecordCell `json:"cells"`
	// HigherBetter are the directions the run's gate decided its metrics
	// in where they are not the metric name's own
	// (gate.Metric.HigherIsBetter): a Go benchmark unit declared better
	// higher, an imported customBiggerIsBetter value. Drift, the site and
	// exports judge a change by them (HigherIsBetter).
	HigherBetter map[string]bool `json:"higher_better,omitempty"`
	// RunURL is the page of the workflow run that measured it (history
	// append -run-url, or the action's run), whose artifact holds the
	// report, the flame graphs and the profiles.
	RunURL string `json:"run_url,omitempty"`
	// Where is, for each cell the run profiled, where it got slower in
	// short (report.WhereRecords): the site shows a cell's latest.
	Where []RecordWhere `json:"where,omitempty"`
}

// RecordWhere is one profiled cell of a run: its CPU per request (or per
// op) on each side and the functions whose own CPU grew most above the
// diff's noise floor, at most MaxRecordFuncs, the most first.
type RecordWhere struct {
	Cell   Cell         `json:"cell"`
	Source string       `json:"source"` // "pprof", "perf" or "cpuprofile"
	Unit   string       `json:"unit"`   // "request" or "op"
	Base   float64      `json:"base"`   // CPU ns per unit, baseline
	Cand   float64      `json:"cand"`
	Funcs  []RecordFunc `json:"funcs"`
}

// RecordFunc is a function's own CPU per unit on each side, and its part
// of the cell's whole change.
type RecordFunc struct {
	Name  string  `json:"name"` // clipped to MaxRecordFuncName characters
	Base  float64 `json:"base"`
	Cand  float64 `json:"cand"`
	Share float64 `json:"share"`
}

// CheckRunURL says whether u can be a record's RunURL: an absolute https
// URL without a user, of at most 2048 bytes (as the site's -repo-url).
func CheckRunURL(u string) error {
	p, err := url.Parse(u)
	switch {
	case len(u) > 2048:
		return fmt.Errorf("%s: longer than 2048 bytes", textsafe.Quote(u, textsafe.QuoteRunes))
	case err != nil:
		return fmt.Errorf("%s: not a URL", textsafe.Quote(u, textsafe.QuoteRunes))
	case p.Scheme != "https" || p.Host == "" || p.User != nil:
		return fmt.Errorf("%s: want an https URL such as https://github.com/OWNER/REPO/actions/runs/ID", textsafe.Quote(u, textsafe.QuoteRunes))
	}
	return nil
}

// Bounds of a record's Where.
const (
	MaxRecordFuncs    = 10
	MaxRecordFuncName = 512
)

// HigherIsBetter is the direction metric is judged in: the one the run's
// gate declared (HigherBetter), else the metric name's own.
func (r Record) HigherIsBetter(metric string) bool {
	if h, ok := r.HigherBetter[metric]; ok {
		return h
	}
	return gate.Metric(metric).HigherIsBetter()
}

// RecordCell is one metric of one target in one cell of a run: the
// summary's mean, the half-width of its interval and the repetitions.
type RecordCell struct {
	Cell      Cell    `json:"cell"`
	Target    string  `json:"target"` // "baseline" or "candidate"
	Metric    string  `json:"metric"`
	Mean      float64 `json:"mean"`
	HalfWidth float64 `json:"half_width"`
	N         int     `json:"n"`
}

// historyDropped says whether a record leaves metric m out: a load
// metric gate.Registry does not keep (Definition.Kept). Every other metric
// is kept, Go benchmark units (standard or custom) included.
func historyDropped(m gate.Metric) bool {
	d, ok := gate.Lookup(m)
	return ok && !d.Kept
}

// NewRecord makes the history record of a run from its results and its
// decided comparison: both sides' summary of every kept metric of every
// cell. A side without repetitions (N == 0) or with a value JSON cannot
// hold is left out.
func NewRecord(res *Results, c gate.Comparison) Record {
	r := Record{
		Version:         HistoryVersion,
		Date:            res.Env.Start,
		Scenario:        res.Scenario.Name,
		Profile:         res.Scenario.Profile,
		RunID:           res.Env.RunID,
		BaselineCommit:  res.Env.Baseline.Commit,
		CandidateCommit: res.Env.Candidate.Commit,
		Fingerprint:     res.Env.Fingerprint(),
		Machine:         res.Env.FingerprintText(),
		Cells:           []RecordCell{},
	}
	if len(res.Shards) > 0 {
		r.RunID, r.Fingerprint, r.Machine = shardsMachine(res)
	}
	if gh := res.GitHub; gh != nil {
		if r.BaselineCommit == "" {
			r.BaselineCommit = gh.BaseSHA
		}
		if r.CandidateCommit == "" {
			r.CandidateCommit = gh.HeadSHA
		}
		if CheckRunURL(gh.RunURL) == nil {
			r.RunURL = gh.RunURL
		}
	}
	for _, cr := range c.Cells {
		cell := Cell(cr.Key)
		for _, d := range cr.Decisions {
			if historyDropped(d.Metric) {
				continue
			}
			for _, side := range []struct {
				target string
				s      gate.Summary
			}{{"baseline", d.Baseline}, {"candidate", d.Candidate}} {
				s := side.s
				if s.N == 0 || !finite(s.Mean) || !finite(s.HalfWidth) {
					continue
				}
				r.Cells = append(r.Cells, RecordCell{
					Cell: cell, Target: side.target, Metric: string(d.Metric),
					Mean: s.Mean, HalfWidth: s.HalfWidth, N: s.N,
				})
				if h := c.Settings.HigherIsBetter(d.Metric); h != d.Metric.HigherIsBetter() {
					if r.HigherBetter == nil {
						r.HigherBetter = map[string]bool{}
					}
					r.HigherBetter[string(d.Metric)] = h
				}
			}
		}
	}
	return r
}

// MixedPrefix starts the fingerprint of a merged run whose shards ran on
// machines of different fingerprints: which machine measured a cell is
// not known then, so drift detection skips such records.
const MixedPrefix = "mixed:"

// shardsMachine is the run id, fingerprint and machine of a merged run:
// its shards' run ids joined, and their common fingerprint, or when they
// differ, MixedPrefix and the distinct fingerprints.
func shardsMachine(res *Results) (runID, fingerprint, machine string) {
	envs := map[string]Environment{}
	var ids, fps []string
	for _, s := range res.Shards {
		fp := s.Fingerprint
		if fp == "" {
			fp = s.Env.Fingerprint()
		}
		if _, ok := envs[fp]; !ok {
			envs[fp] = s.Env
			fps = append(fps, fp)
		}
		if s.RunID != "" {
			ids = append(ids, s.RunID)
		}
	}
	runID = res.Env.RunID
	if runID == "" {
		runID = strings.Join(ids, "+")
	}
	if len(fps) == 1 {
		return runID, fps[0], envs[fps[0]].FingerprintText()
	}
	sort.Strings(fps)
	var texts []string
	for _, fp := range fps {
		texts = append(texts, fp+": "+envs[fp].FingerprintText())
	}
	return runID, MixedPrefix + strings.Join(fps, "+"), "shards on different machines (" + strings.Join(texts, " | ") + ")"
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// The dates a history takes. A record's date places it on the site's
// time axis and in prune's months: one dated in year 1 or 9999 (a clock
// never set, a typo) made a site's axis span millennia and kept itself
// past every prune. A date before HistoryFloor, or after now by more than
// ClockSkew, is refused where a record enters a history (append), where
// one is read (every history command), and by the site.
var (
	// HistoryFloor is the earliest date a record may have: before any
	// benchmark benchgate could have run (and before any CI service).
	HistoryFloor = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// ClockSkew is how far after now a record's date may be: a runner's clock
// a little ahead, or a time zone given wrong, not a record of the future.
const ClockSkew = 24 * time.Hour

// CheckDate says what is wrong with a record's date: zero, before
// HistoryFloor, or after now by more than ClockSkew (a zero now: no
// upper bound). nil for a date a history takes.
func CheckDate(date, now time.Time) error {
	switch {
	case date.IsZero():
		return errors.New("no date")
	case date.Before(HistoryFloor):
		return fmt.Errorf("%s is before %s, the earliest date a history takes (a clock never set?)",
			date.UTC().Format(time.RFC3339), HistoryFloor.Format(time.DateOnly))
	case !now.IsZero() && date.After(now.Add(ClockSkew)):
		return fmt.Errorf("%s is after now (%s) by more than a day: a clock set wrong, or a typo?",
			date.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}

// AppendHistory appends r to the history file at path as one JSON line,
// creating the file and its directories when missing. The line is written
// by a single write to a file opened for appending, then synced, so a
// reader sees whole records. A file whose last line was cut short (a
// crash in an earlier write) first gets the newline it lacks: the new
// record stands on its own line, and the broken one is reported by
// ReadHistory with its line number.
func AppendHistory(path string, r Record) error {
	if r.Date.IsZero() {
		return errors.New("history record without a date: records are ordered by the run's start")
	}
	if err := CheckDate(r.Date, time.Now()); err != nil {
		return fmt.Errorf("history record: date: %w", err)
	}
	if r.Version == 0 {
		r.Version = HistoryVersion
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return appendRecords(path, []Record{r})
}

// ReadHistory reads a history file: one record per line, blank lines
// skipped. A line that is not a record, or a record of a version this
// code does not know, is an error naming path:line. The records are
// returned sorted by date, records of the same date in file order. The
// file must be a regular file of at most MaxHistoryBytes, with at most
// MaxHistoryRecords records of MaxHistoryCells cells in all.
func ReadHistory(path string) ([]Record, error) {
	f, err := fsx.OpenLimited(path, MaxHistoryBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := ParseHistory(f, path)
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// ParseHistory is ReadHistory of an open stream; name is used in errors.
// It reads no more than MaxHistoryBytes of it.
func ParseHistory(r io.Reader, name string) ([]Record, error) {
	return parseHistory(r, name, time.Now())
}

// parseHistory is ParseHistory with now, the clock dates are checked
// against (CheckDate).
func parseHistory(r io.Reader, name string, now time.Time) ([]Record, error) {
	br := bufio.NewReader(fsx.LimitReader(r, name, MaxHistoryBytes))
	var recs []Record
	var counts []int
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			var tl *fsx.TooLargeError
			if errors.As(err, &tl) {
				return nil, err
			}
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if len(recs) == MaxHistoryRecords {
				return nil, fmt.Errorf("%s:%d: more than %d records, more than a history file can hold", name, n, MaxHistoryRecords)
			}
			var lerr error
			if counts, lerr = checkLimits(t, reflect.TypeFor[Record](), fmt.Sprintf("%s:%d", name, n), recordLimits, counts); lerr != nil {
				return nil, lerr
			}
			var rec Record
			dec := json.NewDecoder(bytes.NewReader(t))
			if derr := dec.Decode(&rec); derr != nil {
				return nil, fmt.Errorf("%s:%d: not a history record: %v", name, n, derr)
			}
			if dec.More() {
				return nil, fmt.Errorf("%s:%d: not a history record: more than one JSON value on the line", name, n)
			}
			switch {
			case rec.Version < 1 || rec.Version > HistoryVersion:
				return nil, fmt.Errorf("%s:%d: history record version %d, this benchgate reads versions 1 to %d", name, n, rec.Version, HistoryVersion)
			case rec.Date.IsZero():
				return nil, fmt.Errorf("%s:%d: history record without a date", name, n)
			}
			if derr := CheckDate(rec.Date, now); derr != nil {
				return nil, fmt.Errorf("%s:%d: field \"date\": %w", name, n, derr)
			}
			recs = append(recs, rec)
		}
		if err != nil { // io.EOF
			break
		}
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Date.Before(recs[j].Date) })
	return recs, nil
}
