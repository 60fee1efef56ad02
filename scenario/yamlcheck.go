package scenario

import "fmt"

// checkYAML looks at the raw text of a scenario for the shapes that the
// YAML parser (goccy/go-yaml) handles in time and memory that grow with
// their square, before it is handed the text: 40 KB of "[" took 665 MB,
// 40 KB of "- " 632 MB, a block mapping of 20000 keys 1.6 GB. It refuses
// nesting deeper than MaxNesting (flow brackets, "- " and "? " entries and
// block indentation together) and block mappings of more than
// MaxMappingKeys keys, and says where, as line and column (columns count
// characters, as the parser's do). It returns "" when the text may go to
// the parser.
//
// It is not a YAML parser: it follows quotes, comments, block scalars and
// flow collections closely enough to find where nesting and keys start,
// and it errs on the side of counting. The converter checks the depth of
// the parsed tree again, with the same limit.
func checkYAML(src []byte) (line, col int, msg string) {
	c := yamlChecker{src: src, line: 1}
	c.run()
	return c.errLine, c.errCol, c.msg
}

// blockEntry is a block collection that is still open: a sequence whose
// entries ("- ") or a mapping whose keys are at column col.
type blockEntry struct {
	col, depth int
	seq        bool
	keys       int
}

type yamlChecker struct {
	src  []byte
	i    int // offset of the current line
	line int

	stack []blockEntry
	flow  int  // depth of flow collections, across lines
	quote byte // '"' or '\'' inside a quoted scalar, across lines
	base  int  // block depth under the flow collection open since a line of block context
	// blockScalar is set after a | or > header: lines indented past
	// scalarIndent are the scalar's text.
	blockScalar  bool
	scalarIndent int

	errLine, errCol int
	msg             string
}

func (c *yamlChecker) fail(col int, format string, args ...any) {
	if c.msg == "" {
		c.errLine, c.errCol, c.msg = c.line, col+1, fmt.Sprintf(format, args...)
	}
}

