package report

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchgate/benchgate/benchdata"
)

// Latency detail: every rung carries the HdrHistogram of its requests'
// latencies in microseconds (benchdata.Rung.Histogram). A target's rungs of
// one cell merge into one histogram, read here as a percentile distribution
// and as a few linear buckets shared by both targets, so the two sides'
// shapes read side by side as in oha's "Response time histogram". This file
// is the arithmetic; the renderers lay it out.

// latencyPercentiles are the percentiles every report shows, in order.
var latencyPercentiles = []float64{10, 25, 50, 75, 90, 95, 99, 99.9}

// percentileName is a percentile's column or key name: "p10", "p99.9".
func percentileName(p float64) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}

// latencyDist is one target's latencies in a cell, merged over its rungs.
// Values are microseconds.
type latencyDist struct {
	rungs          int // rungs merged
	count          int64
	min, mean, max float64
	pcts           []float64 // at latencyPercentiles
	// bins are the histogram's non-empty bins in ascending order: the
	// lowest value each stands for and its count. Buckets are cut from
	// them, so the histogram itself need not be kept.
	bins []latencyBin
}

type latencyBin struct {
	from  int64
	count int64
}

// mergeLatency merges the encoded histograms into one distribution. It
// returns nil when none could be read or none holds a value, and the
// number of histograms that could not be read. benchdata.MergeHistograms
// refuses a histogram over its range and precision limits before decoding
// it, and merges one at a time: a forged results file's thousands of
// histograms are never held decoded at once.
func mergeLatency(encoded []string) (*latencyDist, int) {
	merged, n, bad := benchdata.MergeHistograms(encoded)
	if merged == nil {
		return nil, bad
	}
	d := distributionOf(merged)
	if d == nil {
		return nil, bad
	}
	d.rungs = n
	return d, bad
}

// distributionOf reads a histogram's summary and bins; nil when it is
// empty. The minimum, mean and maximum come from the bins, as the
// histogram's own Min, Mean and Max would compute them (lowest equivalent
// value, midpoints, highest equivalent value), in one pass instead of three.
func distributionOf(h *hdrhistogram.Histogram) *latencyDist {
	if h.TotalCount() == 0 {
		return nil
	}
	d := &latencyDist{count: h.TotalCount()}
	for _, p := range latencyPercentiles {
		d.pcts = append(d.pcts, float64(h.ValueAtQuantile(p)))
	}
	var sum float64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		if len(d.bins) == 0 {
			d.min = float64(b.From)
		}
		d.max = float64(b.To)
		sum += float64(b.Count) * float64(b.From+(b.To-b.From+1)>>1)
		d.bins = append(d.bins, latencyBin{from: b.From, count: b.Count})
	}
	d.mean = sum / float64(d.count)
	return d
}

// percentile is the value at latencyPercentiles[i].
func (d *latencyDist) percentile(p float64) float64 {
	for i, q := range latencyPercentiles {
		if q == p {
			return d.pcts[i]
		}
	}
	return math.NaN()
}

// latencyBucket is one row of a shared histogram: the values above the
// previous row's bound up to upper (µs), counted per side; over marks the
// last row, of the values above the others' range.
type latencyBucket struct {
	upper float64
	over  bool
	n     [2]int64
}

// sharedBuckets cuts n linear buckets from the smallest value of either
// side to the larger of their 99.9th percentiles, so the tail's few
// outliers do not squeeze the body of the distribution into one row; the
// values above that go into a last row marked over, present only when some
// side has any. Each side's counts sum to its total. A nil side counts
// nothing.
func sharedBuckets(sides [2]*latencyDist, n int) []latencyBucket {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, d := range sides {
		if d != nil {
			lo = min(lo, d.min)
			hi = max(hi, d.percentile(99.9))
		}
	}
	if math.IsInf(lo, 0) || n < 1 {
		return nil
	}
	if hi <= lo {
		n = 1
	}
	width := (hi - lo) / float64(n)
	bs := make([]latencyBucket, n)
	for i := range bs {
		bs[i].upper = lo + float64(i+1)*width
	}
	bs[n-1].upper = hi // no rounding error at the edge
	var over latencyBucket
	over.over, over.upper = true, hi
	for s, d := range sides {
		if d == nil {
			continue
		}
		for _, b := range d.bins {
			v := float64(b.from)
			if v > hi {
				over.n[s] += b.count
				continue
			}
			i := 0
			if width > 0 {
				i = int(math.Ceil((v-lo)/width)) - 1
			}
			bs[min(max(i, 0), n-1)].n[s] += b.count
		}
	}
	if over.n[0] > 0 || over.n[1] > 0 {
		bs = append(bs, over)
	}
	return bs
}

