package scenario

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"golang.org/x/perf/benchunit"
)

// DefaultGoBenchTimeout bounds one run of one test binary.
const DefaultGoBenchTimeout = 10 * time.Minute

// goBenchScenario reads a kind: gobench file: targets are versions of a
// Go module (a git ref or a directory), the gobench section says what to
// run, load has only repetitions, and there are no classes, data or
// variants: the cells are the benchmarks the binaries report.
func (l *loader) goBenchScenario(m map[string]*node, profile string) {
	for _, k := range []string{"classes", "data", "variants", "agreement", "preflight"} {
		if n := m[k]; n != nil {
			l.errAt(n.keyLine, n.keyCol, k, "not for a gobench scenario (its cells are the benchmarks the test binaries report)")
		}
	}
	gb := &GoBench{Module: l.s.Dir, Packages: []string{"./..."}, Bench: ".", Timeout: DefaultGoBenchTimeout}
	l.s.GoBench = gb
	l.s.AllClasses = map[string]*Class{}
	l.s.Variants = []Variant{{Name: "", Vars: map[string]string{}}}
	if n := m["targets"]; n != nil || !l.opts.Decide {
		l.goBenchTargets(n)
	}
	if n := m["pins"]; n != nil {
		l.pins(n)
	}
	l.s.Load = LoadSettings{Repetitions: DefaultRepetitions, Defaults: Defaults{Headers: map[string]string{}, Query: map[string]string{}}}
	if n := m["load"]; n != nil {
		if lm, ok := l.fields(n, "load", "repetitions"); ok {
			if v := lm["repetitions"]; v != nil {
				if r, ok := l.intRange(v, "load.repetitions", 1, MaxRounds); ok {
					l.s.Load.Repetitions = r
					l.repsPos = map[string]*node{"load.repetitions": v}
				}
			}
		}
	}
	if n := m["gobench"]; n != nil {
		l.goBenchSection(n, gb)
	}
	l.profiling(m["profiling"])
	l.gate(m["gate"])
	l.goBenchProfiles(m["profiles"], profile)
	if !l.opts.Decide {
		// Decided results have the rounds their files hold.
		l.checkRounds(profile)
	}
}

// place records where the file wrote field n (nil: nowhere), for
// Scenario.ErrorAt.
func (l *loader) place(field string, n *node) {
	if n == nil {
		return
	}
	if l.s.places == nil {
		l.s.places = map[string][2]int{}
	}
	l.s.places[field] = [2]int{n.line, n.col}
}

// ErrorAt is a problem with field found after loading, by what the
// machine holds (a git ref that names no commit, a directory without the
// module): an *ErrorList of one *Error at the place the file wrote the
// field, as Load's errors are; false when the file did not write it (a
// default, or a scenario not read from a file). The fields placed are a
// gobench target's ref and dir and gobench.module.
func (s *Scenario) ErrorAt(field, msg string) (error, bool) {
	p, ok := s.places[field]
	if !ok {
		return nil, false
	}
	return &ErrorList{Errors: []*Error{{File: s.File, Line: p[0], Col: p[1], Field: field, Msg: msg}}}, true
}

// decideField matches the fields of a gobench scenario that compare uses
// to decide results it did not run (LoadOptions.Decide), where a ${VAR}
// must be set. gobench.module is apart: decideUnset.
var decideField = regexp.MustCompile(`^(version|name|kind|gate([.\[].*)?|gobench\.rename([.\[].*)?)$`)

// decideUnset reports the unset ${VAR}s LoadOptions.Decide held back
// until the kind was read: all of them, unless the scenario is a gobench
// one, of which only those in fields compare uses (decideField). An
// unset one in gobench.module leaves the module to its default, the
// scenario's directory, with a warning: compare names the benchmarks
// relative to the module where it can, and names them otherwise when
// it cannot.
func (l *loader) decideUnset() {
	for _, u := range l.unset {
		switch {
		case l.s.Kind != KindGoBench || decideField.MatchString(u.Field):
			l.errs.add(u.Error)
		case u.Field == "gobench.module":
			w := *u.Error
			w.Msg = fmt.Sprintf("%s is not set: the benchmarks are named relative to the module in the scenario's directory, "+
				"or to their packages' common prefix without a go.mod there, which may not be the names a run gives them (set %[1]s to name them as a run does)", u.name)
			l.s.Warnings = append(l.s.Warnings, &w)
		}
	}
}

