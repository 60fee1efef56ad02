package load

import "net/http"

// Request is one concrete request a worker sends, whatever its protocol:
// what a Source yields (a scenario's seeded Stream) and a Caller sends.
// The core never reads it; it is the protocols' common shape, so that a
// protocol and a request sequence need not know each other. Target is
// the request URI (path and encoded query) to append to the target's
// base URL; a gRPC call's Method is "GRPC", its Target the
// "/package.Service/Method", its Body the message as JSON and its Header
// the metadata.
type Request struct {
	Class  string // the concrete class; for a mix, the drawn component
	Method string
	Target string
	Header http.Header
	Body   []byte
	// Constant says that every request of Class is this one: a client
	// may render it once and send that from then on.
	Constant bool
}
