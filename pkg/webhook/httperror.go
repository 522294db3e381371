package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/edgegrid/edgegrid/pkg/push"
)

// Error is a failed delivery attempt of an HTTP sender: this package's, or
// the Event Hubs and Service Bus one. Status is 0 when no response arrived;
// Wait is the response's Retry-After, if any. Its text never contains the
// destination URL, whose query may carry secrets, nor a connection string.
type Error struct {
	// Sender starts the text ("webhook: ...", "servicebus: ..."); empty
	// means webhook.
	Sender string
	Status int
	Wait   time.Duration
	Err    error
}

var (
	_ push.StatusError     = (*Error)(nil)
	_ push.RetryAfterError = (*Error)(nil)
)

func (e *Error) Error() string {
	sender := e.Sender
	if sender == "" {
		sender = "webhook"
	}
	if e.Status != 0 {
		return fmt.Sprintf("%s: destination answered %d %s", sender, e.Status, http.StatusText(e.Status))
	}
	return sender + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// StatusCode implements push.StatusError.
func (e *Error) StatusCode() int { return e.Status }

// RetryAfter implements push.RetryAfterError.
func (e *Error) RetryAfter() time.Duration { return e.Wait }

// RequestError is the Error of a request that got no response: err's cause
// without the URL nor the broker host's addresses, or a timeout when ctx's
// deadline passed.
func RequestError(ctx context.Context, sender string, err error) *Error {
	return &Error{Sender: sender, Err: cause(ctx, err)}
}

// CheckResponse reads a little of resp's body, so that the connection can
// be reused, and closes it. It returns nil when success accepts the status,
// else the Error of the failure status with its Retry-After as of now. The
// body of a 101 is not read: it is the connection itself, which no
// deadline ends, and closing it closes the connection.
func CheckResponse(sender string, resp *http.Response, success func(status int) bool, now time.Time) error {
	// An answer without a body is the most common.
	if resp.Body != http.NoBody && resp.StatusCode != http.StatusSwitchingProtocols {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	}
	_ = resp.Body.Close()
	if success(resp.StatusCode) {
		return nil
	}
	return &Error{Sender: sender, Status: resp.StatusCode, Wait: RetryAfter(resp.Header, now)}
}

// errTimeout is a request that got no response before the delivery timeout.
var errTimeout = fmt.Errorf("no response before the delivery timeout: %w", context.DeadlineExceeded)

// cause strips the URL from a client error, and the addresses of the
// broker's own host (its resolver, the local end of the connection; see
// push.Redact): the text is shown to those who read the API, as a
// subscription's lastError and in a failed validation handshake's answer.
func cause(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return errTimeout
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return push.Redact(err)
}

// maxRetryAfterSeconds is the longest delay-seconds a Duration holds.
const maxRetryAfterSeconds = math.MaxInt64 / int64(time.Second)

// RetryAfter reads a Retry-After header: delay-seconds or an HTTP date,
// as a wait from now; 0 when absent, unreadable or past. A wait too long
// for a Duration is the longest there is, as time.Time.Sub gives one: the
// callers cap it.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err == nil || errors.Is(err, strconv.ErrRange) && n > 0 {
		return time.Duration(min(max(n, 0), maxRetryAfterSeconds)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
