package scenario

import (
	"regexp"
	"time"

	"github.com/benchgate/benchgate/gate"
)

// Scenario is a parsed, validated scenario with its profile applied: the
// model every other part of benchgate reads. Everything in it has been
// checked; nothing in it needs checking again, but for what depends on
// the machine that runs it: CheckCPUs.
type Scenario struct {
	File    string // path as given
	Dir     string // directory of File: relative paths resolve against it
	Hash    string // sha256 of the file's bytes, hex
	Source  string // the file's text
	Profile string // the applied profile, "" for none

	Name string
	Seed uint64
	// Kind is the workload: KindHTTP (requests to services, the
	// default) or KindGoBench (go test -bench of two versions of a Go
	// module).
	Kind string
	// GoBench is the gobench section; nil unless Kind is KindGoBench.
	GoBench *GoBench
	// GRPC is the grpc section; nil unless Kind is KindGRPC (a scenario
	// whose classes are gRPC calls).
	GRPC *GRPCSettings

	Baseline  Target
	Candidate Target

	// PinSets are the resource pin sets, an outer dimension of the grid:
	// both targets are restarted for each. In file order, only those the
	// profile selects; names are unique. Empty when the file has no pins.
	PinSets []Pins

	Load LoadSettings
	// Data lists by name, files already read (one item per non-empty line).
	Data map[string][]string
	// Classes in file order, only those the profile selects. A mix class
	// refers to other classes by name; those are always present in
	// AllClasses even when the profile leaves them out of the grid.
	Classes    []*Class
	AllClasses map[string]*Class
	// Variants in file order; a scenario without variants has exactly one,
	// named "", with no variables.
	Variants []Variant

	// Gate is the gate section, with gate.DefaultSection where the file
	// is silent.
	Gate gate.Section
	// Warnings are what the file may say but is advised against (fewer
	// than 3 rounds under the paired rule), each at the field that says
	// it: the CLI prints them on stderr before anything runs.
	Warnings []*Error

	// Agreement is the scenario's agreement section with its defaults;
	// each class has its own effective copy in Class.Agreement.
	Agreement Agreement
	// Preflight are the pre-flight commands, in file order.
	Preflight []Preflight
	// Profiling is when cells are profiled after the measured rounds
	// (the profiling section, DefaultProfiling when it is silent).
	Profiling Profiling

	// compiled holds the templates ready to run; Stream reads it.
	compiled *compiled
	// cpuPins are the pins section's cpusets, for CheckCPUs.
	cpuPins []cpuPin
	// places are where the file wrote the fields a run checks against
	// the machine after loading (a gobench target's ref or dir, the
	// module), for ErrorAt: [line, col] by field.
	places map[string][2]int
}

// Target is one side of the comparison. Exactly one of URL, Image and a
// Command without Image is set: Kind tells which.
type Target struct {
	Name string // "baseline" or "candidate"
	// Command is the argv of a command target, "{port}" replaced by a free
	// port when it runs. With Image it is the container's command instead
	// of the image's own (nil keeps the image's); it need not hold {port}.
	Command []string
	Build   []string // optional argv run once before start, in Dir
	Dir     string   // working directory of Build and Command (resolved)
	Env     map[string]string
	// URL is an already-running service: scheme://host[:port] with an
	// empty or "/" path, and no credentials, query or fragment, since the
	// load generator appends each request's path and query to it.
	URL string
	// Shown is the command, url or image as written in the file, before
	// ${VAR} expansion: what results and reports show, so a secret passed
	// through the environment never reaches a PR comment. A command is
	// its argv joined with spaces, an argument that is empty or holds
	// whitespace or a quote single-quoted as a shell would read it. An
	// image target shows its image only, even with a command.
	Shown string
	// Ref is a git commit-ish of the repository holding the scenario,
	// for a gobench target: benchgate checks it out into a temporary
	// worktree. A gobench target has a Ref or a Dir (the module's
	// directory, the scenario's own by default), nothing else.
	Ref string
	// Packages and Bench override GoBench's for this side of a gobench
	// scenario (nil, "": the scenario's): two clients of one tree compare
	// as two sides, paired by Rename.
	Packages []string
	Bench    string
	// Image is a docker image to run, with Command, Env, Port; it is
	// built before benchgate runs.
	Image  string
	Port   int    // container port of an image or compose target
	Health string // path polled until 2xx before any load; "/" unless the file says otherwise
	// Compose are a compose target's files (absolute, in the order
	// written: later ones override earlier ones, as docker compose -f
	// reads them), its project a stack of services; Service is the one
	// that receives the load, on container port Port. Env holds the
	// variables the files are interpolated with (over the environment).
	Compose []string
	Service string
	// Memory splits a compose target's memory by service (bytes), the
	// sizes as written in MemoryText; a service it does not name gets
	// none of its own.
	Memory     map[string]int64
	MemoryText map[string]string
	// Setup is a compose target's step after its stack is healthy and
	// before the first rung (e.g. load a corpus into the database); nil
	// for none.
	Setup *Setup
	// StartupTimeout bounds the build-less start until healthy.
	StartupTimeout time.Duration
	// Profile is how the target is profiled (targets.X.profile); nil for
	// the default: perf for a command target on Linux, none otherwise.
	Profile *TargetProfile
}

