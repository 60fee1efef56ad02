package report

import (
	"math"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// encodeValues records each value (µs) count times and encodes the
// histogram as the runner does.
func encodeValues(t *testing.T, digits int, values map[int64]int64) string {
	t.Helper()
	h := hdrhistogram.New(1, 30_000_000, digits)
	for v, n := range values {
		if err := h.RecordValues(v, n); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(enc)
}

// uniform is every multiple of step from step to n·step, once.
func uniform(n, step int64) map[int64]int64 {
	m := map[int64]int64{}
	for i := int64(1); i <= n; i++ {
		m[i*step] = 1
	}
	return m
}

func TestMergeLatencyPercentiles(t *testing.T) {
	t.Parallel()
	// 1..1000 µs in two rungs, odd and even: below 2048 µs three digits
	// are exact, so the merged percentiles are the ranks themselves.
	odd, even := map[int64]int64{}, map[int64]int64{}
	for v := int64(1); v <= 1000; v++ {
		if v%2 == 1 {
			odd[v] = 1
		} else {
			even[v] = 1
		}
	}
	base, bad := mergeLatency([]string{encodeValues(t, 3, odd), encodeValues(t, 3, even)})
	if base == nil || bad != 0 {
		t.Fatalf("merge: %v, %d unreadable", base, bad)
	}
	want := map[float64]float64{10: 100, 25: 250, 50: 500, 75: 750, 90: 900, 95: 950, 99: 990, 99.9: 999}
	for p, v := range want {
		if got := base.percentile(p); got != v {
			t.Errorf("baseline %s = %v µs, want %v", percentileName(p), got, v)
		}
	}
	if base.count != 1000 || base.rungs != 2 || base.min != 1 || base.max != 1000 || base.mean != 500.5 {
		t.Errorf("baseline count %d rungs %d min %v max %v mean %v", base.count, base.rungs, base.min, base.max, base.mean)
	}

	// A candidate five times slower: 5..5000 µs, where HdrHistogram's
	// three digits round within 0.1%.
	cand, _ := mergeLatency([]string{encodeValues(t, 3, uniform(1000, 5))})
	for p, v := range want {
		if got := cand.percentile(p); math.Abs(got-5*v) > 5*v*0.001 {
			t.Errorf("candidate %s = %v µs, want %v within 0.1%%", percentileName(p), got, 5*v)
		}
	}
	if cand.count != 1000 || cand.min != 5 || math.Abs(cand.max-5000) > 5 {
		t.Errorf("candidate count %d min %v max %v", cand.count, cand.min, cand.max)
	}

	// Shared buckets: from the fastest request (1 µs) to the slower
	// 99.9th percentile (the candidate's 4995 µs); its one slower request
	// goes into the last row. Each side's counts sum to its total.
	bs := sharedBuckets([2]*latencyDist{base, cand}, 10)
	if len(bs) != 11 || !bs[10].over || bs[9].upper != cand.percentile(99.9) {
		t.Fatalf("buckets %+v", bs)
	}
	var sum [2]int64
	for _, b := range bs {
		sum[0] += b.n[0]
		sum[1] += b.n[1]
	}
	if sum != [2]int64{1000, 1000} {
		t.Errorf("bucket counts sum to %v, want 1000 each", sum)
	}
	if bs[10].n != [2]int64{0, 1} {
		t.Errorf("overflow row %v, want the candidate's slowest request", bs[10].n)
	}
	// The first bucket holds 1..500.4 µs: 500 of the baseline's and 100 of
	// the candidate's.
	if bs[0].n != [2]int64{500, 100} {
		t.Errorf("first bucket %v", bs[0].n)
	}
}

func TestMergeLatencyUnreadable(t *testing.T) {
	t.Parallel()
	good := encodeValues(t, 3, uniform(10, 100))
	precise := encodeValues(t, 5, uniform(10, 100))
	d, bad := mergeLatency([]string{"not base64!", good, precise, "AAAA"})
	if bad != 3 || d == nil || d.count != 10 || d.rungs != 1 {
		t.Errorf("got %+v with %d unreadable; want the one good histogram and 3 unreadable", d, bad)
	}
	if d, bad := mergeLatency([]string{"%%%"}); d != nil || bad != 1 {
		t.Errorf("only garbage: %+v, %d", d, bad)
	}
	if d, bad := mergeLatency([]string{encodeValues(t, 3, nil)}); d != nil || bad != 0 {
		t.Errorf("an empty histogram: %+v, %d", d, bad)
	}
}

func TestHistogramText(t *testing.T) {
	t.Parallel()
	base, _ := mergeLatency([]string{encodeValues(t, 3, map[int64]int64{100: 1, 200: 2, 300: 3, 400: 4})})
	cand, _ := mergeLatency([]string{encodeValues(t, 3, map[int64]int64{300: 4, 400: 3, 500: 2, 600: 1})})
	sides := [2]*latencyDist{base, cand}
	bs := sharedBuckets(sides, 5)
	ms := latencyUnit{name: "ms", scale: 1e-3, dec: 1}
	got := histogramText(bs, sides, ms, 8)
	want := "" +
		"   ms  baseline      candidate\n" +
		"≤ 0.2  [3] ■■■■■■    [0]\n" +
		"≤ 0.3  [3] ■■■■■■    [4] ■■■■■■■■\n" +
		"≤ 0.4  [4] ■■■■■■■■  [3] ■■■■■■\n" +
		"≤ 0.5  [0]           [2] ■■■■\n" +
		"≤ 0.6  [0]           [1] ■■\n"
	if got != want {
		t.Errorf("histogram:\n%s\nwant:\n%s", got, want)
	}

	// One side only: its columns alone.
	got = histogramText(sharedBuckets([2]*latencyDist{base, nil}, 3), [2]*latencyDist{base, nil}, ms, 4)
	want = "" +
		"   ms  baseline\n" +
		"≤ 0.2  [3] ■■■\n" +
		"≤ 0.3  [3] ■■■\n" +
		"≤ 0.4  [4] ■■■■\n"
	if got != want {
		t.Errorf("one side:\n%s\nwant:\n%s", got, want)
	}

	// Every request equally fast: one row.
	same, _ := mergeLatency([]string{encodeValues(t, 3, map[int64]int64{250: 7})})
	u := cellUnit(ms, [2]*latencyDist{same, same})
	got = histogramText(sharedBuckets([2]*latencyDist{same, same}, 10), [2]*latencyDist{same, same}, u, 4)
	if want := "     ms  baseline  candidate\n≤ 0.250  [7] ■■■■  [7] ■■■■\n"; got != want {
		t.Errorf("one value:\n%s\nwant:\n%s", got, want)
	}
	if strings.ContainsAny(histogramText(bs, sides, ms, 8), "`<>&|") {
		t.Error("histogram text holds markup characters")
	}
}

func TestCellUnit(t *testing.T) {
	t.Parallel()
	ms := latencyUnit{name: "ms", scale: 1e-3, dec: 2}
	for _, tc := range []struct {
		min float64 // µs
		dec int
	}{{250_000, 0}, {25_000, 1}, {2_500, 2}, {250, 3}, {25, 3}} {
		u := cellUnit(ms, [2]*latencyDist{{min: tc.min}, nil})
		if u.name != "ms" || u.dec != tc.dec {
			t.Errorf("min %v µs: unit %+v, want ms with %d decimals", tc.min, u, tc.dec)
		}
	}
	// Never finer than the histograms' microsecond.
	if u := cellUnit(latencyUnit{name: "µs", scale: 1e-6}, [2]*latencyDist{{min: 3}, nil}); u.dec != 0 {
		t.Errorf("µs: %d decimals", u.dec)
	}
	if u := cellUnit(latencyUnit{name: "s", scale: 1}, [2]*latencyDist{{min: 20}, nil}); u.dec != 4 {
		t.Errorf("20 µs in s: %d decimals, want 4", u.dec)
	}
}
