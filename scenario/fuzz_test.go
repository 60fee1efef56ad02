package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/load"
)

// maxFuzzInput keeps each fuzz input small enough that a run of the
// fuzzer tries many (the YAML parser allocates some 200 bytes a byte, and
// more under the fuzzer's instrumentation): the bounds themselves are
// tested on inputs of their full size in limits_test.go, the seeds here
// are the same shapes made just large enough to pass the bounds.
const maxFuzzInput = 16 << 10

// loadSeeds are the reproductions of issue 13 and the shapes around them.
var loadSeeds = []string{
	minimal,
	strings.Repeat("[", 8_000),
	strings.Repeat("{", 8_000),
	strings.Repeat("- ", 4_000) + "x",
	"a: " + strings.Repeat("[a, ", 2_000),
	"variants:\n" + flowKeysBlock(MaxMappingKeys+1),
	minimal + "load: {concurrency: [1000000000]}\n",
	minimal + "load: {duration: 1000000h}\n",
	minimal + "load: {duration: 1ns, repetitions: 1000000000}\n",
	minimal + "load: {max_repetitions: 2000000000, settle: 24h, slice: 1ns}\n",
	withBody("{{range 2000000000}}x{{end}}"),
	withBody("{{range 100}}{{range 100}}{{range 100}}{{end}}{{end}}{{end}}"),
	withBody(`{{$a := "xx"}}{{range 40}}{{$a = printf "%s%s" $a $a}}{{end}}{{$a}}`),
	withBody(`{{define "a"}}{{template "a"}}{{end}}{{template "a"}}`),
	withBody(`{{printf "%99999999d" 1}}`),
	minimal + "pins: [{cpus: \"0-3\", generator_cpus: \"65535\"}, {memory: 1GiB}]\n",
	minimal + "data: {z: {file: /dev/zero}}\n",
	minimal + "data: {z: {file: ../../../../etc/passwd}}\n",
	minimal + "data: {env: {file: /proc/self/environ}}\n",
	minimal + "x0: &a [a, a, a, a, a, a, a, a, a]\nx1: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nx2: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nx3: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
	"a: |\n  [[[[\nb: \"[[[\n  {{{\"\nc: '''[' # [[[\n",
	"version: 1\nname: g\nkind: gobench\ntargets: {baseline: {ref: a}, candidate: {ref: b}}\nload: {repetitions: 5000}\n",
	strings.Replace(minimal, "request: GET /a", "grpc: {method: a.B/C, message: '{\"q\": {{pick \"t\" | json}}}'}", 1) + "data: {t: [x]}\ngrpc: {connections: 40000}\n",
}

// flowKeysBlock is a block mapping of n short keys.
func flowKeysBlock(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " %x: 1\n", i)
	}
	return b.String()
}

// FuzzLoad: Load and CheckCPUs never panic, and their error is an
// *ErrorList or the plain error of a file that cannot be opened.
func FuzzLoad(f *testing.F) {
	for _, s := range loadSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > maxFuzzInput {
			return
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "s.yml")
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(path, "", mapEnv(map[string]string{"TAG": "x"}))
		if err != nil {
			var el *ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("err = %v (%T), want an *ErrorList", err, err)
			}
			if len(el.Errors) == 0 {
				t.Fatalf("an empty ErrorList")
			}
			return
		}
		// What loads has its pins checked with the same kind of error.
		if err := s.CheckCPUs([]int{0}); err != nil {
			var el *ErrorList
			if !errors.As(err, &el) || len(el.Errors) == 0 {
				t.Fatalf("CheckCPUs: %v (%T), want a non-empty *ErrorList", err, err)
			}
		}
		// What loads can be streamed.
		for _, v := range s.Variants {
			for _, c := range s.Classes {
				st := s.Stream(v.Name, c.Name, 1, 0, 0)
				for range 3 {
					checkRequest(t, st.Next())
				}
			}
		}
	})
}

func checkRequest(t *testing.T, r *load.Request) {
	t.Helper()
	n := len(r.Target) + len(r.Body)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v)
		}
	}
	// The query is escaped after it is rendered: up to 3 bytes a byte.
	if len(r.Body) > MaxTemplateOutput || n > 3*MaxRequestSize {
		t.Fatalf("a request of %d bytes, body %d", n, len(r.Body))
	}
}

// templateSeeds are templates for FuzzTemplate.
var templateSeeds = []string{
	"/a",
	`{{pick "t"}}-{{int 1 1000}}`,
	`{{var "v"}}{{.v}}`,
	`{{pick "t" | json}}`,
	`{{range 2000000000}}x{{end}}`,
	`{{range 100}}{{range 100}}{{range 100}}{{end}}{{end}}{{end}}`,
	`{{range $k, $v := .}}{{$k}}={{$v}}{{end}}`,
	`{{range 3}}{{range .}}{{.}}{{end}}{{end}}`,
	`{{$a := "xx"}}{{range 40}}{{$a = printf "%s%s" $a $a}}{{end}}{{$a}}`,
	`{{define "a"}}{{template "a"}}{{end}}{{template "a"}}`,
	`{{define "a"}}[{{.}}]{{end}}{{range 5}}{{template "a" .}}{{end}}`,
	`{{printf "%99999999d" 1}}`,
	`{{printf "%*d" 5 1}}`,
	`{{printf "%1000v" .}}`,
	`{{html (printf "%1000s" "<")}}{{js "<>"}}{{urlquery "a b"}}{{print 1 2}}{{println 3}}`,
	`{{if eq (int 1 2) 1}}{{range 1200}}` + strings.Repeat("y", 1000) + `{{end}}{{end}}`,
	`{{range 1000}}{{json (pick "t")}}{{end}}`,
	`{{with .v}}{{range .}}{{end}}{{end}}`,
	`{{len (slice (printf "%1000s" "") 1 5)}}{{index . "v"}}`,
	`{{range 5}}{{break}}{{end}}{{range 5}}{{continue}}{{end}}`,
}

// FuzzTemplate: a template in a request body either loads or is refused;
// what loads renders within MaxTemplateOutput, and never panics.
func FuzzTemplate(f *testing.F) {
	for _, s := range templateSeeds {
		f.Add(s, "alpha")
	}
	f.Fuzz(func(t *testing.T, tmpl, item string) {
		if len(tmpl)+len(item) > maxFuzzInput || item == "" || strings.ContainsAny(item, "\n\r") {
			return
		}
		src := strings.Replace(minimal, "request: GET /a",
			"request: {method: POST, path: /a, body: "+strconv.Quote(tmpl)+", headers: {X-T: "+strconv.Quote(tmpl)+"}}", 1) +
			"data: {t: [" + strconv.Quote(item) + ", b]}\nvariants: {one: {v: " + strconv.Quote(item) + "}, two: {v: x}}\n"
		path := filepath.Join(t.TempDir(), "s.yml")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(path, "", mapEnv(nil))
		if err != nil {
			var el *ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("err = %v (%T), want an *ErrorList", err, err)
			}
			return
		}
		for _, v := range []string{"one", "two"} {
			st := s.Stream(v, "A", 1, 0, 0)
			for range 4 {
				checkRequest(t, st.Next())
			}
		}
	})
}
