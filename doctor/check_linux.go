package doctor

import (
	"context"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Check inspects the machine and returns every check's result, in
// CheckIDs order. It changes nothing. A cancelled ctx ends the sampling
// and the engine calls early; their checks then say so.
func Check(ctx context.Context, o Options) *Report {
	root := o.Root
	if root == "" {
		root = "/"
	}
	root = filepath.Clean(root)
	m := &machine{root: root, real: root == "/", sc: o.Scenario}
	if o.sleep == nil {
		o.sleep = sleepCtx
	}
	if o.detectVirt == nil && m.real {
		o.detectVirt = runDetectVirt
	}
	m.load()

	// The sample comes first, before the engine and systemd-detect-virt
	// are asked anything: their own work would show as busy processes.
	sample := m.sample(ctx, o.Sample, o.sleep)

	rep := &Report{Root: root}
	if sc := o.Scenario; sc != nil {
		rep.Scenario, rep.Profile = sc.File, sc.Profile
	}
	add := func(id string, r Result) {
		r.ID, r.Title = id, titles[id]
		rep.Checks = append(rep.Checks, r)
		switch r.Status {
		case OK:
			rep.Summary.OK++
		case Warn:
			rep.Summary.Warn++
		case Fail:
			rep.Summary.Fail++
		default:
			rep.Summary.Skip++
		}
	}
	add(IDCPUs, m.checkCPUs())
	add(IDPins, m.checkPins())
	add(IDGovernor, m.checkGovernor())
	add(IDTurbo, m.checkTurbo())
	add(IDSMT, m.checkSMT())
	add(IDLoad, m.checkLoad())
	add(IDProcesses, sample.result)
	add(IDMemory, m.checkMemory())
	add(IDSwap, m.checkSwap())
	add(IDTHP, m.checkTHP())
	add(IDCgroup, m.checkCgroup())
	add(IDDocker, m.checkDocker(ctx, o.Docker))
	add(IDVirt, m.checkVirt(ctx, o.detectVirt, sample))
	return rep
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m *machine) writable(dir string) bool {
	return unix.Access(m.path(dir), unix.W_OK) == nil
}
