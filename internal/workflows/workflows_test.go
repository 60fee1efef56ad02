package workflows

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// repoWorkflows are the repository's workflows and its examples.
func repoWorkflows(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"../../.github/workflows", "../../examples/workflows"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.yml"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 4 {
		t.Fatalf("found only %v", files)
	}
	return files
}

// TestActionlint: every workflow of the repository and of its examples is
// clean to actionlint (syntax, expressions and their types, the events'
// payloads, the inputs of known actions, the untrusted inputs it knows).
func TestActionlint(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	l, err := actionlint.NewLinter(&log, &actionlint.LinterOptions{Oneline: true, ConfigFile: "../../.github/actionlint.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFiles(repoWorkflows(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", e.Filepath, e.Line, e.Column, e.Message, e.Kind)
	}
}

// TestRepoWorkflowsSafe: no workflow of ours checks out a pull request
// under pull_request_target, or puts the event's text into a script.
func TestRepoWorkflowsSafe(t *testing.T) {
	t.Parallel()
	for _, f := range repoWorkflows(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Check(f, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range got {
			t.Error(fd)
		}
	}
}

// TestCheckFindsTheMistakes: the two mistakes, each where it is, and the
// safe forms of each left alone.
func TestCheckFindsTheMistakes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file  string
		lines []int
	}{
		{"target_checkout.yml", []int{9}},
		{"event_in_run.yml", []int{8, 10}},
		{"safe.yml", nil},
	} {
		src, err := os.ReadFile(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Check(c.file, src)
		if err != nil {
			t.Fatal(err)
		}
		var lines []int
		for _, f := range got {
			lines = append(lines, f.Line)
		}
		if len(lines) != len(c.lines) || (len(lines) > 0 && !sameLines(lines, c.lines)) {
			t.Errorf("%s: findings %v, want at lines %v", c.file, got, c.lines)
		}
	}
	if _, err := Check("bad.yml", []byte("on: [\n")); err == nil || !strings.Contains(err.Error(), "bad.yml") {
		t.Errorf("a file that does not parse: %v", err)
	}
}

func sameLines(a, b []int) bool {
	m := map[int]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}
