package importers

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
)

// TestReadSuiteLongArrayCost: an array far longer than its bound is
// refused for its length before any element is decoded, so what the
// refusal costs does not grow with the array. Decoding first, a 60 MB
// file of 3·10⁷ times took gigabytes; here 10⁶ times (2 MB) must be
// refused in a few allocations and bytes, where decoding them made
// 10⁶ allocations.
//
// Not parallel: AllocsPerRun and MemStats count every goroutine's
// allocations.
func TestReadSuiteLongArrayCost(t *testing.T) {
	n := 10 * MaxSuiteSamples
	f := &file{path: "f.json", format: "hyperfine",
		data: []byte(`{"results":[{"command":"a","times":[` + strings.Repeat("1,", n-1) + `1]}]}`)}
	var err error
	allocs := testing.AllocsPerRun(1, func() { _, err = parseSuite(parseHyperfine, f) })
	want := fmt.Sprintf(`f.json:1:36: hyperfine JSON export: benchmark "a": field "times" has %d elements, more than %d`, n, MaxSuiteSamples)
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _ = parseSuite(parseHyperfine, f)
	runtime.ReadMemStats(&after)
	bytes := after.TotalAlloc - before.TotalAlloc
	t.Logf("%.0f allocations, %d bytes", allocs, bytes)
	if allocs > 100 || bytes > 64<<10 {
		t.Errorf("refusing %d times made %.0f allocations of %d bytes: want at most 100 of 64 KiB", n, allocs, bytes)
	}
}

