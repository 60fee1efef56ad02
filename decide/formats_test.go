package decide

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/fsx"
)

// committedResults are the results files committed in the repository,
// of every earlier format version: the recorded grid (version 2), those
// the end-to-end scripts read (1, 2), and three runs of this machine
// written by format 3 (testdata/v3: a compose stack A/A and its N+1 A/B,
// sliced, with resources by service; a 1 s endpoint, round-interleaved).
// Each is by name.
func committedResults(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	b, err := fsx.ReadFileLimited("../cmd/benchgate/testdata/recorded/results.json", benchdata.MaxResultsBytes)
	if err != nil {
		t.Fatal(err)
	}
	files["recorded/results.json"] = b
	v3, err := filepath.Glob("testdata/v3/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range v3 {
		b, err := fsx.ReadFileLimited(f, benchdata.MaxResultsBytes)
		if err != nil {
			t.Fatal(err)
		}
		files["v3/"+filepath.Base(f)] = b
	}
	scripts, err := filepath.Glob("../cmd/benchgate/testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		a, err := txtar.ParseFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if strings.HasSuffix(f.Name, ".json") && bytes.Contains(f.Data, []byte(`"rungs"`)) && bytes.Contains(f.Data, []byte(`"plan"`)) {
				files[filepath.Base(s)+":"+f.Name] = f.Data
			}
		}
	}
	return files
}

// v3Fields are the fields of a rung's measurements before format 4.
var v3Fields = []gate.Metric{"rps", "mean", "p50", "p90", "p95", "p99"}

// TestEarlierFormatsDecideAlike: every committed results file of an
// earlier format (1 to 3, a field per measurement; the correctness
// checks' findings under "gates") reads as the current version
// (measurements by metric in Values, the findings in Correctness) with
// each figure where its field was, decides as the same file written in
// the current version and read back, and the file written holds no field
// of the old shape.
func TestEarlierFormatsDecideAlike(t *testing.T) {
	t.Parallel()
	files := committedResults(t)
	versions := map[int]int{}
	decided := 0 // files with rungs and decided cells
	for name, old := range files {
		var raw struct {
			Version int `json:"version"`
			Kind    string
			Rungs   []map[string]any `json:"rungs"`
			Gates   json.RawMessage  `json:"gates"`
		}
		if err := json.Unmarshal(old, &raw); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		versions[raw.Version]++
		res, err := benchdata.Parse(old, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Version != benchdata.FormatVersion {
			t.Errorf("%s: read as version %d, want %d", name, res.Version, benchdata.FormatVersion)
		}
		// Every figure of the old fields is in Values under its metric;
		// a latency of 0 (nothing answered) is not.
		for i, r := range raw.Rungs {
			if res.Benchmarks() {
				break
			}
			for _, m := range v3Fields {
				x, has := r[string(m)].(float64)
				got, stored := res.Rungs[i].Values[string(m)]
				switch {
				case !has:
					t.Errorf("%s: rungs[%d] has no %s field", name, i, m)
				case x == 0 && m != gate.RPS:
					if stored {
						t.Errorf("%s: rungs[%d]: a latency of 0 stored as a measurement of %s", name, i, m)
					}
				case !stored || got != x:
					t.Errorf("%s: rungs[%d].values[%s] = %v (stored %v), want %v", name, i, m, got, stored, x)
				}
			}
		}
		before, err := Results(res)
		if err != nil {
			t.Fatalf("%s: deciding: %v", name, err)
		}
		now, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var shape struct {
			Rungs       []map[string]json.RawMessage `json:"rungs"`
			Gates       json.RawMessage              `json:"gates"`
			Correctness json.RawMessage              `json:"correctness"`
		}
		if err := json.Unmarshal(now, &shape); err != nil {
			t.Fatal(err)
		}
		for i, r := range shape.Rungs {
			for _, m := range v3Fields {
				if _, ok := r[string(m)]; ok {
					t.Errorf("%s: version %d rungs[%d] still has a field %q", name, benchdata.FormatVersion, i, m)
				}
			}
		}
		// The findings under "gates" are under "correctness", whole.
		if hasGates := len(raw.Gates) > 0 && string(raw.Gates) != "null"; shape.Gates != nil || hasGates != (shape.Correctness != nil) {
			t.Errorf("%s: gates %s written as gates %s, correctness %s", name, raw.Gates, shape.Gates, shape.Correctness)
		}
		again, err := benchdata.Parse(now, name+" (current version)")
		if err != nil {
			t.Fatalf("%s: current version read back: %v", name, err)
		}
		after, err := Results(again)
		if err != nil {
			t.Fatalf("%s: current version deciding: %v", name, err)
		}
		if !reflect.DeepEqual(before, after) || !reflect.DeepEqual(res.Correctness, again.Correctness) {
			t.Errorf("%s: decides otherwise once written as version %d", name, benchdata.FormatVersion)
		}
		if len(raw.Rungs) > 0 && len(before.Cells) > 0 {
			decided++
		}
	}
	// What format 3 decided of them, kept: the N+1 fails on list's rps,
	// the A/A and the 1 s endpoint pass.
	for name, want := range map[string]string{
		"v3/stack-ab.json": "gate failed: 1 pre-declared regression(s): [cpus=1 memory=512MiB] list c=2 rps",
		"v3/stack-aa.json": "<nil>",
		"v3/sleep-1s.json": "<nil>",
	} {
		res, err := benchdata.Parse(files[name], name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Results(res)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(Outcome(c)); got != want {
			t.Errorf("%s: outcome %q, want %q as format 3 decided it", name, got, want)
		}
	}
	if decided < 3 || versions[benchdata.FormatVersion] > 0 {
		t.Errorf("committed results files by version %v, %d of them with decided cells: want several, all of an earlier version", versions, decided)
	}
	t.Logf("%d committed results files by version %v, %d with decided cells", len(files), versions, decided)
}
