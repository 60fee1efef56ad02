package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/internal/dockertest"
	"github.com/benchgate/benchgate/internal/fakegithub"
	"github.com/benchgate/benchgate/internal/workflows"
	"github.com/benchgate/benchgate/profiler"
)

// The scripts in testdata/script drive the real CLI end to end: real child
// processes as targets, real HTTP load on loopback, exit codes checked.
// "benchgate" is this binary run as the CLI; "expect-exit N benchgate ARGS"
// runs the CLI and succeeds only when it exits with N, so scripts pin exact
// exit codes.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"benchgate": func() { os.Exit(mainExit(os.Args[1:])) },
		"expect-exit": func() {
			want, err := strconv.Atoi(os.Args[1])
			if err != nil || len(os.Args) < 3 || os.Args[2] != "benchgate" {
				fmt.Fprintln(os.Stderr, "usage: expect-exit CODE benchgate ARGS...")
				os.Exit(100)
			}
			if got := mainExit(os.Args[3:]); got != want {
				fmt.Fprintf(os.Stderr, "expect-exit: benchgate exited %d, want %d\n", got, want)
				os.Exit(101)
			}
			os.Exit(0)
		},
	})
}

func TestScripts(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	build := func(name, pkg string, ldflags string) string {
		out := filepath.Join(bin, name)
		args := []string{"build", "-o", out}
		if ldflags != "" {
			args = append(args, "-ldflags", ldflags)
		}
		cmd := exec.Command("go", append(args, pkg)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
		return out
	}
	demo := build("demo", "../../examples/demo", "")
	demoSlow := build("demo-slow", "../../examples/demo", "-X main.defaultSlow=search=5")
	faulty := build("faulty", "./testdata/faulty", "")
	grpcDemo := build("grpcdemo", "../../examples/grpcdemo", "")
	grpcDemoSlow := build("grpcdemo-slow", "../../examples/grpcdemo", "-X main.defaultSlow=Search=5")
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	events, err := filepath.Abs("testdata/events")
	if err != nil {
		t.Fatal(err)
	}

	// The docker scripts need the engine and two images FROM scratch around
	// the static demo; without an engine they skip, saying why.
	cli, dockerErr := dockertest.Connect()
	var imgs, grpcImgs dockertest.DemoImages
	if dockerErr == nil {
		defer cli.Close()
		imgs = dockertest.BuildDemoImages(t, cli, "benchgate-test/cli-demo", "../..")
		grpcImgs = dockertest.BuildGRPCDemoImages(t, cli, "benchgate-test/cli-grpcdemo", "../..")
	}
	// The compose-stack scripts need a Redis image too, made of this
	// machine's redis-server (.ci/run installs it); without one they skip.
	stackErr := dockerErr
	var stack dockertest.StackImages
	if stackErr == nil {
		if _, err := exec.LookPath("redis-server"); err != nil && os.Getenv("CI") != "true" {
			stackErr = errors.New("redis-server is not on PATH (apt-get install redis-server)")
		} else {
			stack = dockertest.BuildStackImages(t, cli, "benchgate-test/cli-stack", "../..")
		}
	}

	// perf records process targets when a cell is profiled; CI installs it.
	perfErr := profiler.PerfUsable()
	if perfErr != nil && os.Getenv("CI") == "true" {
		t.Fatalf("CI: %v", perfErr)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Condition: func(cond string) (bool, error) {
			if cond == "docker" {
				return dockerErr == nil, nil
			}
			if cond == "stack" {
				return stackErr == nil, nil
			}
			if cond == "perf" {
				return perfErr == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("DEMO_IMAGE", imgs.Normal)
			env.Setenv("DEMO_IMAGE_SLOW", imgs.Slow)
			env.Setenv("GRPCDEMO_IMAGE", grpcImgs.Normal)
			env.Setenv("GRPCDEMO_IMAGE_SLOW", grpcImgs.Slow)
			if dockerErr != nil {
				env.Setenv("DOCKER_SKIP", dockerErr.Error())
			}
			if stackErr != nil {
				env.Setenv("STACK_SKIP", stackErr.Error())
			}
			if perfErr != nil {
				env.Setenv("PERF_SKIP", perfErr.Error())
			}
			env.Setenv("STACK_REDIS", stack.Redis)
			env.Setenv("STACK_API", stack.API)
			env.Setenv("STACK_API_NPLUS1", stack.APISlow)
			env.Setenv("DEMO", demo)
			env.Setenv("DEMO_SLOW", demoSlow)
			env.Setenv("FAULTY", faulty)
			env.Setenv("GRPCDEMO", grpcDemo)
			env.Setenv("GRPCDEMO_SLOW", grpcDemoSlow)
			env.Setenv("NO_COLOR", "1")
			env.Setenv("REPO", repo)
			env.Setenv("EVENTS", events)
			env.Values[fakeGitHubKey{}] = &fakeGitHubSlot{t: env.T()}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"no-process": cmdNoProcess,
			"no-docker-leftovers": func(ts *testscript.TestScript, neg bool, args []string) {
				cmdNoDockerLeftovers(ts, neg, args, cli)
			},
			"docker-tag": func(ts *testscript.TestScript, neg bool, args []string) {
				cmdDockerTag(ts, neg, args, cli)
			},
			"signal-cmdline":     cmdSignalCmdline,
			"wait-file":          cmdWaitFile,
			"fake-github":        cmdFakeGitHub,
			"github-pr":          cmdGitHubPR,
			"github-comments":    cmdGitHubComments,
			"github-add-comment": cmdGitHubAddComment,
			"github-calls":       cmdGitHubCalls,
			"outputs-get":        cmdOutputsGet,
			"lint-workflow": func(ts *testscript.TestScript, neg bool, args []string) {
				cmdLintWorkflow(ts, neg, args, repo)
			},
		},
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") != "",
	})
}

// TestVersionIsLinked: the release links its version into main.version
// (scripts/release.sh: -ldflags "-X main.version=..."; scripts'
// TestReleaseImage holds the script to that), and that is the version
// "benchgate version" says. Not parallel: it sets the variable.
func TestVersionIsLinked(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v9.9.9-rc.1"
	var stdout, stderr strings.Builder
	err := run(context.Background(), []string{"version"}, &stdout, &stderr, func(string) string { return "" })
	if err != nil || stdout.String() != "benchgate v9.9.9-rc.1\n" || stderr.Len() > 0 {
		t.Errorf("benchgate version: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
}

// cmdNoProcess asserts that the process whose id is in each named file has
// gone: benchgate must leave nothing behind.
func cmdNoProcess(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: [!] no-process PIDFILE...")
	}
	if neg {
		// Each process is there: a leftover a test means to sweep.
		for _, f := range args {
			pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(f)))
			if err != nil {
				ts.Fatalf("%s: %v", f, err)
			}
			if err := syscall.Kill(pid, 0); err != nil {
				ts.Fatalf("process %d from %s is not there (kill 0: %v)", pid, f, err)
			}
		}
		return
	}
	for _, f := range args {
		pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(f)))
		if err != nil {
			ts.Fatalf("%s: %v", f, err)
		}
		err = syscall.Kill(pid, 0)
		if !errors.Is(err, syscall.ESRCH) {
			ts.Fatalf("process %d from %s is still there (kill 0: %v)", pid, f, err)
		}
	}
}

