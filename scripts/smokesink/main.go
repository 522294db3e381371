// Command smokesink is a tiny webhook subscriber on loopback: the one of the
// README's walk-through and of the packaging smoke test (scripts/smoke.sh).
// It answers every POST with 200 and writes one line per POST, so that a
// person sees each delivery and a shell script can wait for one with grep.
// Any other request (a GET, say) gets 200 and is not recorded, so a script can
// poll until the sink is listening. It needs nothing but Go.
//
//	smokesink [-listen ADDR] [-addr-file F] [-out F]   serve until SIGTERM or SIGINT
//	smokesink -free-port                               print a free loopback TCP port and exit
//
// Once listening it prints "smokesink: listening on HOST:PORT" on standard
// output and, with -addr-file, writes HOST:PORT to that file. Each recorded
// line is the request's method, path, aeg-event-type and
// aeg-subscription-name headers and its body with newlines removed,
// separated by single spaces; it goes to -out, or to standard output when
// -out is empty.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	addrFile := flag.String("addr-file", "", "write the bound address (host:port) to this file once listening")
	out := flag.String("out", "", "append one line per received POST to this file (default: standard output)")
	freePort := flag.Bool("free-port", false, "print a free loopback TCP port and exit")
	flag.Parse()

	if *freePort {
		port, err := pickFreePort()
		if err != nil {
			fatal(err)
		}
		fmt.Println(port)
		return
	}
	if flag.NArg() > 0 {
		fatal(fmt.Errorf("unexpected argument %q", flag.Arg(0)))
	}
	if err := serve(*listen, *addrFile, *out); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "smokesink:", err)
	os.Exit(1)
}

// pickFreePort asks the system for a free loopback port. Another process
// may take it before the caller binds it; the smoke test accepts that small
// window rather than depending on the broker's log format.
func pickFreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serve records requests until SIGTERM or SIGINT.
func serve(listen, addrFile, out string) error {
	f := os.Stdout
	if out != "" {
		var err error
		f, err = os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
	}

	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	if addrFile != "" {
		// Write the address atomically so a reader never sees half of it.
		tmp := addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(l.Addr().String()+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, addrFile); err != nil {
			return err
		}
	}
	fmt.Println("smokesink: listening on", l.Addr())

	var mu sync.Mutex
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				// A probe: "is the sink up yet?" Not a delivery.
				_, _ = io.WriteString(w, "smokesink\n")
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = bytes.ReplaceAll(bytes.ReplaceAll(body, []byte("\r"), nil), []byte("\n"), nil)
			line := strings.Join([]string{r.Method, r.URL.Path,
				"aeg-event-type=" + r.Header.Get("aeg-event-type"),
				"aeg-subscription-name=" + r.Header.Get("aeg-subscription-name"),
				string(body)}, " ") + "\n"
			mu.Lock()
			_, err = f.WriteString(line)
			mu.Unlock()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusOK)
		}),
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
