package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// trendSeries is six nightly runs of one cell's candidate throughput that
// step down by 10% at the fourth; the fourth run's candidate commit is
// unknown and the fifth has one repetition and no baseline commit.
func trendSeries() benchdata.Series {
	s := benchdata.Series{Key: benchdata.SeriesKey{Fingerprint: "3f2a", Scenario: "demo-api", Profile: "nightly",
		Cell: benchdata.Cell{Class: "Q01", Concurrency: 8}, Target: "candidate", Metric: "rps"}, HigherIsBetter: true}
	for i, p := range []struct {
		cand, base string
		mean, hw   float64
		n          int
	}{
		{"c1", "v1", 1000, 10, 5}, {"c2", "v1", 1005, 12.5, 5}, {"c3", "v1", 998.4, 9, 5},
		{"", "v1", 900, 8, 5}, {"0123456789abcdef", "", 901.5, 1, 1}, {"c6", "v1", 899, 7, 5},
	} {
		s.Points = append(s.Points, benchdata.SeriesPoint{Date: time.Date(2026, 3, 1+i, 2, 0, 0, 0, time.UTC),
			CandidateCommit: p.cand, BaselineCommit: p.base, Mean: p.mean, HalfWidth: p.hw, N: p.n})
	}
	return s
}

func history(t *testing.T, in HistoryInput) string {
	t.Helper()
	var b strings.Builder
	if err := History(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHistory(t *testing.T) {
	t.Parallel()
	mixed := benchdata.Series{Key: benchdata.SeriesKey{Fingerprint: benchdata.MixedPrefix + "3f2a+9e8d", Scenario: "demo-api",
		Cell: benchdata.Cell{Class: "Q01", Concurrency: 8}, Target: "baseline", Metric: "p95"}}
	for i := range 2 {
		mixed.Points = append(mixed.Points, benchdata.SeriesPoint{Date: time.Date(2026, 3, 1+i, 2, 0, 0, 0, time.UTC),
			CandidateCommit: "c1", BaselineCommit: "v1", Mean: 0.0125 + float64(i)/1000, HalfWidth: 0.0005, N: 3})
	}
	in := HistoryInput{Series: []HistorySeries{
		{Series: trendSeries(), Machine: "Xeon × 8", ChangePoints: []benchdata.ChangePoint{{Index: 3, Change: -0.1, Before: 1000, After: 900, PValue: 0.0012}}},
		{Series: mixed},
	}}
	want := `demo-api (nightly) · Q01 c=8 · candidate rps
machine 3f2a: Xeon × 8
6 runs, 1 change point(s), 1 for the worse
date              candidate  baseline  mean ±hw     n
2026-03-01 02:00  c1         v1        1000.0 ± 1%  5
2026-03-02 02:00  c2         v1        1005.0 ± 1%  5
2026-03-03 02:00  c3         v1        998.4 ± 1%   5
2026-03-04 02:00  —          v1        900.0 ± 1%   5  ◀ change -10.0% (1000.0 → 900.0, p 0.0012) WORSE
2026-03-05 02:00  0123456    —         901.5 (n=1)  1
2026-03-06 02:00  c6         v1        899.0 ± 1%   5

demo-api · Q01 c=8 · baseline p95
machine mixed:3f2a+9e8d: —
2 run(s) whose shards ran on different machines: no change points are looked for
date              candidate  baseline  mean ±hw       n
2026-03-01 02:00  c1         v1        12.50 ms ± 4%  3
2026-03-02 02:00  c1         v1        13.50 ms ± 4%  3
`
	if got := history(t, in); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}

	// The last two runs of a series too short for its window; the means
	// keep the scale of the whole series.
	in = HistoryInput{Series: []HistorySeries{{Series: trendSeries()}}, Options: benchdata.ChangePointOptions{MinWindow: 4}, Last: 2}
	want = `demo-api (nightly) · Q01 c=8 · candidate rps
machine 3f2a: —
6 run(s): too few to look for change points (need 8)
(4 earlier run(s) not shown)
date              candidate  baseline  mean ±hw     n
2026-03-05 02:00  0123456    —         901.5 (n=1)  1
2026-03-06 02:00  c6         v1        899.0 ± 1%   5
`
	if got := history(t, in); got != want {
		t.Errorf("last 2: got:\n%s\nwant:\n%s", got, want)
	}

	// A rise of throughput is for the better; no change point is "no
	// change point".
	better := HistorySeries{Series: trendSeries(), ChangePoints: []benchdata.ChangePoint{{Index: 3, Change: 0.2, Before: 900, After: 1080, PValue: 0}}}
	got := history(t, HistoryInput{Series: []HistorySeries{better, {Series: trendSeries()}}})
	for _, want := range []string{"6 runs, 1 change point(s), 0 for the worse\n", "◀ change +20.0% (900.0 → 1080.0, p < 1e-300)\n", "6 runs, no change point\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
}

// Names in a history come from scenario files a pull request can change:
// a terminal is shown their escapes.
func TestHistoryHostileNames(t *testing.T) {
	t.Parallel()
	s := trendSeries()
	s.Key.Scenario, s.Key.Cell.Class, s.Key.Fingerprint = "evil\x1b]0;pwned\x07", "Q\x1b[31m\tx", "f\u202e"
	s.Points[0].CandidateCommit = "c\x1b[2J"
	got := history(t, HistoryInput{Series: []HistorySeries{{Series: s, Machine: "m\x07"}}})
	if strings.ContainsAny(got, "\x1b\x07\u202e") {
		t.Errorf("raw control characters:\n%q", got)
	}
	for _, want := range []string{`evil\x1b]0;pwned\a (nightly) · Q\x1b[31m\tx c=8 · candidate rps`, `machine f\u202e: m\a`, `  c\x1b[2J  `} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
}

func TestHistoryAppended(t *testing.T) {
	t.Parallel()
	rec := benchdata.Record{Scenario: "demo-api", Profile: "nightly", Date: time.Date(2026, 1, 1, 2, 0, 0, 0, time.FixedZone("CET", 3600)),
		CandidateCommit: "deadbeefcafe0123", Fingerprint: "3f2a", Cells: make([]benchdata.RecordCell, 2)}
	if got, want := HistoryAppended(rec, "h/history.jsonl"), "history: appended demo-api (nightly) of 2026-01-01 01:00 UTC, candidate deadbee, machine 3f2a (2 values) to h/history.jsonl"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	rec = benchdata.Record{Date: time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC), Fingerprint: "3f2a"}
	if got, want := HistoryAppended(rec, "h\x1b.jsonl"), `history: appended (unnamed scenario) of 2026-01-01 02:00 UTC, candidate —, machine 3f2a (0 values) to h\x1b.jsonl`; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestHistoryNumbers(t *testing.T) {
	t.Parallel()
	check := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %q, want %q", what, got, want)
		}
	}
	for p, want := range map[float64]string{0: "< 1e-300", 5.7e-37: "5.7e-37", 0.031: "0.031", 0.12345: "0.12", 1: "1"} {
		check(fmt.Sprintf("pValue(%v)", p), pValue(p), want)
	}
	// A table's means share the scale of the smallest, each to 4
	// significant digits at least; the unit is the metric's.
	for _, c := range []struct {
		metric string
		means  []float64
		want   []string
	}{
		{"rps", []float64{1000, 5}, []string{"1000.000", "5.000"}},
		{"rps", []float64{972.6, 12345}, []string{"972.6", "12345.0"}},
		{"p95", []float64{0.0125, 0.0135}, []string{"12.50 ms", "13.50 ms"}},
		{"sec/iter", []float64{3.9e-7, 1e-6}, []string{"390.0 ns", "1000.0 ns"}},
		{"mem_peak", []float64{3 << 20, 0}, []string{"3.000 MiB", "0 B"}},
		{"allocs/op", []float64{0, 0}, []string{"0", "0"}},
		{"allocs/op", nil, nil},
	} {
		ps := make([]benchdata.SeriesPoint, len(c.means))
		for i, m := range c.means {
			ps[i].Mean = m
		}
		sc := seriesScale(gate.Metric(c.metric).Unit(), ps)
		for i, m := range c.means {
			check(fmt.Sprintf("%s %v of %v", c.metric, m, c.means), sc.Format(m), c.want[i])
		}
	}
	// A long name keeps 39 runes and the ellipsis, one fewer than
	// shortCommit keeps.
	check("shortRef", shortRef("0123456789abcdef"), "0123456")
	check("shortRef", shortRef("v1.0.0"), "v1.0.0")
	check("shortRef", shortRef(strings.Repeat("é", 40)), strings.Repeat("é", 40))
	check("shortRef", shortRef(strings.Repeat("é", 41)), strings.Repeat("é", 39)+"…")
	check("shortCommit", shortCommit(strings.Repeat("é", 41)), strings.Repeat("é", 40)+"…")
}