func (l *loader) goBenchTargets(n *node) {
	if n == nil {
		l.errAt(1, 1, "targets", "missing (want baseline and candidate: each a ref or a dir)")
		return
	}
	m, ok := l.fields(n, "targets", "baseline", "candidate")
	if !ok {
		return
	}
	for _, name := range []string{"baseline", "candidate"} {
		f := "targets." + name
		tn := m[name]
		if tn == nil {
			line, col := n.reportPos()
			l.errAt(line, col, f, "missing (both baseline and candidate are required)")
			continue
		}
		t := Target{Name: name}
		tm, ok := l.fields(tn, f, "ref", "dir", "packages", "bench")
		if ok {
			if v := tm["packages"]; v != nil {
				t.Packages = l.packages(v, f+".packages")
			}
			if v := tm["bench"]; v != nil {
				t.Bench = l.benchPattern(v, f+".bench")
			}
			ref, dir := tm["ref"], tm["dir"]
			l.place(f+".ref", ref)
			l.place(f+".dir", dir)
			switch {
			case ref == nil && dir == nil:
				l.errNode(tn, f, "want ref (a git commit-ish, e.g. origin/main) or dir (a directory holding the module)")
			case ref != nil && dir != nil:
				l.errAt(dir.keyLine, dir.keyCol, f+".dir", "ref and dir are exclusive")
			case ref != nil:
				if s, ok := l.nonEmptyStr(ref, f+".ref"); ok {
					if s[0] == '-' {
						l.errNode(ref, f+".ref", "%q is not a ref (it would read as an option)", ref.errText())
					} else {
						t.Ref, t.Shown = s, "ref "+ref.shownText()
					}
				}
			default:
				if s, ok := l.nonEmptyStr(dir, f+".dir"); ok {
					d := s
					if !filepath.IsAbs(d) {
						d = filepath.Join(l.s.Dir, d)
					}
					shown := d
					if dir.expanded {
						shown = dir.shownText()
					}
					if fi, err := os.Stat(d); !l.opts.Decide && (err != nil || !fi.IsDir()) {
						// Deciding runs nothing: a run's directory need
						// not be on this machine.
						l.errNode(dir, f+".dir", "%s is not a directory", shown)
					} else {
						t.Dir, t.Shown = d, "dir "+dir.shownText()
					}
				}
			}
		}
		if name == "baseline" {
			l.s.Baseline = t
		} else {
			l.s.Candidate = t
		}
	}
}

func (l *loader) goBenchSection(n *node, gb *GoBench) {
	m, ok := l.fields(n, "gobench", "module", "packages", "bench", "cpu", "benchtime", "timeout", "rename")
	if !ok {
		return
	}
	if v := m["module"]; v != nil {
		l.place("gobench.module", v)
		if s, ok := l.nonEmptyStr(v, "gobench.module"); ok {
			d := s
			if !filepath.IsAbs(d) {
				d = filepath.Join(l.s.Dir, d)
			}
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err != nil {
				l.errNode(v, "gobench.module", "%s holds no go.mod", v.shownText())
			} else {
				gb.Module = d
			}
		}
	}
	if v := m["packages"]; v != nil {
		if pk := l.packages(v, "gobench.packages"); pk != nil {
			gb.Packages = pk
		}
	}
	l.goBenchRun(m, "gobench", gb)
	if v := m["timeout"]; v != nil {
		if d, ok := l.duration(v, "gobench.timeout"); ok {
			if d <= 0 {
				l.errNode(v, "gobench.timeout", "must be positive")
			} else {
				gb.Timeout = d
			}
		}
	}
	if v := m["rename"]; v != nil && l.list(v, "gobench.rename", "rules") {
		for i, it := range v.items {
			f := index("gobench.rename", i)
			rm, ok := l.fields(it, f, "match", "replace")
			if !ok {
				continue
			}
			var r Rename
			if mv := rm["match"]; mv == nil {
				l.errNode(it, f+".match", "missing (want a regular expression, e.g. ^BenchmarkQoordinator(.*))")
			} else if s, ok := l.nonEmptyStr(mv, f+".match"); ok {
				re, err := regexp.Compile(s)
				if err != nil {
					l.errNode(mv, f+".match", "not a regular expression: %v", err)
				} else {
					r.Pattern = re
				}
			}
			if rv := rm["replace"]; rv == nil {
				l.errNode(it, f+".replace", "missing (want the common name, e.g. BenchmarkInsert$1)")
			} else if s, ok := l.str(rv, f+".replace"); ok {
				r.Replace = s
			}
			if r.Pattern != nil {
				gb.Rename = append(gb.Rename, r)
			}
		}
	}
}

