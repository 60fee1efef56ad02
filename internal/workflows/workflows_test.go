package workflows

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
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

// repoConfig is actionlint's configuration of the repository.
const repoConfig = "../../.github/actionlint.yaml"

// TestRepoWorkflows: every workflow of the repository and of its examples
// is clean to Lint: actionlint, and Check (no pull request checked out
// under pull_request_target, no event text put into a script).
func TestRepoWorkflows(t *testing.T) {
	t.Parallel()
	for _, f := range repoWorkflows(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Lint(f, src, repoConfig)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range got {
			t.Error(fd)
		}
	}
}

// TestLintFindsActionlintsMistakes: Lint reports actionlint's findings
// at their line and column, beside Check's.
func TestLintFindsActionlintsMistakes(t *testing.T) {
	t.Parallel()
	src := []byte("on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.event.pull_request.title }}\n      - uses: actions/checkout@v4\n        with: {fetch-depht: 0}\n")
	got, err := Lint("bad.yml", src, repoConfig)
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, f := range got {
		text = append(text, f.String())
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{"bad.yml:8:16: input \"fetch-depht\" is not defined", "bad.yml:6:", "[expression]", "bad.yml:6: a run: script interpolates"} {
		if !strings.Contains(all, want) {
			t.Errorf("findings\n%s\nwant %q", all, want)
		}
	}
}

// TestCheckFindsTheMistakes: each mistake where it is, and the safe
// forms of each left alone: a checkout of the head under
// pull_request_target; event text in a script; an action, a reusable
// workflow or an image named by a ref that can move (a tag, a branch, a
// short SHA), not a local action, a full SHA, a digest or benchgate's own
// actions by release tag; a checkout that keeps its token in a job that
// never pushes, not one with persist-credentials: false or in a job that
// pushes.
func TestCheckFindsTheMistakes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file  string
		lines []int
	}{
		{"target_checkout.yml", []int{9}},
		{"event_in_run.yml", []int{9, 11}},
		{"unpinned.yml", []int{7, 10, 11, 13, 17, 19}},
		{"credentials.yml", []int{8, 9}},
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

// TestCheckSaysWhy: the findings of an unpinned action and of a kept
// token name the action, the job and the fix.
func TestCheckSaysWhy(t *testing.T) {
	t.Parallel()
	src := []byte("on: push\njobs:\n  bench:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4.2.2\n")
	got, err := Check("w.yml", src)
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, f := range got {
		text = append(text, f.String())
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{
		"w.yml:6: actions/checkout@v4.2.2 is not pinned to a commit",
		"uses: actions/checkout@<sha> # v1.2.3",
		"w.yml:6: actions/checkout keeps the job's token in .git/config, and job bench never pushes: set persist-credentials: false",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("findings\n%s\nwant %q", all, want)
		}
	}
}

// TestLintChecksPinnedInputs: a SHA-pinned action is still checked by
// actionlint against its version's inputs (the one its comment names),
// at the input's own line and column.
func TestLintChecksPinnedInputs(t *testing.T) {
	t.Parallel()
	src := []byte("on: push\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n" +
		"      - uses: actions/checkout@11d5960a326750d5838078e36cf38b85af677262 # v4.4.0\n" +
		"        with: {persist-credentials: false, fetch-depht: 0}\n")
	got, err := Lint("pinned.yml", src, repoConfig)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0].String(), "pinned.yml:7:44: input \"fetch-depht\" is not defined") {
		t.Errorf("findings %v, want only actionlint's of fetch-depht at 7:44", got)
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

// TestLintRunsShellcheck: with shellcheck on PATH (CI installs it), a
// run: script's shell mistakes are findings at the script's line.
func TestLintRunsShellcheck(t *testing.T) {
	t.Parallel()
	if Shellcheck() == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("shellcheck is not on PATH: .ci/run installs it")
		}
		t.Skip("shellcheck is not on PATH (Debian: apt-get install shellcheck)")
	}
	src := []byte("on: push\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n          cd $RUNNER_TEMP/some dir\n          echo ok\n")
	got, err := Lint("shell.yml", src, repoConfig)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, f := range got {
		t.Log(f)
		if strings.Contains(f.What, "shellcheck") && strings.Contains(f.What, "SC2086") && f.Line == 6 {
			found = true
		}
	}
	if !found {
		t.Errorf("no shellcheck SC2086 finding at the run: line (6) for an unquoted $RUNNER_TEMP: %v", got)
	}
}

