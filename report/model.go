package report

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// model is the table model every renderer lays out. Strings in it are either
// produced here from numbers (safe in any medium) or copied verbatim from
// the input (untrusted: the renderer escapes them).
type model struct {
	in Input
	// cuts are the cells cut otherwise than the scenario's slices say
	// (their requests too slow for them), in the results' order.
	cuts []cellCut
	// parts are the resources by service of stack targets.
	parts    []partRow
	tables   []table
	failures []failureItem
	errors   []errorRow
	// uncounted is the number of rungs left out of the error distribution
	// because their round was not complete, so not decided either.
	uncounted int
	// anyPins and anyVariant say whether table headings name the pin set
	// and the variant: only when some cell has one.
	anyPins, anyVariant bool
	// usage is what each target used per cell over the decided rounds, for
	// the rungs whose resources were measured.
	usage map[sideKey]*sideUsage
	// perCore is the throughput-per-core table; nil when nothing was
	// measured.
	perCore *perCoreTable
	// generator is the load generator's CPU; nil when not measured.
	generator *generatorUsage
	// unsustained are the sides of open-loop cells that did not keep up
	// with their rate, in plan order (openloop.go).
	unsustained []unsustained
	plan        map[benchdata.Cell]int // position in the plan, built by position
	// rounds is the number of complete rounds each pin set was decided on,
	// in schedule order (rounds.go); in.Rounds is the least of them.
	rounds []pinRounds
	// incomplete is the number of rounds, over the pin sets, whose
	// uncounted rungs are.
	incomplete int
	// latency is each target's latency distribution per cell over the
	// decided rounds, for the rungs that carry a histogram (latency.go).
	latency map[sideKey]*latencyDist
	// unreadable counts the decided rungs whose histogram could not be
	// read.
	unreadable int
	// cellRounds caches the rounds each cell was decided on (rounds.go);
	// allRounds is Results.CellRounds and completeOf CompleteRoundsOf by
	// pin set, each computed once: per cell they cost cells × rungs.
	cellRounds map[benchdata.Cell]int
	allRounds  map[benchdata.Cell]int
	completeOf map[string]int
	// unresolved lists the gated ties that could not resolve their band,
	// in cell order and each cell's gated order (unresolved.go).
	unresolved []unresolvedItem
	// pairs is the number of paired slice observations each cell's
	// verdicts rest on, for the cells that have any (design.go).
	pairs map[benchdata.Cell]int
}

// table is the grid of one pin set and variant.
type table struct {
	pins    string // untrusted
	variant string // untrusted
	// latMetrics lists the latency metrics of the verdict table's columns,
	// all in unit: p95 for a service over HTTP, the mean, p90, p95 and p99
	// for gRPC as in the gRPC reference report.
	latMetrics []gate.Metric
	unit       latencyUnit
	hasErrors  bool
	cells      []gate.CellResult
	rows       []row
	// res is the resources table; nil when no rung of the table's cells
	// measured resources.
	res *resTable
	// latency holds the latency detail of the table's cells that have
	// any, in row order.
	latency []cellLatency
}

// cellLatency is the latency detail of one cell: each target's merged
// distribution (nil for a side without histograms) and the unit it prints
// in.
type cellLatency struct {
	key   gate.CellKey // untrusted names
	sides [2]*latencyDist
	unit  latencyUnit
}

// row is one cell. The numeric columns are preformatted.
type row struct {
	key              gate.CellKey // untrusted names
	baseRPS, candRPS string
	// baseLat and candLat are the latency columns, in the table's
	// latMetrics order.
	baseLat, candLat []string
	baseErr, candErr string
	// delta is the change of rps, with the paired ratio's interval when the
	// decision has one.
	delta   string
	verdict gate.Verdict
	// rounds is the number of rounds the cell was decided on.
	rounds int
	// unresolved holds the decisions of the headline metrics whose tie
	// could not resolve the band, when the headline is a tie; own is the
	// metric the row's Δ shows, which they need not name.
	unresolved []gate.Decision
	own        gate.Metric
	// gatedRegression: a fail_on rule turned this cell's regression into a
	// failure; a regression no rule gates is shown, but as not gated.
	gatedRegression bool
	errorFailure    bool
	// carriers are the metrics the headline verdict comes from when that is
	// not simply rps, so a p95 regression is not read as an rps one.
	carriers []gate.Metric
	// reason explains an inconclusive headline (untrusted).
	reason string
	// generatorBound: the load generator was saturated in this cell, so
	// its verdict measured the generator (buildGenerator).
	generatorBound bool
}

