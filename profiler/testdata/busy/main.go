// Command busy is the profiler tests' target: a Go service that serves
// net/http/pprof on a loopback port it prints, and burns CPU in busyWork
// until its stdin closes. It is built with go build, so perf finds its
// symbols (go test strips its own binaries).
package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
)

//go:noinline
func busyWork(n int) int {
	s := 0
	for i := range n {
		s += i * i % 7
	}
	return s
}

var sink int

func main() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(lis.Addr().String())
	go http.Serve(lis, nil)
	stop := make(chan struct{})
	go func() { bufio.NewReader(os.Stdin).ReadString('\n'); close(stop) }()
	for {
		select {
		case <-stop:
			return
		default:
			sink += busyWork(100_000)
		}
	}
}
