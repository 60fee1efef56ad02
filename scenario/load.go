package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

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
	DefaultConfidence     = 0.95
	DefaultTieWithin      = 0.10
	DefaultMaxErrorRate   = 0.001
	// The verdict design's defaults are the best combination measured by
	// scripts/verdict-quality.sh (docs/statistics.md#defaults).
	DefaultInterleave = InterleaveSlice
	DefaultSlice      = 50 * time.Millisecond
	DefaultSettle     = 10 * time.Millisecond
	DefaultRule       = RulePaired
	DefaultUnresolved = UnresolvedWarn
)

// resourceMetric says whether a metric comes from resource accounting.
func resourceMetric(m string) bool {
	return m == "cpu_per_req" || m == "mem_mean" || m == "mem_peak"
}

// Metrics are the metric names a fail_on rule may name.
var Metrics = []string{"rps", "mean", "p50", "p90", "p95", "p99", "error_rate", "cpu_per_req", "mem_mean", "mem_peak"}

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
	getenv = s.recordSecrets(getenv) // see secrets.go: what Redact replaces
	root := l.parse(src, getenv)
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
	// chosen is which of interleave and slice each section set
	// ("load.interleave", "profiles.pr.slice"): a default gives way where
	// it cannot apply (slices for gRPC, a slice longer than the
	// duration), a value the file chose is an error there.
	chosen     map[string]bool
	pinsFailed bool           // and something in it is wrong
	pinPos     map[string]int // line of each pin set, by name
	onlineRead bool           // onlineCPUs was asked
	onlineCPUs []int          // sorted; nil when unknown

	dataBytes, dataItems int // read so far, against MaxDataBytes and MaxDataItems
}

func (l *loader) parse(src []byte, getenv func(string) string) *node {
	if line, col, msg := checkYAML(src); msg != "" {
		l.errAt(line, col, "", "YAML: %s", msg)
		return nil
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
		return nil
	}
	if len(f.Docs) != 1 {
		l.errAt(1, 1, "", "want exactly one YAML document, got %d", len(f.Docs))
		return nil
	}
	c := &converter{getenv: getenv, anchors: map[string]*node{}, errf: func(line, col int, field, msg string) {
		l.errAt(line, col, field, "%s", msg)
	}}
	root := c.convert(f.Docs[0], "")
	if root.kind == kindNull {
		l.errAt(1, 1, "", "the file is empty (want a scenario mapping with version: 1)")
		return nil
	}
	if root.kind != kindMap {
		l.errNode(root, "", "want a scenario mapping, got %s", root.describe())
		return nil
	}
	return root
}

func (l *loader) scenario(root *node, profile string) {
	m, _ := l.fields(root, "", "version", "name", "seed", "kind", "targets", "pins", "load", "data", "classes", "variants", "gate", "profiles", "agreement", "preflight", "gobench", "grpc")
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
	l.gate(m["gate"])
	l.profilesSection(m["profiles"])
	l.applyProfile(m["profiles"], profile)
	l.checkLoad(m["load"], profile)
	l.checkGrid(m, profile)
	if len(l.errs.Errors) == 0 {
		l.compile()
	}
}

func (l *loader) targets(n *node) {
	if n == nil {
		l.errAt(1, 1, "targets", "missing (want baseline and candidate)")
		return
	}
	m, ok := l.fields(n, "targets", "baseline", "candidate")
	if !ok {
		return
	}
	for _, name := range []string{"baseline", "candidate"} {
		tn := m[name]
		if tn == nil {
			line, col := n.reportPos()
			l.errAt(line, col, "targets."+name, "missing (both baseline and candidate are required)")
			continue
		}
		t := l.target(tn, name)
		if name == "baseline" {
			l.s.Baseline = t
		} else {
			l.s.Candidate = t
		}
	}
}

func (l *loader) target(n *node, name string) Target {
	f := "targets." + name
	t := Target{Name: name, Health: DefaultHealth, StartupTimeout: DefaultStartupTimeout}
	m, ok := l.fields(n, f, "command", "url", "image", "port", "build", "dir", "env", "health", "startup_timeout")
	if !ok {
		return t
	}
	var kinds []string
	for _, k := range []string{"command", "url", "image"} {
		if m[k] != nil {
			kinds = append(kinds, k)
		}
	}
	line, col := n.reportPos()
	kind := ""
	switch {
	case len(kinds) == 0:
		l.errAt(line, col, f, "want one of command, url, image")
	case len(kinds) == 2 && m["url"] == nil:
		// command with image: the container's command.
		kind = "image"
	case len(kinds) == 1:
		kind = kinds[0]
	default:
		// kind stays "": which fields belong is unclear until this is fixed.
		l.errAt(line, col, f, "%s are exclusive (want one of command, url, image; an image target may also have a command)", strings.Join(kinds, " and "))
	}
	only := func(field string, kinds ...string) bool {
		v := m[field]
		if v == nil {
			return false
		}
		if kind == "image" && (field == "build" || field == "dir") {
			l.errAt(v.keyLine, v.keyCol, join(f, field), "not for an image target (build the image before running benchgate)")
			return false
		}
		if kind != "" && !slices.Contains(kinds, kind) {
			which := strings.Join(kinds, " or ")
			article := "a"
			if strings.HasPrefix(which, "i") {
				article = "an"
			}
			l.errAt(v.keyLine, v.keyCol, join(f, field), "only for %s %s target, not %s", article, which, kind)
			return false
		}
		return true
	}
	if v := m["command"]; v != nil {
		if t.Command, _ = l.argv(v, f+".command"); t.Command != nil && kind != "image" {
			t.Shown = shellJoin(rawArgv(v))
		}
	}
	if v := m["url"]; v != nil {
		if s, ok := l.nonEmptyStr(v, f+".url"); ok && l.targetURL(v, s, f+".url") {
			t.URL, t.Shown = s, v.raw
			if l.healthPos == nil {
				l.healthPos = map[string]*node{}
			}
			l.healthPos[name+".url"] = v // for checks that need the kind of classes
		}
	}
	if v := m["image"]; v != nil {
		if t.Image, _ = l.nonEmptyStr(v, f+".image"); t.Image != "" {
			// The image as written, whether or not a command overrides
			// the image's own.
			t.Shown = v.raw
		}
		if m["port"] == nil {
			l.errAt(line, col, f+".port", "missing (an image target needs its container port)")
		}
	}
	if only("port", "image") {
		t.Port, _ = l.intRange(m["port"], f+".port", 1, 65535)
	}
	if only("build", "command") {
		t.Build, _ = l.argv(m["build"], f+".build")
	}
	if kind == "command" {
		t.Dir = l.s.Dir
	}
	if only("dir", "command") {
		if s, ok := l.nonEmptyStr(m["dir"], f+".dir"); ok {
			dir := s
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(l.s.Dir, dir)
			}
			shown := dir
			if m["dir"].expanded {
				shown = m["dir"].raw
			}
			if fi, err := os.Stat(dir); err != nil {
				l.errNode(m["dir"], f+".dir", "%s does not exist", shown)
			} else if !fi.IsDir() {
				l.errNode(m["dir"], f+".dir", "%s is not a directory", shown)
			} else {
				t.Dir = dir
			}
		}
	}
	if only("env", "command", "image") {
		_, t.Env, _, _ = l.strMap(m["env"], f+".env")
	}
	if v := m["health"]; v != nil {
		if s, ok := l.str(v, f+".health"); ok {
			if s != HealthGRPC && !strings.HasPrefix(s, "/") {
				l.errNode(v, f+".health", "%q must be a path starting with / (e.g. /healthz), or grpc for a gRPC service", v.errText())
			} else {
				t.Health = s
				if l.healthPos == nil {
					l.healthPos = map[string]*node{}
				}
				l.healthPos[name] = v
			}
		}
	}
	if v := m["startup_timeout"]; v != nil {
		if d, ok := l.duration(v, f+".startup_timeout"); ok {
			if d <= 0 {
				l.errNode(v, f+".startup_timeout", "must be positive")
			} else {
				t.StartupTimeout = d
			}
		}
	}
	if kind == "command" && t.Command != nil {
		has := false
		for _, a := range t.Command {
			has = has || strings.Contains(a, "{port}")
		}
		for _, v := range t.Env {
			has = has || strings.Contains(v, "{port}")
		}
		if !has {
			l.errNode(m["command"], f+".command", "no argument or env value holds {port} (the service must listen on the port benchgate picks, e.g. -addr 127.0.0.1:{port})")
		}
	}
	return t
}