// Workload kinds.
const (
	KindHTTP    = "http"
	KindGoBench = "gobench"
)

// GoBench is how a gobench scenario runs the benchmarks of a Go module:
// each target is a version of the module (Target.Ref or Target.Dir), its
// test binaries are built once with go test -c, and each round runs every
// package's binary on both sides, in the seeded AB/BA order.
type GoBench struct {
	// Module is the module's root directory (absolute; gobench.module,
	// the scenario's directory by default). A Dir target is a copy of the
	// module elsewhere; a Ref target's module is at the same path,
	// relative to the repository's top level, in the ref's worktree.
	Module string
	// Packages are go list patterns relative to the module root, e.g.
	// "./..." (the default) or "./internal/store".
	Packages []string
	// Bench is the -test.bench regular expression; "." by default.
	Bench string
	// CPU is the -test.cpu list; empty leaves it to the binary (GOMAXPROCS).
	CPU []int
	// Benchtime is -test.benchtime as written ("1s", "1000x"); "" leaves the
	// default.
	Benchtime string
	// Timeout bounds one run of one test binary (-test.timeout too).
	Timeout time.Duration
	// Rename pairs differently named benchmarks: each result's cell name
	// (package-qualified, as gobench.CellName makes it) is rewritten by the
	// first rule whose pattern matches it, on both sides, so
	// "qoordinator.BenchmarkQoordinatorInsert_100rows-8" and
	// "ncorest.BenchmarkNcoRestInsert_100rows-8" can become one cell.
	Rename []Rename
}

// Rename is one rule of GoBench.Rename: Pattern.ReplaceAllString(name,
// Replace), Go regexp syntax with $1 for groups.
type Rename struct {
	Pattern *regexp.Regexp
	Replace string
}

// ApplyRename returns name rewritten by the first matching rule, or name.
func ApplyRename(rules []Rename, name string) string {
	for _, r := range rules {
		if r.Pattern.MatchString(name) {
			return r.Pattern.ReplaceAllString(name, r.Replace)
		}
	}
	return name
}

// Setup is a compose target's setup step: Command run once in a new
// container of Service (its image, environment and networks, as docker
// compose run does), which must exit 0 within Timeout.
type Setup struct {
	Service string
	Command []string
	Timeout time.Duration
}

// Kind is "command", "url", "image" or "compose". An image target with a
// Command is an image target: the command runs in the container.
func (t Target) Kind() string {
	switch {
	case len(t.Compose) > 0:
		return "compose"
	case t.Image != "":
		return "image"
	case t.URL != "":
		return "url"
	case len(t.Command) > 0:
		return "command"
	}
	return ""
}

// Pins are resource pins, identical for both targets.
type Pins struct {
	// Name labels the pin set in the grid and the report: the file's
	// name: field, else a description such as "cpus=1-3 memory=2GiB".
	Name          string
	CPUs          string // cpuset of each target, e.g. "1-3"; "" when unset
	Memory        int64  // bytes; 0 when unset
	MemoryText    string // as written, e.g. "2GiB"
	GeneratorCPUs string // cpuset of the load generator; "" when unset
}

