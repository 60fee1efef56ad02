package benchdata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/benchgate/benchgate/internal/fsx"
)

// The files here are what a fork can upload as the artifact benchgate
// comment reads: each must be refused in bounded memory and time.

// within runs f and fails the test if it takes longer than d: a
// regression that blocks fails instead of hanging the suite.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
	}
}

// allocated is the bytes f allocates, whatever it frees (and a little
// of what other goroutines allocate meanwhile).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestReadRefusesFIFO(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "results.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// No writer ever opens it: a blocking open would wait forever.
	within(t, 5*time.Second, func() {
		_, err := Read(path)
		var nr *fsx.NotRegularError
		if !errors.As(err, &nr) || nr.Path != path || !strings.Contains(err.Error(), "a named pipe") {
			t.Errorf("Read(FIFO) = %v, want a fsx.NotRegularError naming the path", err)
		}
		if _, err := ReadHistory(path); !errors.As(err, &nr) {
			t.Errorf("ReadHistory(FIFO) = %v, want a fsx.NotRegularError", err)
		}
	})
}

func TestReadRefusesDevZero(t *testing.T) {
	t.Parallel()
	// A symlink to /dev/zero has no size to check and never ends.
	path := filepath.Join(t.TempDir(), "results.json")
	if err := os.Symlink("/dev/zero", path); err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, func() {
		_, err := Read(path)
		var nr *fsx.NotRegularError
		if !errors.As(err, &nr) || !strings.Contains(err.Error(), path+": not a regular file (a character device)") {
			t.Errorf("Read(-> /dev/zero) = %v, want a fsx.NotRegularError naming the path", err)
		}
	})
	dir := t.TempDir()
	_, err := fsx.ReadFileLimited(dir, 10)
	var nr *fsx.NotRegularError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("fsx.ReadFileLimited(dir) = %v, want a fsx.NotRegularError", err)
	}
}

func TestParseHistoryStreamLimit(t *testing.T) {
	t.Parallel()
	// An endless stream stops at MaxHistoryBytes, not at the end of memory.
	if testing.Short() {
		t.Skip("reads 256 MiB")
	}
	within(t, 60*time.Second, func() {
		_, err := ParseHistory(endless{}, "endless")
		var tl *fsx.TooLargeError
		if !errors.As(err, &tl) {
			t.Errorf("ParseHistory(endless) = %v, want a fsx.TooLargeError", err)
		}
	})
}

// endless reads as spaces without end: one blank line.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// repeat is n copies of elem joined by commas.
func repeat(elem string, n int) string {
	return strings.TrimSuffix(strings.Repeat(elem+",", n), ",")
}

func TestReadRefusesMillionsOfEmptyRungs(t *testing.T) {
	// 2M empty rungs, 6 MB: decoded, over 600 MB of Rungs.
	data := []byte(`{"version":3,"rungs":[` + repeat("{}", 2_000_000) + `]}`)
	path := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	n := allocated(func() { _, err = Read(path) })
	want := fmt.Sprintf("%s: rungs[%d]: more than %d entries", path, MaxRungs, MaxRungs)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Read = %v, want %q", err, want)
	}
	var le *LimitError
	if !errors.As(err, &le) || le.File != path || le.Field != fmt.Sprintf("rungs[%d]", MaxRungs) {
		t.Errorf("error %#v, want a LimitError naming file and field", err)
	}
	// The file itself and little more.
	if n > uint64(len(data))+16<<20 {
		t.Errorf("refusing a %d-byte file allocated %d bytes", len(data), n)
	}
}

