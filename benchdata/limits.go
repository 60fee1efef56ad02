package benchdata

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/benchgate/benchgate/gate"
)

// A results file may come from a fork's workflow run: benchgate comment
// reads an artifact the pull request wrote. Its size is bounded
// (MaxResultsBytes), but JSON's smallest elements are far smaller than
// what they decode to: "{}," is three bytes and a Rung over 300, so 6 MB
// of empty rungs took gigabytes. Every list and map of the files read here
// is therefore counted before anything is decoded, by a walk over the
// bytes guided by the Go type they decode into, and a file holding more
// than the limits below is refused with the field named. The limits are
// totals over the file (all rungs' slices together), so memory is bounded
// whatever the nesting; each is at least what a scenario may ask for
// (scenario.MaxCells, MaxRungs, MaxSlices, MaxDuration for a histogram's
// range), so every run's file reads, and room is left for files made
// otherwise: merged shards, go test -bench outputs, imports.

// Element limits of a results file.
const (
	// MaxCells bounds the plan's cells and a shard's grid: the pin sets ×
	// variants × classes × concurrencies of a scenario (20 × 10 × 10 × 5),
	// or the benchmarks of a gobench run (10,000 at 1 s a round take 14
	// hours over 5 rounds).
	MaxCells = 10_000
	// MaxRungs bounds the rungs: cells × rounds × 2 (1,000 cells at 100
	// repetitions; a run of this many 1 s rungs lasts 56 hours). Memory is
	// mostly the rungs': a file at MaxCells, MaxRungs, MaxSlices and
	// MaxRungEntries decides and reports with 350 MB live (0.9 GB of
	// resident peak, 8 s).
	MaxRungs = 200_000
	// MaxSlices bounds the slices of all rungs together: 3,000 rungs of
	// 10 s in the default 60 ms slices, and more than MaxResultsBytes
	// holds as benchgate writes them (about 500 bytes a slice).
	MaxSlices = 1_000_000
	// MaxRungEntries bounds each of the rungs' maps (errors, statuses)
	// and their parts (a stack's services), all rungs' entries together:
	// five status codes or services a rung at MaxRungs.
	MaxRungEntries = 1_000_000
	// MaxRungValues bounds the rungs' measurements, all rungs together:
	// a load rung's rps and latency statistics, or a Go benchmark's units,
	// eight for each of MaxRungs.
	MaxRungValues = 8 * MaxRungs
	// MaxEntries bounds every other list and map of the file, each over
	// the whole file: pin sets, fail_on rules, pre-flight results,
	// agreement classes, shards, a scenario's concurrencies (at most 10,000
	// distinct levels make sense), rounds_done, and so on.
	MaxEntries = 10_000
)

// MaxProfiles bounds a results file's profiled cells: a run profiles at
// most 100 (profiling.cells), and a merge keeps the first MaxProfiles of
// its shards'.
const MaxProfiles = 100

// Element limits of a history file.
const (
	// MaxHistoryRecords bounds the records of a history file: a nightly
	// run every day for 270 years.
	MaxHistoryRecords = 100_000
	// MaxHistoryCells bounds the cells of all records together: 1,000
	// nightly records of 2,000 values each.
	MaxHistoryCells = 2_000_000
)

// resultsLimits are the limits of a results file by field path: "[]"
// stands for any index, "{}" for any key. Fields not named have
// MaxEntries.
var resultsLimits = map[string]int{
	"plan.cells":       MaxCells,
	"shard.grid":       MaxCells,
	"rungs":            MaxRungs,
	"rungs[].slices":   MaxSlices,
	"rungs[].errors":   MaxRungEntries,
	"rungs[].statuses": MaxRungEntries,
	"rungs[].values":   MaxRungValues,
	// The slices' measurements, all slices together: each of
	// gate.Measured for each of MaxSlices.
	"rungs[].slices[].values": MaxSlices * len(gate.Measured),
	"rungs[].parts":           MaxRungEntries,
	"profiles":                MaxProfiles,
}

// recordLimits are the limits of a history's records: ParseHistory
// counts each list across the records. Where entries: one a record on
// average (a night profiles up to 3 cells by default), each with its
// MaxRecordFuncs functions.
var recordLimits = map[string]int{
	"cells":         MaxHistoryCells,
	"where":         MaxHistoryRecords,
	"where[].funcs": MaxHistoryRecords * MaxRecordFuncs,
}

// LimitError is a file holding more elements in a list or map than a
// file of its kind may.
type LimitError struct {
	File string
	// Field is where the limit was passed: "rungs[4021].slices".
	Field string
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: %s: more than %d entries in the file, more than a benchgate file can hold: refused before reading it", e.File, e.Field, e.Limit)
}

