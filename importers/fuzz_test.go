package importers

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/fsx"
)

// Each importer reads a file the user names, possibly one a workflow
// downloaded. Beyond not panicking, an error about a fuzzed report is
// bounded (maxErrBytes), and what a fuzzed report imports must be
// a rung a results file can hold: counts not negative, figures finite
// (encoding/json refuses NaN), and the results it makes read back.

func fuzzTool(f *testing.F, tool string) {
	dir := filepath.Join("testdata", tool)
	ents, err := os.ReadDir(dir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// Figures no file of the tool's holds: counts past int64 (which
	// converted to negative counts) and bytes below zero, in reports
	// otherwise valid.
	f.Add([]byte(`{"latencies":{"total":1,"mean":2,"50th":2,"90th":2,"95th":2,"99th":3,"max":4,"min":2},"bytes_in":{"total":-6000},"duration":1994675326,"wait":0,"requests":1e300,"status_codes":{"200":1e300},"errors":[]}`))
	f.Add([]byte(`{"latencies":{"total":1,"mean":2,"50th":2,"90th":2,"95th":2,"99th":3,"max":4,"min":2},"bytes_in":{"total":6000},"duration":1994675326,"wait":0,"requests":400,"status_codes":{"200":1e19,"500":1e19},"errors":[]}`))
	f.Add([]byte(`{"count":1e300,"total":-1,"latencyDistribution":null,"statusCodeDistribution":{"OK":1e300},"options":{"concurrency":1e300}}`))
	f.Add([]byte(`{"latencies":{"total":1,"mean":1,"50th":1,"95th":1},"status_codes":{"200":9007199254740993},"requests":9007199254740993,"duration":1,"bytes_in":{"total":-5}}`))
	f.Add([]byte(`{"summary":{"total":1,"successRate":1},"latencyPercentiles":{"p50":null},"statusCodeDistribution":{"200":1}}`))
	f.Add([]byte(`{"metrics":{"vus":{"max":1e300},"http_reqs":{"count":1},"http_req_duration":{"med":1,"p(95)":1}},"state":{"testRunDurationMs":1}}`))
	// A status, an error text and a time far longer than an error may quote.
	long := strings.Repeat("é", 3000)
	f.Add([]byte(`{"latencies":{"total":1,"mean":2,"50th":2,"90th":2,"95th":2,"99th":3,"max":4,"min":2},"bytes_in":{"total":1},"duration":1,"wait":0,"requests":1,"status_codes":{"` + long + `":-1},"errors":["` + long + `"],"earliest":"` + long + `"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseBytes(tool, data)
		if err != nil {
			if len(err.Error()) > maxErrBytes {
				t.Fatalf("an error of %d bytes: %.300s…", len(err.Error()), err)
			}
			return
		}
		checkRung(t, m.rung)
		if m.conc < 0 {
			t.Fatalf("concurrency %d", m.conc)
		}
		// The results it makes read back.
		res := &benchdata.Results{Version: benchdata.FormatVersion, Kind: "import:" + tool, Rungs: []benchdata.Rung{m.rung}}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatalf("the imported rung cannot be stored: %v", err)
		}
		if _, err := benchdata.Parse(b, "imported"); err != nil {
			t.Fatalf("the imported rung does not read back: %v", err)
		}
	})
}

// parseBytes is what Read does with one file of tool's.
func parseBytes(tool string, data []byte) (measurement, error) {
	return readReport(&file{path: "f.json", format: tool, data: data})
}

func checkRung(t *testing.T, r benchdata.Rung) {
	t.Helper()
	figures := map[string]float64{"duration": r.Duration, "max": r.Max}
	for m, x := range r.Values {
		figures[m] = x
	}
	for name, x := range figures {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("%s is %v", name, x)
		}
	}
	if r.Requests < 0 || r.Bytes < 0 || r.Value(gate.RPS) < 0 {
		t.Fatalf("requests %d, bytes %d, rps %v", r.Requests, r.Bytes, r.Value(gate.RPS))
	}
	for _, m := range []map[string]int64{r.Errors, r.Statuses} {
		for k, n := range m {
			if n < 0 {
				t.Fatalf("%s: %d", k, n)
			}
		}
	}
}

func FuzzVegeta(f *testing.F) { fuzzTool(f, "vegeta") }
func FuzzGhz(f *testing.F)    { fuzzTool(f, "ghz") }
func FuzzOha(f *testing.F)    { fuzzTool(f, "oha") }
func FuzzK6(f *testing.F)     { fuzzTool(f, "k6") }

func TestReadRefusesNonRegularFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	good := files("vegeta", "baseline-1.json")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{fifo, zero} {
			var nr *fsx.NotRegularError
			if _, err := Read("vegeta", good, []string{p}, Options{}); !errors.As(err, &nr) || nr.Path != p {
				t.Errorf("Read(%s) = %v, want a NotRegularError", p, err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO or /dev/zero still runs after 5 s")
	}
}
