package benchdata

import (
	"slices"
	"strings"
	"testing"
)

func TestCellMatches(t *testing.T) {
	t.Parallel()
	c := Cell{Variant: "csv", Class: "Q01", Concurrency: 8}
	for glob, want := range map[string]bool{
		"*": true, "Q01": true, "Q0?": true, "csv/Q01 c=8": true, "csv/*": true,
		"Q01 c=8": false, "json/*": false, "Q02": false, "[": false,
	} {
		if got := c.Matches(glob); got != want {
			t.Errorf("%s matches %q: %v, want %v", c, glob, got, want)
		}
	}
}

func TestSeriesFilter(t *testing.T) {
	t.Parallel()
	k := SeriesKey{Fingerprint: "3f2a9c", Cell: Cell{Class: "Q01", Concurrency: 8}, Target: "candidate", Metric: "rps"}
	all := SeriesFilter{Metric: "rps", Target: "all", Cell: "*"}
	for _, c := range []struct {
		f    SeriesFilter
		want bool
	}{
		{all, true},
		{SeriesFilter{Metric: "rps", Target: "candidate", Cell: "Q01", Fingerprint: "3f2a"}, true},
		{SeriesFilter{Metric: "rps", Target: "baseline", Cell: "*"}, false},
		{SeriesFilter{Metric: "p95", Target: "all", Cell: "*"}, false},
		{SeriesFilter{Metric: "rps", Target: "all", Cell: "Q02"}, false},
		{SeriesFilter{Metric: "rps", Target: "all", Cell: "*", Fingerprint: "9e8d"}, false},
	} {
		if got := c.f.Match(k); got != c.want {
			t.Errorf("%+v matches %+v: %v, want %v", c.f, k, got, c.want)
		}
	}
}

// TestSeriesMetrics: the service metrics in report order, then the others
// (Go units, custom units, a metric no record keeps) by name, each once.
func TestSeriesMetrics(t *testing.T) {
	t.Parallel()
	var series []Series
	for _, m := range []string{"sec/op", "p95", "rps", "mem_peak", "allocs/op", "B/op", "p95", "error_rate", "mean", "cpu_per_req", "p50", "p99"} {
		series = append(series, Series{Key: SeriesKey{Metric: m}})
	}
	want := []string{"rps", "p50", "p95", "p99", "error_rate", "cpu_per_req", "mem_peak", "B/op", "allocs/op", "mean", "sec/op"}
	if got := SeriesMetrics(series); !slices.Equal(got, want) {
		t.Errorf("SeriesMetrics = %v\nwant %v", got, want)
	}
	if got := SeriesMetrics(nil); len(got) != 0 {
		t.Errorf("SeriesMetrics(nil) = %v", got)
	}
}

func TestSeriesFilterCheck(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"candidate", "baseline", "all"} {
		if err := (SeriesFilter{Cell: "csv/Q0[1-3] c=*", Target: target}).Check(); err != nil {
			t.Errorf("target %s: %v", target, err)
		}
	}
	for f, want := range map[SeriesFilter]string{
		{Cell: "Q0[1", Target: "all"}:        `-cell "Q0[1": syntax error in pattern`,
		{Cell: "*", Target: "both"}:          `-target "both": want candidate, baseline or all`,
		{Cell: "*", Target: "Candidate"}:     `-target "Candidate"`,
		{Cell: "*", Target: "all", Last: -1}: `-last -1: want 0 or more runs`,
	} {
		if err := f.Check(); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%+v: got %v, want %s", f, err, want)
		}
	}
}
