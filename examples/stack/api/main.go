// Command api is the service of benchgate's compose-stack example: a small
// JSON API over a real Redis, shaped like many a team's service. Its
// regressed build makes /list fetch a category's items with one GET per
// item (an N+1) instead of one MGET: the same answers, one round trip to
// Redis per item, the kind of regression a gate over a real stack must
// find and one no test over a fake store can see.
//
//	api -addr :8080 -redis db:6379      # serve
//	api -n-plus-one                     # serve, /list doing an N+1
//	api -seed 2000 -redis db:6379       # load the corpus into Redis and exit
//
// The regressed build bakes the N+1 in at link time:
//
//	CGO_ENABLED=0 go build -ldflags "-X main.defaultNPlusOne=true" ./examples/stack/api
//
// Redis holds item:{id}, the item's JSON, and cat:{n}, a sorted set of the
// ids of category n scored by id, so /list pages in id order whatever the
// set's encoding. The client speaks RESP2 itself (standard library only),
// refuses replies larger than it could need, and puts a deadline on every
// call, so a stalled or hostile Redis costs a request its time, not the
// process its memory.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// defaultNPlusOne is the -n-plus-one default; the regressed build sets it
// to "true" with -ldflags -X.
var defaultNPlusOne = "false"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitError carries the process's exit code with the error; quiet when
// the flag package has already said what was wrong.
type exitError struct {
	code  int
	quiet bool
	err   error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

// exitCode reports err on stderr and returns the code to exit with: 0
// without an error or for -h, 2 for a usage error, 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.quiet {
			return code
		}
	}
	fmt.Fprintln(stderr, "api:", err)
	return code
}

func usageErr(format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, a...)}
}

// run serves until ctx ends, or seeds Redis and returns (-seed).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("api", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", ":8080", "listen address")
	redisAddr := fs.String("redis", "db:6379", "host:port of Redis")
	timeout := fs.Duration("redis-timeout", 5*time.Second, "deadline of each call to Redis")
	nPlusOneDefault, err := strconv.ParseBool(defaultNPlusOne)
	if err != nil {
		return fmt.Errorf("built with -X main.defaultNPlusOne=%q: want true or false", defaultNPlusOne)
	}
	nPlusOne := fs.Bool("n-plus-one", nPlusOneDefault, "fetch /list's items with one GET each instead of one MGET (the regressed build)")
	seedN := fs.Int("seed", 0, "load `N` items (ids 1..N) into Redis, print a summary line and exit")
	seedWait := fs.Duration("seed-wait", 30*time.Second, "with -seed: how long to retry while Redis does not answer")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, quiet: true, err: err}
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected arguments %q", fs.Args())
	}
	seeding := false
	fs.Visit(func(f *flag.Flag) { seeding = seeding || f.Name == "seed" })
	if seeding && *seedN < 1 {
		return usageErr("-seed %d: want at least 1 item", *seedN)
	}
	if *timeout <= 0 {
		return usageErr("-redis-timeout %s: want a positive duration", *timeout)
	}

	db := newClient(*redisAddr, *timeout, 16)
	defer db.Close()
	if seeding {
		return seed(ctx, db, *seedN, *seedWait, stdout)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           (&server{db: db, nPlusOne: *nPlusOne}).routes(),
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	fmt.Fprintf(stderr, "api: listening on %s (redis %s, n+1 %t)\n", ln.Addr(), *redisAddr, *nPlusOne)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Requests under way finish (each Redis call has its own deadline);
	// new connections are refused.
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdown)
	<-served
	if err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	fmt.Fprintln(stderr, "api: stopped")
	return nil
}

// The corpus: items 1..N, item id in category id%categories, its name and
// price a fixed function of its id, so every seed of N writes the same data.
const categories = 20

var (
	adjectives = []string{"red", "quiet", "sturdy", "small", "bright", "plain", "swift"}
	nouns      = []string{"lamp", "chair", "kettle", "clock", "basket", "mug", "shelf", "rug", "vase", "desk", "stool"}
)

// Item is what /items/{id} answers and /list lists.
type Item struct {
	ID    int     `json:"id"`
	Name  string  `json:"name"`
	Price float64 `json:"price"`
}

func corpusItem(id int) Item {
	return Item{
		ID:    id,
		Name:  fmt.Sprintf("%s %s %d", adjectives[id%len(adjectives)], nouns[id/len(adjectives)%len(nouns)], id),
		Price: float64(100+id*7919%99900) / 100,
	}
}

