package gate

import (
	"strconv"
	"strings"
)

// Metric names a measured quantity of a cell. The names are the ones a
// scenario's fail_on rules use.
type Metric string

// Metrics known to the gate. Their definitions, the one list every package
// reads, are Registry's (metrics.go).
const (
	RPS       Metric = "rps"         // throughput, requests per second
	Mean      Metric = "mean"        // mean latency, seconds
	P50       Metric = "p50"         // latency percentiles, seconds
	P90       Metric = "p90"         //
	P95       Metric = "p95"         //
	P99       Metric = "p99"         //
	P999      Metric = "p99.9"       //
	ErrorRate Metric = "error_rate"  // errors / requests of a rung
	CPUPerReq Metric = "cpu_per_req" // target CPU seconds per answered request
	MemMean   Metric = "mem_mean"    // target memory, bytes, mean over the rung
	MemPeak   Metric = "mem_peak"    // target memory, bytes, peak of the rung
)

// AllMetrics lists the metrics of a load scenario, the names its fail_on
// rules may use, in the order reports show them: Registry's, the load
// generator's, then ResourceMetrics.
var AllMetrics = registryMetrics(func(Definition) bool { return true })

// ResourceMetrics are the metrics of the targets' resource accounting, in
// report order. Only a target benchgate starts has them: nothing measures
// what a url target uses.
var ResourceMetrics = registryMetrics(func(d Definition) bool { return d.Source == FromResources })

// GoUnits are the units of Go benchmark results that reports show first,
// in this order; other units follow by name.
var GoUnits = []Metric{"sec/op", "B/op", "allocs/op", "B/s"}

// HigherIsBetter says in which direction a metric improves: as Registry
// defines it for a load metric; for any other unit (a Go benchmark's), a
// rate (a unit ending in "/s" such as B/s) higher, time, memory,
// allocations and the rest lower.
func (m Metric) HigherIsBetter() bool {
	if d, ok := Lookup(m); ok {
		return d.HigherIsBetter
	}
	return strings.HasSuffix(string(m), "/s")
}

// DecisionRule names the rule that turns measurements into a verdict
// (scenario field gate.rule). It is not called Rule: that name is a fail_on
// rule's.
type DecisionRule string

// Decision rules.
const (
	// RuleOverlap, the default: tie when the two sides' intervals
	// overlap or their means are within the band; otherwise the better
	// side wins.
	RuleOverlap DecisionRule = "overlap"
	// RulePaired: tie when the interval of the paired ratio
	// candidate/baseline contains 1 or the ratio is within the band of 1;
	// otherwise the better side wins.
	RulePaired DecisionRule = "paired"
)

// DefaultBatches is the number of batches a round's pairs are split into
// when Settings.Batches is 0.
const DefaultBatches = 5

// Settings are the knobs of the tie rule. Use DefaultSettings and change what
// differs, so a new knob never changes a signature.
type Settings struct {
	// Confidence of the two-sided Student-t interval, e.g. 0.95. With
	// several looks a decision's intervals are made at ConfidenceAt its
	// rounds, not at this.
	Confidence float64
	// TieWithin: two means closer than this fraction of the baseline's mean
	// are a tie whatever their intervals say, e.g. 0.10.
	TieWithin float64
	// TieWithinFor overrides TieWithin for the metrics it names: 0 suits a
	// deterministic unit such as a Go benchmark's allocs/op.
	TieWithinFor map[Metric]float64
	// HigherBetterFor overrides Metric.HigherIsBetter for the metrics it
	// names: a benchmark's own unit says which way is better.
	HigherBetterFor map[Metric]bool
	// Rule decides the verdicts; empty means RuleOverlap. The error rate
	// is always decided by the overlap rule.
	Rule DecisionRule
	// Looks is the number of planned looks of an adaptive design (rounds
	// repetitions … max_repetitions: max_repetitions - repetitions + 1);
	// 0 or 1 is a fixed design with a single look.
	Looks int
	// MaxRounds is the rounds of the last look (max_repetitions): look k
	// comes after MaxRounds - Looks + k rounds. Needed when Looks > 1.
	MaxRounds int
	// Batches is the largest number of batches a round's pairs are split
	// into for the paired interval; 0 means DefaultBatches.
	Batches int
	// FalseFailure, in (0, 1), is the most probability that the gate
	// fails over all its gated decisions when nothing changed, under the
	// paired rule (controlFamily); 0 leaves each decision to its own
	// interval alone. A scenario's default is DefaultFalseFailure.
	FalseFailure float64
}

// rule is the rule s decides by: RuleOverlap when unset.
func (s Settings) rule() DecisionRule {
	if s.Rule == "" {
		return RuleOverlap
	}
	return s.Rule
}