func TestReadLimits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, json, field string
	}{
		// Totals over the file, whatever the nesting: 1,001 slices in
		// each of 1,000 rungs.
		{"slices", `{"version":3,"rungs":[` + repeat(`{"slices":[`+repeat("{}", 1001)+`]}`, 1000) + `]}`, fmt.Sprintf("rungs[999].slices[%d]", MaxSlices-999*1001)},
		{"cells", `{"version":3,"plan":{"cells":[` + repeat("{}", MaxCells+1) + `]}}`, fmt.Sprintf("plan.cells[%d]", MaxCells)},
		{"grid", `{"version":3,"shard":{"grid":[` + repeat("{}", MaxCells+1) + `]}}`, fmt.Sprintf("shard.grid[%d]", MaxCells)},
		// Keys match fields without regard to case, as encoding/json
		// matches them, escapes and Unicode folding included.
		{"case", `{"version":3,"RUNGS":[` + repeat("{}", MaxRungs+1) + `]}`, fmt.Sprintf("RUNGS[%d]", MaxRungs)},
		{"escaped", `{"version":3,"r\u0075ngs":[` + repeat("{}", MaxRungs+1) + `]}`, fmt.Sprintf("rungs[%d]", MaxRungs)},
		{"fold", `{"version":3,"rungs":[{"ſlices":[` + repeat("{}", MaxSlices+1) + `]}]}`, fmt.Sprintf("rungs[0].ſlices[%d]", MaxSlices)},
		// A map is counted as a list is.
		{"map", `{"version":3,"rounds_done":{` + repeatKeys(MaxEntries+1) + `}}`, fmt.Sprintf(`rounds_done["k%d"]`, MaxEntries)},
		{"default", `{"version":3,"plan":{"pin_sets":[` + repeat(`""`, MaxEntries+1) + `]}}`, fmt.Sprintf("plan.pin_sets[%d]", MaxEntries)},
		{"nested default", `{"version":3,"shards":[{"environment":{"pins":[{"applied":[` + repeat(`""`, MaxEntries+1) + `]}]}}]}`, fmt.Sprintf("shards[0].environment.pins[0].applied[%d]", MaxEntries)},
		{"rung map", `{"version":3,"rungs":[` + repeat(`{"statuses":{"200":1,"500":1}}`, MaxRungEntries/2+1) + `]}`, ""},
		// The correctness checks' findings, under their key of version 5
		// and under "gates", their key before: an old file's are bounded
		// alike, not skipped as an unknown key and then decoded.
		{"correctness", `{"version":5,"correctness":{"preflight":[` + repeat("{}", MaxEntries+1) + `]}}`, fmt.Sprintf("correctness.preflight[%d]", MaxEntries)},
		{"old gates", `{"version":4,"gates":{"preflight":[` + repeat("{}", MaxEntries+1) + `]}}`, fmt.Sprintf("gates.preflight[%d]", MaxEntries)},
		{"old gates folded", `{"version":2,"GATES":{"absent":[` + repeat("{}", MaxEntries+1) + `]}}`, fmt.Sprintf("GATES.absent[%d]", MaxEntries)},
		{"old gates nested", `{"version":4,"gates":{"agreement":{"classes":[` + repeat("{}", MaxEntries+1) + `]}}}`, fmt.Sprintf("gates.agreement.classes[%d]", MaxEntries)},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.json), "r.json")
			var le *LimitError
			if c.field == "" {
				// Over MaxRungs first: either limit refuses it.
				if !errors.As(err, &le) {
					t.Errorf("Parse = %v, want a LimitError", err)
				}
				return
			}
			if !errors.As(err, &le) || le.File != "r.json" || le.Field != c.field {
				t.Errorf("Parse = %v, want a LimitError at %s", err, c.field)
			}
		})
	}
	// A long sliced run's measurements read: 20,000 slices (a 12-cell
	// gate of 5 rounds holds about 2,400) of six values each, far more
	// than the limit of a field with none of its own.
	slice := `{"values":{"rps":100,"mean":0.01,"p50":0.009,"p90":0.012,"p95":0.013,"p99":0.02}}`
	long := `{"version":4,"rungs":[` + repeat(`{"values":{"rps":100,"p95":0.013},"slices":[`+repeat(slice, 100)+`]}`, 200) + `]}`
	if r, err := Parse([]byte(long), "long.json"); err != nil || len(r.Rungs) != 200 || r.Rungs[199].Slices[99].Value("p99") != 0.02 {
		t.Errorf("a long sliced run: %v", err)
	}
	// At the limits a file reads: a cell per element, everything decoded.
	ok := `{"version":3,"plan":{"cells":[` + repeat(`{"class":"c"}`, MaxCells) + `]},"rungs":[` + repeat(`{"slices":[{}]}`, 1000) + `]}`
	r, err := Parse([]byte(ok), "ok.json")
	if err != nil || len(r.Plan.Cells) != MaxCells || len(r.Rungs) != 1000 || len(r.Rungs[999].Slices) != 1 {
		t.Errorf("a file at the limits: %v", err)
	}
}

func repeatKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":1`, i)
	}
	return b.String()
}

func TestParseHistoryLimits(t *testing.T) {
	t.Parallel()
	line := func(cells string) string {
		return `{"version":1,"date":"2026-01-01T00:00:00Z","fingerprint":"f","cells":[` + cells + `]}` + "\n"
	}
	// The cells of all records count together.
	per := MaxHistoryCells/4 + 1
	in := strings.Repeat(line(repeat("{}", per)), 4)
	_, err := ParseHistory(strings.NewReader(in), "h.jsonl")
	var le *LimitError
	if !errors.As(err, &le) || le.File != "h.jsonl:4" || !strings.HasPrefix(le.Field, "cells[") {
		t.Errorf("ParseHistory(too many cells) = %v, want a LimitError at h.jsonl:4", err)
	}
	in = strings.Repeat(line(""), MaxHistoryRecords+1)
	if _, err := ParseHistory(strings.NewReader(in), "h.jsonl"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("h.jsonl:%d: more than %d records", MaxHistoryRecords+1, MaxHistoryRecords)) {
		t.Errorf("ParseHistory(too many records) = %v", err)
	}
}

// encodeHistogram is a histogram of the geometry, with values, encoded as
// the runner encodes it.
func encodeHistogram(t testing.TB, lowest, highest int64, digits int, values ...int64) string {
	t.Helper()
	h := hdrhistogram.New(lowest, highest, digits)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(enc)
}

// forgedHistogram is the 60 bytes: 1..2^62 at 4 significant
// digits, 6.4 MB decoded.
const forgedHistogram = "HISTFAAAACR42pJpmSzMwMDAzAABLFCa0QHKsP8AoY8zMgECAAD//0koA4g="

func TestHistogramLimits(t *testing.T) {
	if len(forgedHistogram) != 60 {
		t.Fatalf("the forged histogram is %d bytes", len(forgedHistogram))
	}
	h, err := ReadHistogramHeader(forgedHistogram)
	if err == nil || h.Digits != 4 || h.Highest != 1<<62 {
		t.Errorf("header %+v, %v: want 4 digits up to 2^62, refused", h, err)
	}
	var d *hdrhistogram.Histogram
	if n := allocated(func() { d, err = DecodeHistogram(forgedHistogram) }); err == nil || d != nil || n > 256<<10 {
		t.Errorf("DecodeHistogram(forged) = %v, %v after %d bytes: want refused before the counts are allocated", d, err, n)
	}
	for _, c := range []struct {
		lowest, highest int64
		digits          int
		ok              bool
	}{
		{1, 30_000_000, 3, true},          // the runner's, at the default timeout
		{1, MaxHistogramHighest, 3, true}, // a day's timeout
		{1, 30_000_000, 1, true},
		{1, MaxHistogramHighest + 1, 3, false},
		{1, 30_000_000, 4, false},
	} {
		_, err := DecodeHistogram(encodeHistogram(t, c.lowest, c.highest, c.digits, 100))
		if (err == nil) != c.ok {
			t.Errorf("%d..%d at %d digits: %v, want ok %v", c.lowest, c.highest, c.digits, err, c.ok)
		}
	}
	// At the limits the counts take 224 KiB.
	if n := hdrhistogram.New(1, MaxHistogramHighest, MaxHistogramDigits).ByteSize(); n > 230_000 {
		t.Errorf("a histogram at the limits takes %d bytes", n)
	}

	// In a results file the forgery is refused with its rung named; a
	// histogram that cannot be read at all is left to the report.
	r := fmt.Sprintf(`{"version":3,"rungs":[{"histogram":%q},{"histogram":%q}]}`, encodeHistogram(t, 1, 30_000_000, 3, 5), forgedHistogram)
	if _, err := Parse([]byte(r), "r.json"); err == nil || !strings.HasPrefix(err.Error(), "r.json: rungs[1].histogram: histogram of 4 significant digits") {
		t.Errorf("Parse(forged histogram) = %v", err)
	}
	if _, err := Parse([]byte(`{"version":3,"rungs":[{"histogram":"not base64"}]}`), "r.json"); err != nil {
		t.Errorf("Parse(unreadable histogram) = %v, want it read", err)
	}
}

