package report

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/profdiff"
	"github.com/google/pprof/profile"
)

// whereProfile is a CPU profile with a sample a stack ("a;b;c", root
// first) of n 10 ms ticks.
func whereProfile(stacks map[string]int) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	}
	funcs := map[string]*profile.Function{}
	for k, n := range stacks {
		frames := strings.Split(k, ";")
		s := &profile.Sample{Value: []int64{int64(n), int64(n) * 10_000_000}}
		for i := len(frames) - 1; i >= 0; i-- {
			f := funcs[frames[i]]
			if f == nil {
				f = &profile.Function{ID: uint64(len(funcs) + 1), Name: frames[i]}
				funcs[frames[i]] = f
				p.Function = append(p.Function, f)
			}
			l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, l)
			s.Location = append(s.Location, l)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// hostileFunc is a function name a target controls (a C++ symbol, or a
// Go name in a package a PR adds), with markdown and HTML in it.
const hostileFunc = "main.(*T).<script>alert(1)</script>|[x](http://evil)`tick`"

func whereInput(t *testing.T) (Input, string) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "profiles"), 0o755)
	write := func(name string, p *profile.Profile) {
		f, err := os.Create(filepath.Join(dir, "profiles", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := p.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	write("cell01-baseline.pb.gz", whereProfile(map[string]int{"main.main;main.handle;" + hostileFunc: 100, "main.main;main.handle;main.encode": 100}))
	write("cell01-candidate.pb.gz", whereProfile(map[string]int{"main.main;main.handle;" + hostileFunc: 500, "main.main;main.handle;main.encode": 100}))
	in := fullInput()
	// csv/Q01 c=8 regressed; the others are not failing cells.
	cell := benchdata.Cell(in.Comparison.Cells[1].Key)
	in.Results.Profiles = []benchdata.CellProfile{
		{Cell: cell, Source: "perf", Baseline: benchdata.ProfileSide{File: "profiles/cell01-baseline.pb.gz", Requests: 1000, Seconds: 4},
			Candidate: benchdata.ProfileSide{File: "profiles/cell01-candidate.pb.gz", Requests: 1000, Seconds: 4}},
		{Cell: cell, Source: "perf", Baseline: benchdata.ProfileSide{File: "../../etc/passwd", Requests: 1}, Candidate: benchdata.ProfileSide{File: "x", Requests: 1}},
		{Cell: cell, Skipped: "the baseline is a url target"},
	}
	in.Where = LoadWhere(dir, in.Results)
	return in, dir
}

func TestWhere(t *testing.T) {
	t.Parallel()
	in, dir := whereInput(t)
	if len(in.Where) != 3 || in.Where[0].Diff == nil {
		t.Fatalf("where %+v", in.Where)
	}
	if w := in.Where[1]; w.Diff != nil || !strings.Contains(w.Skipped, `profile file "../../etc/passwd": not a file within the results directory`) {
		t.Errorf("a path out of the results directory: %+v", w)
	}
	if w := in.Where[2]; w.Diff != nil || w.Skipped != "the baseline is a url target" {
		t.Errorf("a skipped cell: %+v", w)
	}
	g := in.Where[0].Diff.Grew(5)
	if len(g) != 1 || g[0].Name != hostileFunc {
		t.Fatalf("grew %+v", g)
	}
	md := markdown(t, in)
	sec := between(t, md, "### Where it got slower\n\n#### csv/Q01 c=8\n\n", "Not profiled: the baseline is a url target.")
	for _, want := range []string{
		"CPU per request, from perf profiles of 1000 and 1000 requests: baseline 2.000 ms, candidate 6.000 ms (+200.0%).",
		"| function | via | baseline CPU/request | candidate CPU/request | Δ | share of the change | cumulative Δ |",
		"| 1.000 ms | 5.000 ms | +4.000 ms (+400.0%) | 100% | +4.000 ms |",
		"Flame graph: [profiles/cell01-flame.svg](profiles/cell01-flame.svg)",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("report.md's where section lacks %q:\n%s", want, sec)
		}
	}
	for _, text := range []string{md, comment(t, in, CommentOptions{Marker: testMarker})} {
		for _, raw := range []string{"<script>", "[x](http://evil)", "`tick`"} {
			if strings.Contains(text, raw) {
				t.Errorf("%q reached the markdown unescaped", raw)
			}
		}
	}
	c := comment(t, in, CommentOptions{Marker: testMarker})
	if !strings.Contains(c, "<details><summary>Where csv/Q01 c=8 got slower") || !strings.Contains(c, "&#60;script&#62;") {
		t.Errorf("the comment has no where block:\n%s", c)
	}
	// A comment too short for the report's fold drops the where block
	// with it, and keeps the failures.
	short := comment(t, in, CommentOptions{Marker: testMarker, MaxRunes: 3000})
	if strings.Contains(short, "<details><summary>Where ") || !strings.Contains(short, "regression") {
		t.Errorf("a short comment:\n%s", short)
	}
	// The flame graph is written beside the profiles.
	if err := WriteFlames(dir, in.Where); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "profiles", "cell01-flame.svg"))
	if err != nil || strings.Contains(string(svg), "<script>") || !strings.Contains(string(svg), "&lt;script&gt;") {
		t.Errorf("flame graph: %v", err)
	}
}

// An A/A diff lists nothing.
func TestWhereNothingAboveTheFloor(t *testing.T) {
	t.Parallel()
	p := whereProfile(map[string]int{"main.main;main.a": 300, "main.main;main.b": 200})
	d, err := profdiff.Compute(profdiff.Side{Profile: p, Units: 10}, profdiff.Side{Profile: p, Units: 10}, profdiff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := whereTable(Where{Diff: d}, 5); got != "No function's own CPU grew beyond the noise floor.\n\n" {
		t.Errorf("got %q", got)
	}
}

// TestParseProfileBounded: a profile read back is parsed gzipped or not,
// and a small gzipped file that would gunzip past the limit (a fork's
// results directory may hold one) is refused, not gunzipped into memory.
func TestParseProfileBounded(t *testing.T) {
	t.Parallel()
	p := whereProfile(map[string]int{"main.main;main.work": 7})
	var gz, raw bytes.Buffer
	if err := p.Write(&gz); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteUncompressed(&raw); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"gzipped": gz.Bytes(), "uncompressed": raw.Bytes()} {
		got, err := parseProfile(bytes.NewReader(b), 1<<20)
		if err != nil || len(got.Sample) != 1 || got.Sample[0].Value[0] != 7 {
			t.Errorf("%s: %v, %v", name, got, err)
		}
	}
	var bomb bytes.Buffer
	w := gzip.NewWriter(&bomb)
	w.Write(make([]byte, 4<<20))
	w.Close()
	if _, err := parseProfile(bytes.NewReader(bomb.Bytes()), 1<<20); err == nil || !strings.Contains(err.Error(), "over 1048576 bytes of profile data once gunzipped") {
		t.Errorf("%d bytes gunzipping to 4 MiB: %v", bomb.Len(), err)
	}
}
