package scenario

import (
	"fmt"
	"sort"
	"strings"

	"github.com/benchgate/benchgate/internal/textsafe"
)

// maxErrors caps an ErrorList: past a score of problems the rest are
// usually echoes of the first ones.
const maxErrors = 20

// Error is one problem in a scenario file.
type Error struct {
	File      string
	Line, Col int
	Field     string // e.g. "load.concurrency[1]"; "" for a YAML syntax error
	Msg       string
}

// maxMsgRunes caps what one Error says, whatever it quotes of the file (a
// name, a key, the names a file defines): a 1 MB key makes an error of a
// few KB, never a 1 MB line in a workflow log.
const maxMsgRunes = 2000

func (e *Error) Error() string {
	msg := textsafe.Clip(e.Msg, maxMsgRunes)
	if e.Field == "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Col, textsafe.Clip(e.Field, textsafe.QuoteRunes), msg)
}

// ErrorList is every problem found in one file, in file order.
type ErrorList struct {
	Errors []*Error
	// Dropped counts the problems left out past the cap.
	Dropped int
}

func (l *ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l.Errors {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	if l.Dropped > 0 {
		fmt.Fprintf(&b, "\n(and %d more errors)", l.Dropped)
	}
	return b.String()
}

func (l *ErrorList) add(e *Error) {
	if len(l.Errors) >= maxErrors {
		l.Dropped++
		return
	}
	l.Errors = append(l.Errors, e)
}

func (l *ErrorList) sort() {
	sort.SliceStable(l.Errors, func(i, j int) bool {
		a, b := l.Errors[i], l.Errors[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// err returns l as an error, or nil when it holds no problem, so that a
// nil *ErrorList never hides inside a non-nil error.
func (l *ErrorList) err() error {
	if len(l.Errors) == 0 {
		return nil
	}
	l.sort()
	return l
}

// DidYouMean suggests the closest of names to s, or "" when none is close:
// the scenario's unknown fields and the CLI's unknown commands alike.
func DidYouMean(s string, names []string) string {
	// The distance takes time in the product of the lengths: past a
	// name's length, a suggestion would not help anyway.
	const longest = 64
	if len(s) > longest {
		return ""
	}
	best, bestD := "", 1<<30
	for _, n := range names {
		if len(n) > longest {
			continue
		}
		d := editDistance(strings.ToLower(s), strings.ToLower(n))
		if d < bestD {
			best, bestD = n, d
		}
	}
	limit := 2
	if len(s) <= 3 {
		limit = 1
	}
	if bestD >= len(s) {
		return ""
	}
	if bestD <= limit || (best != "" && (strings.HasPrefix(best, s) || strings.HasPrefix(s, best)) && len(s) >= 3) {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
