package agreement

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"
)

// Formats understood by Compare.
const (
	FormatJSON = "json"
	FormatText = "text"
	FormatCSV  = "csv"
	FormatXML  = "xml"
)

// ExcerptRunes is the maximum length, in runes, of Result.ExcerptA/ExcerptB.
const ExcerptRunes = 120

// Options control how two responses are compared.
type Options struct {
	// Ignore lists JSON paths removed from both sides before comparing, e.g.
	// "$.generated_at", "$.items[*].id", "$..etag". Supported: $, .key,
	// ['key'] / ["key"], [n] (negative counts from the end), [*], .* and ..
	// (recursive descent). An invalid path makes Compare disagree.
	Ignore []string
	// Unordered compares JSON arrays as multisets (recursively).
	Unordered bool
	// SortLines compares text lines / CSV records as multisets.
	SortLines bool
	// Format is "", "json", "text", "csv" or "xml". "" means: from the
	// Content-Type, else sniffed from the bodies.
	Format string
}

// Response is what one implementation answered.
type Response struct {
	Status      int
	ContentType string
	// Location is the Location header: a redirect's answer is where it
	// points, so it is compared for a 3xx status.
	Location string
	Body     []byte
}

// Result is the verdict of Compare.
type Result struct {
	Agree  bool
	Format string
	// Reason says why the responses disagree, e.g. "status 200 vs 500",
	// "$.items[3].price: 12 vs 13", "line 7 differs". Empty when they agree.
	Reason string
	// Path locates the first difference: a JSON path ("$.items[3].price"),
	// "line 7" (text), "record 3" (CSV) or an element path ("/feed[1]/entry[2]")
	// for XML. Empty when not applicable.
	Path string
	// ExcerptA and ExcerptB are raw excerpts (at most ExcerptRunes runes,
	// never splitting a UTF-8 sequence) of both bodies at the first
	// differing point. Callers escape them.
	ExcerptA, ExcerptB string
}

// ValidatePath reports whether p is a JSON path accepted in Options.Ignore.
func ValidatePath(p string) error {
	_, err := parsePath(p)
	return err
}

// diff is a format-specific first difference.
type diff struct {
	path   string
	reason string
	offA   int // byte offset into A's body for the excerpt; -1 = none
	offB   int
	lineA  bool // excerpt only up to the end of the line
	lineB  bool
}

// Compare decides whether a and b agree under opt.
func Compare(a, b Response, opt Options) Result {
	paths := make([][]seg, 0, len(opt.Ignore))
	for _, p := range opt.Ignore {
		s, err := parsePath(p)
		if err != nil {
			return Result{Reason: fmt.Sprintf("invalid ignore path %q: %v", p, err)}
		}
		paths = append(paths, s)
	}

	format, reason := chooseFormat(a, b, opt.Format)
	res := Result{Format: format}
	if a.Status != b.Status {
		res.Reason = fmt.Sprintf("status %d vs %d", a.Status, b.Status)
		res.ExcerptA = excerpt(a.Body, 0, false)
		res.ExcerptB = excerpt(b.Body, 0, false)
		return res
	}
	if a.Status >= 300 && a.Status < 400 && a.Location != b.Location {
		res.Reason = fmt.Sprintf("status %d redirects to %q vs %q", a.Status, short(a.Location, 80), short(b.Location, 80))
		return res
	}
	ma, mb := mediaType(a.ContentType), mediaType(b.ContentType)
	if reason == "" && ma != mb && ((ma == "") != (mb == "") ||
		formatFromContentType(a.ContentType) != formatFromContentType(b.ContentType)) {
		// A client reads the header before the body: the same bytes
		// declared as another kind of content (or as none) are another
		// answer. Aliases of one format (text/xml, application/xml) agree.
		reason = fmt.Sprintf("content type %q vs %q", short(a.ContentType, 60), short(b.ContentType, 60))
	}
	if reason != "" {
		res.Reason = reason
		res.ExcerptA = excerpt(a.Body, 0, false)
		res.ExcerptB = excerpt(b.Body, 0, false)
		return res
	}
	if bytes.Equal(a.Body, b.Body) {
		res.Agree = true
		return res
	}

	var d *diff
	switch format {
	case FormatJSON:
		d = compareJSON(a.Body, b.Body, paths, opt.Unordered)
	case FormatCSV:
		d = compareCSV(a.Body, b.Body, opt.SortLines)
	case FormatXML:
		d = compareXML(a.Body, b.Body)
	default:
		d = compareText(a.Body, b.Body, opt.SortLines)
	}
	if d == nil {
		res.Agree = true
		return res
	}
	res.Reason = d.reason
	res.Path = d.path
	res.ExcerptA = excerpt(a.Body, d.offA, d.lineA)
	res.ExcerptB = excerpt(b.Body, d.offB, d.lineB)
	return res
}

// chooseFormat picks the comparison format. A non-empty reason means the
// responses already disagree (their content types name different formats).
func chooseFormat(a, b Response, explicit string) (string, string) {
	switch explicit {
	case FormatJSON, FormatText, FormatCSV, FormatXML:
		return explicit, ""
	case "":
	default:
		return explicit, fmt.Sprintf("unknown format %q", explicit)
	}
	fa, fb := formatFromContentType(a.ContentType), formatFromContentType(b.ContentType)
	switch {
	case fa != "" && fb != "" && fa != fb:
		return fa, fmt.Sprintf("content type %q (%s) vs %q (%s)", a.ContentType, fa, b.ContentType, fb)
	case fa != "":
		return fa, ""
	case fb != "":
		return fb, ""
	}
	sa, sb := sniff(a.Body), sniff(b.Body)
	for _, f := range []string{FormatJSON, FormatXML} {
		if sa == f || sb == f {
			return f, ""
		}
	}
	return FormatText, ""
}

// mediaType is a Content-Type's media type, lower case, parameters (the
// charset) left out; "" for none.
func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

func formatFromContentType(ct string) string {
	if strings.TrimSpace(ct) == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	switch {
	case mt == "application/json", mt == "text/json", strings.HasSuffix(mt, "+json"):
		return FormatJSON
	case mt == "text/csv", mt == "application/csv":
		return FormatCSV
	case mt == "application/xml", mt == "text/xml", strings.HasSuffix(mt, "+xml"):
		return FormatXML
	case strings.HasPrefix(mt, "text/"), mt == "application/x-ndjson", mt == "application/jsonl":
		return FormatText
	}
	return ""
}

func sniff(body []byte) string {
	t := bytes.TrimLeft(body, " \t\r\n\ufeff")
	if len(t) == 0 {
		return ""
	}
	switch t[0] {
	case '{', '[':
		return FormatJSON
	case '<':
		return FormatXML
	}
	return FormatText
}

// excerpt returns at most ExcerptRunes runes of body starting at off,
// stopping before a newline when line is set. Invalid UTF-8 bytes are kept
// raw (one byte counts as one rune); multi-byte sequences are never split.
func excerpt(body []byte, off int, line bool) string {
	if off < 0 || off >= len(body) {
		return ""
	}
	rest := body[off:]
	end, n := 0, 0
	for end < len(rest) && n < ExcerptRunes {
		if line && (rest[end] == '\n' || rest[end] == '\r') {
			break
		}
		_, size := utf8.DecodeRune(rest[end:])
		end += size
		n++
	}
	return string(rest[:end])
}

// short renders s for a Reason, truncated to max runes.
func short(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}
