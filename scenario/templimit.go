package scenario

import (
	"errors"
	"fmt"
	"reflect"
	"text/template"
	"text/template/parse"
)

// The work of a template is bounded three ways, since text/template has
// no limit of its own: {{range 2000000000}} would run for minutes and fill
// the memory, nested ranges multiply, and printf "%s%s" $a $a doubles a
// value at every step.
//
//   - Steps, counted at load over the parse tree: every node once, the
//     body of a range once per iteration. A range must say at load how many
//     iterations it makes: an integer ({{range 3}}) or the variables
//     ({{range $k, $v := .}}); a template may call another, not itself.
//     One request's templates together make at most MaxTemplateSteps.
//   - Output: what a field renders to is written through a writer that
//     stops the template past MaxTemplateOutput bytes, or past
//     MaxRequestSize for the whole request.
//   - Values: the functions that make new text (printf, print, println,
//     html, js, urlquery, json, pick) count their results against
//     MaxTemplateOutput per request, and printf refuses a width or a
//     precision above maxFmtWidth; before a function runs, a bound of its
//     result's size is checked, so nothing large is made to be refused.
//
// Each step then costs at most a comparison or a copy of a bounded value.

// maxFmtWidth is the largest width or precision printf accepts: fmt pads
// every element of a map or a slice to it.
const maxFmtWidth = 1000

var (
	errFieldTooLong   = fmt.Errorf("the rendered value passes %s (scenario.MaxTemplateOutput)", sizeText(MaxTemplateOutput))
	errRequestTooLong = fmt.Errorf("the request passes %s (scenario.MaxRequestSize)", sizeText(MaxRequestSize))
	errTooMuch        = fmt.Errorf("the functions' results pass %s in one request (scenario.MaxTemplateOutput)", sizeText(MaxTemplateOutput))
)

// limitWriter appends to b until it would pass limit bytes in all.
type limitWriter struct {
	b     []byte
	limit int
	err   error // what passing the limit means
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if len(w.b)+len(p) > w.limit {
		return 0, w.err
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

// budget is what a request's functions may still make, in bytes; nil
// checks each result alone.
type budget struct{ left int }

func (b *budget) charge(n int) error {
	if n > MaxTemplateOutput {
		return errTooMuch
	}
	if b == nil {
		return nil
	}
	if n > b.left {
		return errTooMuch
	}
	b.left -= n
	return nil
}

// boundedFuncs are the functions that make new text, in place of the
// builtins of the same names, counting against b.
func boundedFuncs(b *budget) template.FuncMap {
	// text/template says which function failed: "error calling printf: …".
	escaper := func(esc func(...any) string) func(...any) (string, error) {
		return func(args ...any) (string, error) {
			// An escape makes at most 6 bytes of one (js: \u003C).
			if err := b.check(6*argsBound(args) + len(args)); err != nil {
				return "", err
			}
			s := esc(args...)
			return s, b.charge(len(s))
		}
	}
	return template.FuncMap{
		"printf": func(format string, args ...any) (string, error) {
			verbs, err := fmtVerbs(format)
			if err != nil {
				return "", err
			}
			// Every verb may print a missing argument's %!d(MISSING),
			// every element be padded to the width.
			n := len(format) + 14*verbs
			for _, a := range args {
				n += 6*sizeBound(reflect.ValueOf(a), 0) + (maxFmtWidth+32)*leaves(reflect.ValueOf(a), 0)
			}
			if err := b.check(n); err != nil {
				return "", err
			}
			s := fmt.Sprintf(format, args...)
			return s, b.charge(len(s))
		},
		"print":    escaper(fmt.Sprint),
		"println":  escaper(fmt.Sprintln),
		"html":     escaper(template.HTMLEscaper),
		"js":       escaper(template.JSEscaper),
		"urlquery": escaper(template.URLQueryEscaper),
		"json": func(v any) (string, error) {
			if err := b.check(6*sizeBound(reflect.ValueOf(v), 0) + 4*leaves(reflect.ValueOf(v), 0)); err != nil {
				return "", err
			}
			s, err := jsonValue(v)
			if err != nil {
				return "", err
			}
			return s, b.charge(len(s))
		},
	}
}

// check says whether a result of up to n bytes fits, before it is made.
func (b *budget) check(n int) error {
	switch {
	case n > MaxTemplateOutput:
		return fmt.Errorf("the result could pass %s (scenario.MaxTemplateOutput)", sizeText(MaxTemplateOutput))
	case b != nil && n > b.left:
		return errTooMuch
	}
	return nil
}

func argsBound(args []any) int {
	n := 0
	for _, a := range args {
		n += sizeBound(reflect.ValueOf(a), 0) + 1
	}
	return n
}

// sizeBound bounds the bytes fmt's %v prints for v, before any escape or
// padding; leaves counts the values fmt prints one by one in it.
func sizeBound(v reflect.Value, depth int) int {
	if depth > 16 {
		return MaxTemplateOutput + 1
	}
	switch v.Kind() {
	case reflect.Invalid:
		return 5 // <nil>
	case reflect.String:
		return v.Len()
	case reflect.Bool:
		return 5
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return 24
	case reflect.Float32, reflect.Float64:
		return 330 // %f of 1e308
	case reflect.Complex64, reflect.Complex128:
		return 664
	case reflect.Map:
		n := 6
		it := v.MapRange()
		for it.Next() {
			n += sizeBound(it.Key(), depth+1) + sizeBound(it.Value(), depth+1) + 2
			if n > MaxTemplateOutput {
				return n
			}
		}
		return n
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return 4 * v.Len() // [1 2 3]
		}
		n := 2
		for i := 0; i < v.Len() && n <= MaxTemplateOutput; i++ {
			n += sizeBound(v.Index(i), depth+1) + 1
		}
		return n
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 5
		}
		return 1 + sizeBound(v.Elem(), depth+1)
	case reflect.Struct:
		n := 2
		for i := 0; i < v.NumField() && n <= MaxTemplateOutput; i++ {
			n += len(v.Type().Field(i).Name) + 2 + sizeBound(v.Field(i), depth+1)
		}
		return n
	}
	return 64
}

