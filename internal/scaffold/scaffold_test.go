package scaffold

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/internal/workflows"
	"github.com/benchgate/benchgate/runner"
	"github.com/benchgate/benchgate/scenario"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from what init writes now")

// actionlintConfig is the repository's, which its own workflows are
// linted with.
const actionlintConfig = "../../.github/actionlint.yaml"

// project copies testdata/NAME into a temporary directory of the same
// name, so that the name init derives is NAME whatever the directory.
func project(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// noEnv is an environment in which nothing is set: the scenario's
// ${BASE_SHA:-...} takes its default, as it does by hand.
func noEnv(string) string { return "" }

// TestInit: for each kind of project, init writes both files; the
// scenario loads through the loader every command uses (runner.Load),
// with and without the pr profile the workflow runs; the workflow is
// clean to actionlint and to workflows.Check (workflows.Lint, as the
// repository's own); and both are the golden files.
func TestInit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, kind string
		check      func(t *testing.T, sc *scenario.Scenario)
	}{
		{"compose", KindCompose, func(t *testing.T, sc *scenario.Scenario) {
			for _, c := range []struct {
				t   scenario.Target
				tag string
			}{{sc.Baseline, "base"}, {sc.Candidate, "pr"}} {
				if c.t.Kind() != "compose" || len(c.t.Compose) != 1 || filepath.Base(c.t.Compose[0]) != "compose.yaml" || c.t.Service != "api" || c.t.Port != 8081 || c.t.Env["API_TAG"] != c.tag {
					t.Errorf("%s %+v: want compose.yaml's api on its Dockerfile's EXPOSE 8081, API_TAG=%s", c.t.Name, c.t, c.tag)
				}
			}
		}},
		{"image", KindImage, func(t *testing.T, sc *scenario.Scenario) {
			if sc.Baseline.Image != "image:base" || sc.Candidate.Image != "image:head" || sc.Baseline.Port != 9090 || sc.Candidate.Port != 9090 {
				t.Errorf("targets %+v, %+v: want the images image:base and image:head on the EXPOSEd port 9090", sc.Baseline, sc.Candidate)
			}
		}},
		{"gobench", KindGoBench, func(t *testing.T, sc *scenario.Scenario) {
			if sc.Kind != scenario.KindGoBench || !slices.Equal(sc.GoBench.Packages, []string{"./codec"}) || sc.GoBench.Bench != "." {
				t.Errorf("gobench %+v: want the one package with benchmarks, ./codec", sc.GoBench)
			}
			if sc.Baseline.Ref != "origin/main" || sc.Candidate.Dir == "" {
				t.Errorf("targets %+v, %+v: want ref origin/main (BASE_SHA unset) against this directory", sc.Baseline, sc.Candidate)
			}
		}},
		{"plain", KindProcess, func(t *testing.T, sc *scenario.Scenario) {
			if sc.Baseline.Kind() != "command" || sc.Baseline.Command[0] != "./bin/server-base" || sc.Candidate.Command[0] != "./bin/server-head" {
				t.Errorf("targets %+v, %+v: want the commands the workflow builds", sc.Baseline, sc.Candidate)
			}
		}},
		{"goservice", KindProcess, func(t *testing.T, sc *scenario.Scenario) {
			if sc.Baseline.Kind() != "command" {
				t.Errorf("baseline %+v: want a command target", sc.Baseline)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := project(t, c.name)
			var out bytes.Buffer
			res, err := Init(dir, Options{Version: "v1.2.3", Out: &out})
			if err != nil {
				t.Fatal(err)
			}
			if res.Project.Kind != c.kind {
				t.Errorf("kind %s, want %s", res.Project.Kind, c.kind)
			}
			want := []string{filepath.Join(dir, ScenarioFile), filepath.Join(dir, WorkflowFile)}
			if !slices.Equal(res.Written, want) {
				t.Errorf("written %v, want %v", res.Written, want)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != 6 || !strings.HasPrefix(lines[0], "benchgate init: ") || lines[1] != "wrote "+want[0] || lines[2] != "wrote "+want[1] || !strings.HasPrefix(lines[3], "next: ") {
				t.Errorf("summary:\n%s\nwant what it is, both files and 3 lines of next steps", out.String())
			}

			file := filepath.Join(dir, ScenarioFile)
			for _, profile := range []string{"", "pr"} {
				sc, err := runner.Load(runner.Request{Scenario: file, Profile: profile, Getenv: noEnv})
				if err != nil {
					t.Fatalf("profile %q: %v", profile, err)
				}
				c.check(t, sc)
			}
			src := readFile(t, file)
			commented(t, src)

			wf := filepath.Join(dir, WorkflowFile)
			wsrc := readFile(t, wf)
			found, err := workflows.Lint(wf, wsrc, actionlintConfig)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range found {
				t.Error(f)
			}
			if !bytes.Contains(wsrc, []byte("on: pull_request\n")) || bytes.Contains(wsrc, []byte("pull_request_target:")) {
				t.Errorf("%s: want a pull_request workflow, never pull_request_target", wf)
			}
			golden(t, c.name+".benchgate.yml", src)
			golden(t, c.name+".workflow.yml", wsrc)
		})
	}
}

// commented: every line of the scenario that sets a field carries a
// comment, and so do the lines of every list item.
func commented(t *testing.T, src []byte) {
	t.Helper()
	for i, line := range strings.Split(string(src), "\n") {
		trim := strings.TrimSpace(line)
		if trim == "" || strings.HasPrefix(trim, "#") {
			continue
		}
		if !strings.Contains(line, " # ") {
			t.Errorf("scenario line %d has no comment: %q", i+1, line)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// golden compares got with testdata/golden/name, or writes it there
// with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what init writes now (go test -update rewrites it):\n%s", path, got)
	}
}

// TestInitRefuses: a file already there, either one or both, is refused
// by name, and nothing at all is written: not the other file, not its
// directory; with Force, both are replaced, a symlink itself rather than
// what it points to.
func TestInitRefuses(t *testing.T) {
	t.Parallel()
	for _, there := range [][]string{{ScenarioFile}, {WorkflowFile}, {ScenarioFile, WorkflowFile}} {
		dir := project(t, "plain")
		for _, f := range there {
			path := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var out bytes.Buffer
		_, err := Init(dir, Options{Out: &out})
		var ee *ExistsError
		if !errors.As(err, &ee) || len(ee.Files) != len(there) {
			t.Fatalf("%v there: err %v, want an ExistsError naming them", there, err)
		}
		for _, f := range there {
			if !strings.Contains(err.Error(), filepath.Join(dir, f)) {
				t.Errorf("%q does not name %s", err, f)
			}
			if got := string(readFile(t, filepath.Join(dir, f))); got != "mine\n" {
				t.Errorf("%s changed to %q", f, got)
			}
		}
		if out.Len() > 0 {
			t.Errorf("a refusal printed %q", out.String())
		}
		if len(there) == 1 && there[0] == ScenarioFile {
			if _, err := os.Stat(filepath.Join(dir, ".github")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refusal made .github: %v", err)
			}
		}
		if len(there) == 1 && there[0] == WorkflowFile {
			if _, err := os.Stat(filepath.Join(dir, ScenarioFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refusal wrote %s: %v", ScenarioFile, err)
			}
		}
	}

}

// TestInitRefusesLinks: init writes only inside the directory it is
// given. A symbolic link on the way to either file — a linked .github, a
// linked .github/workflows, a linked file, whether it points at a file or
// at nothing — is refused, -force or not, naming the link, and nothing at
// all is written, there or where it points.
func TestInitRefusesLinks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, link string
		dir        bool // the link points at a directory, else at a file
		missing    bool // at nothing
	}{
		{"linked .github", ".github", true, false},
		{"linked workflows", ".github/workflows", true, false},
		{"linked workflow file", WorkflowFile, false, false},
		{"dangling workflow file", WorkflowFile, false, true},
		{"linked scenario", ScenarioFile, false, false},
	} {
		for _, force := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s force=%v", c.name, force), func(t *testing.T) {
				t.Parallel()
				dir := project(t, "plain")
				outside := t.TempDir()
				target := outside
				if !c.dir {
					target = filepath.Join(outside, "theirs.yml")
					if !c.missing {
						if err := os.WriteFile(target, []byte("not init's\n"), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
				link := filepath.Join(dir, c.link)
				if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				_, err := Init(dir, Options{Force: force, Out: &out})
				var le *LinkError
				if !errors.As(err, &le) || le.Path != link || !strings.Contains(err.Error(), link+" is a symbolic link") {
					t.Fatalf("err %v, want a LinkError naming %s", err, link)
				}
				if out.Len() > 0 {
					t.Errorf("a refusal printed %q", out.String())
				}
				var written []string
				for _, root := range []string{dir, outside} {
					filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
						rel, _ := filepath.Rel(root, p)
						if err == nil && !d.IsDir() && d.Type()&os.ModeSymlink == 0 && (strings.HasSuffix(rel, ".yml") || strings.Contains(rel, ".github")) && p != target {
							written = append(written, p)
						}
						return nil
					})
				}
				if len(written) > 0 {
					t.Errorf("a refusal wrote %v", written)
				}
				if !c.dir && !c.missing {
					if got := string(readFile(t, target)); got != "not init's\n" {
						t.Errorf("the link's target changed to %q", got)
					}
				}
				if c.missing {
					if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("a refusal made the dangling link's target: %v", err)
					}
				}
			})
		}
	}
}