// targetURL checks the url of a target. The load generator keeps only
// scheme://host:port of it and appends each request's path and query, so
// anything else in the URL would be silently dropped; credentials would
// also end up in Target.Shown and so in reports.
func (l *loader) targetURL(n *node, s, field string) bool {
	// Neither message quotes a URL that holds credentials, not even as
	// written: the password may be in the file itself.
	u, err := url.Parse(s)
	if err == nil && u.User != nil {
		l.errNode(n, field, "credentials in the URL are not allowed: they would show in reports (put them in load.defaults.headers, e.g. Authorization: \"Bearer ${TOKEN}\")")
		return false
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		if strings.Contains(s, "@") {
			l.errNode(n, field, "not an http or https URL (want e.g. http://127.0.0.1:9000)")
		} else {
			l.errNode(n, field, "%q is not an http or https URL (want e.g. http://127.0.0.1:9000)", n.errText())
		}
		return false
	}
	ok := true
	// url.Parse accepts '?' and '#' only as delimiters, so either one
	// means a query or a fragment, even an empty one.
	if strings.ContainsAny(s, "?#") {
		l.errNode(n, field, "%q has a query or fragment (put query parameters in load.defaults.query or in each class's request)", n.errText())
		ok = false
	}
	if p := u.EscapedPath(); p != "" && p != "/" {
		l.errNode(n, field, "%q has a path: the load generator appends each request path to scheme://host:port (put the path prefix in each class's request path)", n.errText())
		ok = false
	}
	return ok
}

// rawArgv is the argv of a command node as written, before ${VAR}
// expansion, split the way argv splits it.
func rawArgv(n *node) []string {
	if n.kind == kindScalar {
		return strings.Fields(n.raw)
	}
	out := make([]string, len(n.items))
	for i, it := range n.items {
		out[i] = it.raw
	}
	return out
}

// shellJoin joins argv for display so that it reads back as the same
// argv: an argument that is empty or holds whitespace or a quote is
// single-quoted. Other shell syntax ($, {}, *) is left alone on purpose,
// so that ${VAR} and {port} read as written.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsFunc(a, func(r rune) bool { return unicode.IsSpace(r) || r == '\'' || r == '"' }) {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// ParseMemory reads a memory size: bytes, or a number with a unit. Units
// ending in "iB" (or "Ki", "Mi", …) are powers of 1024; "KB", "MB", "GB",
// "TB" and the bare letters "K", "M", "G", "T" are powers of 1000.
func ParseMemory(s string) (int64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	num, unit := s[:i], strings.TrimSpace(s[i:])
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a memory size (want e.g. 2GiB, 512MiB, 1G or a number of bytes)", s)
	}
	mult := map[string]int64{
		"": 1, "B": 1,
		"K": 1e3, "KB": 1e3, "kB": 1e3, "k": 1e3,
		"M": 1e6, "MB": 1e6,
		"G": 1e9, "GB": 1e9,
		"T": 1e12, "TB": 1e12,
		"Ki": 1 << 10, "KiB": 1 << 10,
		"Mi": 1 << 20, "MiB": 1 << 20,
		"Gi": 1 << 30, "GiB": 1 << 30,
		"Ti": 1 << 40, "TiB": 1 << 40,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (want B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s, unit)
	}
	if n <= 0 {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}

