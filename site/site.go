package site

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/internal/textsafe"
)

// Options are the settings of a site. DefaultOptions holds the defaults;
// a zero ChangePoints field takes benchdata's default.
type Options struct {
	// RepoURL, when set, is the repository's https address
	// (https://github.com/OWNER/REPO): commits link to RepoURL/commit/SHA
	// and commit ranges to RepoURL/compare/FROM...TO. Check refuses any
	// other kind of URL.
	RepoURL string
	// Months keeps only the records of the last Months months before the
	// newest record (0: every record), so that a site built every night
	// from a history that only grows stays the same size.
	Months int
	// Now is the clock records' dates are checked against: a record dated
	// after Now by more than benchdata.ClockSkew, or before
	// benchdata.HistoryFloor, is refused (benchdata.CheckDate). Zero
	// checks only the floor.
	Now time.Time
	// ChangePoints are the knobs of change-point detection, as history
	// drift takes them.
	ChangePoints benchdata.ChangePointOptions
}

// DefaultOptions: a year of records, no commit links, drift's defaults.
var DefaultOptions = Options{Months: 12}

// Check refuses options that cannot make a site, each named as the CLI's
// flag is: a RepoURL that is not a plain https URL, a negative Months.
func (o Options) Check() error {
	var errs []error
	if o.Months < 0 {
		errs = append(errs, errors.New("-months: want 0 (all records) or more months"))
	}
	if _, err := repoBase(o.RepoURL); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// MaxCells bounds the distinct cells (scenario and cell) of the records
// a site shows, each a page: as many as one run may hold
// (benchdata.MaxCells). A page is 8 KB or more and a history may hold
// 2,000,000 values (benchdata.MaxHistoryCells), so without it one record
// of 20,000 cells made 20,000 pages, 169 MB on disk; at the bound a site
// of one record is 10,000 pages, about 85 MB.
const MaxCells = benchdata.MaxCells

// CellsError refuses a site of more than MaxCells cells, before anything
// is rendered or written.
type CellsError struct {
	// Cells are the distinct cells of the Records shown; Months is
	// Options.Months.
	Cells, Records, Months int
}

func (e *CellsError) Error() string {
	shown := fmt.Sprintf("the history's %d record(s)", e.Records)
	if e.Months > 0 {
		shown = fmt.Sprintf("the %d record(s) of the last %d month(s)", e.Records, e.Months)
	}
	return fmt.Sprintf("site: %s hold %d distinct cells (scenario and cell), each a page; a site holds at most %d: "+
		"keep fewer months (-months), or give a history of fewer scenarios or cells", shown, e.Cells, MaxCells)
}

// countCells counts the distinct cells of records.
func countCells(records []benchdata.Record) int {
	seen := map[cellID]bool{}
	for _, r := range records {
		for _, c := range r.Cells {
			seen[cellID{r.Scenario, c.Cell}] = true
		}
	}
	return len(seen)
}

// repoBase is the validated RepoURL without a trailing "/", "" for none:
// https only, a host, no user, query or fragment, and none of the
// characters that could end an attribute or start markup.
func repoBase(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	bad := func(why string) error {
		return fmt.Errorf("-repo-url %q: %s; want the repository's https address, such as https://github.com/OWNER/REPO", raw, why)
	}
	if strings.ContainsFunc(raw, func(r rune) bool {
		return r <= ' ' || r == 0x7f || strings.ContainsRune("\"'<>\\`{}|^", r) || r > 0x7e
	}) {
		return "", bad("it holds a space, a quote, a bracket or a character outside printable ASCII")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", bad("not a URL")
	case u.Scheme != "https":
		return "", bad("not https")
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return "", bad("no host")
	case u.User != nil:
		return "", bad("it holds a user name")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		return "", bad("it has a query or a fragment")
	case strings.Contains(u.Path, "/../") || strings.HasSuffix(u.Path, "/..") || strings.Contains(u.Path, "/./"):
		return "", bad("its path has dot segments")
	}
	return strings.TrimRight(raw, "/"), nil
}

// File is one file of a site: its path relative to the site's root, with
// "/" between folders, and its content.
type File struct {
	Path string
	Data []byte
}

// Site is a rendered site: its files and what it was made of.
type Site struct {
	// Files are Render's, in the order made. Build's Site has none: it
	// writes each file as it is made.
	Files []File
	// Records are the records the site shows; Dropped those older than
	// Options.Months left out. From and To are the dates of the oldest
	// and newest shown.
	Records, Dropped int
	From, To         time.Time
	// Cells counts the cells (scenario and cell), each a page; Worse
	// those whose latest change is for the worse.
	Cells, Worse int

	size int64 // of all files
}

// Bytes is the size of all the site's files together.
func (s *Site) Bytes() int64 { return s.size }

// cellID names a cell of the site: one page.
type cellID struct {
	scenario string
	cell     benchdata.Cell
}

// sectionID names a section of a cell's page: one machine and profile.
type sectionID struct {
	profile, fingerprint string
}

// run is one record as a section sees it. rec, the record's index in
// model.records, names it: two records may share a date and have no run
// id, and each is a run of its own.
type run struct {
	rec            int
	date           time.Time
	runID          string
	baseline, cand string
}

// series is a series of the history with, for each point, the index in
// model.records of the record it came from.
type series struct {
	*benchdata.Series
	recs []int
}

// section is the series of one cell on one machine fingerprint and
// profile.
type section struct {
	id      sectionID
	machine string
	group   benchdata.FingerprintGroup
	metrics []*metric // in benchdata.SeriesMetrics order
	runs    []run     // every run of any series of the section, in date order
}

// metric is one metric of a section: the series of both targets and the
// change points found in them.
type metric struct {
	name                string
	baseline, candidate *series
	findings            []benchdata.DriftFinding // both targets, by date
}

// higherIsBetter is the metric's direction, as its series have it.
func (mt *metric) higherIsBetter() bool {
	if mt.candidate != nil {
		return mt.candidate.HigherIsBetter
	}
	return mt.baseline != nil && mt.baseline.HigherIsBetter
}

// cell is one page of the site.
type cell struct {
	id       cellID
	page     string
	sections []*section // the current (newest record) first
}

// model is what the site shows, built once from the records.
type model struct {
	opt      Options
	repo     string
	records  []benchdata.Record // in date order, as HistorySeries orders points
	dropped  int
	drift    benchdata.DriftResult
	cells    []*cell
	scenario map[string][]string // a scenario's metrics, in report order
	// higher is a scenario's metrics' directions, as its newest series
	// have them (benchdata.Series.HigherIsBetter).
	higher map[string]map[string]bool
}

func newModel(records []benchdata.Record, opt Options) (*model, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	repo, _ := repoBase(opt.RepoURL)
	// A date far from the others would stretch every chart's axis and
	// outlast -months: refused, as reading a history refuses it.
	for i, r := range records {
		if err := benchdata.CheckDate(r.Date, opt.Now); err != nil {
			return nil, fmt.Errorf("history record %d (run %s): field \"date\": %w", i+1, textsafe.Quote(r.RunID, textsafe.QuoteRunes), err)
		}
	}
	kept, older := benchdata.SplitHistory(records, opt.Months, opt.Now)
	if n := countCells(kept); n > MaxCells {
		return nil, &CellsError{Cells: n, Records: len(kept), Months: opt.Months}
	}
	// HistorySeries puts a series' points in date order, records of one
	// date in the order given: the records sorted the same way give each
	// point its record, and each record is a run of its own.
	kept = slices.Clone(kept)
	slices.SortStableFunc(kept, func(a, b benchdata.Record) int { return a.Date.Compare(b.Date) })
	dropped := len(older)
	m := &model{opt: opt, repo: repo, records: kept, dropped: dropped, scenario: map[string][]string{}}
	m.drift = benchdata.AnalyzeDrift(kept, opt.ChangePoints)
	groups := map[string]benchdata.FingerprintGroup{}
	for _, g := range m.drift.Fingerprints {
		groups[g.Fingerprint] = g
	}
	type seriesID struct {
		fp, scenario, profile string
		cell                  benchdata.Cell
		target, metric        string
	}
	findings := map[seriesID][]benchdata.DriftFinding{}
	for _, f := range m.drift.Findings {
		k := seriesID{f.Fingerprint, f.Scenario, f.Profile, f.Cell, f.Target, f.Metric}
		findings[k] = append(findings[k], f)
	}

	all := benchdata.HistorySeries(kept)
	pointRecs := map[benchdata.SeriesKey][]int{}
	for i, r := range kept {
		for _, c := range r.Cells {
			k := benchdata.SeriesKey{Fingerprint: r.Fingerprint, Scenario: r.Scenario, Profile: r.Profile, Cell: c.Cell, Target: c.Target, Metric: c.Metric}
			pointRecs[k] = append(pointRecs[k], i)
		}
	}
	byScenario := map[string][]benchdata.Series{}
	cells := map[cellID]*cell{}
	sections := map[cellID]map[sectionID]*section{}
	for i := range all {
		s := &series{Series: &all[i], recs: pointRecs[all[i].Key]}
		if len(s.recs) != len(s.Points) {
			return nil, fmt.Errorf("site: series %v: %d points of %d records", s.Key, len(s.Points), len(s.recs)) // HistorySeries keeps every cell
		}
		k := s.Key
		byScenario[k.Scenario] = append(byScenario[k.Scenario], *s.Series)
		cid := cellID{k.Scenario, k.Cell}
		c := cells[cid]
		if c == nil {
			c = &cell{id: cid, page: CellPage(k.Scenario, k.Cell)}
			cells[cid] = c
			sections[cid] = map[sectionID]*section{}
			m.cells = append(m.cells, c)
		}
		sid := sectionID{k.Profile, k.Fingerprint}
		sec := sections[cid][sid]
		if sec == nil {
			g := groups[k.Fingerprint]
			sec = &section{id: sid, group: g, machine: g.Machine}
			sections[cid][sid] = sec
			c.sections = append(c.sections, sec)
		}
		var mt *metric
		for _, x := range sec.metrics {
			if x.name == k.Metric {
				mt = x
			}
		}
		if mt == nil {
			mt = &metric{name: k.Metric}
			sec.metrics = append(sec.metrics, mt)
		}
		switch k.Target {
		case "baseline":
			mt.baseline = s
		default:
			mt.candidate = s
		}
		mt.findings = append(mt.findings, findings[seriesID{k.Fingerprint, k.Scenario, k.Profile, k.Cell, k.Target, k.Metric}]...)
	}
	m.higher = map[string]map[string]bool{}
	for name, ss := range byScenario {
		m.scenario[name] = benchdata.SeriesMetrics(ss)
		h := map[string]bool{}
		var newest = map[string]int64{}
		for _, s := range ss {
			if n := len(s.Points); n > 0 {
				if d := s.Points[n-1].Date.UnixNano(); d >= newest[s.Key.Metric] {
					newest[s.Key.Metric], h[s.Key.Metric] = d, s.HigherIsBetter
				}
			}
		}
		m.higher[name] = h
	}
	for _, c := range m.cells {
		for _, sec := range c.sections {
			order := m.scenario[c.id.scenario]
			slices.SortStableFunc(sec.metrics, func(a, b *metric) int {
				return cmp.Compare(slices.Index(order, a.name), slices.Index(order, b.name))
			})
			for _, mt := range sec.metrics {
				slices.SortStableFunc(mt.findings, func(a, b benchdata.DriftFinding) int { return a.ToDate.Compare(b.ToDate) })
			}
			sec.runs = sectionRuns(sec)
		}
		slices.SortStableFunc(c.sections, func(a, b *section) int {
			return cmp.Or(b.last().Compare(a.last()), cmp.Compare(len(b.runs), len(a.runs)),
				strings.Compare(a.id.fingerprint, b.id.fingerprint), strings.Compare(a.id.profile, b.id.profile))
		})
	}
	return m, nil
}

// sectionRuns are the runs of any series of the section, once each, in
// date order (the records').
func sectionRuns(sec *section) []run {
	seen := map[int]bool{}
	var runs []run
	for _, mt := range sec.metrics {
		for _, s := range []*series{mt.candidate, mt.baseline} {
			if s == nil {
				continue
			}
			for j, p := range s.Points {
				if rec := s.recs[j]; !seen[rec] {
					seen[rec] = true
					runs = append(runs, run{rec: rec, date: p.Date, runID: p.RunID, baseline: p.BaselineCommit, cand: p.CandidateCommit})
				}
			}
		}
	}
	slices.SortFunc(runs, func(a, b run) int { return cmp.Compare(a.rec, b.rec) })
	return runs
}

func (s *section) last() time.Time {
	if len(s.runs) == 0 {
		return time.Time{}
	}
	return s.runs[len(s.runs)-1].date
}

// latest is the newest change point of a series of the section's metric
// (of the candidate, or the baseline), and whether there is one.
func (mt *metric) latest(target string) (benchdata.DriftFinding, bool) {
	for i := len(mt.findings) - 1; i >= 0; i-- {
		if mt.findings[i].Target == target {
			return mt.findings[i], true
		}
	}
	return benchdata.DriftFinding{}, false
}

// baselineChange is a night whose record names another baseline commit
// than the night before: a new reference, which moves the baseline's own
// series and every comparison with it.
type baselineChange struct {
	from, to run
}

func (s *section) baselineChanges() []baselineChange {
	var out []baselineChange
	for i := 1; i < len(s.runs); i++ {
		if s.runs[i].baseline != s.runs[i-1].baseline {
			out = append(out, baselineChange{from: s.runs[i-1], to: s.runs[i]})
		}
	}
	return out
}

// Summary is the line, without its newline, that tells a terminal the
// site was written to dir.
func (s *Site) Summary(dir string) string {
	span := "no records"
	if s.Records > 0 {
		span = fmt.Sprintf("%d record(s) from %s to %s", s.Records, day(s.From), day(s.To))
	}
	if s.Dropped > 0 {
		span += fmt.Sprintf(", %d older left out", s.Dropped)
	}
	return fmt.Sprintf("site: %d cell page(s), %d with a latest change for the worse, of %s: %s, %d KB",
		s.Cells, s.Worse, span, textsafe.Escape(filepath.Join(dir, "index.html"), 0), (s.Bytes()+1023)/1024)
}
