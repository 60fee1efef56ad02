package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/targettest"
)

func TestMain(m *testing.M) { os.Exit(targettest.Main(m)) }

func get(t *testing.T, url string) (int, string, error) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestTargetStartStop(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	tg := New(targettest.ServerSpec("baseline", "-spawn"), target.Options{OutDir: out})
	if err := tg.Build(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	pgid := tg.pgid
	if a := tg.cmd.SysProcAttr; a == nil || !a.Setpgid || a.Pdeathsig != syscall.SIGKILL {
		t.Errorf("SysProcAttr %+v, want a group of its own and SIGKILL on our death", a)
	}
	code, body, err := get(t, tg.URL()+"/x")
	if err != nil || code != 200 || body != "hello" {
		t.Errorf("GET /x: %d %q %v", code, body, err)
	}
	if err := tg.Died(); err != nil {
		t.Errorf("Died on a running target: %v", err)
	}
	if err := tg.Stop(); err != nil {
		t.Fatal(err)
	}
	targettest.GroupGone(t, pgid)
	if err := tg.Died(); err != nil {
		t.Errorf("a stopped target counts as died: %v", err)
	}
	if err := tg.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	port := strings.TrimPrefix(tg.URL(), "http://127.0.0.1:")
	log, err := os.ReadFile(filepath.Join(out, "baseline.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("listening on 127.0.0.1:%s port env %s\n", port, port)
	if !strings.Contains(string(log), want) {
		t.Errorf("log lacks %q ({port} in argv and env):\n%s", want, log)
	}
	info := tg.Info(t.Context(), func(string) string { return "" })
	if info.Kind != "command" || info.Name != "baseline" || info.URL != tg.URL() ||
		info.Spec != targettest.Server()+" -addr 127.0.0.1:{port} -spawn" {
		t.Errorf("Info = %+v", info)
	}
}

func TestTargetStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	tg := New(targettest.ServerSpec("candidate", "-ignore-term", "-spawn"), target.Options{OutDir: t.TempDir()})
	tg.grace = 100 * time.Millisecond
	if err := tg.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	pgid := tg.pgid
	tg.Stop()
	targettest.GroupGone(t, pgid)
	if !strings.Contains(tg.waitErr.Error(), "killed") {
		t.Errorf("exit %v, want killed by SIGKILL", tg.waitErr)
	}
}

func TestTargetHealthFailure(t *testing.T) {
	t.Parallel()
	spec := targettest.ServerSpec("candidate", "-fail-health")
	// The health check never passes, so the test ends when this runs out;
	// it is long enough that a loaded machine's server has started and
	// answered 503 by then (a short one saw only "connection refused").
	spec.StartupTimeout = 10 * time.Second
	tg := New(spec, target.Options{OutDir: t.TempDir()})
	err := tg.Start(t.Context())
	te := targettest.AsTargetError(t, err, target.PhaseHealth)
	targettest.GroupGone(t, tg.pgid)
	if te.Target != "candidate" || !slices.Contains(te.Output, "health check failing on purpose") {
		t.Errorf("error lacks target or output tail: %+v", te)
	}
	if !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "| health check failing on purpose") {
		t.Errorf("message lacks the status or the tail:\n%v", err)
	}
}

func TestTargetExitsBeforeHealthy(t *testing.T) {
	t.Parallel()
	tg := New(targettest.ServerSpec("baseline", "-exit-now"), target.Options{OutDir: t.TempDir()})
	err := tg.Start(t.Context())
	te := targettest.AsTargetError(t, err, target.PhaseStart)
	targettest.GroupGone(t, tg.pgid)
	if len(te.Output) != target.ServiceTailLines {
		t.Errorf("tail of %d lines, want %d", len(te.Output), target.ServiceTailLines)
	}
	if last := te.Output[len(te.Output)-1]; last != "fatal: cannot start" {
		t.Errorf("last line %q", last)
	}
	if !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("message lacks the exit status: %v", err)
	}
}

func TestTargetDeathDetected(t *testing.T) {
	t.Parallel()
	tg := New(targettest.ServerSpec("candidate", "-exit-after", "3"), target.Options{OutDir: t.TempDir()})
	if err := tg.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer tg.Stop()
	for i := 0; i < 4; i++ {
		get(t, tg.URL()+"/")
	}
	<-tg.Done()
	te := targettest.AsTargetError(t, tg.Died(), target.PhaseDied)
	if !slices.Contains(te.Output, "exiting after 3 requests") || !strings.Contains(te.Err.Error(), "exit status 2") {
		t.Errorf("died error: %v", te)
	}
	pgid := tg.pgid
	tg.Stop()
	targettest.GroupGone(t, pgid)
}

