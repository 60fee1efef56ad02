package importers

import (
	"regexp"
	"strings"
	"time"

	"github.com/benchgate/benchgate/gate"
)

// rpcError matches a gRPC status error as ghz records it:
// "rpc error: code = Unavailable desc = ...".
var rpcError = regexp.MustCompile(`rpc error: code = (\w+) desc = (.*)`)

// parseGhz reads `ghz --format json` (or -O json; ghz runner.Report).
//
//   - The end is "date" (written when the run finished, to the second);
//     Start is "date" − "total".
//   - Duration is "total" (nanoseconds): the whole run.
//   - Requests is "count", every call reported. In a run bounded by time
//     (-z, so "options.duration" is set) ghz's default --duration-stop=close
//     fails the calls still in flight at the end with "transport is
//     closing" or "the client connection is closing": those are left out,
//     as benchgate leaves out the requests in flight when its window
//     closes.
//   - Statuses is "statusCodeDistribution" (gRPC code names: "OK",
//     "Unavailable", ...) without the calls that failed in transport, so it
//     counts the calls the server answered.
//   - Errors, from "errorDistribution" (message → count): DeadlineExceeded
//     is "timeout"; a failure to dial ("connection refused", "error while
//     dialing", "connection error") is "connect"; a dropped connection is
//     "reset"; any other gRPC status is an answer that is not OK: "status";
//     a message that is no gRPC status goes by its text, else "other".
//   - RPS is the answered calls over Duration. ghz's own "rps" counts every
//     call, the failed ones too.
//   - Latencies: "average" (over every call, errors included; 0 when no
//     call was answered), the 50, 90, 95 and 99 entries of
//     "latencyDistribution" and "slowest" (both over the calls without
//     error, unless --count-errors). 50 and 95 are required when a call
//     succeeded; ghz writes no distribution when none did.
//   - ghz records no bytes.
//   - Concurrency is "options.concurrency" (-c) when the concurrency
//     schedule is constant.
func parseGhz(top jobj) (measurement, error) {
	var m measurement
	f := top.v.f
	r := &m.rung

	count, err := top.count("count")
	if err != nil {
		return m, err
	}
	total, err := top.num("total")
	if err != nil {
		return m, err
	}
	r.Duration = total / 1e9
	if m.end, err = top.time("date"); err != nil {
		return m, err
	}
	if !m.end.IsZero() {
		r.Start = m.end.Add(-time.Duration(total))
	}
	timed := false
	if opts, ok, err := top.optObject("options"); err != nil {
		return m, err
	} else if ok {
		if d, _, err := opts.optNum("duration"); err != nil {
			return m, err
		} else if d > 0 {
			timed = true
		}
		sched, err := opts.optStr("concurrency-schedule")
		if err != nil {
			return m, err
		}
		if c, _, err := opts.optNum("concurrency"); err != nil {
			return m, err
		} else if sched == "" || sched == "const" {
			m.conc = concurrencyOf(c)
		}
	}

	statuses, err := top.counts("statusCodeDistribution")
	if err != nil {
		return m, err
	}
	errs, err := top.counts("errorDistribution")
	if err != nil {
		return m, err
	}
	requests := count
	for msg, n := range errs {
		code, desc := "Unknown", msg
		if sub := rpcError.FindStringSubmatch(msg); sub != nil {
			code, desc = sub[1], sub[2]
		}
		kind := errStatus
		switch {
		case timed && (strings.Contains(desc, "transport is closing") || strings.Contains(desc, "client connection is closing")):
			// In flight when the time was up: not counted at all.
			requests -= n
			statuses[code] -= n
			continue
		case code == "DeadlineExceeded":
			kind = errTimeout
		case code == "Unknown" && desc == msg:
			kind = classify(msg) // not a gRPC status
		default:
			if k := classify(desc); k == errConnect || k == errReset {
				kind = k
			}
		}
		if kind != errStatus {
			// A transport failure: not an answer.
			statuses[code] -= n
			addError(r, kind, n)
		}
	}
	if requests < 0 {
		return m, f.errf("errorDistribution counts more calls than \"count\" (%d)", count)
	}
	r.Requests = requests
	var answered, ok int64
	for code, n := range statuses {
		if n <= 0 {
			continue
		}
		if r.Statuses == nil {
			r.Statuses = map[string]int64{}
		}
		r.Statuses[code] = n
		answered += n
		if code == "OK" {
			ok += n
		} else {
			addError(r, errStatus, n)
		}
	}
	if err := setRPS(top, r, answered, "total"); err != nil {
		return m, err
	}

	mean, _, err := top.optNum("average")
	if err != nil {
		return m, err
	}
	// ghz averages the failed calls too: with nothing answered it has no
	// mean of answers.
	if answered > 0 && mean != 0 {
		r.SetValue(gate.Mean, mean/1e9)
	}
	r.Max, _, err = top.optNum("slowest")
	if err != nil {
		return m, err
	}
	r.Max /= 1e9
	got, hasDist, err := latencyDistribution(top)
	if err != nil {
		return m, err
	}
	// Each latency percentile of the registry that ghz's distribution
	// holds (10, 25, 50, 75, 90, 95, 99); p50 and p95 the gate needs.
	for _, d := range gate.Registry {
		if d.Source != gate.FromLatency || d.Quantile == 0 {
			continue
		}
		v, has := got[d.Quantile]
		if need := d.Metric == gate.P50 || d.Metric == gate.P95; !has && need && ok > 0 {
			if !hasDist {
				return m, f.errf("no \"latencyDistribution\" although %d calls succeeded", ok)
			}
			return m, f.errf("\"latencyDistribution\" has no %v%% entry", d.Quantile)
		}
		if has && v != 0 {
			r.SetValue(d.Metric, v)
		}
	}
	return m, nil
}

// latencyDistribution is ghz's "latencyDistribution", a list of
// {percentage, latency}, as percentage → seconds (an entry without
// either is left out); false when the field is missing or null.
func latencyDistribution(top jobj) (map[float64]float64, bool, error) {
	v, ok := top.get("latencyDistribution")
	if !ok {
		return nil, false, nil
	}
	notList := v.errf("is not a list of {percentage, latency}: %s", short(v.raw))
	if jsonKind(v.raw) != "an array" {
		return nil, false, notList
	}
	elems, err := v.array(maxEntries)
	if err != nil {
		return nil, false, err
	}
	got := map[float64]float64{}
	for _, e := range elems {
		if jsonKind(e.raw) != "an object" {
			return nil, false, notList
		}
		d, err := e.object()
		if err != nil {
			return nil, false, err
		}
		pct, hasPct, err1 := d.optNum("percentage")
		lat, hasLat, err2 := d.optNum("latency")
		if err1 != nil || err2 != nil {
			return nil, false, notList
		}
		if hasPct && hasLat {
			got[pct] = lat / 1e9
		}
	}
	return got, true, nil
}