// TestOwnActionInputs: every input a workflow of the repository or its
// examples gives benchgate's own actions (benchgate/benchgate@…, its
// setup action) is one the action declares: actionlint knows neither
// action, so a misspelt input would only show on GitHub.
func TestOwnActionInputs(t *testing.T) {
	t.Parallel()
	declared := func(file string) map[string]bool {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var a struct {
			Inputs map[string]any `yaml:"inputs"`
		}
		if err := yaml.Unmarshal(b, &a); err != nil || len(a.Inputs) == 0 {
			t.Fatalf("%s: %v (%d inputs)", file, err, len(a.Inputs))
		}
		in := map[string]bool{}
		for k := range a.Inputs {
			in[k] = true
		}
		return in
	}
	action, setup := declared("../../action.yml"), declared("../../setup/action.yml")
	checked := 0
	for _, f := range repoWorkflows(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var w workflow
		if err := yaml.Unmarshal(src, &w); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for job, j := range w.Jobs {
			for _, s := range j.Steps {
				var want map[string]bool
				switch {
				case strings.HasPrefix(s.Uses, "benchgate/benchgate/setup@"):
					want = setup
				case strings.HasPrefix(s.Uses, "benchgate/benchgate@"):
					want = action
				default:
					continue
				}
				checked++
				for k := range s.With {
					if !want[k] {
						t.Errorf("%s: job %s: %s has no input %q", f, job, s.Uses, k)
					}
				}
			}
		}
	}
	if checked < 4 {
		t.Errorf("only %d steps use benchgate's actions: the examples were not read", checked)
	}
}

// usesLine is a uses: in any text: a workflow, an action's steps, a
// snippet of the documentation.
var usesLine = regexp.MustCompile("(?m)uses:\\s*[\"']?([^\\s\"'`]+@[^\\s\"'`]+)")

// versionComment is the comment after a pinned uses: value.
var versionComment = regexp.MustCompile(`^["']?[ \t]+#[ \t]*(v[0-9]+(\.[0-9]+)*)\b`)

// TestRepoPinsEverywhere: the workflows, the actions (action.yml,
// setup/action.yml), the workflows benchgate init writes (its templates)
// and every workflow snippet of the README and docs/ name each action by
// commit SHA with its version in a comment (or are benchgate's own, by
// release tag): what a reader copies is pinned too. And each action is
// pinned to one commit everywhere: Dependabot updates .github/workflows
// and the actions, and this test then fails until the examples, the
// templates and the docs follow.
func TestRepoPinsEverywhere(t *testing.T) {
	t.Parallel()
	var files []string
	for _, pattern := range []string{"../../.github/workflows/*.yml", "../../examples/workflows/*.yml", "../../action.yml", "../../setup/action.yml", "../../internal/scaffold/templates/workflow-*.yml", "../../README.md", "../../docs/*.md"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	seen := 0
	pins := map[string]string{} // action: "sha # version"
	where := map[string]string{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range usesLine.FindAllSubmatchIndex(src, -1) {
			seen++
			uses := string(src[m[2]:m[3]])
			if strings.Contains(uses, "@<") || strings.Contains(uses, "$") {
				continue // a placeholder (action@<sha>) or a script's text
			}
			at := fmt.Sprintf("%s:%d", f, bytes.Count(src[:m[0]], []byte("\n"))+1)
			if what := Unpinned(uses); what != "" {
				t.Errorf("%s: %s", at, what)
			}
			action, ref, _ := strings.Cut(uses, "@")
			if !commitSHA.MatchString(ref) {
				continue
			}
			version := versionComment.FindSubmatch(src[m[1]:])
			if version == nil {
				t.Errorf("%s: %s has no version comment (# v1.2.3) for Dependabot to keep", at, uses)
				continue
			}
			pin := ref + " # " + string(version[1])
			if old, ok := pins[action]; ok && old != pin {
				t.Errorf("%s: %s@%s, but %s pins it to %s", at, action, pin, where[action], old)
			} else if !ok {
				pins[action], where[action] = pin, at
			}
		}
	}
	if seen < 10 {
		t.Errorf("only %d uses: found in %v", seen, files)
	}
}

// TestReleaseMovesNoVersionTag: the release workflow never moves the
// version tag it was started by (the Go checksum database may have
// recorded it already): every forced tag or push of its scripts is the
// major alias ($major) alone, and the version tag is not re-made.
func TestReleaseMovesNoVersionTag(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	forced := regexp.MustCompile(`\bgit\s+(tag|push)\b.*\s(-f|--force)\b`)
	moves := 0
	for i, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if forced.MatchString(line) {
			moves++
			if !strings.Contains(line, "$major\"") || strings.Contains(line, "GITHUB_REF_NAME") || strings.Contains(line, "${") {
				t.Errorf("release.yml:%d: %s: a forced tag or push of something other than the major tag", i+1, strings.TrimSpace(line))
			}
		}
		if regexp.MustCompile(`\bgit\s+tag\b.*"\$GITHUB_REF_NAME"`).MatchString(line) {
			t.Errorf("release.yml:%d: %s: re-makes the version tag", i+1, strings.TrimSpace(line))
		}
	}
	if moves != 2 {
		t.Errorf("%d forced tags or pushes, want 2 (the major tag, made and pushed)", moves)
	}
}
