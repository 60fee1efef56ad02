package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/internal/textsafe"
)

// Merged writes what "benchgate merge" made of the shards for a terminal:
// the merged grid and status, then one line per shard with its cells,
// status and machine. Status and fingerprints come from the shards'
// files, which a fork may have written: each is shown as one line, as
// textsafe shows it.
func Merged(w io.Writer, m *benchdata.Results) error {
	var b strings.Builder
	fmt.Fprintf(&b, "merged %d shards: %d cells × %d rounds, status %s\n", len(m.Shards), len(m.Plan.Cells), m.Plan.Rounds, textsafe.Line(m.Status))
	for _, s := range m.Shards {
		fmt.Fprintf(&b, "  shard %d/%d: %d cells, %s, on %s (fingerprint %s)\n",
			s.Index, len(m.Shards), s.Cells, textsafe.Line(s.Status), textsafe.Line(s.Env.FingerprintText()), textsafe.Line(s.Fingerprint))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
