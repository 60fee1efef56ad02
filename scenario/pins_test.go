package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// loadSrc loads src as s.yml in a fresh directory.
func loadSrc(t *testing.T, src, profile string, env map[string]string) *Scenario {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, profile, mapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPinsMap(t *testing.T) {
	t.Parallel()
	s := loadSrc(t, minimal+"pins: {memory: 512 MiB, generator_cpus: \"0\"}\n", "", nil)
	want := []Pins{{Name: "memory=512MiB", Memory: 512 << 20, MemoryText: "512 MiB", GeneratorCPUs: "0"}}
	if !reflect.DeepEqual(s.PinSets, want) {
		t.Errorf("PinSets = %+v, want %+v", s.PinSets, want)
	}
	s = loadSrc(t, minimal+"pins: {name: small, cpus: \"0\"}\n", "", nil)
	if want := []Pins{{Name: "small", CPUs: "0"}}; !reflect.DeepEqual(s.PinSets, want) {
		t.Errorf("PinSets = %+v, want %+v", s.PinSets, want)
	}
}

const pinList = `pins:
  - {cpus: "1", memory: 1GiB, generator_cpus: "0"}
  - {name: two cpus, cpus: "1-2", generator_cpus: "0"}
  - {cpus: "1-3,5", generator_cpus: "0"}
profiles:
  pr: {pins: ["cpus=1 memory=1GiB", "cpus=1-3,5"]}
  small: {pins: [two cpus]}
`

func TestPinsList(t *testing.T) {
	t.Parallel()
	s := loadSrc(t, minimal+pinList, "", nil)
	want := []Pins{
		{Name: "cpus=1 memory=1GiB", CPUs: "1", Memory: 1 << 30, MemoryText: "1GiB", GeneratorCPUs: "0"},
		{Name: "two cpus", CPUs: "1-2", GeneratorCPUs: "0"},
		{Name: "cpus=1-3,5", CPUs: "1-3,5", GeneratorCPUs: "0"},
	}
	if !reflect.DeepEqual(s.PinSets, want) {
		t.Errorf("PinSets = %+v\nwant %+v", s.PinSets, want)
	}
	s = loadSrc(t, minimal+pinList, "pr", nil)
	if got := []Pins{want[0], want[2]}; !reflect.DeepEqual(s.PinSets, got) {
		t.Errorf("profile pr: PinSets = %+v", s.PinSets)
	}
	s = loadSrc(t, minimal+pinList, "small", nil)
	if got := []Pins{want[1]}; !reflect.DeepEqual(s.PinSets, got) {
		t.Errorf("profile small: PinSets = %+v", s.PinSets)
	}
}

func TestPinsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, pins, profile, want string
	}{
		{"duplicate name", `pins:
  - {name: a, cpus: "0"}
  - {name: b, cpus: "1"}
  - {name: a, memory: 1GiB}
`, "", `s.yml:12:12: pins[2].name: "a" is already the name of the pin set at line 10`},
		{"duplicate default name", `pins:
  - {cpus: "0", generator_cpus: "1"}
  - {cpus: "0", generator_cpus: "2"}
`, "", `s.yml:11:6: pins[1]: "cpus=0" is already the name of the pin set at line 10 (a pin set without name: is named after its cpus and memory; give one of them a name:)`},
		{"name taken by a default name", `pins:
  - {cpus: "0"}
  - {name: cpus=0, memory: 1GiB}
`, "", `s.yml:11:12: pins[1].name: "cpus=0" is already the name of the pin set at line 10`},
		{"bad name", `pins: [{name: "a/b", cpus: "0"}, {name: " a", cpus: "1"}]
`, "", `s.yml:9:15: pins[0].name: "a/b" is not a valid pin set name (want letters, digits, _ . - = , and spaces between them)` + "\n" +
			`s.yml:9:41: pins[1].name: " a" is not a valid pin set name (want letters, digits, _ . - = , and spaces between them)`},
		{"generator_cpus alone", `pins: [{generator_cpus: "0"}]
`, "", `s.yml:9:9: pins[0]: want cpus or memory (generator_cpus pins only the load generator; a pin set pins the targets)`},
		{"empty list", "pins: []\n", "",
			`s.yml:9:7: pins: must not be empty (leave pins out to pin nothing)`},
		{"not a mapping or list", "pins: 2\n", "",
			`s.yml:9:7: pins: want a mapping (one pin set) or a list of mappings, got integer 2`},
		{"unknown profile pin set", `pins:
  - {cpus: "0"}
  - {name: big, cpus: "0-3"}
profiles:
  pr: {pins: [bigg, "cpus=1"]}
`, "", `s.yml:13:15: profiles.pr.pins[0]: no pin set named "bigg" (did you mean big?)` + "\n" +
			`s.yml:13:21: profiles.pr.pins[1]: no pin set named "cpus=1" (did you mean cpus=0?)`},
		{"profile pins of a broken pin set", `pins:
  - {name: big, cpus: "9-0"}
profiles:
  pr: {pins: [big]}
`, "", `s.yml:10:23: pins[0].cpus: "9-0": range 9-0 runs backwards`},
		{"a huge range", `pins: {cpus: "0", generator_cpus: "1-1000000000"}
`, "", `s.yml:9:35: pins.generator_cpus: "1-1000000000": CPU 1000000000 is beyond 65535, the most a cpuset may name`},
		{"profile pins without pins", "profiles:\n  pr: {pins: [a]}\n", "",
			`s.yml:10:8: profiles.pr.pins: the file has no pins to choose from`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, minimal+tt.pins, tt.profile, nil); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestLoadIgnoresTheMachine: a file is valid or not wherever it is read,
// even with pins on CPUs no machine has.
func TestLoadIgnoresTheMachine(t *testing.T) {
	t.Parallel()
	s := loadSrc(t, minimal+"pins: {cpus: \"4096-4099\", generator_cpus: \"65535\"}\n", "", nil)
	want := []Pins{{Name: "cpus=4096-4099", CPUs: "4096-4099", GeneratorCPUs: "65535"}}
	if !reflect.DeepEqual(s.PinSets, want) {
		t.Errorf("PinSets = %+v, want %+v", s.PinSets, want)
	}
}

func TestCheckCPUs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, pins, profile string
		online              []int
		want                string // "" for no error
	}{
		{"all there", `pins:
  - {cpus: "0-1", generator_cpus: "3"}
  - {cpus: "2", memory: 1GiB}
`, "", []int{0, 1, 2, 3}, ""},
		{"memory only", "pins: {memory: 1GiB}\n", "", []int{0}, ""},
		{"one missing in a list", `pins:
  - {cpus: "0-1"}
  - {cpus: "1,3"}
`, "", []int{0, 1},
			`s.yml:11:12: pins[1].cpus: CPU 3 does not exist here (this machine has CPUs 0-1)`},
		{"one CPU machine", `pins: {cpus: "1"}
`, "", []int{0},
			`s.yml:9:14: pins.cpus: CPU 1 does not exist here (this machine has CPU 0)`},
		{"generator_cpus, the widest range", `pins: {cpus: "0", generator_cpus: "1-65535"}
`, "", []int{0, 1},
			`s.yml:9:35: pins.generator_cpus: CPUs 2-65535 do not exist here (this machine has CPUs 0-1)`},
		{"several, as ranges", `pins: {cpus: "0,2,4-5"}
`, "", []int{0, 1},
			`s.yml:9:14: pins.cpus: CPUs 2,4-5 do not exist here (this machine has CPUs 0-1)`},
		{"a machine with a gap", `pins: {cpus: "0-3"}
`, "", []int{0, 1, 3, 4, 5},
			`s.yml:9:14: pins.cpus: CPU 2 does not exist here (this machine has CPUs 0-1,3-5)`},
		{"online unsorted, with duplicates", `pins: {cpus: "0-2"}
`, "", []int{1, 0, 1},
			`s.yml:9:14: pins.cpus: CPU 2 does not exist here (this machine has CPUs 0-1)`},
		{"every cpuset, in file order", `pins:
  - {generator_cpus: "5", cpus: "4"}
  - {cpus: "0", generator_cpus: "1"}
  - {cpus: "6-7", memory: 1GiB}
`, "", []int{0, 1},
			`s.yml:10:22: pins[0].generator_cpus: CPU 5 does not exist here (this machine has CPUs 0-1)` + "\n" +
				`s.yml:10:33: pins[0].cpus: CPU 4 does not exist here (this machine has CPUs 0-1)` + "\n" +
				`s.yml:12:12: pins[2].cpus: CPUs 6-7 do not exist here (this machine has CPUs 0-1)`},
		{"pin sets the profile leaves out", `pins:
  - {name: small, cpus: "0"}
  - {name: big, cpus: "0-7"}
profiles:
  pr: {pins: [small]}
`, "pr", []int{0, 1},
			`s.yml:11:23: pins[1].cpus: CPUs 2-7 do not exist here (this machine has CPUs 0-1)`},
		{"from a variable", `pins: {cpus: "${CPUS}"}
`, "", []int{0, 1},
			`s.yml:9:14: pins.cpus: CPU 7 does not exist here (this machine has CPUs 0-1)`},
		// When the CPUs cannot be told, pinning finds out.
		{"unknown CPUs", `pins: {cpus: "64"}
`, "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := loadSrc(t, minimal+tt.pins, tt.profile, map[string]string{"CPUS": "7"})
			err := s.CheckCPUs(tt.online)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckCPUs(%v) = %v, want nil", tt.online, err)
				}
				return
			}
			var el *ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("CheckCPUs(%v) = %v, want an *ErrorList", tt.online, err)
			}
			if got := strings.ReplaceAll(err.Error(), s.Dir+string(filepath.Separator), ""); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestCheckCPUsGoBench: a gobench scenario's pins are checked as well.
