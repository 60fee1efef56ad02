package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/benchgate/benchgate/benchdata"
)

// reportFiles are the files WriteFiles writes beside the results, each with
// its reporter.
var reportFiles = []struct {
	name  string
	write func(io.Writer, Input) error
}{
	{"report.md", Markdown},
	{"decisions.json", JSON},
}

// WriteFiles writes the report of in into the results directory dir,
// creating it: report.md, decisions.json and the charts (WriteCharts).
// Each file is replaced whole (benchdata.WriteFile), never left half
// written.
func WriteFiles(dir string, in Input) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range reportFiles {
		if err := benchdata.WriteFile(filepath.Join(dir, f.name), func(w io.Writer) error { return f.write(w, in) }); err != nil {
			return err
		}
	}
	if err := WriteFlames(dir, in.Where); err != nil {
		return err
	}
	return WriteCharts(dir, in)
}

// Publish writes the files of in into dir (WriteFiles), prints its report
// in format on w ("": none), coloured when w is a terminal (ColorFor), and
// then tells log where report.md is.
func Publish(dir string, in Input, format string, w, log io.Writer) error {
	if err := WriteFiles(dir, in); err != nil {
		return err
	}
	if format != "" {
		show, err := ForFormat(format, in, TerminalOptions{Color: ColorFor(w)})
		if err == nil {
			err = show(w)
		}
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(log, "report: %s\n", filepath.Join(dir, "report.md"))
	return nil
}

// RemoveFiles removes the report.md and decisions.json an earlier run left
// in dir, so that a run which fails before it is decided leaves no report
// to be taken for its own. A missing file is no error; the charts are
// replaced by WriteFiles.
func RemoveFiles(dir string) error {
	for _, f := range reportFiles {
		if err := os.Remove(filepath.Join(dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// WriteCalibration writes the calibration report of in into dir, made
// when missing, as calibration.md and calibration.json.
func WriteCalibration(dir string, in CalibrationInput) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct{ name, format string }{{"calibration.md", "markdown"}, {"calibration.json", "json"}} {
		if err := benchdata.WriteFile(filepath.Join(dir, f.name), func(w io.Writer) error { return Calibration(w, in, f.format) }); err != nil {
			return err
		}
	}
	return nil
}
