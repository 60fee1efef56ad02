package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// CalibrationInput is what benchgate calibrate reports: an A/A run of the
// baseline against a second instance of itself, decided, and what it says
// of the runner.
type CalibrationInput struct {
	Results      *benchdata.Results
	Comparison   gate.Comparison
	Calibrations []gate.Calibration
}

// Calibration writes the calibration report in format: terminal, markdown
// or json. Cell names are untrusted and escaped for the medium.
func Calibration(w io.Writer, in CalibrationInput, format string) error {
	if in.Results == nil {
		in.Results = &benchdata.Results{}
	}
	return calibrationDoc.render(w, in, format)
}

// calibrationDoc is the calibration report in each format.
var calibrationDoc = document[CalibrationInput]{
	terminal: text(func(in CalibrationInput) string { return calibrationText(in, false) }),
	markdown: text(func(in CalibrationInput) string { return calibrationText(in, true) }),
	json:     calibrationJSON,
}

func calibrationJSON(w io.Writer, in CalibrationInput) error {
	cals := in.Calibrations
	if cals == nil {
		cals = []gate.Calibration{}
	}
	doc := struct {
		Scenario     string             `json:"scenario"`
		Profile      string             `json:"profile,omitempty"`
		Rule         gate.DecisionRule  `json:"rule"`
		Interleave   string             `json:"interleave"`
		Confidence   float64            `json:"confidence"`
		Rounds       int                `json:"rounds"`
		Status       string             `json:"status"`
		Resolved     int                `json:"resolved"`
		Power        float64            `json:"power"`
		FalseFailure float64            `json:"false_failure"`
		Calibrations []gate.Calibration `json:"calibrations"`
	}{
		Scenario: in.Results.Scenario.Name, Profile: in.Results.Scenario.Profile,
		Rule: ruleOf(in.Comparison.Settings), Interleave: interleaveOf(in.Results),
		Confidence: in.Comparison.Settings.Effective(), Rounds: in.Results.CompleteRounds(),
		Status: in.Results.Status, Resolved: resolved(cals), Power: gate.CalibrationPower,
		FalseFailure: gate.GateFalseFailure(cals, in.Comparison.Settings), Calibrations: cals,
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func ruleOf(s gate.Settings) gate.DecisionRule {
	if s.Rule == "" {
		return gate.RuleOverlap
	}
	return s.Rule
}

func interleaveOf(r *benchdata.Results) string {
	if r.Scenario.Load.Interleave == "" {
		return "round"
	}
	return r.Scenario.Load.Interleave
}

func resolved(cals []gate.Calibration) int {
	n := 0
	for _, c := range cals {
		if c.Reason == "" && c.Resolves {
			n++
		}
	}
	return n
}

// calibrationText is the terminal or markdown calibration report: a
// headline, a table with a row per gated metric of a cell, and how to read
// it.
func calibrationText(in CalibrationInput, markdown bool) string {
	esc := cleanTerminal
	if markdown {
		esc = md
	}
	r, cals := in.Results, in.Calibrations
	var b strings.Builder
	rule := ruleOf(in.Comparison.Settings)
	head := fmt.Sprintf("benchgate calibrate: %s — %d of %d gated metrics resolve their tie band on this runner",
		esc(r.Scenario.Name), resolved(cals), len(cals))
	if markdown {
		fmt.Fprintf(&b, "## %s\n\n", head)
	} else {
		fmt.Fprintf(&b, "%s\n\n", head)
	}
	design := fmt.Sprintf("Baseline against a second instance of itself: %s, %s interleaving, rule %s, intervals at %s.",
		plural(r.CompleteRounds(), "complete round", "complete rounds"), interleaveOf(r), rule,
		confidenceText(in.Comparison.Settings.Effective()))
	if r.Status != "complete" {
		design += " The run " + esc(r.Status) + ": what it measured is reported."
	}
	b.WriteString(design + "\n\n")
	union := gate.GateFalseFailure(cals, gate.Settings{})
	if ff := gate.GateFalseFailure(cals, in.Comparison.Settings); ff < union {
		fmt.Fprintf(&b, "Projected A/A failure of this gate on this runner: at most %s, held by the whole gate's error control (`gate.false_failure`); each of its %s alone, at these rounds and the noise each showed here, would add up to %s.\n\n",
			resolutionText(ff), plural(len(cals), "gated metric", "gated metrics"), resolutionText(union))
	} else {
		fmt.Fprintf(&b, "Projected A/A failure of this gate on this runner: at most %s, a false regression in any of its %s at these rounds and the noise each showed here.\n\n",
			resolutionText(union), plural(len(cals), "gated metric", "gated metrics"))
	}

	cols := []string{"cell", "metric", "noise/round", "noise/batch", "rules out", "detectable (80%)", "resolves?", "repetitions needed", "or max_repetitions", "or duration ×"}
	rows := make([][]string, 0, len(cals))
	for _, c := range cals {
		row := []string{esc(c.Key.String()), esc(string(c.Metric))}
		if c.Reason != "" {
			row = append(row, "-", "-", "-", "-", esc(c.Reason), "-", "-", "-")
			rows = append(rows, row)
			continue
		}
		paired := "-"
		if c.Batches > 0 {
			paired = fmt.Sprintf("%.1f%% (%d %s)", 100*c.Paired, c.Batches, cmp.Or(c.Spread, gate.SpreadBatches))
		}
		yes := "no"
		if c.Resolves {
			yes = "yes"
		}
		rounds := func(n int) string {
			if n > 0 {
				return strconv.Itoa(n)
			}
			return "> " + strconv.Itoa(gate.MaxRounds)
		}
		maxRounds := rounds(c.MaxRoundsNeeded)
		if c.MaxRoundsNeeded == 0 && c.RoundsNeeded > 0 {
			maxRounds = "-" // a design of more looks than Calibrate projects
		}
		detect := "-"
		if c.Detectable > 0 {
			detect = resolutionText(c.Detectable)
		}
		dur := "-"
		if c.DurationFactor > 0 {
			dur = fmt.Sprintf("%.1f", math.Max(c.DurationFactor, 0.1))
		}
		row = append(row, fmt.Sprintf("%.1f%%", 100*c.Unpaired), paired,
			fmt.Sprintf("> %s (band %s)", resolutionText(c.RulesOut), resolutionText(c.TieWithin)), detect, yes,
			rounds(c.RoundsNeeded), maxRounds, dur)
		rows = append(rows, row)
	}
	if markdown {
		b.WriteString("| " + strings.Join(cols, " | ") + " |\n|")
		for range cols {
			b.WriteString(" --- |")
		}
		b.WriteString("\n")
		for _, row := range rows {
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
	} else {
		widths := make([]int, len(cols))
		for i, c := range cols {
			widths[i] = len([]rune(c))
		}
		for _, row := range rows {
			for i, c := range row {
				widths[i] = max(widths[i], len([]rune(c)))
			}
		}
		line := func(cells []string) {
			for i, c := range cells {
				pad := widths[i] - len([]rune(c))
				b.WriteString(c + strings.Repeat(" ", pad))
				if i < len(cells)-1 {
					b.WriteString("  ")
				}
			}
			b.WriteString("\n")
		}
		line(cols)
		for _, row := range rows {
			line(row)
		}
	}
	b.WriteString("\n")
	b.WriteString("noise/round: the spread of one round's value (coefficient of variation, both instances pooled). " +
		"noise/batch: the spread of one batch's log ratio, what the paired rule sees. " +
		"rules out: the regression this run's interval ruled out (its end on the worse side); beyond the band, the tie is unresolved. " +
		"detectable (80%): at these rounds, the regression whose interval excludes no change in 80% of gates, and what 80% of A/A ties rule out; a regression fails the gate only beyond the band as well. " +
		"repetitions needed: the fewest rounds at which that is within the band: 80% of A/A ties resolved (load.repetitions). " +
		"or max_repetitions: the same for adaptive rounds from these rounds, whose last look is at a stricter confidence (- beyond 40 looks). " +
		"or duration ×: for slice pairs, by how much load.duration would have to grow at these rounds instead, assuming slice pairs independent. " +
		"See docs/statistics.md and docs/self-hosted.md.\n")
	return b.String()
}
