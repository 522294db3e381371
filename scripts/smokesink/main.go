// Command smokesink is the webhook subscriber of the packaging smoke test
// (scripts/smoke.sh): a tiny HTTP server on loopback that answers every POST
// with 200 and appends one line per request to a file, so that a shell script
// can wait for a delivery with grep. It needs nothing but Go.
//
//	smokesink -addr-file F -out F   serve until SIGTERM or SIGINT
//	smokesink -free-port            print a free loopback TCP port and exit
//
// Each line of -out is the request's method, path, aeg-event-type and
// aeg-subscription-name headers and its body with newlines removed,
// separated by single spaces.
package main

import (
	"bytes"
	"context"
	"errors"
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
	out := flag.String("out", "", "append one line per received request to this file")
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
	if *out == "" || *addrFile == "" {
		fatal(errors.New("-out and -addr-file are required"))
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
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()

	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	// Write the address atomically so a reader never sees half of it.
	tmp := addrFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(l.Addr().String()+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, addrFile); err != nil {
		return err
	}

	var mu sync.Mutex
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
