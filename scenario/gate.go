package scenario

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/gate"
)

// metricNames are gate.AllMetrics as a load scenario's fail_on rules and
// gate.metrics name them.
var metricNames = func() []string {
	names := make([]string, len(gate.AllMetrics))
	for i, m := range gate.AllMetrics {
		names[i] = string(m)
	}
	return names
}()

func (l *loader) gate(n *node) {
	g := &l.s.Gate
	*g = gate.DefaultSection
	if l.s.Kind == KindGoBench {
		// The paired rule is the default here too: measured on real
		// cases (docs/gobench.md#which-rule), it found what overlap did
		// and missed none, resolved more A/A ties, and brings the whole
		// gate's error control, which a suite of many benchmarks needs.
		g.FailOn = []gate.Rule{{Metric: "sec/op"}}
	}
	if n == nil {
		return
	}
	m, ok := l.fields(n, "gate", "confidence", "tie_within", "fail_on", "max_error_rate", "max_error_increase", "metrics", "rule", "unresolved", "false_failure")
	if !ok {
		return
	}
	// choice is the value of key when it is one of want, else "".
	choice := func(key string, want ...string) string {
		v := m[key]
		if v == nil {
			return ""
		}
		s, ok := l.str(v, "gate."+key)
		if ok && !slices.Contains(want, s) {
			l.errNode(v, "gate."+key, "%q: want %s", v.errText(), strings.Join(want, ", "))
			return ""
		}
		return s
	}
	if s := choice("rule", string(gate.RuleOverlap), string(gate.RulePaired)); s != "" {
		g.Rule = gate.DecisionRule(s)
		l.rulePos = m["rule"]
	}
	if s := choice("unresolved", string(gate.UnresolvedWarn), string(gate.UnresolvedFail), string(gate.UnresolvedPass)); s != "" {
		g.Unresolved = gate.Unresolved(s)
	}
	num := func(key string, dst *float64, lo float64, hiIncl bool, hi float64, want string) {
		v := m[key]
		if v == nil {
			return
		}
		x, ok := l.float(v, "gate."+key)
		if !ok {
			return
		}
		if x < lo || x > hi || x == hi && !hiIncl {
			l.errNode(v, "gate."+key, "%s is out of range (want %s)", v.errNum(v.text), want)
			return
		}
		*dst = x
	}
	num("confidence", &g.Confidence, 0.5, false, 1, "0.5 <= confidence < 1, e.g. 0.95")
	num("tie_within", &g.TieWithin, 0, false, 1, "0 <= tie_within < 1, e.g. 0.10")
	num("max_error_rate", &g.MaxErrorRate, 0, true, 1, "0..1, e.g. 0.001")
	if v := m["false_failure"]; v != nil {
		// The whole gate's error: a level, or off for none (each
		// decision then stands on its own interval alone).
		ff := -1.0
		switch {
		case v.kind == kindScalar && v.scalar == scalarString && v.text == "off":
			ff = 0
		case v.kind == kindScalar && v.scalar == scalarString && !v.expanded:
			l.errNode(v, "gate.false_failure", "%q is not a level (want 0 < false_failure <= 0.2, e.g. 0.01, or off for none)", v.errText())
		default:
			num("false_failure", &ff, 0, true, 0.2, "0 < false_failure <= 0.2, e.g. 0.01, or off")
			if ff == 0 {
				l.errNode(v, "gate.false_failure", "0 is not a level (want 0 < false_failure <= 0.2, e.g. 0.01, or off for none)")
				ff = -1
			}
		}
		if ff >= 0 {
			g.FalseFailure = &ff
		}
	}
	if m["max_error_increase"] != nil {
		inc := -1.0
		num("max_error_increase", &inc, 0, true, 1, "0..1, e.g. 0.001")
		if inc >= 0 {
			g.MaxErrorIncrease = &inc
		}
	}
	if v := m["metrics"]; v != nil && l.mapping(v, "gate.metrics", "settings by metric") {
		g.TieWithinFor = map[gate.Metric]float64{}
		for i, k := range v.keys {
			f := join("gate.metrics", k.text)
			name := k.text
			if l.s.Kind == KindGoBench {
				name = TidyUnit(name)
			} else if !slices.Contains(metricNames, name) {
				l.errAt(k.line, k.col, f, "unknown metric %q (want one of %s)", k.text, strings.Join(metricNames, ", "))
				continue
			}
			fields := []string{"tie_within"}
			if l.s.Kind == KindGoBench {
				fields = append(fields, "better")
			}
			mm, ok := l.fields(v.vals[i], f, fields...)
			if !ok {
				continue
			}
			if tv := mm["tie_within"]; tv != nil {
				if x, ok := l.float(tv, f+".tie_within"); ok {
					if x < 0 || x >= 1 {
						l.errNode(tv, f+".tie_within", "%s is out of range (want 0 <= tie_within < 1, e.g. 0 for a deterministic unit)", tv.errNum(tv.text))
					} else {
						g.TieWithinFor[gate.Metric(name)] = x
					}
				}
			}
			if bv := mm["better"]; bv != nil {
				if b, ok := l.str(bv, f+".better"); ok {
					switch b {
					case "higher", "lower":
						if g.HigherBetterFor == nil {
							g.HigherBetterFor = map[gate.Metric]bool{}
						}
						g.HigherBetterFor[gate.Metric(name)] = b == "higher"
					default:
						l.errNode(bv, f+".better", "%q: want higher or lower", bv.errText())
					}
				}
			}
		}
		if len(g.TieWithinFor) == 0 {
			g.TieWithinFor = nil
		}
	}
	v := m["fail_on"]
	if v == nil || !l.list(v, "gate.fail_on", "rules") {
		return
	}
	g.FailOn = []gate.Rule{}
	for i, it := range v.items {
		f := index("gate.fail_on", i)
		rm, ok := l.fields(it, f, "metric", "classes", "concurrency", "variants")
		if !ok {
			continue
		}
		var r gate.Rule
		if mv := rm["metric"]; mv == nil {
			l.errNode(it, f+".metric", "missing (want one of %s)", strings.Join(metricNames, ", "))
		} else if l.s.Kind == KindGoBench {
			// A benchmark's units are known once it ran: sec/op, B/op,
			// allocs/op, B/s or its own. ns/op and MB/s are the same as
			// sec/op and B/s, as benchstat tidies them.
			if s, ok := l.nonEmptyStr(mv, f+".metric"); ok {
				r.Metric = gate.Metric(TidyUnit(s))
			}
		} else if s, ok := l.str(mv, f+".metric"); ok {
			if !slices.Contains(metricNames, s) {
				msg := fmt.Sprintf("unknown metric %q", mv.errText())
				if d := DidYouMean(s, metricNames); d != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", d)
				} else {
					msg += fmt.Sprintf(" (want one of %s)", strings.Join(metricNames, ", "))
				}
				l.errNode(mv, f+".metric", "%s", msg)
			}
			r.Metric = gate.Metric(s)
			// A url target is not started by benchgate, so nothing measures
			// what it uses: a rule on its resources could never be decided
			// and would fail every run as inconclusive.
			if slices.Contains(gate.ResourceMetrics, r.Metric) {
				for _, t := range []Target{l.s.Baseline, l.s.Candidate} {
					if t.URL != "" {
						l.errNode(mv, f+".metric", "%s cannot be measured: the %s is a url target, whose resources benchgate does not see (use a command or image target)", s, t.Name)
						break
					}
				}
			}
		}
		if l.s.Kind == KindGoBench {
			// Benchmarks are found when they run: the globs cannot be
			// checked against them here.
			r.Classes = l.anyGlobs(rm["classes"], f+".classes")
			if cv := rm["concurrency"]; cv != nil {
				l.errAt(cv.keyLine, cv.keyCol, f+".concurrency", "not for a gobench scenario (a benchmark has no concurrency; name the -cpu suffix in classes)")
			}
			if vv := rm["variants"]; vv != nil {
				l.errAt(vv.keyLine, vv.keyCol, f+".variants", "not for a gobench scenario")
			}
			g.FailOn = append(g.FailOn, r)
			continue
		}
		r.Classes = l.globs(rm["classes"], f+".classes", "class", slices.Sorted(mapKeys(l.s.AllClasses)))
		var vnames []string
		for _, vr := range l.s.Variants {
			vnames = append(vnames, vr.Name)
		}
		r.Variants = l.globs(rm["variants"], f+".variants", "variant", vnames)
		if cv := rm["concurrency"]; cv != nil && l.list(cv, f+".concurrency", "concurrency levels or globs") {
			for j, cn := range cv.items {
				cf := index(f+".concurrency", j)
				if cn.kind == kindScalar && cn.scalar == scalarInt {
					if c, ok := l.intRange(cn, cf, 1, math.MaxInt32); ok {
						r.Concurrency = append(r.Concurrency, strconv.Itoa(c))
					}
					continue
				}
				if s, ok := l.nonEmptyStr(cn, cf); ok {
					if _, err := path.Match(s, ""); err != nil {
						l.errNode(cn, cf, "%q is not a glob (path.Match syntax, e.g. \"*\", \"1?\")", cn.errText())
					} else {
						r.Concurrency = append(r.Concurrency, s)
					}
				}
			}
		}
		g.FailOn = append(g.FailOn, r)
	}
}

