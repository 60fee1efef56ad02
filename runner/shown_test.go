package runner

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target/targettest"
)

// Secrets of TestAgreementSecretRedacted: distinctive, with the characters
// a query, a path and JSON escape. The short fragments noSecretIn looks
// for hold a character that is not base64 ('-', '~'), and the one that
// is all base64 is 7 long: a results file carries kilobytes of base64
// histograms, in which a short all-base64 fragment turns up by chance
// (the 3 letters "K4p" did, once in CI).
const (
	secretQuery  = "sk+live/Q7x9=="
	secretHeader = "hdr-Z8w2<&>v"
	secretBody   = "body\"K~4p/2+"
)

// echoServer answers every request with a JSON object naming side first,
// then what it was sent: the URI, the query's api_key, the X-Api-Key header
// and the body. The two sides differ at $.side, and the excerpt of the
// difference holds all the rest.
func echoServer(t *testing.T, side string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			return
		}
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"side":%q,"uri":%q,"q":%q,"h":%q,"b":%q}`, side, r.RequestURI, r.URL.Query().Get("api_key"), r.Header.Get("X-Api-Key"), b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func secretScenario(t *testing.T, src string) *scenario.Scenario {
	t.Helper()
	path := filepath.Join(t.TempDir(), "benchgate.yml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"API_KEY": secretQuery, "HDR_KEY": secretHeader, "BODY_KEY": secretBody}
	sc, err := scenario.Load(path, "", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// noSecretIn fails when text holds a secret in any form a request or an
// answer carries it.
func noSecretIn(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range []string{secretQuery, secretHeader, secretBody} {
		b, _ := json.Marshal(s)
		for _, f := range []string{s, url.QueryEscape(s), url.PathEscape(s), string(b[1 : len(b)-1]), "sk+live", "-Z8w2", "K~4p"} {
			if strings.Contains(text, f) {
				t.Errorf("%s holds %q", what, f)
			}
		}
	}
}

// noSecretInDir checks every file under dir.
func noSecretInDir(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			noSecretIn(t, p, string(b))
		}
		return nil
	})
}

// TestAgreementSecretRedacted: the values of ${VAR} in the query, a header
// and the body, sent to two targets that echo them and disagree, are in
// neither the results nor the progress, and the difference is still told.
func TestAgreementSecretRedacted(t *testing.T) {
	t.Parallel()
	base, cand := echoServer(t, "a"), echoServer(t, "b")
	sc := secretScenario(t, fmt.Sprintf(`version: 1
name: secrets
targets:
  baseline: {url: %q}
  candidate: {url: %q}
load:
  concurrency: [1]
  duration: 50ms
  warmup: 0s
  repetitions: 2
  defaults:
    query: {api_key: "${API_KEY}"}
    headers: {X-Api-Key: "${HDR_KEY}"}
classes:
  - name: item
    request:
      method: POST
      path: /item
      body: '{"k": "${BODY_KEY}", "n": {{int 1 9}}}'
`, base.URL, cand.URL))
	out := t.TempDir()
	var progress syncBuffer
	res, err := Run(t.Context(), sc, Options{OutDir: out, Progress: &progress})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, progress.String())
	}
	c := res.Correctness.Agreement.Classes[0]
	if c.Agree || c.First.Path != "$.side" || c.First.Target != "/item?api_key=${API_KEY}" {
		t.Fatalf("class %+v first %+v", c, c.First)
	}
	// The answer echoed each secret: the excerpt shows where.
	for _, name := range []string{"${API_KEY}", "${HDR_KEY}", "${BODY_KEY}"} {
		if !strings.Contains(c.First.Baseline, name) {
			t.Errorf("baseline excerpt %q lacks %s", c.First.Baseline, name)
		}
	}
	noSecretInDir(t, out)
	noSecretIn(t, "progress", progress.String())
	if !strings.Contains(progress.String(), "DISAGREE at request 1, POST /item?api_key=${API_KEY}: $.side") {
		t.Errorf("progress:\n%s", progress.String())
	}

	// Two targets echoing the same secrets agree: both answers are
	// redacted alike.
	same := echoServer(t, "a")
	sc2 := secretScenario(t, strings.Replace(sc.Source, cand.URL, same.URL, 1))
	res, err = Run(t.Context(), sc2, Options{OutDir: t.TempDir()})
	if err != nil || !res.Correctness.Agreement.Classes[0].Agree {
		t.Errorf("same answers: err %v, %+v", err, res.Correctness.Agreement.Classes[0].First)
	}
}

const huge = 3 << 20

// TestAgreementHugeTargetText: a 3 MB JSON key and a 3 MB status line are
// stored capped, cut on a rune boundary with the count of bytes cut.
func TestAgreementHugeTargetText(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("é", huge/2)
	base := jsonServer(t, func(n int) string { return `{"` + key + `":1}` })
	cand := targettest.RawServer(t, func(w *bufio.Writer, path string) {
		if path == "/item" {
			body := `{"` + key + `":2}`
			fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			return
		}
		// A status code of 3 MB: net/http quotes it in its error.
		fmt.Fprintf(w, "HTTP/1.1 2%s OK\r\nContent-Length: 0\r\n\r\n", strings.Repeat("0", huge))
	})
	extra := `  - name: broken
    request: GET /broken
`
	out := t.TempDir()
	var progress syncBuffer
	res, err := Run(t.Context(), correctnessScenario(t, base.URL, cand.URL, extra), Options{OutDir: out, Progress: &progress})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, c := range res.Correctness.Agreement.Classes {
		d := c.First
		if c.Agree || d == nil {
			t.Fatalf("class %s agrees", c.Class)
		}
		for what, s := range map[string]string{"reason": d.Reason, "path": d.Path, "baseline": d.Baseline, "candidate": d.Candidate} {
			if len(s) > maxExcerpt+32 || !utf8.ValidString(s) {
				t.Errorf("%s %s: %d bytes, valid UTF-8 %v", c.Class, what, len(s), utf8.ValidString(s))
			}
		}
		if !strings.Contains(d.Reason, " bytes cut)") {
			t.Errorf("%s reason %q", c.Class, d.Reason)
		}
	}
	if fi, err := os.Stat(filepath.Join(out, "results.json")); err != nil || fi.Size() > 64<<10 {
		t.Errorf("results.json: %v, %d bytes", err, fi.Size())
	}
	if n := len(progress.String()); n > 16<<10 {
		t.Errorf("%d bytes of progress", n)
	}
}
