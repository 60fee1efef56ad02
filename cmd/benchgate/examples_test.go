package main

import (
	"path/filepath"
	"testing"

	"github.com/benchgate/benchgate/scenario"
)

// TestExampleScenarios: every scenario the repository ships loads, so the
// docs' examples stay true.
func TestExampleScenarios(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../examples/*/benchgate*.yml")
	if err != nil || len(files) < 3 {
		t.Fatalf("example scenarios %v: %v", files, err)
	}
	env := func(k string) string {
		return map[string]string{"BASELINE_IMAGE": "demo:base", "CANDIDATE_IMAGE": "demo:head"}[k]
	}
	for _, f := range files {
		s, err := scenario.Load(f, "", env)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		t.Logf("%s: kind %s, %d classes, %d pin sets", f, s.Kind, len(s.Classes), len(s.PinSets))
	}
	s, err := scenario.Load("../../examples/grpcdemo/benchgate.yml", "", env)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != scenario.KindGRPC || len(s.PinSets) != 2 {
		t.Errorf("the gRPC demo's scenario: kind %s, %d pin sets; want grpc at 1 and 2 CPUs", s.Kind, len(s.PinSets))
	}
}
