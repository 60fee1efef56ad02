package benchdata

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/fsx"
)

// FormatVersion is the version of the results file this code writes.
// Version 2 added what changes a verdict (the correctness checks,
// max_error_increase, per-metric bands, gobench values): an older
// benchgate must refuse such a file rather than pass it by ignoring them.
// Version 3 added what the verdicts rest on beyond the overlap rule: the
// decision rule and the unresolved-tie policy, slice interleaving (a
// rung's Slices are its paired observations) and adaptive rounds (cells
// with more rounds than the plan's minimum). Version 4 holds a load
// rung's and a slice's measurements by metric in Values, as a Go
// benchmark's rung already did, rather than in a field each (rps, mean,
// p50, p90, p95, p99): Parse moves an earlier version's fields there
// (upgradeV3), so every earlier file reads, decides and merges as before.
// Version 5 names the correctness checks' findings `correctness`, which
// were `gates`: Parse reads an earlier version's `gates` into Correctness
// (a version 5 file holding `gates` is refused, not read without them).
// A file of any earlier version is of this version once read.
const FormatVersion = 5

// Results is the content of results.json.
type Results struct {
	Version int    `json:"version"`
	Tool    string `json:"tool"` // "benchgate <version>"
	// Kind is what was measured: "" or "http" for load on services,
	// "grpc" for load on gRPC services (Statuses keyed by code name),
	// "gobench" for go test -bench results (cells are benchmarks, a
	// rung's Values its measurements by unit), or "import:TOOL" for
	// another load tool's reports read from files, or for a benchmark
	// harness's files (TOOL one of BenchmarkFormats): see Benchmarks.
	Kind string `json:"kind,omitempty"`
	// Suite is set on results imported from a benchmark harness's files
	// (importers.Formats): they hold benchmarks as a gobench run does, so
	// the file says so itself rather than the results package keeping a
	// list of the importers' formats. Before format 4 it was read from
	// the Kind (v3Suites).
	Suite    bool         `json:"suite,omitempty"`
	Scenario ScenarioInfo `json:"scenario"`
	Env      Environment  `json:"environment"`
	// Plan is the grid in schedule order, with the planned rounds.
	Plan Plan `json:"plan"`
	// Shard is set when the run measured one part of a split grid.
	Shard *ShardInfo `json:"shard,omitempty"`
	// Shards lists, in a merged results file, each shard's run and
	// machine.
	Shards []ShardRun `json:"shards,omitempty"`
	// Correctness is what the correctness checks found before any load;
	// nil when the run had none or ended before them. Before version 5
	// it was "gates".
	Correctness *Correctness `json:"correctness,omitempty"`
	// Rungs holds every measured rung, in the order it ran.
	Rungs []Rung `json:"rungs"`
	// RoundsDone is, for a gobench run, the number of rounds of each pin
	// set ("" without pins) in which every package ran on both sides: its
	// cells are found as they run, and one side may lack a benchmark, so
	// rungs alone cannot say. Imported benchmarks (Benchmarks) record the
	// most repetitions any benchmark has on either side: each side's
	// summary takes all of its own.
	RoundsDone map[string]int `json:"rounds_done,omitempty"`
	// Status is "running" while rungs are being written, then "complete",
	// "cancelled" or "failed".
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// GitHub is where a run in GitHub Actions came from: benchgate comment
	// posts a saved result only to the PR whose head it measured.
	GitHub *GitHubInfo `json:"github,omitempty"`
	// Profiles are the CPU profiles taken after the measured rounds (the
	// scenario's profiling section), one per profiled cell; the rungs
	// that ran under them are not among Rungs and decide nothing.
	Profiles []CellProfile `json:"profiles,omitempty"`
}

// CellProfile is one cell's CPU profile of each side, taken while it ran
// the cell's identical load, or why it could not be taken.
type CellProfile struct {
	Cell Cell `json:"cell"`
	// Source is how: "pprof" (the target's net/http/pprof endpoint) or
	// "perf" (perf record of its processes).
	Source    string      `json:"source,omitempty"`
	Baseline  ProfileSide `json:"baseline"`
	Candidate ProfileSide `json:"candidate"`
	// Skipped says why the cell was not profiled ("" when it was).
	Skipped string `json:"skipped,omitempty"`
}

// ProfileSide is one side's profile: its file (a gzipped pprof profile,
// relative to the results file's directory), the requests the side
// answered while profiled (the diff is per request), and the seconds
// profiled.
type ProfileSide struct {
	File     string  `json:"file,omitempty"`
	Requests int64   `json:"requests"`
	Seconds  float64 `json:"seconds"`
}

