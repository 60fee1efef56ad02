package scenario

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/benchgate/benchgate/load"
)

// compiled is everything Stream needs, built once by Load.
type compiled struct {
	variantIdx map[string]int
	vars       []map[string]string
	data       map[string][]string
	progs      []map[string]*classProg // by variant index, then class name
}

// classProg is one request class bound to one variant.
type classProg struct {
	name, method string

	constTarget bool
	target      string // the whole request URI when constTarget

	pathConst  bool
	pathStatic string // the path before "?" when pathConst
	path       *prog
	constQ     []qkv   // query pairs known at load, raw
	dynQ       []dynKV // query values that vary per request

	headerKeys  []string // canonical, merged with the defaults
	headerProgs []*prog

	body      *prog // nil: no body
	constBody []byte

	fallbacks []*prog // templates cloned per stream, by slot
	// constant: every request of the class is the same (Request.Constant).
	constant bool
	// constBytes is the length of the parts known at load: what a
	// request has rendered before its first template runs.
	constBytes int
}

type qkv struct {
	key, val string
	prio     int8
}

type dynKV struct {
	key  string
	p    *prog
	prio int8
}

// Query priorities: a class's own value beats the path's, which beats the
// scenario defaults.
const (
	prioDefault int8 = iota
	prioPath
	prioClass
)

func (l *loader) compile() {
	s := l.s
	c := &compiled{variantIdx: map[string]int{}, data: s.Data}
	maxItem := map[string]int{}
	for name, items := range s.Data {
		for _, it := range items {
			maxItem[name] = max(maxItem[name], len(it))
		}
	}
	bad := len(l.errs.Errors) + l.errs.Dropped
	for i, v := range l.allVariants {
		c.variantIdx[v.Name] = i
		c.vars = append(c.vars, v.Vars)
		m := map[string]*classProg{}
		for _, name := range slices.Sorted(mapKeys(l.reqs)) {
			m[name] = l.classProg(name, l.reqs[name], v.Vars, maxItem)
		}
		c.progs = append(c.progs, m)
		if len(l.errs.Errors)+l.errs.Dropped > bad {
			// A request too large to build: nothing to try.
			return
		}
	}
	s.compiled = c
	// A trial run per variant catches what static checks cannot: a
	// template that fails when executed, a path that does not start with /.
	for _, v := range l.allVariants {
		for _, cl := range sortedClasses(s.AllClasses) {
			if cl.Request == nil {
				continue
			}
			st := s.Stream(v.Name, cl.Name, 1, 0, 0)
			req := st.Next()
			where := ""
			if v.Name != "" {
				where = fmt.Sprintf(" (variant %s)", v.Name)
			}
			if st.err != nil {
				t := st.errSrc
				l.errAt(t.line, t.col, t.field, "template fails%s: %s", where, cleanTmplErr(st.err))
				continue
			}
			r := l.reqs[cl.Name]
			if !strings.HasPrefix(req.Target, "/") {
				// The query may hold values from ${VAR} (load.defaults.query
				// is where an API key goes), so only the path is quoted, and
				// not even that when the path template was expanded.
				shown, _, _ := strings.Cut(req.Target, "?")
				if r.path.shown != r.path.src {
					shown = r.path.shown
				}
				l.errAt(r.path.line, r.path.col, r.path.field, "%q does not start with /%s", shown, where)
			}
			for k, vs := range req.Header {
				if strings.ContainsAny(vs[0], "\r\n") {
					l.errAt(r.path.line, r.path.col, r.path.field, "header %s holds a line break%s", k, where)
				}
			}
		}
	}
}

func sortedClasses(m map[string]*Class) []*Class {
	var out []*Class
	for _, name := range slices.Sorted(mapKeys(m)) {
		out = append(out, m[name])
	}
	return out
}