// goBenchRun reads the fields a profile may override: bench, cpu,
// benchtime.
func (l *loader) goBenchRun(m map[string]*node, f string, gb *GoBench) {
	if v := m["bench"]; v != nil {
		if s := l.benchPattern(v, join(f, "bench")); s != "" {
			gb.Bench = s
		}
	}
	if v := m["cpu"]; v != nil {
		if c, ok := l.levels(v, join(f, "cpu"), MaxConcurrency); ok {
			gb.CPU = c
		}
	}
	if v := m["benchtime"]; v != nil {
		if s, ok := l.nonEmptyStr(v, join(f, "benchtime")); ok {
			if !benchtimeRE.MatchString(s) {
				l.errNode(v, join(f, "benchtime"), "%q is not a benchtime (want a duration such as 500ms or a count such as 1000x)", v.errText())
			} else {
				gb.Benchtime = s
			}
		}
	}
}

// packages reads a list of go list patterns; nil when it is wrong.
func (l *loader) packages(v *node, f string) []string {
	pk, ok := l.strList(v, f)
	if !ok {
		return nil
	}
	if len(pk) == 0 {
		l.errNode(v, f, "must not be empty (leave it out for ./...)")
		return nil
	}
	for i, p := range pk {
		if p == "" || p[0] == '-' {
			l.errNode(v.items[i], index(f, i), "%q is not a package pattern (want e.g. ./..., ./internal/store)", v.items[i].errText())
			return nil
		}
	}
	return pk
}

// benchPattern reads a -test.bench pattern; "" when it is wrong.
func (l *loader) benchPattern(v *node, f string) string {
	s, ok := l.nonEmptyStr(v, f)
	if !ok {
		return ""
	}
	// Each regexp as go test splits the pattern.
	for _, alt := range BenchLevels(s) {
		for _, part := range alt {
			if _, err := regexp.Compile(part); err != nil {
				l.errNode(v, f, "not a -test.bench pattern: %v", err)
				return ""
			}
		}
	}
	return s
}

var benchtimeRE = regexp.MustCompile(`^([1-9][0-9]*x|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`)

// BenchLevels splits a -test.bench pattern as go test does (testing's
// splitRegexp): into its alternatives, on "|" outside brackets and
// parentheses, each a list of regexps, one per level of sub-benchmark,
// split on "/" likewise. "Insert/rows=10|Lookup" is [[Insert rows=10]
// [Lookup]]: the first regexp of an alternative matches top-level names.
func BenchLevels(s string) [][]string {
	var alts [][]string
	var levels []string
	brackets, parens := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			brackets++
		case ']':
			brackets = max(brackets-1, 0)
		case '(':
			if brackets == 0 {
				parens++
			}
		case ')':
			if brackets == 0 {
				parens--
			}
		case '\\':
			i++
		case '/', '|':
			if brackets == 0 && parens == 0 {
				levels = append(levels, s[:i])
				if s[i] == '|' {
					alts, levels = append(alts, levels), nil
				}
				s, i = s[i+1:], 0
				continue
			}
		}
		i++
	}
	return append(alts, append(levels, s))
}

func (l *loader) goBenchProfiles(n *node, name string) {
	type prof struct {
		gb   GoBench
		reps int
	}
	profiles := map[string]*prof{}
	if n != nil && l.mapping(n, "profiles", "profiles by name") {
		for i, k := range n.keys {
			f := join("profiles", k.text)
			m, ok := l.fields(n.vals[i], f, "repetitions", "bench", "cpu", "benchtime")
			if !ok {
				continue
			}
			p := &prof{gb: *l.s.GoBench, reps: l.s.Load.Repetitions}
			if v := m["repetitions"]; v != nil {
				if r, ok := l.intRange(v, f+".repetitions", 1, MaxRounds); ok {
					p.reps = r
					if l.repsPos == nil {
						l.repsPos = map[string]*node{}
					}
					l.repsPos[f+".repetitions"] = v
				}
			}
			l.goBenchRun(m, f, &p.gb)
			profiles[k.text] = p
		}
	}
	if name == "" {
		return
	}
	p := profiles[name]
	if p == nil {
		l.noProfile(n, name, slices.Collect(mapKeys(profiles)))
		return
	}
	*l.s.GoBench = p.gb
	l.s.Load.Repetitions = p.reps
}

// anyGlobs reads a list of path.Match globs that cannot be checked
// against names yet.
func (l *loader) anyGlobs(n *node, f string) []string {
	if n == nil {
		return nil
	}
	items, ok := l.strList(n, f)
	if !ok {
		return nil
	}
	var out []string
	for i, g := range items {
		if _, err := path.Match(g, ""); err != nil {
			l.errNode(n.items[i], index(f, i), "%q is not a glob (path.Match syntax, e.g. \"*\", \"store.Benchmark*\")", n.items[i].errText())
			continue
		}
		out = append(out, g)
	}
	return out
}

// TidyUnit names a benchmark unit as results do (benchunit.Tidy): ns/op
// is sec/op, MB/s is B/s, other units are kept.
func TidyUnit(unit string) string {
	_, u := benchunit.Tidy(1, unit)
	return u
}
