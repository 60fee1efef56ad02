// Package importers reads other tools' machine-readable files into
// benchgate's results format, so a team that keeps its own load tool or
// benchmark harness still gets the gate, the comment and the history.
//
// What it reads is one table (formats): a load tool's reports, each file
// one repetition of one cell for one side, file i of the baseline and
// file i of the candidate forming round i (Read), or a benchmark suite's
// files, each benchmark a cell (ReadSuite). Both are JSON, read by one
// walker that bounds what it splits and names the file, line and field
// in its errors. GoBench reads two saved go test -bench outputs, one
// side each, as benchstat reads them (docs/gobench.md).
// docs/importers.md has the mapping of every field.
package importers

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/textsafe"
)

// Options sets what the files do not say.
type Options struct {
	// Class names the imported cell. When empty: the scenario's class
	// if it has only one, so its fail_on globs match, else "load".
	Class string
	// Concurrency is the cell's concurrency. 0 takes it from the files
	// where the tool records it (ghz: -c; k6: the peak of the vus metric),
	// else the cell has none.
	Concurrency int
	// Name is the scenario name in reports. When empty: the scenario's,
	// else "imported TOOL results".
	Name string
	// Scenario, when not nil, decides the import: the results record
	// its gate section, file and hash.
	Scenario *Scenario
}

// DefaultClass is the class of the imported cell when Options.Class is
// empty.
const DefaultClass = "load"

// measurement is one file read: the rung's measurement fields, and what the
// file says about when it ran and at what concurrency.
type measurement struct {
	rung     benchdata.Rung // measurement fields only
	end      time.Time      // zero when the tool does not record it
	conc     int            // 0 when the tool does not record it
	concPeak bool           // conc is an observed peak (k6), not a setting
}

// Read imports one cell from tool's reports: baseline[i] and candidate[i]
// are round i. Both lists must be non-empty and of equal length. A file
// that cannot be read, is not the tool's report, or lacks a required
// figure is an error naming the file and what is wrong.
func Read(tool string, baseline, candidate []string, opt Options) (*benchdata.Results, error) {
	t := formatNamed(tool)
	if t == nil || t.load == nil {
		return nil, fmt.Errorf("import: unknown tool %s: want one of %s", textsafe.Quote(tool, textsafe.QuoteRunes), strings.Join(Tools, ", "))
	}
	switch {
	case len(baseline) == 0 && len(candidate) == 0:
		return nil, errors.New("import: no files: give one report per repetition for the baseline and for the candidate")
	case len(baseline) == 0:
		return nil, errors.New("import: no baseline files: give one report per repetition for each side")
	case len(candidate) == 0:
		return nil, errors.New("import: no candidate files: give one report per repetition for each side")
	case len(baseline) != len(candidate):
		return nil, fmt.Errorf("import: %d baseline files but %d candidate files: file i of the baseline and file i of the candidate form round i, so the counts must be equal",
			len(baseline), len(candidate))
	}
	if opt.Concurrency < 0 {
		return nil, fmt.Errorf("import: concurrency %d, want 0 (from the files) or more", opt.Concurrency)
	}

	n := len(baseline)
	sides := []struct {
		target string
		paths  []string
	}{{"baseline", baseline}, {"candidate", candidate}}
	ms := make([][]measurement, 2)
	for s, side := range sides {
		for _, p := range side.paths {
			m, err := readReport(&file{path: p, format: tool})
			if err != nil {
				return nil, err
			}
			ms[s] = append(ms[s], m)
		}
	}

	conc, err := concurrency(opt.Concurrency, sides[0].paths, sides[1].paths, ms)
	if err != nil {
		return nil, err
	}
	class, name := opt.Class, opt.Name
	if sc := opt.Scenario; sc != nil {
		if class == "" && len(sc.Classes) == 1 {
			class = sc.Classes[0].Name
		}
		if name == "" {
			name = sc.Name
		}
	}
	if class == "" {
		class = DefaultClass
	}
	if name == "" {
		name = "imported " + tool + " results"
	}
	cell := benchdata.Cell{Class: class, Concurrency: conc}

	res := &benchdata.Results{
		Version: benchdata.FormatVersion,
		Tool:    "benchgate import",
		Kind:    benchdata.ImportedKind(tool),
		Scenario: benchdata.ScenarioInfo{
			Name: name,
			Gate: defaultGate("rps"),
			Load: benchdata.LoadInfo{Repetitions: n},
		},
		Env: benchdata.Environment{
			Baseline:  benchdata.TargetInfo{Name: "baseline", Kind: "import", Spec: strings.Join(baseline, ", ")},
			Candidate: benchdata.TargetInfo{Name: "candidate", Kind: "import", Spec: strings.Join(candidate, ", ")},
		},
		Plan:   benchdata.Plan{Cells: []benchdata.Cell{cell}, Rounds: n},
		Status: "complete",
	}
	if conc > 0 {
		res.Scenario.Load.Concurrency = []int{conc}
	}
	if sc := opt.Scenario; sc != nil {
		res.Scenario.Gate = sc.Info.Gate
		res.Scenario.File, res.Scenario.Hash, res.Scenario.Source = sc.Info.File, sc.Info.Hash, sc.Info.Source
	}
	for i := range n {
		for s, side := range sides {
			m := ms[s][i]
			r := m.rung
			r.Cell = cell
			r.Round = i
			r.Target = side.target
			// The files were made by separate runs of the tool, in an
			// order benchgate never saw: there was no interleaving it
			// could record, so every pair is written as baseline first
			// ("AB"). Running A and B alternately is the user's part
			// (docs/importers.md).
			r.Position = s
			r.Order = "AB"
			res.Rungs = append(res.Rungs, r)
			if !r.Start.IsZero() && (res.Env.Start.IsZero() || r.Start.Before(res.Env.Start)) {
				res.Env.Start = r.Start
			}
			end := m.end
			if end.IsZero() && !r.Start.IsZero() {
				end = r.Start.Add(time.Duration(r.Duration * float64(time.Second)))
			}
			if !end.IsZero() && end.After(res.Env.End) {
				res.Env.End = end
			}
		}
	}
	return res, nil
}