// cmdWaitFile waits until a file contains a text: scripts use it to act at a
// point of a run that does not depend on timing. The wait is bounded so a
// broken run fails the script instead of hanging it.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: wait-file FILE TEXT")
	}
	path := ts.MkAbs(args[0])
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), args[1]) {
			return
		}
	}
	ts.Fatalf("%s never contained %q", args[0], args[1])
}

// cmdNoDockerLeftovers asserts that nothing carrying the label of the run
// recorded in a results file is left on the engine: no container (running
// or not), no network, no volume and no cgroup of a stack.
func cmdNoDockerLeftovers(ts *testscript.TestScript, neg bool, args []string, cli *client.Client) {
	if neg || len(args) != 1 || cli == nil {
		ts.Fatalf("usage: no-docker-leftovers RESULTS (needs [docker])")
	}
	res, err := benchdata.Read(ts.MkAbs(args[0]))
	if err != nil {
		ts.Fatalf("%v", err)
	}
	if res.Env.RunID == "" {
		ts.Fatalf("%s records no run id", args[0])
	}
	f := filters.NewArgs(filters.Arg("label", "io.benchgate.run="+res.Env.RunID))
	ctx := context.Background()
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		ts.Fatalf("%v", err)
	}
	ns, err := cli.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		ts.Fatalf("%v", err)
	}
	for _, c := range cs {
		ts.Logf("left behind: container %s %v (%s)", c.ID[:12], c.Names, c.State)
	}
	for _, n := range ns {
		ts.Logf("left behind: network %s", n.Name)
	}
	vs, err := cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		ts.Fatalf("%v", err)
	}
	for _, v := range vs.Volumes {
		ts.Logf("left behind: volume %s", v.Name)
	}
	// A compose stack's own cgroup (its total memory) is named after the
	// run too, at the root of each hierarchy.
	var cgs []string
	for _, pattern := range []string{"/sys/fs/cgroup/benchgate-" + res.Env.RunID + "-*", "/sys/fs/cgroup/*/benchgate-" + res.Env.RunID + "-*"} {
		m, _ := filepath.Glob(pattern)
		cgs = append(cgs, m...)
	}
	for _, c := range cgs {
		ts.Logf("left behind: cgroup %s", c)
	}
	if len(cs)+len(ns)+len(vs.Volumes)+len(cgs) > 0 {
		ts.Fatalf("run %s left %d containers, %d networks, %d volumes and %d cgroups", res.Env.RunID, len(cs), len(ns), len(vs.Volumes), len(cgs))
	}
}

