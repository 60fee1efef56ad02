package scenario

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

func (l *loader) classes(n *node) {
	l.s.AllClasses = map[string]*Class{}
	l.reqs = map[string]*reqSrc{}
	l.classPos = map[string]*node{}
	if n == nil {
		l.errAt(1, 1, "classes", "missing (want a list of request classes)")
		return
	}
	if !l.list(n, "classes", "classes") {
		return
	}
	if len(n.items) == 0 {
		l.errNode(n, "classes", "must not be empty")
		return
	}
	if len(n.items) > MaxClasses {
		l.errNode(n, "classes", "%d classes; at most %d (scenario.MaxClasses)", len(n.items), MaxClasses)
		return
	}
	if len(l.allVariants)*len(n.items) > MaxCells {
		// Every class is compiled and tried in every variant at load.
		l.errNode(n, "classes", "%d classes × %d variants; at most %d (scenario.MaxCells)", len(n.items), len(l.allVariants), MaxCells)
		return
	}
	type mixSrc struct {
		c    *Class
		n    *node
		f    string
		item *node
	}
	var mixes []mixSrc
	for i, it := range n.items {
		f := index("classes", i)
		m, ok := l.fields(it, f, "name", "request", "mix", "expect_status", "agreement", "grpc")
		if !ok {
			continue
		}
		c := &Class{Agreement: l.agreementSection(m["agreement"], f+".agreement", l.s.Agreement)}
		if v := m["name"]; v == nil {
			l.errNode(it, f+".name", "missing (every class needs a name)")
		} else if s, ok := l.nonEmptyStr(v, f+".name"); ok {
			switch {
			case !nameRE.MatchString(s):
				l.errNode(v, f+".name", "%q is not a valid class name (want letters, digits, _ . -)", v.errText())
			case l.classPos[s] != nil:
				p := l.classPos[s]
				l.errNode(v, f+".name", "%q is already the name of the class at line %d", v.errText(), p.line)
			default:
				c.Name = s
				l.classPos[s] = v
			}
		}
		req, mix := m["request"], m["mix"]
		if g := m["grpc"]; g != nil {
			if req != nil || mix != nil {
				l.errAt(g.keyLine, g.keyCol, f+".grpc", "grpc, request and mix are exclusive (want one of them)")
				continue
			}
			c.GRPC = true
			if r := l.grpcClass(g, f+".grpc"); r != nil {
				c.Request = &r.tmpl
				if c.Name != "" {
					l.reqs[c.Name] = r
				}
			}
			if v := m["expect_status"]; v != nil {
				l.errAt(v.keyLine, v.keyCol, f+".expect_status", "not for a gRPC class (a call succeeds with status OK)")
			}
			if c.Name != "" {
				l.s.AllClasses[c.Name] = c
				l.s.Classes = append(l.s.Classes, c)
			}
			continue
		}
		switch {
		case req == nil && mix == nil:
			l.errNode(it, f, "want request, grpc or mix")
		case req != nil && mix != nil:
			l.errAt(mix.keyLine, mix.keyCol, f+".mix", "request and mix are exclusive (want one of them)")
		case req != nil:
			if r := l.request(req, f+".request"); r != nil {
				c.Request = &r.tmpl
				if c.Name != "" {
					l.reqs[c.Name] = r
				}
			}
		default:
			mixes = append(mixes, mixSrc{c: c, n: mix, f: f + ".mix", item: it})
		}
		if v := m["expect_status"]; v != nil {
			if mix != nil {
				l.errAt(v.keyLine, v.keyCol, f+".expect_status", "only for a request class (a mix uses each component's own)")
			} else if l.list(v, f+".expect_status", "status codes") {
				for j, sn := range v.items {
					if code, ok := l.intRange(sn, index(f+".expect_status", j), 100, 599); ok {
						c.ExpectStatus = append(c.ExpectStatus, code)
					}
				}
			}
		}
		if c.Name != "" {
			l.s.AllClasses[c.Name] = c
			l.s.Classes = append(l.s.Classes, c)
		}
	}
	for _, mx := range mixes {
		if !l.mapping(mx.n, mx.f, "weights by class name") {
			continue
		}
		if len(mx.n.keys) == 0 {
			l.errNode(mx.n, mx.f, "must not be empty")
			continue
		}
		for i, k := range mx.n.keys {
			f := join(mx.f, k.text)
			w, ok := l.intRange(mx.n.vals[i], f, 1, math.MaxInt32)
			target := l.s.AllClasses[k.text]
			switch {
			case target == nil:
				msg := fmt.Sprintf("no class named %q", k.text)
				if s := DidYouMean(k.text, slices.Sorted(mapKeys(l.s.AllClasses))); s != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", s)
				}
				l.errAt(k.line, k.col, f, "%s", msg)
				ok = false
			case target.Request == nil && !target.GRPC:
				l.errAt(k.line, k.col, f, "%s is a mix (a mix draws from request classes only)", k.text)
				ok = false
			}
			if ok {
				mx.c.Mix = append(mx.c.Mix, MixEntry{Class: k.text, Weight: w})
			}
		}
	}
}

