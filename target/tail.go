package target

import (
	"bytes"
	"slices"
	"strings"
	"sync"

	"github.com/benchgate/benchgate/internal/textsafe"
)

// Tail keeps the last n lines written to it. A process's output is
// copied in by os/exec's goroutine while the runner reads it.
type Tail struct {
	mu      sync.Mutex
	n       int
	lines   []string
	partial []byte
}

// NewTail makes a Tail of the last n lines.
func NewTail(n int) *Tail { return &Tail{n: n} }

func (w *Tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rest := p
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		w.push(string(append(w.partial, rest[:i]...)))
		w.partial = w.partial[:0]
		rest = rest[i+1:]
	}
	w.partial = append(w.partial, rest...)
	// A process writing without newlines must not grow this without bound.
	if len(w.partial) > 4096 {
		w.push(string(w.partial))
		w.partial = w.partial[:0]
	}
	return len(p), nil
}

// push keeps l escaped (see Sanitize): the lines are shown on terminals and
// stored in results.json.
func (w *Tail) push(l string) {
	l = Sanitize(strings.TrimRight(l, "\r"))
	if len(w.lines) == w.n {
		copy(w.lines, w.lines[1:])
		w.lines = w.lines[:w.n-1]
	}
	w.lines = append(w.lines, l)
}

// Lines returns the kept lines, an unterminated last line included.
func (w *Tail) Lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.lines)
	if len(w.partial) > 0 {
		out = append(out, Sanitize(string(w.partial)))
		if len(out) > w.n {
			out = out[1:]
		}
	}
	return out
}

// Sanitize replaces what a terminal could act on, or what would reorder or
// hide text, with a visible escape, by textsafe's one rule: tabs pass (a
// tail of go test output keeps its columns), every other control is shown
// as \x1b, \r or \u009b, bidi and invisible characters as \u202e, and
// bytes that are not UTF-8 (a lone 0x9b is CSI to some terminals) as \x9b.
// Text that needs none is returned as is, without allocating.
func Sanitize(s string) string {
	return textsafe.Escape(s, textsafe.Tab)
}
