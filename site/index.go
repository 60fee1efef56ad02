package site

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/charts"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/numtext"
)

type indexView struct {
	Empty                bool
	From, To             string
	Records, Dropped     int
	Months               int
	Cells, Worse, Better int
	Machines             int
	Scenarios            []scenarioView
}

type scenarioView struct {
	Name    string
	Metrics []metricHead
	Rows    []rowView
	Worse   int
}

type metricHead struct {
	Name, Direction string
}

type rowView struct {
	Cell, Href string
	// Status is "worse", "better" or "steady"; StatusText says it in words.
	Status, StatusText string
	Machine, Profile   string
	Others             int // sections of other machines or profiles
	Runs               int
	Metrics            []sparkView

	order   int
	worseAt time.Time
}

// The index's sparklines: 104 pixels wide, at most 48 points (a year of
// nights is drawn as weekly means), so that the index of a 200-cell grid
// stays under a megabyte.
const (
	sparkWidth  = 104
	sparkPoints = 48
)

type sparkView struct {
	Has    bool
	SVG    template.HTML
	Last   string
	Kind   string // "worse", "better", "" (no change point)
	Change string // "-14.1%"
	Range  string // "c36..c37"
	Date   string // of the first run after the change
	Note   string // no change point, too few runs, baseline stepped too
}

func (m *model) index(s *Site) indexView {
	v := indexView{Empty: len(m.cells) == 0, Records: s.Records, Dropped: s.Dropped, Months: m.opt.Months, Cells: len(m.cells)}
	if !s.From.IsZero() {
		v.From, v.To = day(s.From), day(s.To)
	}
	machines := map[string]bool{}
	for _, r := range m.records {
		machines[r.Fingerprint] = true
	}
	v.Machines = len(machines)
	byScenario := map[string]*scenarioView{}
	var names []string
	for i, c := range m.cells {
		sv := byScenario[c.id.scenario]
		if sv == nil {
			sv = &scenarioView{Name: scenarioName(c.id.scenario)}
			for _, mt := range m.scenario[c.id.scenario] {
				sv.Metrics = append(sv.Metrics, metricHead{Name: show(mt), Direction: direction(m.higher[c.id.scenario][mt])})
			}
			byScenario[c.id.scenario] = sv
			names = append(names, c.id.scenario)
		}
		row := m.row(c, m.scenario[c.id.scenario])
		row.order = i
		switch row.Status {
		case "worse":
			sv.Worse++
			v.Worse++
		case "better":
			v.Better++
		}
		sv.Rows = append(sv.Rows, row)
	}
	slices.Sort(names)
	rank := map[string]int{"worse": 0, "better": 1}
	for _, n := range names {
		sv := byScenario[n]
		slices.SortStableFunc(sv.Rows, func(a, b rowView) int {
			ra, oka := rank[a.Status]
			rb, okb := rank[b.Status]
			if !oka {
				ra = 2
			}
			if !okb {
				rb = 2
			}
			return cmp.Or(cmp.Compare(ra, rb), b.worseAt.Compare(a.worseAt), cmp.Compare(a.order, b.order))
		})
		v.Scenarios = append(v.Scenarios, *sv)
	}
	return v
}

// row is a cell's line of the index: its current section's candidate
// series (indexSection), a sparkline and the latest change point per
// metric.
func (m *model) row(c *cell, metrics []string) rowView {
	sec := m.indexSection(c)
	r := rowView{Cell: show(c.id.cell.String()), Href: c.page, Machine: fpShort(sec.id.fingerprint), Profile: show(sec.id.profile),
		Others: len(c.sections) - 1, Runs: len(sec.runs), Status: "steady"}
	var worse, better []string
	for _, name := range metrics {
		var mt *metric
		for _, x := range sec.metrics {
			if x.name == name {
				mt = x
			}
		}
		if mt == nil || mt.candidate == nil {
			r.Metrics = append(r.Metrics, sparkView{})
			continue
		}
		sp := sparkView{Has: true}
		pts := mt.candidate.Points
		sp.Last = numtext.Value(pts[len(pts)-1].Mean, gate.Metric(name).Unit())
		spark := charts.Sparkline{Values: mt.candidate.Means(), Mark: -1, Width: sparkWidth, MaxPoints: sparkPoints}
		// The numbers are in the cell's text beside the line.
		label := fmt.Sprintf("%s trend, %d run(s)", name, len(pts))
		if f, ok := mt.latest("candidate"); ok {
			sp.Kind, sp.Change, sp.Range, sp.Date = kind(f), percent(f.Change.Change), show(commitRange(f.FromCommit, f.ToCommit)), day(f.ToDate)
			spark.Mark, spark.MarkKind = f.Change.Index, markKind(f)
			label += ", a change point marked"
			if b, ok := mt.latest("baseline"); ok && b.ToDate.Equal(f.ToDate) {
				sp.Note = "the baseline stepped the same night"
			}
			switch sp.Kind {
			case "worse":
				worse = append(worse, show(name))
				if f.ToDate.After(r.worseAt) {
					r.worseAt = f.ToDate
				}
			case "better":
				better = append(better, show(name))
			}
		} else {
			sp.Note = "no change point"
			if len(pts) < m.needRuns() {
				sp.Note = fmt.Sprintf("too few runs (%d of %d)", len(pts), m.needRuns())
			}
			if strings.HasPrefix(sec.id.fingerprint, benchdata.MixedPrefix) {
				sp.Note = "mixed machines: not tested"
			}
		}
		spark.Label = label
		sp.SVG = svgHTML(func(b *bytes.Buffer) error { return charts.SparklineSVG(b, spark) })
		r.Metrics = append(r.Metrics, sp)
	}
	switch {
	case len(worse) > 0:
		r.Status, r.StatusText = "worse", "worse: "+strings.Join(worse, ", ")
	case len(better) > 0:
		r.Status, r.StatusText = "better", "better: "+strings.Join(better, ", ")
	default:
		r.StatusText = "no change"
	}
	return r
}

// indexSection is the section a cell's index row shows: the newest one
// (sections are newest first) with runs enough for change points on one
// machine, so that a few nights of another runner or profile do not hide
// the cell's trend; the newest of all when none has.
func (m *model) indexSection(c *cell) *section {
	for _, sec := range c.sections {
		if len(sec.runs) >= m.needRuns() && !strings.HasPrefix(sec.id.fingerprint, benchdata.MixedPrefix) {
			return sec
		}
	}
	return c.sections[0]
}
