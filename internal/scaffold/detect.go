package scaffold

import (
	"bufio"
	"bytes"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The bounds of the search for benchmarks: a project's tree is walked
// this deep below its root, at most this many entries looked at and this
// many _test.go files read (their first MaxTestFileBytes), so init
// answers at once in any tree, a monorepo's or a node_modules' included.
const (
	MaxDepth         = 6
	MaxEntries       = 20000
	MaxTestFiles     = 2000
	MaxTestFileBytes = 1 << 20
	// MaxListed is how many packages with benchmarks the scenario lists
	// by name; more are ./... .
	MaxListed = 8
)

// Kinds of project, and of what init writes for each.
const (
	// KindCompose: a compose file at the root (ComposeFiles). Compose
	// targets of that file, their images built by the workflow, run on
	// the runner through the setup action.
	KindCompose = "compose"
	// KindImage: a Dockerfile at the root. Image targets, built by the
	// workflow, measured by the container action.
	KindImage = "image"
	// KindGoBench: a Go module with benchmarks. A kind: gobench scenario,
	// run on the runner through the setup action.
	KindGoBench = "gobench"
	// KindProcess: anything else. Command targets the workflow builds,
	// run on the runner through the setup action.
	KindProcess = "process"
)

// Project is what Detect found in a project's directory.
type Project struct {
	Dir  string // the project's root, as given
	Kind string // KindCompose, KindImage, KindGoBench or KindProcess
	// Name is the directory's base name made a docker repository name
	// (lower case letters, digits, '.', '_', '-'): the scenario's name and
	// the images' repository.
	Name string
	// Port is the container port of the Dockerfile's first EXPOSE, or of
	// a compose project's load service (Compose.PortFrom says where from);
	// 0 when none was found.
	Port int
	// Compose is what was read of a compose project's file; nil for the
	// other kinds.
	Compose *Compose
	// Packages are the packages with benchmarks, relative to the module
	// root ("." for the root, "./internal/codec"), sorted; at most MaxListed,
	// otherwise ["./..."]. Benchmarks counts the benchmarks found.
	Packages   []string
	Benchmarks int
	// Go says there is a go.mod at the root; Main is then the main package
	// a process project's workflow builds ("." or "./cmd/NAME"), "" when
	// none was found.
	Go   bool
	Main string
	// BaseRef is what a gobench scenario compares against when no
	// workflow says: the remote's default branch as the clone recorded it
	// (origin/HEAD), else origin/main.
	BaseRef string
	// Truncated says the search for benchmarks stopped at a bound.
	Truncated bool
}

// Detect says what kind of project dir holds: a compose file at its root
// wins (the first of ComposeFiles, read as readCompose says: bounded, and
// never an error), then a Dockerfile at its root, then a go.mod at its
// root with a func Benchmark in some _test.go of the module (vendor,
// testdata, hidden and _ directories and nested modules skipped, the
// search bounded as the constants say), then anything else. It reads
// files and changes nothing.
func Detect(dir string) (*Project, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, errors.New(dir + " is not a directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	p := &Project{Dir: dir, Kind: KindProcess, Name: repoName(filepath.Base(abs)), BaseRef: baseRef(dir)}
	if name := findCompose(dir); name != "" {
		p.Kind = KindCompose
		readCompose(p, name)
		return p, nil
	}
	if regular(filepath.Join(dir, "Dockerfile")) {
		p.Kind = KindImage
		p.Port = exposed(filepath.Join(dir, "Dockerfile"))
		return p, nil
	}
	if !regular(filepath.Join(dir, "go.mod")) {
		return p, nil
	}
	p.Go = true
	pkgs, n, truncated := benchmarks(dir)
	p.Truncated = truncated
	if n == 0 {
		p.Main = mainPackage(dir)
		return p, nil
	}
	p.Kind, p.Benchmarks, p.Packages = KindGoBench, n, pkgs
	if len(pkgs) > MaxListed {
		p.Packages = []string{"./..."}
	}
	return p, nil
}

// regular says path is a regular file (a symlink to one counts).
func regular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// repoName makes s a docker repository name: lower case, runs of other
// characters as one '-', and "app" when nothing is left.
func repoName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || (r == '.' || r == '_') && b.Len() > 0 {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.TrimRight(b.String(), "-._")
	if name == "" {
		return "app"
	}
	return name
}

var exposeRE = regexp.MustCompile(`(?i)^\s*EXPOSE\s+([0-9]+)(/(tcp|udp))?(\s|$)`)

// exposed is the first port a Dockerfile EXPOSEs as a number, or 0 (and
// 0 when file is not a regular file).
func exposed(file string) int {
	if !regular(file) {
		return 0
	}
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	return exposedIn(f)
}

// exposedIn is the first port a Dockerfile's text EXPOSEs (its first
// MaxTestFileBytes), or 0.
func exposedIn(r io.Reader) int {
	sc := bufio.NewScanner(io.LimitReader(r, MaxTestFileBytes))
	for sc.Scan() {
		if m := exposeRE.FindStringSubmatch(sc.Text()); m != nil {
			if port, err := strconv.Atoi(m[1]); err == nil && port >= 1 && port <= 65535 {
				return port
			}
		}
	}
	return 0
}

// baseRef is origin's default branch as the clone in dir recorded it
// (.git/refs/remotes/origin/HEAD), else origin/main.
func baseRef(dir string) string {
	file := filepath.Join(dir, ".git", "refs", "remotes", "origin", "HEAD")
	if !regular(file) { // a FIFO would block the read
		return "origin/main"
	}
	if b, err := readHead(file, 4096); err == nil {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: refs/remotes/"); ok && validRef(ref) {
			return ref
		}
	}
	return "origin/main"
}

var refRE = regexp.MustCompile(`^origin/[A-Za-z0-9._/-]+$`)

func validRef(ref string) bool { return refRE.MatchString(ref) && !strings.Contains(ref, "..") }

// benchRE matches the declaration of a benchmark as go test finds one:
// Benchmark alone or followed by a character that is not lower case.
var benchRE = regexp.MustCompile(`(?m)^func Benchmark([^a-z(\s][\p{L}\p{N}_]*)?\(`)

// benchmarks walks the module at root, bounded, and returns the packages
// holding benchmarks (as go list patterns relative to the root, sorted),
// how many benchmarks they hold, and whether a bound stopped the walk.
func benchmarks(root string) (pkgs []string, n int, truncated bool) {
	found := map[string]bool{}
	entries, files := 0, 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return fs.SkipDir // unreadable: not ours to fail on
			}
			return err
		}
		if entries++; entries > MaxEntries {
			truncated = true
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if p == root {
				return nil
			}
			name := d.Name()
			if name == "vendor" || name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return fs.SkipDir
			}
			if strings.Count(rel, string(filepath.Separator))+1 > MaxDepth {
				truncated = true
				return fs.SkipDir
			}
			if regular(filepath.Join(p, "go.mod")) {
				return fs.SkipDir // another module: not this one's packages
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		if files++; files > MaxTestFiles {
			truncated = true
			return fs.SkipAll
		}
		if c := countBenchmarks(p); c > 0 {
			n += c
			found[pattern(filepath.Dir(rel))] = true
		}
		return nil
	})
	if err != nil {
		return nil, 0, true
	}
	for k := range found {
		pkgs = append(pkgs, k)
	}
	slices.Sort(pkgs)
	return pkgs, n, truncated
}

