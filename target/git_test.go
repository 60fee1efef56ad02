package target

import (
	"slices"
	"testing"
)

// TestChildEnvDropsSecrets: a build's, target's or pre-flight command's
// environment has none of environ's secrets, the action's inputs among
// them, and keeps the rest in order, extra last.
func TestChildEnvDropsSecrets(t *testing.T) {
	t.Parallel()
	in := []string{"PATH=/bin", "GITHUB_TOKEN=ghs_a", "INPUT_GITHUB-TOKEN=ghs_b", "ACTIONS_RUNTIME_TOKEN=c",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN=d", "GH_ENTERPRISE_TOKEN=e", "HOME=/root", "GITHUB_ACTIONS=true"}
	got := ChildEnv(in, []string{"PORT=8080"})
	want := []string{"PATH=/bin", "HOME=/root", "GITHUB_ACTIONS=true", "PORT=8080"}
	if !slices.Equal(got, want) {
		t.Errorf("ChildEnv = %q, want %q", got, want)
	}
}
