package importers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/internal/fsx"
	"github.com/benchgate/benchgate/internal/textsafe"
)

// Every importer's JSON, a load tool's report or a suite's file, is read
// by the one walker of this file, in place: an array or an object is
// split into its elements by a scan of its bytes, which counts them
// before any is decoded, so a file of 64 MB holding an array of 3·10⁷
// numbers is refused for its length at the cost of one pass over it,
// not after decoding every number. Each value keeps its offset in the
// file and its field path, so an error names the file, the line and
// column of the value it is about, and the field.

// file is one file being read: its path, its format's name (an entry of
// formats) and its text.
type file struct {
	path   string
	format string
	// data, when not nil, is the file's content (tests, fuzzing):
	// nothing is read from path.
	data []byte
	// text is the JSON text being read, once read: the offsets of its
	// values give an error's line and column. line, when not 0, is the
	// line of the file text starts on (a line of cargo-criterion's
	// messages), named with the path in every error.
	text []byte
	line int
}

// what names the file's format in errors: "hyperfine JSON export".
func (f *file) what() string { return formatNamed(f.format).what }

// where names the file, and the line for a file read a line at a time:
// "a.json", "a.json:3".
func (f *file) where() string {
	if f.line > 0 {
		return f.path + ":" + strconv.Itoa(f.line)
	}
	return f.path
}

// at names the file and the line and column of byte off of its text:
// "a.json:12:7" (the column counts bytes, as Go's tools count them).
func (f *file) at(off int) string {
	if off < 0 || off > len(f.text) {
		return f.where()
	}
	before := f.text[:off]
	line := max(f.line, 1) + bytes.Count(before, []byte("\n"))
	col := off - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("%s:%d:%d", f.path, line, col)
}

// errf is an error about the file as a whole: "a.json: hyperfine JSON
// export: ...".
func (f *file) errf(format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", f.where(), f.what(), fmt.Sprintf(format, args...))
}

// benchErrf is an error about one benchmark of the file.
func (f *file) benchErrf(bench, format string, args ...any) error {
	return f.errf("benchmark %s: %s", textsafe.Quote(bench, textsafe.QuoteRunes), fmt.Sprintf(format, args...))
}

// maxFields bounds the fields of an object: a report's, a benchmark's,
// its counters or measures, BMF's benchmarks (maxEntries).
const maxFields = maxEntries

// jval is one JSON value of a file, with the benchmark (in a suite's
// file) and field path it is at for errors.
type jval struct {
	f     *file
	bench string // "" outside a benchmark
	path  string // "stats.mean", "benchmarks"
	// elem, when not 0, makes v element elem-1 of the array at path
	// ("benchmarks[3]"): the element's path is made only for an error,
	// as an array may hold 100,000 numbers.
	elem int
	raw  json.RawMessage
	off  int // raw's offset in f.text
}

// where is v's path: "stats.mean", "benchmarks[3]".
func (v jval) where() string {
	if v.elem == 0 {
		return v.path
	}
	return v.path + "[" + strconv.Itoa(v.elem-1) + "]"
}

// errf is an error about v: "a.json:3:14: hyperfine JSON export:
// benchmark "a": field "times[1]" is not a number: "x"".
func (v jval) errf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	switch p := v.where(); {
	case p != "":
		msg = fmt.Sprintf("field %s %s", textsafe.Quote(p, textsafe.QuoteRunes), msg)
	case v.bench == "":
		msg = "the file " + msg
	}
	if v.bench != "" {
		msg = fmt.Sprintf("benchmark %s: %s", textsafe.Quote(v.bench, textsafe.QuoteRunes), msg)
	}
	return fmt.Errorf("%s: %s: %s", v.f.at(v.off), v.f.what(), msg)
}

// null reports whether v is missing or null (v.raw, split from valid
// JSON, holds no space around the value).
func (v jval) null() bool { return len(v.raw) == 0 || string(v.raw) == "null" }

// child is the value raw at offset off within v, at path segment seg
// ("mean", "[3]").
func (v jval) child(seg string, raw []byte, off int) jval {
	p := seg
	if base := v.where(); base != "" && !strings.HasPrefix(seg, "[") {
		p = base + "." + seg
	} else if base != "" {
		p = base + seg
	}
	return jval{f: v.f, bench: v.bench, path: p, raw: raw, off: off}
}

// in is v as the value of benchmark name, paths starting afresh.
func (v jval) in(name string) jval { return jval{f: v.f, bench: name, raw: v.raw, off: v.off} }

// object splits v as an object of at most maxFields fields.
func (v jval) object() (jobj, error) { return v.objectOf(maxFields) }