// TestReadSuiteArrayBounds: every array and object with a bound is
// refused one element past it, with the file, the line and column, the
// benchmark and the field named.
func TestReadSuiteArrayBounds(t *testing.T) {
	t.Parallel()
	over := func(max int, elem string) string { return strings.Repeat(elem+",", max) + elem }
	fields := func(max int) string {
		var b strings.Builder
		for i := range max + 1 {
			fmt.Fprintf(&b, `,"c%d":0`, i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		format, data, want string
	}{
		{"pytest-benchmark", `{"machine_info":{},"benchmarks":[{"fullname":"t::a","stats":{"data":[` + over(MaxSuiteSamples, "1") + `]}}]}`,
			fmt.Sprintf(`f.json:1:69: pytest-benchmark JSON: benchmark "t::a": field "stats.data" has %d elements, more than %d`, MaxSuiteSamples+1, MaxSuiteSamples)},
		{"pytest-benchmark", `{"machine_info":{},"benchmarks":[` + over(maxBenchmarks, "0") + `]}`,
			fmt.Sprintf(`f.json:1:33: pytest-benchmark JSON: field "benchmarks" has %d elements, more than %d`, maxBenchmarks+1, maxBenchmarks)},
		{"jmh", `[{"benchmark":"a.B.c","mode":"avgt","primaryMetric":{"scoreUnit":"us/op","rawData":[[1],[` + over(MaxSuiteSamples, "1") + `]]}}]`,
			fmt.Sprintf(`f.json:1:89: JMH JSON result: benchmark "a.B.c": field "primaryMetric.rawData[1]" has %d elements, more than %d`, MaxSuiteSamples+1, MaxSuiteSamples)},
		{"jmh", `[{"benchmark":"a.B.c","mode":"avgt","primaryMetric":{"scoreUnit":"us/op","rawData":[` + over(MaxSuiteSamples, "[]") + `]}}]`,
			fmt.Sprintf(`f.json:1:84: JMH JSON result: benchmark "a.B.c": field "primaryMetric.rawData" has %d elements, more than %d`, MaxSuiteSamples+1, MaxSuiteSamples)},
		{"jmh", `[{"benchmark":"a.B.c","mode":"avgt","primaryMetric":{"scoreUnit":"us/op","rawData":[[` + over(MaxSuiteSamples/2, "1") + `],[` + over(MaxSuiteSamples/2, "1") + `]]}}]`,
			fmt.Sprintf(`f.json:1:84: JMH JSON result: benchmark "a.B.c": field "primaryMetric.rawData" holds more than %d samples`, MaxSuiteSamples)},
		{"jmh", `[` + over(maxBenchmarks, "{}") + `]`,
			fmt.Sprintf(`f.json:1:1: JMH JSON result: the file has %d elements, more than %d`, maxBenchmarks+1, maxBenchmarks)},
		{"criterion", `{"reason":"benchmark-complete","id":"a","iteration_count":[` + over(MaxSuiteSamples, "1") + `],"measured_values":[1]}`,
			fmt.Sprintf(`f.json:1:59: criterion output: benchmark "a": field "iteration_count" has %d elements, more than %d`, MaxSuiteSamples+1, MaxSuiteSamples)},
		{"criterion", `{"reason":"benchmark-complete","id":"a","iteration_count":[1],"measured_values":[` + over(MaxSuiteSamples, "1") + `]}`,
			fmt.Sprintf(`f.json:1:81: criterion output: benchmark "a": field "measured_values" has %d elements, more than %d`, MaxSuiteSamples+1, MaxSuiteSamples)},
		{"googlebenchmark", `{"context":{},"benchmarks":[{"name":"BM","real_time":1` + fields(maxFields) + `}]}`,
			fmt.Sprintf(`f.json:1:29: Google Benchmark JSON: field "benchmarks[0]" has %d fields, more than %d`, maxFields+3, maxFields)},
		{FormatGABSmaller, `[` + over(maxEntries, "0") + `]`,
			fmt.Sprintf(`f.json:1:1: github-action-benchmark custom JSON: the file has %d elements, more than %d`, maxEntries+1, maxEntries)},
		{"bmf", `{"a":0` + fields(maxEntries-1) + `}`,
			fmt.Sprintf(`f.json: Bencher Metric Format JSON: %d benchmarks, more than %d`, maxEntries+1, maxEntries)},
	} {
		f := &file{path: "f.json", format: tc.format, data: []byte(tc.data)}
		_, err := parseSuite(formatNamed(tc.format).suite, f)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %.60s…:\n got %v\nwant %s", tc.format, tc.data, err, tc.want)
		}
	}

	// criterion's sample.json, read by the same accessors.
	dir := filepath.Join(t.TempDir(), "criterion")
	if err := os.MkdirAll(filepath.Join(dir, "a", "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	sample := filepath.Join(dir, "a", "new", "sample.json")
	if err := os.WriteFile(sample, []byte("{\n  \"iters\": [1],\n  \"times\": ["+over(MaxSuiteSamples, "1")+"]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := parseSuite(parseCriterion, &file{path: dir, format: "criterion"})
	want := fmt.Sprintf(`%s:3:12: criterion output: benchmark "a": field "times" has %d elements, more than %d`, sample, MaxSuiteSamples+1, MaxSuiteSamples)
	if err == nil || err.Error() != want {
		t.Errorf("sample.json:\n got %v\nwant %s", err, want)
	}
}

// TestSplitJSON: the scan that counts and splits arrays and objects
// finds each element whatever it holds: nested values, strings holding
// brackets, commas, quotes and escapes, and space anywhere.
func TestSplitJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		want []string
	}{
		{`[]`, nil},
		{`[ ]`, nil},
		{`{}`, nil},
		{`[1]`, []string{`1`}},
		{"[ 1 ,\n\t-2.5e3 , true,null ]", []string{`1`, `-2.5e3`, `true`, `null`}},
		{`[[1,2],{"a":[3]},"x,]\"}"]`, []string{`[1,2]`, `{"a":[3]}`, `"x,]\"}"`}},
		{`{"a":1, "b\\\"" : {"c":"]"} ,"d":[]}`, []string{`"a":1`, `"b\\\"" : {"c":"]"}`, `"d":[]`}},
	} {
		spans, n := splitJSON([]byte(tc.raw), 100)
		var got []string
		for _, sp := range spans {
			got = append(got, tc.raw[sp[0]:sp[1]])
		}
		if !slices.Equal(got, tc.want) || n != len(tc.want) {
			t.Errorf("%s: %d elements %q, want %q", tc.raw, n, got, tc.want)
		}
		if _, count := splitJSON([]byte(tc.raw), 0); count != n {
			t.Errorf("%s: counted %d, split %d", tc.raw, count, n)
		}
	}
	// Keys decode as encoding/json decodes them; a key given twice is
	// its last value, listed once in file order.
	f := &file{path: "f.json", format: "bmf"}
	v, err := parseJSON(f, []byte(` {"b":1,"a\u00e9":2,"b":3} `))
	if err != nil {
		t.Fatal(err)
	}
	o, err := v.object()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := o.num("b"); !slices.Equal(o.keys, []string{"b", "aé"}) || b != 3 {
		t.Errorf("keys %q, b %v; want [b aé], 3", o.keys, b)
	}
}

// TestReadSuitePositions: an error names the line and column of the
// value it is about, in a pretty-printed file as in a line of
// cargo-criterion's messages, and a file that is not JSON the place it
// stops being JSON.
func TestReadSuitePositions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, data, want string
	}{
		{"hyperfine", "{\n  \"results\": [\n    {\n      \"command\": \"a\",\n      \"times\": [0.1, \"x\"]\n    }\n  ]\n}\n",
			`f.json:5:22: hyperfine JSON export: benchmark "a": field "times[1]" is not a number: "x"`},
		{"hyperfine", "{\n  \"results\": [\n    {\"command\": \"a\", \"mean\": 1},\n    {\"mean\": 1}\n  ]\n}\n",
			`f.json:4:5: hyperfine JSON export: no field "results[1].command"`},
		{"hyperfine", "{\n  \"results\": [\n    {\"command\": \"a\", \"mean\": 1,}\n  ]\n}\n",
			`f.json:3:32: not a hyperfine JSON export: invalid character '}' looking for beginning of object key string`},
		{"criterion", "{\"reason\":\"group-complete\"}\n\n  {\"reason\":\"benchmark-complete\",\"id\":\"a\",\"typical\":{\"estimate\":\"1\"}}\n",
			`f.json:3:65: criterion output: benchmark "a": field "typical.estimate" is not a number: "1"`},
		{"criterion", "{\"reason\":\"group-complete\"}\n[1]\n",
			`f.json:2: not a cargo-criterion message: the line holds an array, not an object`},
		{"bmf", "{\n\"a\": {\"latency\": null}}",
			`f.json:2:18: Bencher Metric Format JSON: benchmark "a": field "latency" is null, not a measure`},
	} {
		f := &file{path: "f.json", format: tc.format, data: []byte(tc.data)}
		_, err := parseSuite(formatNamed(tc.format).suite, f)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %q:\n got %v\nwant %s", tc.format, tc.data, err, tc.want)
		}
	}
}

