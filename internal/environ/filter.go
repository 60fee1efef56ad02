package environ

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Filter is the getenv a scenario's ${VAR} expands with, in every command
// that loads one: the runner's credentials and the action's inputs
// (Secret) read as unset, since the scenario may come from a pull
// request. It notes those the scenario asked for that are set, so that an
// error can say why they read as unset (Explain).
type Filter struct {
	getenv func(string) string
	mu     sync.Mutex // the runner may ask from several goroutines
	hidden []string   // set secrets a ${VAR} asked for, in order
}

// NewFilter filters getenv, the whole environment.
func NewFilter(getenv func(string) string) *Filter {
	return &Filter{getenv: getenv}
}

// Getenv is getenv's value of name, or "" for a Secret.
func (f *Filter) Getenv(name string) string {
	if !Secret(name) {
		return f.getenv(name)
	}
	if f.getenv(name) != "" {
		f.mu.Lock()
		if !slices.Contains(f.hidden, name) {
			f.hidden = append(f.hidden, name)
		}
		f.mu.Unlock()
	}
	return ""
}

// Explain adds to a scenario's load error why the secrets it asked for
// read as unset; nil, or an error when none was hidden, is returned as is.
func (f *Filter) Explain(err error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil || len(f.hidden) == 0 {
		return err
	}
	return fmt.Errorf("%w\n%s: a scenario cannot read the runner's credentials nor the action's inputs, which to it are unset (see docs/action.md)", err, strings.Join(f.hidden, ", "))
}