// HigherIsBetter is the direction m is decided in under s.
func (s Settings) HigherIsBetter(m Metric) bool {
	if h, ok := s.HigherBetterFor[m]; ok {
		return h
	}
	return m.HigherIsBetter()
}

// For returns the settings that decide metric m.
func (s Settings) For(m Metric) Settings {
	if t, ok := s.TieWithinFor[m]; ok {
		s.TieWithin = t
	}
	return s
}

// DefaultSettings is the pre-registered tie rule, DefaultSection's: a tie
// when the 95% intervals overlap or the means are under 10% apart
// (docs/statistics.md).
var DefaultSettings = Settings{Confidence: DefaultSection.Confidence, TieWithin: DefaultSection.TieWithin}

// Summary is the mean of a cell's repetitions with its interval.
type Summary struct {
	N         int     `json:"n"`
	Mean      float64 `json:"mean"`
	SD        float64 `json:"sd"`         // sample standard deviation (n-1)
	HalfWidth float64 `json:"half_width"` // of the interval; 0 when N < 2
	Median    float64 `json:"median"`
	Min       float64 `json:"min"`
	Max       float64 `json:"max"`
}

// Lo and Hi are the interval's bounds.
func (s Summary) Lo() float64 { return s.Mean - s.HalfWidth }
func (s Summary) Hi() float64 { return s.Mean + s.HalfWidth }

// Pair is one paired observation of a metric: the baseline's and the
// candidate's value measured back to back in the same round, one rung each
// under round interleaving, one slice each under slice interleaving.
type Pair struct {
	Round int     `json:"round"`
	Base  float64 `json:"base"`
	Cand  float64 `json:"cand"`
}

// Ratio is the paired ratio candidate/baseline of a metric with its
// interval (see PairedRatio).
type Ratio struct {
	Ratio float64 `json:"ratio"` // exp of the mean of the batches' log ratios
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	N     int     `json:"n"`     // observations the interval rests on: batches, or rounds
	Pairs int     `json:"pairs"` // pairs in those observations
	// Spread says whose spread made the interval: SpreadBatches, or
	// SpreadRounds when the rounds' means were the wider (PairedRatio).
	Spread string `json:"spread"`
	// Log holds both spreads the interval was chosen from, on the log
	// scale, for the whole gate's error control (family.go).
	Log LogSpread `json:"log"`
}

// LogSpread is the standard error of a paired ratio's mean log ratio from
// the batches' spread (Batches - 1 degrees of freedom) and from the
// rounds' means' (Rounds - 1; Rounds 0 when there was one round, or a
// batch a round).
type LogSpread struct {
	Batches   int     `json:"batches"`
	SEBatches float64 `json:"se_batches"`
	Rounds    int     `json:"rounds,omitempty"`
	SERounds  float64 `json:"se_rounds,omitempty"`
}

// Values of Ratio.Spread.
const (
	SpreadBatches = "batches"
	SpreadRounds  = "rounds"
)

// Verdict is the decision of one metric in one cell.
type Verdict string

// Verdicts. A tie and inconclusive are results, not errors.
const (
	Tie          Verdict = "tie"
	Improvement  Verdict = "improvement"
	Regression   Verdict = "regression"
	Inconclusive Verdict = "inconclusive"
)

// Decision is one metric of one cell, decided.
type Decision struct {
	Metric    Metric  `json:"metric"`
	Baseline  Summary `json:"baseline"`
	Candidate Summary `json:"candidate"`
	// Delta is (candidate - baseline) / baseline of the means; 0 when the
	// baseline's mean is 0.
	Delta   float64 `json:"delta"`
	Verdict Verdict `json:"verdict"`
	// Reason says why, in words a report can print: "intervals overlap",
	// "means 4.1% apart (< 10%)", "need >= 2 repetitions, have 1".
	Reason string `json:"reason"`
	// Rule is the rule the verdict was decided by: the settings' rule,
	// except for the error rate, which is always decided by overlap.
	Rule DecisionRule `json:"rule"`
	// Confidence of every interval of the decision: the settings'
	// ConfidenceAt the rounds it was decided on.
	Confidence float64 `json:"confidence"`
	// TieWithin is the band the metric was decided with.
	TieWithin float64 `json:"tie_within"`
	// Paired is the paired ratio candidate/baseline when the metric has
	// paired observations it could be made from, whatever the rule (a
	// report shows it as the change's ±); nil otherwise and for the error
	// rate.
	Paired *Ratio `json:"paired,omitempty"`
	// Resolution is the largest relative change the data cannot rule
	// out: under overlap (|mc-mb| + hb + hc) / |mb| (0 when mb is 0),
	// under paired max(|Lo-1|, |Hi-1|) of the ratio. 0 when inconclusive.
	Resolution float64 `json:"resolution"`
	// RulesOut is the regression the data rules out beyond: how far the
	// interval's end on the metric's worse side lies from no change (under
	// paired 1-Lo of the ratio when higher is better, Hi-1 when lower is;
	// under overlap the means' difference at its worst, relative to the
	// baseline), 0 when the interval lies wholly on the better side or
	// when inconclusive. Resolution is the larger of it and its mirror on
	// the better side. A report prints a tie's as "rules out > 31%".
	RulesOut float64 `json:"rules_out"`
	// Unresolved marks a tie whose RulesOut exceeds TieWithin: the data
	// could not have told a regression of the band's size from none. A
	// tie that rules out any regression beyond the band is resolved for
	// the gate, however wide its interval on the better side.
	Unresolved bool `json:"unresolved,omitempty"`
	// Withheld marks a regression of its own interval that the whole
	// gate's error control did not confirm (Comparison.Family): it is an
	// unresolved tie, and its Reason says why.
	Withheld bool `json:"withheld,omitempty"`
	// Floor says why the metric was measured below its measurement floor
	// (CellInput.Floors): the decision is an unresolved tie, neither a
	// regression nor evidence of none.
	Floor string `json:"floor,omitempty"`
}

