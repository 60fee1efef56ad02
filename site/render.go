package site

import (
	"bytes"
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"net/url"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/charts"
	"github.com/benchgate/benchgate/internal/numtext"
	"github.com/benchgate/benchgate/internal/textsafe"
)

//go:embed templates/*.html templates/site.css
var templateFiles embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{}).ParseFS(templateFiles, "templates/*.html"))

var styleSheet = func() []byte {
	b, err := templateFiles.ReadFile("templates/site.css")
	if err != nil {
		panic(err)
	}
	return b
}()

// Marker is the file every site has at its root: Build replaces only a
// directory that holds it (or an empty one), so an -out mistyped as a
// directory of other things is refused rather than replaced.
const Marker = ".benchgate-site"

// Render makes the site of records (in any order; ReadHistory's are in
// date order) under opt: the index, one page per cell, the style sheet,
// Marker, and .nojekyll (GitHub Pages then serves the files as they are).
// Records of no cell give an index that says there is nothing yet.
// Records of more than MaxCells cells are refused (CellsError).
func Render(records []benchdata.Record, opt Options) (*Site, error) {
	m, err := newModel(records, opt)
	if err != nil {
		return nil, err
	}
	s := m.site()
	err = m.render(s, func(path string, data []byte) error {
		s.Files = append(s.Files, File{Path: path, Data: slices.Clone(data)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// site is the Site of the model, without its files.
func (m *model) site() *Site {
	s := &Site{Records: len(m.records), Dropped: m.dropped, Cells: len(m.cells)}
	for i, r := range m.records {
		if i == 0 || r.Date.Before(s.From) {
			s.From = r.Date
		}
		if r.Date.After(s.To) {
			s.To = r.Date
		}
	}
	return s
}

// render renders the site's files one by one, each handed to emit (its
// data valid until emit returns), and counts them into s: Build writes
// each page as it is made, so that a site is never all in memory.
func (m *model) render(s *Site, emit func(path string, data []byte) error) error {
	put := func(path string, data []byte) error {
		s.size += int64(len(data))
		return emit(path, data)
	}
	idx := m.index(s)
	s.Worse = idx.Worse
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, "index.html", idx); err != nil {
		return fmt.Errorf("index.html: %w", err)
	}
	for _, f := range []File{
		{Path: Marker, Data: []byte("benchgate history site: this directory is replaced as a whole by \"benchgate history site\"\n")},
		{Path: ".nojekyll", Data: []byte{}},
		{Path: "site.css", Data: styleSheet},
		{Path: "index.html", Data: b.Bytes()},
	} {
		if err := put(f.Path, f.Data); err != nil {
			return err
		}
	}
	for _, c := range m.cells {
		b.Reset()
		if err := templates.ExecuteTemplate(&b, "cell.html", m.cellView(c)); err != nil {
			return fmt.Errorf("%s: %w", c.page, err)
		}
		if err := put(c.page, b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// link is a text and, when the site has a repository, where it points.
type link struct {
	Text, Title, Href string
}

func (m *model) commit(c string) link {
	if c == "" {
		return link{Text: "—"}
	}
	l := link{Text: show(shortCommit(c)), Title: show(c)}
	if m.repo != "" {
		l.Href = m.repo + "/commit/" + url.PathEscape(c)
	}
	return l
}

func (m *model) compare(from, to string) string {
	if m.repo == "" || from == "" || to == "" || from == to {
		return ""
	}
	return m.repo + "/compare/" + url.PathEscape(from) + "..." + url.PathEscape(to)
}

// show is text from a history file as a page shows it: anything that is
// not printable, or could reorder the text around it, written as a
// visible escape (textsafe); html/template then escapes the markup.
func show(s string) string { return textsafe.Escape(s, 0) }

func scenarioName(name string) string { return show(cmp.Or(name, "(unnamed scenario)")) }

// direction says which way a metric improves, as drift judges it.
func direction(higher bool) string {
	if higher {
		return "higher is better"
	}
	return "lower is better"
}

// kind is a change's class and word: "worse", "better" or "" (none).
func kind(f benchdata.DriftFinding) string {
	switch {
	case f.Worse:
		return "worse"
	case f.Change.Change != 0:
		return "better"
	}
	return ""
}

func markKind(f benchdata.DriftFinding) charts.MarkKind {
	switch kind(f) {
	case "worse":
		return charts.MarkWorse
	case "better":
		return charts.MarkBetter
	}
	return charts.MarkNeutral
}

// commitRange is FROM..TO as drift names a change point's commits.
func commitRange(from, to string) string {
	return shortCommit(cmp.Or(from, "?")) + ".." + shortCommit(cmp.Or(to, "?"))
}

// fpShort is a fingerprint as a heading names it.
func fpShort(fp string) string {
	if fp == "" {
		return "(no fingerprint)"
	}
	return show(fp)
}

// needRuns is how many runs a series needs for change points to be looked
// for.
func (m *model) needRuns() int { return 2 * m.opt.ChangePoints.WithDefaults().MinWindow }

// sectionNote says why a section's series have no change points, if they
// cannot have any.
func (m *model) sectionNote(sec *section) string {
	switch {
	case strings.HasPrefix(sec.id.fingerprint, benchdata.MixedPrefix):
		return "The shards of these runs ran on machines of different fingerprints: which one measured a cell is not known, so no change points are looked for."
	case len(sec.runs) < m.needRuns():
		return fmt.Sprintf("%d run(s): too few to look for change points (need %d).", len(sec.runs), m.needRuns())
	}
	return ""
}

func svgHTML(write func(*bytes.Buffer) error) template.HTML {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return "" // a Buffer does not fail
	}
	// The charts package escapes every text it draws: the SVG is markup
	// made here, not text from the history.
	return template.HTML(b.String()) //nolint:gosec
}

// The figures and commits the reports show alike (internal/numtext).
var (
	percent     = numtext.Percent
	pValue      = numtext.PValue
	shortCommit = numtext.Commit
	day         = numtext.Day
)
