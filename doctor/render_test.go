package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/scenario"
)

// The JSON form: one object with the root, every check in order with its
// id, title, status and finding, and the counts.
func TestJSON(t *testing.T) {
	t.Parallel()
	root := tree(t, "vm")
	o := vmOptions(t, root)
	o.Scenario = services(scenario.Pins{Name: "wide", CPUs: "6-7", GeneratorCPUs: "0"})
	o.Scenario.Profile = "pr"
	r := Check(context.Background(), o)
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Root     string `json:"root"`
		Scenario string `json:"scenario"`
		Profile  string `json:"profile"`
		Checks   []map[string]any
		Summary  map[string]int `json:"summary"`
	}
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if got.Root != root || got.Scenario != "bench.yml" || got.Profile != "pr" {
		t.Errorf("root %q scenario %q profile %q", got.Root, got.Scenario, got.Profile)
	}
	var ids []string
	for _, c := range got.Checks {
		ids = append(ids, c["id"].(string))
		for _, k := range []string{"title", "status", "found"} {
			if s, _ := c[k].(string); s == "" {
				t.Errorf("check %v: no %s", c["id"], k)
			}
		}
		for k := range c {
			if !slices.Contains([]string{"id", "title", "status", "found", "notes", "fix"}, k) {
				t.Errorf("check %v: unexpected key %q", c["id"], k)
			}
		}
		if st := c["status"].(string); !slices.Contains([]string{"OK", "WARN", "FAIL", "SKIP"}, st) {
			t.Errorf("check %v: status %q", c["id"], st)
		}
	}
	if !slices.Equal(ids, CheckIDs) {
		t.Errorf("ids %q, want %q", ids, CheckIDs)
	}
	if got.Checks[1]["status"] != "FAIL" {
		t.Errorf("pins: %v", got.Checks[1])
	}
	if s := got.Summary; s["ok"]+s["warn"]+s["fail"]+s["skip"] != len(CheckIDs) || s["fail"] != 1 || len(s) != 4 {
		t.Errorf("summary %v", s)
	}
}

func TestTerminal(t *testing.T) {
	t.Parallel()
	root := tree(t, "vm")
	// A process name that would drive the terminal.
	write(t, root, "proc/4242/stat", "4242 (evil\x1b[2J) R 1 4242 4242 0 -1 4194560 1000 0 0 0 30000 100 0 0 20 0 1 0 900 27000000 900 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 1 0 0 0 0 0 0")
	o := vmOptions(t, root)
	o.Scenario = services(scenario.Pins{Name: "wide", CPUs: "6-7", GeneratorCPUs: "0"})
	r := Check(context.Background(), o)
	var b bytes.Buffer
	if err := WriteTerminal(&b, r, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, c := range r.Checks {
		line := string(c.Status) + strings.Repeat(" ", 6-len(c.Status)) + c.Title
		if !strings.Contains(out, "\n"+line) {
			t.Errorf("no line %q", line)
		}
	}
	for _, want := range []string{
		"scenario bench.yml\n",
		`FAIL  pins           pin set "wide": cpus 6-7: CPUs 6-7 are not online (this machine has CPUs 0-1)`,
		"                     fix: pin only CPUs this machine has online (0-1)",
		`pid 4242 evil\x1b[2J: 90% of a CPU`,
		"1 FAIL, ",
		"this machine cannot run the scenario as written (exit 1)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("a raw escape reached the terminal:\n%q", out)
	}
	// Colour when asked.
	b.Reset()
	WriteTerminal(&b, r, true)
	if !strings.Contains(b.String(), "\x1b[") {
		t.Error("no colour when asked")
	}
}

// TestErr: a report fails with the titles of its failed checks, in order,
// and only when one failed.
func TestErr(t *testing.T) {
	t.Parallel()
	ok, warn := Result{Title: "CPUs", Status: OK}, Result{Title: "load", Status: Warn}
	pins, swap := Result{Title: "pin sets", Status: Fail}, Result{Title: "swap", Status: Fail}
	for _, tc := range []struct {
		checks []Result
		want   string
	}{
		{[]Result{ok, warn}, ""},
		{[]Result{ok, pins, warn}, "doctor: 1 check failed: pin sets"},
		{[]Result{pins, ok, swap}, "doctor: 2 checks failed: pin sets, swap"},
	} {
		r := &Report{Checks: tc.checks}
		err := r.Err()
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
			t.Errorf("%v: %v, want %q", tc.checks, err, tc.want)
		}
	}
}

// TestWriteFormats: Write renders json as WriteJSON and anything else as
// WriteTerminal.
func TestWriteFormats(t *testing.T) {
	t.Parallel()
	r := &Report{Root: "/", Checks: []Result{{ID: IDCPUs, Title: "CPUs", Status: OK, Found: "4 online"}}, Summary: Summary{OK: 1}}
	var wantJSON, wantTerm bytes.Buffer
	if err := WriteJSON(&wantJSON, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteTerminal(&wantTerm, r, false); err != nil {
		t.Fatal(err)
	}
	for format, want := range map[string]string{"json": wantJSON.String(), "terminal": wantTerm.String()} {
		var b bytes.Buffer
		if err := Write(&b, r, format, false); err != nil || b.String() != want {
			t.Errorf("Write %s = %q, %v; want %q", format, b.String(), err, want)
		}
	}
	if !slices.Equal(Formats, []string{"terminal", "json"}) {
		t.Errorf("Formats %q", Formats)
	}
}
