package site

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/charts"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/numtext"
	"github.com/benchgate/benchgate/internal/textsafe"
)

type cellView struct {
	Scenario, Cell string
	Sections       []sectionView
}

type sectionView struct {
	ID                   string
	Fingerprint, Profile string
	Machine              string
	Current              bool
	Runs                 int
	First, Last          string
	Note                 string
	Changes              []changeView
	BaselineChanges      []baselineView
	Metrics              []metricView
	RunRowsHTML          template.HTML
	Where                *whereView
}

// whereView is where the cell got slower in its section's newest run
// that profiled it: the functions whose own CPU per request grew most.
type whereView struct {
	Date, RunID, RunURL string
	Source, Unit        string
	Base, Cand, Change  string
	Funcs               []whereFunc
}

type whereFunc struct {
	Name, Base, Cand, Change, Share string
}

type runRow struct {
	Date       string
	Cand, Base link
	RunID      string
}

type changeView struct {
	Metric, Target   string
	Kind             string // "worse", "better"
	Change           string
	Before, After    string
	PValue           string
	From, To         link
	Compare          string
	FromDate, ToDate string
	Note             string
}

type baselineView struct {
	From, To         link
	FromDate, ToDate string
}

type metricView struct {
	ID, Name, Direction string
	SVG                 template.HTML
	Nights              int
	RowsHTML            template.HTML
	Changes             int
}

type tableRow struct {
	Date               string
	Cand, Base         link
	CandMean, BaseMean string
	CandN, BaseN       string
	Mark               string // a change point or baseline change at this run
	MarkKind           string
}

func (m *model) cellView(c *cell) cellView {
	v := cellView{Scenario: scenarioName(c.id.scenario), Cell: show(c.id.cell.String())}
	for i, sec := range c.sections {
		v.Sections = append(v.Sections, m.sectionView(c, sec, i))
	}
	return v
}

func (m *model) sectionView(c *cell, sec *section, i int) sectionView {
	sv := sectionView{
		ID: "m" + strconv.Itoa(i+1), Fingerprint: fpShort(sec.id.fingerprint), Profile: show(sec.id.profile),
		Machine: show(sec.machine), Current: i == 0, Runs: len(sec.runs), Note: m.sectionNote(sec),
	}
	if len(sec.runs) > 0 {
		sv.First, sv.Last = day(sec.runs[0].date), day(sec.last())
	}
	withTime := sameDay(sec.runs)
	var rr []runRow
	for _, r := range sec.runs {
		rr = append(rr, runRow{Date: rowDate(r.date, withTime), Cand: m.commit(r.cand), Base: m.commit(r.baseline), RunID: show(r.runID)})
	}
	sv.RunRowsHTML = runRowsHTML(rr)
	sv.Where = m.whereView(c, sec, withTime)
	baseChanges := sec.baselineChanges()
	for _, bc := range baseChanges {
		sv.BaselineChanges = append(sv.BaselineChanges, baselineView{
			From: m.commit(bc.from.baseline), To: m.commit(bc.to.baseline), FromDate: day(bc.from.date), ToDate: day(bc.to.date)})
	}
	for j, mt := range sec.metrics {
		for k := len(mt.findings) - 1; k >= 0; k-- {
			sv.Changes = append(sv.Changes, m.changeView(mt, mt.findings[k]))
		}
		sv.Metrics = append(sv.Metrics, m.metricView(c, sec, mt, sv.ID+"-"+strconv.Itoa(j+1), baseChanges, withTime))
	}
	// Newest first, across metrics.
	sortChanges(sv.Changes)
	return sv
}

