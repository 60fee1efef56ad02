package ghaction

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
)

// getenvOf returns a getenv over m, as a step's environment would be.
func getenvOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// runnerEnv is the environment the runner gives a step of octo-org/demo-api.
func runnerEnv(event, eventPath string) map[string]string {
	return map[string]string{
		"GITHUB_ACTIONS":          "true",
		"GITHUB_REPOSITORY":       "octo-org/demo-api",
		"GITHUB_REPOSITORY_OWNER": "octo-org",
		"GITHUB_EVENT_NAME":       event,
		"GITHUB_EVENT_PATH":       eventPath,
		"GITHUB_SHA":              "f1e2d3c4b5a69788796a5b4c3d2e1f0a1b2c3d4e",
		"GITHUB_SERVER_URL":       "https://github.com",
		"GITHUB_API_URL":          "https://api.github.com",
		"GITHUB_RUN_ID":           "8412907733",
		"GITHUB_RUN_ATTEMPT":      "1",
		"GITHUB_OUTPUT":           "/home/runner/work/_temp/_runner_file_commands/set_output_3f2a",
		"GITHUB_STEP_SUMMARY":     "/home/runner/work/_temp/_runner_file_commands/step_summary_3f2a",
		"GITHUB_TOKEN":            "ghs_envTokenNotTheInput000000000000000",
		"INPUT_GITHUB-TOKEN":      "ghs_inputToken11111111111111111111111",
	}
}