// cmdLintWorkflow holds each named workflow file to what the
// repository's own workflows are held to (workflows.Lint: actionlint with
// the repository's configuration, and workflows.Check), and fails on any
// finding.
func cmdLintWorkflow(ts *testscript.TestScript, neg bool, args []string, repo string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: lint-workflow FILE...")
	}
	for _, f := range args {
		path := ts.MkAbs(f)
		found, err := workflows.Lint(path, []byte(ts.ReadFile(f)), filepath.Join(repo, ".github", "actionlint.yaml"))
		if err != nil {
			ts.Fatalf("%v", err)
		}
		for _, fd := range found {
			ts.Logf("%s", fd)
		}
		if len(found) > 0 {
			ts.Fatalf("%s: %d findings", f, len(found))
		}
	}
}

// cmdSignalCmdline sends a signal (TERM or INT) to the processes whose
// command line contains a text: scripts use it to signal a benchgate they
// started in the background, which testscript's kill can only interrupt.
func cmdSignalCmdline(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal-cmdline TERM|INT TEXT")
	}
	sig := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT}[args[0]]
	if sig == 0 {
		ts.Fatalf("unknown signal %q", args[0])
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	n := 0
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), args[1]) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, sig) == nil {
			n++
		}
	}
	if n == 0 {
		ts.Fatalf("no process has %q in its command line", args[1])
	}
}

// The action scripts (action_*.txtar) run benchgate as the GitHub Action
// does, against an in-memory GitHub: "fake-github" starts one for the
// script, in this test process, and points GITHUB_API_URL at it, so the
// benchgate child process talks to it over loopback with the real client.

type fakeGitHubKey struct{}

// fakeGitHubSlot holds a script's test and, once fake-github started it,
// its fake GitHub.
type fakeGitHubSlot struct {
	t   testscript.T
	srv *fakegithub.Server
}

