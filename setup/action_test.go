package setup_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// step is a step of a composite action.
type step struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	With  map[string]string `yaml:"with"`
	Shell string            `yaml:"shell"`
	Env   map[string]string `yaml:"env"`
	Run   string            `yaml:"run"`
}

// runner runs setup/action.yml's steps as GitHub's runner does, as far as
// this machine can: run: steps in bash, with their env:, the action's
// path, and files for GITHUB_OUTPUT and GITHUB_PATH; a step's if: decides
// whether it runs. A uses: step is another action, which needs GitHub:
// uses is called in its place, with its with: expanded. Expressions are
// the few the file uses, from values ("inputs.version", "runner.temp",
// …); any other fails the test, so the file cannot say what this does not
// check.
type runner struct {
	t      *testing.T
	values map[string]string
	path   string // PATH of the run: steps
	env    []string
	uses   func(s step, with map[string]string)
}

// result is what a run of the action did: the names of the steps that
// ran (uses: steps too), their output, the GITHUB_PATH file's text, and
// the error of the step that failed.
type result struct {
	ran    []string
	out    string
	ghPath string
	err    error
}

var expr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

func (r *runner) expand(s string) string {
	return expr.ReplaceAllStringFunc(s, func(m string) string {
		return r.value(expr.FindStringSubmatch(m)[1])
	})
}

func (r *runner) value(name string) string {
	v, ok := r.values[name]
	if !ok {
		r.t.Fatalf("action.yml uses ${{ %s }}, which this test does not give", name)
	}
	return v
}

// cond is an if: of the forms action.yml uses: comparisons of a value
// with a quoted string, joined by &&. Like GitHub's, == compares strings
// without regard to case.
var comparison = regexp.MustCompile(`^([a-z_.-]+)\s*(==|!=)\s*'([^']*)'$`)

func (r *runner) cond(s string) bool {
	if s == "" {
		return true
	}
	for _, term := range strings.Split(s, "&&") {
		m := comparison.FindStringSubmatch(strings.TrimSpace(term))
		if m == nil {
			r.t.Fatalf("action.yml has if: %q, a form this test does not evaluate", s)
		}
		v, ok := r.values[m[1]]
		if !ok && !strings.HasPrefix(m[1], "steps.") {
			r.t.Fatalf("if: %q: %s is not given", s, m[1])
		}
		if strings.EqualFold(v, m[3]) != (m[2] == "==") {
			return false
		}
	}
	return true
}