func (l *loader) load(n *node) {
	ls := &l.s.Load
	*ls = LoadSettings{
		Concurrency: []int{1}, Duration: DefaultDuration, Warmup: DefaultWarmup,
		Repetitions: DefaultRepetitions, Timeout: DefaultTimeout,
		Defaults:   Defaults{Headers: map[string]string{}, Query: map[string]string{}},
		Interleave: DefaultInterleave, Slice: DefaultSlice, Settle: DefaultSettle,
	}
	if n == nil {
		return
	}
	m, ok := l.fields(n, "load", "concurrency", "duration", "warmup", "repetitions", "timeout", "defaults",
		"interleave", "slice", "settle", "max_repetitions")
	if !ok {
		return
	}
	l.loadCommon(m, "load", ls)
	if v := m["defaults"]; v != nil {
		dm, ok := l.fields(v, "load.defaults", "headers", "query")
		if ok {
			if h := dm["headers"]; h != nil {
				l.defaults.header = l.kvTemplates(h, "load.defaults.headers", true)
			}
			if q := dm["query"]; q != nil {
				l.defaults.query = l.kvTemplates(q, "load.defaults.query", false)
			}
		}
	}
	for _, kv := range l.defaults.header {
		ls.Defaults.Headers[kv.key] = kv.t.src
	}
	for _, kv := range l.defaults.query {
		ls.Defaults.Query[kv.key] = kv.t.src
	}
}

// loadCommon reads the fields a profile may override too.
func (l *loader) loadCommon(m map[string]*node, f string, ls *LoadSettings) {
	for _, k := range []string{"interleave", "slice"} {
		if m[k] != nil {
			if l.chosen == nil {
				l.chosen = map[string]bool{}
			}
			l.chosen[f+"."+k] = true
		}
	}
	if v := m["concurrency"]; v != nil {
		if c, ok := l.concurrency(v, f+".concurrency"); ok {
			ls.Concurrency = c
		}
	}
	positive := func(key string, dst *time.Duration, allowZero bool) {
		v := m[key]
		if v == nil {
			return
		}
		d, ok := l.duration(v, join(f, key))
		switch {
		case !ok:
		case d < 0 || d == 0 && !allowZero:
			if allowZero {
				l.errNode(v, join(f, key), "must not be negative")
			} else {
				l.errNode(v, join(f, key), "must be positive")
			}
		default:
			*dst = d
		}
	}
	positive("duration", &ls.Duration, false)
	positive("warmup", &ls.Warmup, true)
	positive("timeout", &ls.Timeout, false)
	positive("slice", &ls.Slice, false)
	positive("settle", &ls.Settle, true)
	if v := m["repetitions"]; v != nil {
		if r, ok := l.intRange(v, join(f, "repetitions"), 1, MaxRounds); ok {
			ls.Repetitions = r
			if l.repsPos == nil {
				l.repsPos = map[string]*node{}
			}
			l.repsPos[f+".repetitions"] = v
		}
	}
	for _, k := range []string{"slice", "settle"} {
		if v := m[k]; v != nil {
			if l.slicePos == nil {
				l.slicePos = map[string]*node{}
			}
			l.slicePos[f+"."+k] = v
		}
	}
	if v := m["max_repetitions"]; v != nil {
		if r, ok := l.intRange(v, join(f, "max_repetitions"), 1, MaxRounds); ok {
			ls.MaxRepetitions = r
			if l.maxReps == nil {
				l.maxReps = map[string]*node{}
			}
			l.maxReps[f] = v
		}
	}
	if v := m["interleave"]; v != nil {
		if s, ok := l.str(v, join(f, "interleave")); ok {
			switch s {
			case InterleaveRound, InterleaveSlice:
				ls.Interleave = s
			default:
				l.errNode(v, join(f, "interleave"), "%q: want round or slice", v.errText())
			}
		}
	}
}

// checkLoad checks what only the settings in force can say, once the
// profile is applied: a maximum of rounds below the minimum, slices that
// do not fit the measured time, slices of a kind of load that has none.
func (l *loader) checkLoad(n *node, profile string) {
	ls := &l.s.Load
	if ls.MaxRepetitions == 0 {
		ls.MaxRepetitions = ls.Repetitions
	} else if ls.MaxRepetitions < ls.Repetitions {
		f := join("profiles", profile)
		v := l.maxReps[f]
		if profile == "" || v == nil {
			f, v = "load", l.maxReps["load"]
		}
		l.errNode(v, f+".max_repetitions", "%s is below repetitions (%d): the most rounds a cell may take cannot be fewer than every cell takes",
			v.errNum(v.text), ls.Repetitions)
	}
	if ls.Interleave != InterleaveSlice {
		return
	}
	chose := func(k string) bool {
		return l.chosen["load."+k] || (profile != "" && l.chosen[join("profiles", profile)+"."+k])
	}
	// The defaults give way where they cannot apply.
	if l.s.Kind == KindGRPC && !chose("interleave") {
		ls.Interleave = InterleaveRound
		return
	}
	if ls.Slice > ls.Duration && !chose("slice") {
		ls.Slice = ls.Duration
	}
	line, col := 1, 1
	if n != nil {
		line, col = n.reportPos()
	}
	switch {
	case l.s.Kind == KindGRPC:
		l.errAt(line, col, "load.interleave", "slice interleaving is not yet available for gRPC classes (use round)")
	case ls.Slice > ls.Duration:
		l.errAt(line, col, "load.slice", "%v is longer than duration %v: a round needs at least one slice of each target", ls.Slice, ls.Duration)
	case ls.SlicePairs() > MaxSlicePairs && !chose("slice"):
		// The default gives way here too: slices just long enough.
		ls.Slice = (ls.Duration + MaxSlicePairs - 1) / MaxSlicePairs
	case ls.SlicePairs() > MaxSlicePairs:
		f, v := l.setIn(l.slicePos, profile, "slice")
		l.errAt(v.line, v.col, f, "duration %v / slice %v is %d slice pairs a round; at most %d (scenario.MaxSlicePairs): lengthen the slice",
			ls.Duration, ls.Slice, ls.SlicePairs(), MaxSlicePairs)
	}
	if settling := satMul(int64(ls.Settle), int64(ls.SlicePairs())); ls.Settle > 0 && settling > int64(MaxDuration) {
		f, v := l.setIn(l.slicePos, profile, "settle")
		if v == nil {
			v = &node{line: line, col: col}
		}
		l.errAt(v.line, v.col, f, "settle %v × %d slice pairs settles a round for more than %s (scenario.MaxDuration)",
			ls.Settle, ls.SlicePairs(), durText(MaxDuration))
	}
}

