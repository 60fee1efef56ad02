package agreement

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jv is a decoded JSON value that remembers where it came from.
type jv struct {
	kind   byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null, 'x' ignored
	s      string
	b      bool
	obj    map[string]*jv
	arr    []*jv
	off    int // byte offset of the value in the raw body
	keyOff int // byte offset of the member's key (== off outside objects)
}

const maxDepth = 10000

func parseJSON(raw []byte) (*jv, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := parseValue(dec, raw, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected data after top-level value")
		}
		return nil, err
	}
	return v, nil
}

func skipSep(raw []byte, off int) int {
	for off < len(raw) {
		switch raw[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

func parseValue(dec *json.Decoder, raw []byte, depth int) (*jv, error) {
	if depth > maxDepth {
		return nil, errors.New("nesting too deep")
	}
	off := skipSep(raw, int(dec.InputOffset()))
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	v := &jv{off: off, keyOff: off}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v.kind = 'o'
			v.obj = map[string]*jv{}
			for dec.More() {
				keyOff := skipSep(raw, int(dec.InputOffset()))
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string at offset %d", keyOff)
				}
				c, err := parseValue(dec, raw, depth+1)
				if err != nil {
					return nil, err
				}
				c.keyOff = keyOff
				if _, dup := v.obj[key]; dup {
					// Parsers disagree on which one counts: the answer
					// is ambiguous, so it cannot be said to agree.
					return nil, fmt.Errorf("duplicate key %q at offset %d", key, keyOff)
				}
				v.obj[key] = c
			}
		case '[':
			v.kind = 'a'
			v.arr = []*jv{}
			for dec.More() {
				c, err := parseValue(dec, raw, depth+1)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, c)
			}
		default:
			return nil, fmt.Errorf("unexpected %q at offset %d", rune(t), off)
		}
		if _, err := dec.Token(); err != nil { // closing delimiter
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	case string:
		v.kind, v.s = 's', t
	case json.Number:
		v.kind, v.s = 'n', string(t)
	case bool:
		v.kind, v.b = 'b', t
	case nil:
		v.kind = 'z'
	}
	return v, nil
}

func compareJSON(ra, rb []byte, ignore [][]seg, unordered bool) *diff {
	// The decoder turns invalid UTF-8 into U+FFFD: two different byte
	// strings would read as one.
	if !utf8.Valid(ra) || !utf8.Valid(rb) {
		return &diff{reason: "a body is not valid UTF-8 and the bodies differ", offA: 0, offB: 0}
	}
	a, errA := parseJSON(ra)
	b, errB := parseJSON(rb)
	switch {
	case errA != nil && errB != nil:
		return &diff{reason: "neither response is valid JSON", offA: 0, offB: 0}
	case errA != nil:
		return &diff{reason: "response A is not valid JSON: " + errA.Error()}
	case errB != nil:
		return &diff{reason: "response B is not valid JSON: " + errB.Error()}
	}
	for _, p := range ignore {
		a = removePath(a, p)
		b = removePath(b, p)
	}
	return cmpJSON(a, b, "$", unordered)
}

func jdiff(path, detail string, a, b *jv) *diff {
	return &diff{path: path, reason: path + ": " + detail, offA: a.keyOff, offB: b.keyOff}
}

