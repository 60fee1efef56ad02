package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-yaml/parser"
	"github.com/rogpeppe/go-internal/txtar"
)

// allocated is the bytes f allocates (runtime.MemStats.TotalAlloc): a bound
// on its memory that does not depend on the speed of the machine.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// loadBytes loads src as s.yml in a fresh directory and returns the error
// text with that directory left out ("" when it loads) and the bytes the
// load allocated.
func loadBytes(t *testing.T, src []byte, opts LoadOptions) (string, uint64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yml")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if opts.Getenv == nil {
		opts.Getenv = mapEnv(nil)
	}
	var err error
	alloc := allocated(func() { _, err = LoadWith(path, "", opts) })
	if err == nil {
		return "", alloc
	}
	var el *ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("err = %v, want an *ErrorList", err)
	}
	return strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), ""), alloc
}

// keys is a block mapping of n keys under top, each at indent.
func keys(top string, n int, indent string) string {
	var b strings.Builder
	b.WriteString(top + ":\n")
	for i := range n {
		fmt.Fprintf(&b, "%sk%d: {x: y}\n", indent, i)
	}
	return b.String()
}

// TestYAMLShapesBoundedBeforeParse: the shapes the YAML parser handles in
// quadratic time and memory are refused from the raw text, with their
// line and column, in a small fraction of what parsing them takes.
func TestYAMLShapesBoundedBeforeParse(t *testing.T) {
	stair := func(n int, item string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(strings.Repeat(" ", i) + item + "\n")
		}
		return b.String()
	}
	tests := []struct {
		name, src, want string
	}{
		// 665 MB before the depth check of the converter ran.
		{"40 KB of [", strings.Repeat("[", 40_000),
			"s.yml:1:201: YAML: nesting deeper than 200 levels (scenario.MaxNesting)"},
		{"40 KB of {", strings.Repeat("{", 40_000),
			"s.yml:1:201: YAML: nesting deeper than 200 levels (scenario.MaxNesting)"},
		{"flow in a mapping", "a: " + strings.Repeat("[a, ", 20_000),
			"s.yml:1:800: YAML: nesting deeper than 200 levels (scenario.MaxNesting)"},
		// 632 MB for 40 KB.
		{"40 KB of - ", strings.Repeat("- ", 20_000) + "x",
			"s.yml:1:401: YAML: nesting deeper than 200 levels (scenario.MaxNesting)"},
		{"entries over lines", stair(300, "- - -"),
			"s.yml:199:203: YAML: nesting deeper than 200 levels (scenario.MaxNesting)"},
		{"mappings by indentation", stair(300, "a:"),
			"s.yml:201:201: YAML: nesting deeper than 200 levels (scenario.MaxNesting)"},
		{"block and flow together", stair(150, "a:") + strings.Repeat(" ", 150) + "b: " + strings.Repeat("[", 60),
			"s.yml:151:203: YAML: nesting deeper than 200 levels (scenario.MaxNesting)"},
		// 1.6 GB for 20000 keys.
		{"20000 keys in a block mapping", "version: 1\n" + keys("variants", 20_000, "  "),
			"s.yml:1003:3: YAML: a block mapping of more than 1000 keys (scenario.MaxMappingKeys; write a long mapping as a flow mapping, {a: 1, b: 2, ...})"},
		{"keys of a mapping in a list", "x:\n  - " + strings.TrimPrefix(keys("a", 1001, "    "), "a:\n    "),
			"s.yml:1002:5: YAML: a block mapping of more than 1000 keys (scenario.MaxMappingKeys; write a long mapping as a flow mapping, {a: 1, b: 2, ...})"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, alloc := loadBytes(t, []byte(tt.src), LoadOptions{})
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if alloc > 16<<20 {
				t.Errorf("the load allocated %d MB, want under 16 MB", alloc>>20)
			}
		})
	}
}