func scriptGitHub(ts *testscript.TestScript, cmd string) *fakegithub.Server {
	slot := ts.Value(fakeGitHubKey{}).(*fakeGitHubSlot)
	if slot.srv == nil {
		ts.Fatalf("%s: no fake GitHub: run fake-github first", cmd)
	}
	return slot.srv
}

// cmdFakeGitHub starts the script's fake GitHub for the repository
// $GITHUB_REPOSITORY, accepting the token $GITHUB_TOKEN as an Actions token
// (comments by github-actions[bot]), and sets GITHUB_API_URL to it. With
// -readonly every write is refused with 403 "Resource not accessible by
// integration", as for the token of a pull request from a fork. With -app
// SLUG the token is GitHub App SLUG's installation token instead: GET /user
// refuses it too, and its comments are SLUG[bot]'s.
func cmdFakeGitHub(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: fake-github [-readonly] [-app SLUG]"
	if neg {
		ts.Fatalf(usage)
	}
	var readOnly bool
	var user *fakegithub.User
	for ; len(args) > 0; args = args[1:] {
		switch {
		case args[0] == "-readonly":
			readOnly = true
		case args[0] == "-app" && len(args) > 1:
			bot := fakegithub.AppBot(args[1])
			user, args = &bot, args[1:]
		default:
			ts.Fatalf(usage)
		}
	}
	slot := ts.Value(fakeGitHubKey{}).(*fakeGitHubSlot)
	if slot.srv != nil {
		ts.Fatalf("fake-github: already started")
	}
	token := ts.Getenv("GITHUB_TOKEN")
	owner, repo, ok := strings.Cut(ts.Getenv("GITHUB_REPOSITORY"), "/")
	if token == "" || !ok {
		ts.Fatalf("fake-github: set GITHUB_TOKEN and GITHUB_REPOSITORY=owner/name first")
	}
	// testscript runs each script as a subtest whose T is a *testing.T: the
	// server is closed when the script's test ends.
	tb, ok := slot.t.(testing.TB)
	if !ok {
		ts.Fatalf("fake-github: the script's T (%T) is not a testing.TB", slot.t)
	}
	srv := fakegithub.New(tb, token, user)
	srv.SetRepo(owner, repo)
	srv.SetReadOnly(readOnly)
	slot.srv = srv
	ts.Setenv("GITHUB_API_URL", srv.URL)
}

// cmdGitHubPR makes pull request N exist on the fake with head SHA, or
// moves its head there.
func cmdGitHubPR(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: github-pr N SHA")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n <= 0 {
		ts.Fatalf("github-pr: %q is not a PR number", args[0])
	}
	scriptGitHub(ts, "github-pr").AddPR(n, args[1])
}

// cmdGitHubAddComment stores a comment on pull request PR as if LOGIN, an
// account of TYPE (User or Bot), had written it earlier, its body the
// script's file FILE.
func cmdGitHubAddComment(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: github-add-comment PR LOGIN TYPE FILE")
	}
	pr, err := strconv.Atoi(args[0])
	if err != nil || pr <= 0 {
		ts.Fatalf("github-add-comment: %q is not a PR number", args[0])
	}
	id := scriptGitHub(ts, "github-add-comment").AddComment(pr, fakegithub.User{Login: args[1], Type: args[2]}, ts.ReadFile(args[3]))
	fmt.Fprintf(ts.Stdout(), "%d\n", id)
}

