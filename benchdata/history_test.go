package benchdata

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/gate"
)

var update = flag.Bool("update", false, "rewrite testdata/history from the generators")

func TestNewRecord(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	res := &Results{
		Scenario: ScenarioInfo{Name: "demo-api", Profile: "nightly"},
		Env: Environment{
			RunID: "r1", Start: start, CPUModel: "Xeon", CPUs: 8, Kernel: "6.1", OS: "linux", Arch: "amd64",
			Baseline:  TargetInfo{Name: "baseline", Commit: "v1.0.0"},
			Candidate: TargetInfo{Name: "candidate"},
		},
		GitHub: &GitHubInfo{BaseSHA: "base", HeadSHA: "head"},
	}
	sum := func(n int, m, hw float64) gate.Summary { return gate.Summary{N: n, Mean: m, HalfWidth: hw} }
	c := gate.Comparison{Cells: []gate.CellResult{{
		Key: gate.CellKey{Variant: "csv", Class: "Q01", Concurrency: 8},
		Decisions: []gate.Decision{
			{Metric: gate.RPS, Baseline: sum(5, 1000, 10), Candidate: sum(5, 900, 12)},
			{Metric: gate.Mean, Baseline: sum(5, 0.002, 0.0001), Candidate: sum(5, 0.002, 0.0001)},
			{Metric: gate.P95, Baseline: sum(5, 0.004, 0.0002), Candidate: sum(0, 0, 0)},
			{Metric: gate.MemMean, Baseline: sum(5, 1e6, 1e3), Candidate: sum(5, 1e6, 1e3)},
			{Metric: gate.MemPeak, Baseline: sum(5, 2e6, 1e3), Candidate: sum(5, 2e6, 1e3)},
			{Metric: "allocs/op", Baseline: sum(3, 12, 0), Candidate: sum(3, 14, 0)},
		},
	}}}
	r := NewRecord(res, c)
	if r.Version != HistoryVersion || !r.Date.Equal(start) || r.Scenario != "demo-api" || r.Profile != "nightly" || r.RunID != "r1" {
		t.Errorf("record header %+v", r)
	}
	if r.BaselineCommit != "v1.0.0" || r.CandidateCommit != "head" {
		t.Errorf("commits %q, %q: want the target's own, else the event's", r.BaselineCommit, r.CandidateCommit)
	}
	if r.Fingerprint != res.Env.Fingerprint() || r.Machine != res.Env.FingerprintText() {
		t.Errorf("fingerprint %q (%q)", r.Fingerprint, r.Machine)
	}
	var got []string
	for _, rc := range r.Cells {
		if rc.Cell != (Cell{Variant: "csv", Class: "Q01", Concurrency: 8}) {
			t.Errorf("cell %+v", rc.Cell)
		}
		got = append(got, rc.Target+" "+rc.Metric)
	}
	want := "baseline rps|candidate rps|baseline p95|baseline mem_peak|candidate mem_peak|baseline allocs/op|candidate allocs/op"
	if strings.Join(got, "|") != want {
		t.Errorf("record cells\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	if rc := r.Cells[1]; rc.Mean != 900 || rc.HalfWidth != 12 || rc.N != 5 {
		t.Errorf("candidate rps %+v", rc)
	}
}

func TestAppendReadHistory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "benchgate-history", "history.jsonl")
	recs := records("aaaaaaaaaaaa", 3, 1, day0, flat(1000), flat(0.004))
	// Appended out of date order: read back sorted.
	for _, i := range []int{2, 0, 1} {
		if err := AppendHistory(path, recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n != 3 {
		t.Errorf("%d lines, want one per record:\n%s", n, b)
	}
	got, err := ReadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d records", len(got))
	}
	for i, r := range got {
		if r.CandidateCommit != recs[i].CandidateCommit || !r.Date.Equal(recs[i].Date) || len(r.Cells) != 4 || r.Cells[1] != recs[i].Cells[1] {
			t.Errorf("record %d: %+v", i, r)
		}
	}

	// A line cut short by a crash: the next record starts on its own line,
	// and reading names the broken one.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"version":1,"date":"2026-`)
	f.Close()
	if err := AppendHistory(path, recs[0]); err != nil {
		t.Fatal(err)
	}
	_, err = ReadHistory(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":4: not a history record") {
		t.Errorf("error %v, want %s:4", err, path)
	}
	b, _ = os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[4], `{"version":1,"date":"2026-01-01T02:00:00Z"`) {
		t.Errorf("after a broken line:\n%s", b)
	}

	if err := AppendHistory(path, Record{Scenario: "x"}); err == nil || !strings.Contains(err.Error(), "without a date") {
		t.Errorf("a record without a date: %v", err)
	}
}

func TestReadHistoryErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ name, text, err string }{
		{"blank.jsonl", "\n\n" + `{"version":1,"date":"2026-01-01T00:00:00Z","fingerprint":"x","cells":[]}` + "\n\n", ""},
		{"garbage.jsonl", `{"version":1,"date":"2026-01-01T00:00:00Z","cells":[]}` + "\nnot json\n", "garbage.jsonl:2: not a history record"},
		{"two.jsonl", `{"version":1,"date":"2026-01-01T00:00:00Z"} {"version":1}` + "\n", "two.jsonl:1: not a history record: more than one JSON value"},
		{"future.jsonl", "\n" + `{"version":2,"date":"2026-01-01T00:00:00Z"}`, "future.jsonl:2: history record version 2, this benchgate reads versions 1 to 1"},
		{"nodate.jsonl", `{"version":1}`, "nodate.jsonl:1: history record without a date"},
		{"type.jsonl", `{"version":1,"date":"2026-01-01T00:00:00Z","cells":[{"n":"five"}]}`, "type.jsonl:1: not a history record"},
	} {
		path := filepath.Join(dir, tc.name)
		os.WriteFile(path, []byte(tc.text), 0o644)
		recs, err := ReadHistory(path)
		switch {
		case tc.err == "" && (err != nil || len(recs) != 1):
			t.Errorf("%s: %d records, %v", tc.name, len(recs), err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
	if _, err := ReadHistory(filepath.Join(dir, "missing.jsonl")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

// The files in testdata/history are made by the generators above (go test
// -run TestHistoryTestdata -update rewrites them): nightly.jsonl is 60
// nights on machine 3f2a9c1b7d4e where the candidate's rps drops 15% at
// c37, with 5 nights of another machine interleaved (too few to test),
// and the CLI's tests read it.
func TestHistoryTestdata(t *testing.T) {
	recs := records("3f2a9c1b7d4e", 60, 1, day0, stepAt(37, 1000, 850), flat(0.004))
	other := records("9e8d7c6b5a49", 5, 2, day0.Add(12*time.Hour), flat(700), flat(0.006))
	for i := range recs {
		recs[i].Machine = "Intel(R) Xeon(R) Gold 6338 × 8, linux/amd64, kernel 6.8.0-45-generic; pins default"
	}
	for i := range other {
		other[i].Machine = "AMD EPYC 7763 × 4, linux/amd64, kernel 6.5.0-1025-azure"
	}
	all := append(recs[:30:30], other...)
	all = append(all, recs[30:]...)
	tmp := filepath.Join(t.TempDir(), "nightly.jsonl")
	for _, r := range all {
		if err := AppendHistory(tmp, r); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := os.ReadFile(tmp)
	path := filepath.Join("testdata", "history", "nightly.jsonl")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read, err := ReadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	// Compared as records, to the last bits of a float: a platform that
	// fuses multiply-adds may round the generator's noise differently.
	gen, err := ReadHistory(tmp)
	if err != nil {
		t.Fatal(err)
	}
	same := len(read) == len(gen)
	for i := 0; same && i < len(read); i++ {
		a, b := read[i], gen[i]
		same = len(a.Cells) == len(b.Cells) && a.CandidateCommit == b.CandidateCommit && a.Fingerprint == b.Fingerprint && a.Date.Equal(b.Date)
		for j := 0; same && j < len(a.Cells); j++ {
			x, y := a.Cells[j], b.Cells[j]
			same = x.Cell == y.Cell && x.Target == y.Target && x.Metric == y.Metric && x.N == y.N &&
				math.Abs(x.Mean-y.Mean) <= 1e-12*math.Abs(y.Mean)
		}
	}
	if !same {
		t.Fatalf("%s is not what the generator makes: run go test ./benchdata -run TestHistoryTestdata -update", path)
	}
	d := AnalyzeDrift(read, ChangePointOptions{})
	if len(d.Findings) != 1 || d.Findings[0].FromCommit != "c36" || d.Findings[0].ToCommit != "c37" || !d.Findings[0].Worse {
		t.Errorf("findings %+v", d.Findings)
	}
	if len(d.Fingerprints) != 2 || d.Fingerprints[1].Skipped == "" {
		t.Errorf("fingerprints %+v", d.Fingerprints)
	}
}

// A merged run is one record: on the shards' common machine, or when they
// ran on machines of different fingerprints, on a mixed one that drift
// skips, since which machine measured a cell is not known.
func TestNewRecordShards(t *testing.T) {
	t.Parallel()
	xeon := Environment{RunID: "s1", CPUModel: "Xeon", CPUs: 8, Kernel: "6.8", OS: "linux", Arch: "amd64"}
	xeon2 := xeon
	xeon2.RunID, xeon2.Host = "s2", "other-host"
	epyc := Environment{RunID: "s3", CPUModel: "EPYC", CPUs: 4, Kernel: "6.5", OS: "linux", Arch: "amd64"}
	start := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	merged := func(envs ...Environment) *Results {
		res := &Results{Scenario: ScenarioInfo{Name: "demo-api"}, Env: envs[0]}
		res.Env.RunID, res.Env.Start = "", start
		for i, e := range envs {
			res.Shards = append(res.Shards, ShardRun{Index: i + 1, RunID: e.RunID, Status: "complete", Fingerprint: e.Fingerprint(), Env: e})
		}
		return res
	}
	r := NewRecord(merged(xeon, xeon2), gate.Comparison{})
	if r.Fingerprint != xeon.Fingerprint() || r.Machine != xeon.FingerprintText() || r.RunID != "s1+s2" {
		t.Errorf("shards on one machine type: %q %q %q", r.Fingerprint, r.Machine, r.RunID)
	}
	r = NewRecord(merged(xeon, epyc), gate.Comparison{})
	if !strings.HasPrefix(r.Fingerprint, MixedPrefix) || !strings.Contains(r.Fingerprint, xeon.Fingerprint()) ||
		!strings.Contains(r.Fingerprint, epyc.Fingerprint()) || !strings.Contains(r.Machine, "EPYC × 4") {
		t.Errorf("shards on two machine types: %q %q", r.Fingerprint, r.Machine)
	}
	recs := records(r.Fingerprint, 60, 1, day0, stepAt(37, 1000, 850), flat(0.004))
	d := AnalyzeDrift(recs, ChangePointOptions{})
	if len(d.Findings) != 0 || len(d.Fingerprints) != 1 || !strings.Contains(d.Fingerprints[0].Skipped, "different fingerprints") {
		t.Errorf("mixed machines: %+v", d)
	}
}

// TestHistoryDates: a record dated before HistoryFloor, or after now by
// more than ClockSkew, is refused with its file, line and field; one a
// few hours ahead (a clock a little fast) is read.
func TestHistoryDates(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	line := func(date string) string { return `{"version":1,"date":"` + date + `","cells":[]}` + "\n" }
	for _, c := range []struct{ date, err string }{
		{"2000-01-01T00:00:00Z", ""},
		{"2026-06-02T11:00:00Z", ""},
		{"1999-12-31T23:59:59Z", `h.jsonl:2: field "date": 1999-12-31T23:59:59Z is before 2000-01-01, the earliest date a history takes`},
		{"0001-01-01T02:00:00Z", `h.jsonl:2: field "date": 0001-01-01T02:00:00Z is before 2000-01-01`},
		{"2026-06-02T12:00:01Z", `h.jsonl:2: field "date": 2026-06-02T12:00:01Z is after now (2026-06-01T12:00:00Z) by more than a day`},
		{"9999-01-01T00:00:00Z", `h.jsonl:2: field "date": 9999-01-01T00:00:00Z is after now`},
	} {
		recs, err := parseHistory(strings.NewReader(line("2026-01-01T00:00:00Z")+line(c.date)), "h.jsonl", now)
		switch {
		case c.err == "" && (err != nil || len(recs) != 2):
			t.Errorf("%s: %d records, %v", c.date, len(recs), err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want %q", c.date, err, c.err)
		}
	}
	// The real clock: a record of 9999 is not appended, nor read back.
	path := filepath.Join(t.TempDir(), "h.jsonl")
	r := Record{Date: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), Scenario: "x"}
	if err := AppendHistory(path, r); err == nil || !strings.Contains(err.Error(), "history record: date: 9999-01-01T00:00:00Z is after now") {
		t.Errorf("append of 9999: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the refused append wrote %s: %v", path, err)
	}
	os.WriteFile(path, []byte(line("9999-01-01T00:00:00Z")), 0o644)
	if _, err := ReadHistory(path); err == nil || !strings.Contains(err.Error(), path+`:1: field "date": 9999-01-01T00:00:00Z is after now`) {
		t.Errorf("read of 9999: %v", err)
	}
}

// TestCheckRunURL: a record's run page is an https address, without a
// user, of at most 2048 bytes; nothing else is kept or linked.
func TestCheckRunURL(t *testing.T) {
	t.Parallel()
	for u, ok := range map[string]bool{
		"https://github.com/o/r/actions/runs/7":              true,
		"https://ghe.example.com/o/r/actions/runs/7?check=1": true,
		"http://github.com/o/r/actions/runs/7":               false,
		"javascript:alert(1)//https://x":                     false,
		"https://user:pw@github.com/o/r":                     false,
		"/o/r/actions/runs/7":                                false,
		"https://" + strings.Repeat("a", 2048) + ".com":      false,
		"": false,
	} {
		if err := CheckRunURL(u); (err == nil) != ok {
			t.Errorf("CheckRunURL(%.60q): %v, want ok %v", u, err, ok)
		}
	}
}
