package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/scenario"
)

// TestEngineOf: the load engine for every kind of load scenario, the
// gobench engine for a gobench one.
func TestEngineOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind string
		want engine
	}{
		{"", loadEngine{}},
		{scenario.KindHTTP, loadEngine{}},
		{scenario.KindGRPC, loadEngine{}},
		{scenario.KindGoBench, goBenchEngine{}},
	} {
		if got := engineOf(&scenario.Scenario{Kind: tc.kind}); got != tc.want {
			t.Errorf("engineOf(kind %q) = %T, want %T", tc.kind, got, tc.want)
		}
	}
}

// TestOneChoiceOfEngine: the engine is chosen once. Outside engineOf, the
// package's sources name KindGoBench only as the Kind a gobench run
// stamps into what it records (a results' or a target's Kind: data, not
// a choice), and only the engine calls RunGoBench.
func TestOneChoiceOfEngine(t *testing.T) {
	t.Parallel()
	for _, bad := range engineChoices(t, ".") {
		t.Errorf("%s: the engine is chosen once, by engineOf (engine.go)", bad)
	}
}

// engineChoices lists where the non-test Go files in dir name KindGoBench
// other than in engineOf or as the value of a Kind field, or RunGoBench
// other than in engine.go and its own declaration.
func engineChoices(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		// The identifiers that are the value of a Kind field, data.
		stamped := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if kv, ok := n.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Kind" {
					if s, ok := kv.Value.(*ast.SelectorExpr); ok {
						stamped[s.Sel] = true
					}
				}
			}
			return true
		})
		for _, d := range f.Decls {
			fn, _ := d.(*ast.FuncDecl)
			if fn != nil && fn.Recv == nil && fn.Name.Name == "engineOf" {
				continue
			}
			ast.Inspect(d, func(n ast.Node) bool {
				id, ok := n.(*ast.Ident)
				if !ok {
					return true
				}
				switch {
				case id.Name == "KindGoBench" && !stamped[id]:
				case id.Name == "RunGoBench" && filepath.Base(file) != "engine.go" && (fn == nil || id != fn.Name):
				default:
					return true
				}
				bad = append(bad, fset.Position(id.Pos()).String()+": "+id.Name)
				return true
			})
		}
	}
	return bad
}
