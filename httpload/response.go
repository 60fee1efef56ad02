package httpload

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/benchgate/benchgate/scenario"
)

// The fast client's reading of an answer, in place in the worker's
// buffer and as net/http's Transport reads it (FuzzResponse compares the
// two on any bytes): the status line, the headers that frame the body,
// and the body counted and discarded.

// fill reads more of the answer into the buffer, moving what is unread to
// its start first, and growing it (up to maxHead) when it is full.
func (fc *fastCaller) fill() error {
	if fc.r > 0 {
		copy(fc.buf, fc.buf[fc.r:fc.w])
		fc.w -= fc.r
		fc.r = 0
	}
	if fc.w == len(fc.buf) {
		if len(fc.buf) >= maxHead {
			return fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", maxHead)
		}
		nb := make([]byte, min(2*len(fc.buf), maxHead))
		copy(nb, fc.buf[:fc.w])
		fc.buf = nb
	}
	m, err := fc.conn.Read(fc.buf[fc.w:])
	fc.w += m
	fc.got += int64(m)
	if m > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// line returns the next line of the answer without its CRLF (or LF), in
// the buffer: valid until the next read.
func (fc *fastCaller) line() ([]byte, error) {
	for {
		if i := bytes.IndexByte(fc.buf[fc.r:fc.w], '\n'); i >= 0 {
			l := fc.buf[fc.r : fc.r+i]
			fc.r += i + 1
			if len(l) > 0 && l[len(l)-1] == '\r' {
				l = l[:len(l)-1]
			}
			return l, nil
		}
		if err := fc.fill(); err != nil {
			if err == io.EOF && fc.w > fc.r {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// max1xx is how many informational answers net/http skips before it
// gives up on a request.
const max1xx = 5

// readResponse reads one answer as net/http's Transport reads it:
// informational ones (1xx but 101) are skipped, up to max1xx; the final
// one's body is counted and discarded. keep says the connection may carry
// the next request.
func (fc *fastCaller) readResponse() (code int, keep bool, n int64, err error) {
	for informational := 0; ; informational++ {
		l, err := fc.line()
		if err != nil {
			return 0, false, 0, err
		}
		code, major, minor, err := parseStatusLine(l)
		if err != nil {
			return 0, false, 0, err
		}
		h, err := fc.headers()
		if err != nil {
			return 0, false, 0, err
		}
		if code >= 100 && code <= 199 && code != 101 {
			if informational == max1xx {
				return 0, false, 0, errors.New("net/http: too many 1xx informational responses")
			}
			continue
		}
		length, chunked, err := h.framing(major, minor)
		if err != nil {
			return 0, false, 0, err
		}
		// net/http's shouldClose, and it keeps no connection after an
		// answer of code 199 or less (101 is one).
		keep = major >= 1 && !h.close && (major > 1 || minor >= 1 || h.keepAlive) && code > 199
		switch {
		case fc.head || code/100 == 1 || code == 204 || code == 304:
			// No body; a Content-Length tells of the GET's.
			return code, keep, 0, nil
		case chunked:
			n, err = fc.discardChunked()
		case length >= 0:
			n, err = fc.discard(length)
		default:
			// Delimited by the connection's close.
			n, err = fc.discard(-1)
			keep = false
		}
		return code, keep, n, err
	}
}

// head is what of a response's headers frames its body, as read.
type head struct {
	lengths int // Content-Length lines
	// length is the first one's value; lengthLen its length, one more
	// than length holds for a longer value, which is refused. net/http
	// takes any number of leading zeros; benchgate bounds what it keeps
	// at maxFraming bytes.
	length    [maxFraming]byte
	lengthLen int
	lengthsEq bool // all of them are the first's
	encodings int  // Transfer-Encoding lines
	chunked   bool // the first one's value is "chunked"
	close     bool // Connection: close
	keepAlive bool // Connection: keep-alive (for HTTP/1.0)
}

// addLength keeps v as the first Content-Length, or notes whether v is
// the same.
func (h *head) addLength(v []byte) {
	if h.lengths == 0 {
		h.lengthLen = copy(h.length[:], v)
		if len(v) > len(h.length) {
			h.lengthLen = len(h.length) + 1
		}
	} else if h.lengthLen > len(h.length) || !bytes.Equal(v, h.length[:h.lengthLen]) {
		h.lengthsEq = false
	}
	h.lengths++
}

// framing is net/http's readTransfer for an answer: a Transfer-Encoding
// (ignored under HTTP/1.0) must be "chunked" alone; Content-Lengths must
// agree and parse, checked even where no body follows; chunked wins over a
// length. length -1 means none.
func (h *head) framing(major, minor int) (length int64, chunked bool, err error) {
	if major == 0 && minor == 0 {
		major, minor = 1, 1 // as net/http's readTransfer reads HTTP/0.0
	}
	if h.encodings > 0 && (major > 1 || major == 1 && minor >= 1) {
		if h.encodings != 1 {
			return 0, false, errors.New("too many transfer encodings")
		}
		if !h.chunked {
			return 0, false, errors.New("unsupported transfer encoding")
		}
		chunked = true
	}
	length = -1
	if h.lengths > 0 {
		if !h.lengthsEq {
			return 0, false, errors.New("http: message cannot contain multiple Content-Length headers")
		}
		if h.lengthLen > len(h.length) {
			return 0, false, errors.New("bad Content-Length")
		}
		if length, err = parseLength(h.length[:h.lengthLen]); err != nil {
			return 0, false, err
		}
	}
	if chunked {
		length = -1
	}
	return length, chunked, nil
}

// headers reads the header lines up to the empty one, as
// textproto.ReadMIMEHeader reads them: each line trimmed of spaces and
// tabs; names tokens (spaces let pass); values without a control
// character but the tab; and a line that starts with white space
// continuing the one before (obs-fold), joined to it by a space.
func (fc *fastCaller) headers() (head, error) {
	h := head{lengthsEq: true}
	var cur framingValue // the framing header being read, continuations and all
	total := 0
	first := true
	for {
		l, err := fc.line()
		if err != nil {
			return h, unexpected(err)
		}
		if total += len(l) + 2; total > maxHead {
			return h, fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", maxHead)
		}
		if len(l) > 0 && (l[0] == ' ' || l[0] == '\t') {
			if first {
				return h, fmt.Errorf("malformed MIME header initial line: %q", l)
			}
			if !validFieldValue(l) {
				return h, fmt.Errorf("malformed MIME header line: %q", l)
			}
			cur.add(trimOWS(l))
			continue
		}
		h.commit(&cur)
		if len(l) == 0 {
			return h, nil
		}
		first = false
		// One pass each over the name (a token, spaces let pass) and
		// the value (fieldChars): the headers are most of an answer.
		colon := 0
		for colon < len(l) && nameChars[l[colon]] {
			colon++
		}
		if colon == 0 || colon == len(l) || l[colon] != ':' {
			return h, fmt.Errorf("malformed MIME header line: %q", l)
		}
		for _, c := range l[colon+1:] {
			if !fieldChars[c] {
				return h, fmt.Errorf("malformed MIME header line: %q", l)
			}
		}
		name := l[:colon]
		switch len(name) {
		case len("Content-Length"):
			if isName(name, "content-length") {
				cur.start(hdrLength, trimOWS(l[colon+1:]))
			}
		case len("Transfer-Encoding"):
			if isName(name, "transfer-encoding") {
				cur.start(hdrEncoding, trimOWS(l[colon+1:]))
			}
		case len("Connection"):
			if isName(name, "connection") {
				cur.start(hdrConnection, trimOWS(l[colon+1:]))
			}
		}
	}
}

// maxFraming bounds the value of a framing header the fast client reads;
// a longer one is refused (net/http would read a Content-Length of 300
// zeros as 0).
const maxFraming = 256

// Framing headers.
const (
	hdrNone = iota
	hdrLength
	hdrEncoding
	hdrConnection
)

// framingValue is the value of a framing header as it is read.
type framingValue struct {
	kind int
	val  [maxFraming]byte
	n    int
	long bool // past val: a value no framing header may have
}

func (v *framingValue) start(kind int, value []byte) {
	*v = framingValue{kind: kind}
	v.n = copy(v.val[:], value)
	v.long = len(value) > len(v.val)
}

// add joins a continuation line to the value, as textproto does.
func (v *framingValue) add(more []byte) {
	if v.kind == hdrNone {
		return
	}
	if v.n+1+len(more) > len(v.val) {
		v.long = true
		return
	}
	v.val[v.n] = ' '
	v.n += 1 + copy(v.val[v.n+1:], more)
}

// commit counts the framing header v has read, if any, and clears it.
func (h *head) commit(v *framingValue) {
	if v.kind == hdrNone {
		return
	}
	val := trimSpace(v.val[:v.n])
	switch v.kind {
	case hdrLength:
		if v.long {
			val = v.val[:] // too long to be a length, and unlike any other
		}
		h.addLength(val)
	case hdrEncoding:
		if h.encodings == 0 {
			h.chunked = !v.long && len(val) == len("chunked") && foldEqual(val, "chunked")
		}
		h.encodings++
	case hdrConnection:
		h.close = h.close || hasToken(val, "close")
		h.keepAlive = h.keepAlive || hasToken(val, "keep-alive")
	}
	v.kind = hdrNone
}

// trimOWS trims spaces and tabs off both ends.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// isName reports whether name, of nameChars only, is lower in any case.
// Setting bit 5 lowers a letter and changes no other byte a name may hold
// that lower may hold ('-', digits).
func isName(name []byte, lower string) bool {
	for i := 0; i < len(lower); i++ {
		if name[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// nameChars are the bytes of a header name as textproto reads one: a
// token's, and the space it lets pass (go.dev/issue/34540).
var nameChars = func() (t [256]bool) {
	for c := range t {
		t[c] = c == ' ' || scenario.ValidToken([]byte{byte(c)})
	}
	return t
}()

// hasToken reports whether the comma-separated list v holds token,
// ignoring ASCII case.
func hasToken[T ~string | ~[]byte](v T, token string) bool {
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		a, b := 0, i
		for a < b && (v[a] == ' ' || v[a] == '\t') {
			a++
		}
		for b > a && (v[b-1] == ' ' || v[b-1] == '\t') {
			b--
		}
		if b-a == len(token) && foldEqual(v[a:b], token) {
			return true
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return false
}

// foldEqual compares v and s ignoring ASCII case; they are as long.
func foldEqual[T ~string | ~[]byte](v T, s string) bool {
	for i := 0; i < len(s); i++ {
		x, y := v[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// parseStatusLine reads "HTTP/x.y SSS reason" as net/http's ReadResponse
// and ParseHTTPVersion do: a version of one digit each side, a code of
// three characters that strconv.Atoi takes and is not negative.
func parseStatusLine(l []byte) (code, major, minor int, err error) {
	sp := bytes.IndexByte(l, ' ')
	if sp < 0 {
		return 0, 0, 0, fmt.Errorf("malformed HTTP response %q", l)
	}
	proto, status := l[:sp], bytes.TrimLeft(l[sp+1:], " ")
	if i := bytes.IndexByte(status, ' '); i >= 0 {
		status = status[:i]
	}
	if len(status) != 3 {
		return 0, 0, 0, fmt.Errorf("malformed HTTP status code %q", status)
	}
	digits, negative := status, status[0] == '-'
	if status[0] == '+' || negative {
		digits = digits[1:]
	}
	for _, d := range digits {
		if d < '0' || d > '9' {
			return 0, 0, 0, fmt.Errorf("malformed HTTP status code %q", status)
		}
		code = code*10 + int(d-'0')
	}
	if negative && code != 0 { // "-00" is Atoi's 0, which net/http takes
		return 0, 0, 0, fmt.Errorf("malformed HTTP status code %q", status)
	}
	if len(proto) != len("HTTP/1.1") || string(proto[:5]) != "HTTP/" || proto[6] != '.' ||
		proto[5] < '0' || proto[5] > '9' || proto[7] < '0' || proto[7] > '9' {
		return 0, 0, 0, fmt.Errorf("malformed HTTP version %q", proto)
	}
	return code, int(proto[5] - '0'), int(proto[7] - '0'), nil
}

// parseLength is a Content-Length's value, as strconv.ParseUint(v, 10, 63)
// reads it.
func parseLength(v []byte) (int64, error) {
	if len(v) == 0 {
		return 0, errors.New("invalid empty Content-Length")
	}
	var n int64
	for i := 0; i < len(v); i++ {
		d := v[i]
		if d < '0' || d > '9' || n > (1<<63-1-int64(d-'0'))/10 {
			return 0, fmt.Errorf("bad Content-Length %q", string(v))
		}
		n = n*10 + int64(d-'0')
	}
	return n, nil
}

// discard reads and counts n bytes of body (n < 0: up to the close).
func (fc *fastCaller) discard(n int64) (int64, error) {
	var got int64
	for n < 0 || got < n {
		if fc.r == fc.w {
			fc.r, fc.w = 0, 0
			m, err := fc.conn.Read(fc.buf)
			fc.w = m
			fc.got += int64(m)
			if m == 0 {
				if err == io.EOF && n < 0 {
					return got, nil
				}
				if err == io.EOF || err == nil {
					err = io.ErrUnexpectedEOF
				}
				return got, err
			}
		}
		take := int64(fc.w - fc.r)
		if n >= 0 {
			take = min(take, n-got)
		}
		fc.r += int(take)
		got += take
	}
	return got, nil
}

// maxChunkLine is net/http's limit on a chunk's size line (its
// internal maxLineLength).
const maxChunkLine = 4096

// chunkLine is a chunk's size line as net/http reads it, without its
// CRLF: it must end in CRLF and hold no other CR, since RFC 9112 (errata
// 7633) allows no bare LF in chunked framing, as it does in headers.
func (fc *fastCaller) chunkLine() ([]byte, error) {
	for {
		if i := bytes.IndexByte(fc.buf[fc.r:fc.w], '\n'); i >= 0 {
			l := fc.buf[fc.r : fc.r+i]
			fc.r += i + 1
			switch j := bytes.IndexByte(l, '\r'); {
			case j < 0:
				return nil, errors.New("chunked line ends with bare LF")
			case j != len(l)-1:
				return nil, errors.New("invalid CR in chunked line")
			}
			return l[:len(l)-1], nil
		}
		if err := fc.fill(); err != nil {
			if err == io.EOF && fc.w > fc.r {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// discardChunked reads and counts a chunked body and its trailer, as
// net/http's chunked reader does: a size line ending in CRLF with its
// extensions cut and trailing white space trimmed, the data, then exactly
// CRLF.
func (fc *fastCaller) discardChunked() (int64, error) {
	// excess is net/http's bound on what is not data: 16 bytes a chunk
	// and twice its data are free, past 16 KiB more the body is refused.
	var got, excess int64
	for {
		l, err := fc.chunkLine()
		if err != nil {
			return got, unexpected(err)
		}
		if len(l) >= maxChunkLine {
			return got, errors.New("header line too long")
		}
		excess += int64(len(l)) + 2
		l = bytes.TrimRight(l, " \t")
		if i := bytes.IndexByte(l, ';'); i >= 0 {
			l = bytes.TrimRight(l[:i], " \t")
		}
		size, err := parseHex(l)
		if err != nil {
			return got, err
		}
		excess = max(excess-16-2*int64(size), 0)
		if excess > 16<<10 {
			return got, errors.New("chunked encoding contains too much non-data")
		}
		if size == 0 {
			for {
				t, err := fc.line()
				if err != nil {
					return got, unexpected(err)
				}
				if len(t) == 0 {
					return got, nil
				}
			}
		}
		m, err := fc.discard(size)
		got += m
		if err != nil {
			return got, err
		}
		for fc.w-fc.r < 2 {
			if err := fc.fill(); err != nil {
				return got, unexpected(err)
			}
		}
		if fc.buf[fc.r] != '\r' || fc.buf[fc.r+1] != '\n' {
			return got, errors.New("malformed chunked encoding")
		}
		fc.r += 2
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseHex is a chunk's size (net/http's parseHexUint).
func parseHex(v []byte) (int64, error) {
	if len(v) == 0 {
		return 0, errors.New("empty hex number for chunk length")
	}
	var n uint64
	for i, d := range v {
		switch {
		case d >= '0' && d <= '9':
			d -= '0'
		case d >= 'a' && d <= 'f':
			d -= 'a' - 10
		case d >= 'A' && d <= 'F':
			d -= 'A' - 10
		default:
			return 0, errors.New("invalid byte in chunk length")
		}
		if i == 16 {
			return 0, errors.New("http chunk length too large")
		}
		n = n<<4 | uint64(d)
	}
	if n > 1<<62 {
		return 0, errors.New("http chunk length too large")
	}
	return int64(n), nil
}
