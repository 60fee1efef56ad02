// Package importers reads other load tools' machine-readable reports into
// benchgate's results format, so a team that keeps its own load tool still
// gets the gate, the comment and the history.
//
// Each file is one repetition of one cell for one side: file i of the
// baseline and file i of the candidate form round i. The tools read are
// vegeta (vegeta report -type=json), ghz (--format json), oha (--json /
// --output-format json) and k6 (--summary-export, or the data object of
// handleSummary() written as JSON). docs/importers.md has the mapping of
// every field. GoBench reads two saved go test -bench outputs likewise,
// one side each, as benchstat reads them (docs/gobench.md), and
// ReadSuite the files of benchmark harnesses (Formats: hyperfine,
// pytest-benchmark, Google Benchmark, criterion, JMH,
// github-action-benchmark's and Bencher's JSON), each benchmark a cell.
package importers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/textsafe"
)

// tools is the one table of the load tools whose reports Read
// understands, in the order a report's fields are matched against
// theirs: a new tool is one row here and its parser.
var tools = []loadTool{
	{"vegeta", "vegeta JSON report", []string{"latencies", "status_codes", "requests"}, parseVegeta},
	{"ghz", "ghz JSON report", []string{"count", "total", "latencyDistribution", "statusCodeDistribution"}, parseGhz},
	{"oha", "oha JSON report", []string{"summary", "latencyPercentiles", "statusCodeDistribution"}, parseOha},
	{"k6", "k6 summary", []string{"metrics"}, parseK6},
}

// loadTool is one load tool whose reports Read understands.
type loadTool struct {
	name string
	// what names its report in errors: "not a vegeta JSON report".
	what string
	// identity lists the top-level fields that tell its report from the
	// others'; a report must have all of them.
	identity []string
	parse    parser
}

// Tools lists the tools whose reports Read understands, in the order a
// report's fields are matched against theirs.
var Tools = func() []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.name)
	}
	return names
}()

// toolNamed is the row of tools named name, or nil.
func toolNamed(name string) *loadTool {
	for i := range tools {
		if tools[i].name == name {
			return &tools[i]
		}
	}
	return nil
}

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
	rung     baselines.Rung // measurement fields only
	end      time.Time      // zero when the tool does not record it
	conc     int            // 0 when the tool does not record it
	concPeak bool           // conc is an observed peak (k6), not a setting
}

// parser reads one file, already checked to be a JSON object with the
// tool's identity fields.
type parser func(f *file) (measurement, error)

// article is the indefinite article before a tool's name.
func article(tool string) string {
	if strings.HasPrefix(tool, "o") {
		return "an"
	}
	return "a"
}