func TestMergeHistograms(t *testing.T) {
	// 150 forgeries (the 136 KB file) are refused one by one.
	forged := make([]string, 150)
	for i := range forged {
		forged[i] = forgedHistogram
	}
	var m *hdrhistogram.Histogram
	var n, bad int
	if a := allocated(func() { m, n, bad = MergeHistograms(forged) }); m != nil || n != 0 || bad != 150 || a > 1<<20 {
		t.Errorf("150 forgeries: %v, %d merged, %d bad, %d bytes allocated", m, n, bad, a)
	}

	// Histograms at the limits merge one at a time, each decoded sparsely:
	// what is allocated is the merged histogram and each one's inflater
	// (40 KiB), not 150 dense decodings (34 MB, held until the merge).
	big := make([]string, 150)
	for i := range big {
		big[i] = encodeHistogram(t, 1, MaxHistogramHighest, 3, int64(i+1), 1_000_000)
	}
	if a := allocated(func() { m, n, bad = MergeHistograms(big) }); m == nil || n != 150 || bad != 0 || a > 150*64<<10 {
		t.Errorf("150 histograms at the limits: %d merged, %d bad, %d bytes allocated", n, bad, a)
	}
	if m.TotalCount() != 300 || m.Min() != 1 || m.ValueAtQuantile(50) != 150 {
		t.Errorf("merged: count %d, min %d, p50 %d", m.TotalCount(), m.Min(), m.ValueAtQuantile(50))
	}

	// The same merge as the dense one: geometries differ, values agree.
	parts := []string{
		encodeHistogram(t, 1, 30_000_000, 3, 1, 2, 3, 1000, 2049),
		encodeHistogram(t, 1, 60_000_000, 2, 5, 50_000_000),
		"garbage",
		forgedHistogram,
	}
	m, n, bad = MergeHistograms(parts)
	want := hdrhistogram.New(1, 60_000_000, 3)
	for _, e := range parts[:2] {
		h, err := hdrhistogram.Decode([]byte(e))
		if err != nil {
			t.Fatal(err)
		}
		want.Merge(h)
	}
	if n != 2 || bad != 2 || m == nil || !m.Equals(want) {
		t.Errorf("merged %d, %d bad: %v, want the dense merge %v", n, bad, m, want)
	}
	if m, n, bad := MergeHistograms(nil); m != nil || n != 0 || bad != 0 {
		t.Errorf("MergeHistograms(nil) = %v, %d, %d", m, n, bad)
	}
}

