package importers

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
)

// Sources are the files "benchgate compare" decides instead of a results
// file: two saved go test -bench outputs, or a load tool's reports.
type Sources struct {
	// GoBench are the baseline's and the candidate's go test -bench
	// outputs; read when Tool is empty.
	GoBench []string
	// Tool is one of Tools: Baseline and Candidate are its reports, one
	// file per repetition of each side. Or one of Formats: Baseline and
	// Candidate are files of that format, each holding every benchmark.
	Tool                string
	Baseline, Candidate []string
}

// FileList is the syntax of the report lists of Sources as a flag.Value:
// files separated by commas; blanks around a name and empty names are
// dropped.
type FileList []string

func (l *FileList) String() string { return strings.Join(*l, ",") }

func (l *FileList) Set(s string) error {
	*l = nil
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			*l = append(*l, f)
		}
	}
	return nil
}

// ReadSources reads src into results, with GoBench, ReadSuite (Tool one
// of Formats) or Read (Tool one of Tools). opt.Scenario, when not nil,
// decides them and must be of their kind: a gobench scenario for Go
// benchmarks and benchmark suites, an HTTP or gRPC one for a load tool's
// reports. tool is the results' Tool for Go benchmarks and suites
// ("benchgate VERSION").
func ReadSources(src Sources, opt Options, tool string) (*benchdata.Results, error) {
	suite := slices.Contains(Formats, src.Tool)
	if src.Tool != "" && !suite && !slices.Contains(Tools, src.Tool) {
		return nil, unknownFormat(src.Tool)
	}
	kind, what := scenario.KindGoBench, "go test -bench outputs"
	switch {
	case suite:
		// A suite's cells are benchmarks, named by the files, with
		// units for metrics: a gobench scenario's gate section (its
		// metrics any unit, with better:) is the one that can decide
		// them.
		what = src.Tool + " files"
	case src.Tool != "":
		kind, what = scenario.KindHTTP, src.Tool+" reports"
	}
	// A load tool's reports are decided by any scenario of load on
	// services (an HTTP or a gRPC one: ghz measures gRPC), not a Go
	// benchmarks' one.
	loadReports := src.Tool != "" && !suite
	if s := opt.Scenario; s != nil && s.Kind != kind && !(loadReports && s.Kind != scenario.KindGoBench) {
		return nil, fmt.Errorf("%s: a %s scenario cannot decide %s (want kind: %s)", s.File, s.Kind, what, kind)
	}
	if src.Tool == "" {
		if len(src.GoBench) != 2 {
			return nil, fmt.Errorf("want two go test -bench outputs, the baseline's and the candidate's, not %d", len(src.GoBench))
		}
		return GoBench(src.GoBench[0], src.GoBench[1], tool, opt)
	}
	if len(src.Baseline) == 0 || len(src.Candidate) == 0 {
		return nil, errors.New("-import needs -baseline and -candidate, each a comma-separated list of report files")
	}
	if suite {
		return ReadSuite(src.Tool, src.Baseline, src.Candidate, opt, tool)
	}
	return Read(src.Tool, src.Baseline, src.Candidate, opt)
}
