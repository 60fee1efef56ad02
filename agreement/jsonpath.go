package agreement

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

type segKind int

const (
	segKey segKind = iota
	segIndex
	segWild
)

// seg is one step of an ignore path.
type seg struct {
	kind      segKind
	key       string
	index     int
	recursive bool // preceded by "..": matches at this node and every descendant
}

// parsePath parses "$", ".key", "['key']", "[\"key\"]", "[n]", "[*]", ".*"
// and ".." steps.
func parsePath(p string) ([]seg, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, errors.New("must start with $")
	}
	var segs []seg
	i := 1
	for i < len(p) {
		recursive := false
		switch {
		case strings.HasPrefix(p[i:], ".."):
			recursive = true
			i += 2
			if i >= len(p) {
				return nil, errors.New("'..' must be followed by a name, * or [")
			}
			if p[i] == '[' {
				break
			}
			fallthrough
		case p[i] == '.':
			if !recursive {
				i++
			}
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			name := p[i:j]
			if name == "" {
				return nil, fmt.Errorf("empty name at offset %d", i)
			}
			if name == "*" {
				segs = append(segs, seg{kind: segWild, recursive: recursive})
			} else {
				segs = append(segs, seg{kind: segKey, key: name, recursive: recursive})
			}
			i = j
			continue
		case p[i] != '[':
			return nil, fmt.Errorf("unexpected %q at offset %d", p[i], i)
		}
		// bracket step at p[i] == '['
		s, n, err := parseBracket(p[i:])
		if err != nil {
			return nil, fmt.Errorf("%v at offset %d", err, i)
		}
		s.recursive = recursive
		segs = append(segs, s)
		i += n
	}
	return segs, nil
}

func parseBracket(p string) (seg, int, error) {
	if len(p) < 3 {
		return seg{}, 0, errors.New("unterminated [")
	}
	switch q := p[1]; {
	case q == '*':
		if p[2] != ']' {
			return seg{}, 0, errors.New("expected ] after *")
		}
		return seg{kind: segWild}, 3, nil
	case q == '\'' || q == '"':
		var b strings.Builder
		for i := 2; i < len(p); i++ {
			c := p[i]
			switch {
			case c == '\\' && i+1 < len(p):
				i++
				b.WriteByte(p[i])
			case c == q:
				if i+1 >= len(p) || p[i+1] != ']' {
					return seg{}, 0, errors.New("expected ] after quoted name")
				}
				return seg{kind: segKey, key: b.String()}, i + 2, nil
			default:
				b.WriteByte(c)
			}
		}
		return seg{}, 0, errors.New("unterminated quoted name")
	default:
		end := strings.IndexByte(p, ']')
		if end < 0 {
			return seg{}, 0, errors.New("unterminated [")
		}
		n, err := strconv.Atoi(strings.TrimSpace(p[1:end]))
		if err != nil {
			return seg{}, 0, fmt.Errorf("bad index %q", p[1:end])
		}
		return seg{kind: segIndex, index: n}, end + 1, nil
	}
}

// removePath deletes every node matched by segs from the tree rooted at v
// and returns the (possibly replaced) root.
func removePath(v *jv, segs []seg) *jv {
	if len(segs) == 0 {
		return &jv{kind: 'z', off: v.off, keyOff: v.keyOff} // "$": ignore everything
	}
	apply(v, segs)
	return v
}

func apply(v *jv, segs []seg) {
	s, rest := segs[0], segs[1:]
	applyHere(v, s, rest)
	if s.recursive {
		for _, c := range v.arr {
			apply(c, segs)
		}
		for _, c := range v.obj {
			apply(c, segs)
		}
	}
}

func applyHere(v *jv, s seg, rest []seg) {
	switch v.kind {
	case 'o':
		switch s.kind {
		case segKey:
			c, ok := v.obj[s.key]
			if !ok {
				return
			}
			if len(rest) == 0 {
				delete(v.obj, s.key)
			} else {
				apply(c, rest)
			}
		case segWild:
			if len(rest) == 0 {
				clear(v.obj)
				return
			}
			for _, c := range v.obj {
				apply(c, rest)
			}
		}
	case 'a':
		switch s.kind {
		case segIndex:
			i := s.index
			if i < 0 {
				i += len(v.arr)
			}
			if i < 0 || i >= len(v.arr) {
				return
			}
			if len(rest) == 0 {
				// Marked, not spliced out: the next path's indexes still
				// name the elements they named in the answer.
				v.arr[i] = &jv{kind: 'x', off: v.arr[i].off, keyOff: v.arr[i].keyOff}
			} else {
				apply(v.arr[i], rest)
			}
		case segWild:
			if len(rest) == 0 {
				v.arr = v.arr[:0]
				return
			}
			for _, c := range v.arr {
				apply(c, rest)
			}
		}
	}
}

// pathKey appends an object key to a JSON path.
func pathKey(path, key string) string {
	if isIdent(key) {
		return path + "." + key
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return path + "['" + r.Replace(key) + "']"
}

func pathIndex(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}