// objectOf splits v as an object of at most max fields.
func (v jval) objectOf(max int) (jobj, error) {
	spans, err := v.split('{', max)
	if err != nil {
		return jobj{}, err
	}
	o := jobj{v: v, m: make(map[string]jval, len(spans)), keys: make([]string, 0, len(spans))}
	for _, sp := range spans {
		member := v.raw[sp[0]:sp[1]]
		end := stringEnd(member)
		k, err := jsonKey(member[:end])
		if err != nil {
			return jobj{}, v.errf("holds a bad key %s: %v", short(member[:end]), err)
		}
		at := end
		for at < len(member) && (isJSONSpace(member[at]) || member[at] == ':') {
			at++
		}
		if _, dup := o.m[k]; !dup {
			o.keys = append(o.keys, k)
		}
		// A key given twice is its last value, as encoding/json
		// decodes it.
		o.m[k] = jval{f: v.f, raw: member[at:], off: v.off + sp[0] + at}
	}
	return o, nil
}

// array splits v as an array of at most max elements.
func (v jval) array(max int) ([]jval, error) {
	spans, err := v.split('[', max)
	if err != nil {
		return nil, err
	}
	out := make([]jval, len(spans))
	a := v.asArray()
	for i, sp := range spans {
		out[i] = a.elemAt(i, sp)
	}
	return out, nil
}

// elemAt is element i of the array v, at span sp of v.raw; v is not an
// element itself (see asArray).
func (v jval) elemAt(i int, sp [2]int) jval {
	return jval{f: v.f, bench: v.bench, path: v.path, elem: i + 1, raw: v.raw[sp[0]:sp[1]], off: v.off + sp[0]}
}

// asArray is v with its path made once, for its elements' paths.
func (v jval) asArray() jval {
	v.path, v.elem = v.where(), 0
	return v
}

// split checks that v is an array (open '[') or an object ('{') of at
// most max elements, counting them before it splits them.
func (v jval) split(open byte, max int) ([][2]int, error) {
	what, elems := "an array", "elements"
	if open == '{' {
		what, elems = "an object", "fields"
	}
	if len(v.raw) == 0 || v.raw[0] != open {
		return nil, v.errf("is not %s: %s", what, short(v.raw))
	}
	_, n := splitJSON(v.raw, 0)
	if n > max {
		return nil, v.errf("has %d %s, more than %d", n, elems, max)
	}
	spans, _ := splitJSON(v.raw, n)
	return spans, nil
}

// splitJSON scans raw, a valid JSON array or object without leading
// space, for its elements (an object's "key": value members): n is how
// many there are, and spans the start and end offsets in raw of the
// first keep of them. With keep 0 it counts, allocating nothing; the
// accessors count first and split only what they accept, so a value
// too long costs one pass over its bytes and no memory.
func splitJSON(raw []byte, keep int) (spans [][2]int, n int) {
	if keep > 0 {
		spans = make([][2]int, 0, keep)
	}
	depth, start, end := 0, -1, 0
	add := func() {
		if start < 0 {
			return
		}
		if n++; n <= keep {
			spans = append(spans, [2]int{start, end})
		}
		start = -1
	}
	for i := 1; i < len(raw); i++ {
		c := raw[i]
		switch {
		case isJSONSpace(c):
			continue
		case c == ',' && depth == 0:
			add()
			continue
		case (c == ']' || c == '}') && depth == 0:
			add()
			return spans, n
		}
		if start < 0 && depth == 0 {
			start = i
		}
		switch c {
		case '"':
			i += stringEnd(raw[i:]) - 1
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		}
		end = i + 1
	}
	return spans, n
}

