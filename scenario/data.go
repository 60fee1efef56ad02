package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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
// files together at most MaxDataBytes, never in a .git directory, /proc or
// /sys (refusedPath), and, unless LoadOptions.AllowDataOutside, inside the
// scenario's directory tree once every symlink is resolved: a scenario
// that a pull request changes cannot send /etc/passwd, the job's token in
// .git/config or /proc/self/environ to a target.
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
	if at, link, why := refusedPath(p); why != "" {
		via := ""
		if link != "" && !n.expanded {
			via = " (through the symlink " + link + ", to " + at + ")"
		}
		l.errNode(n, f, "%s is %s%s: %s", shown, refusedWhere(at), via, why)
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

// maxLinks bounds the symlinks refusedPath follows, as the kernel does.
const maxLinks = 40

// refusedPath follows p a component at a time, resolving each
// symlink as the kernel does, and says the first path it passes through
// that no data file may be read from, the last symlink it followed to get
// there ("" for none), and why; why is "" when there is no such path (or
// when p cannot be followed: reading it then fails with the reason).
// Every step counts, not only where p ends: /dev/fd/3 goes through
// /proc/self/fd, and a symlink into .git/ is in .git.
//
//   - A .git directory: actions/checkout writes the job's token into
//     .git/config, and a scenario's directory is often the checkout's.
//   - /proc and /sys: the processes' environments (/proc/self/environ holds
//     every variable of the job), their memory maps and the kernel's state;
//     -allow-data-outside does not lift this.
func refusedPath(p string) (at, link, why string) {
	rest, err := filepath.Abs(p)
	if err != nil {
		return "", "", ""
	}
	done := "/"
	for links := 0; rest != ""; {
		comp, more, _ := strings.Cut(strings.TrimLeft(rest, "/"), "/")
		rest = more
		switch comp {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, comp)
		if why := refusedWhy(next); why != "" {
			return next, link, why
		}
		fi, err := os.Lstat(next)
		if err != nil {
			return "", "", ""
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if links++; links > maxLinks {
			return "", "", ""
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", "", ""
		}
		link = next
		if filepath.IsAbs(target) {
			done = "/"
		}
		rest = target + "/" + rest
	}
	return "", "", ""
}

// refusedWhy says why no data file may be under p, or "".
func refusedWhy(p string) string {
	if under(p, "/proc") || under(p, "/sys") {
		return "a data file is never read from /proc or /sys, which hold the environment of every process of the job and the kernel's state, not even with -allow-data-outside"
	}
	dir := filepath.Dir(p)
	for d := dir; ; d = filepath.Dir(d) {
		if strings.EqualFold(filepath.Base(d), ".git") {
			return "a data file is never read from a .git directory: actions/checkout keeps the job's token in .git/config"
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// refusedWhere names what refused path p is in.
func refusedWhere(p string) string {
	switch {
	case under(p, "/proc"):
		return "under /proc"
	case under(p, "/sys"):
		return "under /sys"
	}
	return "inside a .git directory"
}

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}
