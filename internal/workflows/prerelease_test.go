package workflows

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestLintBeforeARelease: the steps docs/action.md gives for the time
// before benchgate's first release — benchgate's own actions named by a
// commit of main, the setup action building it (version: source) — are
// clean to Lint once <sha> is a commit's SHA, inside a workflow as a
// reader would paste them: a full commit SHA is a pin, for benchgate's
// actions as for any.
func TestLintBeforeARelease(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/action.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Before the first release\n")
	if !ok {
		t.Fatal("docs/action.md has no section \"Before the first release\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(section, -1)
	const sha = "0123456789abcdef0123456789abcdef01234567"
	var all strings.Builder
	for _, b := range blocks {
		steps := strings.ReplaceAll(b[1], "<sha>", sha)
		all.WriteString(steps)
		src := "on: pull_request\npermissions: {}\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    permissions: {contents: read, pull-requests: write}\n    steps:\n" +
			"      - uses: actions/checkout@11d5960a326750d5838078e36cf38b85af677262 # v4.4.0\n        with: {persist-credentials: false}\n" +
			indent(steps, "      ")
		found, err := Lint("before-release.yml", []byte(src), repoConfig)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			t.Errorf("%s\n%s", f, src)
		}
	}
	for _, want := range []string{"uses: benchgate/benchgate@" + sha, "uses: benchgate/benchgate/setup@" + sha, "with: {version: source}"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the section's steps have no %q:\n%s", want, all.String())
		}
	}
}

// indent puts prefix before every line of s.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}