// Read imports one cell from tool's reports: baseline[i] and candidate[i]
// are round i. Both lists must be non-empty and of equal length. A file
// that cannot be read, is not the tool's report, or lacks a required
// figure is an error naming the file and what is wrong.
func Read(tool string, baseline, candidate []string, opt Options) (*baselines.Results, error) {
	t := toolNamed(tool)
	if t == nil {
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
			f, err := load(p, tool)
			if err != nil {
				return nil, err
			}
			m, err := t.parse(f)
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
	cell := baselines.Cell{Class: class, Concurrency: conc}

	res := &baselines.Results{
		Version: baselines.FormatVersion,
		Tool:    "benchgate import",
		Kind:    baselines.ImportedKind(tool),
		Scenario: baselines.ScenarioInfo{
			Name: name,
			Gate: defaultGate("rps"),
			Load: baselines.LoadInfo{Repetitions: n},
		},
		Env: baselines.Environment{
			Baseline:  baselines.TargetInfo{Name: "baseline", Kind: "import", Spec: strings.Join(baseline, ", ")},
			Candidate: baselines.TargetInfo{Name: "candidate", Kind: "import", Spec: strings.Join(candidate, ", ")},
		},
		Plan:   baselines.Plan{Cells: []baselines.Cell{cell}, Rounds: n},
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

// sniff names the tool whose identity fields top has, or "".
func sniff(top map[string]json.RawMessage) string {
	for _, t := range tools {
		ok := true
		for _, k := range t.identity {
			if _, has := top[k]; !has {
				ok = false
				break
			}
		}
		if ok {
			return t.name
		}
	}
	return ""
}

// file is one report being read: its path, the tool it should be from,
// and its top-level object.
type file struct {
	path string
	tool string
	what string // the tool's report, for errors
	top  obj
}

// load reads path, a regular file of at most baselines.MaxReportBytes,
// and checks that it is a JSON object with tool's identity fields.
func load(path, tool string) (*file, error) {
	b, err := baselines.ReadFileLimited(path, baselines.MaxReportBytes)
	if err != nil {
		return nil, err
	}
	return loadBytes(path, b, tool)
}

// loadBytes is load of a file's bytes.
func loadBytes(path string, b []byte, tool string) (*file, error) {
	top, err := decodeObject(path, b)
	if err != nil {
		return nil, err
	}
	t := toolNamed(tool)
	for _, k := range t.identity {
		if _, ok := top[k]; !ok {
			msg := fmt.Sprintf("%s: not %s %s: no field %q", path, article(tool), t.what, k)
			if t := sniff(top); t != "" && t != tool {
				msg += fmt.Sprintf(" (it looks like %s %s report)", article(t), t)
			}
			return nil, errors.New(msg)
		}
	}
	f := &file{path: path, tool: tool, what: t.what}
	f.top = obj{f: f, m: top}
	return f, nil
}

// decodeObject parses b as one JSON object.
func decodeObject(path string, b []byte) (map[string]json.RawMessage, error) {
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil, fmt.Errorf("%s: empty file, not a JSON report", path)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%s: not a JSON report: the file holds a JSON %s, not an object", path, te.Value)
		}
		return nil, fmt.Errorf("%s: not a JSON report: %v", path, err)
	}
	if top == nil {
		return nil, fmt.Errorf("%s: not a JSON report: the file holds null", path)
	}
	return top, nil
}

// obj is a JSON object of a report, with accessors whose errors name the
// file and the field's dotted path.
type obj struct {
	f      *file
	prefix string // "latencies." for a nested object
	m      map[string]json.RawMessage
}

func (o obj) name(k string) string { return o.prefix + k }

// errf formats an error about this file.
func (o obj) errf(format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", o.f.path, o.f.what, fmt.Sprintf(format, args...))
}

// missing is the error for a required field k that is absent or null.
func (o obj) missing(k string) error {
	if _, ok := o.m[k]; ok {
		return o.errf("field %q is null", o.name(k))
	}
	return o.errf("no field %q", o.name(k))
}

// has tells whether k is present and not null.
func (o obj) has(k string) bool {
	v, ok := o.m[k]
	return ok && !isNull(v)
}

func isNull(v json.RawMessage) bool { return strings.TrimSpace(string(v)) == "null" }

// num returns the number k; missing or null is an error.
func (o obj) num(k string) (float64, error) {
	v, ok, err := o.optNum(k)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, o.missing(k)
	}
	return v, nil
}

// optNum returns the number k, and false when it is missing or null (oha
// writes NaN as null).
func (o obj) optNum(k string) (float64, bool, error) {
	v, ok := o.m[k]
	if !ok || isNull(v) {
		return 0, false, nil
	}
	var x float64
	if err := json.Unmarshal(v, &x); err != nil {
		return 0, false, o.errf("field %q is not a number: %s", o.name(k), short(v))
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, false, nil
	}
	return x, true, nil
}

// count returns the non-negative integer k.
func (o obj) count(k string) (int64, error) {
	x, err := o.num(k)
	if err != nil {
		return 0, err
	}
	if !isCount(x) {
		return 0, o.errf("field %q is %v, not a count", o.name(k), x)
	}
	return int64(x), nil
}

// str returns the string k, "" when missing or null.
func (o obj) str(k string) (string, error) {
	v, ok := o.m[k]
	if !ok || isNull(v) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", o.errf("field %q is not a string: %s", o.name(k), short(v))
	}
	return s, nil
}

