package scenario

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/benchgate/benchgate/agreement"
)

// Agreement modes.
const (
	AgreementRequired = "required" // a disagreeing class fails the gate
	AgreementWarn     = "warn"     // a disagreement is reported only
	AgreementOff      = "off"      // the class is not probed
)

// Defaults of the correctness checks.
const (
	DefaultAgreementRequests = 5
	DefaultPreflightTimeout  = time.Minute
	// MaxAgreementRequests bounds the probe: it runs before any load and
	// is not measured, so it must stay short.
	MaxAgreementRequests = 1000
)

// AgreementModes lists the modes in the order errors name them.
var AgreementModes = []string{AgreementRequired, AgreementWarn, AgreementOff}

// Agreement says how the agreement probe compares a class's answers.
type Agreement struct {
	Mode     string // required, warn or off
	Requests int    // the first Requests requests of the class's stream
	// Ignore lists JSON paths left out of the comparison.
	Ignore []string
	// Unordered compares JSON arrays as multisets.
	Unordered bool
	// SortLines compares text lines and CSV records as multisets.
	SortLines bool
	// Format forces json, text, csv or xml; "" takes it from the
	// Content-Type, else from the bodies.
	Format string
}

// Options is the agreement package's view of a.
func (a Agreement) Options() agreement.Options {
	return agreement.Options{Ignore: a.Ignore, Unordered: a.Unordered, SortLines: a.SortLines, Format: a.Format}
}

// Preflight is a command run once against each target before any load: a
// conformance checker, a smoke test, a probe of a pinned default.
type Preflight struct {
	Name string
	// Run is the argv; "{url}" in any argument is replaced by the target's
	// base URL. The command also gets BENCHGATE_URL and BENCHGATE_TARGET.
	Run []string
	// Shown is Run as written, before ${VAR} expansion and {url}.
	Shown string
	Dir   string // working directory: the scenario's, or dir: resolved
	// Targets are the sides it runs against, "baseline" and/or
	// "candidate", in that order.
	Targets []string
	Timeout time.Duration
	// Classes are left out of the grid when the command fails on either
	// target: what cannot be compared is listed as absent, not measured.
	Classes []string
}

// agreementFields are the fields of agreement: at scenario and class level.
var agreementFields = []string{"mode", "requests", "ignore", "unordered", "sort_lines", "format"}

