package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/profiler"
	"github.com/benchgate/benchgate/scenario"
	"github.com/google/pprof/profile"
)

// ProfileDir is where a run's profiles go, under its out dir.
const ProfileDir = benchdata.ProfileDir

// A profiled cell runs ABBA cycles until each side's profile holds
// MinProfileSamples samples (a tenth of a second's CPU each at 100 Hz:
// enough for the diff's floor to see a function doubling a tenth of the
// work), at most MaxProfileCycles of them.
const (
	MinProfileSamples = 300
	MaxProfileCycles  = 4
)

// samples is how many samples profiles hold, by their sample count
// ("samples count"), else one a sample row.
func samples(profiles []*profile.Profile) int64 {
	var n int64
	for _, p := range profiles {
		idx := -1
		for i, st := range p.SampleType {
			if st.Unit == "count" {
				idx = i
			}
		}
		for _, s := range p.Sample {
			if idx >= 0 && idx < len(s.Value) {
				n += s.Value[idx]
			} else {
				n++
			}
		}
	}
	return n
}

// profileWindows is the profiling plan of a cell: its side's windows in
// ABBA order, each half the section's duration (whole seconds, as a pprof
// endpoint counts them), so each side is profiled for the duration in
// all and neither side always goes first.
func profileWindows(p scenario.Profiling) time.Duration {
	return time.Duration(profiler.Seconds(p.Duration/2)) * time.Second
}

// profilePlanLine says what profiling may add to a run, for the plan.
func profilePlanLine(sc *scenario.Scenario) string {
	p := sc.Profiling
	if p.When == scenario.ProfileNever {
		return ""
	}
	per := 4 * (profileWindows(p) + sc.Load.Warmup)
	which := "of the gated cells that regress"
	if p.When == scenario.ProfileAlways {
		which = "of the gated cells"
	}
	return fmt.Sprintf("profiling: after the measured rounds, up to %d %s, each %v (both sides, ABBA, under a CPU profile; again, up to %d times in all, while a side has fewer than %d samples; profiling.when: never turns it off)",
		p.Cells, which, per, MaxProfileCycles, MinProfileSamples)
}

// saveProfiles merges each side's profiles of the run's index-th profiled
// cell (from 1), writes them under outDir's ProfileDir and records them in
// cp with the units (requests or ops) and seconds each side profiled.
func saveProfiles(outDir string, index int, profs [2][]*profile.Profile, units [2]int64, secs [2]float64, cp *benchdata.CellProfile) error {
	if err := os.MkdirAll(filepath.Join(outDir, ProfileDir), 0o755); err != nil {
		return err
	}
	sides := [2]*benchdata.ProfileSide{&cp.Baseline, &cp.Candidate}
	for i, name := range []string{"baseline", "candidate"} {
		merged, err := profile.Merge(profs[i])
		if err != nil {
			return fmt.Errorf("the %s's profiles: %w", name, err)
		}
		file := benchdata.ProfileFile(index, name+".pb.gz")
		if err := writeProfile(filepath.Join(outDir, filepath.FromSlash(file)), merged); err != nil {
			return err
		}
		*sides[i] = benchdata.ProfileSide{File: file, Requests: units[i], Seconds: secs[i]}
	}
	return nil
}

// writeProfile writes p, gzipped, to path.
func writeProfile(path string, p *profile.Profile) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	werr := p.Write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}
