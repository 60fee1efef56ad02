// Command server is the Go service of scaffold's tests: a module without
// benchmarks, whose main package init finds to build.
package main

import (
	"flag"
	"net/http"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	http.ListenAndServe(*addr, nil)
}
