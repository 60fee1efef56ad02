package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// dec collects problems while walking the node tree. Every helper reports
// what it found wrong and returns ok=false; callers keep going so that one
// run shows every problem of a file.
type dec struct {
	file string
	errs *ErrorList
}

func (d *dec) errAt(line, col int, field, format string, args ...any) {
	d.errs.add(&Error{File: d.file, Line: line, Col: col, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (d *dec) errNode(n *node, field, format string, args ...any) {
	d.errAt(n.line, n.col, field, format, args...)
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func index(parent string, i int) string {
	return fmt.Sprintf("%s[%d]", parent, i)
}

// fields checks that n is a mapping whose keys are all among allowed and
// returns the values by key. Unknown keys are reported with the closest
// allowed name.
func (d *dec) fields(n *node, field string, allowed ...string) (map[string]*node, bool) {
	if n.kind != kindMap {
		d.errNode(n, field, "want a mapping with %s, got %s", strings.Join(allowed, ", "), n.describe())
		return nil, false
	}
	m := make(map[string]*node, len(n.keys))
	for i, k := range n.keys {
		ok := false
		for _, a := range allowed {
			if k.text == a {
				ok = true
				break
			}
		}
		if !ok {
			msg := fmt.Sprintf("unknown field %q", k.text)
			if s := DidYouMean(k.text, allowed); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			} else {
				msg += fmt.Sprintf(" (want one of %s)", strings.Join(allowed, ", "))
			}
			d.errAt(k.line, k.col, join(field, k.text), "%s", msg)
			continue
		}
		m[k.text] = n.vals[i]
	}
	return m, true
}

func (d *dec) mapping(n *node, field, what string) bool {
	if n.kind != kindMap {
		d.errNode(n, field, "want a mapping of %s, got %s", what, n.describe())
		return false
	}
	return true
}

func (d *dec) list(n *node, field, what string) bool {
	if n.kind != kindSeq {
		d.errNode(n, field, "want a list of %s, got %s", what, n.describe())
		return false
	}
	return true
}

// str accepts any scalar and returns its text: a header value written as
// 10 means "10".
func (d *dec) str(n *node, field string) (string, bool) {
	if n.broken {
		return "", false
	}
	if n.kind != kindScalar {
		d.errNode(n, field, "want a string, got %s", n.describe())
		return "", false
	}
	return n.text, true
}

func (d *dec) nonEmptyStr(n *node, field string) (string, bool) {
	s, ok := d.str(n, field)
	if ok && s == "" {
		d.errNode(n, field, "must not be empty")
		return "", false
	}
	return s, ok
}

// integer accepts a YAML integer, or a string that came out of ${VAR}
// expansion (the environment only has strings).
func (d *dec) integer(n *node, field string) (int64, bool) {
	if n.broken {
		return 0, false
	}
	if n.kind == kindScalar && (n.scalar == scalarInt || n.scalar == scalarString && n.expanded) {
		v, err := strconv.ParseInt(strings.ReplaceAll(n.text, "_", ""), 0, 64)
		if err == nil {
			return v, true
		}
	}
	d.errNode(n, field, "want an integer, got %s", n.describe())
	return 0, false
}

func (d *dec) intRange(n *node, field string, lo, hi int64) (int, bool) {
	v, ok := d.integer(n, field)
	if !ok {
		return 0, false
	}
	if v < lo || v > hi {
		num := n.errNum(strconv.FormatInt(v, 10))
		if hi == math.MaxInt32 {
			d.errNode(n, field, "%s is out of range (want at least %d)", num, lo)
		} else {
			d.errNode(n, field, "%s is out of range (want %d..%d)", num, lo, hi)
		}
		return 0, false
	}
	return int(v), true
}

func (d *dec) uint64(n *node, field string) (uint64, bool) {
	if n.broken {
		return 0, false
	}
	if n.kind == kindScalar && (n.scalar == scalarInt || n.scalar == scalarString && n.expanded) {
		v, err := strconv.ParseUint(strings.ReplaceAll(n.text, "_", ""), 0, 64)
		if err == nil {
			return v, true
		}
	}
	d.errNode(n, field, "want an unsigned 64-bit integer, got %s", n.describe())
	return 0, false
}

func (d *dec) float(n *node, field string) (float64, bool) {
	if n.broken {
		return 0, false
	}
	if n.kind == kindScalar && (n.scalar == scalarInt || n.scalar == scalarFloat || n.scalar == scalarString && n.expanded) {
		v, err := strconv.ParseFloat(n.text, 64)
		if err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v, true
		}
	}
	d.errNode(n, field, "want a number, got %s", n.describe())
	return 0, false
}

// duration accepts Go duration syntax; a bare 0 is allowed since it is
// unambiguous, other bare numbers are not (seconds? milliseconds?).
func (d *dec) duration(n *node, field string) (time.Duration, bool) {
	if n.broken {
		return 0, false
	}
	if n.kind == kindScalar {
		if n.text == "0" {
			return 0, true
		}
		if n.scalar == scalarString {
			if v, err := time.ParseDuration(n.text); err == nil {
				if v > MaxDuration {
					d.errNode(n, field, "%q is longer than %s, the longest a scenario may ask for (scenario.MaxDuration)", n.errText(), durText(MaxDuration))
					return 0, false
				}
				return v, true
			}
			d.errNode(n, field, "%q is not a duration (want e.g. 10s, 1m30s)", n.errText())
			return 0, false
		}
	}
	d.errNode(n, field, "%s is not a duration (want e.g. 10s, 1m30s)", n.describe())
	return 0, false
}

// argv accepts a list of strings or one string split on whitespace.
func (d *dec) argv(n *node, field string) ([]string, bool) {
	var out []string
	if n.broken {
		return nil, false
	}
	switch n.kind {
	case kindScalar:
		out = strings.Fields(n.text)
	case kindSeq:
		ok := true
		for i, it := range n.items {
			s, good := d.str(it, index(field, i))
			ok = ok && good
			out = append(out, s)
		}
		if !ok {
			return nil, false
		}
	default:
		d.errNode(n, field, "want a list of strings or a command line, got %s", n.describe())
		return nil, false
	}
	if len(out) == 0 || out[0] == "" {
		d.errNode(n, field, "must not be empty")
		return nil, false
	}
	return out, true
}

func (d *dec) strList(n *node, field string) ([]string, bool) {
	if !d.list(n, field, "strings") {
		return nil, false
	}
	ok := true
	out := make([]string, 0, len(n.items))
	for i, it := range n.items {
		s, good := d.str(it, index(field, i))
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

// strMap reads a mapping of strings, returning keys in file order.
func (d *dec) strMap(n *node, field string) (keys []string, m map[string]string, nodes map[string]*node, ok bool) {
	if !d.mapping(n, field, "strings") {
		return nil, nil, nil, false
	}
	ok = true
	m = make(map[string]string, len(n.keys))
	nodes = make(map[string]*node, len(n.keys))
	for i, k := range n.keys {
		s, good := d.str(n.vals[i], join(field, k.text))
		if !good {
			ok = false
			continue
		}
		keys = append(keys, k.text)
		m[k.text] = s
		nodes[k.text] = n.vals[i]
	}
	return keys, m, nodes, ok
}
