package scaffold

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/internal/workflows"
)

// TestInitNotARelease: a benchgate that is not a release (go run's dev,
// a clone's build, go install of a commit, a prerelease) writes the
// workflow a release writes — naming @v1 and, for the setup action,
// DefaultVersion — with a note right above each of benchgate's actions
// that this is a guess and what to write before benchgate's first
// release, nothing else changed; the workflow is as clean to
// workflows.Lint, and the next steps say so too. A release writes no
// note (TestInit's goldens). The goldens *.dev.workflow.yml are the
// notes as they read.
func TestInitNotARelease(t *testing.T) {
	t.Parallel()
	// uses is the step of benchgate's action, note what the note above
	// it tells to write.
	for _, c := range []struct {
		name, uses, note string
	}{
		{"image", "        uses: benchgate/benchgate@v1", "#   uses: benchgate/benchgate@<sha>"},
		{"gobench", "      - uses: benchgate/benchgate/setup@v1", "#   with: {version: source}"},
		{"compose", "      - uses: benchgate/benchgate/setup@v1", "#   with: {version: source}"},
		{"plain", "      - uses: benchgate/benchgate/setup@v1", "#   with: {version: source}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, err := Detect(project(t, c.name))
			if err != nil {
				t.Fatal(err)
			}
			released := workflow(t, p, DefaultVersion)
			if bytes.Contains(released, []byte("not a release")) {
				t.Fatalf("the workflow of release %s has the note:\n%s", DefaultVersion, released)
			}
			for _, version := range []string{"dev", "", "dev-0123456789ab-dirty", "v0.0.0-20260101120000-0123456789ab", "v1.2.0-rc.1"} {
				got := workflow(t, p, version)
				lines := strings.Split(string(got), "\n")
				var kept, note []string
				for i, line := range lines {
					if strings.HasPrefix(line, "      # ") && isNote(lines[i:]) {
						note = append(note, line)
						continue
					}
					kept = append(kept, line)
				}
				if strings.Join(kept, "\n") != string(released) {
					t.Errorf("version %q: the workflow differs from the release's by more than the note:\n%s", version, got)
				}
				text := strings.Join(note, "\n")
				for _, want := range []string{"not a release", c.note, "docs/action.md#before-the-first-release"} {
					if !strings.Contains(text, want) {
						t.Errorf("version %q: the note\n%s\nsays nothing of %q", version, text, want)
					}
				}
				if !strings.Contains(string(got), c.uses+"\n") {
					t.Errorf("version %q: no %q:\n%s", version, c.uses, got)
				}
				found, err := workflows.Lint(WorkflowFile, got, actionlintConfig)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range found {
					t.Errorf("version %q: %s", version, f)
				}
			}
			if c.name == "image" || c.name == "gobench" {
				golden(t, c.name+".dev.workflow.yml", workflow(t, p, "dev"))
			}

			var out bytes.Buffer
			res := &Result{Project: p, Written: []string{filepath.Join(p.Dir, ScenarioFile)}}
			if err := res.Summary(&out); err != nil {
				t.Fatal(err)
			}
			last := strings.TrimSuffix(out.String(), "\n")
			last = last[strings.LastIndex(last, "\n")+1:]
			if !strings.HasPrefix(last, "      this benchgate is not a release: the workflow's benchgate/benchgate") || !strings.HasSuffix(last, "(docs/action.md#before-the-first-release)") {
				t.Errorf("the next steps of a benchgate that is not a release end %q", last)
			}
			res.Released = true
			out.Reset()
			res.Summary(&out)
			if strings.Contains(out.String(), "not a release") {
				t.Errorf("a release's next steps:\n%s", out.String())
			}
		})
	}
}

// workflow is the workflow init writes for p, as benchgate version.
func workflow(t *testing.T, p *Project, version string) []byte {
	t.Helper()
	files, err := Render(p, Options{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	return files[1].Data
}

// isNote: lines starts a run of comment lines that ends right above a
// step of benchgate's own actions: the note is where the step is.
func isNote(lines []string) bool {
	for _, line := range lines {
		if strings.HasPrefix(line, "      # ") {
			continue
		}
		return strings.Contains(line, "- uses: benchgate/benchgate/setup@") || line == "      - id: gate"
	}
	return false
}
