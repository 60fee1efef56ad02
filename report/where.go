package report

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/charts"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/fsx"
	"github.com/benchgate/benchgate/internal/numtext"
	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/benchgate/benchgate/profdiff"
	"github.com/google/pprof/profile"
)

// Where is one profiled cell: where it got slower, the diff of its two
// sides' CPU profiles per request (profdiff), or why there is none.
type Where struct {
	// Index is the cell's place among the run's profiles, from 1: its
	// flame graph's name.
	Index int
	Cell  benchdata.Cell
	// Profile is the results file's record of the cell's profiles.
	Profile benchdata.CellProfile
	// Diff is nil when the cell was not profiled or a profile could not
	// be read; Skipped says why.
	Diff    *profdiff.Diff
	Skipped string
}

// Flame is the file of w's flame graph, relative to the results
// directory (beside its profiles).
func (w Where) Flame() string {
	return benchdata.ProfileFile(w.Index, "flame.svg")
}

// LoadWhere reads the profiles res records (its Profiles, files relative
// to dir) and diffs each cell's: a file that is missing, not local to dir
// (a results file from a fork names its own paths), over
// benchdata.MaxProfileBytes or not a profile leaves its cell with the
// reason.
func LoadWhere(dir string, res *benchdata.Results) []Where {
	if res == nil {
		return nil
	}
	opt := profdiff.Options{}
	if res.Benchmarks() {
		opt.Unit = "op"
	}
	var out []Where
	for i, cp := range res.Profiles {
		w := Where{Index: i + 1, Cell: cp.Cell, Profile: cp, Skipped: cp.Skipped}
		if cp.Skipped == "" {
			base, err := readProfile(dir, cp.Baseline.File)
			var cand *profile.Profile
			if err == nil {
				cand, err = readProfile(dir, cp.Candidate.File)
			}
			if err == nil {
				w.Diff, err = profdiff.Compute(profdiff.Side{Profile: base, Units: float64(cp.Baseline.Requests)},
					profdiff.Side{Profile: cand, Units: float64(cp.Candidate.Requests)}, opt)
			}
			if err != nil {
				w.Skipped = err.Error()
			}
		}
		out = append(out, w)
	}
	return out
}

func readProfile(dir, file string) (*profile.Profile, error) {
	if file == "" || !filepath.IsLocal(filepath.FromSlash(file)) {
		return nil, fmt.Errorf("profile file %q: not a file within the results directory", file)
	}
	f, err := fsx.OpenLimited(filepath.Join(dir, filepath.FromSlash(file)), benchdata.MaxProfileBytes)
	if err != nil {
		return nil, fmt.Errorf("profile file %s: %w", file, err)
	}
	defer f.Close()
	p, err := parseProfile(f, maxProfileData)
	if err != nil {
		return nil, fmt.Errorf("profile file %s: %w", file, err)
	}
	return p, nil
}

// maxProfileData bounds a profile's data once gunzipped: pprof's own
// Parse would gunzip a small file into any size.
const maxProfileData = 4 * benchdata.MaxProfileBytes

// parseProfile parses a pprof profile, gzipped or not, reading at most
// limit bytes of its data.
func parseProfile(r io.Reader, limit int64) (*profile.Profile, error) {
	br := bufio.NewReader(r)
	var data io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		data = gz
	}
	b, err := io.ReadAll(io.LimitReader(data, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("over %d bytes of profile data once gunzipped", limit)
	}
	return profile.ParseUncompressed(b)
}