// shape is what a JSON value decodes into, as far as counting goes: an
// object with fields, a list or a map (each counted, under its path), or
// a leaf whose size is its bytes.
type shape struct {
	kind   shapeKind
	fields map[string]*shape // struct: by folded JSON name
	elem   *shape            // list, dict
	path   string            // list, dict: "rungs[].slices"
	id     int               // list, dict: index of its counter
}

type shapeKind int

const (
	leaf shapeKind = iota
	object
	list
	dict
)

// schema is a type's shapes with the counter each list and map uses.
type schema struct {
	root  *shape
	paths []string // by shape id
}

var schemas sync.Map // reflect.Type → *schema

func schemaOf(t reflect.Type) *schema {
	if s, ok := schemas.Load(t); ok {
		return s.(*schema)
	}
	s := &schema{}
	s.root = s.build(t, "", map[reflect.Type]bool{})
	schemas.Store(t, s)
	return s
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func (s *schema) build(t reflect.Type, path string, seen map[reflect.Type]bool) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		// Its own decoder (time.Time): a leaf as far as this walk goes.
		// None of the file types has such a field holding a list.
		return &shape{kind: leaf}
	}
	switch t.Kind() {
	case reflect.Struct:
		if seen[t] {
			panic("benchdata: recursive type " + t.String() + " in a file schema")
		}
		seen[t] = true
		defer delete(seen, t)
		sh := &shape{kind: object, fields: map[string]*shape{}}
		s.addFields(sh, t, path, seen)
		return sh
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return &shape{kind: leaf} // []byte is a base64 string
		}
		sh := &shape{kind: list, path: path, id: len(s.paths)}
		s.paths = append(s.paths, path)
		sh.elem = s.build(t.Elem(), path+"[]", seen)
		return sh
	case reflect.Map:
		sh := &shape{kind: dict, path: path, id: len(s.paths)}
		s.paths = append(s.paths, path)
		sh.elem = s.build(t.Elem(), path+"{}", seen)
		return sh
	case reflect.Interface:
		panic("benchdata: interface field at " + path + " in a file schema: its size cannot be bounded")
	}
	return &shape{kind: leaf}
}

// addFields adds t's JSON fields to sh, those of embedded structs as
// encoding/json promotes them.
func (s *schema) addFields(sh *shape, t reflect.Type, path string, seen map[reflect.Type]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				s.addFields(sh, ft, path, seen)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := name
		if path != "" {
			p = path + "." + name
		}
		key := string(foldName([]byte(name)))
		if _, dup := sh.fields[key]; !dup {
			sh.fields[key] = s.build(f.Type, p, seen)
		}
	}
}

// foldName is encoding/json's case folding of field names: it matches a
// key to a field without regard to case, and so must this walk, or "RUNGS"
// would pass uncounted.
func foldName(in []byte) []byte {
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		if c := in[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		out = utf8.AppendRune(out, foldRune(r))
		i += n
	}
	return out
}

// foldRune is the smallest rune of r's fold set, as encoding/json folds.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// checkLimits counts the lists and maps of data, JSON, as they
// would decode into a value of type t, and returns a *LimitError naming
// file and field at the first that passes its limit (limits by path,
// others MaxEntries). counts carries totals across calls (the lines of a
// history file); nil starts from zero.
func checkLimits(data []byte, t reflect.Type, file string, limits map[string]int, counts []int) ([]int, error) {
	s := schemaOf(t)
	if !json.Valid(data) {
		// Not JSON: the decoder says where, nothing is counted.
		return counts, nil
	}
	if counts == nil {
		counts = make([]int, len(s.paths))
	}
	w := &walker{data: data, s: s, counts: counts, limits: make([]int, len(s.paths))}
	for i, p := range s.paths {
		w.limits[i] = MaxEntries
		if n, ok := limits[p]; ok {
			w.limits[i] = n
		}
	}
	if err := w.value(s.root); err != nil {
		err.File = file
		return counts, err
	}
	return counts, nil
}

// walker walks valid JSON. Only the parts the schema knows recurse; the
// rest is skipped without recursion, so a deep value costs no stack.
type walker struct {
	data   []byte
	pos    int
	s      *schema
	counts []int
	limits []int
	stack  []string // the concrete path, for errors
}

