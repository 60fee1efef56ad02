package scaffold

import (
	"bytes"
	"errors"
	"flag"
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

	dir := project(t, "plain")
	outside := filepath.Join(t.TempDir(), "outside.yml")
	if err := os.WriteFile(outside, []byte("not init's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, ScenarioFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Init(dir, Options{}); err == nil {
		t.Fatal("a symlink there was not refused")
	}
	if _, err := Init(dir, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, outside)); got != "not init's\n" {
		t.Errorf("-force wrote through the symlink: %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(dir, ScenarioFile)); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("-force left %v (%v), want a regular file", fi, err)
	}
	if _, err := runner.Load(runner.Request{Scenario: filepath.Join(dir, ScenarioFile), Getenv: noEnv}); err != nil {
		t.Error(err)
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
