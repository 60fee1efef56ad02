package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// composeScenario is a scenario of two compose targets over compose.yaml
// beside it: the baseline with a memory split and a setup step, the
// candidate on another image tag through its env.
const composeScenario = `version: 1
name: stack
targets:
  baseline:
    compose: [compose.yaml]
    service: api
    port: 8080
    health: /healthz
    memory: {api: 2GiB, db: 512MiB}
    setup: {service: api, command: [-seed, "2000"], timeout: 90s}
  candidate: {compose: compose.yaml, service: api, port: 8080, env: {API_TAG: pr}}
classes:
  - {name: list, request: GET /list?category=3}
`

// TestLoadComposeTarget: a compose target's files are resolved against
// the scenario's directory, its memory split parsed, its setup read with
// the load service as its default, and what it shows is the files and
// service as written.
func TestLoadComposeTarget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yml")
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(composeScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, "", mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	b, c := s.Baseline, s.Candidate
	want := []string{filepath.Join(dir, "compose.yaml")}
	if b.Kind() != "compose" || !reflect.DeepEqual(b.Compose, want) || b.Service != "api" || b.Port != 8080 || b.Shown != "compose.yaml (service api)" {
		t.Errorf("baseline %+v", b)
	}
	if !reflect.DeepEqual(b.Memory, map[string]int64{"api": 2 << 30, "db": 512 << 20}) || b.MemoryText["db"] != "512MiB" {
		t.Errorf("memory %v %v", b.Memory, b.MemoryText)
	}
	if st := b.Setup; st == nil || st.Service != "api" || !reflect.DeepEqual(st.Command, []string{"-seed", "2000"}) || st.Timeout != 90*time.Second {
		t.Errorf("setup %+v", b.Setup)
	}
	if c.Kind() != "compose" || c.Env["API_TAG"] != "pr" || c.Setup != nil || c.Memory != nil || !reflect.DeepEqual(c.Compose, want) {
		t.Errorf("candidate %+v", c)
	}
}

// TestComposeTargetErrors: each mistake is refused at its line and field.
func TestComposeTargetErrors(t *testing.T) {
	t.Parallel()
	edit := func(old, new string) string {
		if !strings.Contains(composeScenario, old) {
			t.Fatalf("no %q", old)
		}
		return strings.Replace(composeScenario, old, new, 1)
	}
	tests := []struct{ name, src, want string }{
		{"missing file", edit("compose: [compose.yaml]", "compose: [nope.yaml]"),
			"s.yml:5:14: targets.baseline.compose: nope.yaml does not exist"},
		{"no service", edit("    service: api\n", ""),
			"s.yml:5:5: targets.baseline.service: missing (a compose target names the service that receives the load)"},
		{"no port", edit("    port: 8080\n", ""),
			"s.yml:5:5: targets.baseline.port: missing (a compose target needs its service's container port)"},
		{"bad memory", edit("db: 512MiB", "db: lots"),
			`s.yml:9:29: targets.baseline.memory.db: "lots" is not a memory size (want e.g. 2GiB, 512MiB, 1G or a number of bytes)`},
		{"setup without command", edit(`setup: {service: api, command: [-seed, "2000"], timeout: 90s}`, "setup: {service: api}"),
			`s.yml:10:5: targets.baseline.setup.command: missing (the command to run in a new container of the service, e.g. [/api, -seed, "2000"])`},
		{"compose with image", edit("compose: [compose.yaml]", "compose: [compose.yaml]\n    image: x"),
			"s.yml:4:3: targets.baseline: image and compose are exclusive (want one of command, url, image, compose; an image target may also have a command)"},
		{"service on a url target", strings.Replace(minimal, `baseline: {url: "http://127.0.0.1:1"}`, `baseline: {url: "http://127.0.0.1:1", service: api}`, 1),
			"s.yml:4:41: targets.baseline.service: only for a compose target"},
		{"build on a compose target", edit("    service: api\n", "    service: api\n    build: [make]\n"),
			"s.yml:7:5: targets.baseline.build: not for a compose target (build its images before running benchgate)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services: {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "s.yml")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, "", mapEnv(nil))
			if err == nil {
				t.Fatal("no error")
			}
			if got := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
