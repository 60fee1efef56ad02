// Package scaffold is benchgate init: it looks at a project (Detect) and
// writes the two files a gate needs, a starter scenario (benchgate.yml)
// and the pull-request workflow that runs it
// (.github/workflows/benchgate.yml), for one of four kinds of project —
// a compose file at the root (compose targets of that file, through the
// setup action), a Dockerfile at the root (image targets and the
// container action), a Go module with benchmarks (a kind: gobench
// scenario through the setup action), anything else (command targets
// through the setup action).
//
// The files are templates (templates/, embedded), one pair per kind,
// written as a reader should find them: every field the scenario sets
// carries a comment saying what it does and its unit or choices, and the
// values init could only guess are marked FILL IN. Each guess is a value
// the scenario loader accepts, so the file checks (benchgate gate
// -dry-run) before it is edited; its tests load every generated scenario
// through runner.Load and hold every generated workflow to
// workflows.Lint, as the repository's own. Values that come from the
// project (its name, the Dockerfile's EXPOSE, the packages with
// benchmarks, the compose file's services and image) are made safe for where they land — a docker repository
// name, a quoted YAML string with no ${VAR} expansion, a script word —
// or left out.
//
// Init writes nothing at all unless it can write both: a file already
// there is refused, naming it, unless Options.Force, and both are checked
// before either is written. It writes only inside the directory it is
// given: a symbolic link on the way to either file (a linked .github or
// .github/workflows, or the file itself) is refused, naming it, -force or
// not, and the files are opened without following one.
package scaffold

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/benchgate/benchgate/internal/fsx"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
)

// The files Init writes, relative to the project's root, which is the
// repository's (the workflow must be in its .github/workflows).
const (
	ScenarioFile = "benchgate.yml"
	WorkflowFile = ".github/workflows/benchgate.yml"
)

// DefaultVersion is the benchgate release a workflow's setup action
// installs when init is not itself a release. Such a workflow says, above
// each of benchgate's actions, that the release it names is a guess, and
// what to write before benchgate's first release: init cannot name a
// commit for it, since a build records none that is sure to be on GitHub
// (go run records none, go install of a commit 12 digits of it, and a
// clone's commit may never have been pushed).
const DefaultVersion = "v1.0.0"

// Options are the settings of Init.
type Options struct {
	// Force overwrites files that are already there.
	Force bool
	// Version is the benchgate running init; a release (vX.Y.Z) is the
	// one the workflow installs, anything else means DefaultVersion.
	Version string
	// Out, when set, gets what was written and the next steps
	// (Result.Summary).
	Out io.Writer
}

// ExistsError refuses to overwrite files without Options.Force.
type ExistsError struct {
	Files []string // the paths already there, as Init would write them
}

func (e *ExistsError) Error() string {
	verb := "exists"
	if len(e.Files) > 1 {
		verb = "exist"
	}
	return fmt.Sprintf("%s already %s: nothing written (-force overwrites)", strings.Join(e.Files, " and "), verb)
}

// LinkError refuses to write through a symbolic link, which could lead
// out of the project's directory.
type LinkError struct {
	Path string // the link, as joined to the project's directory
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link: init writes only inside the project's directory, never through a link: nothing written", e.Path)
}

// noLinks refuses rel (a path under dir) when it, or a directory on the
// way to it, is a symbolic link. The parts that are not there yet are
// made by init, as directories and files, not links.
func noLinks(dir, rel string) error {
	path := dir
	for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/") {
		path = filepath.Join(path, part)
		fi, err := os.Lstat(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return &LinkError{Path: path}
		}
	}
	return nil
}

// File is one file to write: Path relative to the project's root.
type File struct {
	Path string
	Data []byte
}

// Result is what Init did.
type Result struct {
	Project *Project
	Written []string // the paths written, as joined to the project's directory
	// Released: init is a release (Options.Version), the one the
	// workflow names; otherwise the next steps say the workflow's
	// release is a guess.
	Released bool
}

