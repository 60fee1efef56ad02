// Package archtest holds the checks of what docs/architecture.md claims of
// the code's shape: that benchgate's imports are the arrows it draws and
// no others, that the metric registry is the only list of metrics, and
// that the command stays wiring.
package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/benchgate/benchgate"

// TestArchitecture compares the benchgate packages each non-test package
// imports (go list) with the table under "## Imports" of
// docs/architecture.md, both ways: an arrow the code has and the page does
// not is a new dependency nobody reviewed; one the page has and the code
// does not is a page gone stale.
func TestArchitecture(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH to list the packages")
	}
	root := moduleRoot(t)
	want := readTable(t, filepath.Join(root, "docs", "architecture.md"))
	got := listImports(t, root)
	for _, pkg := range sortedKeys(got) {
		w, ok := want[pkg]
		if !ok {
			t.Errorf("docs/architecture.md: package %s is missing from the Imports table (it imports %s)", pkg, orNone(got[pkg]))
			continue
		}
		for _, imp := range got[pkg] {
			if !slices.Contains(w, imp) {
				t.Errorf("%s imports %s: an arrow docs/architecture.md does not draw", pkg, imp)
			}
		}
		for _, imp := range w {
			if !slices.Contains(got[pkg], imp) {
				t.Errorf("docs/architecture.md: %s → %s, but %s does not import it", pkg, imp, pkg)
			}
		}
	}
	for _, pkg := range sortedKeys(want) {
		if _, ok := got[pkg]; !ok {
			t.Errorf("docs/architecture.md lists package %s, which has no non-test Go files", pkg)
		}
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// listImports maps each package of the module with non-test files to the
// module's packages it imports, relative to the module path, sorted.
func listImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,GoFiles", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	got := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			GoFiles    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if len(p.GoFiles) == 0 {
			continue
		}
		var imps []string
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				imps = append(imps, rel)
			}
		}
		slices.Sort(imps)
		got[strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")] = imps
	}
	return got
}

// readTable reads the rows "| `pkg` | `a` `b` |" of the table under the
// "## Imports" heading.
func readTable(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Imports"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cols := strings.Split(line, "|")
		if len(cols) != 4 {
			t.Fatalf("%s:%d: want | package | imports |, got %q", path, n, line)
		}
		pkg := strings.Trim(strings.TrimSpace(cols[1]), "`")
		if _, dup := want[pkg]; dup {
			t.Fatalf("%s:%d: package %s listed twice", path, n, pkg)
		}
		var imps []string
		for _, f := range strings.Fields(cols[2]) {
			imps = append(imps, strings.Trim(f, "`"))
		}
		want[pkg] = imps
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatalf("%s: no table under \"## Imports\"", path)
	}
	return want
}

func sortedKeys(m map[string][]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "nothing of benchgate"
	}
	return strings.Join(s, ", ")
}
