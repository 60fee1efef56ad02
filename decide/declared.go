package decide

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/benchgate/benchgate/gate"
)

// SameGate refuses the gate section declared in scenarioFile when it
// differs from the one the results file named results recorded when it
// ran (GateChanges): a results file is decided by the rule declared
// before it was measured, and one written after it (or another
// scenario's) must not decide it, nor be ignored unsaid. Sections that
// agree are no error.
func SameGate(recorded, declared gate.Section, results, scenarioFile string) error {
	changes, err := GateChanges(recorded, declared)
	if err != nil || len(changes) == 0 {
		return err
	}
	return fmt.Errorf("-scenario %s: its gate section differs from the one %s recorded when it ran (%s); "+
		"a results file is decided by the rule declared before it was measured, never by one chosen after (docs/statistics.md): "+
		"run the scenario again to decide under its gate section, or leave -scenario out to decide by the recorded one "+
		"(-scenario gives the gate section to files: OLD NEW or -import)",
		scenarioFile, results, strings.Join(changes, "; "))
}

// GateChanges lists the fields of a gate section declared now that differ
// from the one a results file recorded when it ran ("rule paired, recorded
// overlap"), in the file format's names; none when they agree. A results
// file is decided by what it recorded, so compare tells of a scenario that
// would decide it otherwise rather than use it unsaid. The declared section
// is read as the file would record it, so a field the file format writes
// differently (an empty list, a rule a version-2 file leaves out) is not a
// change.
func GateChanges(recorded, declared gate.Section) ([]string, error) {
	b, err := json.Marshal(declared)
	if err != nil {
		return nil, err
	}
	var d gate.Section
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	r := recorded
	for _, s := range []*gate.Section{&r, &d} {
		if s.Rule == "" {
			s.Rule = gate.RuleOverlap
		}
		if s.Unresolved == "" {
			s.Unresolved = gate.UnresolvedWarn
		}
	}
	var out []string
	change := func(name string, was, is any, shown func(any) string) {
		if !reflect.DeepEqual(was, is) {
			out = append(out, fmt.Sprintf("%s %s, recorded %s", name, shown(is), shown(was)))
		}
	}
	plain := func(v any) string { return fmt.Sprint(v) }
	asJSON := func(v any) string {
		b, _ := json.Marshal(v)
		if s := string(b); s != "null" && s != "{}" && s != "[]" {
			return s
		}
		return "none"
	}
	change("rule", r.Rule, d.Rule, plain)
	change("confidence", r.Confidence, d.Confidence, plain)
	change("tie_within", r.TieWithin, d.TieWithin, plain)
	change("metrics' tie_within", r.TieWithinFor, d.TieWithinFor, asJSON)
	change("metrics' better (higher: true)", r.HigherBetterFor, d.HigherBetterFor, asJSON)
	change("fail_on", r.FailOn, d.FailOn, asJSON)
	change("max_error_rate", r.MaxErrorRate, d.MaxErrorRate, plain)
	change("max_error_increase", r.MaxErrorIncrease, d.MaxErrorIncrease, asJSON)
	change("unresolved", r.Unresolved, d.Unresolved, plain)
	level := func(v any) string {
		if f := v.(*float64); f != nil {
			if *f == 0 {
				return "off"
			}
			return fmt.Sprint(*f)
		}
		return fmt.Sprint(gate.DefaultFalseFailure) + " (the default)"
	}
	ff := func(f *float64) *float64 { // unset is the default
		if f == nil {
			v := gate.DefaultFalseFailure
			return &v
		}
		return f
	}
	if !reflect.DeepEqual(ff(r.FalseFailure), ff(d.FalseFailure)) {
		out = append(out, fmt.Sprintf("false_failure %s, recorded %s", level(d.FalseFailure), level(r.FalseFailure)))
	}
	return out, nil
}
