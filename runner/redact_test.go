package runner

import (
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/load/loadtest"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
)

// loadWith loads src with getenv answering from env.
func loadWith(t *testing.T, src string, env map[string]string) *scenario.Scenario {
	t.Helper()
	path := filepath.Join(t.TempDir(), "benchgate.yml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(path, "", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// noFileHolds fails the test for each file under dir that holds secret.
func noFileHolds(t *testing.T, dir, secret string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
			t.Errorf("%s holds %q", p, secret)
		}
		return nil
	})
}

// TestRunURLRedacted: a url target whose host and port came from ${HOST}
// is stored as written, ${HOST}, where the report says "reached at"; the
// load still goes to the real address.
func TestRunURLRedacted(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	sc := loadWith(t, `version: 1
name: url
targets:
  baseline: {url: "http://${HOST}"}
  candidate: {url: "http://${HOST}/"}
load: {concurrency: [1], duration: 50ms, warmup: 0s, repetitions: 2}
classes:
  - name: a
    request: GET /a
gate: {fail_on: []}
`, map[string]string{"HOST": host})
	out := t.TempDir()
	res, err := Run(t.Context(), sc, Options{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range []benchdata.TargetInfo{res.Env.Baseline, res.Env.Candidate} {
		if ti.URL != "http://${HOST}" {
			t.Errorf("%s: url %q, want http://${HOST}", ti.Name, ti.URL)
		}
	}
	if len(res.Rungs) != 4 || res.Rungs[0].ErrorCount() != 0 {
		t.Errorf("%d rungs, want 4 without errors", len(res.Rungs))
	}
	noFileHolds(t, out, host)
}

// TestRunTemplateErrorRedacted: a template that fails at run time ends the
// run with an error that may quote the template, and with it a ${VAR}'s
// value, and text of any length: the error returned and stored is
// redacted and capped, round and slice interleaved alike.
func TestRunTemplateErrorRedacted(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"round", "slice"} {
		t.Run(mode, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			t.Cleanup(srv.Close)
			sc := loadWith(t, `version: 1
name: tmpl
targets:
  baseline: {url: "`+srv.URL+`"}
  candidate: {url: "`+srv.URL+`"}
load:
  concurrency: [1]
  duration: 50ms
  warmup: 0s
  repetitions: 2
  interleave: `+mode+`
  defaults: {query: {k: "${API_KEY}"}}
agreement: {mode: "off"}
classes:
  - name: a
    request: GET /a
`, map[string]string{"API_KEY": secretQuery})
			tmplErr := errors.New(`executing "body" at <index "` + secretQuery + `" 99>: ` + strings.Repeat("x", huge))
			source := func(cell benchdata.Cell, round, worker int) Source {
				return &errSource{Seq: loadtest.Seq{Reqs: []load.Request{loadtest.Get("a", "/a")}, Loop: true}, err: tmplErr}
			}
			out := t.TempDir()
			res, err := Run(t.Context(), sc, Options{OutDir: out, source: source})
			if !errors.Is(err, tmplErr) {
				t.Fatalf("error %.200v, want the template's", err)
			}
			text := err.Error()
			if strings.Contains(text, secretQuery) || !strings.Contains(text, `class "a": a request template failed: executing "body" at <index "${API_KEY}" 99>`) || len(text) > target.MaxErrText+64 {
				t.Errorf("%d bytes: %.200s", len(text), text)
			}
			if res.Error != text {
				t.Errorf("results error %.200q, want the error returned", res.Error)
			}
			noFileHolds(t, out, secretQuery)
		})
	}
}

// A benchmark that writes without end is kept to what the parser would
// read: the buffer stops at its bound and says so, and never fails the
// write, so the log beside it goes on.
func TestCappedBuffer(t *testing.T) {
	t.Parallel()
	b := cappedBuffer{max: 10}
	for _, p := range []string{"abcd", "efgh", "ijkl", "mnop"} {
		if n, err := b.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if b.String() != "abcdefghij" || !b.over {
		t.Errorf("kept %q, over %v; want the first 10 bytes, over", b.String(), b.over)
	}
	b.Reset()
	b.Write([]byte("xyz"))
	if b.String() != "xyz" || b.over {
		t.Errorf("after Reset: %q, over %v", b.String(), b.over)
	}
}