func TestTargetBuildFailure(t *testing.T) {
	t.Parallel()
	spec := targettest.ServerSpec("baseline")
	spec.Build = []string{"sh", "-c", "for i in $(seq 1 40); do echo line $i; done; echo broken >&2; exit 3"}
	out := t.TempDir()
	tg := New(spec, target.Options{OutDir: out})
	err := tg.Build(t.Context())
	te := targettest.AsTargetError(t, err, target.PhaseBuild)
	tg.Stop()
	if len(te.Output) != target.BuildTailLines || te.Output[0] != "line 12" || te.Output[29] != "broken" {
		t.Errorf("tail %q", te.Output)
	}
	if !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "| line 40") {
		t.Errorf("message:\n%v", err)
	}
	log, _ := os.ReadFile(filepath.Join(out, "baseline.log"))
	if !strings.Contains(string(log), "line 1\n") {
		t.Errorf("build output not in the log:\n%s", log)
	}
}

// A build runs in Dir, and a relative command resolves against Dir too,
// as a scenario's "./bin/demo" expects.
func TestTargetBuildThenRelativeCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := targettest.ServerSpec("candidate")
	spec.Dir = dir
	spec.Build = []string{"cp", targettest.Server(), "svc"}
	spec.Command[0] = "./svc"
	tg := New(spec, target.Options{OutDir: t.TempDir()})
	defer tg.Stop()
	if err := tg.Build(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if code, _, err := get(t, tg.URL()+"/"); code != 200 {
		t.Errorf("GET: %d %v", code, err)
	}
}

func TestTargetURL(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.RequestURI)
		mu.Unlock()
		if r.URL.Path == "/down" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		p := slices.Clone(paths)
		paths = nil
		return p
	}

	// A base URL ending in "/" is joined as the load generator joins it.
	tg := New(scenario.Target{Name: "baseline", URL: srv.URL + "/", Health: "/up"}, target.Options{OutDir: t.TempDir()})
	if err := tg.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	tg.Stop()
	if got := seen(); !slices.Equal(got, []string{"/up"}) {
		t.Errorf("health requests %q, want [/up]", got)
	}
	info := tg.Info(t.Context(), func(k string) string {
		return map[string]string{"BENCHGATE_BASELINE_COMMIT": "abc123"}[k]
	})
	if info.Kind != "url" || info.Spec != srv.URL+"/" || info.URL != srv.URL || info.Commit != "abc123" {
		t.Errorf("Info = %+v", info)
	}

	// A Target built without a health path checks "/", the scenario's
	// default.
	bare := New(scenario.Target{Name: "baseline", URL: srv.URL}, target.Options{OutDir: t.TempDir()})
	if err := bare.Start(t.Context()); err != nil {
		t.Errorf("default health: %v", err)
	}
	if got := seen(); !slices.Equal(got, []string{"/"}) {
		t.Errorf("health requests %q, want [/]", got)
	}

	down := New(scenario.Target{Name: "candidate", URL: srv.URL, Health: "/down", StartupTimeout: 200 * time.Millisecond}, target.Options{OutDir: t.TempDir()})
	err := down.Start(t.Context())
	if te := targettest.AsTargetError(t, err, target.PhaseHealth); !strings.Contains(te.Err.Error(), "500") {
		t.Errorf("error: %v", err)
	}
}

func TestTargetImageRefused(t *testing.T) {
	t.Parallel()
	tg := New(scenario.Target{Name: "candidate", Image: "demo:pr", Port: 8080}, target.Options{OutDir: t.TempDir()})
	for _, f := range []func(context.Context) error{tg.Build, tg.Start} {
		err := f(t.Context())
		targettest.AsTargetError(t, err, target.PhaseStart)
		if !strings.Contains(err.Error(), "runs through the docker engine") {
			t.Errorf("error: %v", err)
		}
	}
	if info := tg.Info(t.Context(), os.Getenv); info.Kind != "image" || info.Spec != "demo:pr" {
		t.Errorf("Info = %+v", info)
	}
}

func TestTargetCommitFromGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "x")
	head := git("rev-parse", "HEAD")
	spec := targettest.ServerSpec("candidate")
	spec.Dir = dir
	tg := New(spec, target.Options{OutDir: t.TempDir()})
	if got := tg.Info(t.Context(), func(string) string { return "" }).Commit; got != head {
		t.Errorf("commit %q, want %q", got, head)
	}
	env := func(k string) string {
		if k == "BENCHGATE_CANDIDATE_COMMIT" {
			return "from-env"
		}
		return ""
	}
	if got := tg.Info(t.Context(), env).Commit; got != "from-env" {
		t.Errorf("commit %q, want the environment's", got)
	}
}

// Results and reports show the target as written, not as expanded.
func TestTargetInfoShown(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	for _, spec := range []scenario.Target{
		{Name: "candidate", Command: []string{"svc", "--token", "s3cret"}, Shown: "svc --token ${TOKEN}"},
		{Name: "candidate", URL: "http://s3cret.internal:8080", Shown: "http://${HOST}:8080"},
		{Name: "candidate", Image: "registry/s3cret:pr", Shown: "registry/${IMAGE}:pr"},
	} {
		if got := New(spec, target.Options{OutDir: t.TempDir()}).Info(t.Context(), none).Spec; got != spec.Shown {
			t.Errorf("Spec %q, want %q", got, spec.Shown)
		}
	}
	// Until the scenario fills Shown in, the spec is rendered as before.
	old := scenario.Target{Name: "candidate", Command: []string{"svc", "-a", "b c"}}
	if got := New(old, target.Options{OutDir: t.TempDir()}).Info(t.Context(), none).Spec; got != "svc -a 'b c'" {
		t.Errorf("Spec without Shown %q", got)
	}
}

