package importers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/textsafe"
)

// maxBenchmarks bounds the benchmarks listed in one file (entries of
// pytest-benchmark's, hyperfine's, Google Benchmark's and JMH's arrays):
// every repetition of every cell a results file can hold, aggregates
// included.
const maxBenchmarks = 200_000

// parseHyperfine reads hyperfine --export-json: results[] of {command,
// mean, times, exit_codes, ...}. Each run in times is one repetition of
// the command's sec/op; a file without times (hyperfine before 1.9)
// gives its mean, one repetition. A command that exited non-zero is
// refused: the time of a failing command is not the time of the work.
func parseHyperfine(f *file) ([]suiteBench, error) {
	top, err := readFile(f)
	if err != nil {
		return nil, err
	}
	o, err := topObject(f, top)
	if err != nil {
		return nil, err
	}
	rv, err := o.need("results")
	if err != nil {
		return nil, err
	}
	results, err := rv.array(maxBenchmarks)
	if err != nil {
		return nil, err
	}
	var out []suiteBench
	for _, r := range results {
		ro, err := r.object()
		if err != nil {
			return nil, err
		}
		name, err := ro.str("command")
		if err != nil {
			return nil, err
		}
		ro.v = ro.v.in(name)
		b := newBench(name)
		if tv, ok := ro.get("times"); ok {
			times, err := tv.nums()
			if err != nil {
				return nil, err
			}
			b.add(secPerOp, true, times...)
		} else {
			mean, err := ro.num("mean")
			if err != nil {
				return nil, err
			}
			b.add(secPerOp, true, mean)
		}
		if ev, ok := ro.get("exit_codes"); ok {
			codes, err := ev.nums()
			if err != nil {
				return nil, err
			}
			bad := 0
			for _, c := range codes {
				if c != 0 {
					bad++
				}
			}
			if bad > 0 {
				return nil, f.benchErrf(name, "exited non-zero in %d of %d runs: the times of a failing command are not the work's", bad, len(codes))
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// parsePytest reads pytest-benchmark --benchmark-json: benchmarks[] of
// {name, fullname, stats}. stats.data, written with
// --benchmark-save-data, holds every round's time per iteration: each is
// one repetition of sec/op. Without it stats.mean is one repetition.
func parsePytest(f *file) ([]suiteBench, error) {
	top, err := readFile(f)
	if err != nil {
		return nil, err
	}
	o, err := topObject(f, top)
	if err != nil {
		return nil, err
	}
	bv, err := o.need("benchmarks")
	if err != nil {
		return nil, err
	}
	list, err := bv.array(maxBenchmarks)
	if err != nil {
		return nil, err
	}
	var out []suiteBench
	for _, e := range list {
		eo, err := e.object()
		if err != nil {
			return nil, err
		}
		name, err := eo.optStr("fullname")
		if err != nil {
			return nil, err
		}
		if name == "" {
			if name, err = eo.str("name"); err != nil {
				return nil, err
			}
		}
		eo.v = eo.v.in(name)
		sv, err := eo.need("stats")
		if err != nil {
			return nil, err
		}
		stats, err := sv.object()
		if err != nil {
			return nil, err
		}
		b := newBench(name)
		if dv, ok := stats.get("data"); ok {
			data, err := dv.nums()
			if err != nil {
				return nil, err
			}
			if len(data) == 0 {
				return nil, dv.errf("is empty")
			}
			b.add(secPerOp, true, data...)
		} else {
			mean, err := stats.num("mean")
			if err != nil {
				return nil, err
			}
			b.add(secPerOp, true, mean)
		}
		out = append(out, b)
	}
	return out, nil
}

// googleFields are the fields of a Google Benchmark run that are not
// user counters.
var googleFields = map[string]bool{
	"name": true, "family_index": true, "per_family_instance_index": true, "run_name": true,
	"run_type": true, "repetitions": true, "repetition_index": true, "threads": true,
	"iterations": true, "real_time": true, "cpu_time": true, "time_unit": true,
	"aggregate_name": true, "aggregate_unit": true, "error_occurred": true, "error_message": true,
	"skipped": true, "skip_message": true, "label": true, "big_o": true, "complexity": true, "rms": true,
	"bytes_per_second": true, "items_per_second": true,
}

// googleDerived are the metrics a Google Benchmark run's own fields
// make, by the field: a user counter so named is refused.
var googleDerived = map[gate.Metric]string{
	secPerOp: "real_time", "cpu-sec/op": "cpu_time", "B/s": "bytes_per_second", "items/s": "items_per_second",
}

// parseGoogleBenchmark reads Google Benchmark's JSON (--benchmark_format=json
// or --benchmark_out): benchmarks[] of runs. Each iteration run (one per
// --benchmark_repetitions) is one repetition of its run_name's cell:
// real_time is sec/op, cpu_time cpu-sec/op, bytes_per_second B/s,
// items_per_second items/s, a user counter a metric by its name. The
// aggregates (mean, median, stddev, cv) are left out; a benchmark that
// has only aggregates (--benchmark_report_aggregates_only) gives its mean
// as one repetition.
func parseGoogleBenchmark(f *file) ([]suiteBench, error) {
	top, err := readFile(f)
	if err != nil {
		return nil, err
	}
	o, err := topObject(f, top)
	if err != nil {
		return nil, err
	}
	bv, err := o.need("benchmarks")
	if err != nil {
		return nil, err
	}
	list, err := bv.array(maxBenchmarks)
	if err != nil {
		return nil, err
	}
	var out []suiteBench
	index := map[string]int{}
	var means []jobj // aggregate means, for benchmarks without iteration runs
	var meanNames []string
	for _, e := range list {
		eo, err := e.object()
		if err != nil {
			return nil, err
		}
		name, err := eo.optStr("run_name")
		if err != nil {
			return nil, err
		}
		if name == "" {
			if name, err = eo.str("name"); err != nil {
				return nil, err
			}
		}
		eo.v = eo.v.in(name)
		if v, ok := eo.get("error_occurred"); ok && strings.TrimSpace(string(v.raw)) == "true" {
			msg, _ := eo.optStr("error_message")
			return nil, f.benchErrf(name, "failed: %s", textsafe.Quote(msg, textsafe.QuoteRunes))
		}
		if v, ok := eo.get("skipped"); ok && strings.TrimSpace(string(v.raw)) != "false" && strings.TrimSpace(string(v.raw)) != "0" {
			msg, _ := eo.optStr("skip_message")
			return nil, f.benchErrf(name, "was skipped: %s", textsafe.Quote(msg, textsafe.QuoteRunes))
		}
		runType, err := eo.optStr("run_type")
		if err != nil {
			return nil, err
		}
		switch runType {
		case "", "iteration":
		case "aggregate":
			if agg, err := eo.optStr("aggregate_name"); err != nil {
				return nil, err
			} else if agg == "mean" {
				means, meanNames = append(means, eo), append(meanNames, name)
			}
			continue
		default:
			return nil, eo.field("run_type").errf("is %s, not iteration or aggregate", textsafe.Quote(runType, textsafe.QuoteRunes))
		}
		i, ok := index[name]
		if !ok {
			i = len(out)
			index[name] = i
			out = append(out, newBench(name))
		}
		if err := googleRun(eo, &out[i]); err != nil {
			return nil, err
		}
	}
	for j, eo := range means {
		if _, ok := index[meanNames[j]]; ok {
			continue
		}
		index[meanNames[j]] = len(out)
		out = append(out, newBench(meanNames[j]))
		if err := googleRun(eo, &out[len(out)-1]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// googleRun adds one run's figures to b.
func googleRun(eo jobj, b *suiteBench) error {
	unit, err := eo.optStr("time_unit")
	if err != nil {
		return err
	}
	if unit == "" {
		unit = "ns" // the library's default, omitted by old versions
	}
	scale, ok := timeUnits[unit]
	if !ok {
		return eo.field("time_unit").errf("is %s, not ns, us, ms or s", textsafe.Quote(unit, textsafe.QuoteRunes))
	}
	real, err := eo.num("real_time")
	if err != nil {
		return err
	}
	b.add(secPerOp, true, real*scale)
	if _, ok := eo.get("cpu_time"); ok {
		cpu, err := eo.num("cpu_time")
		if err != nil {
			return err
		}
		b.add("cpu-sec/op", false, cpu*scale)
	}
	for _, c := range []struct {
		k string
		m gate.Metric
	}{{"bytes_per_second", "B/s"}, {"items_per_second", "items/s"}} {
		k, m := c.k, c.m
		if v, ok := eo.get(k); ok {
			x, err := v.num()
			if err != nil {
				return err
			}
			b.add(m, false, x)
		}
	}
	for _, k := range eo.keys {
		if googleFields[k] {
			continue
		}
		v, ok := eo.get(k)
		if !ok || jsonKind(v.raw) != "a number" {
			continue // not a counter: counters are numbers
		}
		if from, ok := googleDerived[gate.Metric(k)]; ok {
			return v.errf("is a user counter named as the metric of %s: its values would mix with %s's; rename the counter", from, from)
		}
		x, err := v.num()
		if err != nil {
			return err
		}
		b.add(gate.Metric(k), false, x)
	}
	return nil
}

// jmhScoreUnit normalises a JMH score unit: a throughput "ops/T" to
// ops/s, a time "T/op" to sec/op. It returns the metric and the factor
// from the unit to it; ok is false for a unit of neither kind.
func jmhScoreUnit(unit string) (m gate.Metric, factor float64, ok bool) {
	if t, found := strings.CutPrefix(unit, "ops/"); found {
		if s, known := timeUnits[t]; known {
			return "ops/s", 1 / s, true
		}
	}
	if t, found := strings.CutSuffix(unit, "/op"); found {
		if s, known := timeUnits[t]; known {
			return secPerOp, s, true
		}
	}
	return "", 0, false
}

// parseJMH reads JMH's JSON result (-rf json): an array of {benchmark,
// mode, params, primaryMetric, secondaryMetrics}. The cell is the
// benchmark with its params ("pkg.Bench.method:size=10,kind=a", params in
// name order); two entries whose benchmarks and params differ but make
// one name (a param value holding "," or "=") are refused, as their
// samples would mix. The primary metric's unit is normalised (ops/ms is
// ops/s ×1000, us/op is sec/op ×1e-6), and each measurement iteration of
// each fork in rawData is one repetition; sample mode's rawDataHistogram
// gives each iteration's mean. Secondary metrics are metrics by their
// names: one in a unit the primary's normalisation knows is NAME-ops/s or
// NAME-sec/op, normalised alike, so that its name gives its direction
// (·gc.alloc.rate.norm in B/op is B/op).
func parseJMH(f *file) ([]suiteBench, error) {
	top, err := readFile(f)
	if err != nil {
		return nil, err
	}
	if k := jsonKind(top.raw); k != "an array" {
		return nil, fmt.Errorf("%s: not a %s: the file holds %s, not an array of benchmarks", f.path, f.what(), k)
	}
	list, err := top.array(maxBenchmarks)
	if err != nil {
		return nil, err
	}
	var out []suiteBench
	index := map[string]int{}
	modes := map[string]string{}
	entries := map[string]string{} // cell name → the entry naming it, as jmhEntry describes it
	for _, e := range list {
		eo, err := e.object()
		if err != nil {
			return nil, err
		}
		bench, err := eo.str("benchmark")
		if err != nil {
			return nil, err
		}
		name := bench
		var params []string // k, v, k, v, … in name order
		if pv, ok := eo.get("params"); ok {
			po, err := pv.in(bench).object()
			if err != nil {
				return nil, err
			}
			keys := slices.Clone(po.keys)
			slices.Sort(keys)
			parts := make([]string, 0, len(keys))
			for _, k := range keys {
				v, ok := po.get(k)
				if !ok {
					return nil, po.field(k).errf("is null, not a param's value")
				}
				s, err := v.str()
				if err != nil {
					return nil, err
				}
				parts = append(parts, k+"="+s)
				params = append(params, k, s)
			}
			if len(parts) > 0 {
				name += ":" + strings.Join(parts, ",")
			}
		}
		eo.v = eo.v.in(name)
		entry := jmhEntry(bench, params)
		if prev, ok := entries[name]; ok && prev != entry {
			return nil, eo.v.errf("is the name of both %s and %s: their samples would mix (a param value holds \",\" or \"=\"?)", prev, entry)
		}
		entries[name] = entry
		mode, err := eo.str("mode")
		if err != nil {
			return nil, err
		}
		switch mode {
		case "thrpt", "avgt", "sample", "ss":
		default:
			return nil, eo.field("mode").errf("is %s, not thrpt, avgt, sample or ss", textsafe.Quote(mode, textsafe.QuoteRunes))
		}
		pmv, err := eo.need("primaryMetric")
		if err != nil {
			return nil, err
		}
		pm, err := pmv.object()
		if err != nil {
			return nil, err
		}
		unit, err := pm.str("scoreUnit")
		if err != nil {
			return nil, err
		}
		m, factor, ok := jmhScoreUnit(unit)
		if !ok {
			return nil, pm.field("scoreUnit").errf("is %s, not ops/TIME or TIME/op", textsafe.Quote(unit, textsafe.QuoteRunes))
		}
		i, seen := index[name]
		if !seen {
			i = len(out)
			index[name] = i
			out = append(out, newBench(name))
			out[i].entry = entry
			modes[name] = mode
		} else if modes[name] != mode {
			return nil, f.benchErrf(name, "run in modes %s and %s: give each mode its own files", modes[name], mode)
		}
		b := &out[i]
		xs, err := jmhSamples(pm)
		if err != nil {
			return nil, err
		}
		for j := range xs {
			xs[j] *= factor
		}
		b.add(m, true, xs...)
		if sv, ok := eo.get("secondaryMetrics"); ok {
			so, err := sv.object()
			if err != nil {
				return nil, err
			}
			given := map[gate.Metric]string{m: "primaryMetric"} // this entry's metrics, by the field giving each
			for _, k := range so.keys {
				mv, ok := so.get(k)
				if !ok {
					continue
				}
				mo, err := mv.object()
				if err != nil {
					return nil, err
				}
				sm, factor, err := jmhSecondary(k, mo)
				if err != nil {
					return nil, err
				}
				if prev, dup := given[sm]; dup {
					return nil, mv.errf("is the metric %s, as %s is: their samples would mix", sm, strconv.Quote(prev))
				}
				given[sm] = "secondaryMetrics." + k
				ys, err := jmhSamples(mo)
				if err != nil {
					return nil, err
				}
				for j := range ys {
					ys[j] *= factor
				}
				b.add(sm, false, ys...)
			}
		}
	}
	return out, nil
}

// jmhEntry describes a JMH result entry by its benchmark and params
// (k, v pairs), quoted: "a.B.c" with params {"a": "1,b=2"}.
func jmhEntry(bench string, params []string) string {
	if len(params) == 0 {
		return strconv.Quote(bench) + " without params"
	}
	var b strings.Builder
	b.WriteString(strconv.Quote(bench) + " with params {")
	for i := 0; i < len(params); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(params[i]) + ": " + strconv.Quote(params[i+1]))
	}
	b.WriteString("}")
	return b.String()
}

// jmhSecondary names secondary metric k of a JMH result, mo, and gives
// the factor from its unit: gc.alloc.rate.norm in B/op is B/op; a unit
// jmhScoreUnit knows makes NAME-ops/s or NAME-sec/op, normalised as the
// primary metric is, so that a throughput is better higher (its name
// ends in /s) whatever unit JMH wrote; any other unit keeps the name and
// the values as they are.
func jmhSecondary(k string, mo jobj) (gate.Metric, float64, error) {
	unit, err := mo.optStr("scoreUnit")
	if err != nil {
		return "", 0, err
	}
	name := strings.TrimPrefix(k, "·")
	switch m, factor, ok := jmhScoreUnit(unit); {
	case unit == "B/op" && strings.HasSuffix(name, "gc.alloc.rate.norm"):
		return "B/op", 1, nil
	case ok:
		return gate.Metric(name + "-" + string(m)), factor, nil
	}
	return gate.Metric(name), 1, nil
}

// jmhSamples are a JMH metric's samples: every iteration of every fork
// in rawData, each iteration's mean in rawDataHistogram (sample mode),
// else the score.
func jmhSamples(o jobj) ([]float64, error) {
	if rv, ok := o.get("rawData"); ok {
		forks, err := rv.array(MaxSuiteSamples)
		if err != nil {
			return nil, err
		}
		var xs []float64
		for _, fk := range forks {
			ys, err := fk.nums()
			if err != nil {
				return nil, err
			}
			if xs = append(xs, ys...); len(xs) > MaxSuiteSamples {
				return nil, rv.errf("holds more than %d samples", MaxSuiteSamples)
			}
		}
		if len(xs) > 0 {
			return xs, nil
		}
	}
	if hv, ok := o.get("rawDataHistogram"); ok {
		forks, err := hv.array(MaxSuiteSamples)
		if err != nil {
			return nil, err
		}
		var xs []float64
		for _, fk := range forks {
			iters, err := fk.array(MaxSuiteSamples)
			if err != nil {
				return nil, err
			}
			for _, it := range iters {
				bins, err := it.array(MaxSuiteSamples)
				if err != nil {
					return nil, err
				}
				var sum, n float64
				for _, bin := range bins {
					vc, err := bin.nums()
					if err != nil {
						return nil, err
					}
					if len(vc) != 2 || vc[1] < 0 {
						return nil, bin.errf("is not a [value, count] pair")
					}
					sum += vc[0] * vc[1]
					n += vc[1]
				}
				if n > 0 {
					xs = append(xs, sum/n)
				}
				if len(xs) > MaxSuiteSamples {
					return nil, hv.errf("holds more than %d iterations", MaxSuiteSamples)
				}
			}
		}
		if len(xs) > 0 {
			return xs, nil
		}
	}
	x, err := o.num("score")
	if err != nil {
		return nil, err
	}
	return []float64{x}, nil
}
