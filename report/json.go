package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// JSONVersion is the version of the document JSON writes. It changes only
// when a field changes meaning or disappears; new fields may appear.
// Version 2 names what the correctness checks found `correctness`, which
// was `gates`.
const JSONVersion = 2

// The document's own types, with explicit tags, keep its shape stable when
// the gate's or the results file's types change.
type (
	jsonDoc struct {
		Version  int          `json:"version"`
		Tool     string       `json:"tool"`
		Scenario jsonScenario `json:"scenario"`
		Status   string       `json:"status"`
		Error    string       `json:"error,omitempty"`
		Rounds   jsonRounds   `json:"rounds"`
		Outcome  gate.Outcome `json:"outcome"`
		// Counts are of cells: headline verdicts, and the cells with a
		// gated tie that could not resolve its band (unresolved).
		Counts   gate.Counts  `json:"counts"`
		Settings jsonSettings `json:"settings"`
		Policy   jsonPolicy   `json:"policy"`
		// Schedule is how the two sides were interleaved.
		Schedule jsonSchedule `json:"schedule"`
		// Correctness is what the correctness checks found before any
		// load; absent when the results file records none.
		Correctness *jsonCorrectness `json:"correctness,omitempty"`
		Cells       []jsonCell       `json:"cells"`
		Failures    []jsonFailure    `json:"failures"`
		// Unresolved lists every gated tie that could not resolve its
		// band, under every gate.unresolved policy (under fail they are
		// in Failures too, of kind "unresolved").
		Unresolved []jsonUnresolved `json:"unresolved"`
		// Family is what the whole gate's error control did
		// (docs/statistics.md#the-whole-gate); absent when it did not
		// apply (gate.false_failure off, or no gated paired decision).
		Family      *gate.Family `json:"family,omitempty"`
		Environment jsonEnv      `json:"environment"`
		// Generator is the load generator's CPU; absent when no rung
		// measured resources.
		Generator *jsonGenerator `json:"generator,omitempty"`
		// Unsustained lists the sides of open-loop cells that did not
		// keep up with their rate (docs/loadgen.md); absent when every
		// side did, or the load was a closed loop.
		Unsustained []jsonUnsustained `json:"unsustained,omitempty"`
	}
	jsonUnsustained struct {
		Key    jsonKey `json:"cell"`
		Target string  `json:"target"`
		// Asked is the requests due in the measured windows, Late and
		// Unsent those sent more than 1 ms late and never sent;
		// AnsweredRPS the answers a second, against the cell's rate.
		Asked       int64   `json:"asked"`
		Late        int64   `json:"late"`
		Unsent      int64   `json:"unsent"`
		AnsweredRPS float64 `json:"answered_rps"`
	}
	jsonScenario struct {
		Name    string `json:"name"`
		File    string `json:"file"`
		Hash    string `json:"hash"`
		Seed    uint64 `json:"seed"`
		Profile string `json:"profile"`
	}
	jsonRounds struct {
		// Decided is the least over the pin sets of the complete rounds:
		// every cell rests on at least this many.
		Decided int `json:"decided"`
		Planned int `json:"planned"`
		// MaxPlanned is the most rounds a cell could take with adaptive
		// rounds; absent for a fixed design. Each cell's own count is its
		// rounds.
		MaxPlanned int `json:"max_planned,omitempty"`
		// PinSets holds each pin set's complete rounds, which its cells
		// are decided on, in schedule order; empty without pin sets.
		PinSets []jsonPinRounds `json:"pin_sets"`
	}
	jsonPinRounds struct {
		Pins    string `json:"pins"`
		Decided int    `json:"decided"`
	}
	jsonSettings struct {
		Confidence float64 `json:"confidence"`
		TieWithin  float64 `json:"tie_within"`
		// TieWithinFor holds the metrics with a band of their own.
		TieWithinFor map[gate.Metric]float64 `json:"tie_within_for,omitempty"`
		// Rule is the decision rule, "overlap" or "paired".
		Rule gate.DecisionRule `json:"rule"`
		// Looks is the number of looks of an adaptive design (1 for a
		// fixed one); LookConfidences, for an adaptive design, the
		// confidence of each look's intervals, 1 − Confidence spent over
		// the looks by O'Brien–Fleming-type spending (each decision
		// records the one it was made at); EffectiveConfidence the last
		// look's, the only one of a fixed design.
		Looks               int       `json:"looks"`
		LookConfidences     []float64 `json:"look_confidences,omitempty"`
		EffectiveConfidence float64   `json:"effective_confidence"`
		// Batches is the most batches a round's pairs are split into for
		// the paired interval.
		Batches int `json:"batches"`
		// FalseFailure is gate.false_failure, the whole gate's error; 0
		// when off.
		FalseFailure float64 `json:"false_failure"`
	}
	jsonSchedule struct {
		// Interleave is "round" or "slice"; SliceS and SettleS are the
		// slices' measured and settling seconds, absent under round.
		Interleave string  `json:"interleave"`
		SliceS     float64 `json:"slice_s,omitempty"`
		SettleS    float64 `json:"settle_s,omitempty"`
	}
	jsonUnresolved struct {
		Key        jsonKey `json:"cell"`
		Metric     string  `json:"metric"`
		Resolution float64 `json:"resolution"`
		RulesOut   float64 `json:"rules_out"`
		TieWithin  float64 `json:"tie_within"`
		Reason     string  `json:"reason"`
	}
	jsonPolicy struct {
		FailOn []jsonRule `json:"fail_on"`
		// MaxErrorRate is null when the check is disabled.
		MaxErrorRate *float64 `json:"max_error_rate"`
		// MaxErrorIncrease is omitted when the check is disabled.
		MaxErrorIncrease *float64 `json:"max_error_increase,omitempty"`
		// Unresolved is what a gated unresolved tie does: "warn", "fail"
		// or "pass".
		Unresolved gate.Unresolved `json:"unresolved"`
	}
	jsonRule struct {
		Metric      string   `json:"metric"`
		Classes     []string `json:"classes"`
		Concurrency []string `json:"concurrency"`
		Variants    []string `json:"variants"`
	}
	jsonKey struct {
		// Pins is the pin set's name, absent when the scenario has none.
		Pins        string `json:"pins,omitempty"`
		Variant     string `json:"variant"`
		Class       string `json:"class"`
		Concurrency int    `json:"concurrency"`
		// Rate is an open-loop cell's requests a second; absent for
		// the closed loop.
		Rate int `json:"rate,omitempty"`
	}
	jsonCell struct {
		Key     jsonKey      `json:"cell"`
		Verdict gate.Verdict `json:"verdict"`
		Gated   []string     `json:"gated"`
		// Rounds is the number of rounds the cell was decided on.
		Rounds int `json:"rounds"`
		// Unresolved lists the gated metrics whose tie could not resolve
		// the band.
		Unresolved []string       `json:"unresolved"`
		Decisions  []jsonDecision `json:"decisions"`
		Baseline   jsonTotals     `json:"baseline"`
		Candidate  jsonTotals     `json:"candidate"`
		// Resources are means over the decided rounds' measured rungs;
		// absent when neither target's resources were measured. The
		// decisions on cpu_per_req, mem_mean and mem_peak are in Decisions.
		Resources *jsonResources `json:"resources,omitempty"`
		// Latency is each target's latency distribution over the decided
		// rounds' rungs; absent when no rung of the cell carries a
		// histogram.
		Latency *jsonLatency `json:"latency,omitempty"`
	}
	jsonLatency struct {
		// A side is null when none of its rungs carries a histogram.
		Baseline  *jsonLatencySide `json:"baseline"`
		Candidate *jsonLatencySide `json:"candidate"`
	}
	jsonLatencySide struct {
		// Rungs is the number of histograms merged; Count the requests
		// they hold. Latencies are in seconds.
		Rungs       int                 `json:"rungs"`
		Count       int64               `json:"count"`
		Min         float64             `json:"min"`
		Mean        float64             `json:"mean"`
		Max         float64             `json:"max"`
		Percentiles jsonLatencyPercents `json:"percentiles"`
	}
	jsonLatencyPercents struct {
		P10  float64 `json:"p10"`
		P25  float64 `json:"p25"`
		P50  float64 `json:"p50"`
		P75  float64 `json:"p75"`
		P90  float64 `json:"p90"`
		P95  float64 `json:"p95"`
		P99  float64 `json:"p99"`
		P999 float64 `json:"p99.9"`
	}
	// What the correctness checks found mirrors benchdata.Correctness
	// with the document's own tags.
	jsonCorrectness struct {
		Preflight []jsonPreflight `json:"preflight"`
		Agreement *jsonAgreement  `json:"agreement"` // null when not probed
		Absent    []jsonAbsent    `json:"absent"`
	}
	jsonPreflight struct {
		Name      string   `json:"name"`
		Target    string   `json:"target"`
		Command   string   `json:"command"`
		Pass      bool     `json:"pass"`
		ExitCode  int      `json:"exit_code"`
		LastLine  string   `json:"last_line"`
		Error     string   `json:"error"`
		DurationS float64  `json:"duration_s"`
		Classes   []string `json:"classes"`
		Log       string   `json:"log"`
	}
	jsonAgreement struct {
		// Agree and Disagree count the probed classes, one per class and
		// variant.
		Agree    int                  `json:"agree"`
		Disagree int                  `json:"disagree"`
		Classes  []jsonClassAgreement `json:"classes"`
	}
	jsonClassAgreement struct {
		Variant  string `json:"variant"`
		Class    string `json:"class"`
		Mode     string `json:"mode"`
		Requests int    `json:"requests"`
		Agree    bool   `json:"agree"`
		Format   string `json:"format"`
		// First is the first differing request; null when all agree.
		First *jsonDisagreement `json:"first"`
	}
	jsonDisagreement struct {
		Index           int    `json:"index"`
		Method          string `json:"method"`
		Target          string `json:"target"`
		BaselineStatus  int    `json:"baseline_status"`
		CandidateStatus int    `json:"candidate_status"`
		Reason          string `json:"reason"`
		Path            string `json:"path"`
		Baseline        string `json:"baseline"`
		Candidate       string `json:"candidate"`
	}
	jsonAbsent struct {
		Class  string `json:"class"`
		Reason string `json:"reason"`
	}
	jsonResources struct {
		Baseline  *jsonSideResources `json:"baseline"`
		Candidate *jsonSideResources `json:"candidate"`
	}
	jsonSideResources struct {
		// Source is how they were read: "cgroup", "proc" or "docker",
		// comma-separated if the rungs differ.
		Source string `json:"source"`
		// Rungs is the number of measured rungs the means are over.
		Rungs int `json:"rungs"`
		// Cores is the mean over those rungs of CPU seconds per second.
		Cores float64 `json:"cores"`
		// RPS is the mean throughput of the same rungs, RPSPerCore the
		// one over the other (null when no CPU was used).
		RPS        float64  `json:"rps"`
		RPSPerCore *float64 `json:"rps_per_core"`
	}
	jsonGenerator struct {
		// PeakCores is the maximum over rungs of the generator's CPU
		// seconds per second; PeakShare the maximum of that as a share of
		// the CPUs it could use (null when unknown), ShareCPUs that number
		// of CPUs in the rung of the maximum.
		PeakCores float64  `json:"peak_cores"`
		PeakShare *float64 `json:"peak_share"`
		ShareCPUs int      `json:"share_cpus"`
		// Saturated lists the cells where it used 90% or more of them, or
		// where both sides met one throughput while it used 75% or more
		// of them, as much as anywhere in the run.
		Saturated []jsonKey `json:"saturated"`
	}
	jsonDecision struct {
		Metric    string       `json:"metric"`
		Baseline  jsonSummary  `json:"baseline"`
		Candidate jsonSummary  `json:"candidate"`
		Delta     float64      `json:"delta"`
		Verdict   gate.Verdict `json:"verdict"`
		Reason    string       `json:"reason"`
		// Rule decided the verdict at Confidence with band TieWithin.
		Rule       gate.DecisionRule `json:"rule"`
		Confidence float64           `json:"confidence"`
		TieWithin  float64           `json:"tie_within"`
		// Paired is the ratio candidate/baseline of the paired
		// observations with its interval; null without them.
		Paired *jsonRatio `json:"paired"`
		// Resolution is the largest relative change the data could not
		// rule out, either way; RulesOut the largest regression (the
		// interval's end on the metric's worse side); Unresolved marks a
		// tie whose RulesOut exceeds the band.
		Resolution float64 `json:"resolution"`
		RulesOut   float64 `json:"rules_out"`
		Unresolved bool    `json:"unresolved"`
		// Withheld marks a regression of its own interval that the whole
		// gate's error control did not confirm (the document's family):
		// an unresolved tie.
		Withheld bool `json:"withheld,omitempty"`
		// Floor says why the metric was below its measurement floor (an
		// unresolved tie whatever its interval); absent otherwise.
		Floor string `json:"floor,omitempty"`
	}
	jsonRatio struct {
		Ratio float64 `json:"ratio"`
		Lo    float64 `json:"lo"`
		Hi    float64 `json:"hi"`
		// N is the number of observations the interval rests on, Pairs
		// the paired observations in them, Spread what they were:
		// "batches", or "rounds" when the rounds' means were the wider.
		N      int    `json:"n"`
		Pairs  int    `json:"pairs"`
		Spread string `json:"spread"`
	}
	jsonSummary struct {
		N         int     `json:"n"`
		Mean      float64 `json:"mean"`
		HalfWidth float64 `json:"half_width"`
		SD        float64 `json:"sd"`
	}
	jsonTotals struct {
		Requests  int64   `json:"requests"`
		Errors    int64   `json:"errors"`
		ErrorRate float64 `json:"error_rate"`
	}
	jsonFailure struct {
		Key    jsonKey `json:"cell"`
		Metric string  `json:"metric"`
		Kind   string  `json:"kind"`
		Reason string  `json:"reason"`
	}
	jsonTarget struct {
		Kind   string `json:"kind"`
		Spec   string `json:"spec"`
		Commit string `json:"commit"`
	}
	jsonEnv struct {
		Baseline    jsonTarget          `json:"baseline"`
		Candidate   jsonTarget          `json:"candidate"`
		CPUModel    string              `json:"cpu_model"`
		CPUs        int                 `json:"cpus"`
		Kernel      string              `json:"kernel"`
		OS          string              `json:"os"`
		Arch        string              `json:"arch"`
		GoVersion   string              `json:"go_version"`
		ToolVersion string              `json:"tool_version"`
		Pins        []benchdata.PinInfo `json:"pins"`
		Start       *time.Time          `json:"start"`
		End         *time.Time          `json:"end"`
		DurationS   float64             `json:"duration_s"`
	}
)