func cmpJSON(a, b *jv, path string, unordered bool) *diff {
	if a.kind != b.kind {
		return jdiff(path, render(a)+" vs "+render(b), a, b)
	}
	switch a.kind {
	case 'n':
		if canonNumber(a.s) != canonNumber(b.s) {
			return jdiff(path, a.s+" vs "+b.s, a, b)
		}
	case 's':
		if a.s != b.s {
			return jdiff(path, render(a)+" vs "+render(b), a, b)
		}
	case 'b':
		if a.b != b.b {
			return jdiff(path, render(a)+" vs "+render(b), a, b)
		}
	case 'o':
		keys := make([]string, 0, len(a.obj)+len(b.obj))
		for k := range a.obj {
			keys = append(keys, k)
		}
		for k := range b.obj {
			if _, ok := a.obj[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			ca, cb := a.obj[k], b.obj[k]
			p := pathKey(path, k)
			switch {
			case ca == nil:
				return &diff{path: p, reason: p + ": missing in A", offA: a.off, offB: cb.keyOff}
			case cb == nil:
				return &diff{path: p, reason: p + ": missing in B", offA: ca.keyOff, offB: b.off}
			}
			if d := cmpJSON(ca, cb, p, unordered); d != nil {
				return d
			}
		}
	case 'a':
		if unordered {
			return cmpMultiset(a, b, path)
		}
		for i := 0; i < len(a.arr) && i < len(b.arr); i++ {
			if d := cmpJSON(a.arr[i], b.arr[i], pathIndex(path, i), unordered); d != nil {
				return d
			}
		}
		if len(a.arr) != len(b.arr) {
			d := jdiff(path, fmt.Sprintf("length %d vs %d", len(a.arr), len(b.arr)), a, b)
			n := min(len(a.arr), len(b.arr))
			if len(a.arr) > n {
				d.offA = a.arr[n].off
			} else {
				d.offB = b.arr[n].off
			}
			return d
		}
	}
	return nil
}

// cmpMultiset compares two arrays as multisets of canonical elements and
// reports the first element (in A's order, then B's) without a partner.
func cmpMultiset(a, b *jv, path string) *diff {
	ca := make([]string, len(a.arr))
	cb := make([]string, len(b.arr))
	countB := map[string]int{}
	for i, e := range b.arr {
		cb[i] = canonical(e, true)
		countB[cb[i]]++
	}
	for i, e := range a.arr {
		ca[i] = canonical(e, true)
		if countB[ca[i]] > 0 {
			countB[ca[i]]--
			continue
		}
		p := pathIndex(path, i)
		return &diff{path: p, reason: p + ": " + render(e) + " has no match in B", offA: e.off, offB: b.off}
	}
	countA := map[string]int{}
	for _, c := range ca {
		countA[c]++
	}
	for i, e := range b.arr {
		if countA[cb[i]] > 0 {
			countA[cb[i]]--
			continue
		}
		p := pathIndex(path, i)
		return &diff{path: p, reason: p + ": " + render(e) + " in B has no match in A", offA: a.off, offB: e.off}
	}
	return nil
}

// canonical encodes v unambiguously: object keys sorted, numbers in
// canonical decimal form, arrays sorted when unordered.
func canonical(v *jv, unordered bool) string {
	var b strings.Builder
	writeCanonical(&b, v, unordered)
	return b.String()
}

func writeCanonical(b *strings.Builder, v *jv, unordered bool) {
	switch v.kind {
	case 'z':
		b.WriteString("null")
	case 'b':
		b.WriteString(strconv.FormatBool(v.b))
	case 'n':
		b.WriteString(canonNumber(v.s))
	case 's':
		b.WriteString(strconv.Quote(v.s))
	case 'o':
		keys := make([]string, 0, len(v.obj))
		for k := range v.obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			writeCanonical(b, v.obj[k], unordered)
		}
		b.WriteByte('}')
	case 'a':
		elems := make([]string, len(v.arr))
		for i, e := range v.arr {
			elems[i] = canonical(e, unordered)
		}
		if unordered {
			slices.Sort(elems)
		}
		b.WriteByte('[')
		b.WriteString(strings.Join(elems, ","))
		b.WriteByte(']')
	}
}

// canonNumber returns an exact canonical form of a JSON number:
// [-]digits"e"exponent with no leading or trailing zeros in digits, so that
// 1, 1.0, 10e-1 and 0.1e1 all map to "1e0" and -0 to "0". No float rounding.
func canonNumber(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expStr, hasExp := strings.Cut(strings.ToLower(s), "e")
	ip, fp, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(ip+fp, "0")
	if digits == "" {
		return "0"
	}
	exp := new(big.Int)
	if hasExp {
		if _, ok := exp.SetString(strings.TrimPrefix(expStr, "+"), 10); !ok {
			return "?" + s // cannot happen for valid JSON
		}
	}
	trimmed := strings.TrimRight(digits, "0")
	exp.Add(exp, big.NewInt(int64(len(digits)-len(trimmed)-len(fp))))
	if neg {
		trimmed = "-" + trimmed
	}
	return trimmed + "e" + exp.String()
}

// render shows a value in a Reason: scalars as JSON, containers summarised.
func render(v *jv) string {
	switch v.kind {
	case 'z':
		return "null"
	case 'b':
		return strconv.FormatBool(v.b)
	case 'n':
		return v.s
	case 's':
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(short(v.s, 60))
		return strings.TrimSuffix(buf.String(), "\n")
	case 'o':
		return fmt.Sprintf("object(%d keys)", len(v.obj))
	case 'x':
		return "(ignored)"
	default:
		return fmt.Sprintf("array(%d)", len(v.arr))
	}
}
