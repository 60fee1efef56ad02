package scenario

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func loadSecrets(t *testing.T, src string, env map[string]string) *Scenario {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, "", mapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSecretRedact: every value Load took from the environment is replaced,
// in each form a request carries it; a default written in the file is not
// a secret, nor a value shorter than MinSecret.
func TestSecretRedact(t *testing.T) {
	t.Parallel()
	const key = "k3y+/x=<&>\"y"
	src := minimal + `load:
  defaults:
    query: {api_key: "${API_KEY}", n: "${N}", mode: "${MODE:-fast}"}
    headers: {X-Token: "${TOKEN:-unused}"}
`
	s := loadSecrets(t, src, map[string]string{"API_KEY": key, "N": "7", "TOKEN": "tok-123456"})
	if !s.HasSecrets() {
		t.Fatal("HasSecrets = false")
	}
	req := s.Stream("", "A", 1, 0, 0).Next()
	for _, tt := range []struct{ in, want string }{
		{req.Target, "/a?api_key=${API_KEY}&mode=fast&n=7"},
		{"raw " + key + ".", "raw ${API_KEY}."},
		{`json "k3y+/x=\u003c\u0026\u003e\"y"`, `json "${API_KEY}"`},
		{`json "k3y+/x=<&>\"y"`, `json "${API_KEY}"`},
		{"path /k3y+%2Fx=%3C&%3E%22y/", "path /${API_KEY}/"},
		{"header tok-123456", "header ${TOKEN}"},
		{"n=7", "n=7"},
		{"mode=fast", "mode=fast"},
	} {
		if got := s.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if strings.Contains(s.Redact(req.Target), "k3y") {
		t.Errorf("the target keeps the key: %s", s.Redact(req.Target))
	}
	// "7" is everywhere and no secret.
	if got, want := s.Redact(`{"id":7,"key":"k3y+/x=<&>\"y"}`), `{"id":7,"key":"${API_KEY}"}`; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

// TestSecretNone: without values from the environment, Redact returns its
// argument (no allocation); a Scenario built in code and nil redact
// nothing.
func TestSecretNone(t *testing.T) {
	s := loadSecrets(t, minimal+"load: {repetitions: \"${REPS}\", defaults: {query: {k: \"${K:-dflt}\"}}}\n", map[string]string{"REPS": "5"})
	if s.HasSecrets() {
		t.Error("HasSecrets with only a default and a short value")
	}
	in := "/a?k=dflt&n=5"
	if n := testing.AllocsPerRun(100, func() { _ = s.Redact(in) }); n != 0 {
		t.Errorf("Redact allocates %v times without secrets", n)
	}
	var nilS *Scenario
	if nilS.Redact(in) != in || (&Scenario{}).Redact(in) != in {
		t.Error("a Scenario without Load redacts")
	}
}

// TestSecretLongestFirst: a secret holding another is replaced whole.
func TestSecretLongestFirst(t *testing.T) {
	t.Parallel()
	s := loadSecrets(t, minimal+"load: {defaults: {query: {a: \"${A}\", b: \"${B}\"}}}\n",
		map[string]string{"A": "abcd", "B": "abcdefgh"})
	if got := s.Redact("x abcdefgh abcd"); got != "x ${B} ${A}" {
		t.Errorf("got %q", got)
	}
}

// TestSecretTableFreed: the table does not keep a Scenario's secrets after
// it is gone, so fuzzing Load does not grow it.
func TestSecretTableFreed(t *testing.T) {
	count := func() (n int) {
		secretTable.Range(func(any, any) bool { n++; return true })
		return n
	}
	before := count()
	for range 50 {
		loadSecrets(t, minimal+"load: {defaults: {query: {a: \"${A}\"}}}\n", map[string]string{"A": "abcd"})
	}
	for deadline := time.Now().Add(5 * time.Second); count() > before && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(); n > before {
		t.Errorf("%d entries left of 50 collected scenarios", n-before)
	}
}