// TestReadSuiteNameLength: a name is bounded in characters, as Bencher
// and benchgate's BMF export bound it: 1,024 two-byte characters import.
func TestReadSuiteNameLength(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"bmf", FormatGABSmaller} {
		doc := func(name string) string {
			if format == "bmf" {
				return `{"` + name + `":{"latency":{"value":1}}}`
			}
			return `[{"name":"` + name + `","unit":"ns/op","value":1}]`
		}
		ok := strings.Repeat("é", maxNameChars)
		benches, err := parseSuite(formatNamed(format).suite, &file{path: "f.json", format: format, data: []byte(doc(ok))})
		if err != nil || len(benches) != 1 || benches[0].name != ok {
			t.Errorf("%s: a name of %d characters (%d bytes): %v", format, maxNameChars, len(ok), err)
		}
		_, err = parseSuite(formatNamed(format).suite, &file{path: "f.json", format: format, data: []byte(doc(ok + "é"))})
		if err == nil || !strings.HasSuffix(err.Error(), `: the name is 1025 characters long, more than 1024`) {
			t.Errorf("%s: a name of %d characters: %v", format, maxNameChars+1, err)
		}
	}
	m := gate.Metric(strings.Repeat("é", maxMetricChars))
	if err := checkMetric(m); err != nil {
		t.Errorf("a metric of %d characters: %v", maxMetricChars, err)
	}
	if err := checkMetric(m + "é"); err == nil || err.Error() != "is 257 characters long, more than 256" {
		t.Errorf("a metric of %d characters: %v", maxMetricChars+1, err)
	}
}

