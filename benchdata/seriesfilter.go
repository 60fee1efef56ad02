package benchdata

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/gate"
)

// SeriesFilter selects series of a history, as "benchgate history show"
// does: every field must match.
type SeriesFilter struct {
	Metric string // the metric, exactly
	Target string // "candidate", "baseline", or "all" for both
	// Cell is a path.Match glob of the cell's name ("Q01 c=8",
	// "csv/Q01 c=8") or of its class.
	Cell string
	// Fingerprint is a prefix of the machine's fingerprint ("" for all).
	Fingerprint string
	// Last keeps only the last Last runs of each series for showing (0:
	// all); change points are found on all of them.
	Last int
}

// Check refuses a filter that can match nothing by its form: a Cell that
// is no glob, a Target that is none of the three, a negative Last. Each is named as the
// CLI's flag is.
func (f SeriesFilter) Check() error {
	if _, err := path.Match(f.Cell, ""); err != nil {
		return fmt.Errorf("-cell %q: %v", f.Cell, err)
	}
	if !slices.Contains([]string{"candidate", "baseline", "all"}, f.Target) {
		return fmt.Errorf("-target %q: want candidate, baseline or all", f.Target)
	}
	if f.Last < 0 {
		return fmt.Errorf("-last %d: want 0 or more runs", f.Last)
	}
	return nil
}

// Match reports whether the series of key k is one the filter selects.
func (f SeriesFilter) Match(k SeriesKey) bool {
	return k.Metric == f.Metric && (f.Target == "all" || k.Target == f.Target) &&
		strings.HasPrefix(k.Fingerprint, f.Fingerprint) && k.Cell.Matches(f.Cell)
}

// Matches reports whether glob (path.Match) matches the cell's name or
// its class; a malformed glob matches nothing.
func (c Cell) Matches(glob string) bool {
	for _, name := range []string{c.String(), c.Class} {
		if ok, _ := path.Match(glob, name); ok {
			return true
		}
	}
	return false
}

// recordMetrics are the service metrics a record keeps, in report order.
var recordMetrics = slices.DeleteFunc(slices.Clone(gate.AllMetrics), historyDropped)

// SeriesMetrics lists the metrics of series, each once: the service
// metrics a record keeps in report order (rps, p50, p95, p99, error_rate,
// cpu_per_req, mem_peak), then any other by name.
func SeriesMetrics(series []Series) []string {
	var ms []string
	for _, s := range series {
		if !slices.Contains(ms, s.Key.Metric) {
			ms = append(ms, s.Key.Metric)
		}
	}
	rank := func(m string) int {
		if i := slices.Index(recordMetrics, gate.Metric(m)); i >= 0 {
			return i
		}
		return len(recordMetrics)
	}
	slices.SortFunc(ms, func(a, b string) int { return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b)) })
	return ms
}
