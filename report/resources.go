package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/linux"
	"github.com/benchgate/benchgate/internal/numtext"
)

// Resources: what each target used (cores, CPU per request, memory) and
// what the load generator used. The gate decides cpu_per_req, mem_mean and
// mem_peak like any metric, and their intervals come from its decisions;
// cores and throughput per core are means over the rungs of the decided
// rounds, and the generator's peak is over every rung. A rung whose
// ResourceSource is "" measured nothing: its zeros are left out everywhere.

// sideKey is one target in one cell.
type sideKey struct {
	cell   benchdata.Cell
	target string
}

// sideUsage sums one target's measured rungs of a cell, then holds their
// means.
type sideUsage struct {
	sources []string // in order of first appearance
	rungs   int      // measured rungs of the decided rounds
	cores   float64  // mean of Rung.Cores
	rps     float64  // mean throughput of the same rungs
	// cpuPerReq is the mean of Rung.CPUPerRequest over the measured rungs
	// that answered anything (cpuRungs of them).
	cpuPerReq float64
	cpuRungs  int
	memMean   float64 // bytes
	memPeak   float64 // bytes
	// genCPU and genAnswered sum the load generator's CPU seconds and the
	// answers over the rungs that measured it.
	genCPU      float64
	genAnswered int64
}

// cellOf is the results file's name of a decided cell.
func cellOf(k gate.CellKey) benchdata.Cell {
	return benchdata.Cell(k)
}

func (m *model) side(k gate.CellKey, target string) *sideUsage {
	return m.usage[sideKey{cellOf(k), target}]
}

func (m *model) buildUsage() {
	m.usage = map[sideKey]*sideUsage{}
	for _, g := range m.in.Results.Rungs {
		if g.ResourceSource == "" || !m.decided(g.Cell, g.Round) {
			continue
		}
		k := sideKey{g.Cell, g.Target}
		u := m.usage[k]
		if u == nil {
			u = &sideUsage{}
			m.usage[k] = u
		}
		if !slices.Contains(u.sources, g.ResourceSource) {
			u.sources = append(u.sources, g.ResourceSource)
		}
		u.rungs++
		u.cores += g.Cores()
		u.rps += g.Value(gate.RPS)
		u.memMean += float64(g.MemMean)
		u.memPeak += float64(g.MemPeak)
		if g.Answered() > 0 {
			u.cpuRungs++
			u.cpuPerReq += g.CPUPerRequest()
		}
		if g.GenCPUSeconds > 0 {
			u.genCPU += g.GenCPUSeconds
			u.genAnswered += g.Answered()
		}
	}
	for _, u := range m.usage {
		n := float64(u.rungs)
		u.cores /= n
		u.rps /= n
		u.memMean /= n
		u.memPeak /= n
		if u.cpuRungs > 0 {
			u.cpuPerReq /= float64(u.cpuRungs)
		}
	}
}

// sourceThreat says, as a markdown sentence, when the two targets'
// resources were not measured alike: by different means, or on one side
// only. "" when they were, or when nothing was measured.
func (m *model) sourceThreat() string {
	sources := map[string][]string{}
	for k, u := range m.usage {
		for _, s := range u.sources {
			if !slices.Contains(sources[k.target], s) {
				sources[k.target] = append(sources[k.target], s)
			}
		}
	}
	base, cand := sources["baseline"], sources["candidate"]
	slices.Sort(base)
	slices.Sort(cand)
	switch {
	case len(base) == 0 && len(cand) == 0:
		return ""
	case len(base) == 0 || len(cand) == 0:
		only := "baseline"
		if len(cand) > 0 {
			only = "candidate"
		}
		return "Only the " + only + "'s resources were measured: the resource figures describe one side and compare nothing."
	case !slices.Equal(base, cand):
		return "The targets' resources were read by different means (baseline: " + md(strings.Join(base, ", ")) +
			"; candidate: " + md(strings.Join(cand, ", ")) + "): what each counts differs, so their CPU and memory figures are not measured alike."
	}
	return ""
}

// resTable is the resources table of one pin set and variant.
type resTable struct {
	cpu  latencyUnit // CPU time per request
	mem  latencyUnit // memory
	rows []resRow
}

