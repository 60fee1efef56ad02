package report

import (
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
)

// TestFormatsTable: every name and alias of the formats table renders
// through ForFormat, Calibration and Drift, a name the table lacks is
// refused by all three and by the flag with the same error, and the usage
// line lists the names.
func TestFormatsTable(t *testing.T) {
	for _, name := range []string{"terminal", "text", "markdown", "md", "json"} {
		var b strings.Builder
		r, err := ForFormat(name, Input{}, TerminalOptions{})
		if err != nil || r(&b) != nil {
			t.Errorf("ForFormat(%q): %v", name, err)
		}
		if err := Calibration(&b, CalibrationInput{}, name); err != nil {
			t.Errorf("Calibration(%q): %v", name, err)
		}
		if err := Drift(&b, DriftInput{}, name); err != nil {
			t.Errorf("Drift(%q): %v", name, err)
		}
		f := ForFormatFlag()
		if err := f.Set(name); err != nil {
			t.Errorf("flag %q: %v", name, err)
		}
	}
	const want = `report: unknown format "html" (want terminal, markdown or json)`
	var b strings.Builder
	_, err1 := ForFormat("html", Input{}, TerminalOptions{})
	f := ForFormatFlag()
	for i, err := range []error{err1, Calibration(&b, CalibrationInput{}, "html"), Drift(&b, DriftInput{}, "html"), f.Set("html")} {
		if err == nil || err.Error() != want {
			t.Errorf("%d: %v, want %q", i, err, want)
		}
	}
	if FormatUsage != "report on stdout in this `format`: terminal, markdown or json" || strings.Join(Formats, ",") != "terminal,markdown,json" {
		t.Errorf("usage %q, formats %v", FormatUsage, Formats)
	}
}

// TestDirtyCommit: a side whose work tree had changes says so beside its
// commit, in the markdown and terminal headers and the target notes.
func TestDirtyCommit(t *testing.T) {
	res := &benchdata.Results{}
	res.Env.Baseline = benchdata.TargetInfo{Name: "baseline", Kind: "command", Spec: "./srv", Commit: "735ae2b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6"}
	res.Env.Candidate = res.Env.Baseline
	res.Env.Candidate.Name, res.Env.Candidate.Dirty = "candidate", true
	var md, term strings.Builder
	if err := Markdown(&md, Input{Results: res}); err != nil {
		t.Fatal(err)
	}
	if err := Terminal(&term, Input{Results: res}, TerminalOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"baseline **735ae2b** vs candidate **735ae2b** (modified)", "commit 735ae2b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6 (modified)"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if !strings.Contains(term.String(), "baseline 735ae2b vs candidate 735ae2b (modified)") {
		t.Errorf("terminal: %s", term.String()[:min(300, term.Len())])
	}
}
