package importers

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the table of formats in docs/importers.md")

// TestFormats: every entry of the table is a load tool's or a suite's,
// with a name of its own, what it reads, what its file is called and,
// for a suite, what names its benchmarks; Names lists them all.
func TestFormats(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, f := range formats {
		if seen[f.name] || f.name == "" || f.reads == "" || f.what == "" || (f.load == nil) == (f.suite == nil) || (f.suite != nil) != (f.cells != "") {
			t.Errorf("%s: a name once, what it reads and what its file is called, a parser of one kind, and a suite's cells", f.name)
		}
		seen[f.name] = true
		if g := formatNamed(f.name); g == nil || g.name != f.name {
			t.Errorf("formatNamed(%s) = %v", f.name, g)
		}
	}
	if names := Names(); len(names) != len(formats) || !slices.Equal(names, slices.Concat(Tools, Formats)) {
		t.Errorf("Names %v, Tools %v, Formats %v", names, Tools, Formats)
	}
	help := Help()
	for _, name := range Names() {
		if !strings.Contains(help, "  "+name+" ") {
			t.Errorf("Help does not list %s:\n%s", name, help)
		}
	}
}

// formatsTable is the Markdown table of formats docs/importers.md shows.
func formatsTable() string {
	var b strings.Builder
	b.WriteString("| `-import` | reads | a cell is |\n| --- | --- | --- |\n")
	for _, f := range formats {
		cell := "the report's one cell (`-class`, default `load`)"
		if f.suite != nil {
			cell = "a benchmark, named by its " + f.cells
		}
		b.WriteString("| `" + f.name + "` | " + strings.ReplaceAll(f.reads, "|", `\|`) + " | " + cell + " |\n")
	}
	return b.String()
}

// TestFormatsTable: docs/importers.md lists every entry of the table of
// formats, and nothing else, as the table says (go test -run
// TestFormatsTable -update rewrites it); its table of which formats give
// samples names every suite format.
func TestFormatsTable(t *testing.T) {
	const path = "../docs/importers.md"
	const begin, end = "<!-- formats table: generated from the importers' table, checked by TestFormatsTable -->\n", "<!-- end formats table -->"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if i := strings.Index(doc, "### Which formats give samples"); i < 0 {
		t.Errorf("%s: no section \"Which formats give samples\"", path)
	} else {
		section, _, _ := strings.Cut(doc[i+1:], "\n#")
		for _, name := range Formats {
			if !strings.Contains(section, "`"+name+"`") {
				t.Errorf("%s: \"Which formats give samples\" does not name %s", path, name)
			}
		}
	}
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no table of formats between %q and %q", path, begin, end)
	}
	got, want := doc[i+len(begin):j], formatsTable()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the table of formats differs from the importers' table (go test ./importers -run TestFormatsTable -update):\n%s\nwant:\n%s", path, got, want)
}