// wantEnv is what Load returns for runnerEnv, before the event is read.
func wantEnv(event string) Env {
	return Env{
		Inputs:      DefaultInputs(),
		Repository:  "octo-org/demo-api",
		Owner:       "octo-org",
		Repo:        "demo-api",
		EventName:   event,
		SHA:         "f1e2d3c4b5a69788796a5b4c3d2e1f0a1b2c3d4e",
		ServerURL:   "https://github.com",
		APIURL:      "https://api.github.com",
		RunURL:      "https://github.com/octo-org/demo-api/actions/runs/8412907733",
		Token:       "ghs_inputToken11111111111111111111111",
		OutputFile:  "/home/runner/work/_temp/_runner_file_commands/set_output_3f2a",
		SummaryFile: "/home/runner/work/_temp/_runner_file_commands/step_summary_3f2a",
		InActions:   true,
	}
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadEvents(t *testing.T) {
	t.Parallel()
	const (
		baseSHA  = "e2f0b6c4a8d1e3f5a7b9c0d2e4f6a8b0c2d4e6f8"
		headSHA  = "9c4e2a7d1b3f5e7a9c1d3f5b7d9e1a3c5e7f9b1d"
		forkSHA  = "3a7f1c9e5b2d8a4f6c0e2b4d6f8a0c2e4b6d8f0a"
		pushSHA  = "b7d3f9a1c5e7b9d1f3a5c7e9b1d3f5a7c9e1b3d5"
		ours     = "octo-org/demo-api"
		theirs   = "hubot-contrib/demo-api"
		fixtures = "testdata/events/"
	)
	tests := []struct {
		name    string
		event   string
		payload string // a file under testdata/events, or inline JSON
		want    func(e *Env)
	}{
		{"pull_request", "pull_request", fixtures + "pull_request.json", func(e *Env) {
			e.PR, e.BaseSHA, e.HeadSHA, e.HeadRepository = 42, baseSHA, headSHA, ours
		}},
		{"pull_request from a fork", "pull_request", fixtures + "pull_request_fork.json", func(e *Env) {
			e.PR, e.BaseSHA, e.HeadSHA, e.HeadRepository, e.Fork = 57, baseSHA, forkSHA, theirs, true
		}},
		{"pull_request_target has the same payload", "pull_request_target", fixtures + "pull_request_fork.json", func(e *Env) {
			e.PR, e.BaseSHA, e.HeadSHA, e.HeadRepository, e.Fork = 57, baseSHA, forkSHA, theirs, true
		}},
		{"workflow_run of a PR", "workflow_run", fixtures + "workflow_run.json", func(e *Env) {
			e.PR, e.BaseSHA, e.HeadSHA, e.HeadRepository = 42, baseSHA, headSHA, ours
		}},
		{"workflow_run of a PR from a fork lists no PR", "workflow_run", fixtures + "workflow_run_fork.json", func(e *Env) {
			e.HeadSHA, e.HeadRepository, e.Fork = forkSHA, theirs, true
		}},
		{"push", "push", fixtures + "push.json", func(e *Env) {
			e.BaseSHA, e.HeadSHA, e.HeadRepository = baseSHA, pushSHA, ours
		}},
		{"push creating a branch has no base", "push",
			`{"ref":"refs/heads/new","before":"0000000000000000000000000000000000000000","after":"` + pushSHA + `","created":true}`,
			func(e *Env) { e.HeadSHA, e.HeadRepository = pushSHA, ours }},
		{"schedule has no PR and no commits", "schedule",
			`{"schedule":"17 3 * * *","repository":{"full_name":"octo-org/demo-api"}}`,
			func(e *Env) {}},
		{"pull_request whose fork was deleted", "pull_request",
			`{"number":9,"pull_request":{"number":9,"base":{"sha":"` + baseSHA + `","repo":{"full_name":"octo-org/demo-api"}},"head":{"sha":"` + forkSHA + `","repo":null}}}`,
			func(e *Env) { e.PR, e.BaseSHA, e.HeadSHA, e.Fork = 9, baseSHA, forkSHA, true }},
		{"head repository compared without case", "pull_request",
			`{"pull_request":{"number":3,"base":{"sha":"` + baseSHA + `","repo":{"full_name":"octo-org/demo-api"}},"head":{"sha":"` + headSHA + `","repo":{"full_name":"Octo-Org/Demo-API"}}}}`,
			func(e *Env) { e.PR, e.BaseSHA, e.HeadSHA, e.HeadRepository = 3, baseSHA, headSHA, "Octo-Org/Demo-API" }},
		{"workflow_run skips a PR of another repository", "workflow_run",
			`{"workflow_run":{"head_sha":"` + headSHA + `","repository":{"full_name":"octo-org/demo-api"},"head_repository":{"full_name":"octo-org/demo-api"},"pull_requests":[` +
				`{"number":1,"base":{"sha":"aaaa","repo":{"url":"https://api.github.com/repos/someone/demo-api","name":"demo-api"}},"head":{"sha":"` + headSHA + `"}},` +
				`{"number":42,"base":{"sha":"` + baseSHA + `","repo":{"url":"https://api.github.com/repos/octo-org/demo-api","name":"demo-api"}},"head":{"sha":"` + headSHA + `"}}]}}`,
			func(e *Env) { e.PR, e.BaseSHA, e.HeadSHA, e.HeadRepository = 42, baseSHA, headSHA, ours }},
		{"workflow_run with only a foreign PR has none", "workflow_run",
			`{"workflow_run":{"head_sha":"` + headSHA + `","repository":{"full_name":"octo-org/demo-api"},"head_repository":{"full_name":"octo-org/demo-api"},"pull_requests":[` +
				`{"number":1,"base":{"sha":"aaaa","repo":{"url":"https://api.github.com/repos/someone/demo-api","name":"demo-api"}},"head":{"sha":"` + headSHA + `"}}]}}`,
			func(e *Env) { e.HeadSHA, e.HeadRepository = headSHA, ours }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.payload
			if strings.HasPrefix(path, "{") {
				path = writeTemp(t, "event.json", tt.payload)
			}
			got, err := Load(getenvOf(runnerEnv(tt.event, path)))
			if err != nil {
				t.Fatal(err)
			}
			want := wantEnv(tt.event)
			tt.want(&want)
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("Load:\n got %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestLoadOutsideActions(t *testing.T) {
	t.Parallel()
	got, err := Load(getenvOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Env{Inputs: DefaultInputs(), ServerURL: "https://github.com", APIURL: "https://api.github.com"}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("Load:\n got %+v\nwant %+v", *got, want)
	}
}

func TestLoadInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		env   map[string]string
		want  func(in *Inputs)
		token string
	}{
		{"defaults", nil, func(in *Inputs) {}, ""},
		{"every input, trimmed as the runner's toolkit does", map[string]string{
			"INPUT_SCENARIO":           " bench/api.yml ",
			"INPUT_PROFILE":            "nightly",
			"INPUT_BASELINE":           "demo:base",
			"INPUT_CANDIDATE":          "demo:pr-42",
			"INPUT_GITHUB-TOKEN":       "\tghs_x\n",
			"INPUT_COMMENT":            "on-regression",
			"INPUT_COMMENT-HEADER":     "api-gate",
			"INPUT_COMMENT-AUTHOR":     "myapp[bot]",
			"INPUT_FAIL-ON-REGRESSION": "false",
			"INPUT_RESULTS-DIR":        "out/bench",
			"INPUT_BUDGET":             "20m",
		}, func(in *Inputs) {
			*in = Inputs{Scenario: "bench/api.yml", Profile: "nightly", Baseline: "demo:base", Candidate: "demo:pr-42",
				Comment: "on-regression", CommentHeader: "api-gate", CommentAuthor: "myapp[bot]", ResultsDir: "out/bench", FailOnRegression: false, Budget: "20m"}
		}, "ghs_x"},
		{"FALSE", map[string]string{"INPUT_FAIL-ON-REGRESSION": "FALSE"}, func(in *Inputs) { in.FailOnRegression = false }, ""},
		{"True", map[string]string{"INPUT_FAIL-ON-REGRESSION": "True"}, func(in *Inputs) {}, ""},
		{"empty inputs take the defaults", map[string]string{"INPUT_COMMENT": "", "INPUT_RESULTS-DIR": "  "}, func(in *Inputs) {}, ""},
		{"token falls back to GITHUB_TOKEN", map[string]string{"GITHUB_TOKEN": "ghs_env"}, func(in *Inputs) {}, "ghs_env"},
		{"the input wins over GITHUB_TOKEN", map[string]string{"GITHUB_TOKEN": "ghs_env", "INPUT_GITHUB-TOKEN": "ghs_in"}, func(in *Inputs) {}, "ghs_in"},
		// The runner keeps the dash: an underscore spelling is not the input.
		{"INPUT_GITHUB_TOKEN is not the input", map[string]string{"INPUT_GITHUB_TOKEN": "ghs_wrong"}, func(in *Inputs) {}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(getenvOf(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			want := DefaultInputs()
			tt.want(&want)
			if got.Inputs != want {
				t.Errorf("Inputs:\n got %+v\nwant %+v", got.Inputs, want)
			}
			if got.Token != tt.token {
				t.Errorf("Token = %q, want %q", got.Token, tt.token)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-event.json")
	bad := writeTemp(t, "bad.json", `{"pull_request": {`)
	noPR := writeTemp(t, "nopr.json", `{"action":"opened"}`)
	noRun := writeTemp(t, "norun.json", `{"action":"completed"}`)
	strNumber := writeTemp(t, "str.json", `{"pull_request":{"number":"42"}}`)
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"comment", map[string]string{"INPUT_COMMENT": "sometimes"},
			`input comment: "sometimes" is not one of always, on-change, on-regression, never`},
		{"comment is case-sensitive", map[string]string{"INPUT_COMMENT": "Always"},
			`input comment: "Always" is not one of always, on-change, on-regression, never`},
		{"fail-on-regression", map[string]string{"INPUT_FAIL-ON-REGRESSION": "yes"},
			`input fail-on-regression: "yes" is not true or false`},
		{"budget", map[string]string{"INPUT_BUDGET": "20 minutes"},
			`input budget: "20 minutes" is not a duration such as 20m`},
		{"negative budget", map[string]string{"INPUT_BUDGET": "-5m"},
			`input budget: "-5m" is not a duration such as 20m`},
		{"comment-author", map[string]string{"INPUT_COMMENT-AUTHOR": "@myapp"},
			`input comment-author: "@myapp" is not a GitHub login (letters, digits and '-', an App's bot as myapp[bot])`},
		{"remove-label", map[string]string{"INPUT_REMOVE-LABEL": "bench\u0085mark"},
			`input remove-label: label "bench\u0085mark": holds a control character`},
		{"dashboard-url", map[string]string{"INPUT_DASHBOARD-URL": "javascript:alert(1)"},
			`input dashboard-url: dashboard URL "javascript:alert(1)": want an absolute https:// URL such as https://OWNER.github.io/REPO/`},
		{"run id", map[string]string{"GITHUB_RUN_ID": "12x"},
			`GITHUB_RUN_ID "12x": not a run id`},
		{"repository", map[string]string{"GITHUB_REPOSITORY": "demo-api"},
			`GITHUB_REPOSITORY "demo-api": want owner/name`},
		{"repository with a path", map[string]string{"GITHUB_REPOSITORY": "octo-org/demo-api/extra"},
			`GITHUB_REPOSITORY "octo-org/demo-api/extra": want owner/name`},
		{"missing event file", map[string]string{"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": missing},
			"GITHUB_EVENT_PATH: stat " + missing + ": no such file or directory"},
		{"malformed event file", map[string]string{"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": bad},
			"GITHUB_EVENT_PATH " + bad + ": failed to unmarshal event payload: unexpected end of JSON input"},
		{"pull_request without pull_request", map[string]string{"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": noPR},
			"GITHUB_EVENT_PATH " + noPR + ": pull_request event: no pull_request in the payload"},
		{"workflow_run without workflow_run", map[string]string{"GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": noRun},
			"GITHUB_EVENT_PATH " + noRun + ": workflow_run event: no workflow_run in the payload"},
		{"PR number of the wrong type", map[string]string{"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": strNumber},
			"GITHUB_EVENT_PATH " + strNumber + ": pull_request event: json: cannot unmarshal string into Go struct field eventPR.pull_request.number of type int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := Load(getenvOf(tt.env))
			if err == nil {
				t.Fatalf("Load = %v, want error %q", env, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Load error:\n got %s\nwant %s", err, tt.want)
			}
		})
	}
}

// TestDefaultsMatchActionYML keeps DefaultInputs and the inputs Load reads in
// step with action.yml, so the action and `benchgate gate` run by hand agree.
func TestDefaultsMatchActionYML(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Inputs map[string]struct {
			Default string `yaml:"default"`
		} `yaml:"inputs"`
	}
	if err := yaml.Unmarshal(b, &action); err != nil {
		t.Fatal(err)
	}
	d := DefaultInputs()
	want := map[string]string{
		"scenario":           d.Scenario,
		"profile":            d.Profile,
		"baseline":           d.Baseline,
		"candidate":          d.Candidate,
		"github-token":       "${{ github.token }}",
		"comment":            d.Comment,
		"comment-header":     d.CommentHeader,
		"comment-author":     d.CommentAuthor,
		"fail-on-regression": fmt.Sprint(d.FailOnRegression),
		"results-dir":        d.ResultsDir,
		"budget":             d.Budget,
		"remove-label":       d.RemoveLabel,
		"dashboard-url":      d.DashboardURL,
	}
	// Inputs that reach benchgate another way than through Load.
	notRead := map[string]string{
		"command": "the container's argument (runs.args), picked up as the subcommand",
	}
	got := map[string]string{}
	for name, in := range action.Inputs {
		if _, ok := notRead[name]; !ok {
			got[name] = in.Default
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("action.yml input defaults:\n got %v\nwant %v", got, want)
	}
}

func TestEnvNeverPrintsToken(t *testing.T) {
	t.Parallel()
	const token = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
	env := wantEnv("pull_request")
	env.Token = token
	type wrapper struct {
		Env  Env
		Envp *Env
	}
	values := []any{env, &env, []Env{env}, map[string]Env{"e": env}, wrapper{env, &env}}
	forms := []string{token, hex.EncodeToString([]byte(token)), strings.ToUpper(hex.EncodeToString([]byte(token)))}
	for _, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%20v", "%-+v"} {
			out := fmt.Sprintf(verb, v)
			for _, f := range forms {
				if strings.Contains(out, f) {
					t.Errorf("Sprintf(%q, %T) shows the token: %s", verb, v, out)
				}
			}
		}
	}
	if out := fmt.Sprintf("%v %+v %#v", env, &env, env); !strings.Contains(out, "Token:[redacted]") || !strings.Contains(out, `Token:"[redacted]"`) {
		t.Errorf("no redaction marker in %s", out)
	}
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), token) {
		t.Errorf("json.Marshal shows the token: %s", b)
	}
	// Redaction works on a copy: the Env keeps its token.
	if env.Token != token {
		t.Errorf("Token = %q after printing", env.Token)
	}
}

func TestEnvStrings(t *testing.T) {
	t.Parallel()
	e := Env{Repository: "o/r", PR: 7, Token: "secret", Inputs: Inputs{Comment: "never"}}
	tests := []struct{ verb, want string }{
		{"%v", "{Inputs:{Scenario: Profile: Baseline: Candidate: Comment:never CommentHeader: CommentAuthor: ResultsDir: FailOnRegression:false Budget: RemoveLabel: DashboardURL:} " +
			"Repository:o/r Owner: Repo: EventName: PR:7 BaseSHA: HeadSHA: SHA: HeadRepository: Fork:false ServerURL: APIURL: RunURL: " +
			"Token:[redacted] OutputFile: SummaryFile: InActions:false}"},
		{"%#v", `ghaction.Env{Inputs:ghaction.Inputs{Scenario:"", Profile:"", Baseline:"", Candidate:"", Comment:"never", CommentHeader:"", CommentAuthor:"", ResultsDir:"", FailOnRegression:false, Budget:"", RemoveLabel:"", DashboardURL:""}, ` +
			`Repository:"o/r", Owner:"", Repo:"", EventName:"", PR:7, BaseSHA:"", HeadSHA:"", SHA:"", HeadRepository:"", Fork:false, ServerURL:"", APIURL:"", RunURL:"", ` +
			`Token:"[redacted]", OutputFile:"", SummaryFile:"", InActions:false}`},
		// Other verbs apply to each field, as for any struct.
		{"%d", "{{%!d(string=) %!d(string=) %!d(string=) %!d(string=) %!d(string=never) %!d(string=) %!d(string=) %!d(string=) %!d(bool=false) %!d(string=) %!d(string=) %!d(string=)} " +
			"%!d(string=o/r) %!d(string=) %!d(string=) %!d(string=) 7 %!d(string=) %!d(string=) %!d(string=) %!d(string=) %!d(bool=false) " +
			"%!d(string=) %!d(string=) %!d(string=) %!d(string=[redacted]) %!d(string=) %!d(string=) %!d(bool=false)}"},
	}
	for _, tt := range tests {
		if got := fmt.Sprintf(tt.verb, e); got != tt.want {
			t.Errorf("Sprintf(%q):\n got %s\nwant %s", tt.verb, got, tt.want)
		}
	}
	if e.String() != fmt.Sprintf("%v", e) || e.GoString() != fmt.Sprintf("%#v", e) {
		t.Errorf("String and GoString differ from %%v and %%#v")
	}
	// An empty token is shown empty, not as if there were one.
	if got := fmt.Sprint(Env{}); !strings.Contains(got, "Token: ") {
		t.Errorf("empty token printed as %s", got)
	}
}

// fills is randomness whose first read fills its buffer with bytes[0], the
// second with bytes[1], and so on, repeating the last.
type fills struct {
	bytes []byte
	reads int
}

func fill(bytes ...byte) io.Reader { return &fills{bytes: bytes} }

func (f *fills) Read(b []byte) (int, error) {
	v := f.bytes[min(f.reads, len(f.bytes)-1)]
	f.reads++
	for i := range b {
		b[i] = v
	}
	return len(b), nil
}

// parseOutputs reads a GITHUB_OUTPUT file by the runner's rules
// (actions/runner, FileCommandManager: SetOutputFileCommand on Linux): lines
// end at LF; an empty line is skipped; NAME=VALUE when '=' comes before any
// "<<"; else NAME<<DELIMITER, then the value is every line up to the first
// line equal to DELIMITER, without the LF that precedes it.
func parseOutputs(text string) ([][2]string, error) {
	var out [][2]string
	readLine := func(i int) (line string, next int, ok bool) {
		if i >= len(text) {
			return "", i, false
		}
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return text[i:], len(text), true
		}
		return text[i : i+j], i + j + 1, true
	}
	i := 0
	for {
		line, next, ok := readLine(i)
		if !ok {
			return out, nil
		}
		i = next
		if line == "" {
			continue
		}
		eq, hd := strings.Index(line, "="), strings.Index(line, "<<")
		switch {
		case eq >= 0 && (hd < 0 || eq < hd):
			out = append(out, [2]string{line[:eq], line[eq+1:]})
		case hd >= 0:
			name, delim := line[:hd], line[hd+2:]
			if name == "" || delim == "" {
				return nil, fmt.Errorf("invalid format %q", line)
			}
			start, end := i, i
			for {
				l, n, ok := readLine(i)
				if !ok {
					return nil, fmt.Errorf("matching delimiter not found %q", delim)
				}
				if l == delim {
					i = n
					break
				}
				if n == len(text) && !strings.HasSuffix(text, "\n") {
					return nil, errors.New("EOF marker missing new line")
				}
				end, i = n-1, n
			}
			out = append(out, [2]string{name, text[start:max(start, end)]})
		default:
			return nil, fmt.Errorf("invalid format %q", line)
		}
	}
}

