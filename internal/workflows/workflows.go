// Package workflows checks GitHub Actions workflow files for the two
// mistakes that turn a benchmark gate into a host takeover or a script
// injection, beyond what actionlint checks: a pull_request_target workflow
// that checks out the pull request's head (its code then runs with a
// write token, beside the runner's docker socket), and a run: script that
// interpolates ${{ github.event.* }} (text a pull request's author writes
// becomes shell). The repository's own workflows and examples are held to
// them by this package's test, with actionlint; Lint is both, for any
// workflow, such as the ones benchgate init writes.
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
	errs, err := l.Lint(file, src, nil)
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
	slices.SortFunc(out, func(a, b Finding) int { return cmp.Compare(a.Line, b.Line) })
	return out, nil
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
