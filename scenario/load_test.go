package scenario

import (
	"github.com/benchgate/benchgate/agreement"
	"github.com/benchgate/benchgate/gate"

	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadFull(t *testing.T) {
	t.Parallel()
	s, err := Load("testdata/full.yml", "", mapEnv(map[string]string{"TAG": "pr-7"}))
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("testdata")
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", what, got, want)
		}
	}
	check("File", s.File, "testdata/full.yml")
	check("Dir", s.Dir, abs)
	check("Name", s.Name, "demo-api")
	check("Seed", s.Seed, uint64(424242))
	check("Hash length", len(s.Hash), 64)
	check("Baseline", s.Baseline, Target{
		Name: "baseline", Command: []string{"./bin/demo", "-addr", "127.0.0.1:{port}"},
		Shown: "./bin/demo -addr 127.0.0.1:{port}", Dir: abs, Health: "/healthz", StartupTimeout: 30 * time.Second,
	})
	check("Candidate", s.Candidate, Target{
		Name: "candidate", Image: "demo:pr-7", Shown: "demo:pr-7", Port: 8080, Health: "/healthz", StartupTimeout: 45 * time.Second,
	})
	check("Pins", s.PinSets, []Pins{{Name: "cpus=1-3 memory=2GiB", CPUs: "1-3", Memory: 2 << 30, MemoryText: "2GiB", GeneratorCPUs: "0"}})
	check("Load", s.Load, LoadSettings{
		Concurrency: []int{1, 4, 8}, Duration: 10 * time.Second, Warmup: 2 * time.Second,
		Repetitions: 5, Timeout: 30 * time.Second,
		Interleave: "slice", Slice: 50 * time.Millisecond, Settle: 10 * time.Millisecond, MaxRepetitions: 5, HTTPClient: "fast",
		Defaults: Defaults{Headers: map[string]string{"Accept": "application/json"}, Query: map[string]string{"MAXREC": "10000"}},
	})
	check("Data", s.Data, map[string][]string{
		"term": {"alpha", "beta", "gamma"},
		"word": {"apple", "banana split", "cherry&pie"},
	})
	var names []string
	for _, c := range s.Classes {
		names = append(names, c.Name)
	}
	check("Classes", names, []string{"Q01", "Q02", "Q03", "Q04", "Q05", "mix"})
	check("Q03", *s.AllClasses["Q03"], Class{
		Name: "Q03",
		Request: &RequestTemplate{
			Method: "POST", Path: "/items/{{int 1 100}}",
			Query:  map[string]string{"format": "{{.format}}", "MAXREC": "5"},
			Header: map[string]string{"X-Word": `{{pick "word"}}`, "accept": "text/csv"},
			Body:   `{"w": "{{pick "word"}}", "f": "{{var "format"}}", "cost": "$5"}`,
		},
		ExpectStatus: []int{200, 201},
		Agreement:    Agreement{Mode: "required", Requests: 5, Ignore: []string{"$.generated_at", "$.id"}, Unordered: true},
	})
	check("Agreement", s.Agreement, Agreement{Mode: "required", Requests: 5, Ignore: []string{"$.generated_at"}})
	check("Q05 agreement", s.AllClasses["Q05"].Agreement, Agreement{Mode: "warn", Requests: 5, Ignore: []string{"$.generated_at"}})
	check("Preflight", s.Preflight, []Preflight{
		{Name: "conformance", Run: []string{"./bin/lint", "{url}"}, Shown: "./bin/lint {url}", Dir: s.Dir,
			Targets: []string{"baseline", "candidate"}, Timeout: time.Minute},
		{Name: "maxrec-default", Run: []string{"./bin/probe", "--maxrec", "{url}"}, Shown: "./bin/probe --maxrec {url}", Dir: s.Dir,
			Targets: []string{"candidate"}, Timeout: 10 * time.Second, Classes: []string{"Q04"}},
	})
	check("mix", s.AllClasses["mix"].Mix, []MixEntry{{"Q01", 3}, {"Q02", 1}})
	check("Variants", s.Variants, []Variant{
		{Name: "csv", Vars: map[string]string{"format": "csv"}},
		{Name: "votable", Vars: map[string]string{"format": "votable"}},
	})
	inc := 0.0005
	check("Gate", s.Gate, gate.Section{
		Confidence: 0.95, TieWithin: 0.10, MaxErrorRate: 0.001, MaxErrorIncrease: &inc, Rule: "paired", Unresolved: "warn",
		FailOn: []gate.Rule{
			{Metric: "rps", Classes: []string{"*"}, Concurrency: []string{"*"}},
			{Metric: "p95", Classes: []string{"Q0?"}, Concurrency: []string{"8", "1*"}, Variants: []string{"csv"}},
		},
	})
	check("StatusOK(Q03, 201)", s.StatusOK("Q03", 201), true)
	check("StatusOK(Q03, 204)", s.StatusOK("Q03", 204), false)
	check("StatusOK(Q01, 204)", s.StatusOK("Q01", 204), true)

	src, _ := os.ReadFile("testdata/full.yml")
	check("Source", s.Source, string(src))
}