// concurrency decides the cell's concurrency: the option when set, else
// what the files record. Settings that differ between files are an error
// (one import is one cell); observed peaks that differ (k6 arrival-rate
// executors start VUs as needed) leave the cell without a concurrency.
func concurrency(opt int, base, cand []string, ms [][]measurement) (int, error) {
	if opt > 0 {
		return opt, nil
	}
	paths := [][]string{base, cand}
	c, from, peak := 0, "", false
	for s := range ms {
		for i, m := range ms[s] {
			if m.conc <= 0 {
				continue
			}
			switch {
			case c == 0:
				c, from, peak = m.conc, paths[s][i], m.concPeak
			case m.conc != c && (peak || m.concPeak):
				return 0, nil
			case m.conc != c:
				return 0, fmt.Errorf("import: %s was run at concurrency %d but %s at %d: one import is one cell, at one concurrency",
					from, c, paths[s][i], m.conc)
			}
		}
	}
	return c, nil
}

// readReport reads f, a load tool's report: a JSON object with the
// tool's identity fields.
func readReport(f *file) (measurement, error) {
	v, err := readFile(f)
	if err != nil {
		return measurement{}, err
	}
	top, err := topObject(f, v)
	if err != nil {
		return measurement{}, err
	}
	return formatNamed(f.format).load(top)
}

// concurrencyOf is a concurrency a file records, 0 (none) when it is not
// a whole number from 1 to 2^31-1.
func concurrencyOf(x float64) int {
	if x >= 1 && x <= math.MaxInt32 && x == math.Trunc(x) {
		return int(x)
	}
	return 0
}

// kinds of benchdata.Rung.Errors, as benchgate's generator counts them.
const (
	errStatus  = "status"
	errTimeout = "timeout"
	errConnect = "connect"
	errReset   = "reset"
	errOther   = "other"
)

// classify maps a tool's transport error message to an error kind.
func classify(msg string) string {
	m := strings.ToLower(msg)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(m, s) {
				return true
			}
		}
		return false
	}
	// Connection failures first: a dial that timed out is a failure to
	// connect, as benchgate's generator counts it.
	switch {
	case has("connection refused", "connect:", "dial tcp", "dial udp", "error while dialing",
		"error trying to connect", "tcp connect error", "no such host", "network is unreachable",
		"no route to host", "host is unreachable", "no record returned from dns", "name resolution",
		"failed to lookup address", "connection error"):
		return errConnect
	case has("timeout", "timed out", "deadline exceeded", "deadlineexceeded"):
		return errTimeout
	case has("connection reset", "broken pipe", "eof", "connection closed", "transport is closing",
		"incompletemessage", "connection aborted"):
		return errReset
	}
	return errOther
}

// addError adds n errors of kind to r.
func addError(r *benchdata.Rung, kind string, n int64) {
	if n <= 0 {
		return
	}
	if r.Errors == nil {
		r.Errors = map[string]int64{}
	}
	r.Errors[kind] += n
}

// httpStatuses sets r.Statuses from an HTTP status distribution (code →
// count, every code an answer) and counts the answers outside 2xx as
// status errors, as benchgate's generator does by default. It returns the
// number of answers.
func httpStatuses(r *benchdata.Rung, codes map[string]int64) int64 {
	var answered int64
	for code, n := range codes {
		if n == 0 {
			continue
		}
		if r.Statuses == nil {
			r.Statuses = map[string]int64{}
		}
		r.Statuses[code] += n
		answered += n
		if !strings.HasPrefix(code, "2") || len(code) != 3 {
			addError(r, errStatus, n)
		}
	}
	return answered
}

// latency is one latency figure of a report: the metric it is (or
// slowest, the rung's Max), its field, and whether the gate needs it (p50
// and p95 are required).
type latency struct {
	metric gate.Metric
	key    string
	need   bool
}

// slowest stands for the slowest request's latency in a latency figure:
// a rung's Max, not a metric.
const slowest gate.Metric = "max"

// latencies reads figures from o into r, divided by unit to make
// seconds. A needed figure that is missing or null is an error when
// required (the file has latencies to report), made by missing. A figure
// the file does not have, or has as 0, is not stored: not measured.
func latencies(o jobj, r *benchdata.Rung, unit float64, required bool, missing func(key string) error, figs ...latency) error {
	for _, x := range figs {
		v, ok, err := o.optNum(x.key)
		if err != nil {
			return err
		}
		if !ok && x.need && required {
			return missing(x.key)
		}
		// Whole nanoseconds: finer is noise of the unit conversion.
		v = math.Round(v/unit*1e9) / 1e9
		switch {
		case x.metric == slowest:
			r.Max = v
		case ok && v != 0:
			r.SetValue(x.metric, v)
		}
	}
	return nil
}

// setRPS sets r's throughput from the answered requests over the measured
// time, refusing a file without a measured time.
func setRPS(o jobj, r *benchdata.Rung, answered int64, field string) error {
	if !(r.Duration > 0) {
		return o.v.f.errf("no measured time (%s is 0): the throughput cannot be computed", field)
	}
	r.SetValue(gate.RPS, float64(answered)/r.Duration)
	return nil
}