// TestYAMLAcceptedShapes: what the pre-check lets through is what a
// scenario writes, brackets in quotes, comments and block scalars
// included; a long mapping goes through as a flow mapping, and the many
// sibling mappings of a long file cost memory in proportion to it.
func TestYAMLAcceptedShapes(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 150) + strings.Repeat("]", 150)
	tests := []struct{ name, src string }{
		{"brackets in quotes", `a: "` + strings.Repeat("[", 1000) + `"` + "\nb: '" + strings.Repeat("{", 1000) + "'\n"},
		{"brackets in a comment", "a: 1 # " + strings.Repeat("[", 1000) + "\n" + "# " + strings.Repeat("{", 1000) + "\n"},
		{"brackets in a plain scalar", "a: x" + strings.Repeat("[", 1000) + "\n"},
		{"brackets in a block scalar", "a: |\n  " + strings.Repeat("[", 1000) + "\n  " + strings.Repeat("- ", 1000) + "\nb: >-\n " + strings.Repeat("{", 500) + "\n"},
		{"brackets in a multi-line quote", "a: \"x\n  " + strings.Repeat("[", 1000) + "\"\nb: 1\n"},
		{"150 levels of flow", "a: " + deep + "\n"},
		{"many keys in a flow mapping", "a: {" + flowKeys(5000) + "}\n"},
		{"1000 keys", keys("a", 1000, "  ")},
		{"mappings of 1000 keys each", keys("a", 1000, "  ") + keys("b", 1000, "  ") + "c:\n" + keys("  d", 1000, "    ")},
		{"a sequence of 5000 mappings", "a:\n" + strings.Repeat("  - x: 1\n    y: 2\n", 5000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if line, col, msg := checkYAML([]byte(tt.src)); msg != "" {
				t.Errorf("%d:%d: %s", line, col, msg)
			}
			if _, err := parser.ParseBytes([]byte(tt.src), 0); err != nil {
				t.Errorf("the parser refuses the case itself: %v", err)
			}
		})
	}
}

func flowKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%d: %d, ", i, i)
	}
	return b.String()
}

// TestYAMLWorstCaseWithinBounds: a file of the largest size made of the
// widest block mappings allowed, and one of the deepest nesting allowed,
// load in bounded memory.
func TestYAMLWorstCaseWithinBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("x:\n")
	for b.Len() < MaxFileSize-20_000 {
		b.WriteString("-" + strings.TrimPrefix(keys("", MaxMappingKeys, "  "), ":\n "))
	}
	got, alloc := loadBytes(t, []byte(b.String()), LoadOptions{})
	if !strings.Contains(got, "unknown field") {
		t.Errorf("got %.200s", got)
	}
	if alloc > 1<<30 {
		t.Errorf("a 1 MiB file of mappings of %d keys allocated %d MB, want under 1 GB", MaxMappingKeys, alloc>>20)
	}
	t.Logf("%d bytes of mappings of %d keys: %d MB allocated", b.Len(), MaxMappingKeys, alloc>>20)
}

// TestYAMLRepositoryFilesPass: the pre-check accepts every scenario and
// workflow of the repository, and every scenario of the CLI's scripts.
func TestYAMLRepositoryFilesPass(t *testing.T) {
	t.Parallel()
	check := func(name string, src []byte) {
		t.Helper()
		if line, col, msg := checkYAML(src); msg != "" {
			t.Errorf("%s:%d:%d: %s", name, line, col, msg)
		}
	}
	n := 0
	filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return fs.SkipDir
		}
		switch {
		case strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml"):
			b, err := os.ReadFile(p)
			if err == nil {
				check(p, b)
				n++
			}
		case strings.HasSuffix(p, ".txtar"):
			a, err := txtar.ParseFile(p)
			if err != nil {
				return nil
			}
			for _, f := range a.Files {
				if strings.HasSuffix(f.Name, ".yml") || strings.HasSuffix(f.Name, ".yaml") {
					check(p+":"+f.Name, f.Data)
					n++
				}
			}
		}
		return nil
	})
	if n < 10 {
		t.Errorf("checked %d files, want the repository's", n)
	}
}