// failureItem is one entry of the failure list.
type failureItem struct {
	f     gate.Failure // Key and Reason untrusted
	delta string       // of f.Metric in the cell, "" when not meaningful
	cand  gate.SideTotals
	// calls says the run's unit of load is a gRPC call, not a request.
	calls bool
	// page is the history site's page of the cell, "" for none.
	page string
}

// errorRow is one cell and target that had failed requests.
type errorRow struct {
	cell     benchdata.Cell // untrusted names
	target   string
	requests int64
	errors   int64
	kinds    []count // untrusted keys
	statuses []count // untrusted keys
}

type count struct {
	name string
	n    int64
}

func newModel(in Input) *model {
	in = in.normalise()
	m := &model{in: in}
	m.buildRounds()
	m.buildUnresolved()
	m.buildPairs()
	m.buildCuts()
	m.buildParts()
	m.buildUsage()
	m.buildLatency()
	m.buildFailures()
	m.buildTables()
	m.buildErrors()
	m.buildPerCore()
	m.buildGenerator()
	m.buildOpenLoop()
	return m
}

func (m *model) buildTables() {
	failed := map[gate.CellKey]map[string]bool{}
	for _, f := range m.in.Comparison.Failures {
		if correctnessFailure(f.Kind) {
			continue // of a class or a command, not of a cell
		}
		if failed[f.Key] == nil {
			failed[f.Key] = map[string]bool{}
		}
		failed[f.Key][f.Kind] = true
	}
	// Cells keep the comparison's order; a pin set and variant's table
	// appears where its first cell does.
	type tableKey struct{ pins, variant string }
	index := map[tableKey]int{}
	for _, c := range m.in.Comparison.Cells {
		k := tableKey{c.Key.Pins, c.Key.Variant}
		i, ok := index[k]
		if !ok {
			i = len(m.tables)
			index[k] = i
			m.tables = append(m.tables, table{pins: k.pins, variant: k.variant})
		}
		m.anyPins = m.anyPins || k.pins != ""
		m.anyVariant = m.anyVariant || k.variant != ""
		for _, f := range c.Failures {
			if failed[c.Key] == nil {
				failed[c.Key] = map[string]bool{}
			}
			failed[c.Key][f.Kind] = true
		}
		m.tables[i].cells = append(m.tables[i].cells, c)
		r := newRow(c, failed[c.Key])
		r.rounds = m.roundsOfCell(cellOf(c.Key))
		m.tables[i].rows = append(m.tables[i].rows, r)
	}
	latMetrics := []gate.Metric{gate.P95}
	if m.isGRPC() {
		latMetrics = grpcLatency
	}
	for i := range m.tables {
		t := &m.tables[i]
		t.latMetrics = latMetrics
		var lat []float64
		for _, c := range t.cells {
			for _, mt := range t.latMetrics {
				if d, ok := c.Decision(mt); ok {
					if d.Baseline.N > 0 {
						lat = append(lat, d.Baseline.Mean)
					}
					if d.Candidate.N > 0 {
						lat = append(lat, d.Candidate.Mean)
					}
				}
			}
			t.hasErrors = t.hasErrors || c.Baseline.Errors > 0 || c.Candidate.Errors > 0
		}
		t.unit = chooseLatencyUnit(lat)
		for j, c := range t.cells {
			r := &t.rows[j]
			for _, mt := range t.latMetrics {
				base, cand := dash, dash
				if d, ok := c.Decision(mt); ok {
					base, cand = t.unit.summary(d.Baseline), t.unit.summary(d.Candidate)
				}
				r.baseLat = append(r.baseLat, base)
				r.candLat = append(r.candLat, cand)
			}
			r.baseErr = errorCell(c.Baseline)
			r.candErr = errorCell(c.Candidate)
		}
		t.res = m.newResTable(t.cells)
		for _, c := range t.cells {
			sides := [2]*latencyDist{m.latency[sideKey{cellOf(c.Key), "baseline"}], m.latency[sideKey{cellOf(c.Key), "candidate"}]}
			if sides[0] != nil || sides[1] != nil {
				t.latency = append(t.latency, cellLatency{key: c.Key, sides: sides, unit: cellUnit(t.unit, sides)})
			}
		}
	}
}

