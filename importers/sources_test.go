package importers

import (
	"slices"
	"testing"

	"github.com/benchgate/benchgate/scenario"
)

// TestReadSources: Go benchmarks or a tool's reports, each decided only
// by a scenario of its kind.
func TestReadSources(t *testing.T) {
	t.Parallel()
	bench := []string{"testdata/benchstat/old.txt", "testdata/benchstat/new.txt"}
	vegeta := Sources{Tool: "vegeta", Baseline: files("vegeta", threeBase...), Candidate: files("vegeta", threeCand...)}
	of := func(kind string) Options {
		return Options{Scenario: &Scenario{Scenario: &scenario.Scenario{File: "s.yml", Kind: kind}}}
	}
	read := func(name string, src Sources, opt Options, wantKind, wantErr string) {
		t.Helper()
		res, err := ReadSources(src, opt, "benchgate v1")
		switch {
		case wantErr != "":
			if err == nil || err.Error() != wantErr {
				t.Errorf("%s: %v\nwant %s", name, err, wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case res.Kind != wantKind:
			t.Errorf("%s: results of kind %q, want %q", name, res.Kind, wantKind)
		}
	}
	read("go benchmarks", Sources{GoBench: bench}, Options{}, "gobench", "")
	read("go benchmarks, gobench scenario", Sources{GoBench: bench}, of(scenario.KindGoBench), "gobench", "")
	read("go benchmarks, http scenario", Sources{GoBench: bench}, of(scenario.KindHTTP), "",
		"s.yml: a http scenario cannot decide go test -bench outputs (want kind: gobench)")
	read("one go benchmark output", Sources{GoBench: bench[:1]}, Options{}, "",
		"want two go test -bench outputs, the baseline's and the candidate's, not 1")
	read("vegeta", vegeta, Options{}, "import:vegeta", "")
	read("vegeta, grpc scenario", vegeta, of(scenario.KindGRPC), "import:vegeta", "")
	read("vegeta, gobench scenario", vegeta, of(scenario.KindGoBench), "",
		"s.yml: a gobench scenario cannot decide vegeta reports (want kind: http)")
	read("vegeta without candidate", Sources{Tool: "vegeta", Baseline: vegeta.Baseline}, Options{}, "",
		"-import needs -baseline and -candidate, each a comma-separated list of report files")
}

// TestFileList: -baseline and -candidate split on commas and drop blanks
// around names and empty names; a second Set replaces the first.
func TestFileList(t *testing.T) {
	t.Parallel()
	var l FileList
	if err := l.Set("old.json"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"a.json, b.json ,c.json", []string{"a.json", "b.json", "c.json"}},
		{" , ,", nil},
		{"a.json,,b.json,", []string{"a.json", "b.json"}},
	} {
		if err := l.Set(tc.in); err != nil || !slices.Equal(l, tc.want) {
			t.Errorf("Set(%q) = %q, %v; want %q", tc.in, l, err, tc.want)
		}
	}
	if l.Set("x, y"); l.String() != "x,y" {
		t.Errorf("String %q, want x,y", l.String())
	}
}