// reqSrc is a request class as written, with its templates compiled.
type reqSrc struct {
	tmpl   RequestTemplate
	method string
	path   *tmplSrc
	query  []kvTmpl
	header []kvTmpl
	body   *tmplSrc
}

type kvTmpl struct {
	key string
	t   *tmplSrc
}

func (l *loader) request(n *node, f string) *reqSrc {
	r := &reqSrc{method: "GET"}
	switch n.kind {
	case kindScalar:
		var p string
		r.method, p = splitRequest(n.text)
		if p == "" || !validMethod(r.method) {
			l.errNode(n, f, "%q is not a request (want \"METHOD /path\", e.g. \"GET /items?limit=10\")", n.errText())
			return nil
		}
		r.path = l.template(p, n, f)
		if r.path != nil && n.expanded {
			_, r.path.shown = splitRequest(n.raw)
		}
	case kindMap:
		m, ok := l.fields(n, f, "method", "path", "query", "headers", "body")
		if !ok {
			return nil
		}
		if v := m["method"]; v != nil {
			if s, ok := l.str(v, f+".method"); ok {
				if !validMethod(s) {
					l.errNode(v, f+".method", "%q is not an HTTP method (want e.g. GET, POST)", v.errText())
					return nil
				}
				r.method = s
			}
		}
		v := m["path"]
		if v == nil {
			line, col := n.reportPos()
			l.errAt(line, col, f+".path", "missing (want e.g. path: /items)")
			return nil
		}
		s, ok := l.nonEmptyStr(v, f+".path")
		if !ok {
			return nil
		}
		r.path = l.template(s, v, f+".path")
		if q := m["query"]; q != nil {
			r.query = l.kvTemplates(q, f+".query", false)
		}
		if h := m["headers"]; h != nil {
			r.header = l.kvTemplates(h, f+".headers", true)
		}
		if b := m["body"]; b != nil {
			if s, ok := l.str(b, f+".body"); ok {
				r.body = l.template(s, b, f+".body")
			}
		}
	default:
		l.errNode(n, f, "want \"METHOD /path\" or a mapping with method, path, query, headers, body; got %s", n.describe())
		return nil
	}
	if r.path == nil {
		return nil
	}
	if !strings.HasPrefix(r.path.src, "/") && !strings.HasPrefix(r.path.src, "{{") {
		l.errAt(r.path.line, r.path.col, r.path.field, "%q must start with /", r.path.shown)
	}
	r.tmpl = RequestTemplate{Method: r.method, Path: r.path.src}
	if r.query != nil {
		r.tmpl.Query = map[string]string{}
		for _, kv := range r.query {
			r.tmpl.Query[kv.key] = kv.t.src
		}
	}
	if r.header != nil {
		r.tmpl.Header = map[string]string{}
		for _, kv := range r.header {
			r.tmpl.Header[kv.key] = kv.t.src
		}
	}
	if r.body != nil {
		r.tmpl.Body = r.body.src
	}
	return r
}

// splitRequest splits "METHOD /path" or a bare "/path" (a GET).
func splitRequest(s string) (method, path string) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "/") {
		return "GET", s
	}
	method, rest, _ := strings.Cut(s, " ")
	return method, strings.TrimSpace(rest)
}

func (l *loader) kvTemplates(n *node, f string, header bool) []kvTmpl {
	keys, m, nodes, _ := l.strMap(n, f)
	var out []kvTmpl
	for _, k := range keys {
		kf := join(f, k)
		if header && !ValidToken(k) {
			l.errAt(nodes[k].keyLine, nodes[k].keyCol, kf, "%q is not a valid header name", k)
			continue
		}
		if k == "" {
			l.errAt(nodes[k].keyLine, nodes[k].keyCol, kf, "empty query parameter name")
			continue
		}
		if t := l.template(m[k], nodes[k], kf); t != nil {
			out = append(out, kvTmpl{key: k, t: t})
		}
	}
	return out
}

func validMethod(s string) bool { return ValidToken(s) }

// tokenChars marks the bytes of an RFC 9110 token: letters, digits and
// !#$%&'*+-.^_`|~.
var tokenChars = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0
	}
	return t
}()

// ValidToken reports whether s is an RFC 9110 token, as header names and
// methods must be.
func ValidToken[T ~string | ~[]byte](s T) bool {
	if len(s) == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tokenChars[s[i]] {
			return false
		}
	}
	return true
}
