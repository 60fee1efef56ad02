package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
)

// openLoopInput is a run of two open-loop cells, the candidate unable
// to keep up with the higher rate.
func openLoopInput(t *testing.T) Input {
	t.Helper()
	res := fullInput().Results
	low := benchdata.Cell{Variant: "csv", Class: "Q01", Concurrency: 16, Rate: 100}
	high := benchdata.Cell{Variant: "csv", Class: "Q01", Concurrency: 16, Rate: 400}
	res.Plan.Cells = []benchdata.Cell{low, high}
	res.Scenario.Load.Concurrency = []int{16}
	res.Scenario.Load.Rate = []int{100, 400}
	res.Rungs = nil
	at := t0
	for round := range 3 {
		for _, c := range res.Plan.Cells {
			for pos, target := range []string{"baseline", "candidate"} {
				g := benchdata.Rung{Cell: c, Round: round, Target: target, Position: pos, Order: "AB",
					Start: at, Duration: 5, Asked: int64(5 * c.Rate), Values: map[string]float64{"rps": float64(c.Rate) * (0.99 + 0.01*float64(round))}}
				if c == high && target == "candidate" {
					g.Late, g.Unsent = 600, 20
					g.SetValue(gate.RPS, 310)
				}
				g.Requests = int64(g.Value(gate.RPS) * g.Duration)
				g.Statuses = map[string]int64{"200": g.Requests}
				g.Histogram = latencyHistogram(int(g.Requests), 900, 300)
				res.Rungs = append(res.Rungs, g)
				at = at.Add(6 * time.Second)
			}
		}
	}
	c, err := decide.Results(res)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Results: res, Comparison: c}
	return in
}

func TestOpenLoopUnsustained(t *testing.T) {
	t.Parallel()
	in := openLoopInput(t)
	var doc struct {
		Unsustained []struct {
			Cell struct {
				Rate int `json:"rate"`
			} `json:"cell"`
			Target      string  `json:"target"`
			Asked       int64   `json:"asked"`
			Late        int64   `json:"late"`
			Unsent      int64   `json:"unsent"`
			AnsweredRPS float64 `json:"answered_rps"`
		} `json:"unsustained"`
	}
	var b strings.Builder
	if err := JSON(&b, in); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if u := doc.Unsustained; len(u) != 1 || u[0].Cell.Rate != 400 || u[0].Target != "candidate" || u[0].Asked != 6000 || u[0].Late != 1800 || u[0].Unsent != 60 || u[0].AnsweredRPS != 310 {
		t.Errorf("JSON unsustained %+v", u)
	}
	const want = "csv/Q01 c=16 400/s: the candidate was offered 400 requests/s and answered 310/s; " +
		"1800 of 6000 requests went out late (more than 1 ms after their time), 60 never went out: it did not keep up"
	for name, got := range map[string]string{"markdown": markdown(t, in), "terminal": terminal(t, in)} {
		if !strings.Contains(got, want) {
			t.Errorf("%s: no warning %q in\n%s", name, want, got)
		}
		if n := strings.Count(got, "did not keep up"); n != 1 {
			t.Errorf("%s: %d warnings, want the one side that did not keep up", name, n)
		}
		if name == "markdown" && !strings.Contains(got, "open loop at 100, 400 requests/s") {
			t.Errorf("markdown: the load line does not say it was an open loop:\n%s", got)
		}
		if !strings.Contains(got, "16 · 400/s") || !strings.Contains(got, "16 · 100/s") {
			t.Errorf("%s: the tables do not tell the rates apart:\n%s", name, got)
		}
	}
}
