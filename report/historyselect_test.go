package report

import (
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
)

// nightly is the history of benchdata's testdata: two machines, one cell,
// rps and p95 of both targets, a step down of the candidate's rps on
// 3f2a9c1b7d4e between c36 and c37.
func nightly(t *testing.T) []benchdata.Record {
	t.Helper()
	recs, err := benchdata.ReadHistory("../benchdata/testdata/history/nightly.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestSelectHistory(t *testing.T) {
	t.Parallel()
	recs := nightly(t)
	opt := benchdata.ChangePointOptions{}.WithDefaults()
	in, err := SelectHistory(recs, benchdata.SeriesFilter{Metric: "rps", Target: "candidate", Cell: "Q01*", Last: 4}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if in.Options != opt || in.Last != 4 || len(in.Series) != 2 {
		t.Fatalf("options %+v, last %d, %d series", in.Options, in.Last, len(in.Series))
	}
	step, short := in.Series[0], in.Series[1]
	if k := step.Series.Key; k.Fingerprint != "3f2a9c1b7d4e" || k.Target != "candidate" || k.Metric != "rps" ||
		!strings.HasPrefix(step.Machine, "Intel(R) Xeon(R) Gold 6338 × 8") {
		t.Errorf("first series %+v on %q", k, step.Machine)
	}
	if len(step.ChangePoints) != 1 || step.Series.Points[step.ChangePoints[0].Index].CandidateCommit != "c37" {
		t.Errorf("change points %+v, want one at c37", step.ChangePoints)
	}
	if short.Series.Key.Fingerprint != "9e8d7c6b5a49" || len(short.ChangePoints) != 0 {
		t.Errorf("second series %+v, change points %+v", short.Series.Key, short.ChangePoints)
	}

	// On a mixed fingerprint nobody knows which machine measured a cell:
	// the step is shown, but no change point is looked for.
	var mixed []benchdata.Record
	for _, r := range recs {
		if r.Fingerprint == "3f2a9c1b7d4e" {
			r.Fingerprint = benchdata.MixedPrefix + "3f2a+9e8d"
			mixed = append(mixed, r)
		}
	}
	in, err = SelectHistory(mixed, benchdata.SeriesFilter{Metric: "rps", Target: "candidate", Cell: "*"}, opt)
	if err != nil || len(in.Series) != 1 || len(in.Series[0].ChangePoints) != 0 || len(in.Series[0].Series.Points) != len(mixed) {
		t.Errorf("mixed: %v, %+v", err, in.Series)
	}
}

func TestSelectHistoryNothing(t *testing.T) {
	t.Parallel()
	recs := nightly(t)
	check := func(recs []benchdata.Record, f benchdata.SeriesFilter, want string) {
		t.Helper()
		if _, err := SelectHistory(recs, f, benchdata.ChangePointOptions{}); err == nil || err.Error() != want {
			t.Errorf("%+v: %v\nwant %s", f, err, want)
		}
	}
	check(nil, benchdata.SeriesFilter{Metric: "rps", Target: "all", Cell: "*"}, "no records yet")
	check(recs, benchdata.SeriesFilter{Metric: "sec/op", Target: "candidate", Cell: "*"},
		"no series of metric sec/op, target candidate, cell * (metrics in the history: rps, p95)")
	// Names come from the command line and the file: shown escaped.
	check(recs, benchdata.SeriesFilter{Metric: "rps", Target: "all", Cell: "Q9\x1b[2J", Fingerprint: "ab\u202e"},
		`no series of metric rps, target all, cell Q9\x1b[2J, fingerprint ab\u202e (metrics in the history: rps, p95)`)
	odd := []benchdata.Record{{Date: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Fingerprint: "f",
		Cells: []benchdata.RecordCell{{Cell: benchdata.Cell{Class: "Q"}, Target: "candidate", Metric: "x\x1b[31m", N: 1}}}}
	check(odd, benchdata.SeriesFilter{Metric: "rps", Target: "all", Cell: "*"},
		`no series of metric rps, target all, cell * (metrics in the history: x\x1b[31m)`)
}

func TestHistoryHeld(t *testing.T) {
	t.Parallel()
	rec := benchdata.Record{RunID: "run-7\x1b[2J", Date: time.Date(2026, 1, 31, 3, 0, 0, 0, time.FixedZone("CET", 3600))}
	if got, want := HistoryHeld(rec, "h/history.jsonl"), `history: run run-7\x1b[2J of 2026-01-31T02:00:00Z is already in h/history.jsonl: not appended again`; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
