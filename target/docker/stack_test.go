//go:build linux

package docker

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/benchgate/benchgate/scenario"
)

const stackFile = `services:
  api:
    image: api:${TAG:-dev}
    command: [-addr, ":8080"]
    environment: {DB: "db:6379", EMPTY: ""}
    depends_on:
      migrate: {condition: service_completed_successfully}
      db: {condition: service_healthy}
    volumes: [data:/data, ./conf:/conf:ro]
    tmpfs: [/tmp]
    ulimits: {nofile: {soft: 1024, hard: 4096}, nproc: 512}
    sysctls: {net.core.somaxconn: "1024"}
    cap_add: [NET_ADMIN]
    extra_hosts: ["cache.local:10.1.2.3"]
    links: ["db:store"]
    networks: [default, backend]
  db:
    image: redis:7
    container_name: the-db
    networks:
      backend: {aliases: [database]}
    healthcheck: {test: [CMD, redis-cli, ping], interval: 1s, retries: 3}
  migrate:
    image: api:${TAG:-dev}
    command: [-migrate]
    depends_on: [db]
volumes:
  data: {}
networks:
  backend: {}
`

func writeStack(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLoadProject: the files are interpolated with the project's .env,
// the environment over it and the target's env over both; the start
// order puts every service after those it depends on; the checks refuse
// a target naming what the project lacks.
func TestLoadProject(t *testing.T) {
	t.Parallel()
	dir := writeStack(t, map[string]string{"compose.yaml": stackFile, ".env": "TAG=dotenv\n"})
	spec := scenario.Target{Name: "baseline", Compose: []string{filepath.Join(dir, "compose.yaml")}, Service: "api"}
	none := func(string) string { return "" }
	p, err := LoadProject(context.Background(), spec, none)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Services["api"].Image; got != "api:dotenv" {
		t.Errorf(".env: image %q", got)
	}
	spec.Env = map[string]string{"TAG": "pr"}
	if p, err = LoadProject(context.Background(), spec, none); err != nil || p.Services["migrate"].Image != "api:pr" {
		t.Errorf("target env: %v, %+v", err, p.Services["migrate"].Image)
	}
	order, err := startOrder(p)
	if want := []string{"db", "migrate", "api"}; err != nil || !reflect.DeepEqual(order, want) {
		t.Errorf("start order %v, %v; want %v", order, err, want)
	}
	if err := CheckProject(spec, p); err != nil {
		t.Errorf("CheckProject: %v", err)
	}
	for _, tc := range []struct {
		edit func(*scenario.Target)
		want string
	}{
		{func(s *scenario.Target) { s.Service = "web" }, `compose: service "web" (targets.baseline.service) is not in compose.yaml (services: api, db, migrate)`},
		{func(s *scenario.Target) { s.Memory = map[string]int64{"cache": 1} }, "compose: targets.baseline.memory.cache: no such service in compose.yaml (services: api, db, migrate)"},
		{func(s *scenario.Target) { s.Setup = &scenario.Setup{Service: "seed"} }, `compose: targets.baseline.setup.service "seed": no such service in compose.yaml (services: api, db, migrate)`},
	} {
		bad := spec
		tc.edit(&bad)
		if err := CheckProject(bad, p); err == nil || err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}

	cyclic := writeStack(t, map[string]string{"compose.yaml": "services:\n  a: {image: x, depends_on: [b]}\n  b: {image: x, depends_on: [a]}\n"})
	spec.Compose = []string{filepath.Join(cyclic, "compose.yaml")}
	if _, err := LoadProject(context.Background(), spec, none); err == nil || !strings.Contains(err.Error(), "cycle") {
		// compose-go refuses it itself; startOrder would too.
		t.Errorf("a depends_on cycle: %v", err)
	}
}

// TestServiceConfig: a service's container is the file's service: image,
// command, environment, volumes (the stack's own for a named one, the
// file's path for a bind, tmpfs), its name and container_name on the
// stack's network, its healthcheck; a setup container runs the step's
// command and takes no name on the network.
func TestServiceConfig(t *testing.T) {
	t.Parallel()
	dir := writeStack(t, map[string]string{"compose.yaml": stackFile})
	spec := scenario.Target{Name: "baseline", Compose: []string{filepath.Join(dir, "compose.yaml")}, Service: "api"}
	p, err := LoadProject(context.Background(), spec, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	st := &Stack{spec: spec, project: p, volumes: map[string]string{"data": "benchgate-r-baseline-stack-1-data"}}
	ss := &stackService{stack: st, service: "api", cfg: p.Services["api"], network: "benchgate-r-baseline-stack-1"}
	cfg, hc, nc := ss.config("sha256:abc", map[string]string{labelRun: "r"})
	if cfg.Image != "sha256:abc" || !reflect.DeepEqual([]string(cfg.Cmd), []string{"-addr", ":8080"}) ||
		!reflect.DeepEqual(cfg.Env, []string{"DB=db:6379", "EMPTY="}) || cfg.Labels[labelRun] != "r" {
		t.Errorf("config %+v", cfg)
	}
	want := []mount.Mount{
		{Type: mount.TypeVolume, Source: "benchgate-r-baseline-stack-1-data", Target: "/data"},
		{Type: mount.TypeBind, Source: filepath.Join(dir, "conf"), Target: "/conf", ReadOnly: true},
		{Type: mount.TypeTmpfs, Target: "/tmp"},
	}
	if !reflect.DeepEqual(hc.Mounts, want) || string(hc.NetworkMode) != ss.network {
		t.Errorf("host config %+v\nmounts %+v", hc, hc.Mounts)
	}
	if !reflect.DeepEqual([]string(hc.CapAdd), []string{"NET_ADMIN"}) || hc.Sysctls["net.core.somaxconn"] != "1024" ||
		!reflect.DeepEqual(hc.ExtraHosts, []string{"cache.local:10.1.2.3"}) || len(hc.Ulimits) != 2 ||
		*hc.Ulimits[0] != (container.Ulimit{Name: "nofile", Soft: 1024, Hard: 4096}) || *hc.Ulimits[1] != (container.Ulimit{Name: "nproc", Soft: 512, Hard: 512}) {
		t.Errorf("cap_add %v, sysctls %v, extra_hosts %v, ulimits %+v", hc.CapAdd, hc.Sysctls, hc.ExtraHosts, hc.Ulimits)
	}
	if ep := nc.EndpointsConfig[ss.network]; ep == nil || !slices.Contains(ep.Aliases, "api") {
		t.Errorf("network %+v", nc.EndpointsConfig)
	}
	db := &stackService{stack: st, service: "db", cfg: p.Services["db"], network: ss.network}
	cfg, _, nc = db.config("sha256:def", map[string]string{})
	if h := cfg.Healthcheck; h == nil || !reflect.DeepEqual(h.Test, []string{"CMD", "redis-cli", "ping"}) || h.Interval != time.Second || h.Retries != 3 {
		t.Errorf("healthcheck %+v", cfg.Healthcheck)
	}
	// The names it has on every network of the file, and the link's.
	if al := nc.EndpointsConfig[ss.network].Aliases; !reflect.DeepEqual(al, []string{"db", "the-db", "database", "store"}) {
		t.Errorf("db aliases %v", al)
	}
	setup := &stackService{stack: st, service: "api", cfg: p.Services["api"], network: ss.network, command: []string{"-seed", "9"}, noAlias: true}
	cfg, _, nc = setup.config("sha256:abc", map[string]string{})
	if !reflect.DeepEqual([]string(cfg.Cmd), []string{"-seed", "9"}) || len(nc.EndpointsConfig[ss.network].Aliases) != 0 || cfg.Healthcheck != nil {
		t.Errorf("setup %+v, aliases %v", cfg, nc.EndpointsConfig[ss.network].Aliases)
	}
}

// TestLoadProjectBounded: a compose file larger than MaxComposeBytes is
// refused by name before the loader reads it.
func TestLoadProjectBounded(t *testing.T) {
	t.Parallel()
	big := "services:\n  api: {image: x}\n# " + strings.Repeat("x", MaxComposeBytes) + "\n"
	dir := writeStack(t, map[string]string{"compose.yaml": big})
	spec := scenario.Target{Name: "baseline", Compose: []string{filepath.Join(dir, "compose.yaml")}, Service: "api"}
	_, err := LoadProject(context.Background(), spec, func(string) string { return "" })
	if err == nil || !strings.HasPrefix(err.Error(), "compose.yaml: ") || !strings.Contains(err.Error(), "more than a compose file may hold here") {
		t.Errorf("a %d-byte compose file: %v", len(big), err)
	}
}
