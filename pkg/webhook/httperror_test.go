package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/delivery"
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
	var se delivery.StatusError
	var ra delivery.RetryAfterError
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
