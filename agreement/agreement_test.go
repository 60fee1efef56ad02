package agreement

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func js(body string) Response {
	return Response{Status: 200, ContentType: "application/json; charset=utf-8", Body: []byte(body)}
}

func resp(ct, body string) Response {
	return Response{Status: 200, ContentType: ct, Body: []byte(body)}
}

// From the reference report: Python and PHP answers, different key order,
// PHP escaping "/" as "\/".
const (
	rpcPython = `{"resultcount":1,"results":[{"Conflicts":["sprunge-git"],"Depends":["python","python-requests"],"ID":75001,"Keywords":[],"Name":"sprunge","OutOfDate":null,"Popularity":0,"URL":"https://github.com/kevr/sprunge","Version":"0.6.0-2"}],"type":"multiinfo","version":5}`
	rpcPHP    = `{"version":5,"type":"multiinfo","resultcount":1,"results":[{"ID":75001,"Name":"sprunge","Version":"0.6.0-2","URL":"https:\/\/github.com\/kevr\/sprunge","Popularity":0,"OutOfDate":null,"Depends":["python","python-requests"],"Conflicts":["sprunge-git"],"Keywords":[]}]}`
)

func TestCompare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b Response
		opt  Options
		want Result
	}{
		{
			name: "json key order and escaping (reference report)",
			a:    js(rpcPython), b: js(rpcPHP),
			want: Result{Agree: true, Format: "json"},
		},
		{
			name: "json one changed value",
			a:    js(`{"items":[{"id":1,"price":12},{"id":2,"price":12}]}`),
			b:    js(`{"items":[{"price":12,"id":1},{"price":13, "id":2}]}`),
			want: Result{Format: "json", Reason: "$.items[1].price: 12 vs 13", Path: "$.items[1].price",
				ExcerptA: `"price":12}]}`, ExcerptB: `"price":13, "id":2}]}`},
		},
		{
			name: "json type change",
			a:    js(`{"n":12}`), b: js(`{"n":"12"}`),
			want: Result{Format: "json", Reason: `$.n: 12 vs "12"`, Path: "$.n", ExcerptA: `"n":12}`, ExcerptB: `"n":"12"}`},
		},
		{
			name: "json missing key reported in sorted key order",
			a:    js(`{"z":1,"b":2,"a":1}`), b: js(`{"a":1,"z":2}`),
			want: Result{Format: "json", Reason: "$.b: missing in B", Path: "$.b", ExcerptA: `"b":2,"a":1}`, ExcerptB: `{"a":1,"z":2}`},
		},
		{
			name: "json odd key rendered in brackets",
			a:    js(`{"a b":{"it's":1}}`), b: js(`{"a b":{"it's":2}}`),
			want: Result{Format: "json", Reason: `$['a b']['it\'s']: 1 vs 2`, Path: `$['a b']['it\'s']`, ExcerptA: `"it's":1}}`, ExcerptB: `"it's":2}}`},
		},
		{
			name: "json ignored timestamp",
			a:    js(`{"generated_at":"2026-01-01T00:00:00Z","n":1}`),
			b:    js(`{"n":1,"generated_at":"2026-11-30T02:00:00Z"}`),
			opt:  Options{Ignore: []string{"$.generated_at"}},
			want: Result{Agree: true, Format: "json"},
		},
		{
			name: "json timestamp not ignored",
			a:    js(`{"generated_at":"x","n":1}`), b: js(`{"n":1,"generated_at":"y"}`),
			want: Result{Format: "json", Reason: `$.generated_at: "x" vs "y"`, Path: "$.generated_at",
				ExcerptA: `"generated_at":"x","n":1}`, ExcerptB: `"generated_at":"y"}`},
		},
		{
			name: "json ignore with [*] and bracket key",
			a:    js(`{"items":[{"id":"a1","v":1},{"id":"a2","v":2}],"x-req":"r1"}`),
			b:    js(`{"items":[{"id":"b1","v":1},{"id":"b2","v":2}],"x-req":"r2"}`),
			opt:  Options{Ignore: []string{"$.items[*].id", "$['x-req']"}},
			want: Result{Agree: true, Format: "json"},
		},
		{
			name: "json ignore [*] still sees other fields",
			a:    js(`{"items":[{"id":"a1","v":1},{"id":"a2","v":2}]}`),
			b:    js(`{"items":[{"id":"b1","v":1},{"id":"b2","v":3}]}`),
			opt:  Options{Ignore: []string{"$.items[*].id"}},
			want: Result{Format: "json", Reason: "$.items[1].v: 2 vs 3", Path: "$.items[1].v", ExcerptA: `"v":2}]}`, ExcerptB: `"v":3}]}`},
		},
		{
			name: "json recursive descent ignore",
			a:    js(`{"etag":"1","data":{"etag":"2","list":[{"etag":"3","k":1}]}}`),
			b:    js(`{"etag":"9","data":{"etag":"8","list":[{"etag":"7","k":1}]}}`),
			opt:  Options{Ignore: []string{"$..etag"}},
			want: Result{Agree: true, Format: "json"},
		},
		{
			name: "json recursive descent with index",
			a:    js(`{"a":{"ids":[1,5]},"b":[{"ids":[2,5]}]}`),
			b:    js(`{"a":{"ids":[9,5]},"b":[{"ids":[8,5]}]}`),
			opt:  Options{Ignore: []string{"$..ids[0]"}},
			want: Result{Agree: true, Format: "json"},
		},
		{
			name: "json ignore root",
			a:    js(`{"x":[1,2,3]}`), b: js(`[0]`),
			opt:  Options{Ignore: []string{"$"}},
			want: Result{Agree: true, Format: "json"},
		},
		{
			name: "json ignore last element",
			a:    js(`{"x":[1,2,3]}`), b: js(`{"x":[1,2,4]}`),
			opt:  Options{Ignore: []string{"$.x[-1]"}},
			want: Result{Agree: true, Format: "json"},
		},
		{
			name: "json numbers compared exactly",
			a:    js(`[1.0, 1e2, -0, 0.10, 12345678901234567890123, 1E+2]`),
			b:    js(`[1, 100, 0, 1e-1, 12345678901234567890123.000, 10e1]`),
			want: Result{Agree: true, Format: "json"},
		},
		{
			name: "json numbers beyond float64 precision differ",
			a:    js(`[9007199254740993]`), b: js(`[9007199254740992]`),
			want: Result{Format: "json", Reason: "$[0]: 9007199254740993 vs 9007199254740992", Path: "$[0]",
				ExcerptA: `9007199254740993]`, ExcerptB: `9007199254740992]`},
		},
		{
			name: "json ordered arrays differ",
			a:    js(`{"ids":[1,2,3]}`), b: js(`{"ids":[3,2,1]}`),
			want: Result{Format: "json", Reason: "$.ids[0]: 1 vs 3", Path: "$.ids[0]", ExcerptA: `1,2,3]}`, ExcerptB: `3,2,1]}`},
		},
		{
			name: "json unordered arrays agree recursively",
			a:    js(`{"ids":[1,2,3],"tags":[{"n":"x","v":[1,2]},{"n":"y","v":[]}]}`),
			b:    js(`{"ids":[3,2,1.0],"tags":[{"v":[],"n":"y"},{"n":"x","v":[2,1]}]}`),
			opt:  Options{Unordered: true},
			want: Result{Agree: true, Format: "json"},
		},
		{
			name: "json unordered multiset counts",
			a:    js(`[1,1,2]`), b: js(`[1,2,2]`),
			opt:  Options{Unordered: true},
			want: Result{Format: "json", Reason: "$[1]: 1 has no match in B", Path: "$[1]", ExcerptA: `1,2]`, ExcerptB: `[1,2,2]`},
		},
		{
			name: "json unordered extra in B",
			a:    js(`[1,2]`), b: js(`[2,1,3]`),
			opt:  Options{Unordered: true},
			want: Result{Format: "json", Reason: "$[2]: 3 in B has no match in A", Path: "$[2]", ExcerptA: `[1,2]`, ExcerptB: `3]`},
		},
		{
			name: "json array length",
			a:    js(`[1,2]`), b: js(`[1,2,3]`),
			want: Result{Format: "json", Reason: "$: length 2 vs 3", Path: "$", ExcerptA: `[1,2]`, ExcerptB: `3]`},
		},
		{
			name: "malformed json on B",
			a:    js(`{"ok":true}`), b: js(`<html>502 Bad Gateway</html>`),
			want: Result{Format: "json", Reason: "response B is not valid JSON: invalid character '<' looking for beginning of value",
				ExcerptA: `{"ok":true}`, ExcerptB: `<html>502 Bad Gateway</html>`},
		},
		{
			name: "truncated json on A, sniffed",
			a:    resp("", `{"ok":tr`), b: resp("", `{"ok":true}`),
			want: Result{Format: "json", Reason: "response A is not valid JSON: unexpected EOF",
				ExcerptA: `{"ok":tr`, ExcerptB: `{"ok":true}`},
		},
		{
			name: "json trailing data",
			a:    js(`{"ok":true}`), b: js(`{"ok":true} {"ok":false}`),
			want: Result{Format: "json", Reason: "response B is not valid JSON: unexpected data after top-level value",
				ExcerptA: `{"ok":true}`, ExcerptB: `{"ok":true} {"ok":false}`},
		},
		{
			name: "status mismatch first",
			a:    Response{Status: 200, ContentType: "application/json", Body: []byte(`{}`)},
			b:    Response{Status: 500, ContentType: "application/json", Body: []byte(`{}`)},
			want: Result{Format: "json", Reason: "status 200 vs 500", ExcerptA: "{}", ExcerptB: "{}"},
		},
		{
			name: "content types naming different formats",
			a:    resp("application/json", `{}`), b: resp("text/html", `{}`),
			want: Result{Format: "json", Reason: `content type "application/json" (json) vs "text/html" (text)`, ExcerptA: "{}", ExcerptB: "{}"},
		},
		{
			name: "text lines with CRLF and final newline",
			a:    resp("text/plain", "a\r\nb\r\nc\r\n"), b: resp("text/plain", "a\nb\nc"),
			want: Result{Agree: true, Format: "text"},
		},
		{
			name: "text line differs",
			a:    resp("text/plain", "a\nb\nc\n"), b: resp("text/plain", "a\nB\nc\n"),
			want: Result{Format: "text", Reason: "line 2 differs", Path: "line 2", ExcerptA: "b", ExcerptB: "B"},
		},
		{
			name: "text missing line",
			a:    resp("text/plain", "a\nb\n"), b: resp("text/plain", "a\n"),
			want: Result{Format: "text", Reason: "line 2: missing in B", Path: "line 2", ExcerptA: "b"},
		},
		{
			name: "text sorted lines agree",
			a:    resp("text/plain", "b\na\nc\n"), b: resp("text/plain", "c\nb\na\n"),
			opt:  Options{SortLines: true},
			want: Result{Agree: true, Format: "text"},
		},
		{
			name: "text sorted lines differ",
			a:    resp("text/plain", "b\na\nc\n"), b: resp("text/plain", "c\nb\nd\n"),
			opt:  Options{SortLines: true},
			want: Result{Format: "text", Reason: "line 2 of A has no match in B", Path: "line 2", ExcerptA: "a"},
		},
		{
			name: "text unsorted order matters",
			a:    resp("text/plain", "b\na\n"), b: resp("text/plain", "a\nb\n"),
			want: Result{Format: "text", Reason: "line 1 differs", Path: "line 1", ExcerptA: "b", ExcerptB: "a"},
		},
		{
			name: "csv quoting does not matter",
			a:    resp("text/csv", "id,name\n1,\"b\"\n2,\"x,y\"\r\n"), b: resp("text/csv", "\"id\",name\n1,b\n\"2\",\"x,y\""),
			want: Result{Agree: true, Format: "csv"},
		},
		{
			name: "csv field differs",
			a:    resp("text/csv", "id,name\n1,b\n"), b: resp("text/csv", "id,name\n1,\"c\"\n"),
			want: Result{Format: "csv", Reason: `record 2 field 2: "b" vs "c"`, Path: "record 2", ExcerptA: "1,b", ExcerptB: `1,"c"`},
		},
		{
			name: "csv sorted records",
			a:    resp("text/csv", "1,\"a\"\n2,b\n"), b: resp("text/csv", "2,b\n1,a\n"),
			opt:  Options{SortLines: true},
			want: Result{Agree: true, Format: "csv"},
		},
		{
			name: "csv explicit format, field count",
			a:    resp("", "1,a\n"), b: resp("", "1,a,\n"),
			opt:  Options{Format: "csv"},
			want: Result{Format: "csv", Reason: "record 1 2 fields vs 3", Path: "record 1", ExcerptA: "1,a", ExcerptB: "1,a,"},
		},
		{
			name: "xml attribute order, whitespace, comments, prefixes",
			a: resp("application/xml", `<?xml version="1.0"?>
<f:feed xmlns:f="urn:feed" a="1" b="2">
  <!-- generated -->
  <f:entry id="x">text</f:entry>
</f:feed>`),
			b:    resp("text/xml; charset=utf-8", `<feed xmlns="urn:feed" b="2" a="1"><entry id="x">te<!-- split -->xt</entry></feed>`),
			want: Result{Agree: true, Format: "xml"},
		},
		{
			name: "xml self-closing equals empty element",
			a:    resp("application/xml", `<a><b/></a>`), b: resp("application/xml", `<a><b></b></a>`),
			want: Result{Agree: true, Format: "xml"},
		},
		{
			name: "xml different namespace URL",
			a:    resp("application/xml", `<p:a xmlns:p="urn:one"/>`), b: resp("application/xml", `<p:a xmlns:p="urn:two"/>`),
			want: Result{Format: "xml", Reason: "/a[1]: <{urn:one}a> vs <{urn:two}a>", Path: "/a[1]",
				ExcerptA: `<p:a xmlns:p="urn:one"/>`, ExcerptB: `<p:a xmlns:p="urn:two"/>`},
		},
		{
			name: "xml attribute value differs",
			a:    resp("application/xml", `<r><i n="1"/><i n="2"/></r>`), b: resp("application/xml", `<r><i n="1"/><i n="3"/></r>`),
			want: Result{Format: "xml", Reason: `/r[1]/i[2]: <i n="2"> vs <i n="3">`, Path: "/r[1]/i[2]", ExcerptA: `<i n="2"/></r>`, ExcerptB: `<i n="3"/></r>`},
		},
		{
			name: "xml text differs",
			a:    resp("", `<r> <v>1</v></r>`), b: resp("", `<r><v>2</v></r>`),
			want: Result{Format: "xml", Reason: `/r[1]/v[1]/text(): text "1" vs text "2"`, Path: "/r[1]/v[1]/text()", ExcerptA: `1</v></r>`, ExcerptB: `2</v></r>`},
		},
		{
			name: "invalid ignore path fails closed",
			a:    js(`{}`), b: js(`{}`),
			opt:  Options{Ignore: []string{"generated_at"}},
			want: Result{Reason: `invalid ignore path "generated_at": must start with $`},
		},
		{
			name: "unknown format",
			a:    js(`{}`), b: js(`{}`),
			opt:  Options{Format: "yaml"},
			want: Result{Format: "yaml", Reason: `unknown format "yaml"`, ExcerptA: "{}", ExcerptB: "{}"},
		},
		{
			name: "empty bodies agree",
			a:    Response{Status: 204}, b: Response{Status: 204},
			want: Result{Agree: true, Format: "text"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Compare(tt.a, tt.b, tt.opt)
			if got != tt.want {
				t.Errorf("Compare:\n got %#v\nwant %#v", got, tt.want)
			}
			// The verdict is symmetric, and every response agrees with itself.
			if rev := Compare(tt.b, tt.a, tt.opt); rev.Agree != got.Agree {
				t.Errorf("Compare(b, a).Agree = %v, Compare(a, b).Agree = %v", rev.Agree, got.Agree)
			}
			if self := Compare(tt.a, tt.a, tt.opt); !self.Agree && tt.opt.Ignore == nil && tt.opt.Format != "yaml" {
				t.Errorf("Compare(a, a) disagrees: %#v", self)
			}
		})
	}
}