// object returns the object k; missing or null is an error.
func (o obj) object(k string) (obj, error) {
	v, ok := o.m[k]
	if !ok || isNull(v) {
		return obj{}, o.missing(k)
	}
	return o.sub(k, v)
}

// optObject returns the object k, and false when it is missing or null.
func (o obj) optObject(k string) (obj, bool, error) {
	v, ok := o.m[k]
	if !ok || isNull(v) {
		return obj{}, false, nil
	}
	s, err := o.sub(k, v)
	return s, err == nil, err
}

func (o obj) sub(k string, v json.RawMessage) (obj, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return obj{}, o.errf("field %q is not an object: %s", o.name(k), short(v))
	}
	return obj{f: o.f, prefix: o.name(k) + ".", m: m}, nil
}

// counts returns the object k as name → count; null or missing is empty.
func (o obj) counts(k string) (map[string]int64, error) {
	v, ok := o.m[k]
	if !ok || isNull(v) {
		return map[string]int64{}, nil
	}
	var m map[string]float64
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, o.errf("field %q is not an object of counts: %s", o.name(k), short(v))
	}
	out := make(map[string]int64, len(m))
	for name, x := range m {
		if !isCount(x) {
			return nil, o.errf("field %q: %s is %v, not a count", o.name(k), textsafe.Quote(name, textsafe.QuoteRunes), x)
		}
		out[name] = int64(x)
	}
	return out, nil
}

// maxCount is the largest count a report may give: past 2^53 a float64
// no longer holds every integer, and no load test sends that many
// requests. It keeps sums of counts far from int64's overflow too.
const maxCount = 1 << 53

// isCount tells whether x is a whole number from 0 to maxCount.
func isCount(x float64) bool { return x >= 0 && x <= maxCount && x == math.Trunc(x) }

// concurrencyOf is a concurrency a file records, 0 (none) when it is not
// a whole number from 1 to 2^31-1.
func concurrencyOf(x float64) int {
	if x >= 1 && x <= math.MaxInt32 && x == math.Trunc(x) {
		return int(x)
	}
	return 0
}

// byteCount is x, the value of field k, as a number of bytes: a figure
// past maxCount or below zero is no file's.
func (o obj) byteCount(k string, x float64) (int64, error) {
	if !(x >= 0 && x <= maxCount) {
		return 0, o.errf("field %q is %v, not a number of bytes", o.name(k), x)
	}
	return int64(x), nil
}

// short is a value for an error message.
func short(v json.RawMessage) string {
	// A value may be megabytes long: only its start is shown.
	long := len(v) > 1024
	if long {
		n := 1024
		for n > 0 && !utf8.RuneStart(v[n]) {
			n--
		}
		v = v[:n]
	}
	s := strings.Join(strings.Fields(string(v)), " ")
	if len(s) > 40 {
		n := 40
		for n > 0 && !utf8.RuneStart(s[n]) {
			n-- // not inside a character
		}
		s, long = s[:n], true
	}
	if long {
		s += "…"
	}
	return s
}

// time parses an RFC 3339 time; "" and Go's zero time (a report of no
// requests) are unknown.
func (o obj) time(k string) (time.Time, error) {
	s, err := o.str(k)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, o.errf("field %q is not an RFC 3339 time: %s", o.name(k), textsafe.Quote(s, textsafe.QuoteRunes))
	}
	if t.Year() <= 1 {
		return time.Time{}, nil
	}
	return t, nil
}

// kinds of baselines.Rung.Errors, as benchgate's generator counts them.
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
func addError(r *baselines.Rung, kind string, n int64) {
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
func httpStatuses(r *baselines.Rung, codes map[string]int64) int64 {
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
func latencies(o obj, r *baselines.Rung, unit float64, required bool, missing func(key string) error, figs ...latency) error {
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
func setRPS(o obj, r *baselines.Rung, answered int64, field string) error {
	if !(r.Duration > 0) {
		return o.errf("no measured time (%s is 0): the throughput cannot be computed", field)
	}
	r.SetValue(gate.RPS, float64(answered)/r.Duration)
	return nil
}
