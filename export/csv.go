package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/benchgate/benchgate/benchdata"
)

// CSVHeader is the CSV export's header row. A row is one metric of one
// target in one cell of one run; a cell is its pins, variant, class,
// concurrency and rate, as in the history file.
var CSVHeader = []string{
	"date", "scenario", "profile", "run_id", "baseline_commit", "candidate_commit", "fingerprint",
	"pins", "variant", "class", "concurrency", "rate", "target", "metric", "mean", "half_width", "n",
}

// csvBytes is the CSV of recs' rows of target ("all": both), in record
// order: RFC 4180, written by encoding/csv with CRLF line ends. Text cells
// go through Cell first.
func csvBytes(recs []benchdata.Record, target string) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	if err := w.Write(CSVHeader); err != nil {
		return nil, err
	}
	for _, r := range recs {
		date := ""
		if !r.Date.IsZero() {
			date = r.Date.UTC().Format(time.RFC3339Nano)
		}
		for _, c := range r.Cells {
			if target != "all" && c.Target != target {
				continue
			}
			row := []string{
				date, Cell(r.Scenario), Cell(r.Profile), Cell(r.RunID), Cell(r.BaselineCommit), Cell(r.CandidateCommit), Cell(r.Fingerprint),
				Cell(c.Cell.Pins), Cell(c.Cell.Variant), Cell(c.Cell.Class), strconv.Itoa(c.Cell.Concurrency), strconv.Itoa(c.Cell.Rate),
				Cell(c.Target), Cell(c.Metric), number(c.Mean), number(c.HalfWidth), strconv.Itoa(c.N),
			}
			if err := w.Write(row); err != nil {
				return nil, err
			}
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// number is f as JSON writes it (encoding/json: the shortest decimal that
// reads back as f, with an exponent only below 1e-6 or from 1e21), which
// spreadsheets and JSON readers alike take as the same number.
func number(f float64) string {
	if !finite(f) {
		return strconv.FormatFloat(f, 'g', -1, 64) // a record holds none: JSON cannot
	}
	b, _ := json.Marshal(f)
	return string(b)
}

// Cell is a text cell as the CSV export writes it. A spreadsheet runs a
// cell that starts with = + - @, a tab or a carriage return as a formula,
// and a name in it may come from a pull request: such a cell gets a
// leading apostrophe, which spreadsheets show as text (OWASP's rule for
// CSV injection). A carriage return inside a cell becomes a line feed:
// with CRLF line ends encoding/csv would drop it, so the written cell
// reads back as it is returned here.
func Cell(s string) string {
	formula := s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0]))
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	if formula {
		return "'" + s
	}
	return s
}
