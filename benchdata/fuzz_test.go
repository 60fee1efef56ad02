package benchdata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The readers here take what a fork uploads. Beyond not panicking, each
// fuzz target checks a property: what reads, re-encodes and reads back the
// same; the limit walk counts at least what the decoder decodes, so no
// list can pass it uncounted.

// resultsSeeds are real results files and small forgeries.
func resultsSeeds(f *testing.F) {
	f.Helper()
	real, err := os.ReadFile("../cmd/benchgate/testdata/recorded/results.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	// The same as a version 3 file of slice interleaving.
	r, err := Parse(real, "recorded")
	if err != nil {
		f.Fatal(err)
	}
	r.Version = FormatVersion
	r.Scenario.Load.Interleave = "slice"
	for i := range r.Rungs[:4] {
		r.Rungs[i].Slices = []Slice{{Pair: 0, Duration: 0.05, Requests: 10, Answered: 10, Values: map[string]float64{"rps": 200, "p50": 0.001}}, {Pair: 1, Start: 0.06, Duration: 0.05}}
	}
	v3, err := json.Marshal(r)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(v3)
	for _, s := range []string{
		`{"version":3,"rungs":[` + repeat("{}", 100) + `]}`,
		`{"version":3,"RUNGS":[{},{}],"r\u0075ngs":[{"ſlices":[{}]}]}`,
		`{"version":3,"rungs":[{"histogram":"` + forgedHistogram + `"}]}`,
		`{"version":3,"rounds_done":{"":3,"a":1},"rungs":[{"statuses":{"200":5},"errors":{"timeout":1},"values":{"sec/op":1e-9}}]}`,
		`{"version":3,"shard":{"index":1,"count":2,"grid":[{"class":"a"}]},"shards":[{"environment":{"pins":[{"applied":["x"]}]}}]}`,
		`{"version":3,"unknown":[[[[[[[[[[1]]]]]]]]]],"plan":{"cells":[{"class":"\u00e9"}]}}`,
		`{"version":4,"gates":{"preflight":[{"name":"lint","target":"candidate"}],"absent":[{"class":"a"}]},"correctness":{"absent":[{}]}}`,
		`{"version":5,"correctness":{"agreement":{"classes":[{"class":"a","first":{"index":1}}]}}}`,
		`{"version":5,"gates":{}}`,
		`{"version":0}`,
		`[]`,
		`null`,
	} {
		f.Add([]byte(s))
	}
}

func FuzzParse(f *testing.F) {
	resultsSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkWalkCounts(t, data, reflect.TypeFor[resultsFile]())
		r, err := Parse(data, "f.json")
		if err != nil {
			return
		}
		if err := checkValueLimits(r, "f.json", resultsLimits); err != nil {
			t.Fatalf("read, then over the limits: %v", err)
		}
		if len(r.Plan.Cells)*len(r.Rungs) < 1e6 {
			all := r.CellRounds()
			cells := slices.Clone(r.Plan.Cells)
			for _, g := range r.Rungs {
				cells = append(cells, g.Cell)
			}
			for _, c := range cells {
				if all[c] != r.RoundsOfCell(c) {
					t.Fatalf("%s: CellRounds %d, RoundsOfCell %d", c, all[c], r.RoundsOfCell(c))
				}
			}
		}
		// A file that reads re-encodes and reads back the same.
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		r2, err := Parse(b, "again.json")
		if err != nil {
			t.Fatalf("re-encoded file does not read: %v\n%s", err, b)
		}
		b2, err := json.Marshal(r2)
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("re-encoded file reads back otherwise (%v):\n%s\n%s", err, b, b2)
		}
	})
}

// checkWalkCounts fails when the decoder decodes more elements into a
// list or map of t than the walk over data counted: a list the limits
// would miss.
func checkWalkCounts(t *testing.T, data []byte, typ reflect.Type) {
	t.Helper()
	s := schemaOf(typ)
	huge := map[string]int{}
	for _, p := range s.paths {
		huge[p] = 1 << 62
	}
	walked, err := checkLimits(data, typ, "f", huge, nil)
	if err != nil {
		t.Fatalf("no limit passed, yet: %v", err)
	}
	v := reflect.New(typ)
	if json.Unmarshal(data, v.Interface()) != nil {
		return
	}
	decoded := make([]int, len(s.paths))
	countValue(v, s.root, decoded)
	if walked == nil {
		t.Fatalf("the decoder read what the walk took for invalid JSON: %q", data)
	}
	for i, p := range s.paths {
		if decoded[i] > walked[i] {
			t.Fatalf("%s: %d decoded, %d counted", p, decoded[i], walked[i])
		}
	}
}