// resRow is one cell. The numeric columns are preformatted.
type resRow struct {
	key        gate.CellKey // untrusted names
	base, cand resCells
	gen        string // the load generator's CPU per request, both sides'
	dCPU, dMem string // Δ of CPU per request and of peak memory
	verdicts   []resVerdict
}

type resCells struct {
	cores, cpu, memMean, memPeak string
}

// resVerdict is the decision of one resource metric in a cell; gated when
// a fail_on rule turned its regression into a failure.
type resVerdict struct {
	metric  gate.Metric
	verdict gate.Verdict
	gated   bool
	// d is the decision, for an unresolved tie's resolution.
	d gate.Decision
}

// newResTable lays out the resources of one table's cells, or returns nil
// when none of them measured any.
func (m *model) newResTable(cells []gate.CellResult) *resTable {
	measured := false
	for _, c := range cells {
		for _, mt := range gate.ResourceMetrics {
			_, ok := c.Decision(mt)
			measured = measured || ok
		}
		measured = measured || m.side(c.Key, "baseline") != nil || m.side(c.Key, "candidate") != nil
	}
	if !measured {
		return nil
	}
	gatedRegression := map[gate.CellKey]map[gate.Metric]bool{}
	for _, f := range m.failures {
		if f.f.Kind == "regression" {
			if gatedRegression[f.f.Key] == nil {
				gatedRegression[f.f.Key] = map[gate.Metric]bool{}
			}
			gatedRegression[f.f.Key][f.f.Metric] = true
		}
	}
	// value is what a column shows, as a number: the gate's mean where it
	// decided the metric, else the mean of the measured rungs.
	type value struct {
		s  gate.Summary
		ok bool
	}
	pick := func(c gate.CellResult, mt gate.Metric, target string) value {
		if d, ok := c.Decision(mt); ok {
			if target == "baseline" {
				return value{d.Baseline, d.Baseline.N > 0}
			}
			return value{d.Candidate, d.Candidate.N > 0}
		}
		u := m.side(c.Key, target)
		switch {
		case u == nil:
			return value{}
		case mt == gate.CPUPerReq && u.cpuRungs > 0:
			return value{gate.Summary{Mean: u.cpuPerReq}, true}
		case mt == gate.MemMean:
			return value{gate.Summary{Mean: u.memMean}, true}
		case mt == gate.MemPeak:
			return value{gate.Summary{Mean: u.memPeak}, true}
		}
		return value{}
	}
	var cpus, mems []float64
	for _, c := range cells {
		for _, t := range []string{"baseline", "candidate"} {
			if v := pick(c, gate.CPUPerReq, t); v.ok {
				cpus = append(cpus, v.s.Mean)
			}
			for _, mt := range []gate.Metric{gate.MemMean, gate.MemPeak} {
				if v := pick(c, mt, t); v.ok {
					mems = append(mems, v.s.Mean)
				}
			}
		}
	}
	rt := &resTable{cpu: chooseCPUUnit(cpus), mem: chooseMemUnit(mems)}
	show := func(u latencyUnit, v value) string {
		switch {
		case !v.ok:
			return dash
		case v.s.N == 0:
			// Not decided by the gate: a mean of rungs, with no interval
			// to show.
			return u.plain(v.s.Mean)
		}
		return u.summary(v.s)
	}
	delta := func(c gate.CellResult, mt gate.Metric) string {
		d, ok := c.Decision(mt)
		if !ok {
			return dash
		}
		return deltaText(d)
	}
	for _, c := range cells {
		r := resRow{key: c.Key, dCPU: delta(c, gate.CPUPerReq), dMem: delta(c, gate.MemPeak), gen: dash}
		var genCPU float64
		var genAnswered int64
		for _, t := range []string{"baseline", "candidate"} {
			if u := m.side(c.Key, t); u != nil {
				genCPU, genAnswered = genCPU+u.genCPU, genAnswered+u.genAnswered
			}
		}
		if genAnswered > 0 {
			r.gen = rt.cpu.plain(genCPU / float64(genAnswered))
		}
		for _, t := range []string{"baseline", "candidate"} {
			rc := resCells{
				cores:   dash,
				cpu:     show(rt.cpu, pick(c, gate.CPUPerReq, t)),
				memMean: show(rt.mem, pick(c, gate.MemMean, t)),
				memPeak: show(rt.mem, pick(c, gate.MemPeak, t)),
			}
			if u := m.side(c.Key, t); u != nil {
				rc.cores = cores(u.cores)
			}
			if t == "baseline" {
				r.base = rc
			} else {
				r.cand = rc
			}
		}
		for _, mt := range gate.ResourceMetrics {
			if d, ok := c.Decision(mt); ok {
				r.verdicts = append(r.verdicts, resVerdict{
					metric: mt, verdict: d.Verdict,
					gated: d.Verdict == gate.Regression && gatedRegression[c.Key][mt],
					d:     d,
				})
			}
		}
		rt.rows = append(rt.rows, r)
	}
	return rt
}

