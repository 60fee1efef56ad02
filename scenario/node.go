package scenario

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/goccy/go-yaml/ast"
)

// node is the YAML tree reduced to what validation needs: kinds, text and
// positions, with anchors resolved and ${VAR} expanded. Working on our own
// tree keeps the parser's node zoo out of every check.
type node struct {
	kind      nodeKind
	line, col int
	// keyLine and keyCol locate the mapping key that holds this node, so a
	// missing field can be reported where its parent was written.
	keyLine, keyCol int

	scalar scalarKind
	text   string // scalar value; strings unescaped and expanded
	// raw is the scalar as written: unescaped, before ${VAR} expansion.
	// Target.Shown and error messages use it so that a secret passed in
	// through the environment is never echoed.
	raw      string
	expanded bool // text came out of a ${VAR} expansion
	// vars are the variables expanded into a field shown as it is
	// (shownField); asIs is set once the load knows none of them is
	// hidden, and errors then quote text rather than raw.
	vars []string
	asIs bool
	// broken marks a value already reported (a failed ${VAR}): checks
	// skip it rather than pile a second error on the same text.
	broken bool

	keys  []*node // mapping keys (scalars), in file order
	vals  []*node
	items []*node // sequence items
}

type nodeKind uint8

const (
	kindNull nodeKind = iota
	kindScalar
	kindMap
	kindSeq
)

type scalarKind uint8

const (
	scalarString scalarKind = iota
	scalarInt
	scalarFloat
	scalarBool
)

func (n *node) describe() string {
	switch n.kind {
	case kindNull:
		return "nothing"
	case kindMap:
		return "a mapping"
	case kindSeq:
		return "a list"
	}
	switch n.scalar {
	case scalarInt:
		return "integer " + n.text
	case scalarFloat:
		return "number " + n.text
	case scalarBool:
		return "boolean " + n.text
	}
	return fmt.Sprintf("string %q", n.errText())
}

