package export

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// gabBench is one entry of github-action-benchmark's custom JSON (its
// BenchmarkResult: name, unit, value, and the optional range and extra,
// which its chart's tooltip shows).
type gabBench struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	Range string  `json:"range,omitempty"`
	Extra string  `json:"extra,omitempty"`
}

// GABName is the name of a cell's metric in github-action-benchmark's
// JSON: the cell's name and the metric, "csv/Q01 c=8 p95". The action
// draws one chart per name, so the metric is part of it; a metric's name
// never holds a space, so it is the name's last word.
func GABName(cell benchdata.Cell, metric string) string { return cell.String() + " " + metric }

// gabBytes is the custom JSON of rows of run r: an array of one entry per
// cell and metric, in the record's order. The value is the mean, in the
// metric's own unit; range is "± half-width" (github-action-benchmark's
// own tools write "± 35"), left out below two repetitions; extra says the
// repetitions, the target's commit and the machine.
func gabBytes(rows []row, r benchdata.Record) ([]byte, error) {
	benches := make([]gabBench, 0, len(rows))
	for _, x := range rows {
		b := gabBench{Name: GABName(x.cell, x.metric), Unit: gate.Metric(x.metric).Unit(), Value: x.c.Mean}
		if x.c.N >= 2 {
			b.Range = "± " + number(x.c.HalfWidth)
		}
		extra := []string{fmt.Sprintf("n=%d", x.c.N)}
		commit := r.CandidateCommit
		if x.c.Target == "baseline" {
			commit = r.BaselineCommit
		}
		if commit != "" {
			extra = append(extra, x.c.Target+" "+commit)
		}
		if r.Fingerprint != "" {
			extra = append(extra, "machine "+r.Fingerprint)
		}
		b.Extra = strings.Join(extra, "\n")
		benches = append(benches, b)
	}
	out, err := json.MarshalIndent(benches, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