// setIn is where the settings in force took key from: the profile's
// section, else the load section; its node is nil when neither set it.
func (l *loader) setIn(pos map[string]*node, profile, key string) (string, *node) {
	if profile != "" {
		if f := join("profiles", profile) + "." + key; pos[f] != nil {
			return f, pos[f]
		}
	}
	return "load." + key, pos["load."+key]
}

// checkGrid bounds the grid the settings in force make, and what running
// it records: cells, rungs, slices (limits.go). It reports at the field
// that makes the grid grow: the classes, or the repetitions.
func (l *loader) checkGrid(m map[string]*node, profile string) {
	ls := &l.s.Load
	pins := max(1, int64(len(l.s.PinSets)))
	cells := satMul(satMul(satMul(pins, int64(len(l.s.Variants))), int64(len(l.s.Classes))), int64(len(ls.Concurrency)))
	at := func(n *node) (int, int) {
		if n == nil {
			return 1, 1
		}
		return n.reportPos()
	}
	if cells > MaxCells {
		line, col := at(m["classes"])
		l.errAt(line, col, "classes", "the grid has %d cells (%d pin sets × %d variants × %d classes × %d concurrency levels); at most %d (scenario.MaxCells)",
			cells, pins, len(l.s.Variants), len(l.s.Classes), len(ls.Concurrency), MaxCells)
		return
	}
	rounds := int64(max(ls.Repetitions, ls.MaxRepetitions))
	f, v := "load.repetitions", (*node)(nil)
	if ls.MaxRepetitions > ls.Repetitions {
		f, v = "load.max_repetitions", l.maxReps["load"]
		if pv := l.maxReps[join("profiles", profile)]; profile != "" && pv != nil {
			f, v = join("profiles", profile)+".max_repetitions", pv
		}
	} else if pf, pv := l.setIn(l.repsPos, profile, "repetitions"); pv != nil {
		f, v = pf, pv
	}
	line, col := at(m["load"])
	if v != nil {
		line, col = v.line, v.col
	}
	rungs := satMul(satMul(cells, rounds), 2)
	if rungs > MaxRungs {
		l.errAt(line, col, f, "%d cells × %d rounds × 2 targets is %d rungs; at most %d (scenario.MaxRungs)", cells, rounds, rungs, MaxRungs)
		return
	}
	if ls.Interleave == InterleaveSlice && l.s.Kind != KindGRPC && ls.SlicePairs() <= MaxSlicePairs {
		if slices := satMul(rungs, int64(ls.SlicePairs())); slices > MaxSlices {
			l.errAt(line, col, f, "%d rungs × %d slice pairs is %d slices to record; at most %d (scenario.MaxSlices): fewer rungs or longer slices",
				rungs, ls.SlicePairs(), slices, MaxSlices)
		}
	}
}

func (l *loader) concurrency(n *node, field string) ([]int, bool) {
	if !l.list(n, field, "positive integers") {
		return nil, false
	}
	if len(n.items) == 0 {
		l.errNode(n, field, "must not be empty")
		return nil, false
	}
	var out []int
	ok := true
	if len(n.items) > MaxCells {
		l.errNode(n, field, "%d levels: the grid may have at most %d cells (scenario.MaxCells)", len(n.items), MaxCells)
		return nil, false
	}
	seen := map[int]bool{}
	for i, it := range n.items {
		c, good := l.intRange(it, index(field, i), 1, MaxConcurrency)
		if !good {
			ok = false
			continue
		}
		if seen[c] {
			l.errNode(it, index(field, i), "%s is listed twice", it.errNum(strconv.Itoa(c)))
			ok = false
			continue
		}
		seen[c] = true
		out = append(out, c)
	}
	return out, ok
}

func (l *loader) data(n *node) {
	l.s.Data = map[string][]string{}
	if n == nil || !l.mapping(n, "data", "lists") {
		return
	}
	for i, k := range n.keys {
		f := join("data", k.text)
		v := n.vals[i]
		var items []string
		switch v.kind {
		case kindSeq:
			var ok bool
			if items, ok = l.strList(v, f); !ok {
				continue
			}
		case kindMap:
			m, ok := l.fields(v, f, "file")
			if !ok || m["file"] == nil {
				if ok {
					l.errNode(v, f+".file", "missing (want {file: path})")
				}
				continue
			}
			if items, ok = l.dataFile(m["file"], f+".file"); !ok {
				continue
			}
		default:
			l.errNode(v, f, "want a list of strings or {file: path}, got %s", v.describe())
			continue
		}
		if len(items) == 0 {
			l.errNode(v, f, "must not be empty")
			continue
		}
		if l.dataItems += len(items); l.dataItems > MaxDataItems {
			l.errNode(v, f, "the data lists together hold more than %d items (scenario.MaxDataItems)", MaxDataItems)
			return
		}
		l.s.Data[k.text] = items
	}
}

// dataFile reads the items of a data file, one per non-empty line. The
// file must be a regular file of at most MaxDataFileSize bytes, the data
// files together at most MaxDataBytes, and, unless
// LoadOptions.AllowDataOutside, inside the scenario's directory tree once
// every symlink is resolved: a scenario that a pull request changes cannot
// send /etc/passwd or /proc/self/environ to a target.
func (l *loader) dataFile(n *node, f string) ([]string, bool) {
	name, ok := l.nonEmptyStr(n, f)
	if !ok {
		return nil, false
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(l.s.Dir, p)
	}
	// Errors name the file as written when it came out of ${VAR}.
	shown := p
	if n.expanded {
		shown = n.raw
	}
	fail := func(err error) ([]string, bool) {
		var pe *fs.PathError
		if n.expanded && errors.As(err, &pe) {
			err = &fs.PathError{Op: pe.Op, Path: n.raw, Err: pe.Err}
		} else if n.expanded {
			err = fmt.Errorf("cannot read %s", n.raw)
		}
		l.errNode(n, f, "%v", err)
		return nil, false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fail(err)
	}
	if !l.opts.AllowDataOutside {
		root, err := filepath.EvalSymlinks(l.s.Dir)
		if err != nil {
			return fail(err)
		}
		if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			where := ""
			if real != p && !n.expanded {
				where = " (it resolves to " + real + ")"
			}
			l.errNode(n, f, "%s is outside the scenario's directory %s%s: a data file must be in the scenario's directory tree, symlinks resolved (the -allow-data-outside flag lifts this)",
				shown, l.s.Dir, where)
			return nil, false
		}
	}
	b, err := readRegular(real, int64(min(MaxDataFileSize, MaxDataBytes-l.dataBytes)))
	switch {
	case errors.Is(err, errNotRegular):
		l.errNode(n, f, "%s is not a regular file (a data file is read whole: a FIFO, a device or a directory is refused)", shown)
		return nil, false
	case errors.Is(err, errTooLarge) && l.dataBytes > MaxDataBytes-MaxDataFileSize:
		l.errNode(n, f, "with %s the data files together pass %s (scenario.MaxDataBytes)", shown, sizeText(MaxDataBytes))
		return nil, false
	case errors.Is(err, errTooLarge):
		l.errNode(n, f, "%s is larger than %s (scenario.MaxDataFileSize)", shown, sizeText(MaxDataFileSize))
		return nil, false
	case err != nil:
		return fail(err)
	}
	l.dataBytes += len(b)
	// Items share the text they are cut from: a line costs its header.
	text := string(b)
	var items []string
	for len(text) > 0 && len(items) <= MaxDataItems {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		if line = strings.TrimSuffix(line, "\r"); line != "" {
			items = append(items, line)
		}
	}
	if len(items) == 0 {
		l.errNode(n, f, "%s has no items (want one per non-empty line)", n.errText())
		return nil, false
	}
	return items, true
}