// GitHubInfo is the pull request (or push) a run measured.
type GitHubInfo struct {
	Repository string `json:"repository"`
	EventName  string `json:"event_name"`
	PR         int    `json:"pr,omitempty"`
	BaseSHA    string `json:"base_sha,omitempty"`
	HeadSHA    string `json:"head_sha,omitempty"`
	RunURL     string `json:"run_url,omitempty"`
}

// ScenarioInfo identifies the scenario a run measured.
type ScenarioInfo struct {
	Name    string `json:"name"`
	File    string `json:"file"`
	Hash    string `json:"hash"` // sha256 of the file's bytes, hex
	Profile string `json:"profile,omitempty"`
	Seed    uint64 `json:"seed"`
	// Source is the scenario file's text, so a results file can be decided
	// and reproduced without the repository at hand.
	Source string `json:"source,omitempty"`
	// Gate is the scenario's gate section, resolved, so compare decides
	// with the rule that was declared before the run.
	Gate gate.Section `json:"gate"`
	// Load settings that were in force.
	Load LoadInfo `json:"load"`
}

// LoadInfo records the load section in force.
type LoadInfo struct {
	Concurrency []int   `json:"concurrency"`
	Duration    float64 `json:"duration_s"`
	Warmup      float64 `json:"warmup_s"`
	Repetitions int     `json:"repetitions"`
	Timeout     float64 `json:"timeout_s"`
	// Interleave is "round" ("" too) or "slice"; Slice and Settle are
	// the slices' measured and discarded seconds.
	Interleave string  `json:"interleave,omitempty"`
	Slice      float64 `json:"slice_s,omitempty"`
	Settle     float64 `json:"settle_s,omitempty"`
	// MaxRepetitions is the most rounds a cell may take (adaptive
	// rounds); 0 or Repetitions for a fixed design.
	MaxRepetitions int `json:"max_repetitions,omitempty"`
	// HTTPClient is the client HTTP load was sent with: "fast" or
	// "net/http" (load.http_client); "" for other workloads, and in
	// results of versions that had only net/http's.
	HTTPClient string `json:"http_client,omitempty"`
	// Rate lists an open loop's rates, requests a second (load.rate);
	// absent for the closed loop.
	Rate []int `json:"rate,omitempty"`
	// RestartEvery is load.restart: fresh instances of both targets were
	// started every RestartEvery rounds; 0 (absent) kept them up for the
	// whole pin set. Environment.Restarts counts what was done.
	RestartEvery int `json:"restart_every,omitempty"`
}

// Looks is how many times an adaptive design decides a cell: after the
// minimum of rounds and after each round up to the maximum. A fixed
// design looks once.
func (l LoadInfo) Looks() int { return max(1, l.MaxRepetitions-l.Repetitions+1) }

// Environment is where and what was measured.
type Environment struct {
	// RunID names this run: its docker containers and network carry it in
	// the label io.benchgate.run.
	RunID       string     `json:"run_id,omitempty"`
	Baseline    TargetInfo `json:"baseline"`
	Candidate   TargetInfo `json:"candidate"`
	Host        string     `json:"host"`
	CPUModel    string     `json:"cpu_model"`
	CPUs        int        `json:"cpus"`
	Kernel      string     `json:"kernel"`
	OS          string     `json:"os"`
	Arch        string     `json:"arch"`
	GoVersion   string     `json:"go_version"`
	ToolVersion string     `json:"tool_version"`
	// Pins describes each pin set: what was declared and what took effect.
	Pins []PinInfo `json:"pins,omitempty"`
	// Restarts counts the times both targets were stopped and fresh
	// instances started between rounds (load.restart), over all pin sets:
	// with one pin set each side ran as Restarts+1 instances. 0 without
	// load.restart.
	Restarts int       `json:"restarts,omitempty"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end,omitzero"`
}

