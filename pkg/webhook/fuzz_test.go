package webhook_test

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/webhook"
)

// FuzzRetryAfter reads arbitrary Retry-After values: the wait is never
// negative, delay-seconds give that many seconds (without overflowing),
// and an HTTP date agrees with net/http's reading of it.
func FuzzRetryAfter(f *testing.F) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, s := range []string{"7", " 120 ", "-5", "0", "9223372036", "9223372037", "99999999999999999999",
		"Fri, 02 Jan 2026 03:05:05 GMT", "Friday, 02-Jan-26 03:05:05 GMT", "Fri Jan  2 03:05:05 2026", "Thu, 01 Jan 1970 00:00:00 GMT", "1e3", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{}
		h.Set("Retry-After", v)
		d := webhook.RetryAfter(h, now)
		if d < 0 {
			t.Fatalf("RetryAfter(%q) = %v", v, d)
		}
		v = strings.TrimSpace(h.Get("Retry-After"))
		const most = math.MaxInt64 / int64(time.Second) // seconds
		if n, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
			want := time.Duration(min(max(n, 0), most)) * time.Second
			if d != want {
				t.Fatalf("RetryAfter(%q) = %v, want %v", v, d, want)
			}
			return
		}
		if at, err := http.ParseTime(v); err == nil {
			if want := max(at.Sub(now), 0); d != want {
				t.Fatalf("RetryAfter(%q) = %v, want %v", v, d, want)
			}
			return
		}
		if d != 0 {
			t.Fatalf("RetryAfter(%q) = %v for a value that is neither seconds nor a date", v, d)
		}
	})
}