func (l *loader) variants(n *node) {
	if n == nil || !l.mapping(n, "variants", "variables by variant name") || len(n.keys) == 0 {
		l.s.Variants = []Variant{{Name: "", Vars: map[string]string{}}}
		l.allVariants = l.s.Variants
		return
	}
	if len(n.keys) > MaxVariants {
		l.errNode(n, "variants", "%d variants; at most %d (scenario.MaxVariants)", len(n.keys), MaxVariants)
		l.s.Variants = []Variant{{Name: "", Vars: map[string]string{}}}
		l.allVariants = l.s.Variants
		return
	}
	all := map[string]string{} // variable -> the first variant defining it
	var vs []Variant
	for i, k := range n.keys {
		f := join("variants", k.text)
		if !nameRE.MatchString(k.text) {
			l.errAt(k.line, k.col, f, "%q is not a valid variant name (want letters, digits, _ . -)", k.text)
		}
		_, vars, _, ok := l.strMap(n.vals[i], f)
		if vars == nil {
			vars = map[string]string{}
		}
		_ = ok
		for name := range vars {
			if _, seen := all[name]; !seen {
				all[name] = k.text
			}
		}
		vs = append(vs, Variant{Name: k.text, Vars: vars})
	}
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, v := range vs {
		for _, name := range names {
			if _, ok := v.Vars[name]; !ok {
				k := n.keys[i]
				l.errAt(k.line, k.col, join("variants", v.Name), "missing variable %q (variant %s defines it; every variant must define the same variables)", name, all[name])
			}
		}
	}
	l.varNames = names
	l.s.Variants = vs
	l.allVariants = vs
}