// TestReadSuiteJMHNames: params whose values hold "," or "=" could make
// two entries one cell name, their samples mixed: refused, naming both;
// one benchmark's params in another order are the same entry.
func TestReadSuiteJMHNames(t *testing.T) {
	t.Parallel()
	entry := func(bench, params string, score float64) string {
		if params != "" {
			params = `"params":` + params + `,`
		}
		return fmt.Sprintf(`{"benchmark":%q,"mode":"thrpt",%s"primaryMetric":{"score":%v,"scoreUnit":"ops/s"}}`, bench, params, score)
	}
	for _, tc := range []struct {
		data, want string
	}{
		{"[" + entry("B.m", `{"a":"1,b=2"}`, 1e6) + ",\n" + entry("B.m", `{"a":"1","b":"2"}`, 5e3) + "]",
			`f.json:2:1: JMH JSON result: benchmark "B.m:a=1,b=2": is the name of both "B.m" with params {"a": "1,b=2"} and "B.m" with params {"a": "1", "b": "2"}: their samples would mix (a param value holds "," or "="?)`},
		{"[" + entry("B.m:a=1", "", 1e6) + ",\n" + entry("B.m", `{"a":"1"}`, 5e3) + "]",
			`f.json:2:1: JMH JSON result: benchmark "B.m:a=1": is the name of both "B.m:a=1" without params and "B.m" with params {"a": "1"}: their samples would mix (a param value holds "," or "="?)`},
		{"[" + entry("B.m", `{"a":null}`, 1) + "]",
			`f.json:1:50: JMH JSON result: benchmark "B.m": field "a" is null, not a param's value`},
	} {
		_, err := parseSuite(parseJMH, &file{path: "f.json", format: "jmh", data: []byte(tc.data)})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.data, err, tc.want)
		}
	}
	data := "[" + entry("B.m", `{"b":"2","a":"1"}`, 1) + "," + entry("B.m", `{"a":"1","b":"2"}`, 2) + "]"
	benches, err := parseSuite(parseJMH, &file{path: "f.json", format: "jmh", data: []byte(data)})
	if err != nil || len(benches) != 1 || benches[0].name != "B.m:a=1,b=2" || !slices.Equal(benches[0].samples["ops/s"], []float64{1, 2}) {
		t.Errorf("params in two orders: %v, %+v", err, benches)
	}

	// One entry a file, each file on its own side: the baseline's cell
	// would be compared with another benchmark's.
	dir := t.TempDir()
	bp, cp := filepath.Join(dir, "base.json"), filepath.Join(dir, "cand.json")
	for p, data := range map[string]string{bp: "[" + entry("B.m", `{"a":"1,b=2"}`, 1e6) + "]", cp: "[" + entry("B.m", `{"a":"1","b":"2"}`, 5e3) + "]"} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err = ReadSuite("jmh", []string{bp}, []string{cp}, Options{}, "")
	want := cp + `: JMH JSON result: benchmark "B.m:a=1,b=2": is the name of "B.m" with params {"a": "1", "b": "2"} here and of "B.m" with params {"a": "1,b=2"} in ` + bp + `: their samples would mix (a param value holds "," or "="?)`
	if err == nil || err.Error() != want {
		t.Errorf("across files:\n got %v\nwant %s", err, want)
	}
}

