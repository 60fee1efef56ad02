package report

import (
	"bytes"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// readFile is the content of path, failing the test when it cannot be
// read.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// written is what reporter r writes.
func written(t *testing.T, r func(io.Writer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := r(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPublish: the files WriteFiles writes, the report in the format asked
// for on w (none for ""), and where report.md is on log.
func TestPublish(t *testing.T) {
	t.Parallel()
	in := chartsInput()
	for _, format := range []string{"markdown", ""} {
		dir := filepath.Join(t.TempDir(), "results")
		var w, log bytes.Buffer
		if err := Publish(dir, in, format, &w, &log); err != nil {
			t.Fatal(err)
		}
		want := ""
		if format != "" {
			want = markdown(t, in)
		}
		if w.String() != want || log.String() != "report: "+filepath.Join(dir, "report.md")+"\n" {
			t.Errorf("format %q: printed %q, said %q", format, w.String(), log.String())
		}
		if got := readFile(t, filepath.Join(dir, "report.md")); got != markdown(t, in) {
			t.Errorf("format %q: report.md is not the markdown report:\n%s", format, got)
		}
	}
	if err := Publish(t.TempDir(), in, "html", io.Discard, io.Discard); err == nil {
		t.Error("an unknown format published")
	}
}

// TestWriteFiles: the report, the decisions and the charts, in a results
// directory created for them; RemoveFiles takes the first two away again
// and leaves the rest.
func TestWriteFiles(t *testing.T) {
	t.Parallel()
	in := chartsInput()
	dir := filepath.Join(t.TempDir(), "out", "results")
	if err := WriteFiles(dir, in); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, filepath.Join(dir, "report.md")), markdown(t, in); got != want {
		t.Errorf("report.md is not the markdown report:\n%s", got)
	}
	if got, want := readFile(t, filepath.Join(dir, "decisions.json")), written(t, func(w io.Writer) error { return JSON(w, in) }); got != want {
		t.Errorf("decisions.json is not the JSON report:\n%s", got)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"charts", "decisions.json", "report.md"}) {
		t.Errorf("results directory holds %v", got)
	}
	if charts := listDir(t, filepath.Join(dir, "charts")); len(charts) == 0 {
		t.Error("no charts written")
	}

	os.WriteFile(filepath.Join(dir, "results.json"), []byte("{}"), 0o644)
	for range 2 { // the second time there is nothing to remove
		if err := RemoveFiles(dir); err != nil {
			t.Fatal(err)
		}
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"charts", "results.json"}) {
		t.Errorf("after RemoveFiles the directory holds %v", got)
	}

	// A report.md that is a directory with files in it cannot be replaced
	// or removed: an error, not a report that says nothing.
	os.MkdirAll(filepath.Join(dir, "report.md", "x"), 0o755)
	if err := RemoveFiles(dir); err == nil {
		t.Error("RemoveFiles of a non-empty directory report.md: no error")
	}
	if err := WriteFiles(dir, in); err == nil {
		t.Error("WriteFiles over a directory report.md: no error")
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if err := WriteFiles(file, in); err == nil {
		t.Error("WriteFiles into a file: no error")
	}
}

func TestWriteCalibration(t *testing.T) {
	t.Parallel()
	res := pinsInput().Results
	c, err := decide.Results(res)
	if err != nil {
		t.Fatal(err)
	}
	cal := CalibrationInput{Results: res, Comparison: c, Calibrations: gate.Calibrate(c)}
	dir := t.TempDir()
	if err := WriteCalibration(dir, cal); err != nil {
		t.Fatal(err)
	}
	for name, format := range map[string]string{"calibration.md": "markdown", "calibration.json": "json"} {
		want := written(t, func(w io.Writer) error { return Calibration(w, cal, format) })
		if got := readFile(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s is not the %s calibration report:\n%s", name, format, got)
		}
	}
	// A missing directory is made; one that cannot be is an error.
	if err := WriteCalibration(filepath.Join(dir, "missing", "deeper"), cal); err != nil {
		t.Errorf("WriteCalibration into a missing directory: %v", err)
	}
	if err := WriteCalibration(filepath.Join(dir, "calibration.md", "under"), cal); err == nil {
		t.Error("WriteCalibration under a regular file: no error")
	}
}
