package benchdata

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/benchgate/benchgate/internal/fsx"
)

// MergeFiles reads the results files of a grid's shards (Read) and merges
// them (Merge). Each file is within the limits of one, but their sum need
// not be: reading stops at the file that takes the rungs past MaxRungs,
// before the merge could build a file no reader would accept.
//
// A shard's profiles are files beside its results file: the merged
// results name them profiles/shardN-FILE, and the copies say where each
// is to be taken from (CopyProfiles takes them along to the merged
// results' directory).
func MergeFiles(paths []string) (*Results, []ProfileCopy, error) {
	var parts []*Results
	var copies []ProfileCopy
	rungs := 0
	for _, p := range paths {
		r, err := Read(p)
		if err != nil {
			return nil, nil, err
		}
		if rungs += len(r.Rungs); rungs > MaxRungs {
			return nil, nil, fmt.Errorf("merge: the shards up to %s hold more than %d rungs, more than one results file can", p, MaxRungs)
		}
		if r.Shard != nil {
			for i := range r.Profiles {
				cp := &r.Profiles[i]
				for _, side := range []*ProfileSide{&cp.Baseline, &cp.Candidate} {
					if side.File == "" {
						continue
					}
					local := filepath.FromSlash(side.File)
					if !filepath.IsLocal(local) {
						// A results file from a fork names its own paths:
						// nothing outside the shard's directory is taken.
						cp.Skipped = fmt.Sprintf("shard %d's profile file %q is not within its results directory", r.Shard.Index, side.File)
						side.File = ""
						continue
					}
					to := path.Join(ProfileDir, fmt.Sprintf("shard%d-%s", r.Shard.Index, path.Base(side.File)))
					copies = append(copies, ProfileCopy{From: filepath.Join(filepath.Dir(p), local), To: to, profile: len(parts), index: i})
					side.File = to
				}
			}
		}
		parts = append(parts, r)
	}
	m, err := Merge(parts)
	if err != nil {
		return nil, nil, err
	}
	// Merge lays the profiles out in shard order: a copy's profile is at
	// the offset of its shard's first.
	offset := map[int]int{}
	n := 0
	for s := 1; s <= len(parts); s++ {
		for pi, p := range parts {
			if p.Shard.Index == s {
				offset[pi] = n
				n += len(p.Profiles)
			}
		}
	}
	kept := copies[:0]
	for _, c := range copies {
		c.index += offset[c.profile]
		if c.index < len(m.Profiles) {
			kept = append(kept, c)
		}
	}
	return m, kept, nil
}

// ProfileDir is the directory, within a results directory, that holds
// the run's profiles.
const ProfileDir = "profiles"

// ProfileFile is the name, relative to a results directory, of a file of
// the run's index-th profiled cell (from 1): "profiles/cell01-NAME", NAME
// such as "baseline.pb.gz" or "flame.svg".
func ProfileFile(index int, name string) string {
	return path.Join(ProfileDir, fmt.Sprintf("cell%02d-%s", index, name))
}

// ProfileCopy is a shard's profile file a merge takes along: From, its
// path; To, its name relative to the merged results' directory.
type ProfileCopy struct {
	From, To string
	profile  int // MergeFiles: the part; then unused
	index    int // the profile's index in the merged results' Profiles
}

// CopyProfiles copies the shards' profile files into dir, the merged
// results' directory: each as a regular file of at most MaxProfileBytes.
// A file that cannot be copied leaves its cell's profile skipped, with
// why, in m: the merge keeps what it can.
func CopyProfiles(dir string, m *Results, copies []ProfileCopy) {
	for _, c := range copies {
		cp := &m.Profiles[c.index]
		if cp.Skipped != "" {
			continue
		}
		if err := copyProfile(filepath.Join(dir, filepath.FromSlash(c.To)), c.From); err != nil {
			cp.Skipped = fmt.Sprintf("the profile file could not be taken along from its shard: %v", err)
		}
	}
}

func copyProfile(to, from string) error {
	in, err := fsx.OpenLimited(from, MaxProfileBytes)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return WriteFile(to, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