// TestInitNoDirectory: a directory that is not there is refused, saying
// which.
func TestInitNoDirectory(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := Init(missing, Options{}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("err %v, want one naming %s", err, missing)
	}
}

// TestVersion: a release running init is the one the workflow installs;
// a development build means DefaultVersion.
func TestVersion(t *testing.T) {
	t.Parallel()
	p, err := Detect(project(t, "gobench"))
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]string{"v2.3.4": "v2.3.4", "dev-0123456789ab": DefaultVersion, "": DefaultVersion, "v2.3.4-rc.1": DefaultVersion} {
		files, err := Render(p, Options{Version: v})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(files[1].Data, []byte("with: {version: "+want+"}")) {
			t.Errorf("version %q: the workflow does not install %s:\n%s", v, want, files[1].Data)
		}
	}
}

// makeFiles makes the files of a project: path → content.
func makeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const bench = "package p\n\nimport \"testing\"\n\nfunc BenchmarkX(b *testing.B) {}\n"

// TestDetect: what makes each kind, the bounds of the search, and the
// project's text made safe where it lands.
func TestDetect(t *testing.T) {
	t.Parallel()
	detect := func(files map[string]string) *Project {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "proj")
		makeFiles(t, dir, files)
		p, err := Detect(dir)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	gomod := "module example.com/p\n\ngo 1.26\n"

	if p := detect(map[string]string{"go.mod": gomod, "a/b/c/d/e/f/x_test.go": bench}); p.Kind != KindGoBench || !slices.Equal(p.Packages, []string{"./a/b/c/d/e/f"}) {
		t.Errorf("a benchmark %d directories down: %+v", MaxDepth, p)
	}
	if p := detect(map[string]string{"go.mod": gomod, "a/b/c/d/e/f/g/x_test.go": bench}); p.Kind != KindProcess || !p.Truncated {
		t.Errorf("a benchmark %d directories down: %+v, want it out of reach", MaxDepth+1, p)
	}
	many := map[string]string{"go.mod": gomod, "x_test.go": bench}
	for i := range MaxListed {
		many[filepath.Join("p"+string(rune('a'+i)), "x_test.go")] = bench
	}
	if p := detect(many); !slices.Equal(p.Packages, []string{"./..."}) || p.Benchmarks != MaxListed+1 {
		t.Errorf("%d packages with benchmarks: %+v, want ./...", MaxListed+1, p)
	}
	if p := detect(map[string]string{"bench_test.go": bench}); p.Kind != KindProcess || p.Go {
		t.Errorf("benchmarks without a go.mod: %+v", p)
	}
	if p := detect(map[string]string{"go.mod": gomod, "main.go": "package main\n\nfunc main() {}\n"}); p.Kind != KindProcess || p.Main != "." {
		t.Errorf("a main package at the root: %+v", p)
	}
	if p := detect(map[string]string{"go.mod": gomod, "cmd/a b/main.go": "package main\n", "cmd/zz/main.go": "package main\n"}); p.Main != "./cmd/zz" {
		t.Errorf("main %q: want ./cmd/zz, a name a script may hold unquoted", p.Main)
	}
	if p := detect(map[string]string{"Dockerfile": "FROM scratch\nexpose 8443/tcp 9000\n"}); p.Kind != KindImage || p.Port != 8443 {
		t.Errorf("EXPOSE 8443/tcp: %+v", p)
	}
	if p := detect(map[string]string{"Dockerfile": "FROM scratch\nEXPOSE $PORT\n"}); p.Port != 0 {
		t.Errorf("EXPOSE $PORT: port %d, want none", p.Port)
	}
	if p := detect(map[string]string{"go.mod": gomod, ".git/refs/remotes/origin/HEAD": "ref: refs/remotes/origin/trunk\n", "x_test.go": bench}); p.BaseRef != "origin/trunk" {
		t.Errorf("origin/HEAD names trunk: base ref %q", p.BaseRef)
	}

	// A package directory with YAML's and the loader's special characters
	// is read back as it is: quoted, its $ not expanded.
	odd := `we$ird "pkg"`
	dir := filepath.Join(t.TempDir(), "odd")
	makeFiles(t, dir, map[string]string{"go.mod": gomod, odd + "/x_test.go": bench})
	if _, err := Init(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	sc, err := runner.Load(runner.Request{Scenario: filepath.Join(dir, ScenarioFile), Getenv: func(string) string { return "EXPANDED" }})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"./" + odd}; !slices.Equal(sc.GoBench.Packages, want) {
		t.Errorf("packages %q, want %q", sc.GoBench.Packages, want)
	}
	if sc.Baseline.Ref != "EXPANDED" {
		t.Errorf("ref %q: the template's own ${BASE_SHA} is expanded", sc.Baseline.Ref)
	}
}