// resVerdictText is a resources row's verdict column: each resource
// metric that did not tie, grouped by verdict, then the ties that could
// not resolve their band with the regression they rule out, or "tie". A gated
// regression is marked as in the verdict table.
func resVerdictText(vs []resVerdict, markdown bool) string {
	if len(vs) == 0 {
		return dash
	}
	esc := cleanTerminal
	if markdown {
		esc = md
	}
	var gated, ungated, inconclusive, improved []string
	var unresolved []gate.Decision
	for _, v := range vs {
		n := esc(string(v.metric))
		switch v.verdict {
		case gate.Regression:
			if v.gated {
				gated = append(gated, n)
			} else {
				ungated = append(ungated, n)
			}
		case gate.Inconclusive:
			inconclusive = append(inconclusive, n)
		case gate.Improvement:
			improved = append(improved, n)
		case gate.Tie:
			if v.d.Unresolved {
				unresolved = append(unresolved, v.d)
			}
		}
	}
	var parts []string
	add := func(word string, names []string) {
		if len(names) > 0 {
			parts = append(parts, word+" ("+strings.Join(names, ", ")+")")
		}
	}
	if markdown {
		add("**regression**", gated)
	} else {
		add("REGRESSION", gated)
	}
	add("regression, not gated", ungated)
	add("inconclusive", inconclusive)
	add("improvement", improved)
	if len(unresolved) > 0 {
		parts = append(parts, "tie ("+rulesOut(unresolved, "", esc)+")")
	}
	if len(parts) == 0 {
		return "tie"
	}
	return strings.Join(parts, "; ")
}

// resSeverity is the verdict a resources row is coloured by.
func resSeverity(vs []resVerdict) gate.Verdict {
	out := gate.Tie
	for _, v := range vs {
		switch {
		case v.verdict == gate.Regression:
			return gate.Regression
		case v.verdict == gate.Inconclusive:
			out = gate.Inconclusive
		case v.verdict == gate.Improvement && out == gate.Tie:
			out = gate.Improvement
		}
	}
	return out
}

// perCoreTable is throughput per core used, per cell and target, as the
// reference report's "throughput vs CPU cores used".
type perCoreTable struct {
	cpu                 latencyUnit
	pinsCol, variantCol bool
	rows                []perCoreRow
}

type perCoreRow struct {
	key                      gate.CellKey // untrusted names
	target                   string
	rps, cores, perCore, cpu string
}

// buildPerCore lists every cell and target with measured rungs, in the
// comparison's order. Throughput and cores are means over the same
// measured rungs, so rps per core is the one column divided by the other.
func (m *model) buildPerCore() {
	t := &perCoreTable{}
	var cpus []float64
	type pending struct {
		key    gate.CellKey
		target string
		u      *sideUsage
	}
	var list []pending
	for _, c := range m.in.Comparison.Cells {
		for _, target := range []string{"baseline", "candidate"} {
			u := m.side(c.Key, target)
			if u == nil {
				continue
			}
			list = append(list, pending{c.Key, target, u})
			if u.cpuRungs > 0 {
				cpus = append(cpus, u.cpuPerReq)
			}
			t.pinsCol = t.pinsCol || c.Key.Pins != ""
			t.variantCol = t.variantCol || c.Key.Variant != ""
		}
	}
	if len(list) == 0 {
		return
	}
	t.cpu = chooseCPUUnit(cpus)
	for _, p := range list {
		r := perCoreRow{key: p.key, target: p.target,
			rps: strconv.FormatFloat(p.u.rps, 'f', 1, 64), cores: cores(p.u.cores), perCore: dash, cpu: dash}
		if p.u.cores > 0 {
			r.perCore = strconv.FormatFloat(p.u.rps/p.u.cores, 'f', 1, 64)
		}
		if p.u.cpuRungs > 0 {
			r.cpu = t.cpu.plain(p.u.cpuPerReq)
		}
		t.rows = append(t.rows, r)
	}
	m.perCore = t
}

