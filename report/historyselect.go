package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
)

// SelectHistory is the HistoryInput of the series of records that f
// selects, each with the change points found on all of its runs (none on
// a fingerprint of benchdata.MixedPrefix) by opt, shown to its last
// f.Last runs (0: all). No records, or no series selected, is an error; the latter
// names the metrics the records have, as a terminal shows them.
func SelectHistory(records []benchdata.Record, f benchdata.SeriesFilter, opt benchdata.ChangePointOptions) (HistoryInput, error) {
	if len(records) == 0 {
		return HistoryInput{}, errors.New("no records yet")
	}
	machines := map[string]string{}
	for _, r := range records {
		machines[r.Fingerprint] = r.Machine // the newest, as records are in date order
	}
	in := HistoryInput{Options: opt, Last: f.Last}
	all := benchdata.HistorySeries(records)
	for _, s := range all {
		if !f.Match(s.Key) {
			continue
		}
		hs := HistorySeries{Series: s, Machine: machines[s.Key.Fingerprint]}
		if !strings.HasPrefix(s.Key.Fingerprint, benchdata.MixedPrefix) {
			hs.ChangePoints = benchdata.ChangePoints(s.Means(), opt)
		}
		in.Series = append(in.Series, hs)
	}
	if len(in.Series) == 0 {
		which := fmt.Sprintf("metric %s, target %s, cell %s", TerminalText(f.Metric), TerminalText(f.Target), TerminalText(f.Cell))
		if f.Fingerprint != "" {
			which += ", fingerprint " + TerminalText(f.Fingerprint)
		}
		return HistoryInput{}, fmt.Errorf("no series of %s (metrics in the history: %s)",
			which, TerminalText(strings.Join(benchdata.SeriesMetrics(all), ", ")))
	}
	return in, nil
}