func TestLoadProfile(t *testing.T) {
	t.Parallel()
	env := mapEnv(map[string]string{"TAG": "x", "STARTUP": "5s"})
	s, err := Load("testdata/full.yml", "pr", env)
	if err != nil {
		t.Fatal(err)
	}
	if s.Profile != "pr" {
		t.Errorf("Profile = %q", s.Profile)
	}
	if got := s.Candidate.StartupTimeout; got != 5*time.Second {
		t.Errorf("${STARTUP:-45s} with STARTUP=5s gave %v", got)
	}
	want := LoadSettings{
		Concurrency: []int{1, 8}, Duration: 5 * time.Second, Warmup: 2 * time.Second,
		Repetitions: 3, Timeout: 30 * time.Second,
		Interleave: "slice", Slice: 50 * time.Millisecond, Settle: 10 * time.Millisecond, MaxRepetitions: 3, HTTPClient: "fast",
		Defaults: Defaults{Headers: map[string]string{"Accept": "application/json"}, Query: map[string]string{"MAXREC": "10000"}},
	}
	if !reflect.DeepEqual(s.Load, want) {
		t.Errorf("Load = %+v, want %+v", s.Load, want)
	}
	var names []string
	for _, c := range s.Classes {
		names = append(names, c.Name)
	}
	if !reflect.DeepEqual(names, []string{"Q01", "mix"}) {
		t.Errorf("Classes = %v", names)
	}
	// The mix still needs Q02, which the profile left out of the grid.
	if s.AllClasses["Q02"] == nil {
		t.Error("AllClasses lost Q02")
	}
	if r := s.Stream("csv", "Q02", 1, 0, 0).Next(); r.Class != "Q02" {
		t.Errorf("stream of Q02: %+v", r)
	}

	s, err = Load("testdata/full.yml", "nightly", env)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Variants) != 1 || s.Variants[0].Name != "votable" {
		t.Errorf("nightly Variants = %+v", s.Variants)
	}
	if !reflect.DeepEqual(s.Load.Concurrency, []int{1, 4, 8, 16, 32}) || s.Load.Duration != 30*time.Second {
		t.Errorf("nightly Load = %+v", s.Load)
	}
}

const minimal = `version: 1
name: t
targets:
  baseline: {url: "http://127.0.0.1:1"}
  candidate: {url: "http://127.0.0.1:2"}
classes:
  - name: A
    request: GET /a
`

