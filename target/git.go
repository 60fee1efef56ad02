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