// CellKey names a cell of the grid.
type CellKey struct {
	Pins        string `json:"pins,omitempty"`
	Variant     string `json:"variant"`
	Class       string `json:"class"`
	Concurrency int    `json:"concurrency"`
	// Rate is an open-loop cell's requests a second (load.rate); 0 for
	// the closed loop.
	Rate int `json:"rate,omitempty"`
}

// String is the cell's name in prose, progress lines and errors:
// "[cpus=1] csv/Q01 c=8", or "Q01 c=8" without pins and variants, and
// "Q01 c=64 200/s" for an open-loop cell. A cell without a concurrency (a
// Go benchmark) is its class alone. Names are raw: the caller escapes for
// its medium.
func (k CellKey) String() string {
	s := k.Class
	if k.Concurrency > 0 {
		s = k.Class + " c=" + strconv.Itoa(k.Concurrency)
	}
	if k.Rate > 0 {
		s += " " + strconv.Itoa(k.Rate) + "/s"
	}
	if k.Variant != "" {
		s = k.Variant + "/" + s
	}
	if k.Pins != "" {
		s = "[" + k.Pins + "] " + s
	}
	return s
}

// Side is what one target measured in one cell: one sample per repetition
// for each metric, and request and error totals over all repetitions.
type Side struct {
	Samples  map[Metric][]float64
	Requests int64
	Errors   int64
	// Answered counts the responses of any status, InFlight the requests
	// still unanswered when a measured window closed: a side that answered
	// nothing has no measurement, whatever its samples read (see
	// Policy.RequireAnswers).
	Answered int64
	InFlight int64
	Rungs    int // the measurements counted, for Answered to mean something
}

// CellInput is one cell's measurements of both targets.
type CellInput struct {
	Key       CellKey
	Baseline  Side
	Candidate Side
	// Pairs holds each metric's paired observations in time order: one
	// per round under round interleaving, the slice pairs under slice
	// interleaving. A metric without pairs has no paired ratio, and under
	// RulePaired is inconclusive.
	Pairs map[Metric][]Pair
	// Floors says, for a metric measured below its measurement floor
	// (CPU per request of an endpoint that hardly uses CPU, counted in
	// /proc's 10 ms ticks), why: its decision is an unresolved tie with
	// that reason, whatever its interval says (Decision.Floor).
	Floors map[Metric]string
}

// Rule is one pre-declared regression: a regression of Metric in a cell
// whose class, concurrency and variant match the globs fails the gate.
// An empty list matches everything, like ["*"].
type Rule struct {
	Metric      Metric   `json:"metric"`
	Classes     []string `json:"classes,omitempty"`
	Concurrency []string `json:"concurrency,omitempty"`
	Variants    []string `json:"variants,omitempty"`
}

