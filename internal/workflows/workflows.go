// Package workflows checks GitHub Actions workflow files for the
// mistakes that turn a benchmark gate into a host takeover, a script
// injection or a leaked token, beyond what actionlint checks: a
// pull_request_target workflow that checks out the pull request's head
// (its code then runs with a write token, beside the runner's docker
// socket); a run: script that interpolates ${{ github.event.* }} (text a
// pull request's author writes becomes shell); an action named by a tag
// or a branch rather than a commit SHA (whoever can move the tag chooses
// the code that runs with the job's token); and a checkout that leaves
// its token in .git/config in a job that never pushes (where a scenario
// could read it as a data file). The repository's own workflows and
// examples are held to them by this package's test, with actionlint;
// Lint is both, for any workflow, such as the ones benchgate init writes.
package workflows

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/rhysd/actionlint"
)

// Finding is one mistake, at its file and line (and column, when known).
type Finding struct {
	File string
	Line int
	What string
	Col  int // 0: unknown
}

func (f Finding) String() string {
	if f.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", f.File, f.Line, f.Col, f.What)
	}
	return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.What)
}

// Lint holds the workflow src (named file) to what the repository's own
// workflows are held to: actionlint, as a library (syntax, expressions and
// their types, the events' payloads, the inputs of known actions, the
// untrusted inputs it knows), configured by the file config (the
// repository's .github/actionlint.yaml; "" for actionlint's defaults),
// and then Check. It returns the findings of both, actionlint's first.
// Where shellcheck is on PATH, actionlint runs it over every run: script
// (Shellcheck reports whether it is).
func Lint(file string, src []byte, config string) ([]Finding, error) {
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{ConfigFile: config, Shellcheck: Shellcheck()})
	if err != nil {
		return nil, err
	}
	errs, err := l.Lint(file, majorRefs(src), nil)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, e := range errs {
		out = append(out, Finding{File: file, Line: e.Line, Col: e.Column, What: e.Message + " [" + e.Kind + "]"})
	}
	found, err := Check(file, src)
	return append(out, found...), err
}

// Shellcheck is the shellcheck executable Lint runs, "" when none is on
// PATH (actionlint then skips its shellcheck rule).
func Shellcheck() string {
	p, err := exec.LookPath("shellcheck")
	if err != nil {
		return ""
	}
	return p
}

// pinnedUses is a uses: naming an action by commit SHA with its version
// in a comment, as Dependabot keeps it: "owner/repo@<sha> # v4.2.2".
var pinnedUses = regexp.MustCompile(`(uses:\s*["']?[^\s@#"']+@)([0-9a-f]{40})(["']?)(\s+#\s*(v[0-9]+)\b)`)

// majorRefs is src with every SHA-pinned action named by the major
// version its comment gives (@v4, padded with spaces so every column
// stays where it was), for actionlint: it knows the inputs and outputs of
// popular actions by version, and would check nothing of a SHA's.
func majorRefs(src []byte) []byte {
	return pinnedUses.ReplaceAllFunc(src, func(m []byte) []byte {
		g := pinnedUses.FindSubmatch(m)
		major := g[5]
		pad := bytes.Repeat([]byte(" "), len(g[2])-len(major))
		return slices.Concat(g[1], major, g[3], pad, g[4])
	})
}

// eventInRun matches an expression of the event's payload.
var eventInRun = regexp.MustCompile(`\$\{\{[^}]*\bgithub\.event\.`)

// headRef matches a checkout ref naming the pull request's head.
var headRef = regexp.MustCompile(`github\.event\.pull_request\.head\.|github\.head_ref|refs/pull/`)