func (l *loader) classProg(name string, r *reqSrc, vars map[string]string, maxItem map[string]int) *classProg {
	data := l.s.Data
	cp := &classProg{name: name, method: r.method}
	// What is known at load is bounded at load: each part, and the parts
	// together; templates are bounded as they run (Stream.render).
	known := 0
	fold := func(t *tmplSrc) *prog {
		p := t.fold(vars, data, maxItem)
		if p.maxLen > MaxTemplateOutput {
			l.errAt(t.line, t.col, t.field, "bad template: it may render more than %s (scenario.MaxTemplateOutput)", sizeText(MaxTemplateOutput))
		}
		if p.maxLen > 0 {
			known += p.maxLen
		}
		if p.konst {
			cp.constBytes += len(p.text)
		}
		return p
	}
	defer func() {
		if known > MaxRequestSize {
			l.errAt(r.path.line, r.path.col, r.path.field, "the request may render more than %s, its parts together (scenario.MaxRequestSize)", sizeText(MaxRequestSize))
		}
	}()
	addFallback := func(p *prog) *prog {
		if p.tree != nil {
			p.slot = len(cp.fallbacks)
			cp.fallbacks = append(cp.fallbacks, p)
		}
		return p
	}
	cp.path = addFallback(fold(r.path))
	if cp.path.konst {
		cp.pathConst = true
		p, q, _ := strings.Cut(cp.path.text, "?")
		cp.pathStatic = p
		var a []byte
		ents, a := parseQuery(nil, a, []byte(q), prioPath)
		for _, e := range ents {
			cp.constQ = append(cp.constQ, qkv{key: string(a[e.ko:e.ke]), val: string(a[e.vo:e.ve]), prio: e.prio})
		}
	}
	addQ := func(kvs []kvTmpl, prio int8) {
		for _, kv := range kvs {
			p := addFallback(fold(kv.t))
			if p.konst {
				cp.constQ = append(cp.constQ, qkv{key: kv.key, val: p.text, prio: prio})
			} else {
				cp.dynQ = append(cp.dynQ, dynKV{key: kv.key, p: p, prio: prio})
			}
		}
	}
	addQ(l.defaults.query, prioDefault)
	addQ(r.query, prioClass)
	headers := map[string]*prog{}
	for _, kvs := range [][]kvTmpl{l.defaults.header, r.header} {
		for _, kv := range kvs {
			k := http.CanonicalHeaderKey(kv.key)
			if _, seen := headers[k]; !seen {
				cp.headerKeys = append(cp.headerKeys, k)
			}
			headers[k] = fold(kv.t)
		}
	}
	for _, k := range cp.headerKeys {
		cp.headerProgs = append(cp.headerProgs, addFallback(headers[k]))
	}
	if r.body != nil {
		cp.body = addFallback(fold(r.body))
		if cp.body.konst {
			cp.constBody = []byte(cp.body.text)
		}
	}
	if cp.pathConst && len(cp.dynQ) == 0 {
		st := &Stream{}
		cp.target = st.buildTarget(cp, nil)
		cp.constTarget = true
	}
	cp.constant = cp.constTarget && (cp.body == nil || cp.body.konst)
	for _, p := range cp.headerProgs {
		cp.constant = cp.constant && p.konst
	}
	return cp
}

// Stream is the seeded request sequence of one worker in one rung. It is a
// pure function of (seed, variant, class, concurrency, round, worker): the
// baseline and the candidate get the identical sequence. A Stream is not
// safe for concurrent use; each worker has its own.
type Stream struct {
	rng   *rand.Rand
	vars  map[string]string
	comps []*streamComp
	cum   []int // cumulative mix weights; nil for a single class
	total int

	req   load.Request
	buf   []byte // rendered path
	arena []byte // query keys and values, raw
	ents  []qent
	out   []byte // the request URI
	w     limitWriter

	// reqOut is what the current request has rendered so far, against
	// MaxRequestSize; work what its functions may still make.
	reqOut int
	work   budget

	err    error
	errSrc *tmplSrc
}

type streamComp struct {
	cp      *classProg
	header  http.Header
	tmpls   []*template.Template
	bodyBuf []byte
}

// qent locates one query pair in Stream.arena.
type qent struct {
	ko, ke, vo, ve int
	prio           int8
}

// streamSeed derives the PCG state from everything that identifies a
// stream, so that no two workers, rounds or cells share a sequence.
func streamSeed(seed uint64, variant, class string, concurrency, round, worker int) (uint64, uint64) {
	h := sha256.New()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	h.Write([]byte("benchgate stream v1\x00"))
	put(seed)
	put(uint64(len(variant)))
	h.Write([]byte(variant))
	put(uint64(len(class)))
	h.Write([]byte(class))
	put(uint64(int64(concurrency)))
	put(uint64(int64(round)))
	put(uint64(int64(worker)))
	sum := h.Sum(nil)
	return binary.LittleEndian.Uint64(sum[0:8]), binary.LittleEndian.Uint64(sum[8:16])
}

