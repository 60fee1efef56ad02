package scenario

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/benchgate/benchgate/internal/textsafe"
)

// A template is compiled twice over. Most templates are text with a few
// {{pick "x"}}, {{int a b}}, {{var "v"}} or {{.v}} actions: those become a
// list of pieces that Next runs without reflection, with variables folded
// into constants per variant. Anything else (if, range, pipelines) keeps
// its text/template, cloned per stream so its functions draw from that
// stream's RNG.

type pieceKind uint8

const (
	pieceText pieceKind = iota
	piecePick
	pieceInt
	pieceVar
)

type rawPiece struct {
	kind   pieceKind
	text   string // text, or the data/variable name
	lo, hi int
}

// tmplSrc is one template as written, with where it was written.
type tmplSrc struct {
	src       string
	shown     string // src for error messages: as written, before ${VAR} expansion
	field     string
	line, col int
	pieces    []rawPiece         // nil when tree is used
	tree      *template.Template // the general case
	usesRNG   bool               // calls pick or int: varies per request
	// steps is the most steps one rendering makes (templimit.go), set
	// by templateWork once the variables are known.
	steps int64
}

// placeholderFuncs let templates parse at load; streams bind real ones.
var placeholderFuncs = func() template.FuncMap {
	m := boundedFuncs(nil)
	m["pick"] = func(string) (string, error) { return "", nil }
	m["int"] = func(int, int) (int, error) { return 0, nil }
	m["var"] = func(string) (string, error) { return "", nil }
	return m
}()