func leaves(v reflect.Value, depth int) int {
	if depth > 16 {
		return MaxTemplateOutput
	}
	switch v.Kind() {
	case reflect.Map:
		n := 0
		it := v.MapRange()
		for it.Next() && n <= MaxTemplateOutput {
			n += leaves(it.Key(), depth+1) + leaves(it.Value(), depth+1)
		}
		return n
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Len()
		}
		n := 0
		for i := 0; i < v.Len() && n <= MaxTemplateOutput; i++ {
			n += leaves(v.Index(i), depth+1)
		}
		return n
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 1
		}
		return leaves(v.Elem(), depth+1)
	case reflect.Struct:
		n := 0
		for i := 0; i < v.NumField() && n <= MaxTemplateOutput; i++ {
			n += leaves(v.Field(i), depth+1)
		}
		return n
	}
	return 1
}

// fmtVerbs counts the verbs of a printf format and refuses a width or a
// precision above maxFmtWidth or taken from an argument (*).
func fmtVerbs(format string) (int, error) {
	verbs := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			continue
		}
		verbs++
		num := -1
		for ; i < len(format); i++ {
			c := format[i]
			switch {
			case c >= '0' && c <= '9':
				if num < 0 {
					num = 0
				}
				num = num*10 + int(c-'0')
				if num > maxFmtWidth {
					return 0, fmt.Errorf("a width or precision above %d", maxFmtWidth)
				}
				continue
			case c == '*':
				return 0, errors.New("a width or precision from an argument (*)")
			case c == '.' || c == '+' || c == '-' || c == '#' || c == ' ' || c == '[' || c == ']':
				num = -1
				continue
			}
			break
		}
	}
	return verbs, nil
}

// dotKind is what dot holds where a node runs, as far as the count of a
// range over it needs to know.
type dotKind uint8

const (
	dotOther dotKind = iota
	dotVars          // the variant's variables: a map of nvars entries
	dotInt           // an integer below n: a range over an integer
)

type dotInfo struct {
	kind dotKind
	n    int64
}

// stepCounter counts the steps of a template (see above).
type stepCounter struct {
	tmpl   *template.Template
	nvars  int64
	root   dotInfo // $ of the template being counted
	active map[string]bool
	// why says why a count is unbounded; "" when it is not.
	why string
}

const unbounded = 1<<63 - 1

func satAdd(a, b int64) int64 {
	if a > unbounded-b {
		return unbounded
	}
	return a + b
}

// templateSteps is the most steps one execution of t makes with a
// variant of nvars variables, or unbounded with why.
func templateSteps(t *template.Template, nvars int) (int64, string) {
	c := &stepCounter{tmpl: t, nvars: int64(nvars), root: dotInfo{kind: dotVars}, active: map[string]bool{t.Name(): true}}
	if t.Tree == nil {
		return 0, ""
	}
	n := c.list(t.Tree.Root, c.root)
	return n, c.why
}

