package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/importers"
	"github.com/benchgate/benchgate/internal/cli"
)

// TestHelpTexts: every help file is its command's text, exactly as -h
// shows it (scripts compare the output), and every command has one.
func TestHelpTexts(t *testing.T) {
	t.Parallel()
	entries, err := helpTexts.ReadDir("help")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, strings.ReplaceAll(strings.TrimSuffix(e.Name(), ".txt"), "-", " "))
	}
	slices.Sort(names)
	want := []string{"calibrate", "comment", "compare", "doctor", "export", "gate", "history", "history append", "history drift", "history prune", "history show", "history site", "init", "merge", "run", "usage"}
	if !slices.Equal(names, want) {
		t.Errorf("help texts %v, want %v", names, want)
	}
	for _, name := range names {
		text := help(name)
		if !strings.HasSuffix(text, "\n") || strings.HasSuffix(text, "\n\n") || strings.TrimSpace(text) == "" {
			t.Errorf("help/%s.txt: %q does not end in exactly one newline", name, text)
		}
		args := append(strings.Fields(name), "-h")
		switch name {
		case "usage":
			args = []string{"help"}
		case "history":
			args = []string{"history", "help"}
		}
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr, func(string) string { return "" })
		if code := cli.ExitCode(err); code != cli.ExitPass {
			t.Errorf("%s: exit %d (%v)", strings.Join(args, " "), code, err)
		}
		switch name {
		case "usage", "history":
			if stdout.String() != text {
				t.Errorf("%s: stdout\n%s\nwant help/%s.txt", strings.Join(args, " "), stdout.String(), name)
			}
		default:
			if !strings.HasPrefix(stderr.String(), "Usage: benchgate "+name+" ") || !strings.Contains(stderr.String(), "\n\n"+text+"\nFlags:\n") {
				t.Errorf("%s: stderr\n%s\nwant help/%s.txt before the flags", strings.Join(args, " "), stderr.String(), name)
			}
		}
	}
}

// TestCompareHelpNamesEveryImporter: compare's help, written by hand,
// names every tool and format -import takes (importers.Names), so a new
// importer cannot be left out of it.
func TestCompareHelpNamesEveryImporter(t *testing.T) {
	t.Parallel()
	text := strings.Join(strings.Fields(help("compare")), " ")
	for _, name := range importers.Names() {
		if !strings.Contains(text, name) {
			t.Errorf("help/compare.txt does not name %q, which -import takes", name)
		}
	}
}
