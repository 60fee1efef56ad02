package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

func (m *model) mdClaims(b *strings.Builder) {
	r, c := m.in.Results, m.in.Comparison
	b.WriteString("### Claims\n\n")
	fmt.Fprintf(b, "This run may claim the relative behaviour of these two builds — baseline%s and candidate%s — "+
		"on this runner, under scenario %s%s: nothing else. It measures neither absolute capacity "+
		"nor behaviour on other hardware or under another workload.\n\n",
		commitSuffix(r.Env.Baseline), commitSuffix(r.Env.Candidate),
		md(r.Scenario.Name), scenarioIdentity(r.Scenario))
	better := "higher throughput, lower latency"
	if m.isGoBench() {
		better = "lower time, memory and allocations per op, higher rates"
	}
	design := []string{m.ruleClaim(better), m.orderText()}
	if s := m.adaptiveText(); s != "" {
		design = append(design, s)
	}
	if s := m.restartClaim(); s != "" {
		design = append(design, s)
	}
	if s := m.familyClaim(); s != "" {
		design = append(design, s)
	}
	if m.anyPaired() {
		design = append(design, "Where a cell was decided on paired observations, Δ is the change of their ratio candidate/baseline, "+
			"with its interval in brackets.")
	}
	b.WriteString(strings.Join(design, " ") + "\n\n")
	b.WriteString("The gate fails on:\n\n")
	for _, rule := range c.Policy.FailOn {
		b.WriteString("- " + ruleText(rule) + "\n")
	}
	if inc := c.Policy.MaxErrorIncrease; inc != nil && !m.isGoBench() {
		fmt.Fprintf(b, "- a candidate error rate more than %s above the baseline's in any cell\n", fraction(*inc))
	}
	if c.Policy.MaxErrorRate >= 0 && !m.isGoBench() {
		fmt.Fprintf(b, "- a candidate error rate above %s in any cell\n", fraction(c.Policy.MaxErrorRate))
	}
	checks := m.correctnessRules()
	for _, r := range checks {
		b.WriteString("- " + r + "\n")
	}
	if len(c.Policy.FailOn) == 0 && c.Policy.MaxErrorRate < 0 && len(checks) == 0 {
		b.WriteString("- nothing: no rule is declared, so this run can only inform\n")
	}
	if m.rule() == gate.RulePaired {
		b.WriteString("\n**Inconclusive** means too few observations to form an interval (at least 2 batches of paired " +
			"observations, or for the error rate 2 repetitions, are needed); it is never a pass.\n\n")
	} else {
		b.WriteString("\n**Inconclusive** means too few repetitions to form an interval (at least 2 are needed); " +
			"it is never a pass.\n\n")
	}
	if m.anyUnresolved() {
		b.WriteString("A **tie (rules out > N%)** is an unresolved tie: its interval reaches a regression of N% (rounded up), " +
			"more than the tie band, so it rules out only a regression larger than that.\n\n")
	}
}

// anyUnresolved says whether some verdict shown is an unresolved tie.
func (m *model) anyUnresolved() bool {
	for _, c := range m.in.Comparison.Cells {
		for _, d := range c.Decisions {
			if d.Unresolved {
				return true
			}
		}
	}
	return false
}

