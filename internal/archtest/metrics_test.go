package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// metricConsts are the names of gate's metric constants.
var metricConsts = map[string]bool{
	"RPS": true, "Mean": true, "P50": true, "P90": true, "P95": true, "P99": true, "P999": true,
	"ErrorRate": true, "CPUPerReq": true, "MemMean": true, "MemPeak": true,
}

// listsAllowed are the lists of metrics outside gate.Registry that are a
// choice of their own, by file and what they are for.
var listsAllowed = map[string]string{
	"report/model.go":      "the gRPC verdict table's latency columns, the reference report's",
	"benchdata/results.go": "the fields in which results formats 1-3 held a rung's measurements (v3Measures), read once to upgrade them",
}

// TestOneListOfMetrics: gate.Registry is the one list of metrics. No
// non-test file outside gate writes a list (a slice, an array or a map
// literal) naming three or more of gate's metric constants, but for the choices in listsAllowed, so a new metric is
// never a hunt for the lists to add it to (docs/architecture.md, "A new
// metric").
func TestOneListOfMetrics(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "gate" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			switch cl.Type.(type) {
			case *ast.ArrayType, *ast.MapType:
			default:
				return true // a struct's fields: one value each
			}
			named := map[string]bool{}
			ast.Inspect(cl, func(n ast.Node) bool {
				if s, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := s.X.(*ast.Ident); ok && x.Name == "gate" && metricConsts[s.Sel.Name] {
						named[s.Sel.Name] = true
					}
				}
				return true
			})
			if len(named) >= 3 {
				if _, ok := listsAllowed[filepath.ToSlash(rel)]; !ok {
					t.Errorf("%s: a list of %d metrics outside gate.Registry: read the registry (gate.Registry, gate.Lookup, gate.Measured), or say why in listsAllowed", rel, len(named))
				}
				seen[filepath.ToSlash(rel)] = true
				return false
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for f := range listsAllowed {
		if !seen[f] {
			t.Errorf("listsAllowed names %s, which has no list of metrics any more: take it out", f)
		}
	}
}
