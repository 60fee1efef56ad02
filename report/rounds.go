package report

import (
	"strconv"
	"strings"
)

// Pin sets run one after the other, so a run cancelled in its second pin
// set has complete rounds of the first, and the gate decides each cell on
// the complete rounds of its own pin set (baselines.Results.CompleteRoundsOf).
// The report filters rungs the same way, and names the rounds per pin set
// wherever they differ.

// pinRounds is the number of complete rounds one pin set was decided on.
type pinRounds struct {
	pins   string // untrusted
	rounds int
}

// buildRounds fills m.rounds from the results file: one entry per pin set
// of the plan, in schedule order, or one entry with pins "" (holding
// Input.Rounds) when the scenario has no pin sets.
func (m *model) buildRounds() {
	r := m.in.Results
	if len(r.Plan.PinSets) == 0 {
		m.rounds = []pinRounds{{pins: "", rounds: m.in.Rounds}}
		return
	}
	seen := map[string]bool{}
	for _, p := range r.Plan.PinSets {
		if !seen[p] {
			seen[p] = true
			m.rounds = append(m.rounds, pinRounds{pins: p, rounds: r.CompleteRoundsOf(p)})
		}
	}
}

// roundsOf is the number of complete rounds the cells of a pin set were
// decided on: a rung of a later round was not decided on.
func (m *model) roundsOf(pins string) int {
	if len(m.in.Results.Plan.PinSets) == 0 {
		return m.in.Rounds
	}
	for _, p := range m.rounds {
		if p.pins == pins {
			return p.rounds
		}
	}
	return m.in.Results.CompleteRoundsOf(pins)
}

// decided says whether a rung of the pin set and round was decided on.
func (m *model) decided(pins string, round int) bool {
	return round < m.roundsOf(pins)
}

// uniformRounds says whether every pin set was decided on the same number
// of rounds, m.in.Rounds; always so without pin sets.
func (m *model) uniformRounds() bool {
	for _, p := range m.rounds {
		if p.rounds != m.in.Rounds {
			return false
		}
	}
	return true
}

// roundsText counts the decided rounds: "3 complete rounds" when the pin
// sets agree, else per pin set in schedule order, "3 complete rounds of pin
// set cpus=1, none of cpus=2". one and many are the noun; esc escapes the
// pin sets' names for the medium.
func (m *model) roundsText(one, many string, esc func(string) string) string {
	if m.uniformRounds() {
		return plural(m.in.Rounds, one, many)
	}
	parts := make([]string, len(m.rounds))
	for i, p := range m.rounds {
		name := esc(p.pins)
		switch {
		case i == 0 && p.rounds == 0:
			parts[i] = "no " + one + " of pin set " + name
		case i == 0:
			parts[i] = plural(p.rounds, one, many) + " of pin set " + name
		case p.rounds == 0:
			parts[i] = "none of " + name
		default:
			parts[i] = strconv.Itoa(p.rounds) + " of " + name
		}
	}
	return strings.Join(parts, ", ")
}

// undecidedPins names the pin sets with no complete round while another
// has some, escaped by esc and joined by ", "; "" when there is none.
func (m *model) undecidedPins(esc func(string) string) string {
	var names []string
	for _, p := range m.rounds {
		if p.rounds == 0 {
			names = append(names, esc(p.pins))
		}
	}
	if len(names) == len(m.rounds) {
		return ""
	}
	return strings.Join(names, ", ")
}