// hostileOutputs are values a pull request can steer: a line equal to the
// delimiter the stub produces first, the delimiter the library would use,
// "EOF", a NAME=VALUE line, a heredoc header, CR, trailing newlines.
var hostileOutputs = [][2]string{
	{"verdict", "fail"},
	{"report", "line 1\nbenchgate_00000000000000000000000000000000\nverdict=pass"},
	{"comment-url", "EOF\nEOF"},
	{"class_name", "ghadelimiter_00000000-0000-0000-0000-000000000000\nregressions<<X\n0\nX"},
	{"empty", ""},
	{"newlines", "\n\nend\n\n"},
	{"crlf", "a\r\nb\r"},
}

func TestSetOutputs(t *testing.T) {
	t.Parallel()
	path := writeTemp(t, "set_output", "earlier=kept\n")
	env := &Env{OutputFile: path}
	if err := env.setOutputs(hostileOutputs, fill(0x00, 0xab)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The first delimiter occurs in a value, so the second one is used.
	const d = "benchgate_abababababababababababababababab"
	want := "earlier=kept\n" +
		"verdict<<" + d + "\nfail\n" + d + "\n" +
		"report<<" + d + "\nline 1\nbenchgate_00000000000000000000000000000000\nverdict=pass\n" + d + "\n" +
		"comment-url<<" + d + "\nEOF\nEOF\n" + d + "\n" +
		"class_name<<" + d + "\nghadelimiter_00000000-0000-0000-0000-000000000000\nregressions<<X\n0\nX\n" + d + "\n" +
		"empty<<" + d + "\n\n" + d + "\n" +
		"newlines<<" + d + "\n\n\nend\n\n\n" + d + "\n" +
		"crlf<<" + d + "\na\r\nb\r\n" + d + "\n"
	if string(b) != want {
		t.Errorf("GITHUB_OUTPUT:\n got %q\nwant %q", b, want)
	}
	got, err := parseOutputs(string(b))
	if err != nil {
		t.Fatal(err)
	}
	wantKV := append([][2]string{{"earlier", "kept"}}, hostileOutputs...)
	if !reflect.DeepEqual(got, wantKV) {
		t.Errorf("outputs read back:\n got %q\nwant %q", got, wantKV)
	}
}

func TestSetOutputsRandomDelimiter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "set_output")
	env := &Env{OutputFile: path}
	for range 2 {
		if err := env.SetOutputs(hostileOutputs); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseOutputs(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append([][2]string{}, hostileOutputs...), hostileOutputs...); !reflect.DeepEqual(got, want) {
		t.Errorf("outputs read back:\n got %q\nwant %q", got, want)
	}
	header := regexp.MustCompile(`(?m)^verdict<<(benchgate_[0-9a-f]{32})$`)
	m := header.FindAllStringSubmatch(string(b), -1)
	if len(m) != 2 || m[0][1] == m[1][1] {
		t.Errorf("want two calls with two random delimiters, got %q", m)
	}
}

func TestSetOutputsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kv   [][2]string
		want string
	}{
		{"empty name", [][2]string{{"ok", "1"}, {"", "x"}}, `output name "": want letters, digits, '_' or '-'`},
		{"space", [][2]string{{"a b", "x"}}, `output name "a b": want letters, digits, '_' or '-'`},
		{"equals", [][2]string{{"a=b", "x"}}, `output name "a=b": want letters, digits, '_' or '-'`},
		{"heredoc in name", [][2]string{{"a<<EOF", "x"}}, `output name "a<<EOF": want letters, digits, '_' or '-'`},
		{"newline in name", [][2]string{{"a\nb", "x"}}, `output name "a\nb": want letters, digits, '_' or '-'`},
		{"not ASCII", [][2]string{{"durée", "x"}}, `output name "durée": want letters, digits, '_' or '-'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTemp(t, "set_output", "earlier=kept\n")
			for _, env := range []*Env{{OutputFile: path}, {}} {
				err := env.SetOutputs(tt.kv)
				if err == nil || err.Error() != tt.want {
					t.Errorf("SetOutputs error = %v, want %s", err, tt.want)
				}
			}
			if b, _ := os.ReadFile(path); string(b) != "earlier=kept\n" {
				t.Errorf("GITHUB_OUTPUT written after an error: %q", b)
			}
		})
	}

	t.Run("no delimiter avoids the values", func(t *testing.T) {
		path := writeTemp(t, "set_output", "")
		env := &Env{OutputFile: path}
		err := env.setOutputs([][2]string{{"report", "benchgate_00000000000000000000000000000000"}}, fill(0x00))
		if want := "GITHUB_OUTPUT: no random token avoids the text"; err == nil || err.Error() != want {
			t.Errorf("SetOutputs error = %v, want %s", err, want)
		}
	})

	t.Run("unwritable file", func(t *testing.T) {
		dir := t.TempDir()
		env := &Env{OutputFile: dir}
		err := env.SetOutputs([][2]string{{"verdict", "pass"}})
		if want := "GITHUB_OUTPUT: open " + dir + ": is a directory"; err == nil || err.Error() != want {
			t.Errorf("SetOutputs error = %v, want %s", err, want)
		}
	})
}

func TestSetOutputsOutsideActions(t *testing.T) {
	t.Chdir(t.TempDir())
	env := &Env{}
	if err := env.SetOutputs(hostileOutputs); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("files written outside Actions: %v", entries)
	}
}

// summaryNote is the truncation note with the default results directory:
// 137 bytes.
const summaryNote = "\n**This summary was truncated** to fit GitHub's 1 MiB limit: " +
	"the full report is in the results directory (artifact) `benchgate-results`.\n"

// rows returns n table rows of exactly 100 bytes each.
func rows(n int) string {
	var b strings.Builder
	for i := range n {
		line := fmt.Sprintf("| Q%05d | 8 | 1234.5 ±12.3 | 1230.1 ±11.9 | -0.4%% | tie |", i)
		b.WriteString(line + strings.Repeat(" ", 99-len(line)) + "\n")
	}
	return b.String()
}

func TestWriteSummary(t *testing.T) {
	t.Parallel()
	if len(summaryNote) != 137 || len(rows(1)) != 100 {
		t.Fatalf("test setup: note %d bytes, row %d bytes", len(summaryNote), len(rows(1)))
	}
	// The budget is SummaryLimit less 4 KiB of room: 1048576 - 4096 = 1044480
	// bytes. A cut keeps at most budget - note - 1 = 1044342 bytes of the
	// text, the 1 being for a newline ending a line cut short.
	const budget = 1044480
	exact := rows(10444) + strings.Repeat("-", 79) + "\n" // 1044400 + 80
	eAcute := "a" + strings.Repeat("é", 600000)           // é at odd offsets: 1044342 falls inside one
	fenced := "```text\n" + rows(10500) + "```\n"         // rows end at 8+100k
	details := "<details><summary>Full tables</summary>\n\n" + rows(10500) + "\n</details>\n"
	tests := []struct {
		name     string
		before   string // already in the file
		markdown string
		want     string // appended
	}{
		{"a final newline is added", "", "# benchgate\n\npass", "# benchgate\n\npass\n"},
		{"empty", "", "", ""},
		{"exactly the budget", "", exact, exact},
		{"one line over the budget", "", exact + "x",
			// 1044342 bytes allowed: 10443 whole rows.
			exact[:1044300] + summaryNote},
		{"what the file holds counts", strings.Repeat("#", 1044000), rows(10),
			// 480 bytes left, 342 for text: 3 rows.
			rows(3) + summaryNote},
		{"a line too long for the budget is cut at a rune", "", eAcute,
			eAcute[:1044341] + "\n" + summaryNote},
		{"an open code fence is closed before the note", "", fenced,
			fenced[:1044308] + "```\n" + summaryNote},
		// 41 + 10443 rows = 1044341 bytes, but with the closer (12) and the
		// note (137) that is 10 over: one row fewer.
		{"an open details block is closed, a row dropped to fit it", "", details,
			details[:1044241] + "\n</details>\n" + summaryNote},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTemp(t, "step_summary", tt.before)
			env := &Env{SummaryFile: path, Inputs: DefaultInputs()}
			if err := env.WriteSummary(tt.markdown); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := strings.CutPrefix(string(b), tt.before)
			if !ok {
				t.Fatal("the file's earlier content changed")
			}
			if got != tt.want {
				t.Errorf("appended %d bytes, want %d\n got …%q\nwant …%q", len(got), len(tt.want), tail(got), tail(tt.want))
			}
			if len(b) > budget {
				t.Errorf("summary file is %d bytes, over the %d budget", len(b), budget)
			}
			if !utf8.Valid(b) {
				t.Error("summary is not valid UTF-8")
			}
		})
	}
}