// LoadSettings is the load section after the profile.
type LoadSettings struct {
	Concurrency []int
	// Rate lists an open loop's rates, requests a second, a dimension
	// of the grid as Concurrency is; nil for the closed loop. In an open
	// loop, Concurrency is the most requests in flight (Rates).
	Rate        []int
	Duration    time.Duration
	Warmup      time.Duration
	Repetitions int
	Timeout     time.Duration
	Defaults    Defaults
	// Interleave is how the two targets take turns within a cell's
	// round: InterleaveRound (one rung each, one after the other) or
	// InterleaveSlice (short alternating slices, see Slice and Settle).
	Interleave string
	// Slice is the measured time of one slice, Settle the time each slice
	// runs first without being counted (after every switch of target).
	Slice, Settle time.Duration
	// MaxRepetitions is the most rounds a cell whose gated verdict is
	// still open may take (adaptive rounds); equal to Repetitions for a
	// fixed design.
	MaxRepetitions int
	// HTTPClient is the client HTTP load is sent with: HTTPClientFast
	// (the default) or HTTPClientNetHTTP.
	HTTPClient string
	// RestartEvery is how many rounds an instance of each target serves
	// before both are stopped and fresh ones started (load.restart); 0
	// keeps them up for the whole pin set. A process's own state (heap
	// layout, JIT, GC pacing, caches) is then a draw per block of rounds,
	// which the rounds' spread sees, not one draw for the whole run.
	RestartEvery int
}

// Rates is the grid's rate levels: Rate, or the closed loop's 0 alone.
func (ls LoadSettings) Rates() []int {
	if len(ls.Rate) == 0 {
		return []int{0}
	}
	return ls.Rate
}

// HTTP clients of LoadSettings.HTTPClient.
const (
	HTTPClientFast    = "fast"     // benchgate's HTTP/1.1 client, at wrk's cost per request
	HTTPClientNetHTTP = "net/http" // Go's net/http Transport, HTTP/1.1
	// HTTPClientHTTP2 is Go's net/http Transport speaking HTTP/2 only:
	// over TLS for https targets, and with prior knowledge (h2c) for
	// http ones.
	HTTPClientHTTP2 = "http2"
)

// Interleavings of LoadSettings.Interleave.
const (
	InterleaveRound = "round"
	InterleaveSlice = "slice"
)

// SlicePairs is how many slice pairs a cell's round has under slice
// interleaving: Duration / Slice, rounded down, at least one.
func (ls LoadSettings) SlicePairs() int {
	if ls.Slice <= 0 {
		return 1
	}
	return max(1, int(ls.Duration/ls.Slice))
}

// Defaults are pinned on every request; a class's own header or query
// value of the same name wins.
type Defaults struct {
	Headers map[string]string
	Query   map[string]string
}

// Class is one kind of request, or a weighted mix of classes.
type Class struct {
	Name string
	// Request is set for a single-request class, nil for a mix.
	Request *RequestTemplate
	// Mix is set for a mix class: the classes it draws from, by weight.
	Mix []MixEntry
	// ExpectStatus lists the status codes that count as success; empty
	// means any 2xx.
	ExpectStatus []int
	// GRPC says the class is a gRPC call: Request.Method is "GRPC",
	// Request.Path the "/package.Service/Method", Request.Body the
	// message as JSON, Request.Header the metadata.
	GRPC bool
	// Agreement is how the agreement probe compares this class's
	// answers: the scenario's section with the class's own over it.
	Agreement Agreement
}

// MixEntry is one component of a mix.
type MixEntry struct {
	Class  string
	Weight int
}

// RequestTemplate is a class's request before its templates are executed.
type RequestTemplate struct {
	Method string
	Path   string            // template; may hold a query string
	Query  map[string]string // templates
	Header map[string]string // templates
	Body   string            // template
}

// Variant is a named set of variables that templates read with
// {{var "name"}} or {{.name}}.
type Variant struct {
	Name string
	Vars map[string]string
}

// StatusOK reports whether code counts as success for class.
func (s *Scenario) StatusOK(class string, code int) bool {
	c := s.AllClasses[class]
	if c == nil || len(c.ExpectStatus) == 0 {
		return code >= 200 && code < 300
	}
	for _, e := range c.ExpectStatus {
		if e == code {
			return true
		}
	}
	return false
}
