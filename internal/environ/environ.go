// Package environ keeps a CI runner's credentials away from what benchgate
// runs and reads on a pull request's behalf. It holds the one list of those
// credentials, which every filter uses: what a scenario's ${VAR} may read
// (Filter), the environment of a build, target or pre-flight command
// (Without), and the process's own initial environment block (Scrub).
//
// The last is the side door the other two leave open. Go copies the
// environment when the runtime starts, and os.Unsetenv changes only that
// copy, while /proc/PID/environ shows the block the kernel put on the main
// thread's stack at exec: any process that may read it (a target reading
// /proc/$PPID/environ, a data file naming /proc/self/environ) would find
// the token there. Scrub overwrites those entries in place; Go's copy, and
// so os.Getenv, still holds them for benchgate's own use.
package environ

import "strings"

// secrets are the credentials GitHub Actions (and the gh CLI's conventions)
// put in a job's environment. The action's inputs (INPUT_*, the
// github-token input among them) are secret by prefix.
var secrets = map[string]bool{
	"GITHUB_TOKEN":                   true,
	"GH_TOKEN":                       true,
	"GH_ENTERPRISE_TOKEN":            true,
	"GITHUB_ENTERPRISE_TOKEN":        true,
	"ACTIONS_RUNTIME_TOKEN":          true,
	"ACTIONS_RUNTIME_URL":            true,
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN": true,
	"ACTIONS_ID_TOKEN_REQUEST_URL":   true,
	"ACTIONS_CACHE_URL":              true,
	"ACTIONS_RESULTS_URL":            true,
}

// inputPrefix starts the name of every input of a GitHub action.
const inputPrefix = "INPUT_"

// Secret reports whether the variable called name is a runner's credential
// or an action's input: something the code of a pull request must not see.
func Secret(name string) bool {
	return secrets[name] || strings.HasPrefix(name, inputPrefix)
}

// Without returns the KEY=VALUE entries of environ whose key is not Secret,
// in their order.
func Without(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !Secret(k) {
			out = append(out, kv)
		}
	}
	return out
}
