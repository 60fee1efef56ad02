package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/system"

	"github.com/benchgate/benchgate/doctor"
	"github.com/benchgate/benchgate/internal/cli"
)

// fakeMachine is a fake machine of the doctor package's testdata, for
// cmdDoctor to look at without the busy-process sample.
func fakeMachine(tree string) doctor.Options {
	return doctor.Options{Root: filepath.Join("..", "..", "doctor", "testdata", tree), Sample: -1}
}

type noEngine struct{}

func (noEngine) Info(context.Context) (system.Info, error) { return system.Info{}, os.ErrNotExist }
func (noEngine) ServerVersion(context.Context) (types.Version, error) {
	return types.Version{}, os.ErrNotExist
}
func (noEngine) ClientVersion() string { return "" }
func (noEngine) DaemonHost() string    { return "unix:///nowhere.sock" }

// runDoctor runs cmdDoctor on machine, with no engine answering.
func runDoctor(t *testing.T, machine doctor.Options, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	noEngine := func() (doctor.Engine, func()) { return noEngine{}, func() {} }
	c := &call{ctx: context.Background(), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	err := cli.Exec(c.line(), c, command{Define: cmdDoctor(machine, noEngine)}, "doctor", args)
	if err != nil {
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), cli.ExitCode(err)
}

// pinsScenario writes a scenario of two command targets pinned to memory.
func pinsScenario(t *testing.T, memory string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bench.yml")
	src := `version: 1
name: doctor
targets:
  baseline: {command: [./old, "{port}"]}
  candidate: {command: [./new, "{port}"]}
pins:
  - {name: small, memory: 1GiB}
  - {name: big, memory: ` + memory + `}
classes:
  - {name: Q, request: GET /}
profiles:
  pr: {pins: [small]}
`
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDoctorExitCodes(t *testing.T) {
	t.Parallel()
	m := fakeMachine("tuned") // 62.7 GiB
	file := pinsScenario(t, "40GiB")

	// Both targets at 40 GiB do not fit: exit 1, the pin set named.
	out, errs, code := runDoctor(t, m, "-scenario", file)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, `FAIL  memory         pin set "big": both targets stay up at once, 2 × memory 40GiB = 80 GiB exceeds the machine's 62.7 GiB`) ||
		!strings.Contains(errs, "doctor: 1 check failed: memory") {
		t.Errorf("out:\n%s\nstderr: %s", out, errs)
	}
	// The pr profile keeps the small pin set only: it fits.
	out, errs, code = runDoctor(t, m, "-scenario", file, "-profile", "pr")
	if code != 0 || !strings.Contains(out, "profile pr") || !strings.Contains(out, "OK    memory ") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-format", "xml"}, `-format: "xml" is not terminal or json`},
		{[]string{"-profile", "pr"}, "-profile pr needs -scenario"},
		{[]string{"-scenario", filepath.Join(t.TempDir(), "missing.yml")}, "missing.yml"},
		{[]string{"-no-such-flag"}, "flag provided but not defined"},
		{[]string{"stray"}, `unexpected argument "stray"`},
	} {
		_, errs, code := runDoctor(t, m, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
	if _, errs, code := runDoctor(t, m, "-h"); code != 0 || !strings.Contains(errs, "Usage: benchgate doctor") || !strings.Contains(errs, "Exit codes: 0 when no check FAILs") {
		t.Errorf("-h: exit %d\n%s", code, errs)
	}
	// An invalid scenario is refused with its position.
	bad := filepath.Join(t.TempDir(), "bad.yml")
	os.WriteFile(bad, []byte("version: 1\nname: x\npins: {cpus: nope}\n"), 0o644)
	if _, errs, code := runDoctor(t, m, "-scenario", bad); code != 2 || !strings.Contains(errs, "invalid scenario") || !strings.Contains(errs, "bad.yml:3:") {
		t.Errorf("bad scenario: exit %d\n%s", code, errs)
	}
}

func TestDoctorJSON(t *testing.T) {
	t.Parallel()
	out, errs, code := runDoctor(t, fakeMachine("vm"), "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var ids []string
	for _, c := range rep.Checks {
		ids = append(ids, c.ID)
	}
	if !slices.Equal(ids, doctor.CheckIDs) {
		t.Errorf("ids %q", ids)
	}
	if c := rep.Result(doctor.IDVirt); c.Status != doctor.Warn {
		t.Errorf("virt: %+v", c)
	}
	if c := rep.Result(doctor.IDDocker); c.Status != doctor.Skip || !strings.Contains(c.Found, "unix:///nowhere.sock") {
		t.Errorf("docker: %+v", c)
	}
}

// On this machine, with its engine if it has one: a report of every check,
// exit 0 or 1, and JSON that parses.
func TestDoctorThisMachine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("samples this machine for a second")
	}
	var out, errb bytes.Buffer
	start := time.Now()
	err := run(context.Background(), []string{"doctor", "-format", "json"}, &out, &errb, os.Getenv)
	if code := cli.ExitCode(err); code != 0 && code != 1 {
		t.Fatalf("exit %d: %v\n%s", code, err, errb.String())
	}
	var rep doctor.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(rep.Checks) != len(doctor.CheckIDs) || rep.Root != "/" {
		t.Errorf("root %q, %d checks", rep.Root, len(rep.Checks))
	}
	if rep.Failed() != (err != nil) {
		t.Errorf("failed %v, error %v", rep.Failed(), err)
	}
	t.Logf("%v:\n%s", time.Since(start), out.String())
}