// TestScenarioFileBounded: the scenario file is opened before it is
// looked at, and refused unless it is a regular file of at most
// MaxFileSize bytes: a FIFO does not block, /dev/zero is not read.
func TestScenarioFileBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yml")
	if err := os.WriteFile(big, []byte(minimal+"# "+strings.Repeat("x", MaxFileSize)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{fifo, fifo + ":1:1: not a regular file (a scenario is read from a file, not a FIFO, a device or a directory)"},
		{zero, zero + ":1:1: not a regular file (a scenario is read from a file, not a FIFO, a device or a directory)"},
		{dir, dir + ":1:1: not a regular file (a scenario is read from a file, not a FIFO, a device or a directory)"},
		{big, big + ":1:1: the file is larger than 1 MiB, the most a scenario may be (scenario.MaxFileSize)"},
	}
	for _, tt := range tests {
		var err error
		alloc := allocated(func() { _, err = Load(tt.path, "", mapEnv(nil)) })
		var el *ErrorList
		if !errors.As(err, &el) || err.Error() != tt.want {
			t.Errorf("Load(%s) = %v, want %s", filepath.Base(tt.path), err, tt.want)
		}
		if alloc > 4<<20 {
			t.Errorf("Load(%s) allocated %d MB", filepath.Base(tt.path), alloc>>20)
		}
	}
}

