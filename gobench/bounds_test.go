package gobench

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
)

// within fails the test if f takes longer than d.
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

func TestParseManyBadLines(t *testing.T) {
	t.Parallel()
	// Each bad line's text was found by scanning from the first line: 200,000
	// of them in 5 MB took quadratic time. The error lists maxListed and
	// counts the rest.
	in := "pkg: p\n" + strings.Repeat("BenchmarkX 1 x ns/op\n", 200_000)
	within(t, 10*time.Second, func() {
		rs, err := Parse(strings.NewReader(in), nil)
		if len(rs) != 0 || err == nil {
			t.Fatalf("%d results, %v", len(rs), err)
		}
		msg := err.Error()
		if n := strings.Count(msg, "\n") + 1; n != maxListed+1 {
			t.Errorf("%d lines of error, want %d", n, maxListed+1)
		}
		if !strings.Contains(msg, `output:2: parsing measurement: invalid syntax: "BenchmarkX 1 x ns/op"`) ||
			!strings.HasSuffix(msg, fmt.Sprintf("output: and %d more lines that could not be read", 200_000-maxListed)) {
			t.Errorf("error:\n%s", msg)
		}
	})
}

func TestParseLimits(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("BenchmarkX 1 1 ns/op\n", MaxResults+1)
	if _, err := Parse(strings.NewReader(in), nil); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("output:%d: more than %d benchmark results", MaxResults+1, MaxResults)) {
		t.Errorf("too many results: %v", err)
	}
	in = strings.Repeat("BenchmarkX 1 1 ns/op 1 a/op 1 b/op 1 c/op 1 d/op 1 e/op\n", MaxValues/6+1)
	if _, err := Parse(strings.NewReader(in), nil); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d measurements", MaxValues)) {
		t.Errorf("too many values: %v", err)
	}
	if testing.Short() {
		return
	}
	// An output that never ends (a benchmark printing in a loop) stops at
	// MaxOutputBytes.
	within(t, 60*time.Second, func() {
		if _, err := Parse(endless{}, nil); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d bytes", MaxOutputBytes)) {
			t.Errorf("endless output: %v", err)
		}
	})
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestLineTextCutsRunes(t *testing.T) {
	t.Parallel()
	f := lineFinder{data: []byte("a\n  " + strings.Repeat("é", 500) + "\nz"), line: 1}
	if s := f.text(2); s != strings.Repeat("é", 120)+"…" {
		t.Errorf("line 2: %q", s)
	}
	if s := f.text(1); s != "" {
		t.Errorf("a line before the last asked for: %q", s)
	}
	if s := f.text(3); s != "z" {
		t.Errorf("line 3: %q", s)
	}
	if s := f.text(9); s != "" {
		t.Errorf("past the end: %q", s)
	}
}

// FuzzParse fuzzes the benchfmt path: the output of a pull request's
// benchmarks, or a saved file. What it reads must make rungs a results
// file can hold: finite values, a benchmark name.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"two-packages.txt", "malformed.txt"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("BenchmarkX-4 10 NaN ns/op 5 MB/s\nBenchmarkY 1 +Inf x/op\n"))
	f.Add([]byte("Unit ns/op assume=exact\npkg: a\nBenchmarkA 1 1 ns/op\npkg: b\nBenchmarkA 1 2 ns/op\n"))
	f.Add([]byte("BenchmarkX 1 x ns/op\n" + strings.Repeat("BenchmarkX 1 1\n", 30)))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := Parse(strings.NewReader(string(data)), nil)
		if err != nil && len(err.Error()) > 200*(maxListed+2)+len(data)/1000 {
			t.Fatalf("an error of %d bytes", len(err.Error()))
		}
		res := &benchdata.Results{Version: benchdata.FormatVersion, Kind: "gobench"}
		for _, r := range rs {
			if !strings.HasPrefix(r.Name, "Benchmark") {
				t.Fatalf("result named %q", r.Name)
			}
			for u, v := range r.Values {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s: %s = %v", r.Name, u, v)
				}
			}
			res.Rungs = append(res.Rungs, benchdata.Rung{Cell: benchdata.Cell{Class: r.Name}, Values: r.Values})
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatalf("the results cannot be stored: %v", err)
		}
		if _, err := benchdata.Parse(b, "gobench"); err != nil {
			t.Fatalf("the results do not read back: %v", err)
		}
	})
}

// TestParseLongNameErrorBounded: a benchmark whose name or unit is as long
// as a line may be (benchfmt refuses a longer line) and that reports NaN
// is refused with an error of a few hundred bytes.
func TestParseLongNameErrorBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 60_000)
	for _, in := range []string{
		"Benchmark" + long + " 1 NaN ns/op\n",
		"BenchmarkX 1 NaN " + long + "\n",
		"Benchmark" + long + " 1 x ns/op\n",
	} {
		_, err := Parse(strings.NewReader(in), nil)
		if err == nil {
			t.Fatalf("%.40s… read", in)
		}
		if n := len(err.Error()); n > 4<<10 || !strings.Contains(err.Error(), "…") {
			t.Errorf("an error of %d bytes: %.300s…", n, err)
		}
	}
}
