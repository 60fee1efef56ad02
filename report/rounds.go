package report

import (
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
)

// Pin sets run one after the other, so a run cancelled in its second pin
// set has complete rounds of the first, and the gate decides each cell on
// the complete rounds of its own pin set (benchdata.Results.CompleteRoundsOf).
// With adaptive rounds (Plan.MaxRounds above Plan.Rounds) a cell whose
// verdict was still open after the planned rounds ran more, alone, and is
// decided on its own count (benchdata.Results.RoundsOfCell). The report
// filters rungs the same way, cell by cell, and names the rounds per pin
// set, and as a range, wherever they differ.

// pinRounds is the number of complete rounds one pin set was decided on:
// rounds for every cell of it, most for the cell that ran the most.
type pinRounds struct {
	pins   string // untrusted
	rounds int
	most   int
}

// buildRounds fills m.rounds from the results file: one entry per pin set
// of the plan, in schedule order, or one entry with pins "" (holding
// Input.Rounds) when the scenario has no pin sets.
func (m *model) buildRounds() {
	r := m.in.Results
	m.cellRounds = map[benchdata.Cell]int{}
	if len(r.Plan.PinSets) == 0 {
		m.rounds = []pinRounds{{pins: "", rounds: m.in.Rounds, most: m.mostRounds("")}}
		return
	}
	seen := map[string]bool{}
	for _, p := range r.Plan.PinSets {
		if !seen[p] {
			seen[p] = true
			n := r.CompleteRoundsOf(p)
			m.rounds = append(m.rounds, pinRounds{pins: p, rounds: n, most: max(n, m.mostRounds(p))})
		}
	}
}

// mostRounds is the most rounds a cell of the plan in the pin set was
// decided on.
func (m *model) mostRounds(pins string) int {
	n := m.roundsOf(pins)
	for _, c := range m.in.Results.Plan.Cells {
		if c.Pins == pins {
			n = max(n, m.roundsOfCell(c))
		}
	}
	return n
}

// roundsOf is the number of complete rounds every cell of a pin set was
// decided on: a rung of a later round was not decided on, unless its cell
// took adaptive rounds (roundsOfCell).
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

// roundsOfCell is the number of rounds cell c was decided on, as the CLI
// decides it: the complete rounds of its pin set and any adaptive rounds
// after them in which it ran on both targets. When the caller decided on
// fewer rounds than the results file holds (Input.Rounds), that count
// stands and no adaptive round is added. Counts are cached per cell: every
// rung asks.
func (m *model) roundsOfCell(c benchdata.Cell) int {
	if n, ok := m.cellRounds[c]; ok {
		return n
	}
	r := m.in.Results
	if m.allRounds == nil {
		m.allRounds, m.completeOf = r.CellRounds(), map[string]int{}
	}
	complete, ok := m.completeOf[c.Pins]
	if !ok {
		complete = r.CompleteRoundsOf(c.Pins)
		m.completeOf[c.Pins] = complete
	}
	n := m.roundsOf(c.Pins)
	if n == complete {
		if all, ok := m.allRounds[c]; ok {
			n = all
		} // else a cell of no rung: its pin set's complete rounds, n
	}
	m.cellRounds[c] = n
	return n
}

// decided says whether a rung of the cell and round was decided on.
func (m *model) decided(c benchdata.Cell, round int) bool {
	return round < m.roundsOfCell(c)
}

// uniformRounds says whether every pin set was decided on the same
// rounds, m.in.Rounds for its every cell or the same range; always so
// without pin sets.
func (m *model) uniformRounds() bool {
	for _, p := range m.rounds {
		if p.rounds != m.in.Rounds || p.most != m.rounds[0].most {
			return false
		}
	}
	return true
}

// cellsDiffer says whether adaptive rounds gave some cell more rounds than
// another: a verdict table then shows each cell's count. Pin sets cut short
// differently are named in the counts of rounds instead.
func (m *model) cellsDiffer() bool {
	if !m.adaptive() {
		return false
	}
	lo, hi := -1, 0
	for _, c := range m.in.Comparison.Cells {
		n := m.roundsOfCell(cellOf(c.Key))
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	return lo >= 0 && lo != hi
}

// roundsRange counts rounds, as a range where cells differ: "3 rounds",
// "3–5 rounds".
func roundsRange(lo, hi int, one, many string) string {
	if hi <= lo {
		return plural(lo, one, many)
	}
	return strconv.Itoa(lo) + "–" + strconv.Itoa(hi) + " " + many
}

// roundsText counts the decided rounds: "3 complete rounds" when the pin
// sets agree, "3–5 complete rounds" when adaptive rounds gave some cells
// more, else per pin set in schedule order, "3 complete rounds of pin set
// cpus=1, none of cpus=2". one and many are the noun; esc escapes the pin
// sets' names for the medium.
func (m *model) roundsText(one, many string, esc func(string) string) string {
	if m.uniformRounds() {
		return roundsRange(m.in.Rounds, m.rounds[0].most, one, many)
	}
	parts := make([]string, len(m.rounds))
	for i, p := range m.rounds {
		name := esc(p.pins)
		count := strconv.Itoa(p.rounds)
		if p.most > p.rounds {
			count += "–" + strconv.Itoa(p.most)
		}
		switch {
		case i == 0 && p.most == 0:
			parts[i] = "no " + one + " of pin set " + name
		case i == 0:
			parts[i] = roundsRange(p.rounds, p.most, one, many) + " of pin set " + name
		case p.most == 0:
			parts[i] = "none of " + name
		default:
			parts[i] = count + " of " + name
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