// Builds and services run the PR's code: the CI runner's credentials must
// not reach them, while the scenario's env still does.
func TestTargetEnvironmentWithoutSecrets(t *testing.T) {
	secrets := []string{"GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
		"ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_RUNTIME_URL", "ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL",
		"INPUT_GITHUB-TOKEN", "INPUT_BUDGET"}
	for _, k := range secrets {
		t.Setenv(k, "secret-value")
	}
	t.Setenv("BENCHGATE_TEST_KEPT", "kept")
	out := t.TempDir()
	spec := targettest.ServerSpec("candidate", "-print-env")
	spec.Env["GH_TOKEN"] = "given-by-the-scenario"
	spec.Build = []string{"env"}
	tg := New(spec, target.Options{OutDir: out})
	defer tg.Stop()
	if err := tg.Build(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	tg.Stop()
	b, err := os.ReadFile(filepath.Join(out, "candidate.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	build, service, ok := strings.Cut(log, "# start ")
	if !ok {
		t.Fatalf("log:\n%s", log)
	}
	if strings.Contains(log, "secret-value") {
		t.Errorf("a secret reached the build or the service:\n%s", log)
	}
	if !strings.Contains(build, "\nBENCHGATE_TEST_KEPT=kept\n") {
		t.Errorf("build environment:\n%s", build)
	}
	for _, want := range []string{"env BENCHGATE_TEST_KEPT=kept\n", "env GH_TOKEN=given-by-the-scenario\n", "env TESTSERVER_PORT="} {
		if !strings.Contains(service, want) {
			t.Errorf("service environment lacks %q:\n%s", want, service)
		}
	}
}

// What a build leaves running in its group (here a background process
// that even holds the output pipe) is killed when the build returns,
// whether it succeeded or failed.
func TestTargetBuildLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	daemonPid := regexp.MustCompile(`(?m)^daemon (\d+)$`)
	for _, tc := range []struct {
		script string
		fails  bool
	}{
		{"sleep 600 & echo daemon $!", false},
		{"sleep 600 & echo daemon $!; exit 3", true},
	} {
		out := t.TempDir()
		spec := targettest.ServerSpec("baseline")
		spec.Build = []string{"sh", "-c", tc.script}
		tg := New(spec, target.Options{OutDir: out})
		err := tg.Build(t.Context())
		tg.Stop()
		if tc.fails {
			targettest.AsTargetError(t, err, target.PhaseBuild)
		} else if err != nil {
			t.Errorf("%s: %v", tc.script, err)
		}
		log, _ := os.ReadFile(filepath.Join(out, "baseline.log"))
		m := daemonPid.FindSubmatch(log)
		if m == nil {
			t.Fatalf("%s: no pid in the log:\n%s", tc.script, log)
		}
		pid, _ := strconv.Atoi(string(m[1]))
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s: process %d left running (kill -0: %v)", tc.script, pid, err)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestTargetLogAppends starts a target once per pin set, as a run does:
// the log keeps every start's output, each under a header naming its pins.
func TestTargetLogAppends(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	for _, name := range []string{"first", "second"} {
		tg := New(targettest.ServerSpec("baseline"), target.Options{OutDir: out, Pins: &scenario.Pins{Name: name}})
		if err := tg.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := tg.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "baseline.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	headers := regexp.MustCompile(`(?m)^# start \S+ pins (\S+)$`).FindAllStringSubmatch(log, -1)
	if len(headers) != 2 || headers[0][1] != "first" || headers[1][1] != "second" {
		t.Errorf("headers %q; want one per start, first then second:\n%s", headers, log)
	}
	if pids := targettest.PIDLine.FindAllString(log, -1); len(pids) != 2 {
		t.Errorf("%d starts' output in the log, want 2:\n%s", len(pids), log)
	}
}

// TestHealthHugeReason: a health check answered with a 3 MB reason phrase
// fails with an error of bounded size.
func TestHealthHugeReason(t *testing.T) {
	t.Parallel()
	srv := targettest.RawServer(t, func(w *bufio.Writer, _ string) {
		fmt.Fprintf(w, "HTTP/1.1 503 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", strings.Repeat("x", 3<<20))
	})
	tg := New(scenario.Target{Name: "candidate", URL: srv.URL, Health: "/down", StartupTimeout: 100 * time.Millisecond}, target.Options{OutDir: t.TempDir()})
	err := tg.Start(t.Context())
	te := targettest.AsTargetError(t, err, target.PhaseHealth)
	if n := len(te.Error()); n > target.MaxErrText+64 || !strings.Contains(te.Error(), "GET /down: 503 xxx") || !strings.Contains(te.Error(), " bytes cut)") {
		t.Errorf("%d bytes: %.200s", n, te.Error())
	}
}
