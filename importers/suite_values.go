package importers

import (
	"fmt"

	"golang.org/x/perf/benchunit"

	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/textsafe"
)

// Formats of bare values: one value per benchmark and metric in a file,
// so each file is one repetition.

// maxEntries bounds the entries of a file of bare values: a benchmark
// and metric each, over every cell a results file can hold at a few
// metrics a cell.
const maxEntries = 100_000

// gabDirection is which way the values of a github-action-benchmark
// file improve: the tool it is given to says (customSmallerIsBetter,
// customBiggerIsBetter), or nothing does (benchgate export's gab, a file
// a direction, read back without saying which).
type gabDirection int

const (
	gabByUnit gabDirection = iota // each metric its own: gate.Metric.HigherIsBetter
	gabLower
	gabHigher
)

// gabParser reads github-action-benchmark's custom JSON with its values
// improving in direction d.
func gabParser(d gabDirection) suiteParser {
	return func(f *file) ([]suiteBench, error) { return parseGAB(f, d) }
}

// parseGAB reads github-action-benchmark's custom JSON: an array of
// {"name", "unit", "value", "range", "extra"}. The unit names the metric,
// tidied as benchstat tidies Go units (ns/op is sec/op, MB/s is B/s); d
// says which way every metric improves, or leaves each to its name. A
// name given twice with one unit is a further repetition of it.
func parseGAB(f *file, d gabDirection) ([]suiteBench, error) {
	top, err := readFile(f)
	if err != nil {
		return nil, err
	}
	if k := jsonKind(top.raw); k != "an array" {
		return nil, fmt.Errorf("%s: not a %s: the file holds %s, not an array of {name, unit, value}", f.path, f.what(), k)
	}
	entries, err := top.array(maxEntries)
	if err != nil {
		return nil, err
	}
	var out []suiteBench
	index := map[string]int{}
	for _, e := range entries {
		o, err := e.object()
		if err != nil {
			return nil, err
		}
		name, err := o.str("name")
		if err != nil {
			return nil, err
		}
		o.v = o.v.in(name)
		if err := badName(f, name); err != nil {
			return nil, err
		}
		unit, err := o.str("unit")
		if err != nil {
			return nil, err
		}
		if unit == "" {
			return nil, f.benchErrf(name, "field \"unit\" is empty: the unit names the metric")
		}
		x, err := o.num("value")
		if err != nil {
			return nil, err
		}
		// range and extra are free text for gab's charts: checked to be
		// what the schema says, not used.
		for _, k := range []string{"range", "extra"} {
			if _, err := o.optStr(k); err != nil {
				return nil, err
			}
		}
		x, tidied := benchunit.Tidy(x, unit)
		m := gate.Metric(tidied)
		i, ok := index[name]
		if !ok {
			i = len(out)
			index[name] = i
			out = append(out, newBench(name))
		}
		out[i].add(m, true, x)
		if d != gabByUnit {
			out[i].direction(m, d == gabHigher)
		}
	}
	return out, nil
}

// Bencher's built-in measures: latency in nanoseconds, throughput in
// operations a second. Other measures keep their names, and their
// direction is gate.Metric's (lower is better unless the name ends in
// "/s"), as Bencher itself leaves it to each threshold.
const (
	bmfLatency    = "latency"
	bmfThroughput = "throughput"
)

// parseBMF reads Bencher Metric Format JSON: {"benchmark": {"measure":
// {"value", "lower_value", "upper_value"}}}. The latency measure is
// sec/op, throughput ops/s; others are metrics by their names. The bounds
// are a single run's: checked, not used.
func parseBMF(f *file) ([]suiteBench, error) {
	top, err := readFile(f)
	if err != nil {
		return nil, err
	}
	if k := jsonKind(top.raw); k != "an object" {
		return nil, fmt.Errorf("%s: not a %s: the file holds %s, not an object of benchmarks", f.path, f.what(), k)
	}
	if _, n := splitJSON(top.raw, 0); n > maxEntries {
		return nil, f.errf("%d benchmarks, more than %d", n, maxEntries)
	}
	o, err := top.object()
	if err != nil {
		return nil, err
	}
	if t := sniff(formatNamed(f.format), o.m); t != nil {
		return nil, fmt.Errorf("%s: not a %s (it looks like a %s)", f.path, f.what(), t.what)
	}
	var out []suiteBench
	for _, name := range o.keys {
		if err := badName(f, name); err != nil {
			return nil, err
		}
		bv := o.field(name).in(name)
		if jsonKind(bv.raw) != "an object" {
			return nil, bv.errf("is not an object of measures: %s", short(bv.raw))
		}
		measures, err := bv.object()
		if err != nil {
			return nil, err
		}
		if len(measures.keys) == 0 {
			return nil, f.benchErrf(name, "no measures")
		}
		b := newBench(name)
		for _, measure := range measures.keys {
			mv, ok := measures.get(measure)
			if !ok {
				return nil, measures.field(measure).errf("is null, not a measure")
			}
			mo, err := mv.object()
			if err != nil {
				return nil, err
			}
			x, err := mo.num("value")
			if err != nil {
				return nil, err
			}
			for _, k := range []string{"lower_value", "upper_value"} {
				if v, ok := mo.get(k); ok {
					if _, err := v.num(); err != nil {
						return nil, err
					}
				}
			}
			m := gate.Metric(measure)
			switch measure {
			case bmfLatency, "Latency":
				m, x = secPerOp, x*1e-9
				b.direction(m, false)
			case bmfThroughput, "Throughput":
				m = "ops/s"
				b.direction(m, true)
			}
			if _, dup := b.samples[m]; dup {
				return nil, f.benchErrf(name, "measure %s given twice (as latency and Latency?)", textsafe.Quote(measure, textsafe.QuoteRunes))
			}
			b.add(m, true, x)
		}
		out = append(out, b)
	}
	return out, nil
}
