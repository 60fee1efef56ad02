package main

import (
	"embed"
	"strings"

	"github.com/benchgate/benchgate/importers"
)

// helpTexts are the commands' help texts, kept as text files so they read
// and change as text: help/NAME.txt, NAME being the command with its
// words joined by "-" ("history append": help/history-append.txt),
// "usage" for benchgate's own.
//
//go:embed help/*.txt
var helpTexts embed.FS

// help is the help text of the command name, ending in a newline. A
// line "{{importers}}" is the list of what compare -import reads, made
// from the importers' table (importers.Help), so no text lists them by
// hand.
func help(name string) string {
	b, err := helpTexts.ReadFile("help/" + strings.ReplaceAll(name, " ", "-") + ".txt")
	if err != nil {
		panic(err) // a command without its text: TestHelpTexts finds it
	}
	return strings.ReplaceAll(string(b), "{{importers}}\n", importers.Help())
}
