package gate_test

import (
	"fmt"

	"github.com/benchgate/benchgate/gate"
)

// One cell's throughput over five rounds on each target, decided by the
// default rule at 95%.
func ExampleDecide() {
	s := gate.DefaultSettings
	base := gate.Summarize([]float64{812, 805, 820, 798, 815}, s.Effective())
	cand := gate.Summarize([]float64{901, 890, 912, 895, 905}, s.Effective())
	d := gate.Decide(gate.RPS, base, cand, s)
	fmt.Printf("baseline  %.1f ±%.1f rps\n", base.Mean, base.HalfWidth)
	fmt.Printf("candidate %.1f ±%.1f rps\n", cand.Mean, cand.HalfWidth)
	fmt.Printf("%s: %s\n", d.Verdict, d.Reason)
	// Output:
	// baseline  810.0 ±10.7 rps
	// candidate 900.6 ±10.6 rps
	// improvement: candidate 11.2% higher, intervals apart
}
