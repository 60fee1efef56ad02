package agreement

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// The comparators read what the targets answer, and the pull request
// writes the candidate. Beyond not panicking, each fuzz target checks the
// algebra a comparison must have: an answer agrees with itself, agreement
// does not depend on which side is A, and for JSON, layout never matters
// and agreeing in order implies agreeing as multisets.

func FuzzCompare(f *testing.F) {
	f.Add(200, 200, "application/json", "application/json", []byte(rpcPython), []byte(rpcPHP), "", false, false, "$.version")
	f.Add(200, 200, "text/csv", "text/csv", []byte("a,b\n1,2\n"), []byte("a,b\r\n1,3\r\n"), "", false, true, "")
	f.Add(200, 200, "application/xml", "text/xml", []byte(`<a x="1" y="2"><b>t</b></a>`), []byte(`<a y="2" x="1"><b>t</b></a>`), "", false, false, "")
	f.Add(302, 302, "", "", []byte(""), []byte(""), "", false, false, "")
	f.Add(200, 200, "", "", []byte("[1,2]"), []byte("<x/>"), "text", true, true, "$..id")
	f.Add(200, 500, "text/plain", "application/octet-stream", []byte("\xff\xfe"), []byte("é"), "bogus", false, false, "x")
	f.Fuzz(func(t *testing.T, sa, sb int, cta, ctb string, ba, bb []byte, format string, unordered, sortLines bool, ignore string) {
		opt := Options{Format: format, Unordered: unordered, SortLines: sortLines}
		if ignore != "" {
			opt.Ignore = []string{ignore}
		}
		a := Response{Status: sa, ContentType: cta, Location: string(ba), Body: ba}
		b := Response{Status: sb, ContentType: ctb, Location: string(bb), Body: bb}
		ab, ba2 := Compare(a, b, opt), Compare(b, a, opt)
		if ab.Agree != ba2.Agree {
			t.Fatalf("A vs B agree %v (%s), B vs A %v (%s)", ab.Agree, ab.Reason, ba2.Agree, ba2.Reason)
		}
		if ab.Agree && ab.Reason != "" {
			t.Fatalf("agree with a reason: %q", ab.Reason)
		}
		for _, e := range []struct{ ex, body string }{{ab.ExcerptA, string(ba)}, {ab.ExcerptB, string(bb)}} {
			if !strings.Contains(e.body, e.ex) || utf8.RuneCountInString(e.ex) > ExcerptRunes {
				t.Fatalf("excerpt %q is not a short part of its body", e.ex)
			}
		}
		if self := Compare(a, a, opt); !self.Agree && ValidatePath(ignore) == nil && (format == "" || format == FormatJSON || format == FormatText || format == FormatCSV || format == FormatXML) {
			t.Fatalf("an answer disagrees with itself: %s", self.Reason)
		}
	})
}

func FuzzCompareJSON(f *testing.F) {
	f.Add([]byte(rpcPython), []byte(rpcPHP), false)
	f.Add([]byte(`{"items":[{"id":1,"price":12},{"id":2,"price":12}]}`), []byte(`{"items":[{"price":12,"id":1},{"price":13, "id":2}]}`), true)
	f.Add([]byte(`[1, 1.0, 10e-1, 0.1e1, -0, 0]`), []byte(`[1,1,1,1,0,-0.0]`), false)
	f.Add([]byte(`[[1,2],[2,1]]`), []byte(`[[2,1],[1,2]]`), true)
	f.Add([]byte(`{"a":2,"a":1}`), []byte(`{"a":1}`), false)
	f.Add([]byte("{\"s\":\"\xff\"}"), []byte("{\"s\":\"\\ufffd\"}"), false)
	f.Add([]byte(strings.Repeat("[", 100)+strings.Repeat("]", 100)), []byte(`[]`), true)
	f.Fuzz(func(t *testing.T, a, b []byte, unordered bool) {
		d := compareJSON(a, b, nil, unordered)
		if (d == nil) != (compareJSON(b, a, nil, unordered) == nil) {
			t.Fatalf("agreement depends on the side: %v", d)
		}
		if d == nil && !unordered && compareJSON(a, b, nil, true) != nil {
			t.Fatalf("agree in order but not as multisets")
		}
		if _, err := parseJSON(a); err != nil || !utf8.Valid(a) {
			return
		}
		if d := compareJSON(a, a, nil, unordered); d != nil {
			t.Fatalf("disagrees with itself: %s", d.reason)
		}
		for _, layout := range []func(*bytes.Buffer, []byte) error{
			func(w *bytes.Buffer, src []byte) error { return json.Indent(w, src, "", "\t") },
			json.Compact,
		} {
			var buf bytes.Buffer
			if err := layout(&buf, a); err != nil {
				t.Fatalf("valid for the comparator, not for encoding/json: %v", err)
			}
			if d := compareJSON(a, buf.Bytes(), nil, unordered); d != nil {
				t.Fatalf("the layout matters: %s\n%s", d.reason, buf.Bytes())
			}
		}
	})
}