func (l *loader) classes(n *node) {
	l.s.AllClasses = map[string]*Class{}
	l.reqs = map[string]*reqSrc{}
	l.classPos = map[string]*node{}
	if n == nil {
		l.errAt(1, 1, "classes", "missing (want a list of request classes)")
		return
	}
	if !l.list(n, "classes", "classes") {
		return
	}
	if len(n.items) == 0 {
		l.errNode(n, "classes", "must not be empty")
		return
	}
	if len(n.items) > MaxClasses {
		l.errNode(n, "classes", "%d classes; at most %d (scenario.MaxClasses)", len(n.items), MaxClasses)
		return
	}
	if len(l.allVariants)*len(n.items) > MaxCells {
		// Every class is compiled and tried in every variant at load.
		l.errNode(n, "classes", "%d classes × %d variants; at most %d (scenario.MaxCells)", len(n.items), len(l.allVariants), MaxCells)
		return
	}
	type mixSrc struct {
		c    *Class
		n    *node
		f    string
		item *node
	}
	var mixes []mixSrc
	for i, it := range n.items {
		f := index("classes", i)
		m, ok := l.fields(it, f, "name", "request", "mix", "expect_status", "agreement", "grpc")
		if !ok {
			continue
		}
		c := &Class{Agreement: l.agreementSection(m["agreement"], f+".agreement", l.s.Agreement)}
		if v := m["name"]; v == nil {
			l.errNode(it, f+".name", "missing (every class needs a name)")
		} else if s, ok := l.nonEmptyStr(v, f+".name"); ok {
			switch {
			case !nameRE.MatchString(s):
				l.errNode(v, f+".name", "%q is not a valid class name (want letters, digits, _ . -)", v.errText())
			case l.classPos[s] != nil:
				p := l.classPos[s]
				l.errNode(v, f+".name", "%q is already the name of the class at line %d", v.errText(), p.line)
			default:
				c.Name = s
				l.classPos[s] = v
			}
		}
		req, mix := m["request"], m["mix"]
		if g := m["grpc"]; g != nil {
			if req != nil || mix != nil {
				l.errAt(g.keyLine, g.keyCol, f+".grpc", "grpc, request and mix are exclusive (want one of them)")
				continue
			}
			c.GRPC = true
			if r := l.grpcClass(g, f+".grpc"); r != nil {
				c.Request = &r.tmpl
				if c.Name != "" {
					l.reqs[c.Name] = r
				}
			}
			if v := m["expect_status"]; v != nil {
				l.errAt(v.keyLine, v.keyCol, f+".expect_status", "not for a gRPC class (a call succeeds with status OK)")
			}
			if c.Name != "" {
				l.s.AllClasses[c.Name] = c
				l.s.Classes = append(l.s.Classes, c)
			}
			continue
		}
		switch {
		case req == nil && mix == nil:
			l.errNode(it, f, "want request, grpc or mix")
		case req != nil && mix != nil:
			l.errAt(mix.keyLine, mix.keyCol, f+".mix", "request and mix are exclusive (want one of them)")
		case req != nil:
			if r := l.request(req, f+".request"); r != nil {
				c.Request = &r.tmpl
				if c.Name != "" {
					l.reqs[c.Name] = r
				}
			}
		default:
			mixes = append(mixes, mixSrc{c: c, n: mix, f: f + ".mix", item: it})
		}
		if v := m["expect_status"]; v != nil {
			if mix != nil {
				l.errAt(v.keyLine, v.keyCol, f+".expect_status", "only for a request class (a mix uses each component's own)")
			} else if l.list(v, f+".expect_status", "status codes") {
				for j, sn := range v.items {
					if code, ok := l.intRange(sn, index(f+".expect_status", j), 100, 599); ok {
						c.ExpectStatus = append(c.ExpectStatus, code)
					}
				}
			}
		}
		if c.Name != "" {
			l.s.AllClasses[c.Name] = c
			l.s.Classes = append(l.s.Classes, c)
		}
	}
	for _, mx := range mixes {
		if !l.mapping(mx.n, mx.f, "weights by class name") {
			continue
		}
		if len(mx.n.keys) == 0 {
			l.errNode(mx.n, mx.f, "must not be empty")
			continue
		}
		for i, k := range mx.n.keys {
			f := join(mx.f, k.text)
			w, ok := l.intRange(mx.n.vals[i], f, 1, math.MaxInt32)
			target := l.s.AllClasses[k.text]
			switch {
			case target == nil:
				msg := fmt.Sprintf("no class named %q", k.text)
				if s := didYouMean(k.text, slices.Sorted(mapKeys(l.s.AllClasses))); s != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", s)
				}
				l.errAt(k.line, k.col, f, "%s", msg)
				ok = false
			case target.Request == nil && !target.GRPC:
				l.errAt(k.line, k.col, f, "%s is a mix (a mix draws from request classes only)", k.text)
				ok = false
			}
			if ok {
				mx.c.Mix = append(mx.c.Mix, MixEntry{Class: k.text, Weight: w})
			}
		}
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

// reqSrc is a request class as written, with its templates compiled.
type reqSrc struct {
	tmpl   RequestTemplate
	method string
	path   *tmplSrc
	query  []kvTmpl
	header []kvTmpl
	body   *tmplSrc
}

type kvTmpl struct {
	key string
	t   *tmplSrc
}

func (l *loader) request(n *node, f string) *reqSrc {
	r := &reqSrc{method: "GET"}
	switch n.kind {
	case kindScalar:
		var p string
		r.method, p = splitRequest(n.text)
		if p == "" || !validMethod(r.method) {
			l.errNode(n, f, "%q is not a request (want \"METHOD /path\", e.g. \"GET /items?limit=10\")", n.errText())
			return nil
		}
		r.path = l.template(p, n, f)
		if r.path != nil && n.expanded {
			_, r.path.shown = splitRequest(n.raw)
		}
	case kindMap:
		m, ok := l.fields(n, f, "method", "path", "query", "headers", "body")
		if !ok {
			return nil
		}
		if v := m["method"]; v != nil {
			if s, ok := l.str(v, f+".method"); ok {
				if !validMethod(s) {
					l.errNode(v, f+".method", "%q is not an HTTP method (want e.g. GET, POST)", v.errText())
					return nil
				}
				r.method = s
			}
		}
		v := m["path"]
		if v == nil {
			line, col := n.reportPos()
			l.errAt(line, col, f+".path", "missing (want e.g. path: /items)")
			return nil
		}
		s, ok := l.nonEmptyStr(v, f+".path")
		if !ok {
			return nil
		}
		r.path = l.template(s, v, f+".path")
		if q := m["query"]; q != nil {
			r.query = l.kvTemplates(q, f+".query", false)
		}
		if h := m["headers"]; h != nil {
			r.header = l.kvTemplates(h, f+".headers", true)
		}
		if b := m["body"]; b != nil {
			if s, ok := l.str(b, f+".body"); ok {
				r.body = l.template(s, b, f+".body")
			}
		}
	default:
		l.errNode(n, f, "want \"METHOD /path\" or a mapping with method, path, query, headers, body; got %s", n.describe())
		return nil
	}
	if r.path == nil {
		return nil
	}
	if !strings.HasPrefix(r.path.src, "/") && !strings.HasPrefix(r.path.src, "{{") {
		l.errAt(r.path.line, r.path.col, r.path.field, "%q must start with /", r.path.shown)
	}
	r.tmpl = RequestTemplate{Method: r.method, Path: r.path.src}
	if r.query != nil {
		r.tmpl.Query = map[string]string{}
		for _, kv := range r.query {
			r.tmpl.Query[kv.key] = kv.t.src
		}
	}
	if r.header != nil {
		r.tmpl.Header = map[string]string{}
		for _, kv := range r.header {
			r.tmpl.Header[kv.key] = kv.t.src
		}
	}
	if r.body != nil {
		r.tmpl.Body = r.body.src
	}
	return r
}

// splitRequest splits "METHOD /path" or a bare "/path" (a GET).
func splitRequest(s string) (method, path string) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "/") {
		return "GET", s
	}
	method, rest, _ := strings.Cut(s, " ")
	return method, strings.TrimSpace(rest)
}

func (l *loader) kvTemplates(n *node, f string, header bool) []kvTmpl {
	keys, m, nodes, _ := l.strMap(n, f)
	var out []kvTmpl
	for _, k := range keys {
		kf := join(f, k)
		if header && !validToken(k) {
			l.errAt(nodes[k].keyLine, nodes[k].keyCol, kf, "%q is not a valid header name", k)
			continue
		}
		if k == "" {
			l.errAt(nodes[k].keyLine, nodes[k].keyCol, kf, "empty query parameter name")
			continue
		}
		if t := l.template(m[k], nodes[k], kf); t != nil {
			out = append(out, kvTmpl{key: k, t: t})
		}
	}
	return out
}

func validMethod(s string) bool { return validToken(s) }

// validToken reports whether s is an RFC 9110 token, as header names and
// methods must be.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