func itemKey(id int) string      { return "item:" + strconv.Itoa(id) }
func categoryKey(c int) string   { return "cat:" + strconv.Itoa(c) }
func seededCategories(n int) int { return min(n, categories) }

// seed waits up to wait for Redis to answer PING (it may still be
// starting), then writes the corpus of n items in pipelined batches. The
// categories are replaced, so a smaller seed leaves no larger one's ids.
func seed(ctx context.Context, db *client, n int, wait time.Duration, stdout io.Writer) error {
	deadline := time.Now().Add(wait)
	for {
		_, err := db.Do(ctx, "PING")
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("redis at %s did not answer PING within %s: %w", db.addr, wait, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(250*time.Millisecond, time.Until(deadline))):
		}
	}
	const batch = 1000 // commands per round trip
	cmds := make([][]string, 0, batch)
	flush := func() error {
		_, err := db.Pipeline(ctx, cmds)
		cmds = cmds[:0]
		return err
	}
	del := []string{"DEL"}
	for c := range categories {
		del = append(del, categoryKey(c))
	}
	cmds = append(cmds, del)
	for id := 1; id <= n; id++ {
		b, err := json.Marshal(corpusItem(id))
		if err != nil {
			return err
		}
		s := strconv.Itoa(id)
		cmds = append(cmds, []string{"SET", itemKey(id), string(b)}, []string{"ZADD", categoryKey(id % categories), s, s})
		if len(cmds) >= batch {
			if err := flush(); err != nil {
				return fmt.Errorf("seeding: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	_, err := fmt.Fprintf(stdout, "seeded %d items in %d categories\n", n, seededCategories(n))
	return err
}

// server answers the API's requests from Redis.
type server struct {
	db       *client
	nPlusOne bool
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /items/{id}", s.item)
	mux.HandleFunc("GET /list", s.list)
	return mux
}

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	v, err := s.db.Do(r.Context(), "PING")
	if err == nil && v.Str != "PONG" {
		err = fmt.Errorf("PING answered %q", v.Str)
	}
	if err != nil {
		http.Error(w, "redis: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "ok\n")
}

func (s *server) item(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id < 0 {
		writeJSON(w, http.StatusBadRequest, errorBody{fmt.Sprintf("item id %q: want a non-negative integer", r.PathValue("id"))})
		return
	}
	v, err := s.db.Do(r.Context(), "GET", itemKey(id))
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, errorBody{"redis: " + err.Error()})
		return
	}
	if v.Null {
		writeJSON(w, http.StatusNotFound, errorBody{fmt.Sprintf("no item %d", id)})
		return
	}
	it, err := decodeItem(v)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorBody{fmt.Sprintf("item %d: %v", id, err)})
		return
	}
	writeJSON(w, http.StatusOK, it)
}

// listBody is /list's answer.
type listBody struct {
	Category int    `json:"category"`
	Items    []Item `json:"items"`
}

// list answers the first limit items of a category in id order: limit
// defaults to 20, and more than 100 is taken as 100.
func (s *server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cat, err := strconv.Atoi(q.Get("category"))
	if err != nil || cat < 0 {
		writeJSON(w, http.StatusBadRequest, errorBody{fmt.Sprintf("category %q: want a non-negative integer", q.Get("category"))})
		return
	}
	limit := 20
	if l := q.Get("limit"); l != "" {
		limit, err = strconv.Atoi(l)
		if err != nil || limit < 1 {
			writeJSON(w, http.StatusBadRequest, errorBody{fmt.Sprintf("limit %q: want a positive integer", l)})
			return
		}
		limit = min(limit, 100)
	}
	items, err := s.categoryItems(r.Context(), cat, limit)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, errorBody{"redis: " + err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, listBody{Category: cat, Items: items})
}