// jsonValue is the json template function: v as a JSON value, a string
// quoted and escaped, so a data item with a quote or a backslash stays one
// string in a JSON message ({"q": {{pick "term" | json}}}).
func jsonValue(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

var tmplErrPrefix = regexp.MustCompile(`^template: t:\d+(:\d+)?: `)
var tmplExecAt = regexp.MustCompile(`executing "t" at <(.*?)>: `)

func cleanTmplErr(err error) string {
	s := tmplErrPrefix.ReplaceAllString(err.Error(), "")
	s = tmplExecAt.ReplaceAllString(s, "at {{$1}}: ")
	return strings.ReplaceAll(s, "error calling ", "")
}

func (l *loader) template(src string, n *node, field string) *tmplSrc {
	t := &tmplSrc{src: src, shown: src, field: field, line: n.line, col: n.col}
	if n.expanded {
		t.shown = n.raw
	}
	if !strings.Contains(src, "{{") {
		t.pieces = []rawPiece{{kind: pieceText, text: src}}
		return t
	}
	tt, err := template.New("t").Option("missingkey=error").Funcs(placeholderFuncs).Parse(src)
	if err != nil {
		l.errAt(t.line, t.col, field, "bad template: %s", cleanTmplErr(err))
		return nil
	}
	if tt.Tree == nil || tt.Tree.Root == nil {
		t.pieces = []rawPiece{}
		return t
	}
	bad := len(l.errs.Errors)
	l.checkNode(t, tt.Tree.Root, true)
	if len(l.errs.Errors) > bad {
		return nil
	}
	if p, ok := simplePieces(tt.Tree.Root); ok {
		t.pieces = p
	} else {
		t.tree = tt
	}
	return t
}

// templateWork bounds the steps of every template (templimit.go), alone
// and for each request: its own templates and the defaults it takes.
// Where a range cannot be counted, or the count passes MaxTemplateSteps,
// the template is refused at its line.
func (l *loader) templateWork() {
	count := func(t *tmplSrc) int64 {
		if t == nil {
			return 0
		}
		switch {
		case t.tree != nil:
			steps, why := templateSteps(t.tree, len(l.varNames))
			if why != "" {
				l.errAt(t.line, t.col, t.field, "bad template: %s", why)
				return unbounded
			}
			t.steps = steps
		case t.pieces != nil:
			t.steps = int64(len(t.pieces))
		default:
			t.steps = 1
		}
		if t.steps > MaxTemplateSteps {
			l.errAt(t.line, t.col, t.field, "bad template: it may make %s steps; at most %d per request (scenario.MaxTemplateSteps)", stepsText(t.steps), MaxTemplateSteps)
			return unbounded
		}
		return t.steps
	}
	var defaults int64
	for _, kv := range l.defaults.query {
		defaults = satAdd(defaults, count(kv.t))
	}
	for _, kv := range l.defaults.header {
		defaults = satAdd(defaults, count(kv.t))
	}
	for _, name := range slices.Sorted(mapKeys(l.reqs)) {
		r := l.reqs[name]
		total := satAdd(defaults, satAdd(count(r.path), count(r.body)))
		for _, kvs := range [][]kvTmpl{r.query, r.header} {
			for _, kv := range kvs {
				total = satAdd(total, count(kv.t))
			}
		}
		if total > MaxTemplateSteps && total != unbounded && r.path != nil {
			l.errAt(r.path.line, r.path.col, r.path.field, "the request's templates, the defaults' included, may make %s steps together; at most %d (scenario.MaxTemplateSteps)",
				stepsText(total), MaxTemplateSteps)
		}
	}
}

func stepsText(n int64) string {
	if n == unbounded {
		return "more than 9223372036854775806"
	}
	return strconv.FormatInt(n, 10)
}

// checkNode reports names that cannot exist: a pick of no data list, a
// variable no variant defines, an int range that runs backwards. The trial
// run at the end of Load catches the rest on the paths it takes.
func (l *loader) checkNode(t *tmplSrc, n parse.Node, dotIsVars bool) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			l.checkNode(t, c, dotIsVars)
		}
	case *parse.ActionNode:
		l.checkNode(t, n.Pipe, dotIsVars)
	case *parse.IfNode:
		l.checkBranch(t, &n.BranchNode, dotIsVars, dotIsVars)
	case *parse.RangeNode:
		l.checkBranch(t, &n.BranchNode, dotIsVars, false)
	case *parse.WithNode:
		l.checkBranch(t, &n.BranchNode, dotIsVars, false)
	case *parse.TemplateNode:
		if n.Pipe != nil {
			l.checkNode(t, n.Pipe, dotIsVars)
		}
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			l.checkNode(t, c, dotIsVars)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			l.checkNode(t, a, dotIsVars)
		}
		id, ok := n.Args[0].(*parse.IdentifierNode)
		if !ok {
			return
		}
		switch id.Ident {
		case "pick", "int":
			t.usesRNG = true
		}
		switch id.Ident {
		case "pick", "var":
			if len(n.Args) != 2 {
				return
			}
			name, ok := n.Args[1].(*parse.StringNode)
			if !ok {
				return
			}
			if id.Ident == "pick" {
				l.checkName(t, "pick", "data list", name.Text, slices.Sorted(mapKeys(l.s.Data)))
			} else {
				l.checkName(t, "var", "variable", name.Text, l.varNames)
			}
		case "int":
			if len(n.Args) != 3 {
				return
			}
			lo, ok1 := n.Args[1].(*parse.NumberNode)
			hi, ok2 := n.Args[2].(*parse.NumberNode)
			if ok1 && ok2 && lo.IsInt && hi.IsInt && lo.Int64 > hi.Int64 {
				l.errAt(t.line, t.col, t.field, "bad template: int %d %d: the range runs backwards (want int lo hi with lo <= hi)", lo.Int64, hi.Int64)
			}
		}
	case *parse.IdentifierNode:
		if n.Ident == "pick" || n.Ident == "int" {
			t.usesRNG = true
		}
	case *parse.FieldNode:
		if dotIsVars && len(n.Ident) >= 1 {
			l.checkName(t, "."+n.Ident[0], "variable", n.Ident[0], l.varNames)
		}
	}
}

func (l *loader) checkBranch(t *tmplSrc, b *parse.BranchNode, dotIsVars, inner bool) {
	l.checkNode(t, b.Pipe, dotIsVars)
	l.checkNode(t, b.List, inner)
	if b.ElseList != nil {
		l.checkNode(t, b.ElseList, dotIsVars)
	}
}

func (l *loader) checkName(t *tmplSrc, fn, what, name string, have []string) {
	if slices.Contains(have, name) {
		return
	}
	msg := fmt.Sprintf("bad template: %s: no %s %s", fn, what, textsafe.Quote(name, textsafe.QuoteRunes))
	switch {
	case len(have) == 0 && what == "variable":
		msg += " (the file defines no variants)"
	case len(have) == 0:
		msg += " (the file defines no data)"
	default:
		if d := DidYouMean(name, have); d != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", d)
		} else {
			msg += fmt.Sprintf(" (have %s)", strings.Join(have, ", "))
		}
	}
	l.errAt(t.line, t.col, t.field, "%s", msg)
}

