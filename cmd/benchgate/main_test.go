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
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/internal/dockertest"
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
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}

	// The docker scripts need the engine and two images FROM scratch around
	// the static demo; without an engine they skip, saying why.
	cli, dockerErr := dockertest.Connect()
	var imgs dockertest.DemoImages
	if dockerErr == nil {
		defer cli.Close()
		imgs = dockertest.BuildDemoImages(t, cli, "benchgate-test/cli-demo", "../..")
	}

	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Condition: func(cond string) (bool, error) {
			if cond == "docker" {
				return dockerErr == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("DEMO_IMAGE", imgs.Normal)
			env.Setenv("DEMO_IMAGE_SLOW", imgs.Slow)
			if dockerErr != nil {
				env.Setenv("DOCKER_SKIP", dockerErr.Error())
			}
			env.Setenv("DEMO", demo)
			env.Setenv("DEMO_SLOW", demoSlow)
			env.Setenv("FAULTY", faulty)
			env.Setenv("NO_COLOR", "1")
			env.Setenv("REPO", repo)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"no-process": cmdNoProcess,
			"no-docker-leftovers": func(ts *testscript.TestScript, neg bool, args []string) {
				cmdNoDockerLeftovers(ts, neg, args, cli)
			},
			"signal-cmdline": cmdSignalCmdline,
			"wait-file":      cmdWaitFile,
		},
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") != "",
	})
}

// cmdNoProcess asserts that the process whose id is in each named file has
// gone: benchgate must leave nothing behind.
func cmdNoProcess(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: no-process PIDFILE...")
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
// or not) and no network.
func cmdNoDockerLeftovers(ts *testscript.TestScript, neg bool, args []string, cli *client.Client) {
	if neg || len(args) != 1 || cli == nil {
		ts.Fatalf("usage: no-docker-leftovers RESULTS (needs [docker])")
	}
	res, err := baselines.Read(ts.MkAbs(args[0]))
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
	if len(cs)+len(ns) > 0 {
		ts.Fatalf("run %s left %d containers and %d networks", res.Env.RunID, len(cs), len(ns))
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