func tail(s string) string { return s[max(0, len(s)-300):] }

func TestWriteSummaryFull(t *testing.T) {
	t.Parallel()
	path := writeTemp(t, "step_summary", strings.Repeat("#", 1044480-100))
	env := &Env{SummaryFile: path, Inputs: DefaultInputs()}
	err := env.WriteSummary(rows(5))
	want := "GITHUB_STEP_SUMMARY: the step summary is full (1044380 bytes of 1044480 allowed), even a truncation note does not fit"
	if err == nil || err.Error() != want {
		t.Errorf("WriteSummary error = %v, want %s", err, want)
	}
	if st, _ := os.Stat(path); st.Size() != 1044380 {
		t.Errorf("file grew to %d bytes", st.Size())
	}
}

func TestWriteSummaryOutsideActions(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := (&Env{}).WriteSummary(rows(3)); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("files written outside Actions: %v", entries)
	}
}

func TestTruncationNote(t *testing.T) {
	t.Parallel()
	tests := []struct{ dir, want string }{
		{"benchgate-results", summaryNote},
		{"out/bench", "\n**This summary was truncated** to fit GitHub's 1 MiB limit: the full report is in the results directory (artifact) `out/bench`.\n"},
		// A backtick would end the code span early: the name is left out.
		{"a`b", "\n**This summary was truncated** to fit GitHub's 1 MiB limit: the full report is in the results directory (artifact).\n"},
	}
	for _, tt := range tests {
		e := &Env{Inputs: Inputs{ResultsDir: tt.dir}}
		if got := e.truncationNote(); got != tt.want {
			t.Errorf("truncationNote(%q):\n got %q\nwant %q", tt.dir, got, tt.want)
		}
	}
}

