package scenario

import (
	"strings"
	"testing"
)

// An error quotes a bounded part of what the file holds: a name of 100,000
// characters makes an error of a few KB that says how long the name was.
func TestErrorsQuoteBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("n", 100_000)
	base := "version: 1\nname: t\ntargets:\n  baseline: {url: \"http://127.0.0.1:1\"}\n  candidate: {url: \"http://127.0.0.1:2\"}\nclasses:\n  - name: A\n"
	for name, src := range map[string]string{
		"var":     base + "    request: GET /a/{{var \"" + long + "\"}}\nvariants: {x: {format: csv}}\n",
		"pick":    base + "    request: GET /a/{{pick \"" + long + "\"}}\ndata: {term: [a]}\n",
		"env":     base + "    request: GET /a/${" + long + "-x}\n",
		"field":   base + "    request: GET /a\n" + long + ": 1\n",
		"classes": base + "    request: GET /a\n  - name: M\n    mix: {" + long + ": 1}\n",
	} {
		t.Run(name, func(t *testing.T) {
			msg := loadErr(t, src, "", nil)
			if len(msg) > 16<<10 {
				t.Fatalf("the error is %d bytes long; want a few KB: %.300s", len(msg), msg)
			}
			if !strings.Contains(msg, "characters)") {
				t.Errorf("the error does not say it cut a name: %.500s", msg)
			}
		})
	}
}
