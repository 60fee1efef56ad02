package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"
)

// Bencher's limits on names (bencher.dev/docs/reference/bencher-metric-format):
// a benchmark's name is at most 1024 characters, a measure's at most 64.
const (
	maxBenchmarkName = 1024
	maxMeasureName   = 64
)

// Measure is the Bencher measure a benchgate metric is exported as, and
// the factor its values are multiplied by. Two metrics mean what a
// Bencher project's built-in measures mean: rps is throughput (operations
// a second), and a Go benchmark's sec/op is latency, which Bencher keeps
// in nanoseconds, as its own go_bench adapter reports ns/op. Every other
// metric keeps benchgate's name and unit (p95 in seconds, mem_peak in
// bytes, a Go unit as it is): Bencher creates such a measure on the first
// report that names it.
func Measure(metric string) (name string, scale float64) {
	switch metric {
	case "rps":
		return "throughput", 1
	case "sec/op":
		return "latency", 1e9
	}
	return metric, 1
}

// bmfMetric is one measure of one benchmark: the mean, and the interval's
// ends when there is one.
type bmfMetric struct {
	Value      float64  `json:"value"`
	LowerValue *float64 `json:"lower_value,omitempty"`
	UpperValue *float64 `json:"upper_value,omitempty"`
}

// bmfBytes is the BMF JSON of rows: an object of benchmarks (cells, in
// the record's order) of measures (metrics), each the mean with its
// interval's ends, mean ∓ half-width. A summary of fewer than two
// repetitions has no interval, and gets no ends: an interval of zero width
// would claim a certainty it does not have.
func bmfBytes(rows []row) ([]byte, error) {
	var order []string
	benches := map[string][]row{}
	for _, r := range rows {
		if _, ok := benches[r.name]; !ok {
			order = append(order, r.name)
		}
		benches[r.name] = append(benches[r.name], r)
	}
	var b jsonBuffer
	b.WriteByte('{')
	for i, name := range order {
		if n := utf8.RuneCountInString(name); n > maxBenchmarkName {
			return nil, fmt.Errorf("cell %.40q…: a name of %d characters, and Bencher's benchmark names have at most %d", name, n, maxBenchmarkName)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.put(name)
		b.WriteByte(':')
		b.WriteByte('{')
		measures := map[string]string{}
		for j, r := range benches[name] {
			m, scale := Measure(r.metric)
			if prev, ok := measures[m]; ok {
				return nil, fmt.Errorf("cell %q: metrics %s and %s would both be Bencher's measure %q", name, prev, r.metric, m)
			}
			if n := utf8.RuneCountInString(m); n > maxMeasureName {
				return nil, fmt.Errorf("cell %q: metric %.40q…: a name of %d characters, and Bencher's measure names have at most %d", name, m, n, maxMeasureName)
			}
			measures[m] = r.metric
			v := bmfMetric{Value: r.c.Mean * scale}
			if r.c.N >= 2 {
				lo, hi := (r.c.Mean-r.c.HalfWidth)*scale, (r.c.Mean+r.c.HalfWidth)*scale
				if finite(lo) && finite(hi) {
					v.LowerValue, v.UpperValue = &lo, &hi
				}
			}
			if !finite(v.Value) {
				return nil, fmt.Errorf("cell %q: %s of %g is out of range in %s", name, r.metric, r.c.Mean, m)
			}
			if j > 0 {
				b.WriteByte(',')
			}
			b.put(m)
			b.WriteByte(':')
			b.put(v)
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	if b.err != nil {
		return nil, b.err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// jsonBuffer builds a JSON document whose objects keep the order they
// are written in (encoding/json sorts a map's keys): put appends a value
// as encoding/json encodes it, and keeps the first error.
type jsonBuffer struct {
	bytes.Buffer
	err error
}

func (b *jsonBuffer) put(v any) {
	j, err := json.Marshal(v)
	if err != nil && b.err == nil {
		b.err = err
	}
	b.Write(j)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
