package agreement

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// line is one line (text) or record (CSV) with where it starts.
type line struct {
	key    string   // comparison key
	fields []string // CSV fields (nil for text)
	off    int
}

// splitLines splits body into lines; a trailing "\r" on each line and a
// final newline are ignored.
func splitLines(body []byte) []line {
	var out []line
	off := 0
	for off < len(body) {
		end := bytes.IndexByte(body[off:], '\n')
		next := off + end + 1
		if end < 0 {
			end = len(body) - off
			next = len(body)
		}
		s := strings.TrimSuffix(string(body[off:off+end]), "\r")
		out = append(out, line{key: s, off: off})
		off = next
	}
	return out
}

func compareText(a, b []byte, sorted bool) *diff {
	return compareLines(splitLines(a), splitLines(b), sorted, "line", func(x, y line) string {
		return "differs"
	})
}

func parseCSV(body []byte) ([]line, error) {
	r := csv.NewReader(bytes.NewReader(body))
	r.FieldsPerRecord = -1
	var out []line
	for {
		off := int(r.InputOffset())
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var k strings.Builder
		for i, f := range rec {
			if i > 0 {
				k.WriteByte(',')
			}
			k.WriteString(strconv.Quote(f))
		}
		// csv.Reader skips empty lines; point the excerpt at the record.
		for off < len(body) && (body[off] == '\n' || body[off] == '\r') {
			off++
		}
		out = append(out, line{key: k.String(), fields: rec, off: off})
	}
}

func compareCSV(ra, rb []byte, sorted bool) *diff {
	a, errA := parseCSV(ra)
	b, errB := parseCSV(rb)
	switch {
	case errA != nil && errB != nil:
		return &diff{reason: "neither response is valid CSV"}
	case errA != nil:
		return &diff{reason: "response A is not valid CSV: " + errA.Error()}
	case errB != nil:
		return &diff{reason: "response B is not valid CSV: " + errB.Error()}
	}
	return compareLines(a, b, sorted, "record", func(x, y line) string {
		if len(x.fields) != len(y.fields) {
			return fmt.Sprintf("%d fields vs %d", len(x.fields), len(y.fields))
		}
		for i := range x.fields {
			if x.fields[i] != y.fields[i] {
				return fmt.Sprintf("field %d: %s vs %s", i+1, strconv.Quote(short(x.fields[i], 60)), strconv.Quote(short(y.fields[i], 60)))
			}
		}
		return "differs"
	})
}

// compareLines compares in order, or as multisets when sorted. unit is
// "line" or "record"; numbers in reasons are 1-based positions in the
// original bodies.
func compareLines(a, b []line, sorted bool, unit string, detail func(x, y line) string) *diff {
	if sorted {
		countB := map[string]int{}
		for _, l := range b {
			countB[l.key]++
		}
		for i, l := range a {
			if countB[l.key] > 0 {
				countB[l.key]--
				continue
			}
			p := fmt.Sprintf("%s %d", unit, i+1)
			return &diff{path: p, reason: fmt.Sprintf("%s of A has no match in B", p), offA: l.off, offB: -1, lineA: true, lineB: true}
		}
		countA := map[string]int{}
		for _, l := range a {
			countA[l.key]++
		}
		for i, l := range b {
			if countA[l.key] > 0 {
				countA[l.key]--
				continue
			}
			p := fmt.Sprintf("%s %d", unit, i+1)
			return &diff{path: p, reason: fmt.Sprintf("%s of B has no match in A", p), offA: -1, offB: l.off, lineA: true, lineB: true}
		}
		return nil
	}
	for i := 0; i < len(a) || i < len(b); i++ {
		p := fmt.Sprintf("%s %d", unit, i+1)
		switch {
		case i >= len(a):
			return &diff{path: p, reason: p + ": missing in A", offA: -1, offB: b[i].off, lineA: true, lineB: true}
		case i >= len(b):
			return &diff{path: p, reason: p + ": missing in B", offA: a[i].off, offB: -1, lineA: true, lineB: true}
		case a[i].key != b[i].key:
			return &diff{path: p, reason: p + " " + detail(a[i], b[i]), offA: a[i].off, offB: b[i].off, lineA: true, lineB: true}
		}
	}
	return nil
}
