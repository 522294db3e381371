package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Intervals is broker__backoffIntervals: the delays of the two back-off
// queues, in order. A valid value holds exactly two positive durations of
// at most ten years (3650 days).
//
// In the environment it is written as two comma-separated durations, each
// either .NET TimeSpan text ("00:01:00", "1.00:00:00" for one day,
// "00:00:01.5") or Go syntax ("1m", "500ms").
type Intervals []time.Duration

// intervalsAccepted describes the accepted syntax in error messages.
const intervalsAccepted = "accepted values are two comma-separated positive durations of at most 3650 days, " +
	"each hh:mm:ss, d.hh:mm:ss, hh:mm:ss.fff or Go syntax such as 1m or 500ms"

// Decode implements envconfig.Decoder. It parses exactly two comma-separated
// durations and returns an error describing the accepted syntax when value
// holds another count, a duration it cannot parse, or one that is not
// positive. *iv is left unchanged on error.
func (iv *Intervals) Decode(value string) error {
	parts := strings.Split(value, ",")
	if len(parts) != 2 {
		return errors.New(intervalsAccepted)
	}
	out := make(Intervals, 0, len(parts))
	for _, p := range parts {
		d, err := parseDuration(p)
		if err != nil || d <= 0 {
			return errors.New(intervalsAccepted)
		}
		out = append(out, d)
	}
	*iv = out
	return nil
}

// String formats the intervals the way they are documented, as
// comma-separated TimeSpan text, e.g. "00:01:00,00:10:00".
func (iv Intervals) String() string {
	s := make([]string, len(iv))
	for i, d := range iv {
		s[i] = formatTimeSpan(d)
	}
	return strings.Join(s, ",")
}

// maxInterval bounds each back-off delay, as maxSeconds bounds the keys in
// seconds.
const maxInterval = maxSeconds * time.Second

// valid reports whether iv holds exactly two positive durations within
// maxInterval.
func (iv Intervals) valid() bool {
	return len(iv) == 2 && iv[0] > 0 && iv[1] > 0 && iv[0] <= maxInterval && iv[1] <= maxInterval
}

// parseDuration accepts TimeSpan text (anything with a colon) or Go syntax.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, ":") {
		return parseTimeSpan(s)
	}
	return time.ParseDuration(s)
}

// maxDays keeps days*24h well inside the range of time.Duration.
const maxDays = 100000

// parseTimeSpan parses .NET TimeSpan text [d.]hh:mm[:ss[.fffffffff]]: hours
// 0..23, minutes and seconds 0..59, one or two digits each, up to nine
// fraction digits. Signs are not accepted.
func parseTimeSpan(s string) (time.Duration, error) {
	bad := fmt.Errorf("invalid TimeSpan %q", s)
	fields := strings.Split(s, ":")
	if len(fields) < 2 || len(fields) > 3 {
		return 0, bad
	}
	var days, frac int64
	hours := fields[0]
	if d, h, ok := strings.Cut(hours, "."); ok {
		n, ok := digits(d, 1, 6)
		if !ok || n > maxDays {
			return 0, bad
		}
		days, hours = n, h
	}
	h, ok1 := digits(hours, 1, 2)
	m, ok2 := digits(fields[1], 1, 2)
	var sec int64
	ok3 := true
	if len(fields) == 3 {
		secText, fracText, hasFrac := strings.Cut(fields[2], ".")
		sec, ok3 = digits(secText, 1, 2)
		if hasFrac {
			f, ok := digits(fracText, 1, 9)
			ok3 = ok3 && ok
			frac = f * pow10(9-len(fracText))
		}
	}
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 59 {
		return 0, bad
	}
	return time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour +
		time.Duration(m)*time.Minute + time.Duration(sec)*time.Second + time.Duration(frac), nil
}

// digits parses s when it is between minLen and maxLen ASCII digits.
func digits(s string, minLen, maxLen int) (int64, bool) {
	if len(s) < minLen || len(s) > maxLen {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// formatTimeSpan writes d as [-][d.]hh:mm:ss[.fffffffff], trailing fraction
// zeros removed.
func formatTimeSpan(d time.Duration) string {
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		d = -d // the minimum Duration is far beyond any configured value
	}
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	if days > 0 {
		fmt.Fprintf(&b, "%d.", days)
	}
	h, m, s := d/time.Hour, d%time.Hour/time.Minute, d%time.Minute/time.Second
	fmt.Fprintf(&b, "%02d:%02d:%02d", h, m, s)
	if ns := d % time.Second; ns != 0 {
		b.WriteString(strings.TrimRight(fmt.Sprintf(".%09d", ns), "0"))
	}
	return b.String()
}
