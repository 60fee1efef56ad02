// Command api is an image project of scaffold's tests: a Dockerfile at
// its root makes it one, whatever else it holds.
package main

import (
	"flag"
	"net/http"
)

func main() {
	addr := flag.String("addr", ":9090", "listen address")
	flag.Parse()
	http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {})
	http.ListenAndServe(*addr, nil)
}