// TestLoadCaps: every count and duration a scenario sets is capped, the
// grid and what running it records too; each is refused at its field,
// before anything is allocated for it (1e9 workers once took 22 GB).
func TestLoadCaps(t *testing.T) {
	classes := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "  - {name: c%d, request: GET /a}\n", i)
		}
		return b.String()
	}
	levels := func(n int) string {
		var s []string
		for i := range n {
			s = append(s, fmt.Sprint(i+1))
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	tests := []struct {
		name, src, profile, want string
	}{
		{"concurrency", minimal + "load: {concurrency: [1000000000]}\n", "",
			"s.yml:9:22: load.concurrency[0]: 1000000000 is out of range (want 1..10000)"},
		{"repetitions", minimal + "load: {duration: 1ns, repetitions: 1000000000}\n", "",
			"s.yml:9:36: load.repetitions: 1000000000 is out of range (want 1..1000)"},
		{"max_repetitions", minimal + "load: {max_repetitions: 1001}\n", "",
			"s.yml:9:25: load.max_repetitions: 1001 is out of range (want 1..1000)"},
		{"duration", minimal + "load: {duration: 1000000h}\n", "",
			`s.yml:9:18: load.duration: "1000000h" is longer than 24h, the longest a scenario may ask for (scenario.MaxDuration)`},
		{"warmup, timeout, settle in a profile", minimal + "profiles:\n  pr: {warmup: 25h, timeout: 24h1s, settle: 100h}\n", "",
			`s.yml:10:16: profiles.pr.warmup: "25h" is longer than 24h, the longest a scenario may ask for (scenario.MaxDuration)` + "\n" +
				`s.yml:10:30: profiles.pr.timeout: "24h1s" is longer than 24h, the longest a scenario may ask for (scenario.MaxDuration)` + "\n" +
				`s.yml:10:45: profiles.pr.settle: "100h" is longer than 24h, the longest a scenario may ask for (scenario.MaxDuration)`},
		{"startup_timeout", strings.Replace(minimal, `baseline: {url: "http://127.0.0.1:1"}`, `baseline: {command: "x {port}", startup_timeout: 48h}`, 1), "",
			`s.yml:4:52: targets.baseline.startup_timeout: "48h" is longer than 24h, the longest a scenario may ask for (scenario.MaxDuration)`},
		{"grpc connections", strings.Replace(minimal, "request: GET /a", "grpc: {method: a.B/C}", 1) + "grpc: {connections: 1001}\n", "",
			"s.yml:9:21: grpc.connections: 1001 is out of range (want 1..1000)"},
		{"classes", strings.Replace(minimal, "  - name: A\n    request: GET /a\n", classes(1001), 1), "",
			"s.yml:7:3: classes: 1001 classes; at most 1000 (scenario.MaxClasses)"},
		{"grid", strings.Replace(minimal, "  - name: A\n    request: GET /a\n", classes(100), 1) + "load: {concurrency: " + levels(101) + "}\n", "",
			"s.yml:6:1: classes: the grid has 10100 cells (1 pin sets × 1 variants × 100 classes × 101 concurrency levels); at most 10000 (scenario.MaxCells)"},
		{"rungs", minimal + "load: {concurrency: " + levels(11) + ", repetitions: 1000}\n", "",
			"s.yml:9:71: load.repetitions: 11 cells × 1000 rounds × 2 targets is 22000 rungs; at most 20000 (scenario.MaxRungs)"},
		{"rungs in a profile's adaptive rounds", minimal + "load: {concurrency: " + levels(11) + "}\nprofiles:\n  pr: {max_repetitions: 1000}\n", "pr",
			"s.yml:11:25: profiles.pr.max_repetitions: 11 cells × 1000 rounds × 2 targets is 22000 rungs; at most 20000 (scenario.MaxRungs)"},
		{"slice pairs", minimal + "load: {duration: 1h, slice: 1ms}\n", "",
			"s.yml:9:29: load.slice: duration 1h0m0s / slice 1ms is 3600000 slice pairs a round; at most 10000 (scenario.MaxSlicePairs): lengthen the slice"},
		{"settling", minimal + "load: {duration: 10s, slice: 1ms, settle: 10s}\n", "",
			"s.yml:9:43: load.settle: settle 10s × 10000 slice pairs settles a round for more than 24h (scenario.MaxDuration)"},
		{"slices", minimal + "load: {duration: 10s, slice: 1ms, repetitions: 100, concurrency: [1, 2, 3]}\n", "",
			"s.yml:9:48: load.repetitions: 600 rungs × 10000 slice pairs is 6000000 slices to record; at most 500000 (scenario.MaxSlices): fewer rungs or longer slices"},
		{"variants", minimal + "variants: {" + variantsN(101) + "}\n", "",
			"s.yml:9:12: variants: 101 variants; at most 100 (scenario.MaxVariants)"},
		{"gobench repetitions and cpu", "version: 1\nname: g\nkind: gobench\ntargets: {baseline: {ref: a}, candidate: {ref: b}}\nload: {repetitions: 5000}\ngobench: {cpu: [20000]}\n", "",
			"s.yml:5:21: load.repetitions: 5000 is out of range (want 1..1000)\n" +
				"s.yml:6:17: gobench.cpu[0]: 20000 is out of range (want 1..10000)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, alloc := "", uint64(0)
			alloc = allocated(func() { got = loadErr(t, tt.src, tt.profile, nil) })
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if alloc > 64<<20 {
				t.Errorf("the load allocated %d MB", alloc>>20)
			}
		})
	}
}

func variantsN(n int) string {
	var s []string
	for i := range n {
		s = append(s, fmt.Sprintf("v%d: {x: '%d'}", i, i))
	}
	return strings.Join(s, ", ")
}

// TestDefaultSliceGivesWayToThePairCap: a long duration under the default
// slice gets slices just long enough to stay within MaxSlicePairs.
func TestDefaultSliceGivesWayToThePairCap(t *testing.T) {
	t.Parallel()
	s := loadSrc(t, minimal+"load: {duration: 20m, repetitions: 2}\n", "", nil)
	if got := s.Load.SlicePairs(); got != MaxSlicePairs || s.Load.Slice != 120*time.Millisecond {
		t.Errorf("slice %v, %d pairs; want 120ms, %d", s.Load.Slice, got, MaxSlicePairs)
	}
}

// withBody is minimal with class A's request a POST of body (a YAML
// double-quoted string: Go's quoting is valid YAML).
func withBody(body string) string {
	return strings.Replace(minimal, "request: GET /a", "request: {method: POST, path: /a, body: "+strconvQuote(body)+"}", 1)
}