// scenarioIdentity is ", sha256 0123…, seed 1, profile pr" for prose.
func scenarioIdentity(s benchdata.ScenarioInfo) string {
	var parts []string
	if s.Hash != "" {
		parts = append(parts, "sha256 "+md(shortHash(s.Hash)))
	}
	parts = append(parts, "seed "+strconv.FormatUint(s.Seed, 10))
	if s.Profile != "" {
		parts = append(parts, "profile "+md(s.Profile))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// ruleText states a fail_on rule in words, with its globs escaped.
func ruleText(r gate.Rule) string {
	var where []string
	add := func(what string, globs []string) {
		if len(globs) == 0 || (len(globs) == 1 && globs[0] == "*") {
			return
		}
		esc := make([]string, len(globs))
		for i, g := range globs {
			esc[i] = md(g)
		}
		where = append(where, what+" matches "+strings.Join(esc, " or "))
	}
	add("class", r.Classes)
	add("concurrency", r.Concurrency)
	add("variant", r.Variants)
	s := "a regression of " + md(string(r.Metric)) + " "
	if len(where) == 0 {
		return s + "in any cell"
	}
	return s + "where " + strings.Join(where, " and ")
}

func (m *model) mdThreats(b *strings.Builder) {
	b.WriteString("### Threats to validity\n\n")
	for _, t := range m.threats() {
		b.WriteString("- " + t + "\n")
	}
	b.WriteString("\n")
}

// threats lists what limits this run's claim, as markdown items. Only
// conditions the results file records are listed; the rest of the protocol
// is stated in Claims.
func (m *model) threats() []string {
	r := m.in.Results
	env := r.Env
	var out []string
	window := "single run window"
	if !env.Start.IsZero() {
		window += " (" + stamp(env.Start)
		if !env.End.IsZero() {
			window += " → " + stamp(env.End)
		}
		window += ")"
	}
	out = append(out, "Single runner, "+window+": nothing here speaks for other machines, "+
		"and drift of this host during the window is only partly cancelled by interleaving.")
	if len(env.Pins) == 0 {
		out = append(out, "No resource pins: both targets could use every CPU of the host, "+
			"so background activity reaches them unevenly.")
	}
	for _, p := range env.Pins {
		if len(p.NotApplied) == 0 {
			continue
		}
		reasons := make([]string, len(p.NotApplied))
		for i, n := range p.NotApplied {
			reasons[i] = md(n)
		}
		out = append(out, "Pin set "+md(p.Name)+" was not fully applied ("+strings.Join(reasons, "; ")+
			"): its cells ran outside the declared budget, so they do not show how the targets behave within it.")
	}
	if m.ownLoad() {
		out = append(out, "The load generator runs on the same host as the targets and competes with them for CPU; "+
			"a saturated generator slows both sides alike and pushes verdicts towards a tie.")
	}
	if fps := m.shardFingerprints(); len(fps) > 1 {
		out = append(out, fmt.Sprintf("The grid's shards ran on %d different kinds of machine (fingerprints %s): each cell compares its two builds on one machine, but cells measured on different machines do not compare with each other.",
			len(fps), strings.Join(fps, ", ")))
	}
	if s := m.generator.saturationText(md); s != "" {
		out = append(out, strings.ToUpper(s[:1])+s[1:]+".")
	}
	for _, u := range m.unsustained {
		out = append(out, "Open loop, "+u.text(md)+".")
	}
	if s := m.sourceThreat(); s != "" {
		out = append(out, s)
	}
	switch r.Status {
	case "cancelled", "failed", "running":
		after := fmt.Sprintf("after %d of %d planned rounds", m.in.Rounds, r.Plan.Rounds)
		if !m.uniformRounds() {
			after = fmt.Sprintf("with %s (%d planned)", m.roundsText("complete round", "complete rounds", md), r.Plan.Rounds)
		}
		out = append(out, fmt.Sprintf("The run stopped early (%s) %s: "+
			"fewer repetitions give wider intervals, so more cells read as ties or inconclusive.",
			md(r.Status), after))
	default:
		if m.in.Rounds > 0 && m.in.Rounds < 3 {
			out = append(out, fmt.Sprintf("Only %s: the t-intervals are wide, so only large changes can be told from a tie.",
				plural(m.in.Rounds, "repetition", "repetitions")))
		}
	}
	for _, t := range []benchdata.TargetInfo{env.Baseline, env.Candidate} {
		name := sideName(t)
		if t.Kind == "url" {
			out = append(out, "The "+name+" is an already-running service: benchgate neither built, started nor pinned it.")
		}
		if t.Commit == "" {
			out = append(out, "The "+name+"'s commit is unknown: the report cannot show which build was measured.")
		}
	}
	if len(m.errors) > 0 {
		out = append(out, "Some "+m.noun().many+" failed (see Errors): a side that fails fast can look faster, "+
			"and its latency mixes error responses with real ones.")
	}
	out = append(out, m.designThreats()...)
	return append(out, m.correctnessThreats()...)
}

func sideName(t benchdata.TargetInfo) string {
	if t.Name == "" {
		return "target"
	}
	return md(t.Name)
}

func (m *model) mdReproduce(b *strings.Builder) {
	s := m.in.Results.Scenario
	b.WriteString("### Reproduce with\n\n")
	cmd := reproduceCommand(s)
	r := m.in.Results
	tool, imported := r.Imported()
	switch {
	case r.Kind == "gobench" && r.Env.Baseline.Kind == "file":
		cmd = "benchgate compare " + shellWord(r.Env.Baseline.Spec) + " " + shellWord(r.Env.Candidate.Spec)
	case imported:
		cmd = "benchgate compare -import " + shellWord(tool) +
			" -baseline " + shellWord(strings.ReplaceAll(r.Env.Baseline.Spec, ", ", ",")) +
			" -candidate " + shellWord(strings.ReplaceAll(r.Env.Candidate.Spec, ", ", ","))
	}
	f := fence(cmd)
	fmt.Fprintf(b, "%ssh\n%s\n%s\n\n", f, cmd, f)
	switch {
	case r.Kind == "gobench" && r.Env.Baseline.Kind == "file":
		b.WriteString("These were saved go test -bench outputs: decided again from the same files, they give the same verdicts.\n\n")
	case imported:
		b.WriteString("These were another tool's reports: decided again from the same files, they give the same verdicts.\n\n")
	case r.Kind == "gobench":
		fmt.Fprintf(b, "The rounds' order is a function of the scenario's seed (%d); "+
			"run it on the same runner type with the same two versions.\n\n", s.Seed)
	default:
		n := m.noun()
		fmt.Fprintf(b, "The %s stream is a function of the scenario's seed (%d), so a rerun sends the same %s; "+
			"run it on the same runner type with the same two builds.\n\n", n.one, s.Seed, n.many)
	}
}

func reproduceCommand(s benchdata.ScenarioInfo) string {
	file := s.File
	if file == "" {
		file = "benchgate.yml"
	}
	cmd := "benchgate gate -scenario " + shellWord(file)
	if s.Profile != "" {
		cmd += " -profile " + shellWord(s.Profile)
	}
	return cmd
}

func (m *model) mdEnvironment(b *strings.Builder) {
	r := m.in.Results
	env, s := r.Env, r.Scenario
	b.WriteString("### Environment\n\n")
	for _, t := range []benchdata.TargetInfo{env.Baseline, env.Candidate} {
		b.WriteString("- " + targetText(t) + "\n")
	}
	line := "- **scenario**: " + md(orDash(s.File))
	if s.Hash != "" {
		line += ", sha256 " + md(shortHash(s.Hash))
	}
	line += ", seed " + strconv.FormatUint(s.Seed, 10)
	if s.Profile != "" {
		line += ", profile " + md(s.Profile)
	}
	b.WriteString(line + "\n")
	if l := s.Load; len(l.Concurrency) > 0 {
		cs := make([]string, len(l.Concurrency))
		for i, c := range l.Concurrency {
			cs[i] = strconv.Itoa(c)
		}
		decided := m.roundsText("complete round", "complete rounds", md) + " decided"
		if !m.uniformRounds() {
			decided = "decided on " + m.roundsText("complete round", "complete rounds", md)
		}
		sliced := ""
		if m.sliced() {
			sliced = "; alternating in slices of " + m.sliceText()
		}
		planned := plural(l.Repetitions, "repetition", "repetitions") + " planned"
		if m.adaptive() {
			planned += fmt.Sprintf(" (up to %d where a verdict was open)", m.in.Results.Plan.MaxRounds)
		}
		loop := "concurrency " + strings.Join(cs, ", ")
		if len(l.Rate) > 0 {
			rs := make([]string, len(l.Rate))
			for i, r := range l.Rate {
				rs[i] = strconv.Itoa(r)
			}
			loop = "open loop at " + strings.Join(rs, ", ") + " requests/s, latency timed from each request's scheduled time; at most " +
				strings.Join(cs, ", ") + " in flight"
		}
		fmt.Fprintf(b, "- **load**: %s; %s measured after %s warmup per rung%s; timeout %s; "+
			"%s, %s\n",
			loop, seconds(l.Duration), seconds(l.Warmup), sliced, seconds(l.Timeout),
			planned, decided)
	}
	cpu := md(orDash(env.CPUModel))
	if env.CPUs > 0 {
		cpu += fmt.Sprintf(" × %d", env.CPUs)
	}
	fmt.Fprintf(b, "- **runner**: %s; %s/%s, kernel %s; %s\n",
		cpu, md(orDash(env.OS)), md(orDash(env.Arch)), md(orDash(env.Kernel)), md(orDash(env.GoVersion)))
	for _, sh := range r.Shards {
		fmt.Fprintf(b, "- **shard %d/%d**: %s, %s, on %s (fingerprint %s)\n", sh.Index, len(r.Shards),
			plural(sh.Cells, "cell", "cells"), md(sh.Status), md(sh.Env.FingerprintText()), md(sh.Fingerprint))
	}
	tool := env.ToolVersion
	if tool == "" {
		tool = r.Tool
	}
	fmt.Fprintf(b, "- **tool**: %s\n", md(orDash(tool)))
	when := stamp(env.Start) + " → " + stamp(env.End)
	if d := span(env.Start, env.End); d != "" {
		when += " (" + d + ")"
	}
	fmt.Fprintf(b, "- **time**: %s\n", when)
	fmt.Fprintf(b, "- **pins**: %s\n", pinsText(env))
	if g := m.generator; g != nil {
		fmt.Fprintf(b, "- **load generator**: %s\n", g.text(md))
	}
}

func targetText(t benchdata.TargetInfo) string {
	s := "**" + sideName(t) + "**: " + md(orDash(t.Kind)) + " " + md(orDash(t.Spec))
	if t.Commit != "" {
		s += ", commit " + md(t.Commit) + dirtyText(t)
	} else {
		s += ", commit unknown"
	}
	if t.URL != "" {
		s += ", reached at " + md(t.URL)
	}
	return s
}

func pinsText(env benchdata.Environment) string {
	if len(env.Pins) == 0 {
		return "none"
	}
	var sets []string
	for _, p := range env.Pins {
		s := md(p.Name)
		if len(p.NotApplied) > 0 {
			s += " (" + plural(len(p.NotApplied), "pin", "pins") + " not applied)"
		} else {
			s += " (applied)"
		}
		sets = append(sets, s)
	}
	return strings.Join(sets, "; ")
}

// ownLoad says whether benchgate's own load generator measured the run:
// HTTP requests, or gRPC calls.
func (m *model) ownLoad() bool {
	k := m.in.Results.Kind
	return k == "" || k == "http" || k == "grpc"
}

// shardFingerprints lists the distinct machine fingerprints of a merged
// run's shards, in shard order.
func (m *model) shardFingerprints() []string {
	var fps []string
	for _, s := range m.in.Results.Shards {
		if !slices.Contains(fps, s.Fingerprint) {
			fps = append(fps, s.Fingerprint)
		}
	}
	return fps
}