// categoryItems reads the category's first limit ids, then their items:
// in one MGET, or in the regressed build one GET each. Ids whose item is
// gone are left out either way, so both builds answer the same.
func (s *server) categoryItems(ctx context.Context, cat, limit int) ([]Item, error) {
	ids, err := s.db.Do(ctx, "ZRANGE", categoryKey(cat), "0", strconv.Itoa(limit-1))
	if err != nil {
		return nil, err
	}
	if ids.Kind != '*' {
		return nil, fmt.Errorf("ZRANGE answered %s", ids.describe())
	}
	keys := make([]string, len(ids.Array))
	for i, id := range ids.Array {
		keys[i] = "item:" + id.Str
	}
	var vals []Value
	switch {
	case len(keys) == 0:
	case s.nPlusOne:
		for _, k := range keys {
			v, err := s.db.Do(ctx, "GET", k)
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
		}
	default:
		v, err := s.db.Do(ctx, append([]string{"MGET"}, keys...)...)
		if err != nil {
			return nil, err
		}
		if v.Kind != '*' || len(v.Array) != len(keys) {
			return nil, fmt.Errorf("MGET of %d keys answered %s", len(keys), v.describe())
		}
		vals = v.Array
	}
	items := []Item{}
	for i, v := range vals {
		if v.Null {
			continue
		}
		it, err := decodeItem(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", keys[i], err)
		}
		items = append(items, it)
	}
	return items, nil
}

func decodeItem(v Value) (Item, error) {
	var it Item
	if v.Kind != '$' {
		return it, fmt.Errorf("not a string but %s", v.describe())
	}
	if err := json.Unmarshal([]byte(v.Str), &it); err != nil {
		return it, err
	}
	return it, nil
}

type errorBody struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// The limits of a reply the client reads: nothing this service asks Redis
// for comes near them.
const (
	maxBulk  = 1 << 20 // bytes of a bulk string
	maxArray = 100000  // elements of an array
	maxDepth = 8       // arrays within arrays
)

// Value is one RESP2 reply. Kind is its type byte: '+' simple string, '-'
// error, ':' integer, '$' bulk string, '*' array. Null is a null bulk
// string or array ($-1, *-1).
type Value struct {
	Kind  byte
	Str   string
	Int   int64
	Array []Value
	Null  bool
}

func (v Value) describe() string {
	switch {
	case v.Null:
		return "null"
	case v.Kind == '*':
		return fmt.Sprintf("an array of %d", len(v.Array))
	case v.Kind == ':':
		return fmt.Sprintf("integer %d", v.Int)
	case v.Kind == '-':
		return "error " + strconv.Quote(v.Str)
	}
	return fmt.Sprintf("string %.40q", v.Str)
}

// RedisError is an error reply: the command failed, the connection is
// still good.
type RedisError string

func (e RedisError) Error() string { return string(e) }

var (
	errProtocol = errors.New("redis protocol")
	errLine     = fmt.Errorf("%w: reply line longer than the read buffer", errProtocol)
)

// newReader buffers a connection for readValue: a simple string, error or
// length line longer than the buffer is refused.
func newReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 16<<10) }

// readValue reads one reply. Lengths are checked before anything is
// allocated for them, and a bulk string is read in chunks as it arrives,
// so what a reply costs is bounded by the bytes actually received, not by
// the sizes it announces.
func readValue(r *bufio.Reader, depth int) (Value, error) {
	line, err := readLine(r)
	if err != nil {
		return Value{}, err
	}
	if len(line) == 0 {
		return Value{}, fmt.Errorf("%w: empty reply line", errProtocol)
	}
	v := Value{Kind: line[0]}
	body := line[1:]
	switch v.Kind {
	case '+', '-':
		v.Str = string(body)
		return v, nil
	case ':':
		v.Int, err = strconv.ParseInt(string(body), 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("%w: integer %.20q", errProtocol, body)
		}
		return v, nil
	case '$', '*':
	default:
		return Value{}, fmt.Errorf("%w: unknown reply type %q", errProtocol, v.Kind)
	}
	n, err := strconv.ParseInt(string(body), 10, 64)
	if err != nil || n < -1 {
		return Value{}, fmt.Errorf("%w: length %.20q", errProtocol, body)
	}
	if n == -1 {
		v.Null = true
		return v, nil
	}
	if v.Kind == '$' {
		if n > maxBulk {
			return Value{}, fmt.Errorf("%w: bulk string of %d bytes, over the limit of %d", errProtocol, n, maxBulk)
		}
		v.Str, err = readBulk(r, int(n))
		return v, err
	}
	if n > maxArray {
		return Value{}, fmt.Errorf("%w: array of %d elements, over the limit of %d", errProtocol, n, maxArray)
	}
	if depth >= maxDepth {
		return Value{}, fmt.Errorf("%w: arrays nested deeper than %d", errProtocol, maxDepth)
	}
	v.Array = make([]Value, 0, min(n, 64))
	for range n {
		e, err := readValue(r, depth+1)
		if err != nil {
			return Value{}, noEOF(err)
		}
		v.Array = append(v.Array, e)
	}
	return v, nil
}