// TestLoadVerdictFields: the fields of slice interleaving, adaptive
// rounds and the decision rule, in the file and overridden by a profile.
func TestLoadVerdictFields(t *testing.T) {
	t.Parallel()
	src := minimal + `load: {interleave: slice, slice: 250ms, settle: 20ms, duration: 2s, repetitions: 3, max_repetitions: 8}
gate: {rule: paired, unresolved: fail}
profiles:
  pr: {interleave: round, repetitions: 4}
`
	path := filepath.Join(t.TempDir(), "s.yml")
	os.WriteFile(path, []byte(src), 0o644)
	s, err := Load(path, "", mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	ls := s.Load
	if ls.Interleave != InterleaveSlice || ls.Slice != 250*time.Millisecond || ls.Settle != 20*time.Millisecond ||
		ls.MaxRepetitions != 8 || ls.SlicePairs() != 8 || s.Gate.Rule != gate.RulePaired || s.Gate.Unresolved != gate.UnresolvedFail {
		t.Errorf("load %+v, gate rule %q unresolved %q, %d slice pairs", ls, s.Gate.Rule, s.Gate.Unresolved, ls.SlicePairs())
	}
	s, err = Load(path, "pr", mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if ls := s.Load; ls.Interleave != InterleaveRound || ls.Repetitions != 4 || ls.MaxRepetitions != 8 || ls.Slice != 250*time.Millisecond {
		t.Errorf("profile pr: %+v", ls)
	}
}

// TestSliceDefaultGivesWay: a default slice longer than the duration
// shrinks to it (one slice pair a round); a slice the file chose does not.
func TestSliceDefaultGivesWay(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.yml")
	os.WriteFile(path, []byte(minimal+"load: {duration: 30ms}\nprofiles:\n  pr: {duration: 20ms}\n"), 0o644)
	for _, tt := range []struct {
		profile string
		want    time.Duration
	}{{"", 30 * time.Millisecond}, {"pr", 20 * time.Millisecond}} {
		s, err := Load(path, tt.profile, mapEnv(nil))
		if err != nil {
			t.Fatal(err)
		}
		if ls := s.Load; ls.Interleave != InterleaveSlice || ls.Slice != tt.want || ls.SlicePairs() != 1 {
			t.Errorf("profile %q: interleave %q slice %v, %d pairs; want slice, %v, 1", tt.profile, ls.Interleave, ls.Slice, ls.SlicePairs(), tt.want)
		}
	}
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.yml")
	os.WriteFile(path, []byte(minimal), 0o644)
	s, err := Load(path, "", mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if s.Seed != 1 || s.PinSets != nil {
		t.Errorf("Seed %d, Pins %v", s.Seed, s.PinSets)
	}
	wantLoad := LoadSettings{
		Concurrency: []int{1}, Duration: 10 * time.Second, Warmup: time.Second, Repetitions: 5,
		Timeout: 30 * time.Second, Defaults: Defaults{Headers: map[string]string{}, Query: map[string]string{}},
		Interleave: "slice", Slice: 50 * time.Millisecond, Settle: 10 * time.Millisecond, MaxRepetitions: 5, HTTPClient: "fast",
	}
	if !reflect.DeepEqual(s.Load, wantLoad) {
		t.Errorf("Load = %+v", s.Load)
	}
	wantGate := gate.Section{Confidence: 0.95, TieWithin: 0.10, MaxErrorRate: 0.001, FailOn: []gate.Rule{{Metric: "rps"}}, Rule: "paired", Unresolved: "warn"}
	if !reflect.DeepEqual(s.Gate, wantGate) {
		t.Errorf("Gate = %+v", s.Gate)
	}
	if want := (Agreement{Mode: "required", Requests: 5}); !reflect.DeepEqual(s.Agreement, want) || !reflect.DeepEqual(s.AllClasses["A"].Agreement, want) {
		t.Errorf("Agreement = %+v, class A %+v", s.Agreement, s.AllClasses["A"].Agreement)
	}
	if s.Preflight != nil {
		t.Errorf("Preflight = %+v", s.Preflight)
	}
	if !reflect.DeepEqual(s.Variants, []Variant{{Name: "", Vars: map[string]string{}}}) {
		t.Errorf("Variants = %+v", s.Variants)
	}
	b := s.Baseline
	if b.URL != "http://127.0.0.1:1" || b.Health != "/" || b.StartupTimeout != 30*time.Second || b.Dir != "" {
		t.Errorf("Baseline = %+v", b)
	}
	if r := s.Stream("", "A", 1, 0, 0).Next(); r.Target != "/a" || len(r.Header) != 0 || r.Body != nil {
		t.Errorf("request = %+v", r)
	}
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	_, err := Load("testdata/nope.yml", "", mapEnv(nil))
	var el *ErrorList
	if err == nil || errors.As(err, &el) || !strings.Contains(err.Error(), "testdata/nope.yml") {
		t.Errorf("err = %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	// Each case edits the minimal file: old → new text.
	edit := func(pairs ...string) string {
		s := minimal
		for i := 0; i < len(pairs); i += 2 {
			if !strings.Contains(s, pairs[i]) {
				panic("no " + pairs[i])
			}
			s = strings.Replace(s, pairs[i], pairs[i+1], 1)
		}
		return s
	}
	tests := []struct {
		name, src, profile, want string
	}{
		{"unknown top-level field", edit("name: t\n", "name: t\nclasess: []\n"), "",
			`s.yml:3:1: clasess: unknown field "clasess" (did you mean classes?)`},
		{"unknown nested field", edit("request: GET /a", "reqest: GET /a"), "",
			"s.yml:7:5: classes[0]: want request, grpc or mix\n" +
				`s.yml:8:5: classes[0].reqest: unknown field "reqest" (did you mean request?)`},
		{"wrong type", edit("name: t\n", "name: t\nload: {concurrency: 4}\n"), "",
			"s.yml:3:21: load.concurrency: want a list of positive integers, got integer 4"},
		{"wrong item type", edit("name: t\n", "name: t\nload: {concurrency: [1, x]}\n"), "",
			`s.yml:3:25: load.concurrency[1]: want an integer, got string "x"`},
		{"bad duration", edit("name: t\n", "name: t\nload:\n  duration: 10x\n"), "",
			`s.yml:4:13: load.duration: "10x" is not a duration (want e.g. 10s, 1m30s)`},
		{"version 2", edit("version: 1", "version: 2"), "",
			"s.yml:1:10: version: 2 is not supported (this benchgate reads version 1)"},
		{"missing candidate", edit("  candidate: {url: \"http://127.0.0.1:2\"}\n", ""), "",
			"s.yml:3:1: targets.candidate: missing (both baseline and candidate are required)"},
		{"command and url", edit(`baseline: {url: "http://127.0.0.1:1"}`, `baseline: {url: "http://127.0.0.1:1", command: "x {port}"}`), "",
			"s.yml:4:3: targets.baseline: command and url are exclusive (want one of command, url, image, compose; an image target may also have a command)"},
		{"command without port", edit(`baseline: {url: "http://127.0.0.1:1"}`, `baseline: {command: ["./srv", "-addr", ":8080"]}`), "",
			"s.yml:4:23: targets.baseline.command: no argument or env value holds {port} (the service must listen on the port benchgate picks, e.g. -addr 127.0.0.1:{port})"},
		{"mix of unknown class", edit("    request: GET /a\n", "    request: GET /a\n  - name: M\n    mix: {A: 1, B: 2}\n"), "",
			`s.yml:10:17: classes[1].mix.B: no class named "B"`},
		{"duplicate class", edit("    request: GET /a\n", "    request: GET /a\n  - name: A\n    request: GET /b\n"), "",
			`s.yml:9:11: classes[1].name: "A" is already the name of the class at line 7`},
		{"bad template", edit("request: GET /a", `request: GET /a/{{pick "x"`), "",
			`s.yml:8:14: classes[0].request: bad template: unclosed action`},
		{"pick of unknown data", edit("request: GET /a", "request: GET /a/{{pick \"trem\"}}\ndata: {term: [a]}"), "",
			`s.yml:8:14: classes[0].request: bad template: pick: no data list "trem" (did you mean term?)`},
		{"unknown profile", minimal + "profiles:\n  pr: {repetitions: 2}\n  nightly: {}\n", "night",
			`s.yml:9:1: profiles: no profile "night" (have nightly, pr)`},
		{"unknown metric", minimal + "gate:\n  fail_on:\n    - {metric: p95s}\n", "",
			`s.yml:11:16: gate.fail_on[0].metric: unknown metric "p95s" (did you mean p95?)`},
		{"unset variable", edit(`"http://127.0.0.1:2"`, `"http://${HOST}:2"`), "",
			`s.yml:5:20: targets.candidate.url: environment variable HOST is not set (write ${HOST:-default} for a default)`},
		{"var of unknown variable", edit("request: GET /a", "request: GET /a/{{var \"fmt\"}}\nvariants: {x: {format: csv}}"), "",
			`s.yml:8:14: classes[0].request: bad template: var: no variable "fmt" (have format)`},
		{"template fails on execution", edit("request: GET /a", "request: 'GET /a/{{if true}}{{pick (printf \"t%d\" 2)}}{{end}}'\ndata: {t1: [a]}"), "",
			`s.yml:8:14: classes[0].request: template fails: at {{pick (printf "t%d" 2)}}: pick: no data list "t2"`},
		{"variant missing a variable", minimal + "variants:\n  a: {x: '1', y: '2'}\n  b: {x: '3'}\n", "",
			`s.yml:11:3: variants.b: missing variable "y" (variant a defines it; every variant must define the same variables)`},
		{"resource metric of a url target", minimal + "gate:\n  fail_on:\n    - {metric: cpu_per_req}\n", "",
			`s.yml:11:16: gate.fail_on[0].metric: cpu_per_req cannot be measured: the baseline is a url target, whose resources benchgate does not see (use a command or image target)`},
		{"class glob matches nothing", minimal + "gate:\n  fail_on: [{metric: rps, classes: [\"Q*\"]}]\n", "",
			`s.yml:10:37: gate.fail_on[0].classes[0]: "Q*" matches no class`},
		{"pins", minimal + "pins: {cpus: \"3-1\", memory: 2GB0, generator_cpus: \"0,0\"}\n", "",
			"s.yml:9:14: pins.cpus: \"3-1\": range 3-1 runs backwards\n" +
				"s.yml:9:29: pins.memory: \"2GB0\": unknown unit \"GB0\" (want B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)\n" +
				"s.yml:9:51: pins.generator_cpus: \"0,0\": 0 is not after the previous CPUs (want ascending, e.g. \"0-3,5\")"},
		{"expect_status and profile fields", edit("    request: GET /a\n", "    request: GET /a\n    expect_status: [200, 999]\nprofiles:\n  pr: {classes: [B], warmup: -1s}\n"), "",
			"s.yml:9:26: classes[0].expect_status[1]: 999 is out of range (want 100..599)\n" +
				"s.yml:11:18: profiles.pr.classes[0]: no class named \"B\"\n" +
				"s.yml:11:30: profiles.pr.warmup: must not be negative"},
		{"image without port", edit(`candidate: {url: "http://127.0.0.1:2"}`, "candidate: {image: x, dir: .}"), "",
			"s.yml:5:3: targets.candidate.port: missing (an image target needs its container port)\n" +
				"s.yml:5:25: targets.candidate.dir: not for an image target (build the image before running benchgate)"},
		{"yaml syntax", edit("name: t\n", "name: [t\n"), "",
			`s.yml:3:1: YAML syntax: ',' or ']' must be specified`},
		{"url with credentials", edit(`"http://127.0.0.1:2"`, `"http://bench:hunter2@127.0.0.1:2"`), "",
			`s.yml:5:20: targets.candidate.url: credentials in the URL are not allowed: they would show in reports (put them in load.defaults.headers, e.g. Authorization: "Bearer ${TOKEN}")`},
		{"url with query and path", edit(`"http://127.0.0.1:2"`, `"http://127.0.0.1:2/api?v=1"`), "",
			`s.yml:5:20: targets.candidate.url: "http://127.0.0.1:2/api?v=1" has a query or fragment (put query parameters in load.defaults.query or in each class's request)` + "\n" +
				`s.yml:5:20: targets.candidate.url: "http://127.0.0.1:2/api?v=1" has a path: the load generator appends each request path to scheme://host:port (put the path prefix in each class's request path)`},
		{"url with fragment", edit(`"http://127.0.0.1:2"`, `"http://127.0.0.1:2/#"`), "",
			`s.yml:5:20: targets.candidate.url: "http://127.0.0.1:2/#" has a query or fragment (put query parameters in load.defaults.query or in each class's request)`},
		{"url with credentials, not http", edit(`"http://127.0.0.1:2"`, `"ftp://bench:hunter2@127.0.0.1:2"`), "",
			`s.yml:5:20: targets.candidate.url: credentials in the URL are not allowed: they would show in reports (put them in load.defaults.headers, e.g. Authorization: "Bearer ${TOKEN}")`},
		{"unparsable url with credentials", edit(`"http://127.0.0.1:2"`, `"http://bench:hunter%zz@127.0.0.1:2"`), "",
			`s.yml:5:20: targets.candidate.url: not an http or https URL (want e.g. http://127.0.0.1:9000)`},
		{"agreement fields", minimal + "agreement: {mode: strict, requests: 0, ignore: [\"$.a[\"], unordered: yes, format: html}\n", "",
			"s.yml:9:19: agreement.mode: unknown mode \"strict\" (want one of required, warn, off)\n" +
				"s.yml:9:37: agreement.requests: 0 is out of range (want 1..1000)\n" +
				"s.yml:9:49: agreement.ignore[0]: \"$.a[\" is not a JSON path: " + pathErr("$.a[") + " (want e.g. $.generated_at, $.items[*].id, $..etag)\n" +
				"s.yml:9:69: agreement.unordered: want true or false, got string \"yes\"\n" +
				"s.yml:9:82: agreement.format: unknown format \"html\" (want one of json, text, csv, xml; leave it out to take it from the Content-Type)"},
		{"class agreement mode", edit("    request: GET /a\n", "    request: GET /a\n    agreement: warm\n"), "",
			"s.yml:9:16: classes[0].agreement: unknown mode \"warm\" (did you mean warn?)"},
		{"preflight", minimal + "preflight:\n  - {name: lint, run: []}\n  - {name: lint, run: x, targets: [cand], classes: [B], timeout: 0s}\n  - {run: y, dir: \"\"}\n", "",
			"s.yml:10:23: preflight[0].run: must not be empty\n" +
				"s.yml:11:12: preflight[1].name: \"lint\" is already the name of the pre-flight command at line 10\n" +
				"s.yml:11:36: preflight[1].targets[0]: \"cand\" is not a target (want baseline or candidate)\n" +
				"s.yml:11:53: preflight[1].classes[0]: no class named \"B\"\n" +
				"s.yml:11:66: preflight[1].timeout: must be positive\n" +
				"s.yml:12:6: preflight[2].name: missing (every pre-flight command needs a name: the report's column)\n" +
				"s.yml:12:19: preflight[2].dir: must not be empty"},
		{"interleave and rule", minimal + "load: {interleave: slices, slice: 0s, settle: -1ms}\ngate: {rule: pairs, unresolved: ignore}\n", "",
			`s.yml:9:20: load.interleave: "slices": want round or slice` + "\n" +
				"s.yml:9:35: load.slice: must be positive\n" +
				"s.yml:9:47: load.settle: must not be negative\n" +
				`s.yml:10:14: gate.rule: "pairs": want overlap, paired` + "\n" +
				`s.yml:10:33: gate.unresolved: "ignore": want warn, fail, pass`},
		{"max_repetitions below repetitions", minimal + "load: {repetitions: 5, max_repetitions: 4}\n", "",
			"s.yml:9:41: load.max_repetitions: 4 is below repetitions (5): the most rounds a cell may take cannot be fewer than every cell takes"},
		{"profile's repetitions above the file's max_repetitions", minimal + "load: {max_repetitions: 4}\nprofiles:\n  pr: {repetitions: 6}\n", "pr",
			"s.yml:9:25: load.max_repetitions: 4 is below repetitions (6): the most rounds a cell may take cannot be fewer than every cell takes"},
		{"profile's max_repetitions", minimal + "profiles:\n  pr: {max_repetitions: 2}\n", "pr",
			"s.yml:10:25: profiles.pr.max_repetitions: 2 is below repetitions (5): the most rounds a cell may take cannot be fewer than every cell takes"},
		{"slice longer than duration", minimal + "load: {slice: 200ms, duration: 100ms}\n", "",
			"s.yml:9:1: load.slice: 200ms is longer than duration 100ms: a round needs at least one slice of each target"},
		{"profile's slice longer than duration", minimal + "load: {duration: 100ms}\nprofiles:\n  pr: {slice: 150ms}\n", "pr",
			"s.yml:9:1: load.slice: 150ms is longer than duration 100ms: a round needs at least one slice of each target"},
		{"url not http", edit(`"http://127.0.0.1:2"`, `"127.0.0.1:2"`), "",
			`s.yml:5:20: targets.candidate.url: "127.0.0.1:2" is not an http or https URL (want e.g. http://127.0.0.1:9000)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, tt.src, tt.profile, nil); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func pathErr(p string) string {
	err := agreement.ValidatePath(p)
	if err == nil {
		return "<valid>"
	}
	return err.Error()
}

// loadErr loads src as s.yml in a fresh directory and returns the error
// text with that directory left out.
func loadErr(t *testing.T, src, profile string, env map[string]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, profile, mapEnv(env))
	var el *ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("err = %v, want an *ErrorList", err)
	}
	return strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), "")
}

// TestLoadErrorsHideSecrets: an error quotes a value from ${VAR} as
// written, since the expanded value may be a secret and errors reach CI
// logs.
func TestLoadErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	env := map[string]string{"KEY": "s3cret", "PW": "s3cret"}
	tests := []struct{ name, src, want string }{
		{"url path from a variable", strings.Replace(minimal, `"http://127.0.0.1:2"`, `"http://127.0.0.1:2/${KEY}"`, 1),
			`s.yml:5:20: targets.candidate.url: "http://127.0.0.1:2/${KEY}" has a path: the load generator appends each request path to scheme://host:port (put the path prefix in each class's request path)`},
		{"url password from a variable", strings.Replace(minimal, `"http://127.0.0.1:2"`, `"http://bench:${PW}@127.0.0.1:2"`, 1),
			`s.yml:5:20: targets.candidate.url: credentials in the URL are not allowed: they would show in reports (put them in load.defaults.headers, e.g. Authorization: "Bearer ${TOKEN}")`},
		{"integer", minimal + "load: {repetitions: \"${KEY}\"}\n",
			`s.yml:9:21: load.repetitions: want an integer, got string "${KEY}"`},
		{"generated path with a secret query", strings.Replace(minimal, "request: GET /a", `request: 'GET {{var "p"}}'`, 1) +
			"variants: {v: {p: x}}\nload: {defaults: {query: {key: \"${KEY}\"}}}\n",
			`s.yml:8:14: classes[0].request: "x" does not start with / (variant v)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := loadErr(t, tt.src, "", env)
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if strings.Contains(got, "s3cret") {
				t.Errorf("the error echoes the secret: %s", got)
			}
		})
	}
}

// TestTargetShown: Shown is the target as written, so reports never carry
// what ${VAR} expanded to, except in an image (a tag is no secret).
func TestTargetShown(t *testing.T) {
	t.Parallel()
	env := map[string]string{"KEY": "s3cret", "HOST": "10.0.0.9", "TAG": "pr-7"}
	tests := []struct {
		name, baseline string
		want           Target
	}{
		{"command list", `{command: [./srv, "--key=${KEY}", "-addr=:{port}"]}`, Target{
			Command: []string{"./srv", "--key=s3cret", "-addr=:{port}"},
			Shown:   "./srv --key=${KEY} -addr=:{port}"}},
		{"command line", `{command: "./srv   --key=${KEY} -addr=:{port}"}`, Target{
			Command: []string{"./srv", "--key=s3cret", "-addr=:{port}"},
			Shown:   "./srv --key=${KEY} -addr=:{port}"}},
		{"command quoting", `{command: [./srv, "a b", "it's", 'say "hi"', "", "-addr=:{port}"]}`, Target{
			Command: []string{"./srv", "a b", "it's", `say "hi"`, "", "-addr=:{port}"},
			Shown:   `./srv 'a b' 'it'\''s' 'say "hi"' '' -addr=:{port}`}},
		{"url", `{url: "http://${HOST}:9000/"}`, Target{
			URL: "http://10.0.0.9:9000/", Shown: "http://${HOST}:9000/"}},
		// An image tag is no secret: shown as expanded (secrets.go).
		{"image", `{image: "demo:${TAG}", port: 80}`, Target{
			Image: "demo:pr-7", Port: 80, Shown: "demo:pr-7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "s.yml")
			src := strings.Replace(minimal, `{url: "http://127.0.0.1:1"}`, tt.baseline, 1)
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Load(path, "", mapEnv(env))
			if err != nil {
				t.Fatal(err)
			}
			got := s.Baseline
			if !reflect.DeepEqual(got.Command, tt.want.Command) || got.URL != tt.want.URL ||
				got.Image != tt.want.Image || got.Port != tt.want.Port || got.Shown != tt.want.Shown {
				t.Errorf("got Command %q URL %q Image %q Port %d Shown %q\nwant Command %q URL %q Image %q Port %d Shown %q",
					got.Command, got.URL, got.Image, got.Port, got.Shown,
					tt.want.Command, tt.want.URL, tt.want.Image, tt.want.Port, tt.want.Shown)
			}
		})
	}
}

func TestLoadHTTPClient(t *testing.T) {
	t.Parallel()
	if s := loadSrc(t, minimal, "", nil); s.Load.HTTPClient != HTTPClientFast {
		t.Errorf("default client %q, want fast", s.Load.HTTPClient)
	}
	if s := loadSrc(t, minimal+"load: {http_client: net/http}\n", "", nil); s.Load.HTTPClient != HTTPClientNetHTTP {
		t.Errorf("client %q, want net/http", s.Load.HTTPClient)
	}
	got := loadErr(t, minimal+"load:\n  http_client: curl\n", "", nil)
	if want := `s.yml:10:16: load.http_client: "curl": want fast, net/http or http2`; !strings.Contains(got, want) {
		t.Errorf("error %q, want %q", got, want)
	}
}

func TestLoadRate(t *testing.T) {
	t.Parallel()
	s := loadSrc(t, minimal+"load: {rate: [100, 400], concurrency: [16]}\nprofiles: {pr: {rate: [50]}}\n", "", nil)
	if !reflect.DeepEqual(s.Load.Rate, []int{100, 400}) || !reflect.DeepEqual(s.Load.Rates(), []int{100, 400}) {
		t.Errorf("rate %v, rates %v", s.Load.Rate, s.Load.Rates())
	}
	if p := loadSrc(t, minimal+"load: {rate: [100, 400]}\nprofiles: {pr: {rate: [50]}}\n", "pr", nil); !reflect.DeepEqual(p.Load.Rate, []int{50}) {
		t.Errorf("profile pr: rate %v, want [50]", p.Load.Rate)
	}
	if s := loadSrc(t, minimal, "", nil); s.Load.Rate != nil || !reflect.DeepEqual(s.Load.Rates(), []int{0}) {
		t.Errorf("no rate: %v, rates %v; want the closed loop's 0", s.Load.Rate, s.Load.Rates())
	}
	for src, want := range map[string]string{
		"load: {rate: [0]}\n":       "load.rate[0]: 0 is out of range",
		"load: {rate: [2000000]}\n": "load.rate[0]: 2000000 is out of range",
		"load: {rate: [5, 5]}\n":    "load.rate[1]: 5 is listed twice",
		"load: {rate: []}\n":        "load.rate: must not be empty",
	} {
		if got := loadErr(t, minimal+src, "", nil); !strings.Contains(got, want) {
			t.Errorf("%q: error %q, want %q", src, got, want)
		}
	}
}

// TestLoadRestart: load.restart is never, round or {every: N}; a url
// target, which benchgate does not start, is refused at the field.
func TestLoadRestart(t *testing.T) {
	t.Parallel()
	commands := strings.NewReplacer(`{url: "http://127.0.0.1:1"}`, `{command: [./srv, "{port}"]}`,
		`{url: "http://127.0.0.1:2"}`, `{command: [./srv, "{port}"]}`).Replace(minimal)
	for src, want := range map[string]int{
		"":                               0,
		"load: {restart: never}\n":       0,
		"load: {restart: round}\n":       1,
		"load:\n  restart: {every: 3}\n": 3,
	} {
		if s := loadSrc(t, commands+src, "", nil); s.Load.RestartEvery != want {
			t.Errorf("%q: RestartEvery %d, want %d", src, s.Load.RestartEvery, want)
		}
	}
	for src, want := range map[string]string{
		minimal + "load:\n  restart: round\n":       `s.yml:10:12: load.restart: the baseline is a url target, which benchgate does not start and so cannot restart`,
		commands + "load:\n  restart: always\n":     `s.yml:10:12: load.restart: "always": want never, round or {every: N}`,
		commands + "load:\n  restart: {every: 0}\n": `load.restart.every: 0 is out of range`,
		commands + "load:\n  restart: {each: 2}\n":  `load.restart.each: unknown field "each"`,
		commands + "load:\n  restart: {}\n":         `load.restart: want every: N`,
	} {
		if got := loadErr(t, src, "", nil); !strings.Contains(got, want) {
			t.Errorf("%q: error %q, want %q", src, got, want)
		}
	}
}

// TestGateFalseFailure: gate.false_failure is a level in (0, 0.2] or off
// (stored as 0); unset is nil, which decides at gate.DefaultFalseFailure.
// Anything else is an error naming the file, line and field.
func TestGateFalseFailure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, c := range []struct {
		gate string
		want *float64 // nil: unset
		err  string
	}{
		{"", nil, ""},
		{"gate: {false_failure: 0.05}\n", ptr(0.05), ""},
		{"gate: {false_failure: off}\n", ptr(0), ""},
		{"gate: {false_failure: 0}\n", nil, ":9:23: gate.false_failure: 0 is not a level (want 0 < false_failure <= 0.2, e.g. 0.01, or off for none)"},
		{"gate: {false_failure: 0.5}\n", nil, ":9:23: gate.false_failure: 0.5 is out of range (want 0 < false_failure <= 0.2, e.g. 0.01, or off)"},
		{"gate: {false_failure: none}\n", nil, `:9:23: gate.false_failure: "none" is not a level (want 0 < false_failure <= 0.2, e.g. 0.01, or off for none)`},
	} {
		path := filepath.Join(dir, fmt.Sprintf("s%d.yml", i))
		os.WriteFile(path, []byte(minimal+c.gate), 0o644)
		s, err := Load(path, "", mapEnv(nil))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), path+c.err) {
				t.Errorf("%q: error %v, want it to contain %q", c.gate, err, path+c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.gate, err)
			continue
		}
		got := s.Gate.FalseFailure
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%q: false_failure %v, want %v", c.gate, got, c.want)
		}
	}
}

func ptr(f float64) *float64 { return &f }
