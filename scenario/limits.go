package scenario

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"
)

// Limits on what a scenario file may ask for. Each one bounds the memory or
// the time that loading or running a scenario can take, so that a careless
// or hostile file is refused at load, with its line and column and exit
// code 2, before anything starts, instead of exhausting the machine. The
// values are far above what a benchmark needs; docs/scenario.md#limits
// lists them with what each one bounds and the test that holds it.
const (
	// MaxFileSize bounds the scenario file, which is also copied into
	// results.json.
	MaxFileSize = 1 << 20
	// MaxNesting bounds the nesting of the YAML: flow brackets, block
	// indentation and "- " entries, checked on the raw text before the
	// parser sees it (goccy/go-yaml's time and memory grow with the square
	// of the depth), and again on the parsed tree.
	MaxNesting = 200
	// MaxMappingKeys bounds the keys of one block mapping, which the YAML
	// parser also handles in time and memory quadratic in their number.
	// A flow mapping ({a: 1, b: 2}) has no such limit.
	MaxMappingKeys = 1000
	// MaxExpanded bounds the file's tree once aliases (*name, <<: *name)
	// are expanded, in nodes plus bytes of text, so that a few lines of
	// nested aliases cannot stand for billions of values.
	MaxExpanded = 4 << 20

	// MaxDataFileSize bounds one data file (data: {name: {file: path}}),
	// MaxDataBytes all of them together and MaxDataItems the items of all
	// data lists together.
	MaxDataFileSize = 16 << 20
	MaxDataBytes    = 64 << 20
	MaxDataItems    = 1_000_000

	// MaxConcurrency bounds each concurrency level (and a gobench -cpu
	// value): every worker of the load generator holds a request buffer
	// and two latency histograms, about 300 KB at the default timeout.
	MaxConcurrency = 10_000
	// MaxRate bounds each load.rate level: a request a microsecond, as
	// load.MaxRate.
	MaxRate = 1_000_000
	// MaxConnections bounds grpc.connections.
	MaxConnections = 1_000
	// MaxRounds bounds repetitions and max_repetitions.
	MaxRounds = 1_000
	// MaxClasses and MaxVariants bound the classes and the variants of a
	// file (every class is compiled and tried once per variant at load).
	MaxClasses  = 1_000
	MaxVariants = 100
	// MaxCells bounds the grid: pin sets × variants × classes ×
	// concurrency levels, as the profile leaves it.
	MaxCells = 10_000
	// MaxRungs bounds the rungs a run may record: cells × the most rounds
	// × 2 targets. results.json is rewritten after every rung, so the
	// time spent writing it grows with the square of the rungs.
	MaxRungs = 20_000
	// MaxSlicePairs bounds a round's slice pairs (duration / slice) and
	// MaxSlices every slice a run may record (rungs × slice pairs): each
	// is a record in results.json.
	MaxSlicePairs = 10_000
	MaxSlices     = 500_000
	// MaxDuration bounds every duration of a scenario: duration, warmup,
	// slice, settle, timeout, startup_timeout, a preflight's and
	// gobench's timeout; and the settling of a round (settle × slice
	// pairs). With the limits above, the plan's arithmetic cannot
	// overflow.
	MaxDuration = 24 * time.Hour

	// MaxTemplateOutput bounds what one template field (a path, a query or
	// header value, a body, a gRPC message) renders to, and separately
	// the results of its functions (printf, json, pick, …) in one
	// rendering. It is checked at load and, as the template runs, by a
	// writer that stops it.
	MaxTemplateOutput = 1 << 20
	// MaxRequestSize bounds what one request renders to, all its fields
	// together (path, query, headers, body or gRPC message and metadata).
	MaxRequestSize = 4 << 20
	// MaxTemplateSteps bounds the actions one request's templates may
	// execute, counted at load over their parse trees with every range
	// multiplied by its number of iterations (which must be known then:
	// an integer such as {{range 3}}, or the variables).
	MaxTemplateSteps = 10_000
)

// sizeText writes a size limit the way the docs do.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// durText writes a duration limit the way the docs do: 24h, not 24h0m0s.
func durText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// errNotRegular and errTooLarge are how readRegular refuses a file.
var (
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = errors.New("too large")
)

// readRegular reads the regular file at path, at most max bytes of it. It
// opens before it looks, so that what is checked is what is read, and
// opens without blocking, so that a FIFO is refused rather than waited on;
// a device (/dev/zero), a directory or a socket is refused without a read.
// A file that grows past max while it is read is refused too.
func readRegular(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "read", Path: path, Err: errNotRegular}
	}
	if fi.Size() > max {
		return nil, &os.PathError{Op: "read", Path: path, Err: errTooLarge}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &os.PathError{Op: "read", Path: path, Err: errTooLarge}
	}
	return b, nil
}

// satMul is a*b for non-negative a and b, or math.MaxInt64 when the product
// does not fit.
func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > (1<<63-1)/b {
		return 1<<63 - 1
	}
	return a * b
}