// TestTemplateWorkBounded: a template's steps are counted at load, its
// output and its functions' results bounded as it runs; what passes a
// bound is refused at the template's line and column, in bounded memory
// ({{range 2000000000}}x{{end}} once filled the memory at load).
func TestTemplateWorkBounded(t *testing.T) {
	x1000 := strings.Repeat("x", 1000)
	header := func(n int, tmpl string) string {
		var h []string
		for i := range n {
			h = append(h, fmt.Sprintf("h%d: %s", i, strconvQuote(tmpl)))
		}
		return strings.Replace(minimal, "request: GET /a", "request: {method: GET, path: /a, headers: {"+strings.Join(h, ", ")+"}}", 1)
	}
	tests := []struct {
		name, src, want string
	}{
		{"range of 2e9", withBody("{{range 2000000000}}x{{end}}"),
			"s.yml:8:45: classes[0].request.body: bad template: it may make 4000000003 steps; at most 10000 per request (scenario.MaxTemplateSteps)"},
		{"nested ranges", withBody("{{range 100}}{{range 100}}{{range 100}}{{end}}{{end}}{{end}}"),
			"s.yml:8:45: classes[0].request.body: bad template: it may make 1040403 steps; at most 10000 per request (scenario.MaxTemplateSteps)"},
		{"range over an int of the stream", withBody("{{range (int 1 5)}}x{{end}}"),
			"s.yml:8:45: classes[0].request.body: bad template: {{range (int 1 5)}}: the iterations cannot be counted at load (range over an integer, {{range 3}}, or over the variables, {{range $k, $v := .}})"},
		{"range over a variable", withBody(`{{$n := 5}}{{range $n}}x{{end}}`),
			"s.yml:8:45: classes[0].request.body: bad template: {{range $n}}: the iterations cannot be counted at load (range over an integer, {{range 3}}, or over the variables, {{range $k, $v := .}})"},
		{"a template that calls itself", withBody(`{{define "a"}}{{range 2}}{{template "a"}}{{end}}{{end}}{{template "a"}}`),
			`s.yml:8:45: classes[0].request.body: bad template: {{template "a"}} calls itself: its work cannot be bounded`},
		{"steps of a request's templates together", header(6, "{{range 1000}}x{{end}}"),
			"s.yml:8:34: classes[0].request.path: the request's templates, the defaults' included, may make 12019 steps together; at most 10000 (scenario.MaxTemplateSteps)"},
		{"output of a field", withBody("{{range 2000}}" + x1000 + "{{end}}"),
			"s.yml:8:45: classes[0].request.body: template fails: the rendered value passes 1 MiB (scenario.MaxTemplateOutput)"},
		{"output of a request known at load", header(5, "{{range 500}}"+x1000+x1000+"{{end}}"),
			"s.yml:8:34: classes[0].request.path: the request may render more than 4 MiB, its parts together (scenario.MaxRequestSize)"},
		{"output of a request as it runs", header(5, "{{int 1 1}}{{range 500}}"+x1000+x1000+"{{end}}"),
			"s.yml:8:8208: classes[0].request.headers.h4: template fails: the request passes 4 MiB (scenario.MaxRequestSize)"},
		{"a value doubled at every step", withBody(`{{$a := "xx"}}{{range 40}}{{$a = printf "%s%s" $a $a}}{{end}}{{len $a}}`),
			`s.yml:8:45: classes[0].request.body: template fails: at {{printf "%s%s" $a $a}}: printf: the result could pass 1 MiB (scenario.MaxTemplateOutput)`},
		{"functions' results of a request", withBody(`{{range 600}}{{printf "%1000s%1000s" "" ""}}{{end}}`),
			`s.yml:8:45: classes[0].request.body: template fails: at {{printf "%1000s%1000s" "" ""}}: printf: the functions' results pass 1 MiB in one request (scenario.MaxTemplateOutput)`},
		{"a printf width", withBody(`{{printf "%99999999d" 1}}`),
			`s.yml:8:45: classes[0].request.body: template fails: at {{printf "%99999999d" 1}}: printf: a width or precision above 1000`},
		{"a width from an argument", withBody(`{{printf "%*d" 99999999 1}}`),
			`s.yml:8:45: classes[0].request.body: template fails: at {{printf "%*d" 99999999 1}}: printf: a width or precision from an argument (*)`},
		{"json of a large value", withBody(`{{$a := printf "%1000s" ""}}{{range 1100}}{{json $a}}{{end}}`),
			`s.yml:8:45: classes[0].request.body: template fails: at {{json $a}}: json: the functions' results pass 1 MiB in one request (scenario.MaxTemplateOutput)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, alloc := loadBytes(t, []byte(tt.src), LoadOptions{})
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if alloc > 64<<20 {
				t.Errorf("the load allocated %d MB, want under 64 MB", alloc>>20)
			}
		})
	}
}

// TestTemplateWorkAllowed: what a request template does within the
// bounds still works: ranges over integers and variables, nested within
// the step count, a template calling another, printf of modest widths.
func TestTemplateWorkAllowed(t *testing.T) {
	t.Parallel()
	src := strings.Replace(minimal, "request: GET /a", "request: {method: POST, path: /a, body: "+
		strconvQuote(`{{define "item"}}[{{.}}]{{end}}{{range $k, $v := $}}{{$k}}={{$v}};{{end}}{{range 3}}{{range .}}{{template "item" .}}{{end}}{{end}}{{printf "%5d|%-4s|%.2f" 42 "ab" 3.14159}}`)+"}", 1) +
		"variants: {v: {a: '1', b: '2'}}\n"
	s := loadSrc(t, src, "", nil)
	req := s.Stream("v", "A", 1, 0, 0).Next()
	if got, want := string(req.Body), "a=1;b=2;[0][0][1]   42|ab  |3.14"; got != want {
		t.Errorf("body %q, want %q", got, want)
	}
}

// TestStreamStopsAtTheOutputBound: a template whose long branch the trial
// run at load did not take is stopped as it runs: the field is left empty
// and Err says why.
func TestStreamStopsAtTheOutputBound(t *testing.T) {
	t.Parallel()
	src := withBody(`{{if eq (int 1 4) 1}}{{range 1200}}` + strings.Repeat("y", 1000) + `{{end}}{{else}}short{{end}}`)
	path := filepath.Join(t.TempDir(), "s.yml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, "", mapEnv(nil))
	if err != nil {
		t.Skipf("the trial run took the long branch: %v", err)
	}
	st := s.Stream("", "A", 1, 0, 0)
	for i := range 50 {
		req := st.Next()
		if len(req.Body) > MaxTemplateOutput {
			t.Fatalf("a body of %d bytes", len(req.Body))
		}
		if err := st.Err(); err != nil {
			// The first failure is kept: this request is the one.
			if len(req.Body) != 0 || !strings.Contains(err.Error(), "passes 1 MiB") {
				t.Errorf("request %d: body of %d bytes, err %v", i, len(req.Body), err)
			}
			return
		}
	}
	t.Errorf("50 requests and the long branch never taken")
}

func strconvQuote(s string) string { return strconv.Quote(s) }

// TestDataFilesConfined: a data file is a regular file inside the
// scenario's directory tree, symlinks resolved, unless the options allow
// more; it is read within a size limit, and a FIFO or a device is refused
// without a read.
func TestDataFilesConfined(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "scn")
	for _, d := range []string{dir, filepath.Join(dir, "data")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "outside.txt"), "secret\n")
	write(filepath.Join(dir, "data", "ids.txt"), "1\n2\n")
	// A checkout: actions/checkout writes the job's token in .git/config.
	// (Messages are shown with dir/ cut, as load does.)
	for _, d := range []string{filepath.Join(dir, ".git"), filepath.Join(dir, ".github"), filepath.Join(dir, "my.git")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(d, "config"), "[http]\n\textraheader = AUTHORIZATION: basic secret\n")
	}
	links := map[string]string{"passwd": "/etc/passwd", "zero": "/dev/zero", "up": "../outside.txt", "inside": "data/ids.txt",
		"cfg": ".git/config", "repo": ".git", "env": "/proc/self/environ", "fd": "/dev/fd", "kernel": "/sys/kernel"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "data", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "data", "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(MaxDataFileSize + 1); err != nil { // sparse
		t.Fatal(err)
	}
	big.Close()
	load := func(file string, opts LoadOptions) string {
		t.Helper()
		path := filepath.Join(dir, "s.yml")
		write(path, minimal+"data: {z: {file: "+strconvQuote(file)+"}}\n")
		if opts.Getenv == nil {
			opts.Getenv = mapEnv(map[string]string{"DATA": "/etc/passwd"})
		}
		_, err := LoadWith(path, "", opts)
		if err == nil {
			return ""
		}
		var el *ErrorList
		if !errors.As(err, &el) {
			t.Fatalf("err = %v, want an *ErrorList", err)
		}
		return strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
	}
	outside := func(shown, resolved string) string {
		if resolved != "" {
			resolved = " (it resolves to " + resolved + ")"
		}
		return "s.yml:9:18: data.z.file: " + shown + " is outside the scenario's directory " + dir + resolved +
			": a data file must be in the scenario's directory tree, symlinks resolved (the -allow-data-outside flag lifts this)"
	}
	refused := func(shown, where, link, at, why string) string {
		if link != "" {
			link = " (through the symlink " + link + ", to " + at + ")"
		}
		return "s.yml:9:18: data.z.file: " + shown + " is " + where + link + ": " + why
	}
	proc := func(shown, at, link string) string {
		return refused(shown, "under "+at, link, at, "a data file is never read from /proc or /sys, which hold the environment of every process of the job and the kernel's state, not even with -allow-data-outside")
	}
	git := func(shown, link string) string {
		return refused(shown, "inside a .git directory", link, ".git/config", "a data file is never read from a .git directory: actions/checkout keeps the job's token in .git/config")
	}
	evaluated, _ := filepath.EvalSymlinks(root)
	tests := []struct {
		name, file string
		opts       LoadOptions
		want       string
	}{
		{"inside", "data/ids.txt", LoadOptions{}, ""},
		{"a symlink inside", "inside", LoadOptions{}, ""},
		{"..", "../outside.txt", LoadOptions{}, outside(filepath.Join(root, "outside.txt"), "")},
		{"a symlink to /etc/passwd", "passwd", LoadOptions{}, outside("passwd", "/etc/passwd")},
		{"a symlink out", "up", LoadOptions{}, outside("up", filepath.Join(evaluated, "outside.txt"))},
		{"an absolute path", "/etc/passwd", LoadOptions{}, outside("/etc/passwd", "")},
		{"from ${VAR}", "${DATA}", LoadOptions{}, outside("${DATA}", "")},
		// /proc, /sys and .git are refused whatever the flag says, at any
		// step of the path (issue 27).
		{"/proc/self/environ", "/proc/self/environ", LoadOptions{}, proc("/proc/self/environ", "/proc", "")},
		{"/proc/self/environ allowed outside", "/proc/self/environ", LoadOptions{AllowDataOutside: true}, proc("/proc/self/environ", "/proc", "")},
		{"a symlink to /proc", "env", LoadOptions{AllowDataOutside: true}, proc("env", "/proc", "env")},
		{"/dev/fd to /proc", "/dev/fd/0", LoadOptions{AllowDataOutside: true}, proc("/dev/fd/0", "/proc", "/dev/fd")},
		{"/dev/stdin to /proc", "/dev/stdin", LoadOptions{AllowDataOutside: true}, proc("/dev/stdin", "/proc", "/dev/stdin")},
		{"a symlink through /sys", "kernel/address_bits", LoadOptions{AllowDataOutside: true}, proc("kernel/address_bits", "/sys", "kernel")},
		{"/sys", "/sys/kernel/address_bits", LoadOptions{AllowDataOutside: true}, proc("/sys/kernel/address_bits", "/sys", "")},
		{".git/config", ".git/config", LoadOptions{}, git(".git/config", "")},
		{".git/config by ..", "data/../.git/./config", LoadOptions{}, git(".git/config", "")},
		{"a symlink to .git/config", "cfg", LoadOptions{}, git("cfg", "cfg")},
		{"through a symlink to .git", "repo/config", LoadOptions{}, git("repo/config", "repo")},
		{".git/config allowed outside", dir + "/.git/config", LoadOptions{AllowDataOutside: true}, git(".git/config", "")},
		{".github is no .git", ".github/config", LoadOptions{}, ""},
		{"my.git is no .git", "my.git/config", LoadOptions{}, ""},
		{"allowed outside", "../outside.txt", LoadOptions{AllowDataOutside: true}, ""},
		{"/dev/zero", "zero", LoadOptions{AllowDataOutside: true},
			"s.yml:9:18: data.z.file: zero is not a regular file (a data file is read whole: a FIFO, a device or a directory is refused)"},
		{"a FIFO", "data/fifo", LoadOptions{},
			"s.yml:9:18: data.z.file: data/fifo is not a regular file (a data file is read whole: a FIFO, a device or a directory is refused)"},
		{"a directory", "data", LoadOptions{},
			"s.yml:9:18: data.z.file: data is not a regular file (a data file is read whole: a FIFO, a device or a directory is refused)"},
		{"too large", "data/big.txt", LoadOptions{},
			"s.yml:9:18: data.z.file: data/big.txt is larger than 16 MiB (scenario.MaxDataFileSize)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			alloc := allocated(func() { got = load(tt.file, tt.opts) })
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if strings.Contains(got, "secret") || strings.Contains(got, "root:") {
				t.Errorf("the error shows the file's content")
			}
			if alloc > 16<<20 {
				t.Errorf("the load allocated %d MB", alloc>>20)
			}
		})
	}
}

// TestDataBytesTogether: the data files together are bounded, and so are
// the items of every list.
func TestDataBytesTogether(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var lists []string
	for i := range 5 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("d%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(MaxDataFileSize); err != nil {
			t.Fatal(err)
		}
		f.Close()
		lists = append(lists, fmt.Sprintf("d%d: {file: d%d}", i, i))
	}
	if err := os.WriteFile(filepath.Join(dir, "lines"), []byte(strings.Repeat("x\n", MaxDataItems+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ data, want string }{
		{"{" + strings.Join(lists, ", ") + "}",
			"s.yml:9:83: data.d4.file: with d4 the data files together pass 64 MiB (scenario.MaxDataBytes)"},
		{"{l: {file: lines}}",
			"s.yml:9:12: data.l: the data lists together hold more than 1000000 items (scenario.MaxDataItems)"},
	} {
		path := filepath.Join(dir, "s.yml")
		if err := os.WriteFile(path, []byte(minimal+"data: "+tt.data+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, "", mapEnv(nil))
		got := ""
		if err != nil {
			got = strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
		}
		if got != tt.want {
			t.Errorf("got\n%s\nwant\n%s", got, tt.want)
		}
	}
}

// TestAliasesExpandBounded: a few lines of nested aliases stand for
// billions of values; the tree they expand to is bounded as it is built.
func TestAliasesExpandBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(minimal + "x0: &a0 [" + strings.Repeat("aaaaaaaaaaaaaaaa, ", 9) + "a]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "x%d: &a%d [%s*a%d]\n", i, i, strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 9), i-1)
	}
	got, alloc := loadBytes(t, []byte(b.String()), LoadOptions{})
	if want := "s.yml:14:15: x5[1]: the file's values, aliases expanded, pass 4 MiB (scenario.MaxExpanded)"; !strings.Contains(got, want) || strings.Contains(got, "mapping key") {
		t.Errorf("got\n%s\nwant among the errors\n%s", got, want)
	}
	if alloc > 64<<20 {
		t.Errorf("the load allocated %d MB, want under 64 MB", alloc>>20)
	}
}