// simplePieces recognises the template shapes Next runs without
// text/template.
func simplePieces(root *parse.ListNode) ([]rawPiece, bool) {
	var out []rawPiece
	for _, n := range root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			out = append(out, rawPiece{kind: pieceText, text: string(n.Text)})
		case *parse.ActionNode:
			if len(n.Pipe.Decl) > 0 || len(n.Pipe.Cmds) != 1 {
				return nil, false
			}
			args := n.Pipe.Cmds[0].Args
			if f, ok := args[0].(*parse.FieldNode); ok && len(args) == 1 && len(f.Ident) == 1 {
				out = append(out, rawPiece{kind: pieceVar, text: f.Ident[0]})
				continue
			}
			id, ok := args[0].(*parse.IdentifierNode)
			if !ok {
				return nil, false
			}
			switch {
			case (id.Ident == "pick" || id.Ident == "var") && len(args) == 2:
				s, ok := args[1].(*parse.StringNode)
				if !ok {
					return nil, false
				}
				k := piecePick
				if id.Ident == "var" {
					k = pieceVar
				}
				out = append(out, rawPiece{kind: k, text: s.Text})
			case id.Ident == "int" && len(args) == 3:
				lo, ok1 := args[1].(*parse.NumberNode)
				hi, ok2 := args[2].(*parse.NumberNode)
				if !ok1 || !ok2 || !lo.IsInt || !hi.IsInt || lo.Int64 > hi.Int64 ||
					lo.Int64 < -1<<40 || hi.Int64 > 1<<40 {
					return nil, false
				}
				out = append(out, rawPiece{kind: pieceInt, lo: int(lo.Int64), hi: int(hi.Int64)})
			default:
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return out, true
}

// prog is a template ready to run for one variant.
type prog struct {
	src    *tmplSrc
	konst  bool
	text   string // the value when konst
	pieces []piece
	tree   *template.Template
	slot   int // index of this template's per-stream clone
	// maxLen bounds what the prog renders to, when it is known at load
	// (konst or pieces); -1 for a tree, which a writer bounds as it runs.
	maxLen int
}

type piece struct {
	kind pieceKind
	text string
	list []string
	lo   int
	n    int // hi - lo + 1
}

// fold binds a template to one variant's variables and the data lists;
// maxItem is the length of each list's longest item.
func (t *tmplSrc) fold(vars map[string]string, data map[string][]string, maxItem map[string]int) *prog {
	p := &prog{src: t, maxLen: -1}
	if t.tree != nil {
		if !t.usesRNG {
			// Without pick or int the result depends on the variant only.
			w := &limitWriter{limit: MaxTemplateOutput, err: errFieldTooLong}
			funcs := boundedFuncs(&budget{left: MaxTemplateOutput})
			funcs["var"] = func(name string) (string, error) {
				v, ok := vars[name]
				if !ok {
					return "", fmt.Errorf("no variable %s", textsafe.Quote(name, textsafe.QuoteRunes))
				}
				return v, nil
			}
			tt := template.Must(t.tree.Clone()).Funcs(funcs)
			if err := tt.Execute(w, vars); err == nil {
				p.konst, p.text, p.maxLen = true, string(w.b), len(w.b)
				return p
			}
			// Left to the trial run, which reports the error in place.
		}
		p.tree = t.tree
		return p
	}
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			p.pieces = append(p.pieces, piece{kind: pieceText, text: text.String()})
			text.Reset()
		}
	}
	p.maxLen = 0
	for _, r := range t.pieces {
		switch r.kind {
		case pieceText:
			text.WriteString(r.text)
			p.maxLen += len(r.text)
		case pieceVar:
			text.WriteString(vars[r.text])
			p.maxLen += len(vars[r.text])
		case piecePick:
			flush()
			p.pieces = append(p.pieces, piece{kind: piecePick, list: data[r.text]})
			p.maxLen += maxItem[r.text]
		case pieceInt:
			flush()
			p.pieces = append(p.pieces, piece{kind: pieceInt, lo: r.lo, n: r.hi - r.lo + 1})
			p.maxLen += 20
		}
		if p.maxLen > MaxTemplateOutput {
			// Not built: classProg refuses it.
			return p
		}
	}
	flush()
	switch len(p.pieces) {
	case 0:
		p.konst = true
	case 1:
		if p.pieces[0].kind == pieceText {
			p.konst, p.text = true, p.pieces[0].text
		}
	}
	return p
}
