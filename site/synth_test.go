package site

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/benchgate/benchgate/benchdata"
)

// synthOptions describe a synthetic history.
type synthOptions struct {
	nights, cells int
	start         time.Time
	fingerprint   string
	machine       string
	scenario      string
	// stepCell's candidate stepMetric is 5× from night stepAt on.
	stepAt     int
	stepCell   int
	stepMetric string
	// noise: 0 gives the fixed pattern ×0.98, ×0.99, ×1, ×1.01, ×1.02
	// (values a test can predict); above 0, seeded Gaussian noise of that
	// fraction.
	noise float64
	// baselineAt: from this night on the baseline commit is "v1.1.0"
	// (0: never).
	baselineAt int
}

// synthMetrics are a service scenario's kept metrics and their centres.
var synthMetrics = []struct {
	name string
	mean float64
}{{"rps", 1000}, {"p50", 2}, {"p95", 10}, {"p99", 20}, {"error_rate", 0}, {"cpu_per_req", 0.5}, {"mem_peak", 64e6}}

func synthCell(i int) benchdata.Cell {
	return benchdata.Cell{Class: fmt.Sprintf("Q%02d", i/4+1), Concurrency: 1 << (i % 4 * 2)}
}

// synthValue is the pattern value of night n.
func synthPattern(n int) float64 { return 1 + 0.01*float64((n*7)%5-2) }

func synthesize(o synthOptions) []benchdata.Record {
	if o.start.IsZero() {
		o.start = time.Date(2025, 2, 1, 2, 0, 0, 0, time.UTC)
	}
	if o.fingerprint == "" {
		o.fingerprint = "3f2a9c1b7d4e"
		o.machine = "Intel(R) Xeon(R) Gold 6338 × 8, linux/amd64, kernel 6.8.0-45-generic; pins default"
	}
	if o.scenario == "" {
		o.scenario = "demo-api"
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []benchdata.Record
	for n := range o.nights {
		r := benchdata.Record{
			Version: 1, Date: o.start.AddDate(0, 0, n), Scenario: o.scenario, Profile: "nightly",
			RunID: fmt.Sprintf("run-%s-%03d", o.fingerprint, n), BaselineCommit: "v1.0.0",
			CandidateCommit: fmt.Sprintf("c%03d", n), Fingerprint: o.fingerprint, Machine: o.machine,
		}
		if o.baselineAt > 0 && n >= o.baselineAt {
			r.BaselineCommit = "v1.1.0"
		}
		for c := range o.cells {
			for _, m := range synthMetrics {
				for _, target := range []string{"baseline", "candidate"} {
					f := synthPattern(n)
					if o.noise > 0 {
						f = 1 + o.noise*rng.NormFloat64()
					}
					v := m.mean * f
					if target == "candidate" && c == o.stepCell && m.name == o.stepMetric && o.stepAt > 0 && n >= o.stepAt {
						v *= 5
					}
					r.Cells = append(r.Cells, benchdata.RecordCell{Cell: synthCell(c), Target: target, Metric: m.name,
						Mean: v, HalfWidth: m.mean * 0.01, N: 5})
				}
			}
		}
		recs = append(recs, r)
	}
	return recs
}
