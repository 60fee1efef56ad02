package report

import (
	"flag"
	"io"
	"testing"
)

// TestFormatFlag: a -format flag keeps its default until set, takes what
// it names, and refuses anything else as the flag is parsed.
func TestFormatFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		flag    func() FormatFlag
		def     string
		arg     string
		wantErr string
	}{
		{"renderer", ForFormatFlag, "terminal", "markdown", ""},
		{"renderer alias", ForFormatFlag, "terminal", "md", ""},
		{"renderer unknown", ForFormatFlag, "terminal", "html", `report: unknown format "html" (want terminal, markdown or json)`},
		{"one of", func() FormatFlag { return NewFormatFlag("terminal", "json") }, "terminal", "json", ""},
		{"not one of", func() FormatFlag { return NewFormatFlag("terminal", "json") }, "terminal", "md", `"md" is not terminal or json`},
		{"one of three", func() FormatFlag { return NewFormatFlag(Formats...) }, "terminal", "xml", `"xml" is not terminal, markdown or json`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.flag()
			if f.Name != tc.def || f.String() != tc.def {
				t.Fatalf("default %q (String %q), want %q", f.Name, f.String(), tc.def)
			}
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.Var(&f, "format", FormatUsage)
			err := fs.Parse([]string{"-format", tc.arg})
			if tc.wantErr == "" {
				if err != nil || f.Name != tc.arg {
					t.Fatalf("-format %s: %q, %v", tc.arg, f.Name, err)
				}
				return
			}
			if want := "invalid value \"" + tc.arg + "\" for flag -format: " + tc.wantErr; err == nil || err.Error() != want {
				t.Errorf("error %v, want %q", err, want)
			}
			if f.Name != tc.def {
				t.Errorf("a refused value changed the flag to %q", f.Name)
			}
		})
	}
}
