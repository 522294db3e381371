package webhook_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		value string
		want  time.Duration
	}{
		{"", 0},
		{"5", 5 * time.Second},
		{" 7 ", 7 * time.Second},
		{"0", 0},
		{"-3", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
	} {
		h := http.Header{}
		if tt.value != "" {
			h.Set("Retry-After", tt.value)
		}
		if got := webhook.RetryAfter(h, now); got != tt.want {
			t.Errorf("Retry-After %q = %v, want %v", tt.value, got, tt.want)
		}
	}
}

// The HTTP senders' errors: a failure status with its Retry-After, a
// request error without its URL, and the sender's name in the text.
func TestCheckResponseAndRequestError(t *testing.T) {
	now := time.Now()
	created := func(s int) bool { return s == http.StatusCreated }
	resp := func(status int, retryAfter string) *http.Response {
		h := http.Header{}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("body"))}
	}
	if err := webhook.CheckResponse("servicebus", resp(201, ""), created, now); err != nil {
		t.Errorf("201: %v", err)
	}
	err := webhook.CheckResponse("servicebus", resp(503, "30"), created, now)
	var se push.StatusError
	var ra push.RetryAfterError
	if !errors.As(err, &se) || se.StatusCode() != 503 || !errors.As(err, &ra) || ra.RetryAfter() != 30*time.Second {
		t.Errorf("503 with Retry-After 30: %v", err)
	}
	if got := err.Error(); got != "servicebus: destination answered 503 Service Unavailable" {
		t.Errorf("text %q", got)
	}

	secretURL := "https://h.example/x?sig=s3cr3t"
	uerr := &url.Error{Op: "Post", URL: secretURL, Err: errors.New("connection refused")}
	if err := webhook.RequestError(context.Background(), "webhook", uerr); strings.Contains(err.Error(), "s3cr3t") || err.Error() != "webhook: connection refused" {
		t.Errorf("request error %q", err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(-time.Second))
	defer cancel()
	if err := webhook.RequestError(ctx, "servicebus", uerr); !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "servicebus: no response before the delivery timeout") {
		t.Errorf("timed-out request error %q", err)
	}
	if got := (&webhook.Error{Err: errors.New("x")}).Error(); got != "webhook: x" {
		t.Errorf("error without a sender: %q", got)
	}
}

// TestRequestErrorNoHostAddresses: a request error's text, which the API
// shows as a subscription's lastError, names neither the broker host's
// resolver nor its end of the connection, and keeps the error's chain.
func TestRequestErrorNoHostAddresses(t *testing.T) {
	// A destination that resets the connection once it has the request.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(c)
			for {
				if l, err := r.ReadString('\n'); err != nil || l == "\r\n" {
					break
				}
			}
			_ = c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	}()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	var local string
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			local = c.LocalAddr().String()
		}
		return c, err
	}
	resp, err := (&http.Client{Transport: tr}).Post("http://"+ln.Addr().String()+"/hook?code=s3cr3t", "application/json", strings.NewReader("{}"))
	if err == nil {
		resp.Body.Close()
		t.Fatal("the destination answered")
	}
	if !strings.Contains(err.Error(), local) {
		t.Fatalf("the client's error %q does not name the local address %s: nothing to check", err, local)
	}
	got := webhook.RequestError(context.Background(), "webhook", err)
	if text := got.Error(); strings.Contains(text, local) || strings.Contains(text, "s3cr3t") || !strings.Contains(text, ln.Addr().String()) {
		t.Errorf("request error %q: want the destination's address %s, not the local one %s nor the URL", text, ln.Addr(), local)
	}
	var op *net.OpError
	if !errors.As(got, &op) || op.Source == nil {
		t.Errorf("the error's chain lost its *net.OpError")
	}

	dns := &url.Error{Op: "Post", URL: "https://sink.example/", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "sink.example", Server: "10.255.255.53:53", IsNotFound: true}}}
	if text := webhook.RequestError(context.Background(), "servicebus", dns).Error(); text != "servicebus: dial tcp: lookup sink.example: no such host" {
		t.Errorf("lookup error %q", text)
	}
}