func FuzzJSONPath(f *testing.F) {
	for _, p := range []string{"$", "$.a", "$.items[*].id", "$..etag", "$['a b'][0]", `$["x\"y"][-1]`, "$.*", "$..[0]", "$..*..*", "$.a[", "$..", "a"} {
		f.Add(p, []byte(`{"a":[{"id":1,"etag":"x"},{"id":2}],"a b":[3],"items":[{"id":1}]}`), []byte(`{"a":[{"id":9}],"a b":[4],"items":[{"id":2}]}`))
	}
	f.Fuzz(func(t *testing.T, p string, a, b []byte) {
		segs, err := parsePath(p)
		if (err == nil) != (ValidatePath(p) == nil) {
			t.Fatal("parsePath and ValidatePath disagree")
		}
		if err != nil {
			return
		}
		ig := [][]seg{segs}
		d := compareJSON(a, b, ig, false)
		if (d == nil) != (compareJSON(b, a, ig, false) == nil) {
			t.Fatalf("with %s agreement depends on the side", p)
		}
		if _, err := parseJSON(a); err != nil || !utf8.Valid(a) {
			return
		}
		if d := compareJSON(a, a, ig, false); d != nil {
			t.Fatalf("ignoring %s, disagrees with itself: %s", p, d.reason)
		}
		// Ignoring more never turns agreement into disagreement.
		if compareJSON(a, b, nil, false) == nil && d != nil {
			t.Fatalf("agree, yet not when ignoring %s: %s", p, d.reason)
		}
		// Ignoring a path twice is ignoring it once.
		if (d == nil) != (compareJSON(a, b, [][]seg{segs, segs}, false) == nil) {
			t.Fatalf("ignoring %s twice differs from once", p)
		}
	})
}

func FuzzCompareText(f *testing.F) {
	f.Add([]byte("a\nb\n"), []byte("b\r\na"), true, false)
	f.Add([]byte("x,y\n\"q\"\"\",2\n"), []byte("x,y\n\"q\"\"\",3\n"), false, true)
	f.Add([]byte("a,\"b\n"), []byte(""), false, true)
	f.Fuzz(func(t *testing.T, a, b []byte, sorted, csv bool) {
		cmp := compareText
		if csv {
			cmp = compareCSV
		}
		d := cmp(a, b, sorted)
		if (d == nil) != (cmp(b, a, sorted) == nil) {
			t.Fatalf("agreement depends on the side: %v", d)
		}
		if d == nil && !sorted && cmp(a, b, true) != nil {
			t.Fatalf("agree in order but not as multisets")
		}
		if csv {
			if _, err := parseCSV(a); err != nil {
				return
			}
		}
		if d := cmp(a, a, sorted); d != nil {
			t.Fatalf("disagrees with itself: %s", d.reason)
		}
	})
}

func FuzzCompareXML(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0"?><feed xmlns="urn:x"><entry id="1">a</entry><!-- c --><entry>b</entry></feed>`), []byte(`<feed xmlns="urn:x"><entry id="1">a</entry><entry>b</entry></feed>`))
	f.Add([]byte(`<a x="1" y="2"/>`), []byte(`<a y="2" x="1"></a>`))
	f.Add([]byte(`<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>`), []byte(`<a>x</a>`))
	f.Add([]byte(`<a><![CDATA[<b>]]></a>`), []byte(`<a>&lt;b&gt;</a>`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		d := compareXML(a, b)
		if (d == nil) != (compareXML(b, a) == nil) {
			t.Fatalf("agreement depends on the side: %v", d)
		}
		if _, err := parseXML(a); err != nil {
			return
		}
		if d := compareXML(a, a); d != nil {
			t.Fatalf("disagrees with itself: %s", d.reason)
		}
	})
}