// errText is the text an error message may quote: the value as written
// when it came out of a ${VAR} expansion, since the expanded value may be
// a secret and errors end up in CI logs.
//
// A long value is cut to its first maxErrText bytes and "…": errors name
// a value, they need not carry a megabyte of it.
func (n *node) errText() string {
	s := n.text
	if n.expanded && !n.asIs {
		s = n.raw
	}
	if len(s) > maxErrText {
		cut := maxErrText
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

const maxErrText = 256

// shownText is the scalar as a report or an error shows it: as written
// (a ${VAR} unexpanded, since its value may be a secret), or as expanded
// where the load found it shown as it is (asIs: a ref, a directory, an
// image, a compose file).
func (n *node) shownText() string {
	if n.asIs {
		return n.text
	}
	return n.raw
}

// errNum is how an error shows the number num parsed from n: as is, or
// the quoted text as written when it came out of a ${VAR} expansion.
func (n *node) errNum(num string) string {
	if n.expanded {
		return strconv.Quote(n.raw)
	}
	return num
}

// reportPos is where a problem with a missing child of n is reported.
func (n *node) reportPos() (int, int) {
	if n.keyLine > 0 {
		return n.keyLine, n.keyCol
	}
	return n.line, n.col
}

// converter turns the go-yaml AST into nodes.
type converter struct {
	getenv func(string) string
	// getenvShown expands ${VAR} in the fields whose values are shown
	// as they are (shownField); aliased notes that some value was used
	// again elsewhere through an alias, where it may not be.
	getenvShown func(string) string
	aliased     bool
	shown       []*node // the scalars expanded in shown fields
	anchors     map[string]*node
	errf        func(line, col int, field, msg string)
	// unset, when not nil, takes a ${VAR} of an unset variable instead of
	// errf (LoadOptions.Decide): whether it is an error depends on the
	// field, known to be used or not only once the kind is read.
	unset func(line, col int, field, name string)
	depth int
	// size is the tree converted so far with aliases expanded, in nodes
	// plus bytes of text, against MaxExpanded; anchorSize is the size of
	// each anchor's value, what an alias of it adds.
	size       int
	anchorSize map[string]int
	tooBig     bool
}

func pos(n ast.Node) (int, int) {
	if d, ok := n.(*ast.DocumentNode); ok && d.Body == nil {
		return 1, 1 // an empty document, whose GetToken panics
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return 1, 1
	}
	return tk.Position.Line, tk.Position.Column
}

func (c *converter) convert(an ast.Node, field string) *node {
	if an == nil {
		return &node{kind: kindNull, line: 1, col: 1}
	}
	if c.tooBig {
		return &node{kind: kindNull, line: 1, col: 1}
	}
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > MaxNesting {
		l, col := pos(an)
		c.errf(l, col, field, fmt.Sprintf("nesting deeper than %d levels (scenario.MaxNesting)", MaxNesting))
		return &node{kind: kindNull, line: l, col: col}
	}
	line, col := pos(an)
	if c.grow(1, line, col, field) {
		return &node{kind: kindNull, line: line, col: col}
	}
	switch a := an.(type) {
	case *ast.DocumentNode:
		return c.convert(a.Body, field)
	case *ast.NullNode:
		return &node{kind: kindNull, line: line, col: col}
	case *ast.StringNode:
		return c.str(a.Value, line, col, field)
	case *ast.LiteralNode:
		return c.str(a.Value.Value, line, col, field)
	case *ast.IntegerNode:
		c.grow(len(a.Token.Value), line, col, field)
		return &node{kind: kindScalar, scalar: scalarInt, text: a.Token.Value, raw: a.Token.Value, line: line, col: col}
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		v := an.GetToken().Value
		c.grow(len(v), line, col, field)
		return &node{kind: kindScalar, scalar: scalarFloat, text: v, raw: v, line: line, col: col}
	case *ast.BoolNode:
		return &node{kind: kindScalar, scalar: scalarBool, text: a.Token.Value, raw: a.Token.Value, line: line, col: col}
	case *ast.TagNode:
		n := c.convert(a.Value, field)
		switch a.Start.Value {
		case "!!str":
			if n.kind == kindScalar && n.scalar != scalarString {
				return c.str(n.text, n.line, n.col, field)
			}
		case "!!int", "!!float", "!!bool", "!!map", "!!seq", "!!null":
		default:
			c.errf(line, col, field, fmt.Sprintf("unsupported tag %s", a.Start.Value))
		}
		return n
	case *ast.AnchorNode:
		before := c.size
		n := c.convert(a.Value, field)
		name := a.Name.GetToken().Value
		c.anchors[name] = n
		if c.anchorSize == nil {
			c.anchorSize = map[string]int{}
		}
		c.anchorSize[name] = c.size - before
		return n
	case *ast.AliasNode:
		name := a.Value.GetToken().Value
		n, ok := c.anchors[name]
		if !ok {
			c.errf(line, col, field, fmt.Sprintf("unknown alias *%s", name))
			return &node{kind: kindNull, line: line, col: col}
		}
		c.aliased = true
		// The alias stands for a copy of the anchor's whole value: that
		// is what every check after this walks.
		if c.grow(c.anchorSize[name], line, col, field) {
			return &node{kind: kindNull, line: line, col: col}
		}
		cp := *n
		cp.keyLine, cp.keyCol = 0, 0
		return &cp
	case *ast.MappingNode:
		return c.mapping(a.Values, line, col, field)
	case *ast.MappingValueNode:
		return c.mapping([]*ast.MappingValueNode{a}, line, col, field)
	case *ast.SequenceNode:
		n := &node{kind: kindSeq, line: line, col: col}
		for i, v := range a.Values {
			if c.tooBig {
				break
			}
			n.items = append(n.items, c.convert(v, fmt.Sprintf("%s[%d]", field, i)))
		}
		return n
	}
	c.errf(line, col, field, fmt.Sprintf("unsupported YAML node %s", an.Type()))
	return &node{kind: kindNull, line: line, col: col}
}

func (c *converter) mapping(values []*ast.MappingValueNode, line, col int, field string) *node {
	n := &node{kind: kindMap, line: line, col: col}
	var merged []*node
	first := true
	for _, mv := range values {
		if c.tooBig {
			break
		}
		if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
			v := c.convert(mv.Value, field)
			srcs := []*node{v}
			if v.kind == kindSeq {
				srcs = v.items
			}
			for _, s := range srcs {
				if s.kind != kindMap {
					c.errf(s.line, s.col, field, "merge key << wants a mapping or a list of mappings")
					continue
				}
				merged = append(merged, s)
			}
			continue
		}
		var kn ast.Node = mv.Key
		if mk, ok := kn.(*ast.MappingKeyNode); ok {
			kn = mk.Value
		}
		k := c.convert(kn, field)
		if k.kind != kindScalar {
			c.errf(k.line, k.col, field, "a mapping key must be a plain value")
			continue
		}
		// The key as written: ${VAR} is expanded in values only.
		if s, ok := kn.(*ast.StringNode); ok {
			k.text, k.expanded = s.Value, false
		}
		v := c.convert(mv.Value, join(field, k.text))
		v.keyLine, v.keyCol = k.line, k.col
		if v.kind == kindNull {
			// go-yaml places an empty value oddly; the key is where it was written.
			v.line, v.col = k.line, k.col
		}
		if first {
			n.line, n.col, first = k.line, k.col, false
		}
		n.keys = append(n.keys, k)
		n.vals = append(n.vals, v)
	}
	for _, m := range merged {
		for i, k := range m.keys {
			if n.get(k.text) == nil {
				n.keys = append(n.keys, k)
				n.vals = append(n.vals, m.vals[i])
			}
		}
	}
	return n
}

func (n *node) get(key string) *node {
	for i, k := range n.keys {
		if k.text == key {
			return n.vals[i]
		}
	}
	return nil
}

func (c *converter) str(s string, line, col int, field string) *node {
	n := &node{kind: kindScalar, scalar: scalarString, text: s, raw: s, line: line, col: col}
	if strings.IndexByte(s, '$') < 0 {
		c.grow(len(s), line, col, field)
		return n
	}
	getenv := c.getenv
	var vars []string
	if c.getenvShown != nil && shownField.MatchString(field) {
		getenv = func(name string) string {
			vars = append(vars, name)
			return c.getenvShown(name)
		}
	}
	out, expanded, err := expandEnv(s, getenv)
	if err != nil {
		if ue := (*unsetError)(nil); c.unset != nil && errors.As(err, &ue) {
			c.unset(line, col, field, ue.name)
		} else {
			c.errf(line, col, field, err.Error())
		}
		n.broken = true
		return n
	}
	if expanded && vars != nil {
		n.vars = vars
		c.shown = append(c.shown, n)
	}
	c.grow(len(s)+len(out), line, col, field)
	n.text, n.expanded = out, expanded
	return n
}

// grow adds n to the size of the tree and reports, once, whether it went
// past MaxExpanded; after that, convert makes nothing but nulls.
func (c *converter) grow(n, line, col int, field string) bool {
	if c.tooBig {
		return true
	}
	c.size += n
	if c.size > MaxExpanded {
		c.tooBig = true
		c.errf(line, col, field, fmt.Sprintf("the file's values, aliases expanded, pass %s (scenario.MaxExpanded)", sizeText(MaxExpanded)))
	}
	return c.tooBig
}

// expandEnv expands ${VAR} and ${VAR:-default}; $$ is a literal dollar and
// any other $ is left alone (JSON paths such as $.a stay as written).
// getenv cannot tell unset from empty, so an empty value counts as unset.
func expandEnv(s string, getenv func(string) string) (string, bool, error) {
	var b strings.Builder
	expanded := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '$' || i+1 >= len(s) {
			b.WriteByte(ch)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '{':
		default:
			b.WriteByte(ch)
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", false, fmt.Errorf("unterminated ${ in %q", s)
		}
		expr := s[i+2 : i+2+end]
		name, def, hasDef := strings.Cut(expr, ":-")
		if !validEnvName(name) {
			return "", false, fmt.Errorf("${%s}: %s is not a variable name", textsafe.Clip(expr, textsafe.QuoteRunes), textsafe.Quote(name, textsafe.QuoteRunes))
		}
		v := getenv(name)
		if v == "" {
			if !hasDef {
				return "", false, &unsetError{name}
			}
			v = def
		}
		b.WriteString(v)
		expanded = true
		i += 2 + end
	}
	return b.String(), expanded, nil
}

// unsetError is a ${VAR} without a default whose variable is not set.
type unsetError struct{ name string }

func (e *unsetError) Error() string {
	return fmt.Sprintf("environment variable %s is not set (write ${%s:-default} for a default)", e.name, e.name)
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}