// Init detects the project in dir and writes its scenario and workflow
// (Render), then the summary to opts.Out; or it refuses with an
// *ExistsError, having written nothing.
func Init(dir string, opts Options) (*Result, error) {
	p, err := Detect(dir)
	if err != nil {
		return nil, fmt.Errorf("the project's directory: %w", err)
	}
	files, err := Render(p, opts)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := noLinks(dir, f.Path); err != nil {
			return nil, err
		}
	}
	var exist []string
	for _, f := range files {
		path := filepath.Join(dir, f.Path)
		if _, err := os.Lstat(path); err == nil {
			exist = append(exist, path)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if len(exist) > 0 && !opts.Force {
		return nil, &ExistsError{Files: exist}
	}
	res := &Result{Project: p, Released: release.MatchString(opts.Version)}
	var made []string // directories this call created, outermost first
	for _, f := range files {
		path := filepath.Join(dir, f.Path)
		created, err := fsx.Mkdirs(filepath.Dir(path))
		made = append(made, created...)
		if err == nil {
			// Again, now that the directories are there: a link made
			// since the check is refused too.
			err = noLinks(dir, f.Path)
		}
		if err == nil {
			err = write(path, f.Data, opts.Force)
		}
		if err != nil {
			if !opts.Force {
				// All or nothing: what this call created goes too, the
				// directories it made (.github/workflows) included.
				for _, w := range res.Written {
					os.Remove(w)
				}
				fsx.Rmdirs(made)
			}
			return nil, err
		}
		res.Written = append(res.Written, path)
	}
	if opts.Out != nil {
		return res, res.Summary(opts.Out)
	}
	return res, nil
}

// write writes data to path, in a directory that exists. Without
// force, a file that appeared since the check is not overwritten
// (O_EXCL, which also refuses a link there, and O_NOFOLLOW); with it, the
// file is replaced whole by a rename, so a link there is replaced, not
// written through.
func write(path string, data []byte, force bool) error {
	if !force {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
		return err
	}
	return fsx.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Summary writes what Init wrote and the next steps.
func (r *Result) Summary(w io.Writer) error {
	p := r.Project
	var b strings.Builder
	fmt.Fprintf(&b, "benchgate init: %s\n", p.describe())
	for _, path := range r.Written {
		fmt.Fprintf(&b, "wrote %s\n", path)
	}
	scen := filepath.Join(p.Dir, ScenarioFile)
	switch p.Kind {
	case KindGoBench:
		fmt.Fprintf(&b, "next: look over the packages and the bench pattern in %s (%s found)\n", scen, plural(p.Benchmarks, "benchmark"))
	case KindCompose:
		c := p.Compose
		var what []string
		if !c.Sure {
			what = append(what, "the service")
		}
		if p.Port == 0 {
			what = append(what, "the container port")
		}
		what = append(what, "the health path and the request")
		fmt.Fprintf(&b, "next: fill in the lines marked FILL IN in %s: %s", scen, strings.Join(what, ", "))
		if !c.TagReady {
			fmt.Fprintf(&b, "; in %s: make service %s's image %s:${%s:-dev}", filepath.Join(p.Dir, c.File), c.Service, c.Image, c.TagVar)
		}
		b.WriteString("\n")
	case KindImage:
		what := "the health path and the request"
		if p.Port == 0 {
			what = "the container port, " + what
		}
		fmt.Fprintf(&b, "next: fill in the lines marked FILL IN in %s: %s\n", scen, what)
	default:
		where := "in " + scen + ": the command, the health path and the request"
		if p.Main == "" {
			where += "; in " + filepath.Join(p.Dir, WorkflowFile) + ": the build"
		}
		fmt.Fprintf(&b, "next: fill in the lines marked FILL IN %s\n", where)
	}
	fmt.Fprintf(&b, "      check it without running anything: benchgate gate -dry-run -scenario %s\n", scen)
	fmt.Fprintf(&b, "      then commit both files: the workflow gates every pull request\n")
	if !r.Released {
		names := "benchgate/benchgate/setup@v1 with version " + DefaultVersion
		if p.Kind == KindImage {
			names = "benchgate/benchgate@v1"
		}
		fmt.Fprintf(&b, "      this benchgate is not a release: the workflow's %s is a guess, which works once benchgate has that release; before its first, name a commit of benchgate's main instead, as the workflow's comment says (docs/action.md#before-the-first-release)\n", names)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describe says what kind of project p is, and what init made of it.
func (p *Project) describe() string {
	switch {
	case p.Kind == KindCompose:
		return p.Compose.describe() + ": compose targets, their images built by the workflow, run on the runner through the setup action"
	case p.Kind == KindImage:
		return "a Dockerfile: image targets, built by the workflow and measured by the container action"
	case p.Kind == KindGoBench:
		return "a Go module with benchmarks: a kind: gobench scenario, run on the runner through the setup action"
	case p.Main != "":
		return "a Go module without benchmarks: command targets, built from " + p.Main + " by the workflow and run on the runner through the setup action"
	}
	return "no Dockerfile, no Go module: command targets, built by the workflow (fill in how) and run on the runner through the setup action"
}

//go:embed templates/*.yml
var templates embed.FS

var tmpl = template.Must(template.New("").Delims("{%", "%}").Funcs(template.FuncMap{
	"q":    quote,
	"qx":   quoteExpanding,
	"list": list,
	"pad":  pad,
	"word": word,
}).ParseFS(templates, "templates/*.yml"))

var release = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// data is what the templates read.
type data struct {
	*Project
	Version    string // the release the setup action installs
	Released   bool   // init is that release: the workflow needs no note about it
	PortOr8080 int    // the container port, 8080 to fill in when none was found
	Found      string // the benchmarks found, in words
	Services   string // a compose file's services, listed
}

// Render returns p's scenario and workflow, in that order.
func Render(p *Project, opts Options) ([]File, error) {
	d := data{Project: p, Version: DefaultVersion, PortOr8080: p.Port}
	if release.MatchString(opts.Version) {
		d.Version, d.Released = opts.Version, true
	}
	if d.PortOr8080 == 0 {
		d.PortOr8080 = 8080
	}
	if p.Kind == KindGoBench {
		d.Found = fmt.Sprintf("%s in %s", plural(p.Benchmarks, "benchmark"), plural(len(p.Packages), "package"))
		if p.Packages[0] == "./..." {
			d.Found = fmt.Sprintf("%s in more than %s", plural(p.Benchmarks, "benchmark"), plural(MaxListed, "package"))
		}
		if p.Truncated {
			d.Found += " (it stopped looking at its bounds: there may be more)"
		}
	}
	if p.Kind == KindCompose {
		d.Services = p.Compose.servicesText(20)
	}
	var files []File
	for _, f := range []struct{ path, name string }{{ScenarioFile, "scenario-"}, {WorkflowFile, "workflow-"}} {
		var b bytes.Buffer
		if err := tmpl.ExecuteTemplate(&b, f.name+p.Kind+".yml", d); err != nil {
			return nil, err
		}
		files = append(files, File{Path: f.path, Data: b.Bytes()})
	}
	return files, nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// quote is s as a YAML double-quoted string that the scenario loader
// reads back as s: JSON's quoting (a subset of YAML's), with every $
// doubled so that no ${VAR} in a project's file is expanded.
func quote(s string) string {
	return quoteExpanding(strings.ReplaceAll(s, "$", "$$"))
}

// quoteExpanding is s as a YAML double-quoted string whose ${VAR} the
// loader expands: for the templates' own.
func quoteExpanding(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// bare is a word YAML reads as a string, written without quotes.
var bare = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// word is s as YAML: bare when YAML reads it back as the string s (not
// a boolean or null), else quoted.
func word(s string) string {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null":
		return quote(s)
	}
	if bare.MatchString(s) {
		return s
	}
	return quote(s)
}

// list is a YAML flow sequence of quoted strings.
func list(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// pad is s with spaces to width, and at least one: the column of a
// line's comment.
func pad(width int, s string) string {
	return s + strings.Repeat(" ", max(1, width-len(s)))
}