// Stream returns the request sequence for one worker of one rung. variant
// and class must name a variant and a class of s (any class of AllClasses,
// and any variant of the file even when the profile left it out).
func (s *Scenario) Stream(variant, class string, concurrency, round, worker int) *Stream {
	c := s.compiled
	if c == nil {
		panic("scenario: Stream on a Scenario that Load did not return")
	}
	vi, ok := c.variantIdx[variant]
	if !ok {
		panic(fmt.Sprintf("scenario: Stream: no variant %q", variant))
	}
	cl := s.AllClasses[class]
	if cl == nil {
		panic(fmt.Sprintf("scenario: Stream: no class %q", class))
	}
	a, b := streamSeed(s.Seed, variant, class, concurrency, round, worker)
	st := &Stream{rng: rand.New(rand.NewPCG(a, b)), vars: c.vars[vi]}
	funcs := st.funcs(c.data)
	if cl.Mix == nil {
		st.comps = []*streamComp{st.comp(c.progs[vi][class], funcs)}
	} else {
		for _, e := range cl.Mix {
			st.comps = append(st.comps, st.comp(c.progs[vi][e.Class], funcs))
			st.total += e.Weight
			st.cum = append(st.cum, st.total)
		}
	}
	return st
}

func (st *Stream) comp(cp *classProg, funcs template.FuncMap) *streamComp {
	sc := &streamComp{cp: cp, header: make(http.Header, len(cp.headerKeys))}
	for i, k := range cp.headerKeys {
		p := cp.headerProgs[i]
		sc.header[k] = []string{p.text}
	}
	for _, p := range cp.fallbacks {
		t := template.Must(p.tree.Clone())
		sc.tmpls = append(sc.tmpls, t.Funcs(funcs))
	}
	return sc
}

func (st *Stream) funcs(data map[string][]string) template.FuncMap {
	m := boundedFuncs(&st.work)
	for k, f := range (template.FuncMap{
		"pick": func(name string) (string, error) {
			l := data[name]
			if len(l) == 0 {
				return "", fmt.Errorf("no data list %s", textsafe.Quote(name, textsafe.QuoteRunes))
			}
			// A pick makes no new text, but what a template may do
			// with it (compare it at every step) grows with its size.
			item := l[st.rng.IntN(len(l))]
			return item, st.work.charge(len(item))
		},
		"int": func(lo, hi int) (int, error) {
			n := hi - lo + 1
			if hi < lo || n <= 0 {
				return 0, fmt.Errorf("int %d %d: want lo <= hi and a range that fits an int", lo, hi)
			}
			return lo + st.rng.IntN(n), nil
		},
		"var": func(name string) (string, error) {
			v, ok := st.vars[name]
			if !ok {
				return "", fmt.Errorf("no variable %s", textsafe.Quote(name, textsafe.QuoteRunes))
			}
			return v, nil
		},
	}) {
		m[k] = f
	}
	return m
}

// Next returns the next request of the stream. The returned Request may be
// reused by the next call: callers that keep it must copy it. Its Header
// and Body belong to the stream and must not be modified.
func (st *Stream) Next() *load.Request {
	sc := st.comps[0]
	if st.cum != nil {
		r := st.rng.IntN(st.total)
		for i, c := range st.cum {
			if r < c {
				sc = st.comps[i]
				break
			}
		}
	}
	cp := sc.cp
	req := &st.req
	req.Class, req.Method, req.Constant = cp.name, cp.method, cp.constant
	st.reqOut, st.work.left = cp.constBytes, MaxTemplateOutput
	if cp.constTarget {
		req.Target = cp.target
	} else {
		req.Target = st.buildTarget(cp, sc)
	}
	for i, p := range cp.headerProgs {
		if !p.konst {
			st.buf = st.render(st.buf[:0], p, sc)
			sc.header[cp.headerKeys[i]][0] = string(st.buf)
		}
	}
	req.Header = sc.header
	switch {
	case cp.body == nil:
		req.Body = nil
	case cp.body.konst:
		req.Body = cp.constBody
	default:
		sc.bodyBuf = st.render(sc.bodyBuf[:0], cp.body, sc)
		req.Body = sc.bodyBuf
	}
	return req
}

// Err reports the first template that failed to execute. Load runs every
// template once, so only a branch the trial did not take can fail here; the
// failed part of the request is then left empty.
func (st *Stream) Err() error { return st.err }