// agreementSection reads an agreement section over base: a mapping of
// agreementFields, or a mode alone ("agreement: warn"). Fields left out
// keep base's values; ignore adds to base's list.
func (l *loader) agreementSection(n *node, f string, base Agreement) Agreement {
	a := base
	a.Ignore = slices.Clone(base.Ignore)
	if n == nil {
		return a
	}
	if n.kind == kindScalar {
		if s, ok := l.str(n, f); ok {
			a.Mode = l.agreementMode(n, f, s)
		}
		return a
	}
	m, ok := l.fields(n, f, agreementFields...)
	if !ok {
		return a
	}
	if v := m["mode"]; v != nil {
		if s, ok := l.str(v, f+".mode"); ok {
			a.Mode = l.agreementMode(v, f+".mode", s)
		}
	}
	if v := m["requests"]; v != nil {
		if k, ok := l.intRange(v, f+".requests", 1, MaxAgreementRequests); ok {
			a.Requests = k
		}
	}
	if v := m["ignore"]; v != nil {
		if paths, ok := l.strList(v, f+".ignore"); ok {
			for i, p := range paths {
				if err := agreement.ValidatePath(p); err != nil {
					l.errNode(v.items[i], index(f+".ignore", i), "%q is not a JSON path: %v (want e.g. $.generated_at, $.items[*].id, $..etag)", v.items[i].errText(), err)
					continue
				}
				a.Ignore = append(a.Ignore, p)
			}
		}
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{{"unordered", &a.Unordered}, {"sort_lines", &a.SortLines}} {
		if v := m[b.key]; v != nil {
			if x, ok := l.boolean(v, join(f, b.key)); ok {
				*b.dst = x
			}
		}
	}
	if v := m["format"]; v != nil {
		formats := []string{agreement.FormatJSON, agreement.FormatText, agreement.FormatCSV, agreement.FormatXML}
		if s, ok := l.str(v, f+".format"); ok {
			if !slices.Contains(formats, s) {
				l.errNode(v, f+".format", "unknown format %q (want one of %s; leave it out to take it from the Content-Type)", v.errText(), strings.Join(formats, ", "))
			} else {
				a.Format = s
			}
		}
	}
	return a
}

func (l *loader) agreementMode(n *node, f, s string) string {
	if slices.Contains(AgreementModes, s) {
		return s
	}
	msg := "unknown mode %q (want one of " + strings.Join(AgreementModes, ", ") + ")"
	if d := DidYouMean(s, AgreementModes); d != "" {
		msg = "unknown mode %q (did you mean " + d + "?)"
	}
	l.errNode(n, f, msg, n.errText())
	return AgreementRequired
}

// boolean accepts a YAML boolean, or true/false out of ${VAR} expansion.
func (d *dec) boolean(n *node, field string) (bool, bool) {
	if n.broken {
		return false, false
	}
	if n.kind == kindScalar && (n.scalar == scalarBool || n.expanded) {
		switch strings.ToLower(n.text) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	d.errNode(n, field, "want true or false, got %s", n.describe())
	return false, false
}

// preflightSection reads the preflight list.
func (l *loader) preflightSection(n *node) {
	if n == nil || !l.list(n, "preflight", "pre-flight commands") {
		return
	}
	seen := map[string]int{}
	for i, it := range n.items {
		f := index("preflight", i)
		m, ok := l.fields(it, f, "name", "run", "targets", "timeout", "classes", "dir")
		if !ok {
			continue
		}
		p := Preflight{Dir: l.s.Dir, Timeout: DefaultPreflightTimeout, Targets: []string{"baseline", "candidate"}}
		if v := m["name"]; v == nil {
			l.errNode(it, f+".name", "missing (every pre-flight command needs a name: the report's column)")
		} else if s, ok := l.nonEmptyStr(v, f+".name"); ok {
			switch {
			case !nameRE.MatchString(s):
				l.errNode(v, f+".name", "%q is not a valid name (want letters, digits, _ . -)", v.errText())
			case seen[s] > 0:
				l.errNode(v, f+".name", "%q is already the name of the pre-flight command at line %d", v.errText(), seen[s])
			default:
				p.Name = s
				seen[s] = v.line
			}
		}
		if v := m["run"]; v == nil {
			l.errNode(it, f+".run", "missing (want the command, e.g. [\"./bin/lint\", \"{url}\"])")
		} else if argv, ok := l.argv(v, f+".run"); ok {
			p.Run, p.Shown = argv, shellJoin(rawArgv(v))
		}
		if v := m["targets"]; v != nil {
			if names, ok := l.strList(v, f+".targets"); ok {
				if len(names) == 0 {
					l.errNode(v, f+".targets", "must not be empty (leave it out to run against both)")
				}
				var ts []string
				for j, s := range names {
					if s != "baseline" && s != "candidate" {
						l.errNode(v.items[j], index(f+".targets", j), "%q is not a target (want baseline or candidate)", v.items[j].errText())
					} else if !slices.Contains(ts, s) {
						ts = append(ts, s)
					}
				}
				slices.Sort(ts) // baseline before candidate
				p.Targets = ts
			}
		}
		if v := m["timeout"]; v != nil {
			if d, ok := l.duration(v, f+".timeout"); ok {
				if d <= 0 {
					l.errNode(v, f+".timeout", "must be positive")
				} else {
					p.Timeout = d
				}
			}
		}
		if v := m["classes"]; v != nil {
			all := slices.Sorted(mapKeys(l.s.AllClasses))
			p.Classes = l.names(v, f+".classes", "class", func(s string) bool { return l.s.AllClasses[s] != nil }, all)
		}
		if v := m["dir"]; v != nil {
			if s, ok := l.nonEmptyStr(v, f+".dir"); ok {
				if !filepath.IsAbs(s) {
					s = filepath.Join(l.s.Dir, s)
				}
				p.Dir = s
			}
		}
		l.s.Preflight = append(l.s.Preflight, p)
	}
}