func (c *stepCounter) list(l *parse.ListNode, dot dotInfo) int64 {
	if l == nil {
		return 0
	}
	var n int64
	for _, x := range l.Nodes {
		n = satAdd(n, c.node(x, dot))
	}
	return n
}

func (c *stepCounter) node(n parse.Node, dot dotInfo) int64 {
	switch n := n.(type) {
	case *parse.ListNode:
		return c.list(n, dot)
	case *parse.ActionNode:
		return satAdd(1, c.pipe(n.Pipe))
	case *parse.IfNode:
		return satAdd(satAdd(1, c.pipe(n.Pipe)), satAdd(c.list(n.List, dot), c.list(n.ElseList, dot)))
	case *parse.WithNode:
		inner := dotInfo{}
		if isDot(n.Pipe) {
			inner = dot
		}
		return satAdd(satAdd(1, c.pipe(n.Pipe)), satAdd(c.list(n.List, inner), c.list(n.ElseList, dot)))
	case *parse.RangeNode:
		count, inner := c.rangeCount(n.Pipe, dot)
		if count == unbounded {
			return unbounded
		}
		body := satMul(count, satAdd(1, c.list(n.List, inner)))
		return satAdd(satAdd(1, c.pipe(n.Pipe)), satAdd(body, c.list(n.ElseList, dot)))
	case *parse.TemplateNode:
		t := c.tmpl.Lookup(n.Name)
		if t == nil || t.Tree == nil {
			return 1 // fails when it runs
		}
		if c.active[n.Name] {
			if c.why == "" {
				c.why = fmt.Sprintf("{{template %q}} calls itself: its work cannot be bounded", n.Name)
			}
			return unbounded
		}
		inner := dotInfo{}
		if isDot(n.Pipe) {
			inner = dot
		}
		root := c.root
		c.active[n.Name], c.root = true, inner
		steps := satAdd(satAdd(1, c.pipe(n.Pipe)), c.list(t.Tree.Root, inner))
		delete(c.active, n.Name)
		c.root = root
		return steps
	}
	return 1
}

func (c *stepCounter) pipe(p *parse.PipeNode) int64 {
	if p == nil {
		return 0
	}
	var n int64
	for _, cmd := range p.Cmds {
		n = satAdd(n, 1)
		for _, a := range cmd.Args {
			if sub, ok := a.(*parse.PipeNode); ok {
				n = satAdd(n, c.pipe(sub))
			} else {
				n = satAdd(n, 1)
			}
		}
	}
	return n
}

// isDot says whether p is . alone.
func isDot(p *parse.PipeNode) bool {
	if p == nil || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return false
	}
	_, ok := p.Cmds[0].Args[0].(*parse.DotNode)
	return ok
}

// rangeCount is how many iterations a range over p makes, and what dot is
// in its body; unbounded (with c.why) when that cannot be told at load.
func (c *stepCounter) rangeCount(p *parse.PipeNode, dot dotInfo) (int64, dotInfo) {
	var of dotInfo
	known := false
	if p != nil && len(p.Cmds) == 1 && len(p.Cmds[0].Args) == 1 {
		switch a := p.Cmds[0].Args[0].(type) {
		case *parse.NumberNode:
			if !a.IsInt {
				return 0, dotInfo{} // fails when it runs
			}
			return max(0, a.Int64), dotInfo{kind: dotInt, n: max(0, a.Int64)}
		case *parse.StringNode, *parse.BoolNode, *parse.NilNode:
			return 0, dotInfo{} // fails when it runs
		case *parse.DotNode:
			of, known = dot, dot.kind != dotOther
		case *parse.VariableNode:
			if len(a.Ident) == 1 && a.Ident[0] == "$" {
				of, known = c.root, c.root.kind != dotOther
			}
		}
	}
	if !known {
		if c.why == "" {
			c.why = fmt.Sprintf("{{range %s}}: the iterations cannot be counted at load (range over an integer, {{range 3}}, or over the variables, {{range $k, $v := .}})", p)
		}
		return unbounded, dotInfo{}
	}
	if of.kind == dotVars {
		return c.nvars, dotInfo{}
	}
	// Over an integer below n: at most n-1 iterations, each below n-1.
	k := max(0, of.n-1)
	return k, dotInfo{kind: dotInt, n: k}
}
