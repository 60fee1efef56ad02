package benchdata

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A rung's histogram is decoded into an array of counts whose length its
// header declares: a 60-byte histogram of 1..2^62 at 4 significant digits
// decodes to 6.4 MB, and a results file from a fork can hold thousands.
// The header is therefore read first, and a geometry benchgate never
// writes is refused before anything is allocated; merging decodes each
// histogram sparsely (memory as its populated buckets) into one dense
// histogram, so the rungs of a cell are never held decoded at once.

// Histogram limits. The runner records latencies in microseconds from 1
// to the request timeout at 3 significant digits: those are the most a
// histogram read from a file may declare. At them the counts take 224 KiB.
const (
	MaxHistogramDigits = 3
	// MaxHistogramHighest is a day in microseconds: the longest timeout a
	// scenario may set (scenario.MaxDuration).
	MaxHistogramHighest = int64(24 * time.Hour / time.Microsecond)
)

// HistogramHeader is the geometry a histogram's header declares.
type HistogramHeader struct {
	Lowest, Highest int64
	Digits          int
}

// histogramReader reads histogram headers, keeping its buffers and its
// zlib reader from one histogram to the next.
type histogramReader struct {
	raw  []byte
	br   bytes.Reader
	z    io.ReadCloser
	head [40]byte
}

// header reads and checks the geometry of an encoded histogram (base64
// of hdrhistogram-go's V2 compressed encoding): the 8-byte outer header,
// then a zlib stream whose first 40 bytes are the inner header.
func (hr *histogramReader) header(encoded string) (HistogramHeader, error) {
	n := base64.StdEncoding.DecodedLen(len(encoded))
	if cap(hr.raw) < n {
		hr.raw = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(hr.raw[:n], []byte(encoded))
	if err != nil {
		return HistogramHeader{}, fmt.Errorf("histogram: %v", err)
	}
	raw := hr.raw[:n]
	if len(raw) < 8 {
		return HistogramHeader{}, errors.New("histogram: too short")
	}
	if cookie := int32(binary.BigEndian.Uint32(raw[0:4])) & ^0xf0; cookie != hdrhistogram.V2CompressedEncodingCookieBase {
		return HistogramHeader{}, errors.New("histogram: not the V2 compressed encoding")
	}
	hr.br.Reset(raw[8:])
	if hr.z == nil {
		hr.z, err = zlib.NewReader(&hr.br)
	} else {
		err = hr.z.(zlib.Resetter).Reset(&hr.br, nil)
	}
	if err != nil {
		hr.z = nil
		return HistogramHeader{}, fmt.Errorf("histogram: %v", err)
	}
	if _, err := io.ReadFull(hr.z, hr.head[:]); err != nil {
		return HistogramHeader{}, fmt.Errorf("histogram: header: %v", err)
	}
	h := HistogramHeader{
		Digits:  int(int32(binary.BigEndian.Uint32(hr.head[12:16]))),
		Lowest:  int64(binary.BigEndian.Uint64(hr.head[16:24])),
		Highest: int64(binary.BigEndian.Uint64(hr.head[24:32])),
	}
	// Decode reads a lowest value below 1 as 1, as the first
	// hdrhistogram-go wrote it.
	h.Lowest = max(h.Lowest, 1)
	return h, h.check()
}

// check refuses a geometry benchgate never writes. At least one digit
// too: New, which a merge uses, raises 0 to 1, and a geometry valid at 0
// digits may not be at 1.
func (h HistogramHeader) check() error {
	switch {
	case h.Digits < 1 || h.Digits > MaxHistogramDigits:
		return &histogramLimitError{fmt.Sprintf("histogram of %d significant digits: 1 to %d are read", h.Digits, MaxHistogramDigits)}
	case h.Highest > MaxHistogramHighest:
		return &histogramLimitError{fmt.Sprintf("histogram up to %d µs: at most %d (a day) is read", h.Highest, MaxHistogramHighest)}
	case h.Highest/2 < h.Lowest:
		return &histogramLimitError{fmt.Sprintf("histogram of %d to %d µs: the highest value must be at least twice the lowest", h.Lowest, h.Highest)}
	}
	return nil
}

// histogramLimitError is a readable header declaring a geometry over the
// limits, as opposed to one that cannot be read.
type histogramLimitError struct{ msg string }

func (e *histogramLimitError) Error() string { return e.msg }

// ReadHistogramHeader reads the geometry of an encoded histogram (as
// Rung.Histogram holds it) and refuses one over MaxHistogramDigits or
// MaxHistogramHighest, without decoding its counts.
func ReadHistogramHeader(encoded string) (HistogramHeader, error) {
	var hr histogramReader
	return hr.header(encoded)
}

// DecodeHistogram decodes an encoded histogram after its header passed
// ReadHistogramHeader: its counts take at most 224 KiB.
func DecodeHistogram(encoded string) (*hdrhistogram.Histogram, error) {
	if _, err := ReadHistogramHeader(encoded); err != nil {
		return nil, err
	}
	return hdrhistogram.Decode([]byte(encoded))
}

// MergeHistograms merges encoded histograms into one whose range and
// precision cover all of them (the lowest lowest value, the highest
// highest, the most digits), so no value is dropped. It returns nil when
// none could be read, how many were merged, and how many could not be
// read (a header over the limits, a corrupt payload). Each is decoded in
// turn, sparsely, and merged before the next: the memory is one dense
// histogram of at most the limits' geometry, whatever their number.
func MergeHistograms(encoded []string) (merged *hdrhistogram.Histogram, n, bad int) {
	var hr histogramReader
	var geo HistogramHeader
	ok := make([]bool, len(encoded))
	for i, e := range encoded {
		h, err := hr.header(e)
		if err != nil {
			bad++
			continue
		}
		ok[i] = true
		if n == 0 {
			geo = h
		} else {
			geo.Lowest, geo.Highest, geo.Digits = min(geo.Lowest, h.Lowest), max(geo.Highest, h.Highest), max(geo.Digits, h.Digits)
		}
		n++
	}
	if n == 0 {
		return nil, 0, bad
	}
	merged = hdrhistogram.New(geo.Lowest, geo.Highest, geo.Digits)
	n = 0
	for i, e := range encoded {
		if !ok[i] {
			continue
		}
		p, err := hdrhistogram.DecodePacked([]byte(e))
		if err != nil {
			bad++
			continue
		}
		// The merged range covers every input's: nothing is dropped.
		p.MergeInto(merged)
		n++
	}
	if n == 0 {
		return nil, 0, bad
	}
	return merged, n, bad
}
