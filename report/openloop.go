package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// An open loop's cells (load.rate) compare latencies at an offered load,
// which holds only where each side was offered it: a side that could not
// keep up (requests sent late for want of a free worker or of the
// generator's CPU, requests never sent, answers well below the rate) was
// measured at less, and its latencies include the queueing. The report
// says so beside the cell, never averaged into the grid.

// unsustained is one side of an open-loop cell that did not keep up.
type unsustained struct {
	cell         benchdata.Cell // untrusted names
	target       string
	asked        int64   // requests due in the measured windows
	late, unsent int64   // of them, sent late and never sent
	answeredRate float64 // answers a second over the windows
}

// keptUp says whether a side of an open-loop cell was offered its rate:
// no request unsent, at most 1% late, answers at 95% of the rate or more.
func (u unsustained) keptUp() bool {
	return u.unsent == 0 && u.late*100 <= u.asked && u.answeredRate >= 0.95*float64(u.cell.Rate)
}

// buildOpenLoop finds the sides of open-loop cells that did not keep up
// over the decided rounds, in plan order.
func (m *model) buildOpenLoop() {
	type side struct {
		cell   benchdata.Cell
		target string
	}
	sums := map[side]*unsustained{}
	answered := map[side]float64{}
	duration := map[side]float64{}
	var order []side
	for _, r := range m.in.Results.Rungs {
		if r.Rate <= 0 || r.Duration <= 0 || !m.decided(r.Cell, r.Round) {
			continue
		}
		k := side{r.Cell, r.Target}
		u := sums[k]
		if u == nil {
			u = &unsustained{cell: r.Cell, target: r.Target}
			sums[k] = u
			order = append(order, k)
		}
		u.asked += r.Asked
		u.late += r.Late
		u.unsent += r.Unsent
		answered[k] += r.Value(gate.RPS) * r.Duration
		duration[k] += r.Duration
	}
	for _, k := range order {
		u := sums[k]
		u.answeredRate = answered[k] / duration[k]
		if !u.keptUp() {
			m.unsustained = append(m.unsustained, *u)
		}
	}
	slices.SortStableFunc(m.unsustained, func(a, b unsustained) int {
		return cmp.Or(cmp.Compare(m.position(a.cell), m.position(b.cell)), strings.Compare(a.target, b.target))
	})
}

// unsustainedText is the warning for one side that did not keep up.
func (u unsustained) text(esc func(string) string) string {
	s := fmt.Sprintf("%s: the %s was offered %d requests/s and answered %.0f/s", esc(u.cell.String()), esc(u.target), u.cell.Rate, u.answeredRate)
	var what []string
	if u.late > 0 {
		what = append(what, fmt.Sprintf("%d of %d requests went out late (more than 1 ms after their time)", u.late, u.asked))
	}
	if u.unsent > 0 {
		what = append(what, fmt.Sprintf("%d never went out", u.unsent))
	}
	if len(what) > 0 {
		s += "; " + strings.Join(what, ", ")
	}
	return s + ": it did not keep up with the rate, so its latencies there are those of a queue, timed from each request's scheduled time"
}
