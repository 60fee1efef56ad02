package importers

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// files returns testdata/TOOL/NAME for each name.
func files(tool string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join("testdata", tool, n)
	}
	return out
}

var (
	threeBase = []string{"baseline-1.json", "baseline-2.json", "baseline-3.json"}
	threeCand = []string{"candidate-1.json", "candidate-2.json", "candidate-3.json"}
)

// approx compares with a relative tolerance of 1e-9.
func approx(t *testing.T, what string, got, want float64) {
	t.Helper()
	if got == want {
		return
	}
	if math.Abs(got-want) > 1e-9*math.Max(math.Abs(got), math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// raw reads a JSON file as a generic value, for cross-checks against the
// tool's own figures.
func raw(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func read(t *testing.T, tool string, base, cand []string, opt Options) *benchdata.Results {
	t.Helper()
	r, err := Read(tool, base, cand, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkShape checks what every import has: the results envelope, the plan,
// the gate section and the round and target of every rung.
func checkShape(t *testing.T, r *benchdata.Results, tool string, base, cand []string, cell benchdata.Cell) {
	t.Helper()
	n := len(base)
	if r.Version != benchdata.FormatVersion || r.Kind != "import:"+tool || r.Tool != "benchgate import" || r.Status != "complete" {
		t.Errorf("envelope: version %d kind %q tool %q status %q", r.Version, r.Kind, r.Tool, r.Status)
	}
	if !reflect.DeepEqual(r.Plan.Cells, []benchdata.Cell{cell}) || r.Plan.Rounds != n {
		t.Errorf("plan = %+v, want cell %+v, %d rounds", r.Plan, cell, n)
	}
	if want := (gate.Section{Confidence: 0.95, TieWithin: 0.10, MaxErrorRate: 0.001, FailOn: []gate.Rule{{Metric: "rps"}}}); !reflect.DeepEqual(r.Scenario.Gate, want) {
		t.Errorf("gate = %+v, want %+v", r.Scenario.Gate, want)
	}
	if r.Scenario.File != "" || r.Scenario.Load.Repetitions != n {
		t.Errorf("scenario file %q, repetitions %d", r.Scenario.File, r.Scenario.Load.Repetitions)
	}
	wantConc := []int(nil)
	if cell.Concurrency > 0 {
		wantConc = []int{cell.Concurrency}
	}
	if !reflect.DeepEqual(r.Scenario.Load.Concurrency, wantConc) {
		t.Errorf("load concurrency = %v, want %v", r.Scenario.Load.Concurrency, wantConc)
	}
	wantB := benchdata.TargetInfo{Name: "baseline", Kind: "import", Spec: strings.Join(base, ", ")}
	wantC := benchdata.TargetInfo{Name: "candidate", Kind: "import", Spec: strings.Join(cand, ", ")}
	if r.Env.Baseline != wantB || r.Env.Candidate != wantC {
		t.Errorf("targets = %+v / %+v", r.Env.Baseline, r.Env.Candidate)
	}
	if len(r.Rungs) != 2*n {
		t.Fatalf("%d rungs, want %d", len(r.Rungs), 2*n)
	}
	for i, g := range r.Rungs {
		round, pos := i/2, i%2
		target := []string{"baseline", "candidate"}[pos]
		if g.Round != round || g.Target != target || g.Position != pos || g.Order != "AB" || g.Cell != cell {
			t.Errorf("rung %d: round %d target %q position %d order %q cell %+v", i, g.Round, g.Target, g.Position, g.Order, g.Cell)
		}
		if g.Histogram != "" {
			t.Errorf("rung %d has a histogram", i)
		}
	}
	if got := r.CompleteRounds(); got != n {
		t.Errorf("CompleteRounds = %d, want %d", got, n)
	}
}

func TestVegeta(t *testing.T) {
	t.Parallel()
	base, cand := files("vegeta", threeBase...), files("vegeta", threeCand...)
	r := read(t, "vegeta", base, cand, Options{})
	checkShape(t, r, "vegeta", base, cand, benchdata.Cell{Class: "load"})
	if r.Scenario.Name != "imported vegeta results" {
		t.Errorf("name = %q", r.Scenario.Name)
	}

	// baseline-1.json by hand: duration 1994675326 ns + wait 2661513 ns.
	g := r.Rungs[0]
	approx(t, "duration", g.Duration, 1.997336839)
	approx(t, "rps", g.Value(gate.RPS), 400/1.997336839)
	approx(t, "p50", g.Value(gate.P50), 0.002622816)
	approx(t, "p90", g.Value(gate.P90), 0.002785234)
	approx(t, "p95", g.Value(gate.P95), 0.002848527)
	approx(t, "p99", g.Value(gate.P99), 0.003279891)
	approx(t, "max", g.Max, 0.004157321)
	approx(t, "mean", g.Value(gate.Mean), 0.002644607)
	if g.Requests != 400 || g.Bytes != 6000 || g.Errors != nil ||
		!reflect.DeepEqual(g.Statuses, map[string]int64{"200": 400}) {
		t.Errorf("requests %d bytes %d errors %v statuses %v", g.Requests, g.Bytes, g.Errors, g.Statuses)
	}
	if want := time.Date(2026, 11, 30, 3, 12, 52, 8239416, time.UTC); !g.Start.Equal(want) {
		t.Errorf("start = %v, want %v", g.Start, want)
	}
	if want := time.Date(2026, 11, 30, 3, 12, 52, 8239416, time.UTC); !r.Env.Start.Equal(want) {
		t.Errorf("env start = %v, want %v", r.Env.Start, want)
	}
	// The last file's "end".
	endC3, _ := time.Parse(time.RFC3339Nano, raw(t, cand[2])["end"].(string))
	if !r.Env.End.Equal(endC3) {
		t.Errorf("env end = %v, want %v", r.Env.End, endC3)
	}

	// Every answer is a 200: the rate is vegeta's own "throughput".
	paths := append(append([]string{}, base...), cand...)
	for _, g := range r.Rungs {
		p := paths[g.Round]
		if g.Target == "candidate" {
			p = paths[3+g.Round]
		}
		approx(t, p+" rps vs vegeta throughput", g.Value(gate.RPS), raw(t, p)["throughput"].(float64))
	}

	// Real recordings: the slowed build (-slow sleep=5) answers later in
	// every round.
	for i := 0; i < len(r.Rungs); i += 2 {
		b, c := r.Rungs[i], r.Rungs[i+1]
		if !(c.Value(gate.P50) > b.Value(gate.P50)) || !(c.Value(gate.P95) > b.Value(gate.P95)) {
			t.Errorf("round %d: candidate p50 %v p95 %v, baseline p50 %v p95 %v", b.Round, c.Value(gate.P50), c.Value(gate.P95), b.Value(gate.P50), b.Value(gate.P95))
		}
	}
}

func TestVegetaErrors(t *testing.T) {
	t.Parallel()
	r := read(t, "vegeta", files("vegeta", "status-errors.json"), files("vegeta", "refused.json"), Options{})
	// status-errors.json: 380 × 200 and 20 × 500 from the demo with
	// -errors sleep=0.05; duration 1994722722 ns + wait 414592 ns.
	g := r.Rungs[0]
	if g.Requests != 400 || !reflect.DeepEqual(g.Statuses, map[string]int64{"200": 380, "500": 20}) ||
		!reflect.DeepEqual(g.Errors, map[string]int64{"status": 20}) || g.ErrorRate() != 0.05 {
		t.Errorf("status errors: requests %d statuses %v errors %v", g.Requests, g.Statuses, g.Errors)
	}
	approx(t, "rps (500s answered too)", g.Value(gate.RPS), 400/1.995137314)
	// refused.json: a closed port, every request "connection refused".
	g = r.Rungs[1]
	if g.Requests != 50 || g.Statuses != nil || !reflect.DeepEqual(g.Errors, map[string]int64{"connect": 50}) || g.Value(gate.RPS) != 0 {
		t.Errorf("refused: requests %d statuses %v errors %v rps %v", g.Requests, g.Statuses, g.Errors, g.Value(gate.RPS))
	}
}

func TestGhz(t *testing.T) {
	t.Parallel()
	base, cand := files("ghz", threeBase...), files("ghz", threeCand...)
	r := read(t, "ghz", base, cand, Options{})
	// -c 4 is read from the files.
	checkShape(t, r, "ghz", base, cand, benchdata.Cell{Class: "load", Concurrency: 4})

	// baseline-1.json by hand: count 500, total 68488202 ns, date
	// 2026-11-30T03:13:44Z.
	g := r.Rungs[0]
	approx(t, "duration", g.Duration, 0.068488202)
	approx(t, "rps", g.Value(gate.RPS), 500/0.068488202)
	approx(t, "p50", g.Value(gate.P50), 0.000400742)
	approx(t, "p90", g.Value(gate.P90), 0.000693366)
	approx(t, "p95", g.Value(gate.P95), 0.000980791)
	approx(t, "p99", g.Value(gate.P99), 0.002650123)
	approx(t, "mean", g.Value(gate.Mean), 0.000495669)
	approx(t, "max", g.Max, 0.004001308)
	if g.Requests != 500 || g.Errors != nil || g.Bytes != 0 ||
		!reflect.DeepEqual(g.Statuses, map[string]int64{"OK": 500}) {
		t.Errorf("requests %d errors %v statuses %v", g.Requests, g.Errors, g.Statuses)
	}
	if want := time.Date(2026, 11, 30, 3, 13, 44, 0, time.UTC).Add(-68488202); !g.Start.Equal(want) {
		t.Errorf("start = %v, want %v", g.Start, want)
	}
	for i, g := range r.Rungs {
		p := append(append([]string{}, base...), cand...)[g.Round+3*(i%2)]
		approx(t, p+" rps vs ghz rps", g.Value(gate.RPS), raw(t, p)["rps"].(float64)) // no errors: equal
	}
	// Real recordings: the candidate server sleeps 2ms per call.
	for i := 0; i < len(r.Rungs); i += 2 {
		if b, c := r.Rungs[i], r.Rungs[i+1]; !(c.Value(gate.P50) > b.Value(gate.P50)) || !(c.Value(gate.RPS) < b.Value(gate.RPS)) {
			t.Errorf("round %d: candidate p50 %v rps %v, baseline p50 %v rps %v", b.Round, c.Value(gate.P50), c.Value(gate.RPS), b.Value(gate.P50), b.Value(gate.RPS))
		}
	}
}

func TestGhzErrors(t *testing.T) {
	t.Parallel()
	r := read(t, "ghz", files("ghz", "status-errors.json", "duration.json"), files("ghz", "refused.json", "candidate-1.json"),
		Options{Concurrency: 4})

	// status-errors.json: the server answers Unavailable to about 10%.
	g := r.Rungs[0]
	if g.Requests != 200 || !reflect.DeepEqual(g.Statuses, map[string]int64{"OK": 183, "Unavailable": 17}) ||
		!reflect.DeepEqual(g.Errors, map[string]int64{"status": 17}) {
		t.Errorf("status errors: requests %d statuses %v errors %v", g.Requests, g.Statuses, g.Errors)
	}
	approx(t, "rps", g.Value(gate.RPS), 200/0.029673267)

	// refused.json: nothing listens; no call answered, no distribution.
	g = r.Rungs[1]
	if g.Requests != 20 || g.Statuses != nil || !reflect.DeepEqual(g.Errors, map[string]int64{"connect": 20}) ||
		g.Value(gate.RPS) != 0 || g.Value(gate.P50) != 0 || g.Value(gate.P95) != 0 || g.Value(gate.Mean) != 0 {
		t.Errorf("refused: %+v", g)
	}

	// duration.json: -z 1s; the 4 calls in flight at the end fail with
	// "transport is closing" and are left out.
	g = r.Rungs[2]
	if g.Requests != 1167 || !reflect.DeepEqual(g.Statuses, map[string]int64{"OK": 1167}) || g.Errors != nil {
		t.Errorf("duration: requests %d statuses %v errors %v", g.Requests, g.Statuses, g.Errors)
	}
	approx(t, "rps", g.Value(gate.RPS), 1167/1.001571805)
}

func TestOha(t *testing.T) {
	t.Parallel()
	base, cand := files("oha", threeBase...), files("oha", threeCand...)
	r := read(t, "oha", base, cand, Options{Class: "items", Concurrency: 8, Name: "demo under oha"})
	checkShape(t, r, "oha", base, cand, benchdata.Cell{Class: "items", Concurrency: 8})
	if r.Scenario.Name != "demo under oha" {
		t.Errorf("name = %q", r.Scenario.Name)
	}
	// baseline-1.json by hand: 118342 × 200 over 10.000512 s, 8 aborted at
	// the deadline (left out).
	g := r.Rungs[0]
	if g.Requests != 118342 || g.Errors != nil || g.Bytes != 135619932 ||
		!reflect.DeepEqual(g.Statuses, map[string]int64{"200": 118342}) || !g.Start.IsZero() {
		t.Errorf("requests %d errors %v bytes %d statuses %v start %v", g.Requests, g.Errors, g.Bytes, g.Statuses, g.Start)
	}
	approx(t, "duration", g.Duration, 10.000512)
	approx(t, "rps", g.Value(gate.RPS), 118342/10.000512)
	approx(t, "mean", g.Value(gate.Mean), 0.0006721)
	approx(t, "p50", g.Value(gate.P50), 0.000611)
	approx(t, "p90", g.Value(gate.P90), 0.00106925)
	approx(t, "p95", g.Value(gate.P95), 0.0012831)
	approx(t, "p99", g.Value(gate.P99), 0.00192465)
	approx(t, "p99.9", g.Value(gate.P999), 0.003956225)
	approx(t, "max", g.Max, 0.012873)
	if !r.Env.Start.IsZero() || !r.Env.End.IsZero() {
		t.Errorf("oha records no times, env has %v – %v", r.Env.Start, r.Env.End)
	}
	for i := 0; i < len(r.Rungs); i += 2 {
		if b, c := r.Rungs[i], r.Rungs[i+1]; !(c.Value(gate.P50) > b.Value(gate.P50)) || !(c.Value(gate.RPS) < b.Value(gate.RPS)) {
			t.Errorf("round %d: candidate p50 %v rps %v, baseline p50 %v rps %v", b.Round, c.Value(gate.P50), c.Value(gate.RPS), b.Value(gate.P50), b.Value(gate.RPS))
		}
	}
}

func TestOhaErrors(t *testing.T) {
	t.Parallel()
	r := read(t, "oha", files("oha", "errors.json"), files("oha", "refused.json"), Options{})
	g := r.Rungs[0]
	wantErr := map[string]int64{"status": 412, "timeout": 3, "reset": 2}
	if g.Requests != 51234+412+3+2 || !reflect.DeepEqual(g.Errors, wantErr) ||
		!reflect.DeepEqual(g.Statuses, map[string]int64{"200": 51234, "500": 412}) {
		t.Errorf("errors: requests %d errors %v statuses %v", g.Requests, g.Errors, g.Statuses)
	}
	approx(t, "rps", g.Value(gate.RPS), (51234+412)/10.000711)
	approx(t, "p95", g.Value(gate.P95), 0.00276564)
	g = r.Rungs[1]
	if g.Requests != 1534 || !reflect.DeepEqual(g.Errors, map[string]int64{"connect": 1534}) || g.Value(gate.RPS) != 0 || g.Value(gate.P50) != 0 || g.Value(gate.Mean) != 0 {
		t.Errorf("refused: %+v", g)
	}
}

func TestK6(t *testing.T) {
	t.Parallel()
	base, cand := files("k6", threeBase...), files("k6", threeCand...)
	r := read(t, "k6", base, cand, Options{})
	// 8 VUs: the peak of the vus metric.
	checkShape(t, r, "k6", base, cand, benchdata.Cell{Class: "load", Concurrency: 8})
	// baseline-1.json by hand: http_reqs 61234 at 6122.840985/s, no failure.
	g := r.Rungs[0]
	if g.Requests != 61234 || g.Errors != nil || g.Statuses != nil || g.Bytes != 77338542 {
		t.Errorf("requests %d errors %v statuses %v bytes %d", g.Requests, g.Errors, g.Statuses, g.Bytes)
	}
	approx(t, "duration", g.Duration, 61234/6122.840985)
	approx(t, "rps", g.Value(gate.RPS), 6122.840985)
	approx(t, "mean", g.Value(gate.Mean), 0.00117712)
	approx(t, "p50", g.Value(gate.P50), 0.001051)
	approx(t, "p90", g.Value(gate.P90), 0.00179721)
	approx(t, "p95", g.Value(gate.P95), 0.00218608)
	approx(t, "p99", g.Value(gate.P99), 0.0037836)
	approx(t, "max", g.Max, 0.0203894)
	for i := 0; i < len(r.Rungs); i += 2 {
		if b, c := r.Rungs[i], r.Rungs[i+1]; !(c.Value(gate.P50) > b.Value(gate.P50)) || !(c.Value(gate.RPS) < b.Value(gate.RPS)) {
			t.Errorf("round %d: candidate p50 %v rps %v, baseline p50 %v rps %v", b.Round, c.Value(gate.P50), c.Value(gate.RPS), b.Value(gate.P50), b.Value(gate.RPS))
		}
	}
}

func TestK6ErrorsAndHandleSummary(t *testing.T) {
	t.Parallel()
	r := read(t, "k6", files("k6", "errors.json", "summary-baseline.json"), files("k6", "baseline-1.json", "summary-candidate.json"), Options{})
	// errors.json: 57 of 40412 requests failed.
	g := r.Rungs[0]
	if g.Requests != 40412 || !reflect.DeepEqual(g.Errors, map[string]int64{"other": 57}) {
		t.Errorf("errors: requests %d errors %v", g.Requests, g.Errors)
	}
	rate := raw(t, "testdata/k6/errors.json")["metrics"].(map[string]any)["http_reqs"].(map[string]any)["rate"].(float64)
	d := 40412 / rate
	approx(t, "rps", g.Value(gate.RPS), (40412-57)/d)
	// summary-baseline.json: handleSummary() data, default trend stats (no
	// p(99)), duration from state.testRunDurationMs.
	g = r.Rungs[2]
	approx(t, "duration", g.Duration, 10.000902)
	approx(t, "rps", g.Value(gate.RPS), 61003/10.000902)
	approx(t, "p50", g.Value(gate.P50), 0.001049)
	approx(t, "p95", g.Value(gate.P95), 0.00218192)
	if g.Value(gate.P99) != 0 || g.Requests != 61003 || g.Errors != nil || g.Concurrency != 8 {
		t.Errorf("handleSummary: p99 %v requests %d errors %v c %d", g.Value(gate.P99), g.Requests, g.Errors, g.Concurrency)
	}
}

// TestSniff: every test file is told apart by its tool's identity fields,
// which name the tool a wrong one looks like in Read's errors.
func TestSniff(t *testing.T) {
	t.Parallel()
	for _, tool := range Tools {
		paths, err := filepath.Glob(filepath.Join("testdata", tool, "*.json"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("%s: no test files (%v)", tool, err)
		}
		for _, p := range paths {
			f := &file{path: p, format: tool}
			v, err := readFile(f)
			if err != nil {
				t.Fatal(err)
			}
			top, err := v.object()
			if got := sniff(formatNamed(tool), top.m); err != nil || got == nil || got.name != tool {
				t.Errorf("sniff(%s) = %v, %v; want %q", p, got, err, tool)
			}
		}
	}
	if got := sniff(formatNamed("vegeta"), map[string]jval{"hello": {}}); got != nil {
		t.Errorf("sniff of another JSON object = %q, want none", got.name)
	}
}

// edit writes a copy of src, changed by fn, as dir/name and returns its path.
func edit(t *testing.T, dir, name, src string, fn func(m map[string]any)) string {
	t.Helper()
	m := raw(t, src)
	fn(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestErrors(t *testing.T) {
	vb, vc := files("vegeta", "baseline-1.json")[0], files("vegeta", "candidate-1.json")[0]
	gb := files("ghz", "baseline-1.json")[0]
	ob := files("oha", "baseline-1.json")[0]
	kb := files("k6", "baseline-1.json")[0]
	dir := t.TempDir()
	obj := func(m map[string]any, k string) map[string]any { return m[k].(map[string]any) }

	noLat := edit(t, dir, "no-latencies.json", vb, func(m map[string]any) { delete(m, "latencies") })
	no95 := edit(t, dir, "no-95th.json", vb, func(m map[string]any) { delete(obj(m, "latencies"), "95th") })
	badNum := edit(t, dir, "bad-number.json", vb, func(m map[string]any) { m["requests"] = "many" })
	ghzNo95 := edit(t, dir, "ghz-no-95.json", gb, func(m map[string]any) {
		d := m["latencyDistribution"].([]any)
		m["latencyDistribution"] = append(d[:5:5], d[6:]...)
	})
	ghzNoDist := edit(t, dir, "ghz-no-dist.json", gb, func(m map[string]any) { m["latencyDistribution"] = nil })
	ghzC8 := edit(t, dir, "ghz-c8.json", gb, func(m map[string]any) { obj(m, "options")["concurrency"] = 8 })
	ohaNullP95 := edit(t, dir, "oha-null-p95.json", ob, func(m map[string]any) { obj(m, "latencyPercentiles")["p95"] = nil })
	ohaNoTime := edit(t, dir, "oha-zero-total.json", ob, func(m map[string]any) { obj(m, "summary")["total"] = 0 })
	k6NoP95 := edit(t, dir, "k6-no-p95.json", kb, func(m map[string]any) { delete(obj(obj(m, "metrics"), "http_req_duration"), "p(95)") })
	k6NoHTTP := edit(t, dir, "k6-grpc.json", kb, func(m map[string]any) { delete(obj(m, "metrics"), "http_reqs") })
	notJSON := filepath.Join(dir, "report.txt")
	if err := os.WriteFile(notJSON, []byte("Requests [total] 400\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name      string
		tool      string
		base      []string
		cand      []string
		opt       Options
		want      []string // substrings of the error
		wantStart string   // its start, when the error is about a file
	}{
		{"unknown tool", "wrk", []string{vb}, []string{vc}, Options{}, []string{`unknown tool "wrk"`, "vegeta, ghz, oha, k6"}, ""},
		{"no files", "vegeta", nil, nil, Options{}, []string{"no files"}, ""},
		{"no baseline files", "vegeta", nil, []string{vc}, Options{}, []string{"no baseline files"}, ""},
		{"no candidate files", "vegeta", []string{vb}, []string{}, Options{}, []string{"no candidate files"}, ""},
		{"unequal counts", "vegeta", []string{vb, vb}, []string{vc}, Options{}, []string{"2 baseline files but 1 candidate files", "round i"}, ""},
		{"negative concurrency", "vegeta", []string{vb}, []string{vc}, Options{Concurrency: -1}, []string{"concurrency -1"}, ""},
		{"unreadable file", "vegeta", []string{vb}, []string{filepath.Join(dir, "absent.json")}, Options{}, []string{"absent.json", "no such file"}, ""},
		{"a directory", "vegeta", []string{dir}, []string{vc}, Options{}, []string{dir}, ""},
		{"not JSON", "vegeta", []string{vb}, []string{notJSON}, Options{}, []string{"not a vegeta JSON report: invalid character"}, notJSON + ":1:1: "},
		{"wrong tool: ghz as vegeta", "vegeta", []string{gb}, []string{vc}, Options{},
			[]string{`not a vegeta JSON report: no field "latencies" (it looks like a ghz report)`}, gb + ": "},
		{"wrong tool: vegeta as ghz", "ghz", []string{gb}, []string{vc}, Options{},
			[]string{`not a ghz JSON report: no field "count" (it looks like a vegeta report)`}, vc + ": "},
		{"wrong tool: k6 as oha", "oha", []string{kb}, []string{ob}, Options{},
			[]string{`not an oha JSON report: no field "summary" (it looks like a k6 report)`}, kb + ": "},
		{"wrong tool: oha as k6", "k6", []string{ob}, []string{kb}, Options{},
			[]string{`not a k6 summary: no field "metrics" (it looks like an oha report)`}, ob + ": "},
		{"missing identity field", "vegeta", []string{vb}, []string{noLat}, Options{}, []string{`not a vegeta JSON report: no field "latencies"`}, noLat + ": "},
		{"missing p95", "vegeta", []string{no95}, []string{vc}, Options{}, []string{`vegeta JSON report: no field "latencies.95th"`}, no95 + ":1:200: "},
		{"not a number", "vegeta", []string{badNum}, []string{vc}, Options{}, []string{`field "requests" is not a number`}, badNum + ":1:403: "},
		{"ghz without 95%", "ghz", []string{ghzNo95}, []string{gb}, Options{}, []string{`"latencyDistribution" has no 95% entry`}, ghzNo95 + ": "},
		{"ghz without distribution", "ghz", []string{gb}, []string{ghzNoDist}, Options{}, []string{`no "latencyDistribution" although 500 calls succeeded`}, ghzNoDist + ": "},
		{"ghz concurrencies differ", "ghz", []string{gb}, []string{ghzC8}, Options{}, []string{"concurrency 4", "at 8", "one cell"}, ""},
		{"oha null p95", "oha", []string{ob}, []string{ohaNullP95}, Options{}, []string{`field "latencyPercentiles.p95" is null`}, ohaNullP95 + ":1:785: "},
		{"oha without time", "oha", []string{ohaNoTime}, []string{ob}, Options{}, []string{"no measured time (summary.total is 0)"}, ohaNoTime + ": "},
		{"k6 without p(95)", "k6", []string{k6NoP95}, []string{kb}, Options{}, []string{`metric "http_req_duration" has no "p(95)" (add it to --summary-trend-stats)`}, k6NoP95 + ": "},
		{"k6 without HTTP", "k6", []string{kb}, []string{k6NoHTTP}, Options{}, []string{`no metric "http_reqs"`, "HTTP"}, k6NoHTTP + ": "},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Read(c.tool, c.base, c.cand, c.opt)
			if err == nil {
				t.Fatalf("no error; results %+v", r)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if c.wantStart != "" && !strings.HasPrefix(err.Error(), c.wantStart) {
				t.Errorf("error %q does not start with %q", err, c.wantStart)
			}
		})
	}

	// The brief's example, run from the files' directory.
	t.Chdir(dir)
	edit(t, ".", "b2.json", filepath.Join(dir, "no-latencies.json"), func(map[string]any) {})
	_, err := Read("vegeta", []string{"no-95th.json"}, []string{"b2.json"}, Options{})
	// The field's path, and where in the file the object missing it is.
	if err == nil || err.Error() != `no-95th.json:1:200: vegeta JSON report: no field "latencies.95th"` {
		t.Errorf("error = %v", err)
	}
	_, err = Read("vegeta", []string{"bad-number.json"}, []string{"b2.json"}, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "bad-number.json:1:403: ") {
		t.Errorf("error = %v", err)
	}
	_, err = Read("vegeta", []string{"b2.json"}, []string{"b2.json"}, Options{})
	if want := `b2.json: not a vegeta JSON report: no field "latencies"`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestConcurrency(t *testing.T) {
	t.Parallel()
	gb, gc := files("ghz", "baseline-1.json"), files("ghz", "candidate-1.json")
	// The option wins over the files.
	r := read(t, "ghz", gb, gc, Options{Concurrency: 16})
	if r.Plan.Cells[0].Concurrency != 16 || r.Rungs[1].Concurrency != 16 {
		t.Errorf("concurrency = %d", r.Plan.Cells[0].Concurrency)
	}
	// A ghz run with a concurrency schedule has no one concurrency.
	dir := t.TempDir()
	step := edit(t, dir, "step.json", gb[0], func(m map[string]any) {
		m["options"].(map[string]any)["concurrency-schedule"] = "step"
	})
	r = read(t, "ghz", []string{step}, []string{step}, Options{})
	if c := r.Plan.Cells[0].Concurrency; c != 0 || r.Scenario.Load.Concurrency != nil {
		t.Errorf("step schedule: concurrency %d, load %v", c, r.Scenario.Load.Concurrency)
	}
	// k6 peaks that differ (arrival-rate executors start VUs as needed)
	// leave the cell without a concurrency rather than fail.
	kb := files("k6", "baseline-1.json")[0]
	peak := edit(t, dir, "k6-peak.json", kb, func(m map[string]any) {
		m["metrics"].(map[string]any)["vus"].(map[string]any)["max"] = 11
	})
	r = read(t, "k6", []string{kb}, []string{peak}, Options{})
	if c := r.Plan.Cells[0].Concurrency; c != 0 {
		t.Errorf("k6 peaks 8 and 11: concurrency %d, want 0", c)
	}
}

// TestRoundTrip writes an import as results.json and reads it back.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tool := range Tools {
		r := read(t, tool, files(tool, threeBase...), files(tool, threeCand...), Options{})
		dir := t.TempDir()
		if err := benchdata.Write(dir, r); err != nil {
			t.Fatal(err)
		}
		back, err := benchdata.Read(filepath.Join(dir, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(back.Rungs) != 6 || back.Kind != "import:"+tool || back.CompleteRounds() != 3 {
			t.Errorf("%s: read back %d rungs, kind %q, %d complete rounds", tool, len(back.Rungs), back.Kind, back.CompleteRounds())
		}
		for i := range r.Rungs {
			a, b := r.Rungs[i], back.Rungs[i]
			if a.Value(gate.RPS) != b.Value(gate.RPS) || a.Value(gate.P95) != b.Value(gate.P95) || a.Requests != b.Requests || !a.Start.Equal(b.Start) {
				t.Errorf("%s rung %d changed on disk: %+v vs %+v", tool, i, a, b)
			}
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		`Get "http://127.0.0.1:18099/": dial tcp 0.0.0.0:0->127.0.0.1:18099: connect: connection refused`: "connect",
		`Get "http://10.0.0.1/": dial tcp 10.0.0.1:80: i/o timeout`:                                       "connect",
		`Get "http://x/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`:     "timeout",
		`Get "http://x/": read tcp 127.0.0.1:5->127.0.0.1:80: read: connection reset by peer`:             "reset",
		`Get "http://x/": EOF`:                       "reset",
		"timeout":                                    "timeout",
		"Connection refused (os error 111)":          "connect",
		"Connection reset by peer (os error 104)":    "reset",
		"connection closed before message completed": "reset",
		`connection error: desc = "transport: Error while dialing dial tcp 127.0.0.1:1: connect: refused"`: "connect",
		"Redirection limit has reached": "other",
		"invalid header value":          "other",
	} {
		if got := classify(msg); got != want {
			t.Errorf("classify(%q) = %q, want %q", msg, got, want)
		}
	}
}