// buildLatency merges each target's histograms per cell over the decided
// rounds, the rounds the verdicts rest on. Rungs without a histogram (from
// before the results file carried them) are left out.
func (m *model) buildLatency() {
	encoded := map[sideKey][]string{}
	var keys []sideKey
	for _, g := range m.in.Results.Rungs {
		if g.Histogram == "" || !m.decided(g.Cell, g.Round) {
			continue
		}
		k := sideKey{g.Cell, g.Target}
		if _, seen := encoded[k]; !seen {
			keys = append(keys, k)
		}
		encoded[k] = append(encoded[k], g.Histogram)
	}
	m.latency = map[sideKey]*latencyDist{}
	for _, k := range keys {
		d, bad := mergeLatency(encoded[k])
		m.unreadable += bad
		if d != nil {
			m.latency[k] = d
		}
	}
}

// anyLatency says whether some table has latency detail.
func (m *model) anyLatency() bool {
	for _, t := range m.tables {
		if len(t.latency) > 0 {
			return true
		}
	}
	return false
}

// grpcLatency are the latency columns of a gRPC verdict table, the
// reference report's "avg. latency", "90 % in", "95 % in" and "99 % in".
var grpcLatency = []gate.Metric{gate.Mean, gate.P90, gate.P95, gate.P99}

// isGRPC says whether the run measured gRPC calls rather than HTTP
// requests, with benchgate's own generator or in ghz reports read from
// files: its verdict tables carry the gRPC reference report's columns and
// its prose speaks of calls.
func (m *model) isGRPC() bool {
	tool, imported := m.in.Results.Imported()
	return m.in.Results.Kind == "grpc" || imported && tool == "ghz"
}

// loadNoun is what one unit of load is called in prose and headings.
type loadNoun struct {
	one, many string // "request", "requests"
	abbr      string // in a unit: "CPU ms/req"
}

var (
	requestNoun = loadNoun{"request", "requests", "req"}
	callNoun    = loadNoun{"call", "calls", "call"}
)

// noun is the name of the run's unit of load: a gRPC run sends calls,
// anything else requests.
func (m *model) noun() loadNoun {
	if m.isGRPC() {
		return callNoun
	}
	return requestNoun
}

// tableName heads a table: "cpus=1 · csv", the pin set first as the
// gRPC report's per-CPU sections. It is "" for the one table of a grid with
// neither pins nor variants. esc escapes the names for the medium.
func (m *model) tableName(t table, esc func(string) string) string {
	var parts []string
	if m.anyPins {
		if t.pins != "" {
			parts = append(parts, esc(t.pins))
		} else {
			parts = append(parts, "(no pin set)")
		}
	}
	if m.anyVariant {
		if t.variant != "" {
			parts = append(parts, esc(t.variant))
		} else {
			parts = append(parts, "(no variant)")
		}
	}
	return strings.Join(parts, " · ")
}

// levelOf is a cell's load level in a table's concurrency column: "8",
// or "64 · 200/s" for an open loop's cell.
func levelOf(k gate.CellKey) string {
	s := strconv.Itoa(k.Concurrency)
	if k.Rate > 0 {
		s += " · " + strconv.Itoa(k.Rate) + "/s"
	}
	return s
}

// tableTitle is title followed by the table's name, if it has one.
func (m *model) tableTitle(title string, t table, esc func(string) string) string {
	if name := m.tableName(t, esc); name != "" {
		return title + " · " + name
	}
	return title
}

func newRow(c gate.CellResult, failed map[string]bool) row {
	r := row{
		key:     c.Key,
		baseRPS: dash, candRPS: dash, delta: dash,
		verdict:         c.Verdict,
		own:             gate.RPS,
		gatedRegression: c.Verdict == gate.Regression && failed["regression"],
		errorFailure:    failed["error_rate"],
	}
	if d, ok := c.Decision(gate.RPS); ok {
		r.baseRPS = rpsSummary(d.Baseline)
		r.candRPS = rpsSummary(d.Candidate)
		r.delta = deltaText(d)
	}
	// The headline comes from the gated metrics, or from rps when none is
	// gated (gate.CellResult.Verdict).
	from := c.Gated
	if len(from) == 0 {
		from = []gate.Metric{gate.RPS}
	}
	if c.Verdict != gate.Tie {
		for _, d := range c.Decisions {
			if d.Verdict == c.Verdict && slices.Contains(from, d.Metric) {
				r.carriers = append(r.carriers, d.Metric)
				if r.reason == "" {
					r.reason = d.Reason
				}
			}
		}
	}
	if slices.Equal(r.carriers, []gate.Metric{gate.RPS}) {
		r.carriers = nil
	}
	if c.Verdict == gate.Tie {
		for _, d := range c.Decisions {
			if d.Verdict == gate.Tie && d.Unresolved && slices.Contains(from, d.Metric) {
				r.unresolved = append(r.unresolved, d)
			}
		}
	}
	if c.Verdict != gate.Inconclusive {
		r.reason = ""
	}
	return r
}