func TestExcerptTruncation(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 200) // 2 bytes per rune
	a := js(`{"s":"` + long + `"}`)
	b := js(`{"s":"` + long + `x"}`)
	got := Compare(a, b, Options{})
	if got.Agree || got.Path != "$.s" {
		t.Fatalf("got %#v", got)
	}
	for _, ex := range []string{got.ExcerptA, got.ExcerptB} {
		if n := utf8.RuneCountInString(ex); n != ExcerptRunes {
			t.Errorf("excerpt has %d runes, want %d", n, ExcerptRunes)
		}
		if !utf8.ValidString(ex) {
			t.Errorf("excerpt is not valid UTF-8: %q", ex)
		}
		if want := `"s":"` + strings.Repeat("é", ExcerptRunes-5); ex != want {
			t.Errorf("excerpt = %q, want %q", ex, want)
		}
	}
	wantReason := `$.s: "` + strings.Repeat("é", 59) + `…" vs "` + strings.Repeat("é", 59) + `…"`
	if got.Reason != wantReason {
		t.Errorf("reason = %q, want %q", got.Reason, wantReason)
	}
	// A 4-byte rune straddling the limit is kept whole.
	body := []byte(strings.Repeat("a", ExcerptRunes-1) + "😀tail")
	if ex := excerpt(body, 0, false); ex != strings.Repeat("a", ExcerptRunes-1)+"😀" {
		t.Errorf("excerpt = %q", ex)
	}
}