// saturation is the share of its CPUs at which the load generator is
// taken to be the bottleneck; ceilingShare the share above which two
// sides at the same throughput are taken to have met the generator's
// ceiling.
const (
	saturation   = 0.9
	ceilingShare = 0.75
)

// generatorUsage is the load generator's CPU over every measured rung.
type generatorUsage struct {
	peakCores float64 // max over rungs of GenCPUSeconds / Duration
	// peakShare is the max over rungs of that as a share of the CPUs the
	// generator could use in the rung; shareCPUs is that number in the rung
	// of the maximum, 0 when no rung's number is known. sharePinned says
	// whether those CPUs were the pin set's generator_cpus, in pin set
	// sharePins, or the whole runner.
	peakShare   float64
	shareCPUs   int
	sharePinned bool
	sharePins   string // untrusted
	// saturated lists the cells, in plan order, in which some rung had the
	// generator at or above saturation of its CPUs, or in which both
	// sides hit the same throughput ceiling with the generator at its
	// peak (ceiling).
	saturated []benchdata.Cell // untrusted names
	// client is the HTTP client the load was sent with ("fast",
	// "net/http"); "" when the results do not say.
	client string
}

func (m *model) buildGenerator() {
	env := m.in.Results.Env
	pins := map[string]benchdata.PinInfo{}
	for _, p := range env.Pins {
		pins[p.Name] = p
	}
	var g *generatorUsage
	seen := map[benchdata.Cell]bool{}
	// Per cell: the generator's highest share of its CPUs, and each
	// side's throughput, for the ceiling below.
	type cellUse struct {
		share float64
		rps   [2]float64
		rungs [2]int
	}
	cells := map[benchdata.Cell]*cellUse{}
	var order []benchdata.Cell
	for _, r := range m.in.Results.Rungs {
		if r.ResourceSource == "" || r.Duration <= 0 {
			continue
		}
		if g == nil {
			g = &generatorUsage{}
		}
		used := r.GenCPUSeconds / r.Duration
		g.peakCores = max(g.peakCores, used)
		n, pinned := env.CPUs, false
		if p, ok := pins[r.Pins]; ok && p.GeneratorCPUs != "" {
			n, pinned = cpusetSize(p.GeneratorCPUs), true
		}
		if n <= 0 {
			continue
		}
		share := used / float64(n)
		if g.shareCPUs == 0 || share > g.peakShare {
			g.peakShare, g.shareCPUs, g.sharePinned, g.sharePins = share, n, pinned, r.Pins
		}
		if share >= saturation && !seen[r.Cell] {
			seen[r.Cell] = true
			g.saturated = append(g.saturated, r.Cell)
		}
		cu := cells[r.Cell]
		if cu == nil {
			cu = &cellUse{}
			cells[r.Cell] = cu
			order = append(order, r.Cell)
		}
		cu.share = max(cu.share, share)
		side := 0
		if r.Target == "candidate" {
			side = 1
		}
		cu.rps[side] += r.Value(gate.RPS)
		cu.rungs[side]++
	}
	if g == nil {
		return
	}
	// The ceiling: both sides within 2% of each other's throughput while
	// the generator used most of its CPUs (ceilingShare), as much as it
	// used anywhere in the run. Two builds that differ meet there when
	// neither is what limits the throughput.
	for _, c := range order {
		cu := cells[c]
		if seen[c] || cu.rungs[0] == 0 || cu.rungs[1] == 0 || cu.share < ceilingShare || cu.share < 0.95*g.peakShare {
			continue
		}
		b, k := cu.rps[0]/float64(cu.rungs[0]), cu.rps[1]/float64(cu.rungs[1])
		if b > 0 && math.Abs(b-k) <= 0.02*max(b, k) {
			seen[c] = true
			g.saturated = append(g.saturated, c)
		}
	}
	g.client = m.in.Results.Scenario.Load.HTTPClient
	slices.SortStableFunc(g.saturated, func(a, b benchdata.Cell) int {
		return cmp.Compare(m.position(a), m.position(b))
	})
	m.generator = g
	for ti := range m.tables {
		for ri, r := range m.tables[ti].rows {
			m.tables[ti].rows[ri].generatorBound = seen[cellOf(r.key)]
		}
	}
}