func (l *loader) gate(n *node) {
	g := &l.s.Gate
	*g = Gate{Confidence: DefaultConfidence, TieWithin: DefaultTieWithin, MaxErrorRate: DefaultMaxErrorRate, FailOn: []FailRule{{Metric: "rps"}},
		Rule: DefaultRule, Unresolved: DefaultUnresolved}
	if l.s.Kind == KindGoBench {
		g.FailOn = []FailRule{{Metric: "sec/op"}}
		// The paired default was measured on services under slices; a
		// Go benchmark keeps the overlap rule, as benchstat compares.
		g.Rule = RuleOverlap
	}
	if n == nil {
		return
	}
	m, ok := l.fields(n, "gate", "confidence", "tie_within", "fail_on", "max_error_rate", "max_error_increase", "metrics", "rule", "unresolved")
	if !ok {
		return
	}
	choice := func(key string, dst *string, want ...string) {
		v := m[key]
		if v == nil {
			return
		}
		if s, ok := l.str(v, "gate."+key); ok {
			if !slices.Contains(want, s) {
				l.errNode(v, "gate."+key, "%q: want %s", v.errText(), strings.Join(want, ", "))
				return
			}
			*dst = s
		}
	}
	choice("rule", &g.Rule, RuleOverlap, RulePaired)
	choice("unresolved", &g.Unresolved, UnresolvedWarn, UnresolvedFail, UnresolvedPass)
	num := func(key string, dst *float64, lo float64, hiIncl bool, hi float64, want string) {
		v := m[key]
		if v == nil {
			return
		}
		x, ok := l.float(v, "gate."+key)
		if !ok {
			return
		}
		if x < lo || x > hi || x == hi && !hiIncl {
			l.errNode(v, "gate."+key, "%s is out of range (want %s)", v.errNum(v.text), want)
			return
		}
		*dst = x
	}
	num("confidence", &g.Confidence, 0.5, false, 1, "0.5 <= confidence < 1, e.g. 0.95")
	num("tie_within", &g.TieWithin, 0, false, 1, "0 <= tie_within < 1, e.g. 0.10")
	num("max_error_rate", &g.MaxErrorRate, 0, true, 1, "0..1, e.g. 0.001")
	if m["max_error_increase"] != nil {
		inc := -1.0
		num("max_error_increase", &inc, 0, true, 1, "0..1, e.g. 0.001")
		if inc >= 0 {
			g.MaxErrorIncrease = &inc
		}
	}
	if v := m["metrics"]; v != nil && l.mapping(v, "gate.metrics", "settings by metric") {
		g.TieWithinFor = map[string]float64{}
		for i, k := range v.keys {
			f := join("gate.metrics", k.text)
			name := k.text
			if l.s.Kind == KindGoBench {
				name = TidyUnit(name)
			} else if !slices.Contains(Metrics, name) {
				l.errAt(k.line, k.col, f, "unknown metric %q (want one of %s)", k.text, strings.Join(Metrics, ", "))
				continue
			}
			fields := []string{"tie_within"}
			if l.s.Kind == KindGoBench {
				fields = append(fields, "better")
			}
			mm, ok := l.fields(v.vals[i], f, fields...)
			if !ok {
				continue
			}
			if tv := mm["tie_within"]; tv != nil {
				if x, ok := l.float(tv, f+".tie_within"); ok {
					if x < 0 || x >= 1 {
						l.errNode(tv, f+".tie_within", "%s is out of range (want 0 <= tie_within < 1, e.g. 0 for a deterministic unit)", tv.errNum(tv.text))
					} else {
						g.TieWithinFor[name] = x
					}
				}
			}
			if bv := mm["better"]; bv != nil {
				if b, ok := l.str(bv, f+".better"); ok {
					switch b {
					case "higher", "lower":
						if g.HigherBetterFor == nil {
							g.HigherBetterFor = map[string]bool{}
						}
						g.HigherBetterFor[name] = b == "higher"
					default:
						l.errNode(bv, f+".better", "%q: want higher or lower", bv.errText())
					}
				}
			}
		}
		if len(g.TieWithinFor) == 0 {
			g.TieWithinFor = nil
		}
	}
	v := m["fail_on"]
	if v == nil || !l.list(v, "gate.fail_on", "rules") {
		return
	}
	g.FailOn = []FailRule{}
	for i, it := range v.items {
		f := index("gate.fail_on", i)
		rm, ok := l.fields(it, f, "metric", "classes", "concurrency", "variants")
		if !ok {
			continue
		}
		var r FailRule
		if mv := rm["metric"]; mv == nil {
			l.errNode(it, f+".metric", "missing (want one of %s)", strings.Join(Metrics, ", "))
		} else if l.s.Kind == KindGoBench {
			// A benchmark's units are known once it ran: sec/op, B/op,
			// allocs/op, B/s or its own. ns/op and MB/s are the same as
			// sec/op and B/s, as benchstat tidies them.
			if s, ok := l.nonEmptyStr(mv, f+".metric"); ok {
				r.Metric = TidyUnit(s)
			}
		} else if s, ok := l.str(mv, f+".metric"); ok {
			if !slices.Contains(Metrics, s) {
				msg := fmt.Sprintf("unknown metric %q", mv.errText())
				if d := didYouMean(s, Metrics); d != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", d)
				} else {
					msg += fmt.Sprintf(" (want one of %s)", strings.Join(Metrics, ", "))
				}
				l.errNode(mv, f+".metric", "%s", msg)
			}
			r.Metric = s
			// A url target is not started by benchgate, so nothing measures
			// what it uses: a rule on its resources could never be decided
			// and would fail every run as inconclusive.
			if resourceMetric(s) {
				for _, t := range []Target{l.s.Baseline, l.s.Candidate} {
					if t.URL != "" {
						l.errNode(mv, f+".metric", "%s cannot be measured: the %s is a url target, whose resources benchgate does not see (use a command or image target)", s, t.Name)
						break
					}
				}
			}
		}
		if l.s.Kind == KindGoBench {
			// Benchmarks are found when they run: the globs cannot be
			// checked against them here.
			r.Classes = l.anyGlobs(rm["classes"], f+".classes")
			if cv := rm["concurrency"]; cv != nil {
				l.errAt(cv.keyLine, cv.keyCol, f+".concurrency", "not for a gobench scenario (a benchmark has no concurrency; name the -cpu suffix in classes)")
			}
			if vv := rm["variants"]; vv != nil {
				l.errAt(vv.keyLine, vv.keyCol, f+".variants", "not for a gobench scenario")
			}
			g.FailOn = append(g.FailOn, r)
			continue
		}
		r.Classes = l.globs(rm["classes"], f+".classes", "class", slices.Sorted(mapKeys(l.s.AllClasses)))
		var vnames []string
		for _, vr := range l.s.Variants {
			vnames = append(vnames, vr.Name)
		}
		r.Variants = l.globs(rm["variants"], f+".variants", "variant", vnames)
		if cv := rm["concurrency"]; cv != nil && l.list(cv, f+".concurrency", "concurrency levels or globs") {
			for j, cn := range cv.items {
				cf := index(f+".concurrency", j)
				if cn.kind == kindScalar && cn.scalar == scalarInt {
					if c, ok := l.intRange(cn, cf, 1, math.MaxInt32); ok {
						r.Concurrency = append(r.Concurrency, strconv.Itoa(c))
					}
					continue
				}
				if s, ok := l.nonEmptyStr(cn, cf); ok {
					if _, err := path.Match(s, ""); err != nil {
						l.errNode(cn, cf, "%q is not a glob (path.Match syntax, e.g. \"*\", \"1?\")", cn.errText())
					} else {
						r.Concurrency = append(r.Concurrency, s)
					}
				}
			}
		}
		g.FailOn = append(g.FailOn, r)
	}
}