func (m *model) buildFailures() {
	list := m.in.Comparison.Failures
	if !slices.ContainsFunc(list, func(f gate.Failure) bool { return !correctnessFailure(f.Kind) }) {
		// A comparison built without the summary list still carries its
		// failures per cell; a report must not read that as a pass. The
		// correctness checks' failures have no cell, so they may be all the
		// list holds.
		list = slices.Clone(list)
		for _, c := range m.in.Comparison.Cells {
			list = append(list, c.Failures...)
		}
	}
	for _, f := range list {
		it := failureItem{f: f, calls: m.isGRPC(), page: m.cellPageURL(f)}
		if correctnessFailure(f.Kind) {
			// Its key names a class, or nothing: no cell's figures
			// belong to it.
			m.failures = append(m.failures, it)
			continue
		}
		for _, c := range m.in.Comparison.Cells {
			if c.Key != f.Key {
				continue
			}
			it.cand = c.Candidate
			if d, ok := c.Decision(f.Metric); ok && f.Kind == "regression" && d.Baseline.Mean != 0 {
				it.delta = deltaText(d)
			}
		}
		m.failures = append(m.failures, it)
	}
}

// buildErrors sums failed requests per cell and target over the decided
// rounds, the same rounds the verdicts rest on.
func (m *model) buildErrors() {
	type key struct {
		cell   benchdata.Cell
		target string
	}
	sums := map[key]*errorRow{}
	kinds := map[key]map[string]int64{}
	statuses := map[key]map[string]int64{}
	type round struct {
		pins  string
		round int
	}
	incomplete := map[round]bool{}
	for _, g := range m.in.Results.Rungs {
		if !m.decided(g.Cell, g.Round) {
			m.uncounted++
			incomplete[round{g.Pins, g.Round}] = true
			continue
		}
		k := key{g.Cell, g.Target}
		e := sums[k]
		if e == nil {
			e = &errorRow{cell: g.Cell, target: g.Target}
			sums[k] = e
			kinds[k] = map[string]int64{}
			statuses[k] = map[string]int64{}
		}
		e.requests += g.Requests
		e.errors += g.ErrorCount()
		for n, v := range g.Errors {
			kinds[k][n] += v
		}
		for n, v := range g.Statuses {
			statuses[k][n] += v
		}
	}
	m.incomplete = len(incomplete)
	for k, e := range sums {
		if e.errors == 0 {
			continue
		}
		e.kinds = counts(kinds[k])
		e.statuses = counts(statuses[k])
		m.errors = append(m.errors, *e)
	}
	slices.SortFunc(m.errors, func(a, b errorRow) int {
		return cmp.Or(
			cmp.Compare(m.position(a.cell), m.position(b.cell)),
			cmp.Compare(a.cell.String(), b.cell.String()),
			cmp.Compare(targetOrder(a.target), targetOrder(b.target)),
			cmp.Compare(a.target, b.target),
		)
	})
}

// position is a cell's place in the plan's schedule order; cells the plan
// does not list come after those it does.
func (m *model) position(c benchdata.Cell) int {
	if m.plan == nil {
		m.plan = map[benchdata.Cell]int{}
		for i, p := range m.in.Results.Plan.Cells {
			if _, dup := m.plan[p]; !dup {
				m.plan[p] = i
			}
		}
	}
	if i, ok := m.plan[c]; ok {
		return i
	}
	return len(m.in.Results.Plan.Cells)
}

func targetOrder(t string) int {
	switch t {
	case "baseline":
		return 0
	case "candidate":
		return 1
	}
	return 2
}

// counts orders a tally by name so output does not depend on map order.
func counts(m map[string]int64) []count {
	var out []count
	for n, v := range m {
		if v != 0 {
			out = append(out, count{n, v})
		}
	}
	slices.SortFunc(out, func(a, b count) int { return cmp.Compare(a.name, b.name) })
	return out
}

// correctnessFailure reports the kinds of failure the correctness checks
// raise before any load: their key names at most a class and variant,
// never a cell, and they have no metric.
func correctnessFailure(kind string) bool {
	return kind == gate.FailAgreement || kind == gate.FailPreflight
}

// failuresOf counts the listed failures of one kind.
func (m *model) failuresOf(kind string) int {
	n := 0
	for _, f := range m.failures {
		if f.f.Kind == kind {
			n++
		}
	}
	return n
}
