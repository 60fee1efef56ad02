package gate

// Section is a scenario's gate section, resolved: what the scenario
// declares, DefaultSection's values where it is silent. A results file
// records it as the scenario's "gate" object, so that compare decides
// with the rule declared before the run: the JSON names are that file
// format's, and files of every version read into it.
type Section struct {
	Confidence   float64 `json:"confidence"`
	TieWithin    float64 `json:"tie_within"`
	MaxErrorRate float64 `json:"max_error_rate"`
	// TieWithinFor is gate.metrics' tie_within by metric.
	TieWithinFor map[Metric]float64 `json:"tie_within_for,omitempty"`
	// HigherBetterFor is, for a Go benchmark's units, gate.metrics'
	// better (true: higher); other units follow Metric.HigherIsBetter.
	HigherBetterFor map[Metric]bool `json:"higher_better_for,omitempty"`
	// MaxErrorIncrease is gate.max_error_increase; nil when unset.
	MaxErrorIncrease *float64 `json:"max_error_increase,omitempty"`
	FailOn           []Rule   `json:"fail_on"`
	// Rule is the decision rule; "" (a file of version 2 or older) is
	// RuleOverlap.
	Rule DecisionRule `json:"rule,omitempty"`
	// Unresolved is what a gated tie that could not resolve tie_within
	// does; "" is UnresolvedWarn.
	Unresolved Unresolved `json:"unresolved,omitempty"`
	// FalseFailure is gate.false_failure, the whole gate's error under
	// the paired rule (Settings.FalseFailure): nil (unset, and every file
	// written before it existed) is DefaultFalseFailure, 0 is off.
	FalseFailure *float64 `json:"false_failure,omitempty"`
}

// DefaultSection is the gate section of a scenario that declares none, and
// the value of each field one leaves out: the pre-registered tie rule, at
// most 0.1% errors, and a rule on throughput. The paired rule is the best
// design scripts/verdict-quality.sh measured (docs/statistics.md#defaults).
// Its FailOn is shared by every copy: replace it rather than change it.
var DefaultSection = Section{
	Confidence: 0.95, TieWithin: 0.10, MaxErrorRate: 0.001,
	FailOn: []Rule{{Metric: RPS}},
	Rule:   RulePaired, Unresolved: UnresolvedWarn,
}