// whereView is the section's newest run that profiled the cell, nil
// when none did.
func (m *model) whereView(c *cell, sec *section, withTime bool) *whereView {
	for i := len(sec.runs) - 1; i >= 0; i-- {
		r := sec.runs[i]
		rec := m.records[r.rec]
		for _, w := range rec.Where {
			if w.Cell != c.id.cell {
				continue
			}
			v := &whereView{Date: rowDate(r.date, withTime), RunID: show(r.runID), Source: show(w.Source), Unit: show(w.Unit),
				Base: numtext.Value(w.Base, "ns"), Cand: numtext.Value(w.Cand, "ns"), Change: numtext.Change(w.Base, w.Cand)}
			if benchdata.CheckRunURL(rec.RunURL) == nil {
				v.RunURL = rec.RunURL
			}
			for _, f := range w.Funcs[:min(len(w.Funcs), benchdata.MaxRecordFuncs)] {
				v.Funcs = append(v.Funcs, whereFunc{Name: show(textsafe.Clip(f.Name, benchdata.MaxRecordFuncName)),
					Base: numtext.Value(f.Base, "ns"), Cand: numtext.Value(f.Cand, "ns"),
					Change: numtext.Change(f.Base, f.Cand), Share: numtext.Share(f.Share)})
			}
			return v
		}
	}
	return nil
}

func sortChanges(cs []changeView) {
	// ToDate is ISO: string order is date order. Stable keeps metric order.
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].ToDate > cs[j-1].ToDate; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

func (m *model) changeView(mt *metric, f benchdata.DriftFinding) changeView {
	sc := numtext.ScaleOf(gate.Metric(mt.name).Unit(), f.Change.Before, f.Change.After)
	cv := changeView{
		Metric: show(mt.name), Target: f.Target, Kind: kind(f), Change: percent(f.Change.Change),
		Before: sc.Format(f.Change.Before), After: sc.Format(f.Change.After), PValue: pValue(f.Change.PValue),
		From: m.commit(f.FromCommit), To: m.commit(f.ToCommit), Compare: m.compare(f.FromCommit, f.ToCommit),
		FromDate: day(f.FromDate), ToDate: day(f.ToDate),
	}
	switch {
	case f.Target == "baseline" && f.FromBaseline == f.ToBaseline:
		cv.Note = "baseline unchanged: the machine's or the environment's step, not the code's"
	case f.Target == "candidate":
		if b, ok := mt.latestAt("baseline", f.ToDate); ok && b.FromBaseline == b.ToBaseline {
			cv.Note = "the baseline stepped the same night: suspect the machine"
		}
	}
	return cv
}

// latestAt is the change point of the metric's target series whose first
// run after it is at date.
func (mt *metric) latestAt(target string, date time.Time) (benchdata.DriftFinding, bool) {
	for _, f := range mt.findings {
		if f.Target == target && f.ToDate.Equal(date) {
			return f, true
		}
	}
	return benchdata.DriftFinding{}, false
}

