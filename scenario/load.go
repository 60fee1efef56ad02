package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
)

// Defaults for fields a scenario leaves out.
const (
	DefaultSeed           = 1
	DefaultDuration       = 10 * time.Second
	DefaultWarmup         = 1 * time.Second
	DefaultRepetitions    = 5
	DefaultTimeout        = 30 * time.Second
	DefaultStartupTimeout = 30 * time.Second
	DefaultHealth         = "/"
	// The verdict design's defaults (with gate.DefaultSection's rule) are
	// the best combination measured by scripts/verdict-quality.sh
	// (docs/statistics.md#defaults).
	DefaultInterleave = InterleaveSlice
	DefaultSlice      = 50 * time.Millisecond
	DefaultSettle     = 10 * time.Millisecond
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// Load reads the scenario file at path, expands ${VAR} with getenv, applies
// the named profile ("" for none) and validates everything: LoadWith with
// the default options but getenv.
func Load(path, profile string, getenv func(string) string) (*Scenario, error) {
	return LoadWith(path, profile, LoadOptions{Getenv: getenv})
}

// LoadOptions are the settings of LoadWith; the zero value is Load's.
type LoadOptions struct {
	// Getenv expands ${VAR}; nil means os.Getenv.
	Getenv func(string) string
	// AllowDataOutside lets a data file lie outside the scenario's
	// directory tree. By default a data file, once its symlinks are
	// resolved, must be inside the directory that holds the scenario (or
	// below it): a scenario a pull request changes cannot read
	// /etc/passwd or /proc/self/environ and send it to a target.
	AllowDataOutside bool
	// Decide reads a gobench scenario only to decide results it did not
	// run: compare of saved go test -bench outputs or a benchmark suite's
	// files, or its gate section held against a results file's. Only
	// what compare uses must be there and be set — version, name, kind,
	// the gate section, gobench.rename, gobench.module — so targets may
	// be left out, a ${VAR} elsewhere need not be set, and nothing is
	// checked against this machine but the module's go.mod. An unset
	// ${VAR} in gobench.module leaves the module to its default, with a
	// warning (decideUnset). Scenarios of other kinds load as without it.
	Decide bool
}

// LoadWith reads the scenario file at path, expands ${VAR}, applies the
// named profile ("" for none) and validates everything, within the limits
// of limits.go. The error, when not nil, is an *ErrorList naming file,
// line, column and field of each problem, except for a file that cannot
// be opened at all.
func LoadWith(path, profile string, opts LoadOptions) (*Scenario, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	src, err := readRegular(path, MaxFileSize)
	if errors.Is(err, errNotRegular) || errors.Is(err, errTooLarge) {
		// The file was found: its problem has a place, as every other.
		el := &ErrorList{}
		msg := "not a regular file (a scenario is read from a file, not a FIFO, a device or a directory)"
		if errors.Is(err, errTooLarge) {
			msg = fmt.Sprintf("the file is larger than %s, the most a scenario may be (scenario.MaxFileSize)", sizeText(MaxFileSize))
		}
		el.add(&Error{File: path, Line: 1, Col: 1, Msg: msg})
		return nil, el
	}
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	absPath, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	sum := sha256.Sum256(src)
	s := &Scenario{
		File:    path,
		Dir:     filepath.Dir(absPath),
		Hash:    hex.EncodeToString(sum[:]),
		Source:  string(src),
		Profile: profile,
	}
	l := &loader{dec: dec{file: path, errs: &ErrorList{}}, s: s, opts: opts}
	// See secrets.go: what Redact replaces, and the fields shown as they
	// are, whose variables are recorded only if an alias may carry them
	// elsewhere.
	record := s.recordSecrets(getenv)
	hidden := map[string]bool{} // read where a secret may be
	root, shown, aliased := l.parse(src, func(name string) string {
		hidden[name] = true
		return record(name)
	}, getenv)
	for _, n := range shown {
		n.asIs = !aliased && !slices.ContainsFunc(n.vars, func(v string) bool { return hidden[v] })
		if !n.asIs {
			for _, v := range n.vars {
				record(v)
			}
		}
	}
	if root != nil {
		l.scenario(root, profile)
	}
	if err := l.errs.err(); err != nil {
		return nil, err
	}
	return s, nil
}

type loader struct {
	dec
	s    *Scenario
	opts LoadOptions

	varNames    []string  // variable names every variant defines, sorted
	allVariants []Variant // before the profile: every variant is checked
	defaults    reqSrc    // load.defaults as templates
	reqs        map[string]*reqSrc
	classPos    map[string]*node
	profiles    map[string]*profileSrc

	healthPos map[string]*node // each target's health and url fields: "baseline", "baseline.url"
	hasPins   bool             // the file has a pins section
	// maxReps is where each section ("load", "profiles.pr") wrote
	// max_repetitions, for the check against repetitions once the
	// profile is applied; repsPos where it wrote repetitions, slicePos
	// slice and settle ("load.slice"), for the checks of the grid's size.
	maxReps  map[string]*node
	repsPos  map[string]*node
	slicePos map[string]*node
	// rulePos is where the file wrote gate.rule; nil when it took the
	// default.
	rulePos *node
	// chosen is which of interleave and slice each section set
	// ("load.interleave", "profiles.pr.slice"): a default gives way where
	// it cannot apply (slices for gRPC, a slice longer than the
	// duration), a value the file chose is an error there.
	chosen     map[string]bool
	pinsFailed bool           // and something in it is wrong
	pinPos     map[string]int // line of each pin set, by name

	dataBytes, dataItems int // read so far, against MaxDataBytes and MaxDataItems

	// unset are the ${VAR} of unset variables LoadOptions.Decide holds
	// back until the kind says which fields are used (decideUnset).
	unset []unsetVar
}

// unsetVar is a ${VAR} of an unset variable: its error, and the name.
type unsetVar struct {
	*Error
	name string
}

// parse converts src, expanding ${VAR} with getenv, or with getenvShown in
// the fields shown as they are; shown are the scalars so expanded, and
// aliased says whether the file used an alias.
func (l *loader) parse(src []byte, getenv, getenvShown func(string) string) (root *node, shown []*node, aliased bool) {
	if line, col, msg := checkYAML(src); msg != "" {
		l.errAt(line, col, "", "YAML: %s", msg)
		return nil, nil, false
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		// The parser's own Error() quotes the source around the problem,
		// in time that grows with the square of a long line: only the
		// message is shown.
		var se *yaml.SyntaxError
		var ye interface{ GetMessage() string }
		switch {
		case errors.As(err, &se) && se.Token != nil && se.Token.Position != nil:
			l.errAt(se.Token.Position.Line, se.Token.Position.Column, "", "YAML syntax: %s", se.Message)
		case errors.As(err, &ye):
			l.errAt(1, 1, "", "YAML: %s", ye.GetMessage())
		default:
			l.errAt(1, 1, "", "YAML: %v", err)
		}
		return nil, nil, false
	}
	if len(f.Docs) != 1 {
		l.errAt(1, 1, "", "want exactly one YAML document, got %d", len(f.Docs))
		return nil, nil, false
	}
	c := &converter{getenv: getenv, getenvShown: getenvShown, anchors: map[string]*node{}, errf: func(line, col int, field, msg string) {
		l.errAt(line, col, field, "%s", msg)
	}}
	if l.opts.Decide {
		c.unset = func(line, col int, field, name string) {
			l.unset = append(l.unset, unsetVar{&Error{File: l.file, Line: line, Col: col, Field: field, Msg: (&unsetError{name}).Error()}, name})
		}
	}
	root = c.convert(f.Docs[0], "")
	if root.kind == kindNull {
		l.errAt(1, 1, "", "the file is empty (want a scenario mapping with version: 1)")
		return nil, nil, c.aliased
	}
	if root.kind != kindMap {
		l.errNode(root, "", "want a scenario mapping, got %s", root.describe())
		return nil, nil, c.aliased
	}
	return root, c.shown, c.aliased
}

func (l *loader) scenario(root *node, profile string) {
	m, _ := l.fields(root, "", "version", "name", "seed", "kind", "targets", "pins", "load", "data", "classes", "variants", "gate", "profiles", "profiling", "agreement", "preflight", "gobench", "grpc")
	// Other versions may mean other fields: checking them as version 1
	// would bury the one error that matters.
	if v := m["version"]; v == nil {
		l.errAt(1, 1, "version", "missing (want version: 1)")
	} else if n, ok := l.integer(v, "version"); ok && n != 1 {
		l.errNode(v, "version", "%s is not supported (this benchgate reads version 1)", v.errNum(strconv.FormatInt(n, 10)))
		return
	}
	if n := m["name"]; n == nil {
		l.errAt(1, 1, "name", "missing (want a name for the scenario)")
	} else if s, ok := l.nonEmptyStr(n, "name"); ok {
		l.s.Name = s
	}
	l.s.Seed = DefaultSeed
	if n := m["seed"]; n != nil {
		if v, ok := l.uint64(n, "seed"); ok {
			l.s.Seed = v
		}
	}
	l.s.Kind = KindHTTP
	if n := m["kind"]; n != nil {
		if k, ok := l.str(n, "kind"); ok {
			switch k {
			case KindHTTP, KindGoBench:
				l.s.Kind = k
			default:
				// Another kind means other fields: checking them as http
				// would bury the one error that matters.
				l.errNode(n, "kind", "unknown kind %q (want http, the default, or gobench)", n.errText())
				return
			}
		}
	}
	l.decideUnset()
	if l.s.Kind == KindGoBench {
		l.goBenchScenario(m, profile)
		return
	}
	if n := m["gobench"]; n != nil {
		l.errAt(n.keyLine, n.keyCol, "gobench", "only for a gobench scenario (add kind: gobench)")
	}
	l.targets(m["targets"])
	if n := m["pins"]; n != nil {
		l.pins(n)
	}
	l.load(m["load"])
	l.data(m["data"])
	l.variants(m["variants"])
	l.s.Agreement = l.agreementSection(m["agreement"], "agreement", Agreement{Mode: AgreementRequired, Requests: DefaultAgreementRequests})
	l.classes(m["classes"])
	l.grpcKind(m)
	l.templateWork()
	l.preflightSection(m["preflight"])
	l.profiling(m["profiling"])
	l.gate(m["gate"])
	l.profilesSection(m["profiles"])
	l.applyProfile(m["profiles"], profile)
	l.checkLoad(m["load"], profile)
	l.checkGrid(m, profile)
	l.checkRounds(profile)
	if len(l.errs.Errors) == 0 {
		l.compile()
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
