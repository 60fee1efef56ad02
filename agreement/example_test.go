package agreement_test

import (
	"fmt"

	"github.com/benchgate/benchgate/agreement"
)

// The baseline and the candidate answer the same query with the same data in
// another key order, but a different price for the second item; the
// timestamp each stamps on its answer is ignored.
func ExampleCompare() {
	answer := func(body string) agreement.Response {
		return agreement.Response{Status: 200, ContentType: "application/json", Body: []byte(body)}
	}
	baseline := answer(`{"generated_at":"2026-03-01T12:00:00Z","items":[{"id":1,"price":12},{"id":2,"price":12}]}`)
	candidate := answer(`{"items":[{"price":12,"id":1},{"price":13,"id":2}],"generated_at":"2026-03-01T12:00:02Z"}`)

	r := agreement.Compare(baseline, candidate, agreement.Options{Ignore: []string{"$.generated_at"}})
	fmt.Println("agree:", r.Agree)
	fmt.Println(r.Reason)
	fmt.Println("baseline at the difference:", r.ExcerptA)
	// Output:
	// agree: false
	// $.items[1].price: 12 vs 13
	// baseline at the difference: "price":12}]}
}