// stringEnd is the offset just past the JSON string b starts with.
func stringEnd(b []byte) int {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// jsonKey decodes an object's key, the JSON string b.
func jsonKey(b []byte) (string, error) {
	if len(b) < 2 {
		return "", errors.New("not a string")
	}
	plain := true
	for _, c := range b[1 : len(b)-1] {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(b[1 : len(b)-1]), nil
	}
	var k string
	err := json.Unmarshal(b, &k)
	return k, err
}

// num decodes v as a finite number. A JSON number is parsed as
// encoding/json parses it, by strconv.ParseFloat, without its
// reflection: a file may hold millions; one out of range is refused, as
// encoding/json refuses it.
func (v jval) num() (float64, error) {
	if len(v.raw) > 0 && (v.raw[0] == '-' || '0' <= v.raw[0] && v.raw[0] <= '9') {
		if x, err := strconv.ParseFloat(string(v.raw), 64); err == nil {
			return x, nil
		}
	}
	return 0, v.errf("is not a number: %s", short(v.raw))
}

// nums decodes v as an array of at most MaxSuiteSamples numbers.
func (v jval) nums() ([]float64, error) {
	// Split, not array: no jval is made for each of 100,000 numbers.
	spans, err := v.split('[', MaxSuiteSamples)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(spans))
	a := v.asArray()
	for i, sp := range spans {
		x, err := a.elemAt(i, sp).num()
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

// str decodes v as a string.
func (v jval) str() (string, error) {
	var s string
	if err := json.Unmarshal(v.raw, &s); err != nil {
		return "", v.errf("is not a string: %s", short(v.raw))
	}
	return s, nil
}

// jobj is a JSON object of a file, split into its fields.
type jobj struct {
	v jval
	// m holds each field's value and offset; get and field give it its
	// path from v, which a parser may set to v.in(name) once it knows
	// the benchmark's name.
	m    map[string]jval
	keys []string // in file order, each once
}

// get returns field k, and false when it is missing or null.
func (o jobj) get(k string) (jval, bool) {
	v, ok := o.m[k]
	if !ok || v.null() {
		return jval{}, false
	}
	return o.v.child(k, v.raw, v.off), true
}

// field is field k for an error about it: where it is missing, at the
// object.
func (o jobj) field(k string) jval {
	if v, ok := o.m[k]; ok {
		return o.v.child(k, v.raw, v.off)
	}
	return o.v.child(k, nil, o.v.off)
}

// need returns field k; missing or null is an error.
func (o jobj) need(k string) (jval, error) {
	v, ok := o.get(k)
	if !ok {
		return jval{}, o.missing(k)
	}
	return v, nil
}

func (o jobj) missing(k string) error {
	c := o.field(k)
	if _, ok := o.m[k]; ok {
		return c.errf("is null")
	}
	// "no field "stats.mean"", at the object missing it.
	msg := fmt.Sprintf("no field %s", textsafe.Quote(c.where(), textsafe.QuoteRunes))
	if c.bench != "" {
		msg = fmt.Sprintf("benchmark %s: %s", textsafe.Quote(c.bench, textsafe.QuoteRunes), msg)
	}
	return fmt.Errorf("%s: %s: %s", c.f.at(c.off), c.f.what(), msg)
}

func (o jobj) num(k string) (float64, error) {
	v, err := o.need(k)
	if err != nil {
		return 0, err
	}
	return v.num()
}

func (o jobj) str(k string) (string, error) {
	v, err := o.need(k)
	if err != nil {
		return "", err
	}
	return v.str()
}

// optStr is field k as a string, "" when missing or null.
func (o jobj) optStr(k string) (string, error) {
	v, ok := o.get(k)
	if !ok {
		return "", nil
	}
	return v.str()
}

// has tells whether field k is present and not null.
func (o jobj) has(k string) bool {
	_, ok := o.get(k)
	return ok
}

// optNum is field k as a number, and false when it is missing or null
// (oha writes NaN as null).
func (o jobj) optNum(k string) (float64, bool, error) {
	v, ok := o.get(k)
	if !ok {
		return 0, false, nil
	}
	x, err := v.num()
	return x, err == nil, err
}

// count is field k as a whole number from 0 to maxCount; missing or
// null is an error.
func (o jobj) count(k string) (int64, error) {
	x, err := o.num(k)
	if err != nil {
		return 0, err
	}
	if !isCount(x) {
		return 0, o.field(k).errf("is %v, not a count", x)
	}
	return int64(x), nil
}

// byteCount is x, the value of field k, as a number of bytes: a figure
// past maxCount or below zero is no file's.
func (o jobj) byteCount(k string, x float64) (int64, error) {
	if !(x >= 0 && x <= maxCount) {
		return 0, o.field(k).errf("is %v, not a number of bytes", x)
	}
	return int64(x), nil
}

// counts is field k, an object of name → count, as a map; missing or
// null is empty, and so is a count that is null.
func (o jobj) counts(k string) (map[string]int64, error) {
	v, ok := o.get(k)
	if !ok {
		return map[string]int64{}, nil
	}
	if jsonKind(v.raw) != "an object" {
		return nil, v.errf("is not an object of counts: %s", short(v.raw))
	}
	co, err := v.object()
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(co.keys))
	for _, name := range co.keys {
		c, ok := co.get(name)
		if !ok {
			continue
		}
		x, err := c.num()
		if err != nil {
			return nil, v.errf("is not an object of counts: %s", short(v.raw))
		}
		if !isCount(x) {
			return nil, c.errf("is %v, not a count", x)
		}
		out[name] = int64(x)
	}
	return out, nil
}

// object is field k as an object; missing or null is an error.
func (o jobj) object(k string) (jobj, error) {
	v, err := o.need(k)
	if err != nil {
		return jobj{}, err
	}
	return v.object()
}

// optObject is field k as an object, and false when it is missing or
// null.
func (o jobj) optObject(k string) (jobj, bool, error) {
	v, ok := o.get(k)
	if !ok {
		return jobj{}, false, nil
	}
	so, err := v.object()
	return so, err == nil, err
}

// time is field k as an RFC 3339 time; missing, null, "" and Go's zero
// time (a report of no requests) are unknown, the zero time.
func (o jobj) time(k string) (time.Time, error) {
	s, err := o.optStr(k)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, o.field(k).errf("is not an RFC 3339 time: %s", textsafe.Quote(s, textsafe.QuoteRunes))
	}
	if t.Year() <= 1 {
		return time.Time{}, nil
	}
	return t, nil
}