func FuzzParseHistory(f *testing.F) {
	nightly, err := os.ReadFile("testdata/history/nightly.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	lines := strings.SplitAfter(string(nightly), "\n")
	f.Add([]byte(strings.Join(lines[:3], "")))
	f.Add([]byte(lines[0] + "\n\n" + strings.TrimSuffix(lines[1], "\n"))) // a cut line
	f.Add([]byte(`{"version":1,"date":"2026-01-01T00:00:00Z","cells":[` + repeat("{}", 50) + `]}` + "\n"))
	f.Add([]byte(`{"version":1,"date":"2026-01-01T00:00:00Z","CELLS":[{"cell":{"class":"a"},"n":3}]} {"version":1}`))
	f.Add([]byte(`{"version":2,"date":"2026-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, line := range bytes.Split(data, []byte("\n")) {
			checkWalkCounts(t, bytes.TrimSpace(line), reflect.TypeFor[Record]())
		}
		recs, err := ParseHistory(bytes.NewReader(data), "h.jsonl")
		if err != nil {
			return
		}
		// Records that read append and read back the same.
		var buf bytes.Buffer
		for _, r := range recs {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(append(b, '\n'))
		}
		again, err := ParseHistory(&buf, "again.jsonl")
		if err != nil || len(again) != len(recs) {
			t.Fatalf("re-encoded history: %d records, %v; want %d", len(again), err, len(recs))
		}
		a, _ := json.Marshal(recs)
		b, _ := json.Marshal(again)
		if !bytes.Equal(a, b) {
			t.Fatalf("re-encoded history reads back otherwise:\n%s\n%s", a, b)
		}
	})
}

func FuzzHistogram(f *testing.F) {
	for _, g := range []struct {
		lowest, highest int64
		digits          int
	}{{1, 30_000_000, 3}, {1, MaxHistogramHighest, 3}, {1, 1000, 1}, {7, 100_000, 2}} {
		f.Add(encodeHistogram(f, g.lowest, g.highest, g.digits, 1, 50, 999, 999, g.highest/2))
	}
	f.Add(encodeHistogram(f, 1, 30_000_000, 3))
	f.Add(forgedHistogram)
	f.Add("HISTFAAAAAA=")
	f.Add("")
	f.Fuzz(func(t *testing.T, enc string) {
		var h *hdrhistogram.Histogram
		var err error
		if n := allocated(func() { h, err = DecodeHistogram(enc) }); n > 1<<20+4*uint64(len(enc)) {
			t.Fatalf("DecodeHistogram allocated %d bytes for %d", n, len(enc))
		}
		m, n, bad := MergeHistograms([]string{enc, enc})
		if n+bad != 2 {
			t.Fatalf("%d merged, %d bad of 2", n, bad)
		}
		if err != nil {
			return
		}
		hd, herr := ReadHistogramHeader(enc)
		if herr != nil || hd.Digits != int(h.SignificantFigures()) {
			t.Fatalf("decoded, header %+v, %v; decoded %d digits", hd, herr, h.SignificantFigures())
		}
		// A histogram that decodes densely merges sparsely to the same.
		if n != 2 {
			t.Fatalf("decoded but %d merged, %d bad", n, bad)
		}
		want := hdrhistogram.New(max(hd.Lowest, 1), hd.Highest, hd.Digits)
		want.Merge(h)
		want.Merge(h)
		if m.TotalCount() != want.TotalCount() || m.Max() != want.Max() || m.Min() != want.Min() ||
			fmt.Sprint(m.Distribution()) != fmt.Sprint(want.Distribution()) {
			t.Fatalf("sparse merge %d values (%d..%d), dense %d (%d..%d)", m.TotalCount(), m.Min(), m.Max(), want.TotalCount(), want.Min(), want.Max())
		}
	})
}