// globs reads a list of path.Match globs, each of which must match one of
// names: a rule that can never apply is a typo that would pass silently.
func (l *loader) globs(n *node, f, what string, names []string) []string {
	if n == nil {
		return nil
	}
	items, ok := l.strList(n, f)
	if !ok {
		return nil
	}
	var out []string
	for i, g := range items {
		gf := index(f, i)
		if _, err := path.Match(g, ""); err != nil {
			l.errNode(n.items[i], gf, "%q is not a glob (path.Match syntax, e.g. \"*\", \"Q0?\")", n.items[i].errText())
			continue
		}
		matched := false
		for _, name := range names {
			if ok, _ := path.Match(g, name); ok {
				matched = true
				break
			}
		}
		if !matched {
			msg := fmt.Sprintf("%q matches no %s", n.items[i].errText(), what)
			if s := DidYouMean(g, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			l.errNode(n.items[i], gf, "%s", msg)
			continue
		}
		out = append(out, g)
	}
	return out
}

// checkRounds checks the rounds in force (after the profile) against the
// paired rule. One round leaves the rule its batches alone, which share
// the round's noise: the interval is too narrow (simulated, 95%: it
// missed an A/A gate's ratio of 1 in 8–21% of gates), so it is refused.
// Two rounds hold the confidence but resolve little, the rounds' t(1)
// deciding whenever they disagree: a warning. docs/statistics.md#how-many-rounds
// has the table.
func (l *loader) checkRounds(profile string) {
	reps := l.s.Load.Repetitions
	if l.s.Gate.Rule != gate.RulePaired || reps >= 3 {
		return
	}
	f, v := l.setIn(l.repsPos, profile, "repetitions")
	if v == nil {
		return // the default is 5
	}
	rule := "gate.rule paired"
	if l.rulePos == nil {
		rule = "the paired rule (gate.rule's default)"
	}
	if reps < 2 {
		l.errNode(v, f, "1 round is too few under %s: one round's batches alone would decide, and they share the round's noise, so the 95%% interval misses the true ratio in 8–21%% of A/A gates (simulated); want at least 2, 3 or more to resolve a change (docs/statistics.md#how-many-rounds)", rule)
		return
	}
	l.s.Warnings = append(l.s.Warnings, &Error{File: l.file, Line: v.line, Col: v.col, Field: f,
		Msg: fmt.Sprintf("2 rounds under %s hold the confidence but resolve little: whenever the two rounds disagree their t(1) = 12.7 decides (simulated: 1%% of A/A gates resolved a 10%% change at 2 rounds, 3–8%% at 3, 11–33%% at 5); 3 or more are advised (docs/statistics.md#how-many-rounds)", rule)})
}
