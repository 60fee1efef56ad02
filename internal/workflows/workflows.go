// Package workflows checks GitHub Actions workflow files for the two
// mistakes that turn a benchmark gate into a host takeover or a script
// injection, beyond what actionlint checks: a pull_request_target workflow
// that checks out the pull request's head (its code then runs with a
// write token, beside the runner's docker socket), and a run: script that
// interpolates ${{ github.event.* }} (text a pull request's author writes
// becomes shell). The repository's own workflows and examples are held to
// them by this package's test, with actionlint.
package workflows

import (
	"bytes"
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Finding is one mistake, at its file and line.
type Finding struct {
	File string
	Line int
	What string
}

func (f Finding) String() string { return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.What) }

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
				out = append(out, Finding{file, lineOf(src, st.With["ref"]),
					"pull_request_target with a checkout of the pull request's head: its code would run with a write token beside the runner's docker socket (docs/security.md)"})
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
				out = append(out, Finding{file, line + strings.Count(script[:loc[0]], "\n"),
					"a run: script interpolates ${{ github.event.* }}: text a pull request controls would become shell; pass it through env: and quote \"$VAR\""})
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