// TestRepoName: a directory's name as a docker repository name.
func TestRepoName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"api": "api", "My API": "my-api", "svc_v2.1": "svc_v2.1", "--x--": "x", "...": "app", "Ünïcode": "n-code", "a$(rm)b": "a-rm-b",
	} {
		if got := repoName(in); got != want {
			t.Errorf("repoName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestInitAllOrNothing: when the second file cannot be written (.github
// is a symlink to nowhere), the first goes too.
func TestInitAllOrNothing(t *testing.T) {
	t.Parallel()
	dir := project(t, "plain")
	if err := os.Symlink(filepath.Join(t.TempDir(), "gone"), filepath.Join(dir, ".github")); err != nil {
		t.Fatal(err)
	}
	if _, err := Init(dir, Options{}); err == nil {
		t.Fatal("a workflow under a dangling .github was written")
	}
	if _, err := os.Lstat(filepath.Join(dir, ScenarioFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed init left %s: %v", ScenarioFile, err)
	}

}

// TestDetectCompose: a compose file at the root makes a compose project,
// by docker compose's names and precedence, over a Dockerfile and a Go
// module; what init guesses of it (the load service, its port, its image's
// tag, a database); and a file it cannot read is guesses to fill in,
// never a failure.
func TestDetectCompose(t *testing.T) {
	t.Parallel()
	detect := func(t *testing.T, files map[string]string) *Project {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "proj")
		makeFiles(t, dir, files)
		p, err := Detect(dir)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const svc = "services:\n  api:\n    build: .\n"

	t.Run("precedence", func(t *testing.T) {
		t.Parallel()
		all := map[string]string{"Dockerfile": "FROM scratch\n", "go.mod": "module example.com/p\n", "x_test.go": bench}
		for _, name := range ComposeFiles {
			all[name] = svc
		}
		for _, want := range ComposeFiles {
			p := detect(t, all)
			if p.Kind != KindCompose || p.Compose.File != want {
				t.Errorf("with %v: kind %s, file %+v; want %s", slices.Sorted(maps.Keys(all)), p.Kind, p.Compose, want)
			}
			delete(all, want)
		}
		if p := detect(t, all); p.Kind != KindImage || p.Compose != nil {
			t.Errorf("no compose file, a Dockerfile: %+v", p)
		}
		if p := detect(t, map[string]string{"compose.yaml/x": "", "compose.yml": svc}); p.Compose == nil || p.Compose.File != "compose.yml" {
			t.Errorf("compose.yaml a directory: %+v, want compose.yml", p)
		}
	})

	t.Run("port", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			name, service string
			files         map[string]string
			port          int
			from          string
		}{
			{"published:container", "ports: [\"8080:80\"]", nil, 80, "ports"},
			{"container only", "ports: [\"80\"]", nil, 80, "ports"},
			{"a number", "ports: [80]", nil, 80, "ports"},
			{"a host address and tcp", "ports: [\"127.0.0.1:8080:9000/tcp\"]", nil, 9000, "ports"},
			{"udp skipped", "ports: [\"53:53/udp\", \"9000\"]", nil, 9000, "ports"},
			{"a range", "ports: [\"8000-8001:80-81\"]", nil, 80, "ports"},
			{"a variable published", "ports: [\"${PORT}:3000\"]", nil, 3000, "ports"},
			{"long form", "ports:\n      - target: 3000\n        published: \"8080\"", nil, 3000, "ports"},
			{"long form udp", "ports:\n      - {target: 53, protocol: udp}", nil, 0, ""},
			{"an alias", "ports: *p", nil, 8443, "ports"},
			{"expose", "expose: [\"4000\"]", nil, 4000, "expose"},
			{"build's Dockerfile", "build: .", map[string]string{"Dockerfile": "FROM scratch\nEXPOSE 7000\n"}, 7000, "Dockerfile"},
			{"build's context and dockerfile", "build: {context: ./svc, dockerfile: Dockerfile.api}", map[string]string{"svc/Dockerfile.api": "FROM scratch\nEXPOSE 6000\n", "Dockerfile": "EXPOSE 1\n"}, 6000, "Dockerfile"},
			{"dockerfile_inline", "build:\n      dockerfile_inline: |\n        FROM scratch\n        EXPOSE 5000", nil, 5000, "Dockerfile"},
			{"a variable only", "ports: [\"${PORT}\"]", nil, 0, ""},
			{"an absolute context", "build: /elsewhere", nil, 0, ""},
			{"none", "build: .", nil, 0, ""},
		} {
			files := map[string]string{"compose.yaml": "x-ports: &p [\"8443\"]\nservices:\n  api:\n    image: api\n    " + c.service + "\n"}
			maps.Copy(files, c.files)
			p := detect(t, files)
			if p.Compose.Problem != "" || p.Compose.Service != "api" || p.Port != c.port || p.Compose.PortFrom != c.from {
				t.Errorf("%s: %q: port %d from %q (%+v), want %d from %q", c.name, c.service, p.Port, p.Compose.PortFrom, p.Compose, c.port, c.from)
			}
		}
	})

	t.Run("service and database", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			name, compose, service string
			sure                   bool
			db, kind               string
		}{
			{"the first with ports or a build, a database's ports aside",
				"services:\n  db:\n    image: postgres:16\n    ports: [\"5432:5432\"]\n  docs:\n    image: nginx\n  web:\n    build: .\n  api:\n    build: .\n    ports: [\"80\"]\n",
				"web", true, "db", "postgres"},
			{"ports before a build", "services:\n  proxy:\n    image: nginx\n    ports: [\"80:80\"]\n  api:\n    build: .\n", "proxy", true, "", ""},
			{"neither: the first that is no database", "services:\n  cache:\n    image: redis:7\n  app:\n    image: app:1\n", "app", false, "cache", "redis"},
			{"only a database", "services:\n  store:\n    image: mongo:7\n", "store", false, "", ""},
			{"mysql", "services:\n  api:\n    build: .\n  sql:\n    image: bitnami/mysql:8\n", "api", true, "sql", "mysql"},
			{"mariadb", "services:\n  api:\n    build: .\n  m:\n    image: mariadb\n  r:\n    image: redis\n", "api", true, "m", "mariadb"},
			{"a name a scenario cannot hold is skipped", "services:\n  we$ird:\n    build: .\n  api:\n    build: .\n", "api", true, "", ""},
			{"merged from an anchor", "x-svc: &svc {build: ., ports: [\"80\"]}\nservices:\n  worker:\n    image: w\n  api:\n    <<: *svc\n", "api", true, "", ""},
		} {
			p := detect(t, map[string]string{"compose.yaml": c.compose})
			cp := p.Compose
			if cp.Problem != "" || cp.Service != c.service || cp.Sure != c.sure || cp.DB != c.db || cp.DBKind != c.kind {
				t.Errorf("%s: %+v, want service %s (sure %v), database %q (%s)", c.name, cp, c.service, c.sure, c.db, c.kind)
			}
		}
	})

	t.Run("image tag", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			image, tagVar string
			ready         bool
			repo          string
		}{
			{"shop/api:${API_VERSION:-dev}", "API_VERSION", true, ""},
			{"api:${tag}", "tag", true, ""},
			{"${REGISTRY}/api:${TAG-latest}", "TAG", true, ""},
			{"api:${PATH}", "WEB_APP_TAG", false, "api"},
			{"api:${COMPOSE_FILE}", "WEB_APP_TAG", false, "api"},
			{"localhost:5000/team/api:1.2@sha256:0123", "WEB_APP_TAG", false, "localhost:5000/team/api"},
			{"shop/api", "WEB_APP_TAG", false, "shop/api"},
			{"Shop/API:1", "WEB_APP_TAG", false, "proj-web-app"},
			{"", "WEB_APP_TAG", false, "proj-web-app"},
		} {
			compose := "services:\n  web-app:\n    build: .\n"
			if c.image != "" {
				compose += "    image: " + quoteExpanding(c.image) + "\n"
			}
			cp := detect(t, map[string]string{"compose.yaml": compose}).Compose
			if cp.TagVar != c.tagVar || cp.TagReady != c.ready || cp.Image != c.repo {
				t.Errorf("image %q: %+v, want tag variable %s (ready %v), image %q", c.image, cp, c.tagVar, c.ready, c.repo)
			}
		}
	})

	// A file init cannot read: guesses to fill in, a scenario that loads,
	// a workflow that lints; never a failure.
	t.Run("unreadable", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct{ name, compose, problem string }{
			{"malformed", "services:\n  api: [unclosed\n", "not YAML init can read"},
			{"services not a mapping", "services: 3\n", "not YAML init can read"},
			{"not a mapping", "- a\n- b\n", "not YAML init can read"},
			{"empty", "", "no services in it"},
			{"no services", "name: x\nservices:\n", "no services in it"},
			{"oversized", "services:\n  api:\n    build: .\n" + strings.Repeat("#", MaxComposeBytes), "larger than 1 MiB, not read"},
			{"nested deep", "services: " + strings.Repeat("[", maxFlowDepth+1), "not YAML init can read"},
			{"indented far", "services:\n" + strings.Repeat(" ", maxColumn+1) + "api: {}\n", "not YAML init can read"},
			{"entries nested on a line", "services:\n  x: \n" + strings.Repeat("- ", maxColumn) + "a\n", "not YAML init can read"},
			{"too many keys", "services:\n" + strings.Repeat("  s: {}\n", maxKeys+1), "not YAML init can read"},
		} {
			dir := filepath.Join(t.TempDir(), "proj")
			makeFiles(t, dir, map[string]string{"compose.yaml": c.compose})
			res, err := Init(dir, Options{})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			cp := res.Project.Compose
			if res.Project.Kind != KindCompose || cp.Problem != c.problem || cp.Service != "app" || cp.Sure || res.Project.Port != 0 || cp.TagVar != "APP_TAG" || cp.Image != "proj-app" {
				t.Errorf("%s: %+v, port %d: want %q, the placeholders app, APP_TAG and proj-app, no port", c.name, cp, res.Project.Port, c.problem)
			}
			src := readFile(t, filepath.Join(dir, ScenarioFile))
			if !bytes.Contains(src, []byte("# benchgate init could not read compose.yaml ("+c.problem+")")) || !bytes.Contains(src, []byte("    service: app            # FILL IN: ")) || !bytes.Contains(src, []byte("    port: 8080              # FILL IN: ")) {
				t.Errorf("%s: the scenario does not say what it could not read and what to fill in:\n%s", c.name, src)
			}
			if _, err := runner.Load(runner.Request{Scenario: filepath.Join(dir, ScenarioFile), Getenv: noEnv}); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			wf := filepath.Join(dir, WorkflowFile)
			found, err := workflows.Lint(wf, readFile(t, wf), actionlintConfig)
			if err != nil || len(found) > 0 {
				t.Errorf("%s: workflow: %v %v", c.name, err, found)
			}
		}
	})

	// Names YAML would read as something else are quoted, and read back as
	// they are.
	t.Run("odd names", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "proj")
		makeFiles(t, dir, map[string]string{"compose.yaml": "services:\n  \"on\":\n    build: .\n    image: \"x:${null}\"\n"})
		if _, err := Init(dir, Options{}); err != nil {
			t.Fatal(err)
		}
		sc, err := runner.Load(runner.Request{Scenario: filepath.Join(dir, ScenarioFile), Getenv: noEnv})
		if err != nil {
			t.Fatal(err)
		}
		if sc.Baseline.Service != "on" || sc.Baseline.Env["null"] != "base" || sc.Candidate.Env["null"] != "pr" {
			t.Errorf("baseline %+v, candidate %+v: want service on, env null=base and null=pr", sc.Baseline, sc.Candidate)
		}
	})
}

// TestEnvName: a service's name as its tag variable's stem.
func TestEnvName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"api": "API", "web-app": "WEB_APP", "a..b__c": "A_B_C", "9lives": "S9LIVES", "-x-": "X", "...": "APP"} {
		if got := envName(in); got != want {
			t.Errorf("envName(%q) = %q, want %q", in, got, want)
		}
	}
}