// Fingerprint identifies the machine a run measured on, for comparing
// runs over time: only runs with equal fingerprints are comparable. It
// is a short hash of the CPU model, the number of CPUs, the kernel, the
// architecture and the declared pin sets, so a kernel upgrade or a new
// runner type starts a new series rather than reading as a regression.
func (e Environment) Fingerprint() string {
	h := sha256.New()
	fmt.Fprintf(h, "cpu=%s\ncpus=%d\nkernel=%s\nos=%s\narch=%s\n", e.CPUModel, e.CPUs, e.Kernel, e.OS, e.Arch)
	for _, p := range e.Pins {
		fmt.Fprintf(h, "pins=%s cpus=%s memory=%s generator=%s\n", p.Name, p.CPUs, p.Memory, p.GeneratorCPUs)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// FingerprintText is the fingerprint's parts, for a person.
func (e Environment) FingerprintText() string {
	s := fmt.Sprintf("%s × %d, %s/%s, kernel %s", orUnknown(e.CPUModel), e.CPUs, e.OS, e.Arch, orUnknown(e.Kernel))
	for _, p := range e.Pins {
		s += "; pins " + p.Name
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// PinInfo is one pin set of a run.
type PinInfo struct {
	Name          string `json:"name"`
	CPUs          string `json:"cpus,omitempty"`
	Memory        string `json:"memory,omitempty"`
	GeneratorCPUs string `json:"generator_cpus,omitempty"`
	// Applied lists the pins that took effect ("baseline cpuset 1-3 (docker)");
	// NotApplied those that could not, each with its reason. A report lists
	// the latter under threats to validity.
	Applied    []string `json:"applied,omitempty"`
	NotApplied []string `json:"not_applied,omitempty"`
}

// TargetInfo identifies one side of the comparison.
type TargetInfo struct {
	Name string `json:"name"` // "baseline" or "candidate"
	Kind string `json:"kind"` // "command", "url", "image"
	// What was run: the command line, the URL, or the image.
	Spec string `json:"spec"`
	// Commit is the git commit of the target's working directory when one
	// could be read, or the value given by the environment.
	Commit string `json:"commit,omitempty"`
	// Dirty marks a Commit whose work tree had changes to tracked files
	// when the run began: what ran is that commit and the changes.
	Dirty bool   `json:"dirty,omitempty"`
	URL   string `json:"url,omitempty"` // where it was reached
}

// Plan is the grid of a run.
type Plan struct {
	// PinSets names the pin sets in schedule order; empty without pins.
	PinSets []string `json:"pin_sets,omitempty"`
	Cells   []Cell   `json:"cells"`
	Rounds  int      `json:"rounds"`
	// MaxRounds is the most rounds a cell may take when rounds are
	// adaptive: cells whose verdict is still open after Rounds run more,
	// alone; 0 or Rounds for a fixed design.
	MaxRounds int `json:"max_rounds,omitempty"`
	// Estimate is the planned wall time in seconds, start-up excluded.
	Estimate float64 `json:"estimate_s"`
}

// Cell is one point of the grid: a class at a concurrency in a variant,
// under a pin set. Variant is "" when the scenario has no variants, Pins ""
// when it has no pins.
type Cell struct {
	Pins        string `json:"pins,omitempty"`
	Variant     string `json:"variant"`
	Class       string `json:"class"`
	Concurrency int    `json:"concurrency"`
	Rate        int    `json:"rate,omitempty"` // requests a second of an open loop; 0: closed
}

// String is the cell's name, as its decided cell's (gate.CellKey.String).
func (c Cell) String() string { return gate.CellKey(c).String() }

// Rung is one measurement: one target under load for one cell in one round.
type Rung struct {
	Cell
	Round int `json:"round"` // 0-based
	// Target is "baseline" or "candidate".
	Target string `json:"target"`
	// Position is 0 when this target ran first in the round's pair, 1 when
	// second; Order is the pair's order, "AB" (baseline first) or "BA".
	Position int       `json:"position"`
	Order    string    `json:"order"`
	Start    time.Time `json:"start"`
	// Duration is the measured time in seconds, warmup excluded.
	Duration float64 `json:"duration_s"`
	Requests int64   `json:"requests"`
	// InFlight counts the requests still in flight when a measured window
	// closed: not requests of the window (they ended in no window), but
	// the sign of a target that stopped answering, which Requests alone
	// would show as idle. Under slice interleaving it sums every slice's.
	InFlight int64 `json:"in_flight,omitempty"`
	// An open loop's schedule (the cell's Rate): Asked is how many
	// requests had their time in the measured window, Late those of them
	// sent more than a millisecond after it (load.LateAfter), Unsent those
	// never sent. A target that kept up answered about Asked; zero in a
	// closed loop.
	Asked  int64 `json:"asked,omitempty"`
	Late   int64 `json:"late,omitempty"`
	Unsent int64 `json:"unsent,omitempty"`
	// Errors counts failed requests by kind: "status" (an unexpected status
	// code), "timeout", "connect", "reset", "other".
	Errors   map[string]int64 `json:"errors,omitempty"`
	Statuses map[string]int64 `json:"statuses,omitempty"` // status code → count
	Bytes    int64            `json:"bytes"`              // response body bytes
	// Max is the slowest answered request's latency, seconds.
	Max float64 `json:"max"`
	// Resources the target used during the measured window, and the
	// generator's own CPU. ResourceSource says how they were read
	// ("cgroup", "proc", "docker"); "" means not measured, and then the
	// figures are zero and mean nothing.
	ResourceSource string  `json:"resource_source,omitempty"`
	CPUSeconds     float64 `json:"cpu_s,omitempty"`
	MemMean        int64   `json:"mem_mean_bytes,omitempty"`
	MemPeak        int64   `json:"mem_peak_bytes,omitempty"`
	GenCPUSeconds  float64 `json:"generator_cpu_s,omitempty"`
	// Histogram is the HdrHistogram of latencies in microseconds, in the
	// standard compressed base64 encoding (hdrhistogram-go Encode V2).
	Histogram string `json:"histogram,omitempty"`
	// Values are the rung's measurements by metric. Under load, those
	// the generator measures (gate.Measured): "rps", the answered
	// requests over Duration, and the latency statistics in seconds from
	// the rung's merged histogram of all answered requests (errors
	// included, transport failures excluded), set only when some request
	// was answered; an imported rung has those its tool recorded. A Go
	// benchmark's are its units, as benchfmt tidies them: "sec/op",
	// "B/op", "allocs/op", "B/s" and custom units, and the request fields
	// above are zero then.
	Values map[string]float64 `json:"values,omitempty"`
	// Slices are the rung's measured slices under slice interleaving, in
	// time order; the fields above cover all of them together.
	Slices []Slice `json:"slices,omitempty"`
	// Parts are the resources of each part of a target made of several (a
	// compose stack's services), in its order, over the same windows as
	// the rung's own; the rung's are the whole's.
	Parts []PartResources `json:"parts,omitempty"`
	// Slicing is how the rung's cell was cut when its requests were too
	// slow for the scenario's slices (chosen from the cell's first
	// warm-up); nil when the scenario's interleaving applied as written.
	Slicing *Slicing `json:"slicing,omitempty"`
}

// PartResources are what one part of a target used in a rung's measured
// windows; Source "" means it could not be measured.
type PartResources struct {
	Name       string  `json:"name"`
	Source     string  `json:"resource_source,omitempty"`
	CPUSeconds float64 `json:"cpu_s,omitempty"`
	MemMean    int64   `json:"mem_mean_bytes,omitempty"`
	MemPeak    int64   `json:"mem_peak_bytes,omitempty"`
}

// Slicing is a cell's interleaving as chosen from its warm-up.
type Slicing struct {
	// Interleave is "slice" (longer slices) or "round" (no slice length
	// fits the round's duration).
	Interleave string `json:"interleave"`
	// Slice and Settle are the cell's slice and settle in seconds (0
	// under round interleaving); Latency the warm-up's mean time of a
	// request on the slower side.
	Slice   float64 `json:"slice_s,omitempty"`
	Settle  float64 `json:"settle_s,omitempty"`
	Latency float64 `json:"latency_s"`
	Why     string  `json:"why"`
}

// Slice is one measured slice of a rung under slice interleaving: the
// baseline's and the candidate's slices of the same Pair in the same cell
// and round ran back to back, and make one paired observation.
type Slice struct {
	Pair int `json:"pair"` // 0-based, within the cell's round
	// Start is the offset of the measured part from the rung's Start, and
	// Duration its length, in seconds.
	Start    float64 `json:"start_s"`
	Duration float64 `json:"duration_s"`
	Requests int64   `json:"requests"` // ended in the measured part
	Answered int64   `json:"answered"` // of which answered, any status
	Errors   int64   `json:"errors"`
	// Values are the slice's measurements by metric, as a rung's: "rps"
	// (Answered / Duration) and the latency statistics of the slice's
	// own histogram, those only when something was answered.
	Values map[string]float64 `json:"values,omitempty"`
	// CPUSeconds is the target's CPU in the measured part where it can be
	// read at the slice's edges; 0 means not measured.
	CPUSeconds float64 `json:"cpu_s,omitempty"`
}

// Error kinds of Rung.Errors, in the order load generators count them.
const (
	ErrStatus  = "status"  // answered with a status that is not success
	ErrTimeout = "timeout" // outlived the per-request timeout
	ErrConnect = "connect" // never reached the target
	ErrReset   = "reset"   // the connection broke under it
	ErrOther   = "other"
)

// ErrorKinds lists the error kinds in that order.
var ErrorKinds = [...]string{ErrStatus, ErrTimeout, ErrConnect, ErrReset, ErrOther}

// SetErrors sets Errors from counts in ErrorKinds' order, leaving out
// kinds that did not happen (and Errors nil when none did).
func (r *Rung) SetErrors(counts [len(ErrorKinds)]int64) {
	for k, n := range counts {
		if n > 0 {
			if r.Errors == nil {
				r.Errors = map[string]int64{}
			}
			r.Errors[ErrorKinds[k]] = n
		}
	}
}

// SetLatency sets the latency fields from h, the rung's merged histogram
// of latencies in microseconds, and stores h itself encoded.
func (r *Rung) SetLatency(h *hdrhistogram.Histogram) error {
	if h.TotalCount() > 0 {
		r.Values = setLatencies(r.Values, h)
		r.Max = float64(h.Max()) * 1e-6
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return fmt.Errorf("encoding the histogram: %w", err)
	}
	r.Histogram = string(enc) // Encode already yields base64 text
	return nil
}

// SetLatency sets the slice's latency fields from h, its merged histogram
// of latencies in microseconds; they stay 0 when h is empty.
func (s *Slice) SetLatency(h *hdrhistogram.Histogram) {
	if h.TotalCount() > 0 {
		s.Values = setLatencies(s.Values, h)
	}
}

// setLatencies sets in v every latency metric of gate.Registry from h,
// latencies in microseconds, in seconds: each percentile at its
// Quantile, the mean where it has none.
func setLatencies(v map[string]float64, h *hdrhistogram.Histogram) map[string]float64 {
	const us = 1e-6
	if v == nil {
		v = map[string]float64{}
	}
	for _, d := range gate.Registry {
		switch {
		case d.Source != gate.FromLatency:
		case d.Quantile == 0:
			v[string(d.Metric)] = h.Mean() * us
		default:
			v[string(d.Metric)] = float64(h.ValueAtQuantile(d.Quantile)) * us
		}
	}
	return v
}

// Value is the rung's measurement of m as stored in Values (0 when it
// has none): rps and the latency statistics under load, a unit of a Go
// benchmark. Metric is the one that says whether it was measured.
func (r Rung) Value(m gate.Metric) float64 { return r.Values[string(m)] }

// SetValue stores x as the rung's measurement of m.
func (r *Rung) SetValue(m gate.Metric, x float64) {
	if r.Values == nil {
		r.Values = map[string]float64{}
	}
	r.Values[string(m)] = x
}

// Value is the slice's measurement of m as stored in Values, 0 when it
// has none.
func (s Slice) Value(m gate.Metric) float64 { return s.Values[string(m)] }

// SetValue stores x as the slice's measurement of m.
func (s *Slice) SetValue(m gate.Metric, x float64) {
	if s.Values == nil {
		s.Values = map[string]float64{}
	}
	s.Values[string(m)] = x
}

// Metric is the load rung's measurement of m and whether it measured it,
// as gate.Registry defines m: throughput always; a latency statistic
// when some request was answered (HasLatency) and it is stored; the
// error rate when some request ended; a resource when the target's
// resources were read (CPU per request when something was answered).
// A metric the registry does not define is a stored value (a Go
// benchmark's unit). A zero is a measurement: a latency left out is not.
func (r Rung) Metric(m gate.Metric) (float64, bool) {
	d, ok := gate.Lookup(m)
	if !ok {
		x, ok := r.Values[string(m)]
		return x, ok
	}
	switch d.Source {
	case gate.FromLatency:
		if !r.HasLatency() {
			return 0, false
		}
		x, ok := r.Values[string(m)]
		return x, ok
	case gate.FromErrors:
		return r.ErrorRate(), r.Requests > 0
	case gate.FromResources:
		if r.ResourceSource == "" {
			return 0, false
		}
		switch m {
		case gate.CPUPerReq:
			return r.CPUPerRequest(), r.Answered() > 0
		case gate.MemMean:
			return float64(r.MemMean), true
		case gate.MemPeak:
			return float64(r.MemPeak), true
		}
		return 0, false
	}
	x, ok := r.Values[string(m)]
	return x, ok
}

// Answered counts the responses of a rung: every status code seen.
func (r Rung) Answered() int64 {
	var n int64
	for _, c := range r.Statuses {
		n += c
	}
	return n
}

// HasLatency says whether the rung's latency figures measure something:
// some request was answered. A report imported from a tool that records
// no status codes (k6) counts as answered when some request did not fail
// and it has a median.
func (r Rung) HasLatency() bool {
	if len(r.Statuses) == 0 {
		return r.Value(gate.P50) > 0 && r.Requests > r.ErrorCount()
	}
	return r.Answered() > 0
}

// Cores is the target's CPU use in cores over the measured window.
func (r Rung) Cores() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return r.CPUSeconds / r.Duration
}

// CPUPerRequest is the target's CPU seconds per answered request.
func (r Rung) CPUPerRequest() float64 {
	if n := r.Answered(); n > 0 {
		return r.CPUSeconds / float64(n)
	}
	return 0
}

// ErrorCount is the sum of Errors.
func (r Rung) ErrorCount() int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

// ErrorRate is errors per request issued; 0 when none was.
func (r Rung) ErrorRate() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.ErrorCount()) / float64(r.Requests)
}

// CompleteRounds returns how many rounds ran every cell on both targets,
// in every pin set: the least of CompleteRoundsOf over the pin sets. A
// report says it decided on these.
func (r *Results) CompleteRounds() int {
	sets := r.Plan.PinSets
	if len(sets) == 0 {
		sets = []string{""}
	}
	n := -1
	for _, p := range sets {
		if c := r.CompleteRoundsOf(p); n < 0 || c < n {
			n = c
		}
	}
	return n
}

// Benchmarks says r holds benchmarks — go test -bench results (kind
// gobench) or a benchmark harness's imported files — rather than load on
// a service: a cell is a benchmark, a rung's Values its measurements by
// unit, a rule applies to the cells that measured its metric, and each
// side's summary stands on all of its own repetitions (RoundsDone), which
// may differ from cell to cell and side to side.
func (r *Results) Benchmarks() bool { return r.Kind == "gobench" || r.Suite }

// importPrefix marks the Kind of results read from another tool's files:
// "import:" and the tool or format (ImportedKind).
const importPrefix = "import:"

// ImportedKind is the Kind of results imported from tool's (or a
// benchmark format's) files.
func ImportedKind(tool string) string { return importPrefix + tool }

// Imported says whether r was imported from another tool's files, and
// from which tool or format: the one place Kind's "import:" is read.
func (r *Results) Imported() (tool string, ok bool) {
	return strings.CutPrefix(r.Kind, importPrefix)
}

// CompleteRoundsOf returns how many rounds ran every cell of the pin set
// (named as in Cell.Pins) on both targets. Pin sets run one after the
// other, so a run cancelled in its second pin set has complete rounds of
// the first: a cell is decided on the complete rounds of its own pin set.
func (r *Results) CompleteRoundsOf(pins string) int {
	if r.Benchmarks() {
		return r.RoundsDone[pins]
	}
	want := 0
	for _, c := range r.Plan.Cells {
		if c.Pins == pins {
			want += 2
		}
	}
	per := map[int]int{}
	for _, g := range r.Rungs {
		if g.Pins == pins {
			per[g.Round]++
		}
	}
	n := 0
	for want > 0 && per[n] == want {
		n++
	}
	return n
}

// RoundsOfCell is how many rounds of cell c count: the complete rounds of
// its pin set, and, once those are all the rounds the plan asks of every
// cell, the adaptive rounds after them in which c ran on both targets.
// An adaptive cell's rounds follow each other: a cell that was settled
// takes no more.
func (r *Results) RoundsOfCell(c Cell) int {
	n := r.CompleteRoundsOf(c.Pins)
	if r.Benchmarks() || n < r.Plan.Rounds {
		return n
	}
	sides := map[int]int{}
	for _, g := range r.Rungs {
		if g.Cell == c && g.Round >= n {
			sides[g.Round]++
		}
	}
	for sides[n] == 2 {
		n++
	}
	return n
}

// CellRounds is RoundsOfCell of every cell of the plan and of every cell
// a rung names, in one pass over the rungs: asking RoundsOfCell of each
// cell in turn costs cells × rungs, minutes for a large (or forged) file.
func (r *Results) CellRounds() map[Cell]int {
	type pinsRound struct {
		pins  string
		round int
	}
	type cellRound struct {
		cell  Cell
		round int
	}
	want := map[string]int{}
	for _, c := range r.Plan.Cells {
		want[c.Pins] += 2
	}
	perPins := map[pinsRound]int{}
	perCell := map[cellRound]int{}
	for _, g := range r.Rungs {
		perPins[pinsRound{g.Pins, g.Round}]++
		perCell[cellRound{g.Cell, g.Round}]++
	}
	complete := map[string]int{}
	completeOf := func(pins string) int {
		if r.Benchmarks() {
			return r.RoundsDone[pins]
		}
		n, ok := complete[pins]
		if !ok {
			for w := want[pins]; w > 0 && perPins[pinsRound{pins, n}] == w; n++ {
			}
			complete[pins] = n
		}
		return n
	}
	out := make(map[Cell]int, len(r.Plan.Cells))
	add := func(c Cell) {
		if _, done := out[c]; done {
			return
		}
		n := completeOf(c.Pins)
		if !r.Benchmarks() && n >= r.Plan.Rounds {
			for perCell[cellRound{c, n}] == 2 {
				n++
			}
		}
		out[c] = n
	}
	for _, c := range r.Plan.Cells {
		add(c)
	}
	for _, g := range r.Rungs {
		add(g.Cell)
	}
	return out
}

// Write stores r as dir/results.json atomically: a reader never sees a
// half-written file, and a crash leaves the previous version.
func Write(dir string, r *Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(filepath.Join(dir, "results.json"), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// WriteFile writes path whole or not at all (internal/fsx.WriteFile: a
// temporary file renamed into place, 0644, nothing left behind).
func WriteFile(path string, write func(io.Writer) error) error { return fsx.WriteFile(path, write) }

// Read loads a results file, refusing versions this code does not know.
// The file may come from a fork (benchgate comment reads an artifact): it
// must be a regular file of at most MaxResultsBytes, its lists and maps
// within the limits of limits.go and its histograms within
// MaxHistogramDigits and MaxHistogramHighest, each refused with the field
// named before it is decoded.
func Read(path string) (*Results, error) {
	b, err := fsx.ReadFileLimited(path, MaxResultsBytes)
	if err != nil {
		return nil, err
	}
	return Parse(b, path)
}

// Parse is Read of a file's bytes; name is used in errors.
func Parse(b []byte, name string) (*Results, error) {
	if len(b) > MaxResultsBytes {
		return nil, &fsx.TooLargeError{Path: name, Limit: MaxResultsBytes}
	}
	if _, err := checkLimits(b, reflect.TypeFor[resultsFile](), name, resultsLimits, nil); err != nil {
		return nil, err
	}
	var f resultsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: not a benchgate results file: %v", name, err)
	}
	r := f.Results
	if r.Version < 1 || r.Version > FormatVersion {
		return nil, fmt.Errorf("%s: results format version %d, this benchgate reads versions 1 to %d", name, r.Version, FormatVersion)
	}
	if r.Version >= 5 && f.Gates != nil {
		// Findings under the old key in a file of the new version would
		// be read as none: a failed pre-flight would then pass.
		return nil, fmt.Errorf("%s: results format version %d holds the correctness checks' findings under \"correctness\", yet this file has \"gates\", their key before version 5: refused rather than read without them", name, r.Version)
	}
	if r.Version < 4 {
		if err := upgradeV3(&r, b); err != nil {
			return nil, fmt.Errorf("%s: not a benchgate results file: %v", name, err)
		}
	}
	if r.Version < 5 {
		// What version 5 calls correctness was gates; a "correctness"
		// key means nothing in an earlier file.
		r.Correctness = f.Gates
	}
	// Every earlier version reads as this one.
	r.Version = FormatVersion
	var hr histogramReader
	for i := range r.Rungs {
		if e := r.Rungs[i].Histogram; e != "" {
			// A histogram that cannot be read at all is the report's to
			// count as unreadable; one that declares more than benchgate
			// writes is a forgery, refused here.
			var le *histogramLimitError
			if _, err := hr.header(e); errors.As(err, &le) {
				return nil, fmt.Errorf("%s: rungs[%d].histogram: %v", name, i, err)
			}
		}
	}
	return &r, nil
}

// resultsFile is a results file as Parse reads it: Results, and the key
// under which files before version 5 held the correctness checks'
// findings. Being a field of the type checkLimits walks, an old file's
// gates are bounded as Correctness is.
type resultsFile struct {
	Results
	Gates *Correctness `json:"gates"`
}

// v3Measures are the fields in which results before version 4 held a
// load rung's or a slice's measurements.
type v3Measures struct {
	RPS  *float64 `json:"rps"`
	Mean *float64 `json:"mean"`
	P50  *float64 `json:"p50"`
	P90  *float64 `json:"p90"`
	P95  *float64 `json:"p95"`
	P99  *float64 `json:"p99"`
}

// into adds the fields m holds to values by metric. A latency of 0 was
// not measured (nothing answered, or a percentile an imported report's
// tool did not record): version 4 leaves out what was not measured.
func (m v3Measures) into(values map[string]float64) map[string]float64 {
	for _, f := range []struct {
		metric gate.Metric
		x      *float64
	}{{gate.RPS, m.RPS}, {gate.Mean, m.Mean}, {gate.P50, m.P50}, {gate.P90, m.P90}, {gate.P95, m.P95}, {gate.P99, m.P99}} {
		if f.x == nil || f.metric != gate.RPS && *f.x == 0 {
			continue
		}
		if values == nil {
			values = map[string]float64{}
		}
		values[string(f.metric)] = *f.x
	}
	return values
}

// v3Suites are the import kinds that before format 4 held a benchmark
// harness's files, which format 4 marks with Suite.
var v3Suites = []string{
	"customSmallerIsBetter", "customBiggerIsBetter", "bmf", "pytest-benchmark",
	"googlebenchmark", "criterion", "hyperfine", "jmh",
}

// upgradeV3 moves the measurements of a results file before version 4,
// b, decoded into r, from their fields to Values.
// A Go benchmark's rung kept its units in Values already (its rps of 0
// was no measurement).
func upgradeV3(r *Results, b []byte) error {
	var old struct {
		Rungs []struct {
			v3Measures
			Slices []v3Measures `json:"slices"`
		} `json:"rungs"`
	}
	if f, imported := r.Imported(); imported && slices.Contains(v3Suites, f) {
		r.Suite = true
	}
	if r.Benchmarks() {
		return nil
	}
	if err := json.Unmarshal(b, &old); err != nil {
		return err
	}
	for i := range r.Rungs {
		g, o := &r.Rungs[i], old.Rungs[i]
		g.Values = o.into(g.Values)
		for j := range g.Slices {
			g.Slices[j].Values = o.Slices[j].into(g.Slices[j].Values)
		}
	}
	return nil
}

// Correctness is what the correctness checks found before any load: the
// pre-flight commands and the agreement probe. Strings in it that came
// from a target (output, bodies, names) are untrusted: reports escape them.
type Correctness struct {
	// Preflight holds one entry per pre-flight command and target, in
	// file order, the baseline's before the candidate's.
	Preflight []PreflightResult `json:"preflight,omitempty"`
	// Agreement is the agreement probe; nil when its mode was off for
	// every class or it never ran.
	Agreement *AgreementResult `json:"agreement,omitempty"`
	// Absent lists the classes a check left out of the grid, with why: a
	// report lists them, so a class is never silently missing.
	Absent []AbsentClass `json:"absent,omitempty"`
}

// PreflightResult is one pre-flight command run against one target.
type PreflightResult struct {
	Name   string `json:"name"`
	Target string `json:"target"` // "baseline" or "candidate"
	// Command is the argv as written, "{url}" left in, joined for display.
	Command string `json:"command"`
	Pass    bool   `json:"pass"`
	// ExitCode is the command's exit status; -1 when it did not exit by
	// itself (not found, timed out, killed).
	ExitCode int `json:"exit_code"`
	// LastLine is the last non-empty line of its output (stdout and
	// stderr interleaved), truncated.
	LastLine string `json:"last_line,omitempty"`
	// Error says why it could not run or was stopped ("timed out after
	// 1m0s"); empty when it ran to its end.
	Error    string  `json:"error,omitempty"`
	Duration float64 `json:"duration_s"`
	// Classes are the classes this command guards: when it fails on
	// either target they leave the grid and are listed in
	// Correctness.Absent.
	Classes []string `json:"classes,omitempty"`
	// Log is the file, relative to the results directory, holding the
	// command's whole output.
	Log string `json:"log,omitempty"`
}

// AgreementResult is the agreement probe: the first requests of each
// class's seeded stream sent to both targets and the answers compared.
type AgreementResult struct {
	Classes []ClassAgreement `json:"classes"`
}

// Counts returns how many probed classes agree and disagree.
func (a *AgreementResult) Counts() (agree, disagree int) {
	for _, c := range a.Classes {
		if c.Agree {
			agree++
		} else {
			disagree++
		}
	}
	return agree, disagree
}

// ClassAgreement is the probe of one class in one variant.
type ClassAgreement struct {
	Variant string `json:"variant"`
	Class   string `json:"class"`
	// Mode is the class's effective mode: "required" (a disagreement
	// fails the gate) or "warn" (it is reported only).
	Mode string `json:"mode"`
	// Requests is how many requests were compared.
	Requests int  `json:"requests"`
	Agree    bool `json:"agree"`
	// Format is how the bodies were compared: json, text, csv or xml (of
	// the first differing request, else of the last compared).
	Format string `json:"format,omitempty"`
	// First is the first request whose answers differ; nil when all agree.
	First *Disagreement `json:"first,omitempty"`
}

// Disagreement is the first differing answer of a class.
type Disagreement struct {
	// Index is the request's position in the stream, 0-based.
	Index  int    `json:"index"`
	Method string `json:"method"`
	Target string `json:"target"` // path and query as sent
	// BaselineStatus and CandidateStatus are the status codes; 0 when the
	// request failed (see Reason).
	BaselineStatus  int `json:"baseline_status"`
	CandidateStatus int `json:"candidate_status"`
	// Reason and Path locate the difference ("$.items[3].price: 12 vs 13",
	// "status 200 vs 500", "candidate: request failed: ...").
	Reason string `json:"reason"`
	Path   string `json:"path,omitempty"`
	// Baseline and Candidate are short raw excerpts of both bodies at the
	// first differing point.
	Baseline  string `json:"baseline,omitempty"`
	Candidate string `json:"candidate,omitempty"`
}

// AbsentClass is a class a gate took out of the grid.
type AbsentClass struct {
	Class  string `json:"class"`
	Reason string `json:"reason"` // "pre-flight conformance failed on candidate"
}
