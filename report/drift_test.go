package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
)

// driftInput is drift detection over 12 records of two machines: a 14.1%
// throughput step for the worse, a p95 step for the better in a baseline
// series whose own commit stayed, and a machine with too few records.
func driftInput() DriftInput {
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 2, 0, 0, 0, time.UTC) }
	return DriftInput{File: "h|x.jsonl", Records: 12, Result: benchdata.DriftResult{
		Options: benchdata.ChangePointOptions{MaxPValue: 0.001, MinMagnitude: 0.05, MinWindow: 3},
		Findings: []benchdata.DriftFinding{
			{Fingerprint: "3f2a", Scenario: "demo-api", Profile: "nightly", Cell: benchdata.Cell{Class: "Q01", Concurrency: 8},
				Target: "candidate", Metric: "rps", Change: benchdata.ChangePoint{Index: 36, Change: -0.141, Before: 998.2, After: 857.4, PValue: 5.7e-37},
				FromCommit: "c36", ToCommit: "c37", FromDate: day(2, 6), ToDate: day(2, 7), FromBaseline: "v1", ToBaseline: "v1", Worse: true},
			{Fingerprint: "3f2a", Scenario: "demo-api", Profile: "nightly", Cell: benchdata.Cell{Variant: "csv", Class: "Q02", Concurrency: 1},
				Target: "baseline", Metric: "p95", Change: benchdata.ChangePoint{Index: 9, Change: -0.2, Before: 0.015, After: 0.012},
				FromCommit: "0123456789abcdef", FromDate: day(1, 10), ToDate: day(1, 11), FromBaseline: "v1", ToBaseline: "v1"},
		},
		Fingerprints: []benchdata.FingerprintGroup{
			{Fingerprint: "3f2a", Machine: "Xeon × 8", Records: 10, First: day(1, 1), Last: day(2, 20), Series: 2, Short: 1},
			{Fingerprint: "9e8d", Records: 2, First: day(1, 1), Last: day(1, 2),
				Skipped: "2 record(s); change points need at least 6 (2 × min window 3)"},
		},
	}}
}