// countBenchmarks counts the benchmark declarations in a test file's first
// MaxTestFileBytes.
func countBenchmarks(file string) int {
	b, err := readHead(file, MaxTestFileBytes)
	if err != nil || !bytes.Contains(b, []byte("func Benchmark")) {
		return 0
	}
	return len(benchRE.FindAll(b, -1))
}

// pattern is a directory relative to the module root as a go list
// pattern: "." or "./a/b".
func pattern(rel string) string {
	rel = filepath.ToSlash(rel)
	if rel == "." {
		return "."
	}
	return "./" + path.Clean(rel)
}

// mainPackage is the main package of the module at root that a service
// would be built from: the root's, else the first of cmd/* in name order;
// "" when neither is one.
func mainPackage(root string) string {
	if isMain(root) {
		return "."
	}
	entries, err := os.ReadDir(filepath.Join(root, "cmd"))
	if err != nil {
		return ""
	}
	for i, e := range entries {
		if i == MaxListed*8 {
			break
		}
		if e.IsDir() && plainName.MatchString(e.Name()) && isMain(filepath.Join(root, "cmd", e.Name())) {
			return "./cmd/" + e.Name()
		}
	}
	return ""
}

// plainName is a directory name a workflow's script may hold unquoted.
var plainName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// isMain says a non-test Go file of dir declares package main (the first
// few files are read, their package clause only).
func isMain(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	read := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || !e.Type().IsRegular() {
			continue
		}
		if read++; read > 16 {
			return false
		}
		if head, err := readHead(filepath.Join(dir, name), 64<<10); err == nil {
			// The clause comes first: a file cut after it parses to it.
			f, err := parser.ParseFile(token.NewFileSet(), name, head, parser.PackageClauseOnly)
			if err == nil && f.Name.Name == "main" {
				return true
			}
		}
	}
	return false
}

// readHead reads the first max bytes of file.
func readHead(file string, max int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}