func (m *model) metricView(c *cell, sec *section, mt *metric, id string, baseChanges []baselineChange, withTime bool) metricView {
	mv := metricView{ID: id + "-" + idPart(mt.name), Name: show(mt.name), Direction: direction(mt.higherIsBetter()), Changes: len(mt.findings)}

	// The table: one row per run of the section.
	index := func(s *series) map[int]benchdata.SeriesPoint {
		out := map[int]benchdata.SeriesPoint{}
		if s != nil {
			for j, p := range s.Points {
				out[s.recs[j]] = p
			}
		}
		return out
	}
	cand, base := index(mt.candidate), index(mt.baseline)
	// One scale for the table: both targets' means, each to 4
	// significant digits at least.
	unit := gate.Metric(mt.name).Unit()
	var means []float64
	for _, s := range []*series{mt.candidate, mt.baseline} {
		if s != nil {
			means = append(means, s.Means()...)
		}
	}
	sc := numtext.ScaleOf(unit, means...)
	// A change point is marked on the first run after it, a baseline
	// change on the run that has the new baseline.
	marks := map[int][]string{}
	markKinds := map[int]string{}
	for _, f := range mt.findings {
		s := mt.candidate
		if f.Target == "baseline" {
			s = mt.baseline
		}
		if s == nil || f.Change.Index >= len(s.recs) {
			continue // not a change point of this metric's series: drift finds none such
		}
		k := s.recs[f.Change.Index]
		marks[k] = append(marks[k], fmt.Sprintf("%s change %s (%s)", f.Target, percent(f.Change.Change), kind(f)))
		if kind(f) == "worse" || markKinds[k] == "" {
			markKinds[k] = kind(f)
		}
	}
	for _, bc := range baseChanges {
		k := bc.to.rec
		marks[k] = append(marks[k], "baseline now "+show(shortCommit(bc.to.baseline)))
		if markKinds[k] == "" {
			markKinds[k] = "neutral"
		}
	}
	var rows []tableRow
	for _, r := range sec.runs {
		cp, cok := cand[r.rec]
		bp, bok := base[r.rec]
		if !cok && !bok {
			continue
		}
		row := tableRow{Date: rowDate(r.date, withTime), CandMean: "—", BaseMean: "—"}
		if cok {
			row.CandMean, row.CandN = sc.Summary(cp.Mean, cp.HalfWidth, cp.N), strconv.Itoa(cp.N)
		}
		if bok {
			row.BaseMean, row.BaseN = sc.Summary(bp.Mean, bp.HalfWidth, bp.N), strconv.Itoa(bp.N)
		}
		row.Mark, row.MarkKind = show(strings.Join(marks[r.rec], "; ")), markKinds[r.rec]
		rows = append(rows, row)
	}
	mv.Nights, mv.RowsHTML = len(rows), rowsHTML(rows)

	// The chart: both targets' means and intervals by date, the change
	// points and baseline changes marked between their two runs.
	tl := charts.Timeline{
		Title:  mt.name + " · " + c.id.cell.String(),
		YLabel: mt.name + " (mean and interval)",
		YUnit:  unit,
	}
	for _, s := range []struct {
		name   string
		series *series
	}{{"baseline", mt.baseline}, {"candidate", mt.candidate}} {
		cs := charts.Series{Name: s.name}
		if s.series != nil {
			for _, p := range s.series.Points {
				commit := p.CandidateCommit
				if s.name == "baseline" {
					commit = p.BaselineCommit
				}
				cs.Points = append(cs.Points, charts.Point{X: days(p.Date), Y: p.Mean, Lo: p.Mean - p.HalfWidth, Hi: p.Mean + p.HalfWidth,
					Label: shortCommit(commit)})
			}
		}
		tl.Series = append(tl.Series, cs)
	}
	if len(sec.runs) > 0 {
		tl.Ticks = dateTicks(sec.runs[0].date, sec.last())
	}
	for _, f := range mt.findings {
		label := percent(f.Change.Change) + " " + commitRange(f.FromCommit, f.ToCommit)
		if f.Target == "baseline" {
			label = "baseline " + percent(f.Change.Change)
		}
		step := numtext.ScaleOf(unit, f.Change.Before, f.Change.After)
		tl.Marks = append(tl.Marks, charts.Mark{
			X: (days(f.FromDate) + days(f.ToDate)) / 2, Kind: markKind(f), Label: label,
			Text: fmt.Sprintf("%s %s: %s, %s → %s, p %s, in %s (%s → %s), for the %s", f.Target, mt.name, percent(f.Change.Change),
				step.Format(f.Change.Before), step.Format(f.Change.After), pValue(f.Change.PValue), commitRange(f.FromCommit, f.ToCommit), day(f.FromDate), day(f.ToDate), kind(f)),
			Data: [][2]string{{"target", f.Target}, {"from", f.FromCommit}, {"to", f.ToCommit}, {"change", percent(f.Change.Change)}, {"kind", kind(f)}},
		})
	}
	for _, bc := range baseChanges {
		tl.Marks = append(tl.Marks, charts.Mark{
			X: (days(bc.from.date) + days(bc.to.date)) / 2, Kind: charts.MarkNeutral, Label: "baseline → " + shortCommit(bc.to.baseline),
			Text: fmt.Sprintf("baseline commit %s → %s (%s → %s)", shortCommit(bc.from.baseline), shortCommit(bc.to.baseline), day(bc.from.date), day(bc.to.date)),
			Data: [][2]string{{"from", bc.from.baseline}, {"to", bc.to.baseline}, {"kind", "baseline"}},
		})
	}
	mv.SVG = svgHTML(func(b *bytes.Buffer) error { return charts.TimelineSVG(b, tl) })
	return mv
}

// The tables' rows are most of a page, and html/template's reflection
// most of the time to build one: they are written here, every field
// escaped by html.EscapeString (text, and attribute values in double
// quotes, alike).