func TestOpenBlocks(t *testing.T) {
	t.Parallel()
	tests := []struct{ md, want string }{
		{"text\n", ""},
		{"```\ncode\n", "```\n"},
		{"```\ncode\n```\n", ""},
		{"````go\n```\nstill code\n", "````\n"},
		{"~~~\n```\n", "~~~\n"},
		{"  ```\nindented fence\n", "```\n"},
		{"``inline``\n", ""},
		{"<details><summary>a</summary>\n\n| t |\n", "\n</details>\n"},
		{"<details>\n<details>\n</details>\n", "\n</details>\n"},
		{"<details>\n```\n", "```\n\n</details>\n"},
		{"```\n<details>\n```\n", ""},
	}
	for _, tt := range tests {
		if got := openBlocks(tt.md); got != tt.want {
			t.Errorf("openBlocks(%q) = %q, want %q", tt.md, got, tt.want)
		}
	}
}

func TestSameRepo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		repo *eventRepo
		want bool
	}{
		{&eventRepo{URL: "https://api.github.com/repos/octo-org/demo-api", Name: "demo-api"}, true},
		{&eventRepo{URL: "https://ghe.example.com/api/v3/repos/Octo-Org/Demo-API"}, true},
		{&eventRepo{URL: "https://api.github.com/repos/someone/demo-api", Name: "demo-api"}, false},
		{&eventRepo{URL: "https://api.github.com/repos/xocto-org/demo-api"}, false},
		// Without a URL only the name can be compared.
		{&eventRepo{Name: "demo-api"}, true},
		{&eventRepo{Name: "other"}, false},
		// Nothing to tell them apart by: the PR is taken.
		{&eventRepo{}, true},
		{nil, true},
	}
	for _, tt := range tests {
		if got := sameRepo(tt.repo, "octo-org/demo-api"); got != tt.want {
			t.Errorf("sameRepo(%+v) = %t, want %t", tt.repo, got, tt.want)
		}
	}
}