// cmdGitHubComments asserts that pull request PR has exactly COUNT comments
// on the fake, and prints them to stdout (id, author, then the body) for
// stdout assertions.
func cmdGitHubComments(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: github-comments PR COUNT")
	}
	pr, err1 := strconv.Atoi(args[0])
	want, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil {
		ts.Fatalf("usage: github-comments PR COUNT")
	}
	w := ts.Stdout() // even for none: see cmdGitHubCalls
	cs := scriptGitHub(ts, "github-comments").Comments(pr)
	for _, c := range cs {
		fmt.Fprintf(w, "--- comment %d by %s (%s)\n%s\n", c.ID, c.User.Login, c.User.Type, c.Body)
	}
	if len(cs) != want {
		ts.Fatalf("PR #%d has %d comments, want %d", pr, len(cs), want)
	}
}

// cmdGitHubCalls prints the requests the fake has received, one
// "METHOD path?query" a line, to stdout.
func cmdGitHubCalls(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: github-calls")
	}
	// Stdout is taken even for an empty log: a builtin that never asks for
	// it leaves the previous command's stdout in place.
	w := ts.Stdout()
	for _, c := range scriptGitHub(ts, "github-calls").Calls() {
		fmt.Fprintln(w, c)
	}
}

// cmdOutputsGet prints the value of step output NAME from $GITHUB_OUTPUT,
// parsed as the runner does (name=value lines and name<<DELIMITER heredocs),
// followed by a newline. It fails if the file is malformed or sets NAME
// other than once; "! outputs-get NAME" asserts that NAME is not set.
func cmdOutputsGet(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: outputs-get NAME")
	}
	path := ts.Getenv("GITHUB_OUTPUT")
	if path == "" {
		ts.Fatalf("outputs-get: GITHUB_OUTPUT is not set")
	}
	outputs, err := parseOutputs(ts.ReadFile(path))
	if err != nil {
		ts.Fatalf("outputs-get: %s: %v", path, err)
	}
	values := outputs[args[0]]
	switch {
	case neg && len(values) == 0:
		return
	case neg:
		ts.Fatalf("output %s is set to %q", args[0], values)
	case len(values) != 1:
		ts.Fatalf("output %s is set %d times, want once: %q", args[0], len(values), values)
	}
	fmt.Fprintln(ts.Stdout(), values[0])
}

// parseOutputs reads a GITHUB_OUTPUT file into each name's values, in order.
func parseOutputs(text string) (map[string][]string, error) {
	out := map[string][]string{}
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] != "" {
		return nil, errors.New("does not end in a newline")
	}
	lines = lines[:len(lines)-1]
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			if name == "" || delim == "" {
				return nil, fmt.Errorf("line %d: %q is not name<<DELIMITER", i+1, line)
			}
			var value []string
			j := i + 1
			for ; j < len(lines) && lines[j] != delim; j++ {
				value = append(value, lines[j])
			}
			if j == len(lines) {
				return nil, fmt.Errorf("line %d: heredoc of %s never ends with %s", i+1, name, delim)
			}
			out[name] = append(out[name], strings.Join(value, "\n"))
			i = j
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("line %d: %q is neither name=value nor name<<DELIMITER", i+1, line)
		}
		out[name] = append(out[name], value)
	}
	return out, nil
}

// cmdDockerTag tags an image under another name for the script, as a
// workflow's build would, and removes the tag when the script ends. A
// name that is taken already is left alone: the script fails rather than
// move a tag it does not own.
func cmdDockerTag(ts *testscript.TestScript, neg bool, args []string, cli *client.Client) {
	if neg || len(args) != 2 || cli == nil {
		ts.Fatalf("usage: docker-tag IMAGE NAME (needs [docker])")
	}
	ctx := context.Background()
	if _, err := cli.ImageInspect(ctx, args[1]); err == nil {
		ts.Fatalf("docker-tag: %s exists already on this engine; not moving it", args[1])
	}
	if err := cli.ImageTag(ctx, args[0], args[1]); err != nil {
		ts.Fatalf("docker-tag: %v", err)
	}
	ts.Defer(func() {
		if _, err := cli.ImageRemove(context.Background(), args[1], image.RemoveOptions{}); err != nil {
			ts.Logf("removing the tag %s: %v", args[1], err)
		}
	})
}