func drift(t *testing.T, in DriftInput, format string) string {
	t.Helper()
	var b strings.Builder
	if err := Drift(&b, in, format); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDriftTerminal(t *testing.T) {
	t.Parallel()
	want := `benchgate history drift: 2 change point(s), 1 for the worse, in 2 series of 12 record(s) on 2 machine(s) (h|x.jsonl)
E-divisive means, split tested by a Student t test: p < 0.001, change ≥ 5%, ≥ 3 runs each side

        machine  scenario            cell         target     metric  change  before → after       p         commits                          dates
WORSE   3f2a     demo-api (nightly)  Q01 c=8      candidate  rps     -14.1%  998.2 → 857.4        5.7e-37   c36..c37                         2026-02-06 → 2026-02-07
better  3f2a     demo-api (nightly)  csv/Q02 c=1  baseline   p95     -20.0%  15.00 ms → 12.00 ms  < 1e-300  0123456..— (baseline unchanged)  2026-01-10 → 2026-01-11

machines:
  3f2a  10 record(s), 2026-01-01 … 2026-02-20  2 series tested, 1 too short  — Xeon × 8
  9e8d  2 record(s), 2026-01-01 … 2026-01-02  skipped: 2 record(s); change points need at least 6 (2 × min window 3)  — —
`
	for _, format := range []string{"terminal", "text"} {
		if got := drift(t, driftInput(), format); got != want {
			t.Errorf("%s: got:\n%s\nwant:\n%s", format, got, want)
		}
	}
	if got, want := drift(t, DriftInput{File: "h.jsonl"}, "terminal"),
		"benchgate history drift: no records yet (h.jsonl)\nE-divisive means, split tested by a Student t test: p < 0, change ≥ 0%, ≥ 0 runs each side\n"; got != want {
		t.Errorf("empty: got %q, want %q", got, want)
	}
}

func TestDriftMarkdown(t *testing.T) {
	t.Parallel()
	want := `## benchgate history: drift

**2 change point(s), 1 for the worse, in 2 series of 12 record(s) on 2 machine(s)**, from h\|x.jsonl.

| | machine | scenario | cell | target | metric | change | before → after | p | commits | dates |
| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |
| **worse** | 3f2a | demo-api (nightly) | Q01 c=8 | candidate | rps | -14.1% | 998.2 → 857.4 | 5.7e-37 | c36..c37 | 2026-02-06 → 2026-02-07 |
| better | 3f2a | demo-api (nightly) | csv/Q02 c=1 | baseline | p95 | -20.0% | 15.00 ms → 12.00 ms | < 1e-300 | 0123456..— (baseline unchanged) | 2026-01-10 → 2026-01-11 |

Machines (only runs on the same fingerprint are compared):

- 3f2a (Xeon × 8): 10 record(s), 2026-01-01 … 2026-02-20, 2 series tested, 1 too short
- 9e8d (—): 2 record(s), 2026-01-01 … 2026-01-02, skipped: 2 record(s); change points need at least 6 (2 × min window 3)

E-divisive means, split tested by a Student t test: p &lt; 0.001, change ≥ 5%, ≥ 3 runs each side.
`
	for _, format := range []string{"markdown", "md"} {
		if got := drift(t, driftInput(), format); got != want {
			t.Errorf("%s: got:\n%s\nwant:\n%s", format, got, want)
		}
	}
	// Nothing for the worse: the headline is not bold.
	in := driftInput()
	in.Result.Findings = in.Result.Findings[1:]
	if got := drift(t, in, "markdown"); !strings.Contains(got, "\n1 change point(s), 0 for the worse, in 2 series of 12 record(s) on 2 machine(s), from h\\|x.jsonl.\n") {
		t.Errorf("headline:\n%s", got)
	}
}

// Names in a history come from scenario files a pull request can change.
func TestDriftHostileNames(t *testing.T) {
	t.Parallel()
	in := driftInput()
	f := &in.Result.Findings[0]
	f.Cell.Class, f.ToCommit, f.Scenario = "Q|*\x1b[31m", "c\x07", "<b>x</b>"
	in.Result.Fingerprints[0].Machine = "m\u202e[x](y)"
	term := drift(t, in, "terminal")
	if strings.ContainsAny(term, "\x1b\x07\u202e") || !strings.Contains(term, `Q|*\x1b[31m c=8`) || !strings.Contains(term, `c36..c\a`) {
		t.Errorf("terminal:\n%s", term)
	}
	md := drift(t, in, "markdown")
	for _, want := range []string{`| Q\|\*`, `&lt;b&gt;x&lt;/b&gt; (nightly)`, `c36..c`, `(m\[x\](y))`} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.ContainsAny(md, "\x1b\x07\u202e") || strings.Contains(md, "<b>") {
		t.Errorf("markdown:\n%s", md)
	}
	if got := WorseFindings(in.Result); len(got) != 1 || got[0] != `Q|*\x1b[31m c=8 candidate rps in c36..c\a` {
		t.Errorf("WorseFindings = %q", got)
	}
}

func TestDriftJSON(t *testing.T) {
	t.Parallel()
	in := driftInput()
	got := drift(t, in, "json")
	if !strings.HasPrefix(got, "{\n  \"options\": {\n    \"") || !strings.HasSuffix(got, "}\n") {
		t.Errorf("not indented JSON:\n%s", got)
	}
	var back benchdata.DriftResult
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, in.Result) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", back, in.Result)
	}
}

func TestDriftUnknownFormat(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := Drift(&b, driftInput(), "html"); err == nil || !strings.Contains(err.Error(), `unknown format "html"`) || b.Len() > 0 {
		t.Errorf("err %v, wrote %q", err, b.String())
	}
}

func TestWorseFindings(t *testing.T) {
	t.Parallel()
	d := driftInput().Result
	if got := WorseFindings(d); len(got) != 1 || got[0] != "Q01 c=8 candidate rps in c36..c37" {
		t.Errorf("WorseFindings = %q", got)
	}
	d.Findings[0].FromCommit, d.Findings[0].ToCommit = "", "0123456789abcdef"
	if got := WorseFindings(d); len(got) != 1 || got[0] != "Q01 c=8 candidate rps in —..0123456" {
		t.Errorf("WorseFindings = %q", got)
	}
	if got := WorseFindings(benchdata.DriftResult{}); got != nil {
		t.Errorf("no findings: %q", got)
	}
}

// TestDriftOutcome: a change point for the worse is an error naming it;
// none is no error.
func TestDriftOutcome(t *testing.T) {
	t.Parallel()
	d := driftInput().Result
	if err := DriftOutcome(d); err == nil || err.Error() != "drift: 1 change point(s) for the worse: Q01 c=8 candidate rps in c36..c37" {
		t.Errorf("DriftOutcome = %v", err)
	}
	if err := DriftOutcome(benchdata.DriftResult{}); err != nil {
		t.Errorf("no findings: %v", err)
	}
}
