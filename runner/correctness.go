//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/process"
)

// MaxProbeBody bounds a body the agreement probe reads: answers larger
// than this are compared on their first MaxProbeBody bytes.
const MaxProbeBody = 16 << 20

// lastLineRunes bounds a pre-flight command's last line in results.
const lastLineRunes = 240

// correctness runs the correctness checks against the first pin set's
// started targets, before any load: the pre-flight commands, then the
// agreement probe. Classes a failed pre-flight guards leave the plan. The
// results go to disk before the first rung. Only a cancellation or a dead
// target is an error: what the checks find is a result.
func (s *schedule) correctness(ctx context.Context) error {
	g := &benchdata.Correctness{}
	absent := map[string]string{}
	for _, p := range s.sc.Preflight {
		for _, t := range []target.Service{s.base, s.cand} {
			if !slices.Contains(p.Targets, t.Name()) {
				continue
			}
			s.budget.enter(fmt.Sprintf("the pre-flight %s on the %s", p.Name, t.Name()))
			r := s.preflight(ctx, p, t)
			if err := cancelled(ctx, s.res); err != nil {
				return err
			}
			if err := t.Died(); err != nil {
				return err
			}
			g.Preflight = append(g.Preflight, r)
			verdict := "PASS"
			if !r.Pass {
				verdict = "FAIL"
				if r.Error != "" {
					verdict += " (" + r.Error + ")"
				} else {
					verdict += fmt.Sprintf(" (exit %d)", r.ExitCode)
				}
				for _, c := range p.Classes {
					if _, ok := absent[c]; !ok {
						absent[c] = fmt.Sprintf("pre-flight %s failed on %s", p.Name, t.Name())
					}
				}
			}
			fmt.Fprintf(s.progress, "preflight %s: %s %s in %.1fs: %s\n", p.Name, t.Name(), verdict, r.Duration, r.LastLine)
		}
	}
	// A mix drawing from an absent class would still send its requests:
	// it is absent too.
	for _, c := range s.sc.Classes {
		for _, e := range c.Mix {
			if why, ok := absent[e.Class]; ok {
				if _, already := absent[c.Name]; !already {
					absent[c.Name] = fmt.Sprintf("it draws from %s, absent: %s", e.Class, why)
				}
			}
		}
	}
	for _, c := range s.sc.Classes {
		if why, ok := absent[c.Name]; ok {
			g.Absent = append(g.Absent, benchdata.AbsentClass{Class: c.Name, Reason: why})
		}
	}
	if len(g.Absent) > 0 {
		plan := &s.res.Plan
		plan.Cells = slices.DeleteFunc(plan.Cells, func(c benchdata.Cell) bool {
			_, gone := absent[c.Class]
			return gone
		})
		plan.Estimate = estimate(s.sc, *plan).Seconds()
		for _, a := range g.Absent {
			fmt.Fprintf(s.progress, "absent: class %s: %s\n", a.Class, a.Reason)
		}
	}
	s.budget.enter("the agreement probe")
	ag, err := s.agreement(ctx, absent)
	if err != nil {
		return err
	}
	g.Agreement = ag
	if len(g.Preflight) > 0 || g.Agreement != nil || len(g.Absent) > 0 {
		s.res.Correctness = g
	}
	return benchdata.Write(s.opts.OutDir, s.res)
}

