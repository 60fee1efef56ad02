package httpload

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/scenario"
)

// defaultUserAgent is net/http's, which every request sends unless its
// class sets one: the two clients' requests are the same bytes.
const defaultUserAgent = "Go-http-client/1.1"

// renderRequest appends r as net/http's Transport writes it (host its
// Host header) to dst: the request line, Host, User-Agent, a
// Content-Length where net/http sends one, the class's headers in the
// order of their names, and the body. A request net/http refuses to send
// (a control character in the target, a header value or the method) is
// refused with its words.
func renderRequest(dst []byte, r *load.Request, host string) ([]byte, error) {
	method := r.Method
	if method == "" {
		method = "GET"
	}
	if !scenario.ValidToken(method) {
		return dst, fmt.Errorf("net/http: invalid method %q", method)
	}
	uri, err := requestURI(r.Target)
	if err != nil {
		return dst, err
	}
	if hasCTL(uri) {
		return dst, errors.New("net/http: can't write control character in Request.URL")
	}
	for k, vs := range r.Header {
		if !scenario.ValidToken(k) {
			return dst, fmt.Errorf("net/http: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !validFieldValue(v) {
				return dst, fmt.Errorf("net/http: invalid header field value for %q", k)
			}
		}
	}

	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, uri...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, host...)
	dst = append(dst, "\r\n"...)
	ua := defaultUserAgent
	if vs, ok := r.Header["User-Agent"]; ok {
		ua = ""
		if len(vs) > 0 {
			ua = vs[0]
		}
	}
	if ua != "" {
		dst = append(dst, "User-Agent: "...)
		dst = append(dst, trimSpace(ua)...)
		dst = append(dst, "\r\n"...)
	}
	if len(r.Body) > 0 || method == "POST" || method == "PUT" || method == "PATCH" {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(r.Body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = appendHeader(dst, r)
	dst = append(dst, "\r\n"...)
	return append(dst, r.Body...), nil
}

// appendHeader appends r's header lines but those net/http writes itself,
// sorted by name as net/http sorts them. Few classes have more than a
// handful, so a small array keeps the sort from allocating.
func appendHeader(dst []byte, r *load.Request) []byte {
	var arr [16]string
	keys := arr[:0]
	for k := range r.Header {
		switch k {
		case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range r.Header[k] {
			dst = append(dst, k...)
			dst = append(dst, ": "...)
			dst = append(dst, trimSpace(v)...)
			dst = append(dst, "\r\n"...)
		}
	}
	return dst
}

// requestURI is the request-target net/http sends for a stream's target:
// a path (and query) as it is, byte for byte; anything else as url.Parse
// reads it.
func requestURI(target string) (string, error) {
	if strings.HasPrefix(target, "/") && !strings.HasPrefix(target, "//") {
		return target, nil
	}
	p, err := url.Parse(target)
	if err != nil {
		return "", err
	}
	u := url.URL{Path: p.Path, RawPath: p.RawPath, RawQuery: p.RawQuery, ForceQuery: p.ForceQuery}
	return u.RequestURI(), nil
}

// trimSpace is textproto.TrimString: ASCII white space off both ends.
func trimSpace[T ~string | ~[]byte](s T) T {
	isSpace := func(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func hasCTL[T ~string | ~[]byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// fieldChars are the bytes of a header value, as
// httpguts.ValidHeaderFieldValue and textproto take them: no control
// character but the tab.
var fieldChars = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= ' ' && c != 0x7f || c == '\t'
	}
	return t
}()

// validFieldValue is httpguts.ValidHeaderFieldValue.
func validFieldValue[T ~string | ~[]byte](v T) bool {
	for i := 0; i < len(v); i++ {
		if !fieldChars[v[i]] {
			return false
		}
	}
	return true
}
