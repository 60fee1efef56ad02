package importers

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/fsx"
)

// criterion is given two ways: a directory criterion.rs wrote
// (target/criterion, or any directory below it), in which every
// NAME/new/ directory is a benchmark's latest run, or a file of
// cargo-criterion's JSON messages (--message-format=json), one object a
// line.

// maxCriterionEntries bounds the directory entries a criterion directory
// walk visits: about ten files a benchmark at benchdata.MaxCells, and
// room for the reports beside them.
const maxCriterionEntries = 1_000_000

// parseCriterion reads a criterion directory or a cargo-criterion
// messages file.
func parseCriterion(f *file) ([]suiteBench, error) {
	if f.data == nil {
		st, err := os.Stat(f.path)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			return criterionDir(f)
		}
	}
	return criterionMessages(f)
}

// criterionDir reads every */new/ directory below f.path: sample.json
// ({"iters", "times"}, times in ns) gives each sample's time per
// iteration, times[i] / iters[i], as one repetition of sec/op; without it
// estimates.json gives one repetition, the slope's point estimate where
// there is one, else the mean's (criterion's "typical"). benchmark.json
// gives the name (full_id; else the directory's path) and the
// throughput (Bytes: B/s, Elements: elements/s, per sample).
func criterionDir(f *file) ([]suiteBench, error) {
	var dirs []string
	visited := 0
	err := filepath.WalkDir(f.path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if visited++; visited > maxCriterionEntries {
			return fmt.Errorf("%s: more than %d entries below the criterion directory", f.path, maxCriterionEntries)
		}
		if d.IsDir() && d.Name() == "new" && isRunDir(p) {
			dirs = append(dirs, p)
			return filepath.SkipDir
		}
		if d.IsDir() && p != f.path && d.Name() == "report" {
			return filepath.SkipDir // criterion's HTML reports
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, f.errf("no benchmark below the directory (want target/criterion, whose NAME/new/ directories hold sample.json)")
	}
	slices.Sort(dirs)
	var out []suiteBench
	for _, dir := range dirs {
		b, err := criterionBench(f, dir)
		if err != nil {
			return nil, err
		}
		if b.name != "" {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return nil, f.errf("no benchmark below the directory: its new/ directories hold neither sample.json nor estimates.json")
	}
	return out, nil
}

// isRunDir tells a benchmark's new/ directory from a group named "new".
func isRunDir(dir string) bool {
	for _, name := range []string{"sample.json", "estimates.json"} {
		if st, err := os.Lstat(filepath.Join(dir, name)); err == nil && !st.IsDir() {
			return true
		}
	}
	return false
}

// criterionBench reads one new/ directory; a directory with neither
// sample.json nor estimates.json gives a benchmark without a name, left
// out.
func criterionBench(f *file, dir string) (suiteBench, error) {
	read := func(name string) (jobj, bool, error) {
		p := filepath.Join(dir, name)
		b, err := fsx.ReadFileLimited(p, benchdata.MaxReportBytes)
		if errors.Is(err, fs.ErrNotExist) {
			return jobj{}, false, nil
		}
		if err != nil {
			return jobj{}, false, err
		}
		sf := &file{path: p, format: f.format}
		v, err := parseJSON(sf, b)
		if err != nil {
			return jobj{}, false, err
		}
		if k := jsonKind(v.raw); k != "an object" {
			return jobj{}, false, fmt.Errorf("%s: not a %s: the file holds %s, not an object", p, f.what(), k)
		}
		o, err := v.object()
		if err != nil {
			return jobj{}, false, err
		}
		return o, true, nil
	}
	sample, hasSample, err := read("sample.json")
	if err != nil {
		return suiteBench{}, err
	}
	est, hasEst, err := read("estimates.json")
	if err != nil {
		return suiteBench{}, err
	}
	if !hasSample && !hasEst {
		return suiteBench{}, nil
	}
	rel, _ := filepath.Rel(f.path, filepath.Dir(dir))
	name := filepath.ToSlash(rel)
	var through jobj
	var hasThrough bool
	if meta, ok, err := read("benchmark.json"); err != nil {
		return suiteBench{}, err
	} else if ok {
		id, err := meta.optStr("full_id")
		if err != nil {
			return suiteBench{}, err
		}
		if id != "" {
			name = id
		}
		if tv, ok := meta.get("throughput"); ok {
			if through, err = tv.in(name).object(); err != nil {
				return suiteBench{}, err
			}
			hasThrough = true
		}
	}
	if name == "." || name == "" {
		name = filepath.Base(filepath.Dir(dir))
	}
	b := newBench(name)
	var perOp []float64
	if hasSample {
		sample.v = sample.v.in(name)
		xs, err := perIteration(sample, "iters", "times")
		if err != nil {
			return suiteBench{}, err
		}
		perOp = xs
	} else {
		est.v = est.v.in(name)
		key := "slope"
		if _, ok := est.get(key); !ok {
			key = "mean"
		}
		ev, err := est.need(key)
		if err != nil {
			return suiteBench{}, err
		}
		eo, err := ev.object()
		if err != nil {
			return suiteBench{}, err
		}
		x, err := eo.num("point_estimate")
		if err != nil {
			return suiteBench{}, err
		}
		perOp = []float64{x}
	}
	for i := range perOp {
		perOp[i] *= 1e-9 // criterion's wall time is in nanoseconds
	}
	b.add(secPerOp, true, perOp...)
	if hasThrough {
		for _, t := range []struct {
			key string
			m   gate.Metric
		}{{"Bytes", "B/s"}, {"BytesDecimal", "B/s"}, {"Elements", "elements/s"}} {
			if v, ok := through.get(t.key); ok {
				n, err := v.num()
				if err != nil {
					return suiteBench{}, err
				}
				if rs := rates(n, perOp); rs != nil {
					b.add(t.m, false, rs...)
				}
				break
			}
		}
	}
	return b, nil
}

// perIteration divides o's times by its iteration counts, pairwise.
func perIteration(o jobj, itersKey, timesKey string) ([]float64, error) {
	iv, err := o.need(itersKey)
	if err != nil {
		return nil, err
	}
	iters, err := iv.nums()
	if err != nil {
		return nil, err
	}
	tv, err := o.need(timesKey)
	if err != nil {
		return nil, err
	}
	times, err := tv.nums()
	if err != nil {
		return nil, err
	}
	if len(iters) != len(times) {
		return nil, o.v.errf("%d iteration counts but %d times", len(iters), len(times))
	}
	if len(times) == 0 {
		return nil, tv.errf("is empty")
	}
	out := make([]float64, len(times))
	for i := range times {
		if !(iters[i] > 0) {
			elems, _ := iv.array(MaxSuiteSamples)
			return nil, elems[i].errf("is %v, not a count of iterations", iters[i])
		}
		out[i] = times[i] / iters[i]
	}
	return out, nil
}

// rates are n units an operation at each time per operation, per second;
// none when a time is 0 (its rate would be infinite), so that sample k of
// the rate is always sample k of the time.
func rates(n float64, perOp []float64) []float64 {
	out := make([]float64, len(perOp))
	for i, t := range perOp {
		if !(t > 0) {
			return nil
		}
		out[i] = n / t
	}
	return out
}

// criterionMessages reads cargo-criterion's JSON messages: each line with
// "reason": "benchmark-complete" is a benchmark, id its name; each
// measured_values[i] / iteration_count[i] is one repetition of sec/op
// (in unit, ns for wall time; another measurement's unit u makes the
// metric u/op). Without measured values, typical.estimate is one
// repetition. throughput [{per_iteration, unit: bytes|elements}] gives
// B/s or elements/s per sample. Other messages are skipped.
func criterionMessages(f *file) ([]suiteBench, error) {
	data := f.data
	if data == nil {
		b, err := fsx.ReadFileLimited(f.path, benchdata.MaxReportBytes)
		if err != nil {
			return nil, err
		}
		data = b
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: empty file, not a %s", f.path, f.what())
	}
	var out []suiteBench
	index := map[string]int{}
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		lf := &file{path: f.path, format: f.format, line: n + 1}
		v, err := parseJSON(lf, line)
		if err != nil {
			return nil, fmt.Errorf("%w (want a criterion directory, or cargo-criterion --message-format=json output: one JSON object a line)", err)
		}
		if k := jsonKind(v.raw); k != "an object" {
			return nil, fmt.Errorf("%s: not a cargo-criterion message: the line holds %s, not an object", lf.where(), k)
		}
		o, err := v.object()
		if err != nil {
			return nil, err
		}
		reason, err := o.str("reason")
		if err != nil {
			return nil, err
		}
		if reason != "benchmark-complete" {
			continue
		}
		name, err := o.str("id")
		if err != nil {
			return nil, err
		}
		o.v = o.v.in(name)
		unit, err := o.optStr("unit")
		if err != nil {
			return nil, err
		}
		var xs []float64
		if _, ok := o.get("measured_values"); ok {
			if xs, err = perIteration(o, "iteration_count", "measured_values"); err != nil {
				return nil, err
			}
		} else {
			tv, err := o.need("typical")
			if err != nil {
				return nil, err
			}
			to, err := tv.object()
			if err != nil {
				return nil, err
			}
			x, err := to.num("estimate")
			if err != nil {
				return nil, err
			}
			if u, err := to.optStr("unit"); err != nil {
				return nil, err
			} else if unit == "" {
				unit = u
			}
			xs = []float64{x}
		}
		if unit == "" {
			unit = "ns"
		}
		m := gate.Metric(unit + "/op")
		if s, ok := timeUnits[unit]; ok {
			m = secPerOp
			for i := range xs {
				xs[i] *= s
			}
		}
		i, seen := index[name]
		if !seen {
			i = len(out)
			index[name] = i
			out = append(out, newBench(name))
		}
		b := &out[i]
		b.add(m, true, xs...)
		if tv, ok := o.get("throughput"); ok && m == secPerOp {
			ts, err := tv.array(16)
			if err != nil {
				return nil, err
			}
			for _, t := range ts {
				to, err := t.object()
				if err != nil {
					return nil, err
				}
				per, err := to.num("per_iteration")
				if err != nil {
					return nil, err
				}
				tu, err := to.str("unit")
				if err != nil {
					return nil, err
				}
				rs := rates(per, xs)
				switch strings.ToLower(tu) {
				case "bytes", "bytesdecimal":
					if rs != nil {
						b.add("B/s", false, rs...)
					}
				case "elements":
					if rs != nil {
						b.add("elements/s", false, rs...)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, f.errf("no benchmark-complete message (want cargo-criterion --message-format=json output, or a criterion directory)")
	}
	return out, nil
}