func TestCanonNumber(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"1", "1e0"}, {"1.0", "1e0"}, {"10e-1", "1e0"}, {"0.1e1", "1e0"},
		{"100", "1e2"}, {"1e2", "1e2"}, {"1E+2", "1e2"}, {"-0", "0"}, {"0.000", "0"},
		{"-12.50", "-125e-1"}, {"1e999999999999999999999", "1e999999999999999999999"},
	} {
		if got := canonNumber(tc.in); got != tc.want {
			t.Errorf("canonNumber(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestValidatePath(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"$", "$.a", "$.a.b", "$['a b']", `$["x"]`, "$.items[*].id", "$..etag", "$..[0]", "$.a[-1]", "$.*"} {
		if err := ValidatePath(p); err != nil {
			t.Errorf("ValidatePath(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", "a", "$.", "$..", "$[", "$[x]", "$['a'", "$a"} {
		if err := ValidatePath(p); err == nil {
			t.Errorf("ValidatePath(%q) = nil, want error", p)
		}
	}
}

func TestDeepNesting(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	got := Compare(js(deep), js("[]"), Options{})
	if got.Agree || got.Reason != "response A is not valid JSON: nesting too deep" {
		t.Errorf("got %q", got.Reason)
	}
}

// TestCompareReviewCases: answers that differ in ways a JSON decoder or a
// format check alone would miss.
func TestCompareReviewCases(t *testing.T) {
	t.Parallel()
	js := func(body string) Response {
		return Response{Status: 200, ContentType: "application/json", Body: []byte(body)}
	}
	cases := []struct {
		name   string
		a, b   Response
		opt    Options
		agree  bool
		reason string
	}{
		{"two index paths on one array ignore the elements they name",
			js(`{"a":[1,2,3]}`), js(`{"a":[1,2,4]}`), Options{Ignore: []string{"$.a[0]", "$.a[1]"}}, false, "$.a[2]: 3 vs 4"},
		{"two index paths, the rest equal",
			js(`{"a":[1,2,3]}`), js(`{"a":[7,8,3]}`), Options{Ignore: []string{"$.a[0]", "$.a[1]"}}, true, ""},
		{"a duplicate key is ambiguous",
			js(`{"a":2,"a":1}`), js(`{"a":1}`), Options{}, false, "response A is not valid JSON: duplicate key \"a\" at offset 7"},
		{"invalid UTF-8 is not U+FFFD",
			js("{\"s\":\"\xff\"}"), js("{\"s\":\"\xfe\"}"), Options{}, false, "a body is not valid UTF-8 and the bodies differ"},
		{"same JSON declared as octet-stream",
			js(`{"a":1}`), Response{Status: 200, ContentType: "application/octet-stream", Body: []byte(`{"a":1}`)}, Options{}, false,
			`content type "application/json" vs "application/octet-stream"`},
		{"declared against undeclared",
			js(`{"a":1}`), Response{Status: 200, Body: []byte(`{"a":1}`)}, Options{}, false, `content type "application/json" vs ""`},
		{"charset parameters do not matter",
			js(`{"a":1}`), Response{Status: 200, ContentType: "application/json; charset=utf-8", Body: []byte(`{"a": 1}`)}, Options{}, true, ""},
		{"a redirect elsewhere",
			Response{Status: 302, Location: "/login"}, Response{Status: 302, Location: "/home"}, Options{}, false,
			`status 302 redirects to "/login" vs "/home"`},
		{"a redirect to the same place",
			Response{Status: 302, Location: "/login"}, Response{Status: 302, Location: "/login"}, Options{}, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := Compare(c.a, c.b, c.opt)
			if r.Agree != c.agree || r.Reason != c.reason {
				t.Errorf("agree %v, reason %q; want %v, %q", r.Agree, r.Reason, c.agree, c.reason)
			}
		})
	}
}