// JSON writes the decisions as an indented JSON document ending in a
// newline: outcome, counts, the rule, design and policy in force, what the
// correctness checks found, every cell's per-metric decisions (with the
// resolution each could reach and its paired ratio), error totals and
// latency distribution, the failures, the unresolved ties, and the scenario
// and environment they belong to. Lists are never null, so consumers need no
// special case for an empty grid.
func JSON(w io.Writer, in Input) error {
	m := newModel(in)
	doc := buildJSON(m)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("report: json: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func buildJSON(m *model) jsonDoc {
	r, c := m.in.Results, m.in.Comparison
	doc := jsonDoc{
		Version: JSONVersion,
		Tool:    r.Tool,
		Scenario: jsonScenario{
			Name: r.Scenario.Name, File: r.Scenario.File, Hash: r.Scenario.Hash,
			Seed: r.Scenario.Seed, Profile: r.Scenario.Profile,
		},
		Status:  r.Status,
		Error:   r.Error,
		Rounds:  jsonRounds{Decided: m.in.Rounds, Planned: r.Plan.Rounds, PinSets: []jsonPinRounds{}},
		Outcome: c.Outcome,
		Counts:  c.Counts,
		Settings: jsonSettings{Confidence: c.Settings.Confidence, TieWithin: c.Settings.TieWithin, TieWithinFor: c.Settings.TieWithinFor,
			Rule: m.rule(), Looks: m.looks(), LookConfidences: m.lookConfidences(), EffectiveConfidence: c.Settings.Effective(), Batches: batchesOf(c.Settings),
			FalseFailure: c.Settings.FalseFailure},
		Family:     c.Family,
		Policy:     jsonPolicy{FailOn: []jsonRule{}, Unresolved: m.unresolvedPolicy()},
		Schedule:   jsonSchedule{Interleave: "round"},
		Cells:      []jsonCell{},
		Failures:   []jsonFailure{},
		Unresolved: []jsonUnresolved{},
		Environment: jsonEnv{
			Baseline:    jsonTargetOf(r.Env.Baseline),
			Candidate:   jsonTargetOf(r.Env.Candidate),
			CPUModel:    r.Env.CPUModel,
			CPUs:        r.Env.CPUs,
			Kernel:      r.Env.Kernel,
			OS:          r.Env.OS,
			Arch:        r.Env.Arch,
			GoVersion:   r.Env.GoVersion,
			ToolVersion: r.Env.ToolVersion,
			Pins:        r.Env.Pins,
			Start:       timeOrNil(r.Env.Start),
			End:         timeOrNil(r.Env.End),
		},
	}
	if m.adaptive() {
		doc.Rounds.MaxPlanned = r.Plan.MaxRounds
	}
	if m.sliced() {
		doc.Schedule = jsonSchedule{Interleave: "slice", SliceS: r.Scenario.Load.Slice, SettleS: r.Scenario.Load.Settle}
	}
	if len(r.Plan.PinSets) > 0 {
		for _, p := range m.rounds {
			doc.Rounds.PinSets = append(doc.Rounds.PinSets, jsonPinRounds{Pins: p.pins, Decided: p.rounds})
		}
	}
	if !r.Env.Start.IsZero() && !r.Env.End.IsZero() {
		doc.Environment.DurationS = r.Env.End.Sub(r.Env.Start).Seconds()
	}
	doc.Policy.MaxErrorIncrease = c.Policy.MaxErrorIncrease
	if c.Policy.MaxErrorRate >= 0 {
		v := c.Policy.MaxErrorRate
		doc.Policy.MaxErrorRate = &v
	}
	for _, rule := range c.Policy.FailOn {
		doc.Policy.FailOn = append(doc.Policy.FailOn, jsonRule{
			Metric: string(rule.Metric), Classes: orStar(rule.Classes),
			Concurrency: orStar(rule.Concurrency), Variants: orStar(rule.Variants),
		})
	}
	for _, cell := range c.Cells {
		jc := jsonCell{
			Key:        jsonKeyOf(cell.Key),
			Verdict:    cell.Verdict,
			Gated:      []string{},
			Rounds:     m.roundsOfCell(cellOf(cell.Key)),
			Unresolved: []string{},
			Decisions:  []jsonDecision{},
			Baseline:   jsonTotals(cell.Baseline),
			Candidate:  jsonTotals(cell.Candidate),
		}
		for _, g := range cell.Gated {
			jc.Gated = append(jc.Gated, string(g))
		}
		for _, u := range cell.Unresolved {
			jc.Unresolved = append(jc.Unresolved, string(u))
		}
		for _, d := range cell.Decisions {
			jd := jsonDecision{
				Metric:     string(d.Metric),
				Baseline:   jsonSummaryOf(d.Baseline),
				Candidate:  jsonSummaryOf(d.Candidate),
				Delta:      d.Delta,
				Verdict:    d.Verdict,
				Reason:     d.Reason,
				Rule:       d.Rule,
				Confidence: d.Confidence,
				TieWithin:  d.TieWithin,
				Resolution: d.Resolution,
				RulesOut:   d.RulesOut,
				Unresolved: d.Unresolved,
				Withheld:   d.Withheld,
				Floor:      d.Floor,
			}
			if d.Confidence == 0 {
				// Decided before decisions recorded their design: the
				// comparison's settings are what decided them.
				jd.Rule, jd.Confidence, jd.TieWithin = gate.RuleOverlap, c.Settings.Effective(), c.Settings.For(d.Metric).TieWithin
			}
			if p := d.Paired; p != nil {
				jd.Paired = &jsonRatio{Ratio: p.Ratio, Lo: p.Lo, Hi: p.Hi, N: p.N, Pairs: p.Pairs, Spread: p.Spread}
			}
			jc.Decisions = append(jc.Decisions, jd)
		}
		jc.Resources = m.jsonResourcesOf(cell.Key)
		jc.Latency = m.jsonLatencyOf(cell.Key)
		doc.Cells = append(doc.Cells, jc)
	}
	doc.Correctness = jsonCorrectnessOf(m.correctness())
	if g := m.generator; g != nil {
		jg := &jsonGenerator{PeakCores: g.peakCores, ShareCPUs: g.shareCPUs, Saturated: []jsonKey{}}
		if g.shareCPUs > 0 {
			v := g.peakShare
			jg.PeakShare = &v
		}
		for _, c := range g.saturated {
			jg.Saturated = append(jg.Saturated, jsonKey{Pins: c.Pins, Variant: c.Variant, Class: c.Class, Concurrency: c.Concurrency, Rate: c.Rate})
		}
		doc.Generator = jg
	}
	for _, u := range m.unsustained {
		c := u.cell
		doc.Unsustained = append(doc.Unsustained, jsonUnsustained{
			Key:    jsonKey{Pins: c.Pins, Variant: c.Variant, Class: c.Class, Concurrency: c.Concurrency, Rate: c.Rate},
			Target: u.target, Asked: u.asked, Late: u.late, Unsent: u.unsent, AnsweredRPS: u.answeredRate,
		})
	}
	for _, it := range m.failures {
		f := it.f
		doc.Failures = append(doc.Failures, jsonFailure{
			Key: jsonKeyOf(f.Key), Metric: string(f.Metric), Kind: f.Kind, Reason: f.Reason,
		})
	}
	for _, it := range m.unresolved {
		u := jsonUnresolved{Key: jsonKeyOf(it.key), Metric: string(it.d.Metric), Resolution: it.d.Resolution, RulesOut: it.d.RulesOut, TieWithin: it.d.TieWithin}
		for _, f := range c.Unresolved {
			if f.Key == it.key && f.Metric == it.d.Metric {
				u.Reason = f.Reason
			}
		}
		doc.Unresolved = append(doc.Unresolved, u)
	}
	return doc
}

// batchesOf is the most batches the paired interval splits a round into.
func batchesOf(s gate.Settings) int {
	if s.Batches == 0 {
		return gate.DefaultBatches
	}
	return s.Batches
}

func jsonKeyOf(k gate.CellKey) jsonKey {
	return jsonKey{Pins: k.Pins, Variant: k.Variant, Class: k.Class, Concurrency: k.Concurrency, Rate: k.Rate}
}

func (m *model) jsonResourcesOf(k gate.CellKey) *jsonResources {
	side := func(target string) *jsonSideResources {
		u := m.side(k, target)
		if u == nil {
			return nil
		}
		s := &jsonSideResources{Source: strings.Join(u.sources, ","), Rungs: u.rungs, Cores: u.cores, RPS: u.rps}
		if u.cores > 0 {
			v := u.rps / u.cores
			s.RPSPerCore = &v
		}
		return s
	}
	r := &jsonResources{Baseline: side("baseline"), Candidate: side("candidate")}
	if r.Baseline == nil && r.Candidate == nil {
		return nil
	}
	return r
}

func (m *model) jsonLatencyOf(k gate.CellKey) *jsonLatency {
	side := func(target string) *jsonLatencySide {
		d := m.latency[sideKey{cellOf(k), target}]
		if d == nil {
			return nil
		}
		// Divided rather than multiplied by 1e-6, so 3461 µs prints as
		// 0.003461.
		sec := func(us float64) float64 { return us / 1e6 }
		p := func(q float64) float64 { return sec(d.percentile(q)) }
		return &jsonLatencySide{
			Rungs: d.rungs, Count: d.count, Min: sec(d.min), Mean: sec(d.mean), Max: sec(d.max),
			Percentiles: jsonLatencyPercents{
				P10: p(10), P25: p(25), P50: p(50), P75: p(75), P90: p(90), P95: p(95), P99: p(99), P999: p(99.9),
			},
		}
	}
	l := &jsonLatency{Baseline: side("baseline"), Candidate: side("candidate")}
	if l.Baseline == nil && l.Candidate == nil {
		return nil
	}
	return l
}

func jsonCorrectnessOf(g *benchdata.Correctness) *jsonCorrectness {
	if g == nil {
		return nil
	}
	out := &jsonCorrectness{Preflight: []jsonPreflight{}, Absent: []jsonAbsent{}}
	for _, p := range g.Preflight {
		out.Preflight = append(out.Preflight, jsonPreflight{
			Name: p.Name, Target: p.Target, Command: p.Command, Pass: p.Pass, ExitCode: p.ExitCode,
			LastLine: p.LastLine, Error: p.Error, DurationS: p.Duration, Classes: orEmpty(p.Classes), Log: p.Log,
		})
	}
	if a := g.Agreement; a != nil {
		ja := &jsonAgreement{Classes: []jsonClassAgreement{}}
		ja.Agree, ja.Disagree = a.Counts()
		for _, c := range a.Classes {
			jc := jsonClassAgreement{Variant: c.Variant, Class: c.Class, Mode: c.Mode, Requests: c.Requests,
				Agree: c.Agree, Format: c.Format}
			if d := c.First; d != nil {
				jc.First = &jsonDisagreement{Index: d.Index, Method: d.Method, Target: d.Target,
					BaselineStatus: d.BaselineStatus, CandidateStatus: d.CandidateStatus,
					Reason: d.Reason, Path: d.Path, Baseline: d.Baseline, Candidate: d.Candidate}
			}
			ja.Classes = append(ja.Classes, jc)
		}
		out.Agreement = ja
	}
	for _, a := range g.Absent {
		out.Absent = append(out.Absent, jsonAbsent{Class: a.Class, Reason: a.Reason})
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func jsonSummaryOf(s gate.Summary) jsonSummary {
	return jsonSummary{N: s.N, Mean: s.Mean, HalfWidth: s.HalfWidth, SD: s.SD}
}

func jsonTargetOf(t benchdata.TargetInfo) jsonTarget {
	return jsonTarget{Kind: t.Kind, Spec: t.Spec, Commit: t.Commit}
}

// orStar spells the "match everything" of an empty glob list out, so a
// reader need not know the convention.
func orStar(globs []string) []string {
	if len(globs) == 0 {
		return []string{"*"}
	}
	return globs
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
