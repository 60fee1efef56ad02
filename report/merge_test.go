package report

import (
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
)

// TestMerged: the merged grid, then each shard on one line, the shards'
// own text (a fork may have written it) shown escaped.
func TestMerged(t *testing.T) {
	t.Parallel()
	xeon := benchdata.Environment{CPUModel: "Xeon", CPUs: 8, OS: "linux", Arch: "amd64", Kernel: "6.8"}
	m := &benchdata.Results{
		Status: "cancelled",
		Plan:   benchdata.Plan{Cells: make([]benchdata.Cell, 5), Rounds: 3},
		Shards: []benchdata.ShardRun{
			{Index: 1, Cells: 3, Status: "complete", Fingerprint: "3f2a9c1b7d4e", Env: xeon},
			{Index: 2, Cells: 2, Status: "cancelled\n::error::x", Fingerprint: "\x1b[2J", Env: xeon},
		},
	}
	var b strings.Builder
	if err := Merged(&b, m); err != nil {
		t.Fatal(err)
	}
	want := "merged 2 shards: 5 cells × 3 rounds, status cancelled\n" +
		"  shard 1/2: 3 cells, complete, on Xeon × 8, linux/amd64, kernel 6.8 (fingerprint 3f2a9c1b7d4e)\n" +
		`  shard 2/2: 2 cells, cancelled\n::error::x, on Xeon × 8, linux/amd64, kernel 6.8 (fingerprint \x1b[2J)` + "\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