func TestMergeBounded(t *testing.T) {
	t.Parallel()
	// A forged shard count lists a few missing shards, not 2^62 of them.
	p := &Results{Version: FormatVersion, Shard: &ShardInfo{Index: 1, Count: 1 << 62}}
	within(t, 5*time.Second, func() {
		_, err := Merge([]*Results{p})
		if err == nil || !strings.Contains(err.Error(), "missing shard(s) [2/4611686018427387904") || !strings.Contains(err.Error(), "more") {
			t.Errorf("Merge = %v", err)
		}
	})
	q := &Results{Version: FormatVersion, Shard: &ShardInfo{Index: 3, Count: 2}}
	if _, err := Merge([]*Results{q}); err == nil || !strings.Contains(err.Error(), "shard 3/2: no such shard") {
		t.Errorf("Merge(index out of range) = %v", err)
	}

	// Shards within the limits can add up past them: the merge refuses a
	// file no benchgate would read.
	var parts []*Results
	for i := 1; i <= 3; i++ {
		parts = append(parts, &Results{
			Version: FormatVersion, Shard: &ShardInfo{Index: i, Count: 3},
			Plan:  Plan{PinSets: make([]string, MaxEntries/2)},
			Rungs: []Rung{},
		})
	}
	if _, err := Merge(parts); err != nil {
		t.Fatalf("pin sets are the first shard's: %v", err)
	}
	for _, p := range parts {
		p.Correctness = &Correctness{Absent: make([]AbsentClass, 0, MaxEntries/2)}
		for j := range MaxEntries / 2 {
			p.Correctness.Absent = append(p.Correctness.Absent, AbsentClass{Class: fmt.Sprintf("%d-%d", p.Shard.Index, j)})
		}
	}
	var le *LimitError
	if _, err := Merge(parts); !errors.As(err, &le) || le.Field != "correctness.absent" {
		t.Errorf("Merge(too many absent classes together) = %v, want a LimitError at correctness.absent", err)
	}
}

func TestCellRounds(t *testing.T) {
	t.Parallel()
	// As RoundsOfCell of each cell, on a real file and on one cancelled in
	// its second round, with an adaptive cell.
	b, err := os.ReadFile("../cmd/benchgate/testdata/recorded/results.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(b, "recorded")
	if err != nil {
		t.Fatal(err)
	}
	cut := *r
	cut.Rungs = r.Rungs[:len(r.Rungs)-3]
	a, c := Cell{Class: "a"}, Cell{Class: "c"}
	adaptive := &Results{Plan: Plan{Cells: []Cell{a, c}, Rounds: 1}}
	for round, cells := range [][]Cell{{a, c}, {a}, {a}} {
		for _, cell := range cells {
			for _, target := range []string{"baseline", "candidate"} {
				adaptive.Rungs = append(adaptive.Rungs, Rung{Cell: cell, Round: round, Target: target})
			}
		}
	}
	for name, res := range map[string]*Results{"recorded": r, "cancelled": &cut, "adaptive": adaptive} {
		all := res.CellRounds()
		cells := slices.Clone(res.Plan.Cells)
		for _, g := range res.Rungs {
			cells = append(cells, g.Cell)
		}
		for _, c := range cells {
			if all[c] != res.RoundsOfCell(c) {
				t.Errorf("%s: %s: CellRounds %d, RoundsOfCell %d", name, c, all[c], res.RoundsOfCell(c))
			}
		}
	}
	if got := adaptive.CellRounds(); got[a] != 3 || got[c] != 1 {
		t.Errorf("adaptive: %v", got)
	}

	// At MaxCells cells of 10 rungs each, one pass: asking RoundsOfCell of
	// every cell took cells × rungs, over ten minutes.
	big := &Results{Plan: Plan{Rounds: 5}}
	for i := range MaxCells {
		cell := Cell{Class: fmt.Sprint(i), Concurrency: 1}
		big.Plan.Cells = append(big.Plan.Cells, cell)
		for round := range 5 {
			big.Rungs = append(big.Rungs, Rung{Cell: cell, Round: round, Target: "baseline"}, Rung{Cell: cell, Round: round, Target: "candidate"})
		}
	}
	within(t, 10*time.Second, func() {
		if got := big.CellRounds(); len(got) != MaxCells || got[big.Plan.Cells[0]] != 5 {
			t.Errorf("%d cells, the first of %d rounds", len(got), got[big.Plan.Cells[0]])
		}
	})
}
