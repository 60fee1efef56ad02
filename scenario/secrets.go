package scenario

import (
	"cmp"
	"encoding/json"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"weak"
)

// A value that came from ${VAR} may be a secret: load.defaults.query is
// where the docs put an API key. Load records every value its getenv
// returned of MinSecret bytes or more (a ${VAR:-default}'s default is
// written in the file and is not recorded), and Redact replaces each of
// them, in the forms a request carries it (raw, query-escaped,
// path-escaped, JSON-escaped, Go-quoted), with ${NAME}. The runner applies
// it wherever a request or a target's answer is stored or shown; what is
// rendered from results.json (the report, the comment, the summary, the
// annotations) inherits it.
//
// The values live in a table beside the Scenario, keyed by a weak pointer
// to it (the entry goes when its Scenario is collected), so that model.go
// is unchanged. A Scenario made in code has none, and neither has a copy of
// a Scenario value: redact through the pointer Load returned.

// MinSecret is the shortest value Redact replaces. A shorter one is no
// secret (it is guessed in fewer than 2^24 tries), and ${VAR} also sets
// knobs (repetitions: ${REPS} with REPS=5, a "/", an "on"): replacing
// every "5" of every request path and answer would make the report
// unreadable. The same rule holds for requests and answers, so a value
// is either hidden everywhere or nowhere.
const MinSecret = 4

// secretSet is the recorded values of one Scenario.
type secretSet struct {
	mu    sync.Mutex
	byVal map[string]string // value → the first variable name that held it
	r     *strings.Replacer // nil until built and after a change
}

var secretTable sync.Map // weak.Pointer[Scenario] → *secretSet

// recordSecrets returns getenv recording, for s, every value of MinSecret
// bytes or more that it returns.
func (s *Scenario) recordSecrets(getenv func(string) string) func(string) string {
	var set *secretSet
	return func(name string) string {
		v := getenv(name)
		if len(v) < MinSecret {
			return v
		}
		if set == nil {
			set = &secretSet{byVal: map[string]string{}}
			k := weak.Make(s)
			secretTable.Store(k, set)
			runtime.AddCleanup(s, func(k weak.Pointer[Scenario]) { secretTable.Delete(k) }, k)
		}
		set.mu.Lock()
		if _, ok := set.byVal[v]; !ok {
			set.byVal[v] = name
			set.r = nil
		}
		set.mu.Unlock()
		return v
	}
}

func (s *Scenario) secrets() *secretSet {
	if s == nil {
		return nil
	}
	set, ok := secretTable.Load(weak.Make(s))
	if !ok {
		return nil
	}
	return set.(*secretSet)
}

// HasSecrets says whether Redact has anything to replace: some ${VAR} of
// the file was expanded from the environment to a value of MinSecret
// bytes or more.
func (s *Scenario) HasSecrets() bool { return s.secrets() != nil }

// Redact replaces every value Load recorded, in each of its forms, with
// ${NAME}: for text made of a request (its target, an error quoting its
// URL) or of a target's answer (a body, a reason, a command's output).
// Without recorded values it returns t as is, without allocating.
func (s *Scenario) Redact(t string) string {
	set := s.secrets()
	if set == nil || t == "" {
		return t
	}
	return set.replacer().Replace(t)
}

// replacer is built once the values are known: Load records them all
// before it returns.
func (set *secretSet) replacer() *strings.Replacer {
	set.mu.Lock()
	defer set.mu.Unlock()
	if set.r == nil {
		set.r = set.build()
	}
	return set.r
}

// build makes the replacer. The longest form is tried first, so a secret
// holding another is replaced whole.
func (set *secretSet) build() *strings.Replacer {
	type pair struct{ old, name string }
	var pairs []pair
	seen := map[string]bool{}
	for v, name := range set.byVal {
		for _, f := range forms(v) {
			if !seen[f] {
				seen[f] = true
				pairs = append(pairs, pair{f, name})
			}
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(len(b.old), len(a.old)), strings.Compare(a.old, b.old))
	})
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.old, "${"+p.name+"}")
	}
	return strings.NewReplacer(args...)
}

// forms are the ways v appears in a request or in a message about one:
// as is, escaped for a query (the loader escapes query values so) and for
// a path, in a JSON string (the json template function escapes <, > and &,
// a body written in the file does not), and Go-quoted, as net/http quotes
// a URL in its errors.
func forms(v string) []string {
	out := []string{v, url.QueryEscape(v), url.PathEscape(v)}
	if b, err := json.Marshal(v); err == nil {
		out = append(out, string(b[1:len(b)-1]))
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		j := strings.TrimSuffix(b.String(), "\n")
		out = append(out, j[1:len(j)-1])
	}
	q := strconv.Quote(v)
	return append(out, q[1:len(q)-1])
}