// render appends p's value to dst: a field of the request, at most
// MaxTemplateOutput bytes of it and MaxRequestSize for the request. Past
// either, the template is stopped and the field left empty.
func (st *Stream) render(dst []byte, p *prog, sc *streamComp) []byte {
	if p.konst {
		return append(dst, p.text...)
	}
	start := len(dst)
	limit, tooLong := MaxTemplateOutput, errFieldTooLong
	if left := MaxRequestSize - st.reqOut; left < limit {
		limit, tooLong = max(0, left), errRequestTooLong
	}
	var err error
	if p.tree != nil {
		st.w = limitWriter{b: dst, limit: start + limit, err: tooLong}
		err = sc.tmpls[p.slot].Execute(&st.w, st.vars)
		dst, st.w.b = st.w.b, nil
	} else {
		// Each field of pieces is bounded at load (fold), the request
		// they make together is not.
		for i := range p.pieces {
			pc := &p.pieces[i]
			switch pc.kind {
			case pieceText:
				dst = append(dst, pc.text...)
			case piecePick:
				dst = append(dst, pc.list[st.rng.IntN(len(pc.list))]...)
			case pieceInt:
				dst = strconv.AppendInt(dst, int64(pc.lo+st.rng.IntN(pc.n)), 10)
			}
		}
		if len(dst)-start > limit {
			err = tooLong
		}
	}
	if err != nil {
		if st.err == nil {
			st.err, st.errSrc = err, p.src
		}
		dst = dst[:start]
	}
	st.reqOut += len(dst) - start
	return dst
}

// buildTarget renders the path and merges its query with the defaults and
// the class's query: sorted by key, the highest priority source of a key
// wins, one source's repeated keys keep their order.
func (st *Stream) buildTarget(cp *classProg, sc *streamComp) string {
	a, ents := st.arena[:0], st.ents[:0]
	for _, q := range cp.constQ {
		ko := len(a)
		a = append(a, q.key...)
		vo := len(a)
		a = append(a, q.val...)
		ents = append(ents, qent{ko: ko, ke: vo, vo: vo, ve: len(a), prio: q.prio})
	}
	for _, q := range cp.dynQ {
		ko := len(a)
		a = append(a, q.key...)
		vo := len(a)
		a = st.render(a, q.p, sc)
		ents = append(ents, qent{ko: ko, ke: vo, vo: vo, ve: len(a), prio: q.prio})
	}
	out := st.out[:0]
	if cp.pathConst {
		out = append(out, cp.pathStatic...)
	} else {
		st.buf = st.render(st.buf[:0], cp.path, sc)
		p, q, _ := bytes.Cut(st.buf, []byte{'?'})
		out = append(out, p...)
		ents, a = parseQuery(ents, a, q, prioPath)
	}
	slices.SortStableFunc(ents, func(x, y qent) int {
		return bytes.Compare(a[x.ko:x.ke], a[y.ko:y.ke])
	})
	sep := byte('?')
	for i := 0; i < len(ents); {
		j, top := i, ents[i].prio
		for j < len(ents) && bytes.Equal(a[ents[j].ko:ents[j].ke], a[ents[i].ko:ents[i].ke]) {
			top = max(top, ents[j].prio)
			j++
		}
		for _, e := range ents[i:j] {
			if e.prio != top {
				continue
			}
			out = append(out, sep)
			sep = '&'
			out = appendQueryEscape(out, a[e.ko:e.ke])
			out = append(out, '=')
			out = appendQueryEscape(out, a[e.vo:e.ve])
		}
		i = j
	}
	st.arena, st.ents, st.out = a, ents, out
	return string(out)
}

// parseQuery appends the pairs of a raw query to ents, unescaped into a.
// A malformed escape is kept as written rather than dropping the pair.
func parseQuery(ents []qent, a, q []byte, prio int8) ([]qent, []byte) {
	for len(q) > 0 {
		var part []byte
		part, q, _ = bytes.Cut(q, []byte{'&'})
		if len(part) == 0 {
			continue
		}
		k, v, _ := bytes.Cut(part, []byte{'='})
		ko := len(a)
		a = appendUnescape(a, k)
		vo := len(a)
		a = appendUnescape(a, v)
		ents = append(ents, qent{ko: ko, ke: vo, vo: vo, ve: len(a), prio: prio})
	}
	return ents, a
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func appendUnescape(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			dst = append(dst, ' ')
		case '%':
			if i+2 < len(s) {
				h, ok1 := unhex(s[i+1])
				l, ok2 := unhex(s[i+2])
				if ok1 && ok2 {
					dst = append(dst, h<<4|l)
					i += 2
					continue
				}
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// appendQueryEscape escapes like url.QueryEscape, without allocating.
func appendQueryEscape(dst, s []byte) []byte {
	const hexDigits = "0123456789ABCDEF"
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~':
			dst = append(dst, c)
		case c == ' ':
			dst = append(dst, '+')
		default:
			dst = append(dst, '%', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return dst
}