// preflight runs p against t: {url} becomes t's base URL, the command
// runs in its own process group with the CI secrets stripped from its
// environment, is killed with its group at its timeout or when the run is
// cancelled, and its whole output goes to a log in the results directory.
func (s *schedule) preflight(run context.Context, p scenario.Preflight, t target.Service) benchdata.PreflightResult {
	r := benchdata.PreflightResult{Name: p.Name, Target: t.Name(), Command: p.Shown, ExitCode: -1, Classes: p.Classes}
	argv := make([]string, len(p.Run))
	for i, a := range p.Run {
		argv[i] = strings.ReplaceAll(a, "{url}", t.URL())
	}
	ctx, cancel := context.WithTimeout(run, p.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = p.Dir
	cmd.Env = target.ChildEnv(os.Environ(), []string{"BENCHGATE_URL=" + t.URL(), "BENCHGATE_TARGET=" + t.Name()})

	tail := target.NewTail(16)
	var out io.Writer = tail
	logName := filepath.Join("preflight", p.Name+"."+t.Name()+".log")
	logPath := filepath.Join(s.opts.OutDir, logName)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err == nil {
		if f, err := os.Create(logPath); err == nil {
			defer f.Close()
			fmt.Fprintf(f, "# benchgate pre-flight %s against %s (%s)\n# %s\n", p.Name, t.Name(), target.RedactText(s.sc, t.URL()), target.RedactedLine(s.sc, argv))
			// The log is published with the results: a command that
			// prints the key it was given (curl -v) must not publish it.
			rw := target.NewRedactWriter(s.sc, f)
			defer rw.Flush()
			out = io.MultiWriter(rw, tail)
			r.Log = logName
		}
	}

	// Whatever the command leaves running in its group is killed when it
	// exits: it would otherwise run through the measurement.
	start := time.Now()
	err := process.RunGrouped(cmd, out)
	r.Duration = time.Since(start).Seconds()
	for _, l := range slices.Backward(tail.Lines()) {
		if l = strings.TrimSpace(l); l != "" {
			r.LastLine = truncateRunes(s.sc.Redact(l), lastLineRunes)
			break
		}
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		r.Pass, r.ExitCode = true, 0
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && run.Err() == nil:
		r.Error = fmt.Sprintf("timed out after %v", p.Timeout)
	case errors.As(err, &ee) && ee.Exited():
		r.ExitCode = ee.ExitCode()
	case errors.As(err, &ee):
		r.Error = ee.String() // "signal: killed"
	default:
		r.Error = "cannot run: " + target.CapText(target.Sanitize(s.sc.Redact(err.Error())), target.MaxErrText)
	}
	return r
}

// agreement sends the first requests of each class's stream to both
// targets and compares the answers: the stream of worker 0 in the first
// round at the plan's first concurrency, so the probe sends exactly what
// the load sends first. Classes in absent and classes whose mode is off
// are not probed; nil when none is.
func (s *schedule) agreement(ctx context.Context, absent map[string]string) (*benchdata.AgreementResult, error) {
	var res benchdata.AgreementResult
	probe, done := s.proto.prober()
	defer done()
	c0 := s.sc.Load.Concurrency[0]
	source := s.source()
	for _, v := range s.sc.Variants {
		for _, c := range s.sc.Classes {
			opt := c.Agreement
			// A zero Agreement (a scenario built in code) is off too.
			if _, gone := absent[c.Name]; gone || opt.Mode == scenario.AgreementOff || opt.Mode == "" || opt.Requests < 1 {
				continue
			}
			ca := benchdata.ClassAgreement{Variant: v.Name, Class: c.Name, Mode: opt.Mode, Agree: true}
			src := source(benchdata.Cell{Variant: v.Name, Class: c.Name, Concurrency: c0}, 0, 0)
			for i := range opt.Requests {
				req := src.Next()
				if req == nil {
					break
				}
				if err := cancelled(ctx, s.res); err != nil {
					return nil, err
				}
				// A mix's request is compared as its own class says: its
				// ignore paths, its format, its mode off.
				ropt := opt
				if comp := s.sc.AllClasses[req.Class]; comp != nil && comp != c && comp.Request != nil {
					ropt = comp.Agreement
					if ropt.Mode == scenario.AgreementOff || ropt.Mode == "" {
						continue
					}
				}
				d, format, err := probe(ctx, req, ropt.Options())
				if err != nil {
					return nil, err
				}
				ca.Requests++
				ca.Format = format
				if d != nil {
					d.Index = i
					ca.Agree, ca.First = false, d
					break
				}
			}
			if e, ok := src.(interface{ Err() error }); ok && e.Err() != nil {
				return nil, target.ShownErr(s.sc, fmt.Errorf("agreement probe of %s: a request template failed: %w", c.Name, e.Err()))
			}
			res.Classes = append(res.Classes, ca)
			name := c.Name
			if v.Name != "" {
				name = v.Name + "/" + name
			}
			if ca.Agree {
				fmt.Fprintf(s.progress, "agreement %s: agree over %d requests\n", name, ca.Requests)
			} else {
				fmt.Fprintf(s.progress, "agreement %s: DISAGREE at request %d, %s %s: %s (%s)\n",
					name, ca.First.Index+1, ca.First.Method, target.Sanitize(ca.First.Target), target.Sanitize(ca.First.Reason), ca.Mode)
			}
		}
	}
	if len(res.Classes) == 0 {
		return nil, nil
	}
	return &res, nil
}

// sideFailed is what a probe makes of err, the failure of its request to
// t: the run's error when the run was cancelled or t died, else the
// disagreement's reason for that side ("NAME: WHAT failed: …"), redacted
// and capped, since the error may quote what was sent and what the target
// answered.
func (s *schedule) sideFailed(ctx context.Context, t target.Service, what string, err error) (string, error) {
	if cerr := cancelled(ctx, s.res); cerr != nil {
		return "", cerr
	}
	if derr := t.Died(); derr != nil {
		return "", derr
	}
	return t.Name() + ": " + what + " failed: " + target.CapText(target.Sanitize(s.sc.Redact(err.Error())), maxSideError), nil
}

// sidesFailed is the reason of a probe on whose sides fail holds the
// failures ("" for a side that answered): "" when both answered.
func sidesFailed(fail [2]string) string {
	return strings.Join(slices.DeleteFunc(fail[:], func(f string) bool { return f == "" }), "; ")
}

// redactBody is a probe's answer with the secrets of the scenario
// replaced before it is compared, so that no excerpt, path or reason made
// of it holds one, not even cut in half at an excerpt's end. Both answers
// are redacted alike: two that agree still agree.
func (s *schedule) redactBody(b []byte) []byte {
	if len(b) == 0 || !s.sc.HasSecrets() {
		return b
	}
	if r := s.sc.Redact(string(b)); r != string(b) {
		return []byte(r)
	}
	return b
}

// stored is d as results.json keeps it: the request's target redacted
// (it holds the values of ${VAR}: load.defaults.query is where an API key
// goes), what the targets wrote capped. The progress line, the report, the
// comment, the summary and the annotations are all made of it.
func (s *schedule) stored(d *benchdata.Disagreement) *benchdata.Disagreement {
	d.Target = target.CapText(s.sc.Redact(d.Target), maxTarget)
	d.Reason = target.CapText(d.Reason, maxReason)
	d.Path = target.CapText(d.Path, maxPath)
	d.Baseline = target.CapText(d.Baseline, maxExcerpt)
	d.Candidate = target.CapText(d.Candidate, maxExcerpt)
	return d
}

// truncateRunes cuts s to at most n runes, marking the cut with "…".
func truncateRunes(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