// TestReadSuiteJMHSecondary: a secondary metric in a unit the primary's
// normalisation knows is normalised alike, and named so that a
// throughput is better higher: a secondary throughput that halves in
// ops/ms is a regression, not an improvement. Other units keep their
// values and names; gc.alloc.rate.norm in B/op is B/op; a secondary
// named as a metric the entry already has is refused.
func TestReadSuiteJMHSecondary(t *testing.T) {
	t.Parallel()
	doc := func(secondary string) string {
		return `[{"benchmark":"B.m","mode":"thrpt","primaryMetric":{"scoreUnit":"ops/ms","rawData":[[100,101,99,100,102,98]]},
			"secondaryMetrics":{` + secondary + `}}]`
	}
	base := doc(`"get":{"scoreUnit":"ops/ms","rawData":[[50,51,49,50,52,48]]},
		"·put":{"scoreUnit":"us/op","score":2},
		"·gc.alloc.rate.norm":{"scoreUnit":"B/op","score":24},
		"·gc.count":{"scoreUnit":"counts","score":3}`)
	benches, err := parseSuite(parseJMH, &file{path: "f.json", format: "jmh", data: []byte(base)})
	if err != nil {
		t.Fatal(err)
	}
	b := benches[0]
	if want := []gate.Metric{"ops/s", "get-ops/s", "put-sec/op", "B/op", "gc.count"}; !slices.Equal(b.metrics, want) {
		t.Errorf("metrics %q, want %q", b.metrics, want)
	}
	for m, want := range map[gate.Metric]float64{"ops/s": 100e3, "get-ops/s": 50e3, "put-sec/op": 2e-6, "B/op": 24, "gc.count": 3} {
		if got := b.samples[m][0]; got != want {
			t.Errorf("%s: first sample %v, want %v", m, got, want)
		}
	}

	dir := t.TempDir()
	bp, cp := filepath.Join(dir, "base.json"), filepath.Join(dir, "cand.json")
	cand := doc(`"get":{"scoreUnit":"ops/ms","rawData":[[25,26,24,25,27,23]]}`)
	for p, data := range map[string]string{bp: base, cp: cand} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := ReadSuite("jmh", []string{bp}, []string{cp}, Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := decide.Results(res)
	if err != nil {
		t.Fatal(err)
	}
	var verdict gate.Verdict
	for _, d := range cmp.Cells[0].Decisions {
		if d.Metric == "get-ops/s" {
			verdict = d.Verdict
		}
	}
	if verdict != gate.Regression {
		t.Errorf("get-ops/s halved: %q, want regression", verdict)
	}

	for _, tc := range []struct{ secondary, want string }{
		{`"ops":{"scoreUnit":"counts","score":1},"·ops":{"scoreUnit":"counts","score":1}`,
			`f.json:2:71: JMH JSON result: benchmark "B.m": field "secondaryMetrics.·ops" is the metric ops, as "secondaryMetrics.ops" is: their samples would mix`},
		{`"ops/s":{"scoreUnit":"counts","score":1}`,
			`f.json:2:32: JMH JSON result: benchmark "B.m": field "secondaryMetrics.ops/s" is the metric ops/s, as "primaryMetric" is: their samples would mix`},
	} {
		_, err := parseSuite(parseJMH, &file{path: "f.json", format: "jmh", data: []byte(doc(tc.secondary))})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.secondary, err, tc.want)
		}
	}
}

// TestReadSuiteGoogleCounters: a user counter named as a metric the
// run's own fields make would add its values to that metric's: refused,
// naming the file, the benchmark and the counter.
func TestReadSuiteGoogleCounters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ counter, field string }{
		{"sec/op", "real_time"}, {"cpu-sec/op", "cpu_time"}, {"B/s", "bytes_per_second"}, {"items/s", "items_per_second"},
	} {
		data := `{"context":{},"benchmarks":[{"name":"BM","run_type":"iteration","real_time":1,"` + tc.counter + `":5}]}`
		_, err := parseSuite(parseGoogleBenchmark, &file{path: "f.json", format: "googlebenchmark", data: []byte(data)})
		col := strings.Index(data, `":5`) + 3
		want := fmt.Sprintf(`f.json:1:%d: Google Benchmark JSON: benchmark "BM": field %q is a user counter named as the metric of %s: its values would mix with %s's; rename the counter`, col, tc.counter, tc.field, tc.field)
		if err == nil || err.Error() != want {
			t.Errorf("counter %s:\n got %v\nwant %s", tc.counter, err, want)
		}
	}
}
