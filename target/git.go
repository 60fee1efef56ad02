package target

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/benchgate/benchgate/internal/environ"
)

// ChildEnv is env without the secrets a CI runner holds (the one list,
// environ.Secret), plus extra. Builds and targets run the PR's code, which
// has no business with the token that can write to the repository. What a
// service needs it gets through the scenario's env.
func ChildEnv(env []string, extra []string) []string {
	return append(environ.Without(env), extra...)
}

// Git runs git -C dir args and returns its standard output, trimmed; the
// error holds what git said. git needs none of the runner's credentials.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = ChildEnv(os.Environ(), nil)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// GitCommit is the commit checked out in dir's work tree and whether the
// tree's tracked files differ from it (git status, untracked files left
// out: a run's own output directory is one). An error when dir is in no
// git work tree.
func GitCommit(ctx context.Context, dir string) (commit string, dirty bool, err error) {
	if commit, err = Git(ctx, dir, "rev-parse", "HEAD"); err != nil {
		return "", false, err
	}
	st, err := Git(ctx, dir, "status", "--porcelain", "--untracked-files=no")
	return commit, err == nil && st != "", nil
}
