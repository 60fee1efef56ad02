package gate

import "slices"

// Definition is everything benchgate knows of one metric of a load
// scenario. Registry is the one list of them: the scenario's fail_on
// names, the reports' order, export's units, what history keeps and how a
// rung or a slice yields each value are all read from it, so a new metric
// is an entry here and its producer (docs/architecture.md).
type Definition struct {
	Metric Metric
	// Unit is the unit of its values as results, decisions and exports
	// store them: "req/s", "s", "errors/request", "CPU s/request",
	// "bytes". Reports print a unit "s" as a time in the unit that suits
	// the table (µs, ms, s), "bytes" in MiB.
	Unit string
	// HigherIsBetter is the direction it improves in.
	HigherIsBetter bool
	// Source is where a measurement's value comes from.
	Source Source
	// Quantile, for a latency percentile (Source FromLatency), is its
	// quantile in percent (50, 99.9); 0 with FromLatency is the mean.
	Quantile float64
	// Kept says whether history keeps it. Left out are those that follow
	// another kept one closely (the mean and p90 sit between p50 and p95,
	// the mean memory follows its peak) and would only double a file.
	Kept bool
	// Doc says in a few words what it measures.
	Doc string
}

// Source is where a metric's values come from.
type Source int

// Sources of a metric's values.
const (
	// FromCount: a count of the answered requests over the measured time.
	FromCount Source = iota
	// FromLatency: a statistic of the answered requests' latency
	// histogram (Quantile, or the mean).
	FromLatency
	// FromErrors: the failed requests over those that ended.
	FromErrors
	// FromResources: the target's resource accounting (CPU, memory),
	// measured only for a target benchgate starts.
	FromResources
)

// Registry defines the metrics of a load scenario, in the order reports
// show them.
var Registry = []Definition{
	{Metric: RPS, Unit: "req/s", HigherIsBetter: true, Source: FromCount, Kept: true, Doc: "answered requests per second"},
	{Metric: Mean, Unit: "s", Source: FromLatency, Doc: "mean latency"},
	{Metric: P50, Unit: "s", Source: FromLatency, Quantile: 50, Kept: true, Doc: "median latency"},
	{Metric: P90, Unit: "s", Source: FromLatency, Quantile: 90, Doc: "90th percentile of latency"},
	{Metric: P95, Unit: "s", Source: FromLatency, Quantile: 95, Kept: true, Doc: "95th percentile of latency"},
	{Metric: P99, Unit: "s", Source: FromLatency, Quantile: 99, Kept: true, Doc: "99th percentile of latency"},
	{Metric: P999, Unit: "s", Source: FromLatency, Quantile: 99.9, Doc: "99.9th percentile of latency"},
	{Metric: ErrorRate, Unit: "errors/request", Source: FromErrors, Kept: true, Doc: "failed requests over the requests that ended"},
	{Metric: CPUPerReq, Unit: "CPU s/request", Source: FromResources, Kept: true, Doc: "the target's CPU seconds per answered request"},
	{Metric: MemMean, Unit: "bytes", Source: FromResources, Doc: "the target's memory, mean over the measured time"},
	{Metric: MemPeak, Unit: "bytes", Source: FromResources, Kept: true, Doc: "the target's memory, peak of the measured time"},
}

// Unit is the unit of m's values: a registry metric's Unit, and a Go
// benchmark's (or any other) metric its own name, which is its unit
// ("sec/op", "B/op", a custom unit).
func (m Metric) Unit() string {
	if d, ok := Lookup(m); ok {
		return d.Unit
	}
	return string(m)
}

// Lookup is m's definition; false for a metric the registry does not
// define (a Go benchmark's unit).
func Lookup(m Metric) (Definition, bool) {
	if i := slices.IndexFunc(Registry, func(d Definition) bool { return d.Metric == m }); i >= 0 {
		return Registry[i], true
	}
	return Definition{}, false
}

// Measured are the metrics a load generator measures itself, each rung
// and slice, in Registry's order: throughput and the latency statistics.
// A rung or a slice stores them by name (benchdata.Rung.Values).
var Measured = registryMetrics(func(d Definition) bool { return d.Source == FromCount || d.Source == FromLatency })

// registryMetrics are the metrics of Registry's definitions that keep
// holds, in its order.
func registryMetrics(keep func(Definition) bool) []Metric {
	var ms []Metric
	for _, d := range Registry {
		if keep(d) {
			ms = append(ms, d.Metric)
		}
	}
	return ms
}