func TestCheckCPUsGoBench(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := loadSrc(t, "version: 1\nname: m\nkind: gobench\ntargets: {baseline: {ref: HEAD~1}, candidate: {dir: "+dir+"}}\npins: {cpus: \"2\"}\n", "", nil)
	want := s.File + `:5:14: pins.cpus: CPU 2 does not exist here (this machine has CPUs 0-1)`
	if err := s.CheckCPUs([]int{0, 1}); err == nil || err.Error() != want {
		t.Errorf("CheckCPUs = %v\nwant %s", err, want)
	}
}

func TestImageTarget(t *testing.T) {
	t.Parallel()
	s := loadSrc(t, strings.Replace(minimal, `{url: "http://127.0.0.1:2"}`,
		`{image: "demo:${TAG}", port: 8080, command: [serve, --key, "${KEY}", --fast], env: {MODE: bench}, startup_timeout: 1m}`, 1),
		"", map[string]string{"TAG": "pr-7", "KEY": "s3cret"})
	c := s.Candidate
	if c.Kind() != "image" || c.Image != "demo:pr-7" || c.Shown != "demo:pr-7" || c.Port != 8080 ||
		!reflect.DeepEqual(c.Command, []string{"serve", "--key", "s3cret", "--fast"}) ||
		!reflect.DeepEqual(c.Env, map[string]string{"MODE": "bench"}) || c.Health != "/" || c.Dir != "" ||
		c.StartupTimeout.String() != "1m0s" {
		t.Errorf("Candidate = %+v", c)
	}
	if k := s.Baseline.Kind(); k != "url" {
		t.Errorf("Baseline.Kind() = %q", k)
	}

	s = loadSrc(t, strings.Replace(minimal, `{url: "http://127.0.0.1:2"}`, `{image: demo, port: 80, command: "serve --fast"}`, 1), "", nil)
	if !reflect.DeepEqual(s.Candidate.Command, []string{"serve", "--fast"}) || s.Candidate.Shown != "demo" {
		t.Errorf("command line: Candidate = %+v", s.Candidate)
	}
	// {port} is not required with an image; scenario leaves it as written.
	s = loadSrc(t, strings.Replace(minimal, `{url: "http://127.0.0.1:2"}`, `{image: demo, port: 80, command: [serve, "-addr=:{port}"]}`, 1), "", nil)
	if !reflect.DeepEqual(s.Candidate.Command, []string{"serve", "-addr=:{port}"}) {
		t.Errorf("command with {port}: Candidate = %+v", s.Candidate)
	}
	if k := (Target{Command: []string{"x"}}).Kind(); k != "command" {
		t.Errorf("Kind() of a command target = %q", k)
	}
}

func TestImageTargetErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, candidate, want string }{
		{"build and dir", `{image: demo, port: 80, build: [make], dir: .}`,
			"s.yml:5:38: targets.candidate.build: not for an image target (build the image before running benchgate)\n" +
				"s.yml:5:53: targets.candidate.dir: not for an image target (build the image before running benchgate)"},
		{"port required with image", `{image: demo, command: [serve]}`,
			"s.yml:5:3: targets.candidate.port: missing (an image target needs its container port)"},
		{"url and image", `{image: demo, port: 80, url: "http://127.0.0.1:2"}`,
			"s.yml:5:3: targets.candidate: url and image are exclusive (want one of command, url, image, compose; an image target may also have a command)"},
		{"port without image", `{url: "http://127.0.0.1:2", port: 80}`,
			"s.yml:5:42: targets.candidate.port: only for an image or compose target, not url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(minimal, `{url: "http://127.0.0.1:2"}`, tt.candidate, 1)
			if got := loadErr(t, src, "", nil); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestResourceMetrics(t *testing.T) {
	t.Parallel()
	// Resources are measured for started targets only: command and image.
	started := strings.Replace(strings.Replace(minimal,
		`baseline: {url: "http://127.0.0.1:1"}`, `baseline: {image: "api:a", port: 8080}`, 1),
		`candidate: {url: "http://127.0.0.1:2"}`, `candidate: {image: "api:b", port: 8080}`, 1)
	s := loadSrc(t, started+"gate:\n  fail_on: [{metric: cpu_per_req}, {metric: mem_mean}, {metric: mem_peak}]\n", "", nil)
	var got []string
	for _, r := range s.Gate.FailOn {
		got = append(got, string(r.Metric))
	}
	if !reflect.DeepEqual(got, []string{"cpu_per_req", "mem_mean", "mem_peak"}) {
		t.Errorf("metrics = %v", got)
	}
	// The names offered are gate.Registry's, in its order.
	want := `s.yml:11:16: gate.fail_on[0].metric: unknown metric "memory" (want one of ` + strings.Join(metricNames, ", ") + `)`
	if names := strings.Join(metricNames, ", "); !strings.HasPrefix(names, "rps, mean, p50, p90, p95, p99") || !strings.HasSuffix(names, ", error_rate, cpu_per_req, mem_mean, mem_peak") {
		t.Errorf("metric names %q", names)
	}
	if got := loadErr(t, minimal+"gate:\n  fail_on:\n    - {metric: memory}\n", "", nil); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	want = `s.yml:11:16: gate.fail_on[0].metric: unknown metric "cpu_per_request" (did you mean cpu_per_req?)`
	if got := loadErr(t, minimal+"gate:\n  fail_on:\n    - {metric: cpu_per_request}\n", "", nil); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