func rowsHTML(rows []tableRow) template.HTML {
	var b strings.Builder
	e := html.EscapeString
	for _, r := range rows {
		b.WriteString("<tr")
		if r.MarkKind != "" {
			b.WriteString(` class="mark ` + e(r.MarkKind) + `"`)
		}
		b.WriteString("><td>" + e(r.Date) + "<td>" + e(r.CandMean) + "<td>" + e(r.CandN) + "<td>" + e(r.BaseMean) + "<td>" + e(r.BaseN) + "<td>" + e(r.Mark) + "\n")
	}
	return template.HTML(b.String()) //nolint:gosec // every field escaped
}

func runRowsHTML(rows []runRow) template.HTML {
	var b strings.Builder
	e := html.EscapeString
	a := func(l link) string {
		if l.Href != "" {
			return `<a href="` + e(l.Href) + `" title="` + e(l.Title) + `">` + e(l.Text) + "</a>"
		}
		return `<span title="` + e(l.Title) + `">` + e(l.Text) + "</span>"
	}
	for _, r := range rows {
		b.WriteString("<tr><td>" + e(r.Date) + "<td>" + a(r.Cand) + "<td>" + a(r.Base) + "<td>" + e(r.RunID) + "\n")
	}
	return template.HTML(b.String()) //nolint:gosec // every field escaped
}

// days is a date on the charts' x axis: days since 1970.
func days(t time.Time) float64 { return float64(t.Unix()) / 86400 }

// maxDateTicks bounds the x ticks of a chart whatever its dates span: a
// tick is a line in the page's SVG, and ticks every 3 months from year 1
// to 2026 made a site of 200 cells 730 MB.
const maxDateTicks = 14

// tickSteps are the spacings dateTicks chooses from, finest first: days,
// or months (a year is 12).
var tickSteps = []struct{ days, months int }{
	{7, 0}, {14, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 6},
	{0, 12}, {0, 24}, {0, 60}, {0, 120}, {0, 240}, {0, 600}, {0, 1200},
	{0, 2400}, {0, 6000}, {0, 12000}, {0, 24000}, {0, 60000},
}

// dateTicks are the x ticks of a chart from first to last, at most
// maxDateTicks of them: the finest spacing of tickSteps that keeps to the
// bound, Mondays for weeks, the first of a month for months and years
// (a year's first month for spacings of a year or more). A span longer
// than the coarsest spacing allows has no ticks.
func dateTicks(first, last time.Time) []charts.Tick {
	first, last = first.UTC(), last.UTC()
	span := days(last) - days(first) // a Duration would overflow past 292 years
	for _, st := range tickSteps {
		if st.days > 0 {
			if span/float64(st.days) > maxDateTicks-1 {
				continue
			}
			t := time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, time.UTC)
			for t.Weekday() != time.Monday {
				t = t.AddDate(0, 0, 1)
			}
			var out []charts.Tick
			for ; !t.After(last) && len(out) < maxDateTicks; t = t.AddDate(0, 0, st.days) {
				out = append(out, charts.Tick{X: days(t), Label: t.Format("Jan 2")})
			}
			return out
		}
		if span/(30.44*float64(st.months)) > maxDateTicks-1 {
			continue
		}
		t := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1, 0)
		if st.months >= 12 {
			t = time.Date(first.Year()+1, 1, 1, 0, 0, 0, 0, time.UTC)
			t = t.AddDate((st.months/12-t.Year()%(st.months/12))%(st.months/12), 0, 0) // a round year
		}
		var out []charts.Tick
		for ; !t.After(last) && len(out) < maxDateTicks; t = t.AddDate(0, st.months, 0) {
			label := t.Format("Jan")
			switch {
			case st.months >= 12:
				label = strconv.Itoa(t.Year())
			case int(t.Month()) <= st.months || len(out) == 0:
				label = t.Format("Jan 2006")
			}
			out = append(out, charts.Tick{X: days(t), Label: label})
		}
		return out
	}
	return nil
}

func rowDate(t time.Time, withTime bool) string {
	if withTime {
		return t.UTC().Format("2006-01-02 15:04")
	}
	return day(t)
}

// sameDay says whether two runs share a day, so that tables give times.
func sameDay(runs []run) bool {
	for i := 1; i < len(runs); i++ {
		if day(runs[i].date) == day(runs[i-1].date) {
			return true
		}
	}
	return false
}

// idPart reduces a metric's name to an HTML id's part.
func idPart(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
