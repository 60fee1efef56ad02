package charts_test

import (
	"bytes"
	"fmt"
	"log"
	"strings"

	"github.com/benchgate/benchgate/charts"
)

// rpsByConcurrency is a chart as a report draws one: the means of both
// targets with their 95% intervals, concurrency on a logarithmic axis.
func rpsByConcurrency() charts.Chart {
	return charts.Chart{
		Title: "search — rps", XLabel: "concurrency", YLabel: "rps", LogX: true,
		Series: []charts.Series{
			{Name: "baseline", Points: []charts.Point{
				{X: 1, Y: 812, Lo: 802, Hi: 822, Label: "c=1"},
				{X: 8, Y: 2410, Lo: 2375, Hi: 2445, Label: "c=8"},
			}},
			{Name: "candidate", Points: []charts.Point{
				{X: 1, Y: 820, Lo: 808, Hi: 832, Label: "c=1"},
				{X: 8, Y: 1980, Lo: 1938, Hi: 2022, Label: "c=8"},
			}},
		},
	}
}

func ExampleSVG() {
	var b bytes.Buffer
	if err := charts.SVG(&b, rpsByConcurrency()); err != nil {
		log.Fatal(err)
	}
	lines := strings.SplitN(b.String(), "\n", 3)
	fmt.Println(lines[0])
	fmt.Println(lines[1])
	// Output:
	// <svg xmlns="http://www.w3.org/2000/svg" width="720" height="360" viewBox="0 0 720 360" role="img" font-family="sans-serif" font-size="12">
	// <title>search — rps</title>
}

func ExampleMermaid() {
	fmt.Print(charts.Mermaid(rpsByConcurrency()))
	// Output:
	// ```mermaid
	// %%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "#0072B2, #D55E00"}}}}%%
	// xychart-beta
	//     title "search — rps"
	//     x-axis "concurrency" ["c=1", "c=8"]
	//     y-axis "rps" 500 --> 2500
	//     line [812, 2410]
	//     line [820, 1980]
	// ```
	//
	// Lines: `baseline` blue, `candidate` orange.
}