// readLine returns a line without its CRLF; it is valid until the next read.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, errLine
	}
	if err != nil {
		if len(line) > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%w: line not ended by CRLF", errProtocol)
	}
	return line[:len(line)-2], nil
}

func readBulk(r *bufio.Reader, n int) (string, error) {
	const chunk = 64 << 10
	buf := make([]byte, 0, min(n, chunk))
	for len(buf) < n {
		k := min(n-len(buf), chunk)
		buf = slices.Grow(buf, k)
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+m]
		if err != nil {
			return "", noEOF(err)
		}
	}
	var crlf [2]byte
	if _, err := io.ReadFull(r, crlf[:]); err != nil {
		return "", noEOF(err)
	}
	if crlf != [2]byte{'\r', '\n'} {
		return "", fmt.Errorf("%w: bulk string of %d bytes not ended by CRLF", errProtocol, n)
	}
	return string(buf), nil
}

// noEOF turns an end of input within a reply into ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func writeCommand(w *bufio.Writer, args []string) {
	var b [20]byte
	w.WriteByte('*')
	w.Write(strconv.AppendInt(b[:0], int64(len(args)), 10))
	w.WriteString("\r\n")
	for _, a := range args {
		w.WriteByte('$')
		w.Write(strconv.AppendInt(b[:0], int64(len(a)), 10))
		w.WriteString("\r\n")
		w.WriteString(a)
		w.WriteString("\r\n")
	}
}

// client is a pool of connections to one Redis. Each call takes a
// connection for itself, idle or newly dialled, and gives it back when
// the reply is read whole; a connection that failed any other way than by
// an error reply is closed, since it may be mid-reply.
type client struct {
	addr    string
	timeout time.Duration
	slots   chan struct{} // a token per connection in use: at most cap
	idle    chan *conn
}

type conn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

func newClient(addr string, timeout time.Duration, size int) *client {
	return &client{addr: addr, timeout: timeout, slots: make(chan struct{}, size), idle: make(chan *conn, size)}
}

// Do sends one command and returns its reply; an error reply is a
// RedisError.
func (c *client) Do(ctx context.Context, args ...string) (Value, error) {
	vs, err := c.Pipeline(ctx, [][]string{args})
	if len(vs) == 1 && err == nil {
		return vs[0], nil
	}
	return Value{}, err
}

// Pipeline sends the commands in one write and reads their replies, all
// within the call's deadline. An error reply fails the call after every
// reply is read, as the first RedisError.
func (c *client) Pipeline(ctx context.Context, cmds [][]string) ([]Value, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.slots }()
	var cn *conn
	select {
	case cn = <-c.idle:
	default:
		d := net.Dialer{Timeout: c.timeout}
		nc, err := d.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return nil, err
		}
		cn = &conn{nc: nc, r: newReader(nc), w: bufio.NewWriter(nc)}
	}
	vs, err := cn.roundTrip(ctx, cmds, c.timeout)
	if err != nil && !errors.As(err, new(RedisError)) {
		cn.nc.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, err
	}
	select {
	case c.idle <- cn:
	default:
		cn.nc.Close()
	}
	return vs, err
}

func (cn *conn) roundTrip(ctx context.Context, cmds [][]string, timeout time.Duration) ([]Value, error) {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := cn.nc.SetDeadline(deadline); err != nil {
		return nil, err
	}
	// A request that ends (its client gone, the server shutting down)
	// stops waiting for Redis at once. Once that has begun, the
	// connection's deadline may move at any moment: it is not reused.
	stop := context.AfterFunc(ctx, func() { cn.nc.SetDeadline(time.Unix(1, 0)) })
	vs, err := cn.exchange(cmds)
	if !stop() {
		return nil, ctx.Err()
	}
	return vs, err
}

func (cn *conn) exchange(cmds [][]string) ([]Value, error) {
	for _, args := range cmds {
		writeCommand(cn.w, args)
	}
	if err := cn.w.Flush(); err != nil {
		return nil, err
	}
	vs := make([]Value, len(cmds))
	var first error
	for i := range vs {
		v, err := readValue(cn.r, 0)
		if err != nil {
			return nil, noEOF(err)
		}
		if v.Kind == '-' && first == nil {
			first = RedisError(v.Str)
		}
		vs[i] = v
	}
	return vs, first
}

// Close closes the idle connections.
func (c *client) Close() {
	for {
		select {
		case cn := <-c.idle:
			cn.nc.Close()
		default:
			return
		}
	}
}
