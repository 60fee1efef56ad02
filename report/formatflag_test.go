package report

import (
	"strings"
	"testing"
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