// Policy is the scenario's gate section after parsing.
type Policy struct {
	FailOn []Rule `json:"fail_on"`
	// MaxErrorRate: a candidate whose error rate in a cell is above this
	// fails the gate. Negative disables the check.
	MaxErrorRate float64 `json:"max_error_rate"`
	// OnlyMeasured: a gated metric that neither side measured in a cell
	// does not apply to it, rather than leaving it inconclusive. Go
	// benchmarks need it: a rule on a custom unit names the benchmarks
	// that report it.
	OnlyMeasured bool `json:"only_measured,omitempty"`
	// RuleMustApply: a fail_on rule that gates no cell at all (a unit no
	// benchmark reports, a class glob that matches none) leaves the gate
	// inconclusive rather than passing by silence. For results whose
	// cells are not known when the rules are written: Go benchmarks,
	// imported reports.
	RuleMustApply bool `json:"rule_must_apply,omitempty"`
	// MaxErrorIncrease: a candidate whose error rate in a cell exceeds
	// the baseline's by more than this fails the gate; nil disables the
	// check.
	MaxErrorIncrease *float64 `json:"max_error_increase,omitempty"`
	// Unresolved is what a gated unresolved tie does to the outcome;
	// empty means UnresolvedWarn.
	Unresolved Unresolved `json:"unresolved,omitempty"`
	// RequireAnswers: a cell in which a side answered no request is never
	// a pass, whatever fail_on says: when only the candidate answered
	// nothing, a regression (a failure of kind FailNoAnswers); when the
	// baseline answered nothing, the cell is unmeasured: inconclusive, a
	// failure of kind FailUnmeasured and no other (not even the error
	// rate), none of its metrics decided, and not open to more rounds. For load results, where a
	// target that never answers would otherwise read as an idle one (0
	// rps, 0 errors); not for benchmarks or imported reports, which count
	// no requests.
	RequireAnswers bool `json:"require_answers,omitempty"`
}

// Unresolved is the policy for gated ties that could not resolve the band
// (scenario field gate.unresolved).
type Unresolved string

// Unresolved-tie policies. Under each, Comparison.Unresolved lists the ties.
const (
	// UnresolvedWarn, the default: the outcome is what the verdicts say;
	// the report leads with the unresolved ties.
	UnresolvedWarn Unresolved = "warn"
	// UnresolvedFail: each unresolved gated tie is also a failure of kind
	// FailUnresolved, which leaves the outcome inconclusive (never a pass,
	// never a fail by itself).
	UnresolvedFail Unresolved = "fail"
	// UnresolvedPass: the outcome is what the verdicts say, and the report
	// need not lead with the ties.
	UnresolvedPass Unresolved = "pass"
)

// SideTotals are a target's request and error totals in a cell.
type SideTotals struct {
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	ErrorRate float64 `json:"error_rate"`
}

// Failure is one reason the gate fails.
type Failure struct {
	Key    CellKey `json:"cell"`
	Metric Metric  `json:"metric"`
	// Kind is "regression", "error_rate", "no_answers", "inconclusive",
	// "unmeasured", "unresolved", or for the correctness checks, which
	// have no metric, "agreement" or "preflight".
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

// CellResult is one cell, decided.
type CellResult struct {
	Key       CellKey    `json:"cell"`
	Decisions []Decision `json:"decisions"` // in AllMetrics order, those measured
	Baseline  SideTotals `json:"baseline"`
	Candidate SideTotals `json:"candidate"`
	// Gated lists the metrics a fail_on rule applies to in this cell.
	Gated []Metric `json:"gated"`
	// Verdict is the cell's headline: regression when a gated metric
	// regressed, else inconclusive when one was inconclusive, else
	// improvement when one improved, else tie. A cell no rule gates takes its
	// headline from rps. An unresolved tie's headline is a tie.
	Verdict  Verdict   `json:"verdict"`
	Failures []Failure `json:"failures,omitempty"`
	// Unresolved lists the gated metrics whose verdict is an unresolved
	// tie, in Gated order.
	Unresolved []Metric `json:"unresolved,omitempty"`
}

// Decision returns the decision of metric m, if the cell has one.
func (c CellResult) Decision(m Metric) (Decision, bool) {
	for _, d := range c.Decisions {
		if d.Metric == m {
			return d, true
		}
	}
	return Decision{}, false
}

// Outcome of the whole comparison.
type Outcome string

// Outcomes. Inconclusive means a gated cell could not be decided (too few
// repetitions): it is never a pass by silence.
const (
	Pass             Outcome = "pass"
	Fail             Outcome = "fail"
	OutcomeUndecided Outcome = "inconclusive"
)

// Counts of headline verdicts over all cells.
type Counts struct {
	Regressions  int `json:"regressions"`
	Improvements int `json:"improvements"`
	Ties         int `json:"ties"`
	Inconclusive int `json:"inconclusive"`
	// Unresolved counts the cells with at least one gated unresolved
	// tie, whatever their headline.
	Unresolved int `json:"unresolved"`
}

// Comparison is the decided grid.
type Comparison struct {
	Settings Settings     `json:"settings"`
	Policy   Policy       `json:"policy"`
	Cells    []CellResult `json:"cells"`
	Counts   Counts       `json:"counts"`
	Failures []Failure    `json:"failures"`
	// Unresolved holds one entry of kind FailUnresolved per gated
	// unresolved tie, under every Policy.Unresolved; under UnresolvedFail
	// they are in Failures too.
	Unresolved []Failure `json:"unresolved"`
	Outcome    Outcome   `json:"outcome"`
	// Family is what the whole gate's error control did; nil when it did
	// not apply (Settings.FalseFailure 0, or not the paired rule).
	Family *Family `json:"family,omitempty"`
}