func (r *runner) run(file string) result {
	r.t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		r.t.Fatal(err)
	}
	var a struct {
		Runs struct {
			Using string `yaml:"using"`
			Steps []step `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(src, &a); err != nil || a.Runs.Using != "composite" {
		r.t.Fatalf("%s: %v (runs.using %q, want composite)", file, err, a.Runs.Using)
	}
	actionPath, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		r.t.Fatal(err)
	}
	tmp := r.t.TempDir()
	ghPath := filepath.Join(tmp, "github_path")
	var res result
	for i, s := range a.Runs.Steps {
		if !r.cond(s.If) {
			continue
		}
		res.ran = append(res.ran, s.Name)
		if s.Uses != "" {
			with := map[string]string{}
			for k, v := range s.With {
				with[k] = r.expand(v)
			}
			r.uses(s, with)
			continue
		}
		if s.Shell != "bash" {
			r.t.Fatalf("step %q: shell %q, want bash", s.Name, s.Shell)
		}
		output := filepath.Join(tmp, fmt.Sprint("output", i))
		env := append(os.Environ(), r.env...)
		env = append(env, "PATH="+r.path, "GITHUB_ACTION_PATH="+actionPath, "GITHUB_OUTPUT="+output, "GITHUB_PATH="+ghPath)
		for k, v := range s.Env {
			env = append(env, k+"="+r.expand(v))
		}
		bash, err := exec.LookPath("bash")
		if err != nil {
			r.t.Fatal(err)
		}
		cmd := exec.Command(bash, "--noprofile", "--norc", "-eo", "pipefail", "-c", r.expand(s.Run))
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		res.out += string(out)
		if err != nil {
			res.err = err
			break
		}
		if s.ID != "" {
			b, _ := os.ReadFile(output)
			for _, line := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					r.values["steps."+s.ID+".outputs."+k] = v
				}
			}
		}
	}
	p, _ := os.ReadFile(ghPath)
	res.ghPath = string(p)
	return res
}

// actionValues are the expressions' values for the input version, the
// action named by ref (github.action_ref).
func actionValues(t *testing.T, version, ref string) map[string]string {
	return map[string]string{
		"inputs.version":     version,
		"github.action_ref":  ref,
		"github.action_path": mustAbs(t, "."),
		"runner.temp":        t.TempDir(),
		"runner.tool_cache":  t.TempDir(),
		"runner.arch":        "X64",
		"runner.os":          "Linux",
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// withoutGo is PATH without the directories that hold a go, or "" when
// one of them holds what the steps need too (bash's tools).
func withoutGo() string {
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "mkdir")); err == nil {
				return ""
			}
			continue
		}
		keep = append(keep, dir)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// TestActionFromSource: version: source builds the benchgate of this
// checkout — the commit the action is named by, beside the action as
// GitHub fetches it — and puts it on PATH, saying the commit it was
// named by. A job with a Go of its own keeps it: actions/setup-go runs
// only in a job without one, for the Go benchgate's go.mod names, and
// the build then uses that one (here, this machine's go, put on PATH as
// setup-go does). The release's steps do not run.
func TestActionFromSource(t *testing.T) {
	t.Parallel()
	unixOnly(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH to build benchgate with")
	}
	const commit = "0123456789abcdef0123456789abcdef01234567"
	release := []string{"Cache the release's archive", "Install and verify"}

	t.Run("a Go on PATH", func(t *testing.T) {
		t.Parallel()
		r := &runner{t: t, values: actionValues(t, "source", commit), path: os.Getenv("PATH"),
			uses: func(s step, _ map[string]string) { t.Errorf("step %q (%s) ran: the job has a Go", s.Name, s.Uses) }}
		res := r.run("action.yml")
		if res.err != nil {
			t.Fatalf("%v\n%s", res.err, res.out)
		}
		checkBuilt(t, r, res, "benchgate dev-"+commit[:12])
		if got := r.values["steps.go.outputs.usable"]; got != "true" {
			t.Errorf("usable=%q with %s on PATH, want true", got, goBin)
		}
		for _, name := range release {
			if slices.Contains(res.ran, name) {
				t.Errorf("step %q ran for version: source", name)
			}
		}
	})

	// The runner fetches the action into _actions/OWNER/REPO/REF: where
	// github.action_ref is empty, the directory says the commit.
	t.Run("no github.action_ref", func(t *testing.T) {
		t.Parallel()
		root := mustAbs(t, "..")
		fetched := filepath.Join(t.TempDir(), "benchgate", "benchgate", commit)
		if err := os.MkdirAll(filepath.Dir(fetched), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(root, fetched); err != nil {
			t.Fatal(err)
		}
		values := actionValues(t, "source", "")
		values["github.action_path"] = filepath.Join(fetched, "setup")
		r := &runner{t: t, values: values, path: os.Getenv("PATH"),
			uses: func(s step, _ map[string]string) { t.Errorf("step %q (%s) ran: the job has a Go", s.Name, s.Uses) }}
		res := r.run(filepath.Join(fetched, "setup", "action.yml"))
		if res.err != nil {
			t.Fatalf("%v\n%s", res.err, res.out)
		}
		checkBuilt(t, r, res, "benchgate dev-"+commit[:12])
	})

	t.Run("no Go on PATH", func(t *testing.T) {
		t.Parallel()
		path := withoutGo()
		if path == "" {
			t.Skip("go is in a directory with the shell's tools: no PATH without it")
		}
		r := &runner{t: t, values: actionValues(t, "source", "v9.9.9"), path: path}
		var setupGo map[string]string
		r.uses = func(s step, with map[string]string) {
			if !strings.HasPrefix(s.Uses, "actions/setup-go@") {
				t.Fatalf("step %q uses %s, want actions/setup-go", s.Name, s.Uses)
			}
			setupGo = with
			r.path = filepath.Dir(goBin) + string(os.PathListSeparator) + r.path
		}
		res := r.run("action.yml")
		if res.err != nil {
			t.Fatalf("%v\n%s", res.err, res.out)
		}
		if setupGo == nil {
			t.Fatal("actions/setup-go did not run in a job without a Go")
		}
		// The Go benchgate's go.mod names, from the checkout beside the action.
		if b, err := os.ReadFile(setupGo["go-version-file"]); err != nil || !strings.Contains(string(b), "module github.com/benchgate/benchgate\n") {
			t.Errorf("setup-go's go-version-file %q is not benchgate's go.mod: %v", setupGo["go-version-file"], err)
		}
		if setupGo["cache"] != "false" {
			t.Errorf("setup-go's cache is %q: the job's own cache is not ours to key", setupGo["cache"])
		}
		// A release's tag is the version it says, built from source too.
		checkBuilt(t, r, res, "benchgate v9.9.9")
	})
}

// checkBuilt: the build put one directory on PATH, holding benchgate,
// which says want.
func checkBuilt(t *testing.T, r *runner, res result, want string) {
	t.Helper()
	bindir := strings.TrimSuffix(res.ghPath, "\n")
	if want := filepath.Join(r.values["runner.temp"], "benchgate-bin"); bindir != want {
		t.Fatalf("GITHUB_PATH %q, want %q\n%s", res.ghPath, want, res.out)
	}
	out, err := exec.Command(filepath.Join(bindir, "benchgate"), "version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != want {
		t.Errorf("benchgate version: %v, %q; want %q", err, out, want)
	}
	if !strings.Contains(res.out, want+"\n") {
		t.Errorf("the step's log does not show what benchgate says:\n%s", res.out)
	}
}

// TestActionRelease: version: vX.Y.Z runs the release's steps, and only
// them — the archive's cache (actions/cache, keyed and placed by version,
// OS and architecture) and the verified install — and installs that
// release's binary.
func TestActionRelease(t *testing.T) {
	t.Parallel()
	unixOnly(t)
	srv := release(t, "v9.9.9", "")
	values := actionValues(t, "v9.9.9", "")
	r := &runner{t: t, values: values, path: os.Getenv("PATH"),
		env: []string{"BENCHGATE_RELEASE_URL=" + srv.URL, "CURL_CA_BUNDLE=" + srv.ca}}
	var cached map[string]string
	r.uses = func(s step, with map[string]string) {
		if !strings.HasPrefix(s.Uses, "actions/cache@") {
			t.Errorf("step %q (%s) ran for a release", s.Name, s.Uses)
		}
		cached = with
	}
	res := r.run("action.yml")
	if res.err != nil {
		t.Fatalf("%v\n%s", res.err, res.out)
	}
	checkBuilt(t, r, res, "benchgate v9.9.9")
	dir := filepath.Join(values["runner.tool_cache"], "benchgate", "v9.9.9", "X64")
	if cached["path"] != dir || cached["key"] != "benchgate-archive-v9.9.9-Linux-X64" {
		t.Errorf("actions/cache with %v, want path %s and the key of the version, OS and architecture", cached, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, assetName("v9.9.9"))); err != nil {
		t.Errorf("the install step did not keep the archive where the cache step looks: %v", err)
	}
	if !slices.Equal(res.ran, []string{"Cache the release's archive", "Install and verify"}) {
		t.Errorf("steps run: %q", res.ran)
	}
}

// TestSetupFromSourceRefuses: the script builds only benchgate's own
// module, and says so; without a go it says that. Nothing is put on PATH.
func TestSetupFromSourceRefuses(t *testing.T) {
	t.Parallel()
	unixOnly(t)
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n\ngo 1.21\n"), 0o644)
	noGo := withoutGo()
	for _, c := range []struct {
		name, src, path, want string
	}{
		{"another module", other, os.Getenv("PATH"), other + ": not benchgate's source"},
		{"no module", t.TempDir(), os.Getenv("PATH"), "not benchgate's source"},
		{"no go", "..", noGo, "no go on PATH to build benchgate with"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.path == "" {
				t.Skip("go is in a directory with the shell's tools: no PATH without it")
			}
			bindir := filepath.Join(t.TempDir(), "bin")
			ghPath := filepath.Join(t.TempDir(), "github_path")
			cmd := exec.Command("bash", "setup-benchgate.sh", "source", c.src, bindir)
			cmd.Env = append(os.Environ(), "PATH="+c.path, "GITHUB_PATH="+ghPath, "REF=0123456789abcdef0123456789abcdef01234567")
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), c.want) {
				t.Errorf("err %v, output %q; want a refusal saying %q", err, out, c.want)
			}
			if _, err := os.Stat(filepath.Join(bindir, "benchgate")); err == nil {
				t.Errorf("a refused build left a binary")
			}
			if p, _ := os.ReadFile(ghPath); len(p) != 0 {
				t.Errorf("a refused build put %q on PATH", p)
			}
		})
	}
}

// TestGoUsable: a go of 1.21 or later can build benchgate (it fetches the
// toolchain go.mod names); an older one, or none, cannot, and the setup
// action then installs one. The go here is a script that answers go env
// GOVERSION as each version would.
func TestGoUsable(t *testing.T) {
	t.Parallel()
	unixOnly(t)
	noGo := withoutGo()
	if noGo == "" {
		t.Skip("go is in a directory with the shell's tools: no PATH without it")
	}
	for _, c := range []struct{ version, want string }{
		{"go1.20.14", "usable=false"},
		{"go1.21.0", "usable=true"},
		{"go1.26.8", "usable=true"},
		{"devel go1.27-0123456789ab", "usable=false"},
		{"", "usable=false"}, // no go at all
	} {
		t.Run(c.version, func(t *testing.T) {
			t.Parallel()
			path := noGo
			if c.version != "" {
				dir := t.TempDir()
				fake := "#!/bin/sh\n[ \"$1 $2\" = \"env GOVERSION\" ] && [ \"$GOTOOLCHAIN\" = local ] && echo '" + c.version + "'\n"
				if err := os.WriteFile(filepath.Join(dir, "go"), []byte(fake), 0o755); err != nil {
					t.Fatal(err)
				}
				path = dir + string(os.PathListSeparator) + noGo
			}
			cmd := exec.Command("bash", "setup-benchgate.sh", "go-usable")
			cmd.Env = append(os.Environ(), "PATH="+path)
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != c.want {
				t.Errorf("go %q: %v, %q; want %s", c.version, err, out, c.want)
			}
		})
	}
}