func (c *yamlChecker) run() {
	for c.i < len(c.src) && c.msg == "" {
		end := c.i
		for end < len(c.src) && c.src[end] != '\n' {
			end++
		}
		c.lineAt(c.src[c.i:end])
		c.i = end + 1
		c.line++
	}
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\r' }

// column is the character column (0-based) of offset off in ln.
func column(ln []byte, off int) int {
	n := 0
	for _, b := range ln[:off] {
		if b&0xC0 != 0x80 {
			n++
		}
	}
	return n
}

func (c *yamlChecker) lineAt(ln []byte) {
	indent := 0
	for indent < len(ln) && ln[indent] == ' ' {
		indent++
	}
	rest := indent
	for rest < len(ln) && isBlank(ln[rest]) {
		rest++
	}
	blank := rest == len(ln)
	if c.blockScalar {
		if blank || indent > c.scalarIndent {
			return
		}
		c.blockScalar = false
	}
	if c.quote != 0 || c.flow > 0 {
		// The rest of a quoted scalar or a flow collection: no block
		// structure begins on this line.
		c.scan(ln, 0, false)
		return
	}
	if blank || ln[rest] == '#' {
		return
	}
	if indent == 0 && len(ln) >= 3 && (string(ln[:3]) == "---" || string(ln[:3]) == "...") && (len(ln) == 3 || isBlank(ln[3])) {
		// A document marker: what follows is a new document.
		c.stack = c.stack[:0]
		c.scan(ln, 3, true)
		if c.blockScalar {
			c.scalarIndent = -1
		}
		return
	}
	if indent == 0 && ln[0] == '%' {
		return // a directive
	}
	for len(c.stack) > 0 && c.stack[len(c.stack)-1].col > column(ln, rest) {
		c.stack = c.stack[:len(c.stack)-1]
	}
	// The entries that open the line: "- ", "? ", ": ".
	pos := rest
	parentCol := -1
	for pos < len(ln) && (ln[pos] == '-' || ln[pos] == '?' || ln[pos] == ':') && (pos+1 == len(ln) || isBlank(ln[pos+1])) {
		col := column(ln, pos)
		switch ln[pos] {
		case '-':
			c.entry(col, true)
		case '?':
			c.entry(col, false)
		}
		parentCol = col
		pos++
		for pos < len(ln) && isBlank(ln[pos]) {
			pos++
		}
		if c.msg != "" {
			return
		}
	}
	if pos == len(ln) || ln[pos] == '#' {
		return
	}
	if keyAt := c.scan(ln, pos, true); keyAt {
		col := column(ln, pos)
		c.entry(col, false)
		parentCol = col
	}
	if c.blockScalar {
		c.scalarIndent = parentCol
	}
}

// entry records a sequence entry or a mapping key at col, on a line of
// block context.
func (c *yamlChecker) entry(col int, seq bool) {
	top := func() *blockEntry {
		if len(c.stack) == 0 {
			return nil
		}
		return &c.stack[len(c.stack)-1]
	}
	if !seq {
		// A key at the column of a sequence's entries ends the sequence:
		// it was the value of the mapping's previous key ("a:\n- x\nb: 1").
		for t := top(); t != nil && t.col == col && t.seq; t = top() {
			c.stack = c.stack[:len(c.stack)-1]
		}
	}
	t := top()
	switch {
	case t != nil && t.col == col && t.seq == seq:
		if !seq {
			t.keys++
			if t.keys > MaxMappingKeys {
				c.fail(col, "a block mapping of more than %d keys (scenario.MaxMappingKeys; write a long mapping as a flow mapping, {a: 1, b: 2, ...})", MaxMappingKeys)
			}
		}
		return
	}
	depth := 1
	if t != nil {
		depth = t.depth + 1
	}
	if depth > MaxNesting {
		c.fail(col, "nesting deeper than %d levels (scenario.MaxNesting)", MaxNesting)
		return
	}
	c.stack = append(c.stack, blockEntry{col: col, depth: depth, seq: seq, keys: 1})
}

// scan follows quotes, comments and flow collections from ln[from:] to the
// end of the line. With block set, the line is in block context: scan
// reports whether a mapping key ends on it (": " outside any quote or flow
// collection), and notes a block scalar header (| or > last on the line).
func (c *yamlChecker) scan(ln []byte, from int, block bool) (key bool) {
	if block {
		c.base = 0
		if len(c.stack) > 0 {
			c.base = c.stack[len(c.stack)-1].depth
		}
	}
	boundary := from == 0 || isBlank(ln[from-1]) || block
	lastTok, lastEnd := -1, -1 // the last token at depth 0 of a block line
	for i := from; i < len(ln); i++ {
		b := ln[i]
		if c.quote == '"' {
			switch b {
			case '\\':
				i++
			case '"':
				c.quote = 0
			}
			boundary = false
			continue
		}
		if c.quote == '\'' {
			if b == '\'' {
				if i+1 < len(ln) && ln[i+1] == '\'' {
					i++
				} else {
					c.quote = 0
				}
			}
			boundary = false
			continue
		}
		switch {
		case isBlank(b):
			boundary = true
			continue
		case b == '#' && boundary:
			i = len(ln)
			continue
		case (b == '"' || b == '\'') && (boundary || c.flow > 0 && i > 0 && (ln[i-1] == ':')):
			c.quote = b
		case b == '[' || b == '{':
			if boundary || c.flow > 0 {
				c.flow++
				if c.base+c.flow > MaxNesting {
					c.fail(column(ln, i), "nesting deeper than %d levels (scenario.MaxNesting)", MaxNesting)
					return false
				}
			}
		case b == ']' || b == '}':
			if c.flow > 0 {
				c.flow--
			}
		case b == ':' && c.flow == 0 && c.quote == 0 && (i+1 == len(ln) || isBlank(ln[i+1])):
			if block && !key {
				// What follows is the key's value, a level below it.
				key = true
				c.base++
				lastTok, lastEnd = -1, -1
				boundary = true
				continue
			}
		}
		if block && c.flow == 0 && c.quote == 0 {
			if boundary {
				lastTok = i
			}
			lastEnd = i + 1
		}
		// Inside a flow collection a new scalar starts after [ { , too.
		boundary = c.flow > 0 && (b == '[' || b == '{' || b == ',')
	}
	if block && lastTok >= 0 && c.flow == 0 && c.quote == 0 && (ln[lastTok] == '|' || ln[lastTok] == '>') {
		header := true
		for _, h := range ln[lastTok+1 : lastEnd] {
			if h != '-' && h != '+' && (h < '0' || h > '9') {
				header = false
			}
		}
		c.blockScalar = header
	}
	return key
}