// text is the generator's line of the environment.
func (g *generatorUsage) text(esc func(string) string) string {
	s := ""
	switch g.client {
	case "fast":
		s = "benchgate's HTTP/1.1 client; "
	case "net/http":
		s = "Go's net/http client (load.http_client); "
	case "http2":
		s = "Go's net/http client over HTTP/2 (load.http_client); "
	case "":
	default:
		s = esc(g.client) + " client; "
	}
	s += "peak CPU " + share(g.peakCores) + " of one core"
	switch {
	case g.shareCPUs == 0:
		s += "; the CPUs available to it were not recorded"
	case g.sharePinned:
		where := plural(g.shareCPUs, "pinned CPU", "pinned CPUs")
		if g.sharePins != "" {
			where += " in pin set " + esc(g.sharePins)
		}
		s += ", at most " + share(g.peakShare) + " of the CPUs available to it (" + where + ")"
	default:
		s += ", at most " + share(g.peakShare) + " of the CPUs available to it (the runner's " +
			plural(g.shareCPUs, "CPU", "CPUs") + ")"
	}
	return s
}

// saturationText is the warning for a generator near saturation; "" when
// it never was. At most a few cells are named.
func (g *generatorUsage) saturationText(esc func(string) string) string {
	if g == nil || len(g.saturated) == 0 {
		return ""
	}
	const shown = 5
	var names []string
	for i, c := range g.saturated {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(g.saturated)-shown))
			break
		}
		names = append(names, esc(c.String()))
	}
	where := "cell "
	if len(g.saturated) > 1 {
		where = "cells "
	}
	return "the load generator was near saturation (" + share(saturation) + " or more of the CPUs available to it, or both sides at one throughput with it at its peak) in " +
		where + strings.Join(names, ", ") + "; throughput there may be the generator's limit, not the target's"
}

// cpusetSize counts the CPUs of a Linux cpuset such as "0-3,5"; 0 when it
// does not parse.
func cpusetSize(s string) int {
	cpus, err := linux.ParseCPUList(s)
	if err != nil {
		return 0
	}
	return len(cpus)
}

// cores prints CPU use in cores with two decimals, as the reference report.
func cores(f float64) string {
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// share prints a fraction as a whole percentage: "13%", "142%".
var share = numtext.Share

// chooseCPUUnit picks one unit for the CPU time per request of a table:
// milliseconds, or microseconds when every value is under 0.1 ms; at least
// one decimal, more so that the smallest value keeps three significant
// digits (a Go handler's 1.6 ms/req is not rounded to 2), at most three.
func chooseCPUUnit(seconds []float64) latencyUnit {
	lo, hi := positiveRange(seconds)
	u := latencyUnit{name: "ms", scale: 1e-3, dec: 1}
	if hi == 0 {
		return u
	}
	if hi < 1e-4 {
		u = latencyUnit{name: "µs", scale: 1e-6, dec: 1}
	}
	switch lo /= u.scale; {
	case lo >= 10:
		u.dec = 1
	case lo >= 1:
		u.dec = 2
	default:
		u.dec = 3
	}
	return u
}

// chooseMemUnit picks one unit for the memory of a table: MiB with one
// decimal, or GiB with two when some value reaches 1024 MiB.
func chooseMemUnit(bytes []float64) latencyUnit {
	_, hi := positiveRange(bytes)
	if hi >= 1<<30 {
		return latencyUnit{name: "GiB", scale: 1 << 30, dec: 2}
	}
	return latencyUnit{name: "MiB", scale: 1 << 20, dec: 1}
}

// positiveRange is the smallest and largest finite positive value; 0, 0
// when there is none.
func positiveRange(vs []float64) (lo, hi float64) {
	lo = math.Inf(1)
	for _, v := range vs {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if hi == 0 {
		return 0, 0
	}
	return lo, hi
}

// plain prints a value in the unit without an interval.
func (u latencyUnit) plain(v float64) string {
	return strconv.FormatFloat(v/u.scale, 'f', u.dec, 64)
}
