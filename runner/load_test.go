package runner

import (
	"maps"
	"math"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/load"
)

// A window far longer than the test: workers end when their finite
// sources do, so every count is exact.
const long = time.Hour

func decodeCount(t *testing.T, r benchdata.Rung) int64 {
	t.Helper()
	h, err := hdrhistogram.Decode([]byte(r.Histogram))
	if err != nil {
		t.Fatalf("histogram: %v", err)
	}
	return h.TotalCount()
}

// latencies is a histogram of the given microseconds.
func latencies(t *testing.T, us ...int64) *hdrhistogram.Histogram {
	t.Helper()
	h := hdrhistogram.New(1, load.DefaultTimeout.Microseconds(), 3)
	for _, v := range us {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// The load core's kinds map onto the results file's error kinds by name.
func TestRungOfErrorKinds(t *testing.T) {
	t.Parallel()
	for i, name := range benchdata.ErrorKinds {
		k := load.Status + load.Kind(i)
		if k.String() != name {
			t.Errorf("error kind %d is %q in the results file, %q in load", i, name, k)
		}
		var res load.Result
		res.Errors[k] = 3
		res.Duration, res.Latency = time.Second, latencies(t)
		r, err := rungOf(res)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Errors) != 1 || r.Errors[name] != 3 {
			t.Errorf("%s errors: %v", k, r.Errors)
		}
	}
	if load.Status+load.Kind(len(benchdata.ErrorKinds)) != load.NumKinds {
		t.Errorf("%d error kinds in the results file, %d in load", len(benchdata.ErrorKinds), load.NumKinds-load.Status)
	}
}

func TestRungOf(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	r, err := rungOf(load.Result{
		Start: start, Duration: 2 * time.Second, Requests: 6, Answered: 4, Bytes: 40, InFlight: 1,
		Errors:   [load.NumKinds]int64{load.Status: 1, load.Timeout: 1, load.Other: 1},
		Statuses: map[string]int64{"200": 3, "404": 1},
		Latency:  latencies(t, 100, 200, 300, 400),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Start.Equal(start) || r.Duration != 2 || r.Requests != 6 || r.InFlight != 1 || r.Bytes != 40 || r.Value(gate.RPS) != 2 {
		t.Errorf("rung %+v", r)
	}
	if want := map[string]int64{"status": 1, "timeout": 1, "other": 1}; !maps.Equal(r.Errors, want) {
		t.Errorf("errors %v, want %v", r.Errors, want)
	}
	if want := map[string]int64{"200": 3, "404": 1}; !maps.Equal(r.Statuses, want) || r.Answered() != 4 {
		t.Errorf("statuses %v, want %v", r.Statuses, want)
	}
	if !near(r.Value(gate.P50), 200e-6) || !near(r.Value(gate.P90), 400e-6) || !near(r.Max, 400e-6) || !near(r.Value(gate.Mean), 250e-6) || decodeCount(t, r) != 4 {
		t.Errorf("latencies mean %v p50 %v p90 %v max %v, histogram of %d", r.Value(gate.Mean), r.Value(gate.P50), r.Value(gate.P90), r.Max, decodeCount(t, r))
	}

	// Nothing answered, nothing failed: no errors, no statuses, no
	// latencies, and an empty histogram all the same.
	r, err = rungOf(load.Result{Duration: time.Second, Latency: latencies(t)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != nil || r.Statuses != nil || r.Value(gate.RPS) != 0 || r.Value(gate.P99) != 0 || r.Histogram == "" || decodeCount(t, r) != 0 {
		t.Errorf("empty rung %+v", r)
	}
}

func TestSliceOf(t *testing.T) {
	t.Parallel()
	sl := sliceOf(load.Result{
		Duration: 20 * time.Millisecond, Requests: 5, Answered: 4, Bytes: 9,
		Errors:  [load.NumKinds]int64{load.Status: 1, load.Reset: 1},
		Latency: latencies(t, 100, 200, 300, 400),
	})
	if sl.Duration != 0.02 || sl.Requests != 5 || sl.Answered != 4 || sl.Errors != 2 || !near(sl.Value(gate.RPS), 200) {
		t.Errorf("slice %+v", sl)
	}
	if !near(sl.Value(gate.P50), 200e-6) || !near(sl.Value(gate.P99), 400e-6) || !near(sl.Value(gate.Mean), 250e-6) {
		t.Errorf("latencies %+v", sl)
	}
}