// globs reads a list of path.Match globs, each of which must match one of
// names: a rule that can never apply is a typo that would pass silently.
func (l *loader) globs(n *node, f, what string, names []string) []string {
	if n == nil {
		return nil
	}
	items, ok := l.strList(n, f)
	if !ok {
		return nil
	}
	var out []string
	for i, g := range items {
		gf := index(f, i)
		if _, err := path.Match(g, ""); err != nil {
			l.errNode(n.items[i], gf, "%q is not a glob (path.Match syntax, e.g. \"*\", \"Q0?\")", n.items[i].errText())
			continue
		}
		matched := false
		for _, name := range names {
			if ok, _ := path.Match(g, name); ok {
				matched = true
				break
			}
		}
		if !matched {
			msg := fmt.Sprintf("%q matches no %s", n.items[i].errText(), what)
			if s := didYouMean(g, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			l.errNode(n.items[i], gf, "%s", msg)
			continue
		}
		out = append(out, g)
	}
	return out
}

type profileSrc struct {
	load     LoadSettings
	classes  []string
	variants []string
	pins     []string
}

func (l *loader) profilesSection(n *node) {
	l.profiles = map[string]*profileSrc{}
	if n == nil || !l.mapping(n, "profiles", "profiles by name") {
		return
	}
	for i, k := range n.keys {
		f := join("profiles", k.text)
		m, ok := l.fields(n.vals[i], f, "concurrency", "repetitions", "duration", "warmup", "timeout", "classes", "variants", "pins",
			"interleave", "slice", "settle", "max_repetitions")
		if !ok {
			continue
		}
		p := &profileSrc{load: l.s.Load}
		l.loadCommon(m, f, &p.load)
		if v := m["classes"]; v != nil {
			p.classes = l.names(v, f+".classes", "class", func(s string) bool { return l.s.AllClasses[s] != nil }, slices.Sorted(mapKeys(l.s.AllClasses)))
		}
		if v := m["variants"]; v != nil {
			var vnames []string
			for _, vr := range l.s.Variants {
				vnames = append(vnames, vr.Name)
			}
			p.variants = l.names(v, f+".variants", "variant", func(s string) bool { return slices.Contains(vnames, s) }, vnames)
		}
		if v := m["pins"]; v != nil {
			if !l.hasPins {
				l.errAt(v.keyLine, v.keyCol, f+".pins", "the file has no pins to choose from")
			} else {
				var pnames []string
				for _, ps := range l.s.PinSets {
					pnames = append(pnames, ps.Name)
				}
				// With a broken pin set, a name may be missing for that
				// reason alone: the error about the set says enough.
				exists := func(s string) bool { return l.pinsFailed || slices.Contains(pnames, s) }
				p.pins = l.names(v, f+".pins", "pin set", exists, pnames)
			}
		}
		l.profiles[k.text] = p
	}
}

func (l *loader) names(n *node, f, what string, exists func(string) bool, all []string) []string {
	items, ok := l.strList(n, f)
	if !ok {
		return nil
	}
	if len(items) == 0 {
		l.errNode(n, f, "must not be empty (leave the field out to keep every %s)", what)
		return nil
	}
	for i, s := range items {
		if !exists(s) {
			msg := fmt.Sprintf("no %s named %q", what, n.items[i].errText())
			if d := didYouMean(s, all); d != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", d)
			}
			l.errNode(n.items[i], index(f, i), "%s", msg)
		}
	}
	return items
}

func (l *loader) applyProfile(n *node, name string) {
	if name == "" {
		return
	}
	p := l.profiles[name]
	if p == nil {
		l.noProfile(n, name, slices.Collect(mapKeys(l.profiles)))
		return
	}
	l.s.Load = p.load
	if p.classes != nil {
		l.s.Classes = selected(l.s.Classes, p.classes, func(c *Class) string { return c.Name })
	}
	if p.variants != nil {
		l.s.Variants = selected(l.s.Variants, p.variants, func(v Variant) string { return v.Name })
	}
	if p.pins != nil {
		l.s.PinSets = selected(l.s.PinSets, p.pins, func(p Pins) string { return p.Name })
	}
}

// noProfile reports a -profile name the file does not define; have are
// the names it does.
func (l *loader) noProfile(n *node, name string, have []string) {
	slices.Sort(have)
	line, col := 1, 1
	if n != nil {
		line, col = n.reportPos()
	}
	if len(have) == 0 {
		l.errAt(line, col, "profiles", "no profile %q: the file defines no profiles", name)
	} else {
		l.errAt(line, col, "profiles", "no profile %q (have %s)", name, strings.Join(have, ", "))
	}
}

// selected keeps the items a profile names, in the file's order.
func selected[T any](items []T, names []string, name func(T) string) []T {
	var kept []T
	for _, it := range items {
		if slices.Contains(names, name(it)) {
			kept = append(kept, it)
		}
	}
	return kept
}