// WriteFlames writes each diffed cell's flame graph beside its profiles.
func WriteFlames(dir string, where []Where) error {
	for _, w := range where {
		if w.Diff == nil {
			continue
		}
		file := filepath.Join(dir, filepath.FromSlash(w.Flame()))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		err := benchdata.WriteFile(file, func(out io.Writer) error {
			return charts.Flame{Title: fmt.Sprintf("%s: candidate against baseline, CPU per %s", w.Cell, w.Diff.Unit),
				Unit: "ns", Root: flameNode(w.Diff.Root), Floor: w.Diff.MinShare * w.Diff.Total.Base}.SVG(out)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func flameNode(n *profdiff.Node) *charts.FlameNode {
	f := &charts.FlameNode{Name: n.Name, Base: n.Base, Cand: n.Cand}
	for _, c := range n.Children {
		f.Children = append(f.Children, flameNode(c))
	}
	return f
}

// secWhere is the report's part on where profiled cells got slower.
const secWhere sectionID = 1002

// mdWhere is report.md's part: for each profiled cell, the functions
// whose own CPU a request grew most (above the diff's noise floor), the
// flame graph and how to open the profiles with pprof.
func (m *model) mdWhere(b *strings.Builder) {
	if len(m.in.Where) == 0 {
		return
	}
	b.WriteString("### Where it got slower\n\n")
	for _, w := range m.in.Where {
		fmt.Fprintf(b, "#### %s\n\n", md(w.Cell.String()))
		if w.Diff == nil {
			fmt.Fprintf(b, "Not profiled: %s.\n\n", md(w.Skipped))
			continue
		}
		whereIntro(b, w)
		b.WriteString(whereTable(w, 15))
		fmt.Fprintf(b, "Flame graph: [%s](%s) (width: the candidate's CPU; red grew, blue shrank). "+
			"Open the profiles with pprof, in the results directory: `go tool pprof -normalize -diff_base` and the files %s and %s.\n\n",
			w.Flame(), w.Flame(), codeText(w.Profile.Baseline.File), codeText(w.Profile.Candidate.File))
	}
}

// whereIntro is the line above a cell's table: the CPU a request on each
// side, the source and the floor.
func whereIntro(b *strings.Builder, w Where) {
	d := w.Diff
	fmt.Fprintf(b, "CPU per %s, from %s profiles of %d and %d %ss: baseline %s, candidate %s (%s). "+
		"A function is listed when its own CPU changed beyond its samples' chance (p ≤ %s over %d functions) and by at least %s of the baseline's CPU per %s.\n\n",
		d.Unit, md(w.Profile.Source), w.Profile.Baseline.Requests, w.Profile.Candidate.Requests, d.Unit,
		numtext.Value(d.Total.Base, "ns"), numtext.Value(d.Total.Cand, "ns"), numtext.Percent(d.Total.Rel()),
		numtext.PValue(d.Alpha), d.Tested, share(d.MinShare), d.Unit)
}

// whereTable is the markdown table of up to n functions that grew, or a
// line saying none did beyond the floor.
func whereTable(w Where, n int) string {
	d := w.Diff
	grew := d.Grew(n)
	if len(grew) == 0 {
		return "No function's own CPU grew beyond the noise floor.\n\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| function | via | baseline CPU/%s | candidate CPU/%s | Δ | share of the change | cumulative Δ |\n", d.Unit, d.Unit)
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, f := range grew {
		via := d.Via(f.Name)
		if via != "" {
			via = codeText(via)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s (%s) | %s | %s |\n", codeText(f.Name), via,
			numtext.Value(f.Flat.Base, "ns"), numtext.Value(f.Flat.Cand, "ns"), signedValue(f.Flat.Delta()), numtext.Change(f.Flat.Base, f.Flat.Cand),
			share(d.Share(f)), signedValue(f.Cum.Delta()))
	}
	b.WriteString("\n")
	return b.String()
}

func signedValue(v float64) string {
	if v < 0 {
		return "−" + numtext.Value(-v, "ns")
	}
	return "+" + numtext.Value(v, "ns")
}

// commentWhere is the comment's block for the failing cells that were
// profiled: each its top 5 functions, collapsed.
func (m *model) commentWhere() string {
	failing := map[benchdata.Cell]bool{}
	for _, c := range m.in.Comparison.Cells {
		if c.Verdict == gate.Regression {
			failing[benchdata.Cell(c.Key)] = true
		}
	}
	var b strings.Builder
	for _, w := range m.in.Where {
		if w.Diff == nil || !failing[w.Cell] {
			continue
		}
		fmt.Fprintf(&b, "<details><summary>Where %s got slower (CPU profiles, %s)</summary>\n\n", md(w.Cell.String()), md(w.Profile.Source))
		b.WriteString(whereTable(w, 5))
		b.WriteString("</details>\n\n")
	}
	return b.String()
}

// WhereRecords is where in short for a history record: each diffed cell's
// CPU per unit and the functions whose own CPU grew most above the floor
// (at most benchdata.MaxRecordFuncs, names clipped to
// benchdata.MaxRecordFuncName characters), so the history site can show a
// cell's latest diff.
func WhereRecords(where []Where) []benchdata.RecordWhere {
	var out []benchdata.RecordWhere
	for _, w := range where {
		if w.Diff == nil {
			continue
		}
		rw := benchdata.RecordWhere{Cell: w.Cell, Source: w.Profile.Source, Unit: w.Diff.Unit,
			Base: w.Diff.Total.Base, Cand: w.Diff.Total.Cand, Funcs: []benchdata.RecordFunc{}}
		for _, f := range w.Diff.Grew(benchdata.MaxRecordFuncs) {
			rw.Funcs = append(rw.Funcs, benchdata.RecordFunc{Name: textsafe.Clip(f.Name, benchdata.MaxRecordFuncName),
				Base: f.Flat.Base, Cand: f.Flat.Cand, Share: w.Diff.Share(f)})
		}
		out = append(out, rw)
	}
	return out
}
