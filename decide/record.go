package decide

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/benchgate/benchgate/baselines"
)

// Record is the history record of a complete run (baselines.NewRecord),
// its summaries decided by Results. A run that did not complete is
// refused, with what it said: a cancelled or failed one measured fewer
// rounds than the runs its series would compare it with.
func Record(res *baselines.Results) (baselines.Record, error) {
	if res.Status != "complete" {
		msg := fmt.Sprintf("the run is %s, not complete: only complete runs are history", cmp.Or(res.Status, `""`))
		if res.Error != "" {
			msg += "; the run said: " + res.Error
		}
		return baselines.Record{}, errors.New(msg)
	}
	c, err := Results(res)
	if err != nil {
		return baselines.Record{}, err
	}
	return baselines.NewRecord(res, c), nil
}
