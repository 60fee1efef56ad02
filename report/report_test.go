package report

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchgate/benchgate/gate"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (run go test -update after checking the change)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	inputs := map[string]func() Input{
		"full": fullInput, "cancelled": cancelledInput, "pins": pinsInput, "pins_cancelled": pinsCancelledInput,
		"correctness": correctnessInput, "grpc": grpcInput,
		"paired_warn": func() Input { return slicedInput(gate.UnresolvedWarn) },
		"paired_fail": func() Input { return slicedInput(gate.UnresolvedFail) },
		"adaptive":    adaptiveInput,
	}
	for name, input := range inputs {
		for _, f := range []struct {
			ext    string
			render func(io.Writer) error
		}{
			{"md", func(w io.Writer) error { return Markdown(w, input()) }},
			{"txt", func(w io.Writer) error { return Terminal(w, input(), TerminalOptions{}) }},
			{"json", func(w io.Writer) error { return JSON(w, input()) }},
		} {
			t.Run(name+"."+f.ext, func(t *testing.T) {
				var buf bytes.Buffer
				if err := f.render(&buf); err != nil {
					t.Fatal(err)
				}
				golden(t, name+"."+f.ext, buf.Bytes())
				// Rendering twice gives the same bytes: no map order, no clock.
				var again bytes.Buffer
				if err := f.render(&again); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf.Bytes(), again.Bytes()) {
					t.Error("two renderings differ")
				}
			})
		}
	}
}