func (w *walker) ws() {
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

func (w *walker) peek() byte {
	w.ws()
	if w.pos >= len(w.data) {
		return 0
	}
	return w.data[w.pos]
}

// count adds one element to sh's counter.
func (w *walker) count(sh *shape, seg string) *LimitError {
	w.counts[sh.id]++
	if w.counts[sh.id] > w.limits[sh.id] {
		return &LimitError{Field: strings.Join(w.stack, "") + seg, Limit: w.limits[sh.id]}
	}
	return nil
}

func (w *walker) value(sh *shape) *LimitError {
	switch c := w.peek(); {
	case c == '{' && sh != nil && sh.kind == object:
		w.pos++
		for w.peek() != '}' {
			if w.data[w.pos] == ',' {
				w.pos++
				continue
			}
			key := w.key()
			w.pos++ // the colon, after the key's trailing space
			f := sh.fields[string(foldName([]byte(key)))]
			w.stack = append(w.stack, dot(len(w.stack), key))
			err := w.value(f)
			w.stack = w.stack[:len(w.stack)-1]
			if err != nil {
				return err
			}
		}
		w.pos++
	case c == '{' && sh != nil && sh.kind == dict:
		w.pos++
		for w.peek() != '}' {
			if w.data[w.pos] == ',' {
				w.pos++
				continue
			}
			key := w.key()
			w.pos++
			if err := w.count(sh, "["+strconv.Quote(key)+"]"); err != nil {
				return err
			}
			w.stack = append(w.stack, "["+strconv.Quote(key)+"]")
			err := w.value(sh.elem)
			w.stack = w.stack[:len(w.stack)-1]
			if err != nil {
				return err
			}
		}
		w.pos++
	case c == '[' && sh != nil && sh.kind == list:
		w.pos++
		for i := 0; w.peek() != ']'; {
			if w.data[w.pos] == ',' {
				w.pos++
				continue
			}
			seg := "[" + strconv.Itoa(i) + "]"
			if err := w.count(sh, seg); err != nil {
				return err
			}
			w.stack = append(w.stack, seg)
			err := w.value(sh.elem)
			w.stack = w.stack[:len(w.stack)-1]
			if err != nil {
				return err
			}
			i++
		}
		w.pos++
	default:
		w.skip()
	}
	return nil
}

func dot(depth int, key string) string {
	if depth == 0 {
		return key
	}
	return "." + key
}

// key reads an object key and the space after it, leaving the colon.
func (w *walker) key() string {
	w.ws()
	start := w.pos
	w.skipString()
	raw := w.data[start:w.pos]
	w.ws()
	inner := raw[1 : len(raw)-1]
	plain := true
	for _, b := range inner {
		if b == '\\' || b >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(inner)
	}
	// Escapes and invalid UTF-8 are read as encoding/json reads them.
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(inner)
	}
	return s
}

// skipString passes a string starting at w.pos.
func (w *walker) skipString() {
	w.pos++ // the quote
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case '\\':
			w.pos += 2
		case '"':
			w.pos++
			return
		default:
			w.pos++
		}
	}
}

// skip passes one value of any kind, nested ones included, without
// recursion.
func (w *walker) skip() {
	depth := 0
	for {
		switch c := w.peek(); c {
		case 0:
			return
		case '"':
			w.skipString()
		case '{', '[':
			depth++
			w.pos++
		case '}', ']':
			depth--
			w.pos++
		case ',', ':':
			w.pos++
			continue
		default:
			for w.pos < len(w.data) {
				c := w.data[w.pos]
				if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
					break
				}
				w.pos++
			}
		}
		if depth == 0 {
			return
		}
	}
}

// checkValueLimits counts the lists and maps of v, a decoded file, as
// checkLimits counts them in its JSON, and returns a *LimitError at the
// first over its limit: a file made by merging others must stay readable.
func checkValueLimits(v any, file string, limits map[string]int) error {
	rv := reflect.ValueOf(v)
	s := schemaOf(rv.Type().Elem())
	counts := make([]int, len(s.paths))
	countValue(rv, s.root, counts)
	for i, p := range s.paths {
		limit := MaxEntries
		if n, ok := limits[p]; ok {
			limit = n
		}
		if counts[i] > limit {
			return &LimitError{File: file, Field: p, Limit: limit}
		}
	}
	return nil
}

// countValue adds the lengths of v's lists and maps to counts, by shape.
func countValue(v reflect.Value, sh *shape, counts []int) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if sh == nil {
		return
	}
	switch sh.kind {
	case object:
		countFields(v, sh, counts)
	case list:
		counts[sh.id] += v.Len()
		for i := range v.Len() {
			countValue(v.Index(i), sh.elem, counts)
		}
	case dict:
		counts[sh.id] += v.Len()
		if sh.elem.kind != leaf {
			for it := v.MapRange(); it.Next(); {
				countValue(it.Value(), sh.elem, counts)
			}
		}
	}
}

func countFields(v reflect.Value, sh *shape, counts []int) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			countFields(v.Field(i), sh, counts)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		countValue(v.Field(i), sh.fields[string(foldName([]byte(name)))], counts)
	}
}
