package importers

import (
	"regexp"
	"time"

	"github.com/benchgate/benchgate/gate"
)

// statusText matches the error vegeta records for an answer outside
// 200–399: the response's status line ("500 Internal Server Error").
var statusText = regexp.MustCompile(`^\d{3}( |$)`)

// stringList is field k of o, a list of strings; missing or null is
// empty.
func stringList(o jobj, k string) ([]string, error) {
	v, ok := o.get(k)
	if !ok {
		return nil, nil
	}
	notList := v.errf("is not a list of strings: %s", short(v.raw))
	if jsonKind(v.raw) != "an array" {
		return nil, notList
	}
	elems, err := v.array(maxEntries)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if out[i], err = e.str(); err != nil {
			return nil, notList
		}
	}
	return out, nil
}

// parseVegeta reads `vegeta report -type=json` (vegeta v12 Metrics).
//
//   - Start is "earliest" (the first request sent), the end is "end" (the
//     last response received).
//   - Duration is "duration" + "wait": from the first request sent to the
//     last response received, the time vegeta's own "throughput" divides
//     by.
//   - Requests is "requests". Statuses is "status_codes" without "0",
//     vegeta's code for a request that got no answer.
//   - RPS is the answered requests (every status code but 0) over
//     Duration. It equals vegeta's "throughput" when every answer is 2xx
//     or 3xx; vegeta counts only those.
//   - Errors: answers outside 2xx are "status" (benchgate's default rule;
//     vegeta itself accepts 3xx). The requests with code 0 are transport
//     failures: vegeta lists each distinct error message once, without
//     counts, so they all go to the kind of their messages ("connect",
//     "timeout", "reset") when the messages agree, else to "other".
//   - Bytes is "bytes_in.total".
//   - Latencies are "latencies" (nanoseconds) over every request, the
//     failed ones included. vegeta records mean, 50th, 90th, 95th, 99th
//     and max; 50th and 95th are required.
//   - vegeta records no concurrency: it sends at a fixed -rate.
func parseVegeta(top jobj) (measurement, error) {
	var m measurement
	r := &m.rung

	lat, err := top.object("latencies")
	if err != nil {
		return m, err
	}
	if r.Requests, err = top.count("requests"); err != nil {
		return m, err
	}
	dur, err := top.num("duration")
	if err != nil {
		return m, err
	}
	wait, _, err := top.optNum("wait")
	if err != nil {
		return m, err
	}
	r.Duration = (dur + wait) / 1e9
	if r.Start, err = top.time("earliest"); err != nil {
		return m, err
	}
	if m.end, err = top.time("end"); err != nil {
		return m, err
	}

	codes, err := top.counts("status_codes")
	if err != nil {
		return m, err
	}
	failed := codes["0"]
	delete(codes, "0")
	answered := httpStatuses(r, codes)
	if failed > 0 {
		msgs, err := stringList(top, "errors")
		if err != nil {
			return m, err
		}
		kind := ""
		for _, s := range msgs {
			if statusText.MatchString(s) {
				continue
			}
			k := classify(s)
			if kind == "" {
				kind = k
			} else if kind != k {
				kind = errOther
			}
		}
		if kind == "" {
			kind = errOther
		}
		addError(r, kind, failed)
	}
	if bin, ok, err := top.optObject("bytes_in"); err != nil {
		return m, err
	} else if ok {
		b, _, err := bin.optNum("total")
		if err != nil {
			return m, err
		}
		if r.Bytes, err = bin.byteCount("total", b); err != nil {
			return m, err
		}
	}
	if err := setRPS(top, r, answered, "duration + wait"); err != nil {
		return m, err
	}
	// vegeta's latencies include the failed requests: any request at all
	// makes p50 and p95 required.
	err = latencies(lat, r, float64(time.Second), r.Requests > 0, lat.missing,
		latency{gate.Mean, "mean", false},
		latency{gate.P50, "50th", true},
		latency{gate.P90, "90th", false},
		latency{gate.P95, "95th", true},
		latency{gate.P99, "99th", false},
		latency{slowest, "max", false})
	return m, err
}
