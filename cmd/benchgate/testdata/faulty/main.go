// Command faulty is a misbehaving HTTP service for benchgate's CLI tests: it
// can refuse to become healthy, or die in the middle of a run at a point that
// does not depend on timing.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	noHealth := flag.Bool("no-health", false, "answer 503 on /healthz forever")
	pidfile := flag.String("pidfile", "", "write the process id here")
	dieWhen := flag.String("die-when", "", "FILE:TEXT: exit(7) as soon as FILE contains TEXT")
	hugeReason := flag.Int("huge-reason", 0, "answer /healthz 503 with a reason phrase of this many bytes")
	hugeStatus := flag.Int("huge-status", 0, "answer every request but /healthz with a status code of this many digits, which net/http quotes in its error")
	hang := flag.Bool("hang", false, "never answer a request but /healthz: hold it until the client goes")
	echo := flag.String("echo", "", "print this text on start, as a service prints its settings")
	accessLog := flag.Bool("access-log", false, "print the URI of every request but /healthz, as an access log does")
	reflect := flag.String("reflect", "", "answer every request but /healthz with JSON reflecting this query parameter in the form that the parameter form names (php, html, dec, hex, pct, upper, nested)")
	side := flag.String("side", "", "with -reflect, the value of the answer's \"side\" member, so that two sides disagree")
	flag.Parse()
	if *pidfile != "" {
		os.WriteFile(*pidfile, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	fmt.Println("faulty: starting on", *addr)
	if *echo != "" {
		fmt.Println("faulty: echo:", *echo)
	}
	if *dieWhen != "" {
		file, text, _ := strings.Cut(*dieWhen, ":")
		go func() {
			for range time.Tick(5 * time.Millisecond) {
				if b, err := os.ReadFile(file); err == nil && strings.Contains(string(b), text) {
					fmt.Println("faulty: fatal: simulated crash")
					os.Exit(7)
				}
			}
		}()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if *hugeReason > 0 {
			raw(w, "HTTP/1.1 503 "+strings.Repeat("x", *hugeReason))
			return
		}
		if *noHealth {
			fmt.Println("faulty: still warming up: cache not loaded")
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if *accessLog {
			fmt.Println("faulty: access:", r.Method, r.RequestURI)
		}
		if *hugeStatus > 0 {
			raw(w, "HTTP/1.1 2"+strings.Repeat("0", *hugeStatus)+" OK")
			return
		}
		if *reflect != "" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(reflected(*side, r.URL.Query().Get("form"), r.URL.Query().Get(*reflect))))
			return
		}
		if *hang {
			<-r.Context().Done()
			return
		}
		time.Sleep(time.Millisecond)
		w.Write([]byte(`{"ok":true}`))
	})
	if err := http.ListenAndServe(*addr, mux); err != nil {
		fmt.Println("faulty:", err)
		os.Exit(1)
	}
}

// reflected is a JSON answer holding v in the form named, as servers echo
// a value back: json_encode's "\/" for "/" (php), HTML entities (html:
// named, nested in &amp;; dec; hex), lower-case percent-encoding (pct),
// upper-cased (upper), percent-encoded twice over a backslash (nested).
func reflected(side, form, v string) string {
	var b strings.Builder
	for _, c := range []byte(v) {
		switch form {
		case "pct":
			fmt.Fprintf(&b, "%%%02x", c)
		case "hex":
			fmt.Fprintf(&b, "&#x%X;", c)
		}
	}
	switch form {
	case "php":
		v = strings.ReplaceAll(v, "/", `\/`)
	case "html":
		v = strings.ReplaceAll(v, "/", "&amp;sol;")
	case "dec":
		v = strings.ReplaceAll(v, "/", "&#47;")
	case "upper":
		v = strings.ToUpper(strings.ReplaceAll(v, "/", `\/`))
	case "nested":
		v = strings.ReplaceAll(v, "/", "%5C%2f")
	default:
		v = b.String()
	}
	return fmt.Sprintf(`{"side": %q, "echo": "%s"}`, side, v)
}

// raw answers with the status line given, written on the connection as is:
// net/http would refuse to send a malformed one.
func raw(w http.ResponseWriter, status string) {
	conn, bw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	bw.WriteString(status + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	bw.Flush()
}
