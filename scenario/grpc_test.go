package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const grpcFile = `version: 1
name: inventory
seed: 5
targets:
  baseline: {command: ["./demo", "-addr", "127.0.0.1:{port}"]}
  candidate: {command: ["./demo-slow", "-addr", "127.0.0.1:{port}"], health: grpc}
grpc:
  proto: [demo.proto]
  import_paths: [.]
  connections: 2
data:
  term: [alpha, beta]
classes:
  - name: get
    grpc: {method: benchgate.demo.Inventory/Get, message: '{"id": {{int 1 9}}}', metadata: {x-tenant: '{{pick "term"}}'}}
  - name: search
    grpc: {method: /benchgate.demo.Inventory/Search}
  - name: mix
    mix: {get: 3, search: 1}
`

func TestLoadGRPC(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "benchgate.yml")
	os.WriteFile(path, []byte(grpcFile), 0o644)
	s, err := Load(path, "", mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	// gRPC's default interleaving is HTTP's, slices (measured on the
	// gRPC demo under noise: docs/grpc.md); rounds when asked.
	if s.Load.Interleave != InterleaveSlice {
		t.Errorf("interleave %q, want slice (gRPC's default)", s.Load.Interleave)
	}
	rounds := filepath.Join(dir, "rounds.yml")
	os.WriteFile(rounds, []byte(grpcFile+"load: {interleave: round}\n"), 0o644)
	if s, err := Load(rounds, "", mapEnv(nil)); err != nil || s.Load.Interleave != InterleaveRound {
		t.Errorf("rounds chosen: %v, %+v", err, s)
	}
	if s.Kind != KindGRPC || s.Baseline.Health != HealthGRPC || s.Candidate.Health != HealthGRPC {
		t.Errorf("kind %q, health %q %q", s.Kind, s.Baseline.Health, s.Candidate.Health)
	}
	want := &GRPCSettings{Descriptors: "proto", ProtoFiles: []string{filepath.Join(s.Dir, "demo.proto")}, ImportPaths: []string{s.Dir}, Connections: 2}
	if !reflect.DeepEqual(s.GRPC, want) {
		t.Errorf("grpc %+v", s.GRPC)
	}
	get := s.AllClasses["get"]
	if !get.GRPC || get.Request.Method != "GRPC" || get.Request.Path != "/benchgate.demo.Inventory/Get" {
		t.Errorf("get %+v %+v", get, get.Request)
	}
	r := s.Stream("", "get", 1, 0, 0).Next()
	if r.Method != "GRPC" || r.Target != "/benchgate.demo.Inventory/Get" || !strings.HasPrefix(string(r.Body), `{"id": `) ||
		(r.Header.Get("x-tenant") != "alpha" && r.Header.Get("x-tenant") != "beta") {
		t.Errorf("request %+v body %s", r, r.Body)
	}
	if r := s.Stream("", "search", 1, 0, 0).Next(); r.Target != "/benchgate.demo.Inventory/Search" || string(r.Body) != "{}" {
		t.Errorf("search request %+v body %s", r, r.Body)
	}
}

func TestLoadGRPCErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src, want string }{
		{"bad method", strings.Replace(grpcFile, "benchgate.demo.Inventory/Get", "Inventory.Get", 1),
			`s.yml:15:20: classes[0].grpc.method: "Inventory.Get" is not a full method name (want package.Service/Method, e.g. benchgate.demo.Inventory/Get)`},
		{"http and grpc classes", strings.Replace(grpcFile, "  - name: mix\n    mix: {get: 3, search: 1}\n", "  - name: page\n    request: GET /\n", 1),
			"s.yml:1:1: classes: 2 gRPC and 1 HTTP classes: a scenario measures one kind of service (split it in two)"},
		{"an HTTP health for a gRPC service", strings.Replace(grpcFile, "health: grpc", "health: /healthz", 1),
			`s.yml:6:78: targets.candidate.health: "/healthz": a gRPC service's health is grpc (the standard health service, else a ready connection)`},
		{"grpc section and health in an HTTP scenario", minimal + "grpc: {connections: 2}\n",
			"s.yml:9:1: grpc: only for a scenario of gRPC classes (classes with grpc: {method: ...})"},
		{"metadata and TLS", strings.Replace(strings.Replace(grpcFile, "metadata: {x-tenant:", "metadata: {X~Tenant: a, x-tenant:", 1),
			`baseline: {command: ["./demo", "-addr", "127.0.0.1:{port}"]}`, `baseline: {url: "https://127.0.0.1:9"}`, 1),
			"s.yml:5:19: targets.baseline.url: gRPC targets are reached over plaintext HTTP/2 (no TLS yet): want http://\n" +
				`s.yml:15:93: classes[0].grpc.metadata.X~Tenant: "X~Tenant" is not a gRPC metadata key (want lower case letters, digits, - _ . and no grpc- prefix)`},
		{"descriptor sources", strings.Replace(grpcFile, "  import_paths: [.]\n", "  descriptor_set: demo.pb\n  descriptors: fancy\n", 1),
			"s.yml:9:3: grpc.descriptor_set: proto and descriptor_set are exclusive\n" +
				`s.yml:10:16: grpc.descriptors: "fancy": want reflection (the server's), proto (files compiled here) or descriptor_set`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, tt.src, "", nil); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestJSONTemplateFunction(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "benchgate.yml")
	os.WriteFile(path, []byte(strings.Replace(strings.Replace(grpcFile, "term: [alpha, beta]", `term: ['O"Brien\x']`, 1),
		`grpc: {method: /benchgate.demo.Inventory/Search}`, `grpc: {method: /benchgate.demo.Inventory/Search, message: '{"query": {{pick "term" | json}}, "n": {{int 1 1 | json}}}'}`, 1)), 0o644)
	s, err := Load(path, "", mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	r := s.Stream("", "search", 1, 0, 0).Next()
	if want := `{"query": "O\"Brien\\x", "n": 1}`; string(r.Body) != want {
		t.Errorf("body %s, want %s", r.Body, want)
	}
}
