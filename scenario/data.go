package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

func (l *loader) data(n *node) {
	l.s.Data = map[string][]string{}
	if n == nil || !l.mapping(n, "data", "lists") {
		return
	}
	for i, k := range n.keys {
		f := join("data", k.text)
		v := n.vals[i]
		var items []string
		switch v.kind {
		case kindSeq:
			var ok bool
			if items, ok = l.strList(v, f); !ok {
				continue
			}
		case kindMap:
			m, ok := l.fields(v, f, "file")
			if !ok || m["file"] == nil {
				if ok {
					l.errNode(v, f+".file", "missing (want {file: path})")
				}
				continue
			}
			if items, ok = l.dataFile(m["file"], f+".file"); !ok {
				continue
			}
		default:
			l.errNode(v, f, "want a list of strings or {file: path}, got %s", v.describe())
			continue
		}
		if len(items) == 0 {
			l.errNode(v, f, "must not be empty")
			continue
		}
		if l.dataItems += len(items); l.dataItems > MaxDataItems {
			l.errNode(v, f, "the data lists together hold more than %d items (scenario.MaxDataItems)", MaxDataItems)
			return
		}
		l.s.Data[k.text] = items
	}
}

// dataFile reads the items of a data file, one per non-empty line. The
// file must be a regular file of at most MaxDataFileSize bytes, the data
// files together at most MaxDataBytes, and, unless
// LoadOptions.AllowDataOutside, inside the scenario's directory tree once
// every symlink is resolved: a scenario that a pull request changes cannot
// send /etc/passwd or /proc/self/environ to a target.
func (l *loader) dataFile(n *node, f string) ([]string, bool) {
	name, ok := l.nonEmptyStr(n, f)
	if !ok {
		return nil, false
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(l.s.Dir, p)
	}
	// Errors name the file as written when it came out of ${VAR}.
	shown := p
	if n.expanded {
		shown = n.raw
	}
	fail := func(err error) ([]string, bool) {
		var pe *fs.PathError
		if n.expanded && errors.As(err, &pe) {
			err = &fs.PathError{Op: pe.Op, Path: n.raw, Err: pe.Err}
		} else if n.expanded {
			err = fmt.Errorf("cannot read %s", n.raw)
		}
		l.errNode(n, f, "%v", err)
		return nil, false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fail(err)
	}
	if !l.opts.AllowDataOutside {
		root, err := filepath.EvalSymlinks(l.s.Dir)
		if err != nil {
			return fail(err)
		}
		if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			where := ""
			if real != p && !n.expanded {
				where = " (it resolves to " + real + ")"
			}
			l.errNode(n, f, "%s is outside the scenario's directory %s%s: a data file must be in the scenario's directory tree, symlinks resolved (the -allow-data-outside flag lifts this)",
				shown, l.s.Dir, where)
			return nil, false
		}
	}
	b, err := readRegular(real, int64(min(MaxDataFileSize, MaxDataBytes-l.dataBytes)))
	switch {
	case errors.Is(err, errNotRegular):
		l.errNode(n, f, "%s is not a regular file (a data file is read whole: a FIFO, a device or a directory is refused)", shown)
		return nil, false
	case errors.Is(err, errTooLarge) && l.dataBytes > MaxDataBytes-MaxDataFileSize:
		l.errNode(n, f, "with %s the data files together pass %s (scenario.MaxDataBytes)", shown, sizeText(MaxDataBytes))
		return nil, false
	case errors.Is(err, errTooLarge):
		l.errNode(n, f, "%s is larger than %s (scenario.MaxDataFileSize)", shown, sizeText(MaxDataFileSize))
		return nil, false
	case err != nil:
		return fail(err)
	}
	l.dataBytes += len(b)
	// Items share the text they are cut from: a line costs its header.
	text := string(b)
	var items []string
	for len(text) > 0 && len(items) <= MaxDataItems {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		if line = strings.TrimSuffix(line, "\r"); line != "" {
			items = append(items, line)
		}
	}
	if len(items) == 0 {
		l.errNode(n, f, "%s has no items (want one per non-empty line)", n.errText())
		return nil, false
	}
	return items, true
}
