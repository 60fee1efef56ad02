package importers

import "github.com/benchgate/benchgate/gate"

// ohaDeadline is the error oha records for a request still in flight when
// its -z duration ran out.
const ohaDeadline = "aborted due to deadline"

// parseOha reads `oha --json` / `oha --output-format json`.
//
//   - oha records no start time and no concurrency (-c).
//   - Duration is "summary.total" (seconds): the whole run.
//   - Statuses is "statusCodeDistribution": every response received.
//   - Requests is the responses plus the failures of "errorDistribution"
//     (message → count), except "aborted due to deadline": the requests in
//     flight when -z ran out, left out as benchgate leaves out the requests
//     in flight when its window closes (oha leaves them out of its success
//     rate too).
//   - Errors: responses outside 2xx are "status"; the messages of
//     "errorDistribution" map to "timeout" ("timeout"), "connect"
//     ("Connection refused", DNS and connect errors), "reset" ("Connection
//     reset", "connection closed", EOF) or "other".
//   - RPS is the responses over Duration. oha's own "requestsPerSec" counts
//     the failed and the aborted requests too.
//   - Bytes is "summary.totalData" (response bodies).
//   - Latencies (seconds, over the responses received): "summary.average",
//     "latencyPercentiles" p50, p90, p95, p99 and "summary.slowest". p50 and
//     p95 are required when a response was received; oha writes null for
//     all of them when none was.
func parseOha(top jobj) (measurement, error) {
	var m measurement
	r := &m.rung

	sum, err := top.object("summary")
	if err != nil {
		return m, err
	}
	if r.Duration, err = sum.num("total"); err != nil {
		return m, err
	}
	codes, err := top.counts("statusCodeDistribution")
	if err != nil {
		return m, err
	}
	answered := httpStatuses(r, codes)
	errs, err := top.counts("errorDistribution")
	if err != nil {
		return m, err
	}
	r.Requests = answered
	for msg, n := range errs {
		if msg == ohaDeadline {
			continue
		}
		r.Requests += n
		addError(r, classify(msg), n)
	}
	if b, _, err := sum.optNum("totalData"); err != nil {
		return m, err
	} else {
		if r.Bytes, err = sum.byteCount("totalData", b); err != nil {
			return m, err
		}
	}
	if err := setRPS(top, r, answered, "summary.total"); err != nil {
		return m, err
	}
	if err := latencies(sum, r, 1, false, sum.missing,
		latency{gate.Mean, "average", false},
		latency{slowest, "slowest", false}); err != nil {
		return m, err
	}
	pct, err := top.object("latencyPercentiles")
	if err != nil {
		return m, err
	}
	err = latencies(pct, r, 1, answered > 0, pct.missing,
		latency{gate.P50, "p50", true},
		latency{gate.P90, "p90", false},
		latency{gate.P95, "p95", true},
		latency{gate.P99, "p99", false},
		latency{gate.P999, "p99.9", false})
	return m, err
}
