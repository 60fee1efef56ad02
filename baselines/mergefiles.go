package baselines

import "fmt"

// MergeFiles reads the results files of a grid's shards (Read) and merges
// them (Merge). Each file is within the limits of one, but their sum need
// not be: reading stops at the file that takes the rungs past MaxRungs,
// before the merge could build a file no reader would accept.
func MergeFiles(paths []string) (*Results, error) {
	var parts []*Results
	rungs := 0
	for _, p := range paths {
		r, err := Read(p)
		if err != nil {
			return nil, err
		}
		if rungs += len(r.Rungs); rungs > MaxRungs {
			return nil, fmt.Errorf("merge: the shards up to %s hold more than %d rungs, more than one results file can", p, MaxRungs)
		}
		parts = append(parts, r)
	}
	return Merge(parts)
}