// maxCount is the largest count a report may give: past 2^53 a float64
// no longer holds every integer, and no load test sends that many
// requests. It keeps sums of counts far from int64's overflow too.
const maxCount = 1 << 53

// isCount tells whether x is a whole number from 0 to maxCount.
func isCount(x float64) bool { return x >= 0 && x <= maxCount && x == math.Trunc(x) }

// short is a value for an error message.
func short(v []byte) string {
	// A value may be megabytes long: only its start is shown.
	long := len(v) > 1024
	if long {
		n := 1024
		for n > 0 && !utf8.RuneStart(v[n]) {
			n--
		}
		v = v[:n]
	}
	s := strings.Join(strings.Fields(string(v)), " ")
	if len(s) > 40 {
		n := 40
		for n > 0 && !utf8.RuneStart(s[n]) {
			n-- // not inside a character
		}
		s, long = s[:n], true
	}
	if long {
		s += "…"
	}
	return s
}

// readFile reads f, a file of at most benchdata.MaxReportBytes (or
// f.data), as JSON.
func readFile(f *file) (jval, error) {
	if f.data != nil {
		return parseJSON(f, f.data)
	}
	b, err := fsx.ReadFileLimited(f.path, benchdata.MaxReportBytes)
	if err != nil {
		return jval{}, err
	}
	return parseJSON(f, b)
}

// parseJSON is the top-level JSON value of a file's bytes; f's text
// becomes b.
func parseJSON(f *file, b []byte) (jval, error) {
	f.text = b
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	what := article(f.what()) + " " + f.what()
	if len(bytes.TrimSpace(trimmed)) == 0 {
		return jval{}, fmt.Errorf("%s: empty file, not %s", f.where(), what)
	}
	if !json.Valid(b) {
		var x any
		err := json.Unmarshal(b, &x)
		where := f.where()
		var se *json.SyntaxError
		if errors.As(err, &se) && se.Offset > 0 {
			where = f.at(int(se.Offset) - 1)
		}
		return jval{}, fmt.Errorf("%s: not %s: %v", where, what, err)
	}
	off := len(b) - len(trimmed)
	return jval{f: f, raw: bytes.TrimRight(trimmed, " \t\r\n"), off: off}, nil
}

// topObject reads v, f's top-level value, as a JSON object with the
// fields the format's files always have (its identity); another
// format's file is named as such.
func topObject(f *file, v jval) (jobj, error) {
	what := article(f.what()) + " " + f.what()
	if k := jsonKind(v.raw); k != "an object" {
		return jobj{}, fmt.Errorf("%s: not %s: the file holds %s, not an object", f.where(), what, k)
	}
	o, err := v.object()
	if err != nil {
		return jobj{}, err
	}
	self := formatNamed(f.format)
	for _, k := range self.identity {
		if _, ok := o.m[k]; !ok {
			msg := fmt.Sprintf("%s: not %s: no field %q", f.where(), what, k)
			if t := sniff(self, o.m); t != nil && t.what != self.what {
				msg += " (it looks like " + looksLike(t) + ")"
			}
			return jobj{}, errors.New(msg)
		}
	}
	return o, nil
}

// looksLike names t's file in a hint that a file is another format's: "a
// ghz report", "a pytest-benchmark JSON".
func looksLike(t *format) string {
	if t.load != nil {
		return article(t.name) + " " + t.name + " report"
	}
	return article(t.what) + " " + t.what
}

// jsonKind names the kind of a JSON value: "an array", "a number".
func jsonKind(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '[':
		return "an array"
	case '{':
		return "an object"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}
