package benchdata

// File size limits. A file above its limit is refused, never read in part.
const (
	// MaxResultsBytes bounds a results.json. A real run's file grows by
	// about 80 KiB a rung under the default slice interleaving (10 s in
	// 60 ms slices); this is over 3,000 such rungs, or the element limits
	// of limits.go in their most compact form.
	MaxResultsBytes = 256 << 20
	// MaxHistoryBytes bounds a history file (JSON Lines, one record a run).
	MaxHistoryBytes = 256 << 20
	// MaxDecisionsBytes bounds a decisions.json.
	MaxDecisionsBytes = 256 << 20
	// MaxBenchOutputBytes bounds a saved go test -bench output.
	MaxBenchOutputBytes = 256 << 20
	// MaxReportBytes bounds another load tool's JSON report (vegeta, ghz,
	// oha, k6): each is a summary of a few KiB.
	MaxReportBytes = 64 << 20
	// MaxProfileBytes bounds a CPU profile (a gzipped pprof file) read
	// back from a results directory or taken along by a merge: a
	// profiled cell's is a few hundred KiB.
	MaxProfileBytes = 64 << 20
)
