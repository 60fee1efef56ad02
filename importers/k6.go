package importers

import (
	"fmt"

	"github.com/benchgate/benchgate/gate"
)

// parseK6 reads k6's end-of-test summary as JSON, in either shape:
// `k6 run --summary-export FILE` (each metric's values directly under its
// name, a rate metric's rate as "value") or the data object k6 passes to
// handleSummary() written with JSON.stringify (each metric as {type,
// contains, values}, with "state.testRunDurationMs").
//
//   - k6 records no start time and no status code distribution.
//   - Duration is "state.testRunDurationMs" when present, else
//     http_reqs.count ÷ http_reqs.rate (k6 computes the rate over the test
//     run's duration, so both give the same time).
//   - Requests is http_reqs.count.
//   - Errors: http_req_failed counts the requests k6 deems failed (no
//     response, or a status outside expectedStatuses, by default 200–399)
//     without saying which: they are "other". In this Rate metric "passes"
//     counts the failed requests (the true samples) and "fails" the rest.
//   - RPS is the requests that did not fail over Duration: k6 cannot tell
//     an answer with a bad status from no answer, so this is the successful
//     rate, which is benchgate's answered rate whenever nothing failed.
//   - Bytes is data_received.count: every byte received, headers included.
//   - Latencies are http_req_duration (milliseconds, over every request):
//     avg, med (or p(50)), p(90), p(95), p(99), max. k6 writes the stats of
//     --summary-trend-stats; the default avg,min,med,max,p(90),p(95) has no
//     p99, which is then left 0. med and p(95) are required.
//   - Concurrency is the peak of the vus metric (else vus_max): the VUs of
//     a closed-loop executor such as constant-vus.
func parseK6(top jobj) (measurement, error) {
	var m measurement
	f := top.v.f
	r := &m.rung

	metrics, err := top.object("metrics")
	if err != nil {
		return m, err
	}
	metric := func(name string, required bool) (jobj, bool, error) {
		o, ok, err := metrics.optObject(name)
		if err != nil || !ok {
			if err == nil && required {
				err = f.errf("no metric %q", name)
				if name == "http_reqs" {
					err = fmt.Errorf("%w (benchgate imports k6's HTTP metrics; did the test make HTTP requests?)", err)
				}
			}
			return jobj{}, false, err
		}
		if v, has := o.get("values"); has {
			// handleSummary() data: {type, contains, values}.
			vals, err := v.object()
			return vals, err == nil, err
		}
		return o, true, nil
	}

	reqs, _, err := metric("http_reqs", true)
	if err != nil {
		return m, err
	}
	if r.Requests, err = reqs.count("count"); err != nil {
		return m, err
	}
	if state, ok, err := top.optObject("state"); err != nil {
		return m, err
	} else if ok {
		ms, _, err := state.optNum("testRunDurationMs")
		if err != nil {
			return m, err
		}
		r.Duration = ms / 1000
	}
	if r.Duration <= 0 {
		rate, err := reqs.num("rate")
		if err != nil {
			return m, err
		}
		if rate > 0 {
			r.Duration = float64(r.Requests) / rate
		}
	}

	var failed int64
	if fo, ok, err := metric("http_req_failed", false); err != nil {
		return m, err
	} else if ok {
		if failed, err = fo.count("passes"); err != nil {
			return m, err
		}
		if failed > r.Requests {
			return m, f.errf("%d failed requests but only %d requests (http_reqs.count)", failed, r.Requests)
		}
		addError(r, errOther, failed)
	}
	if dr, ok, err := metric("data_received", false); err != nil {
		return m, err
	} else if ok {
		b, _, err := dr.optNum("count")
		if err != nil {
			return m, err
		}
		if r.Bytes, err = dr.byteCount("count", b); err != nil {
			return m, err
		}
	}
	if err := setRPS(top, r, r.Requests-failed, "the test run's duration"); err != nil {
		return m, err
	}

	for _, name := range []string{"vus", "vus_max"} {
		v, ok, err := metric(name, false)
		if err != nil {
			return m, err
		}
		if !ok {
			continue
		}
		peak, has, err := v.optNum("max")
		if err != nil {
			return m, err
		}
		if !has {
			if peak, _, err = v.optNum("value"); err != nil {
				return m, err
			}
		}
		if c := concurrencyOf(peak); c > 0 {
			m.conc, m.concPeak = c, true
			break
		}
	}

	dur, ok, err := metric("http_req_duration", r.Requests > 0)
	if err != nil || !ok {
		return m, err
	}
	missing := func(key string) error {
		hint := ""
		if key == "p(95)" || key == "p(99)" {
			hint = " (add it to --summary-trend-stats)"
		}
		if _, present := dur.m[key]; present {
			return f.errf("metric \"http_req_duration\": %q is null", key)
		}
		return f.errf("metric \"http_req_duration\" has no %q%s", key, hint)
	}
	med := "med"
	if !dur.has("med") && dur.has("p(50)") {
		med = "p(50)"
	}
	err = latencies(dur, r, 1e3, r.Requests > 0, missing,
		latency{gate.Mean, "avg", false},
		latency{gate.P50, med, true},
		latency{gate.P90, "p(90)", false},
		latency{gate.P95, "p(95)", true},
		latency{gate.P99, "p(99)", false},
		latency{slowest, "max", false})
	return m, err
}