// histogramText lays out shared buckets as text, one row per bucket: the
// bucket's upper bound in unit u, then for each side present its count in
// brackets and a bar of ■ scaled to that side's largest bucket, at most
// width wide. A header row names the unit and the sides. Rows carry no
// trailing spaces; the text holds digits, fixed words and ■ only.
func histogramText(bs []latencyBucket, sides [2]*latencyDist, u latencyUnit, width int) string {
	if len(bs) == 0 {
		return ""
	}
	names := [2]string{"baseline", "candidate"}
	dec := labelDecimals(bs, u)
	labels := make([]string, len(bs))
	labelW := utf8.RuneCountInString(u.name)
	for i, b := range bs {
		v := strconv.FormatFloat(b.upper*1e-6/u.scale, 'f', dec, 64)
		if b.over {
			labels[i] = "> " + v
		} else {
			labels[i] = "≤ " + v
		}
		labelW = max(labelW, utf8.RuneCountInString(labels[i]))
	}
	var peak [2]int64
	countW := [2]int{}
	for _, b := range bs {
		for s := range 2 {
			peak[s] = max(peak[s], b.n[s])
			countW[s] = max(countW[s], len(strconv.FormatInt(b.n[s], 10)))
		}
	}
	pad := func(s string, w int) string { return s + strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s))) }
	lpad := func(s string, w int) string { return strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s))) + s }
	var b strings.Builder
	row := func(label string, cols []string) {
		b.WriteString(strings.TrimRight(lpad(label, labelW)+"  "+strings.Join(cols, "  "), " ") + "\n")
	}
	var head []string
	for s, d := range sides {
		if d != nil {
			head = append(head, pad(names[s], countW[s]+3+width))
		}
	}
	row(u.name, head)
	for i, bk := range bs {
		var cols []string
		for s, d := range sides {
			if d == nil {
				continue
			}
			bar := 0
			if peak[s] > 0 {
				bar = int(math.Round(float64(bk.n[s]) / float64(peak[s]) * float64(width)))
			}
			cols = append(cols, pad("["+lpad(strconv.FormatInt(bk.n[s], 10), countW[s])+"] "+strings.Repeat("■", bar), countW[s]+3+width))
		}
		row(labels[i], cols)
	}
	return b.String()
}

// labelDecimals is enough decimals, at least u's, that neighbouring bucket
// bounds print differently, down to a microsecond.
func labelDecimals(bs []latencyBucket, u latencyUnit) int {
	dec := u.dec
	if len(bs) < 2 {
		return dec
	}
	step := (bs[1].upper - bs[0].upper) * 1e-6 / u.scale
	// With a margin for the step's rounding error: 0.1 ms may come out a
	// hair under.
	for dec < microDecimals(u) && step > 0 && step < math.Pow(10, -float64(dec))*(1-1e-9) {
		dec++
	}
	return dec
}

// cellUnit is the unit of a cell's latency detail: the table's, so the
// figures compare with its p95 column, with enough decimals for the
// cell's smallest value to keep two or three significant digits, down to
// a microsecond.
func cellUnit(table latencyUnit, sides [2]*latencyDist) latencyUnit {
	u := table
	lo := math.Inf(1)
	for _, d := range sides {
		if d != nil && d.min > 0 {
			lo = min(lo, d.min*1e-6/u.scale)
		}
	}
	switch {
	case math.IsInf(lo, 0):
	case lo >= 100:
		u.dec = 0
	case lo >= 10:
		u.dec = 1
	case lo >= 1:
		u.dec = 2
	case lo >= 0.1:
		u.dec = 3
	default:
		u.dec = 4
	}
	u.dec = min(u.dec, microDecimals(u))
	return u
}

// microDecimals is the number of decimals that shows a whole microsecond
// in unit u (3 in ms, 0 in µs): the histograms hold whole microseconds, so
// more would show digits that were never measured.
func microDecimals(u latencyUnit) int {
	return max(0, int(math.Round(math.Log10(u.scale/1e-6))))
}

// micros formats a value in µs in unit u.
func (u latencyUnit) micros(v float64) string {
	return strconv.FormatFloat(v/1e6/u.scale, 'f', u.dec, 64)
}