type workflow struct {
	On   any `yaml:"on"`
	Jobs map[string]struct {
		Steps []struct {
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
			Run  string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// Check reads the workflow src (named file) and returns its findings.
func Check(file string, src []byte) ([]Finding, error) {
	var w workflow
	if err := yaml.Unmarshal(src, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	target := triggers(w.On)["pull_request_target"]
	var out []Finding
	for _, job := range w.Jobs {
		for _, st := range job.Steps {
			if target && strings.HasPrefix(st.Uses, "actions/checkout") && headRef.MatchString(st.With["ref"]) {
				out = append(out, Finding{File: file, Line: lineOf(src, st.With["ref"]),
					What: "pull_request_target with a checkout of the pull request's head: its code would run with a write token beside the runner's docker socket (docs/security.md)"})
			}
		}
	}
	// The scripts, by their place in the file: every run: value.
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, doc := range f.Docs {
		ast.Walk(visitor(func(n ast.Node) {
			mv, ok := n.(*ast.MappingValueNode)
			if !ok || mv.Key == nil || mv.Key.String() != "run" || mv.Value == nil {
				return
			}
			script, line := scalar(mv.Value)
			for _, loc := range eventInRun.FindAllStringIndex(script, -1) {
				out = append(out, Finding{File: file, Line: line + strings.Count(script[:loc[0]], "\n"),
					What: "a run: script interpolates ${{ github.event.* }}: text a pull request controls would become shell; pass it through env: and quote \"$VAR\""})
			}
		}), doc)
	}
	for _, doc := range f.Docs {
		out = append(out, unpinned(file, doc)...)
		out = append(out, keptCredentials(file, doc)...)
	}
	slices.SortFunc(out, func(a, b Finding) int { return cmp.Compare(a.Line, b.Line) })
	return out, nil
}

var (
	commitSHA   = regexp.MustCompile(`^[0-9a-f]{40}$`)
	imageDigest = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
	// ownVersion is a release tag of benchgate's own actions.
	ownVersion = regexp.MustCompile(`^v[0-9]+(\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?)?$`)
)

// OwnActions are benchgate's own actions, which the repository's
// examples and the workflows benchgate init writes name by release tag
// (vX, vX.Y.Z): the commit of a release is made after its binaries, so no
// file of the repository can know it. Any other ref of them (a branch) is
// a finding, as for every other action. docs/action.md tells users to pin
// them by SHA in their own workflows.
var OwnActions = []string{"benchgate/benchgate", "benchgate/benchgate/setup"}

// unpinned is a finding for every uses: in doc that names an action or a
// reusable workflow by a ref that is not a full commit SHA, or a docker://
// image without a digest: a tag or a branch can be moved to other code,
// which then runs with the job's token. Local actions (./…) are the
// repository's own code.
func unpinned(file string, doc ast.Node) []Finding {
	var out []Finding
	ast.Walk(visitor(func(n ast.Node) {
		mv, ok := n.(*ast.MappingValueNode)
		if !ok || mv.Key == nil || mv.Key.String() != "uses" || mv.Value == nil {
			return
		}
		if uses, line := scalar(mv.Value); uses != "" {
			if what := Unpinned(uses); what != "" {
				out = append(out, Finding{File: file, Line: line, What: what})
			}
		}
	}), doc)
	return out
}

// Unpinned says why the ref of a uses: value can be moved to other
// code, or is "" when it cannot: a local action (./…, the repository's
// own code), a full commit SHA, an image by digest, or one of OwnActions
// by release tag.
func Unpinned(uses string) string {
	if strings.HasPrefix(uses, "./") {
		return ""
	}
	if image, ok := strings.CutPrefix(uses, "docker://"); ok {
		if imageDigest.MatchString(image) {
			return ""
		}
		return uses + " is not pinned to a digest: a tag can be moved to another image, which would run with the job's token; name it as docker://IMAGE@sha256:<digest>"
	}
	action, ref, _ := strings.Cut(uses, "@")
	if commitSHA.MatchString(ref) || (slices.Contains(OwnActions, action) && ownVersion.MatchString(ref)) {
		return ""
	}
	return uses + " is not pinned to a commit: a tag or a branch can be moved to other code, which would run with the job's token; use the full 40-hex commit SHA with the version in a comment (uses: " + action + "@<sha> # v1.2.3)"
}

// gitPush matches a git push in a script (git -c k=v push, too).
var gitPush = regexp.MustCompile(`\bgit\b[^\n;&|]*\spush\b`)

// keptCredentials is a finding for every actions/checkout in doc that
// keeps its token in .git/config (persist-credentials not false) in a job
// none of whose scripts runs git push: nothing there needs it, and any
// file the job reads — a scenario's data file, a target's — could read it.
func keptCredentials(file string, doc ast.Node) []Finding {
	var out []Finding
	for _, job := range entries(get(body(doc), "jobs")) {
		steps := items(get(job.Value, "steps"))
		pushes := false
		for _, st := range steps {
			if run, _ := scalar(get(st, "run")); gitPush.MatchString(run) {
				pushes = true
			}
		}
		if pushes {
			continue
		}
		for _, st := range steps {
			uses, line := scalar(get(st, "uses"))
			if !strings.HasPrefix(uses, "actions/checkout@") {
				continue
			}
			if persist := get(get(st, "with"), "persist-credentials"); persist != nil && strings.TrimSpace(persist.String()) == "false" {
				continue
			}
			out = append(out, Finding{File: file, Line: line,
				What: "actions/checkout keeps the job's token in .git/config, and job " + job.Key.String() + " never pushes: set persist-credentials: false, or a scenario's data file could be that file"})
		}
	}
	return out
}

// body is a document's top node.
func body(doc ast.Node) ast.Node {
	if d, ok := doc.(*ast.DocumentNode); ok {
		return d.Body
	}
	return doc
}

// entries are the key: value pairs of a mapping node (nil for any other).
func entries(n ast.Node) []*ast.MappingValueNode {
	switch v := n.(type) {
	case *ast.MappingNode:
		return v.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{v}
	case *ast.AnchorNode:
		return entries(v.Value)
	case *ast.TagNode:
		return entries(v.Value)
	}
	return nil
}

// get is the value of key in the mapping n, or nil.
func get(n ast.Node, key string) ast.Node {
	for _, e := range entries(n) {
		if e.Key != nil && e.Key.String() == key {
			return e.Value
		}
	}
	return nil
}

// items are the entries of a sequence node (nil for any other).
func items(n ast.Node) []ast.Node {
	if s, ok := n.(*ast.SequenceNode); ok {
		return s.Values
	}
	return nil
}

// visitor calls f on every node.
type visitor func(ast.Node)

func (v visitor) Visit(n ast.Node) ast.Visitor {
	v(n)
	return v
}

// scalar is a string node's text and the line its text starts on: the
// line after the indicator of a block scalar (| or >).
func scalar(n ast.Node) (string, int) {
	switch v := n.(type) {
	case nil:
		return "", 0
	case *ast.LiteralNode:
		return v.Value.Value, v.GetToken().Position.Line + 1
	case *ast.StringNode:
		return v.Value, v.GetToken().Position.Line
	}
	return "", 0
}

// triggers is the set of events of an on: that is a name, a list or a map.
func triggers(on any) map[string]bool {
	set := map[string]bool{}
	switch v := on.(type) {
	case string:
		set[v] = true
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				set[s] = true
			}
		}
	case map[string]any:
		for k := range v {
			set[k] = true
		}
	}
	return set
}

// lineOf is the 1-based line of the first occurrence of s in src (its
// first line, for a block), or 1.
func lineOf(src []byte, s string) int {
	first, _, _ := strings.Cut(s, "\n")
	if i := bytes.Index(src, []byte(first)); i >= 0 && first != "" {
		return bytes.Count(src[:i], []byte("\n")) + 1
	}
	return 1
}
