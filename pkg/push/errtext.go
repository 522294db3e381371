package push

import (
	"errors"
	"net"
	"regexp"
	"strings"
)

// What a failed attempt says to those who read the API (a subscription's
// lastError, a peek, the given-up list, the outcome stream, the console)
// names the destination and why it failed, never an address of the
// broker's own host: the resolver a lookup asked ("lookup x on
// 10.0.0.2:53: no such host") or the local end of a connection ("read tcp
// 172.17.0.2:41234->203.0.113.5:443: ..."). The addresses are taken out of
// the text where the errors of the standard library put them; the error
// itself, which the log shows to the operator, keeps them.

// Redact returns err, or, when its text names an address of the broker's
// own host, an error with the same chain (errors.Is and errors.As see
// what err holds) whose text does not. It returns nil for nil.
func Redact(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	clean := redactText(err, text)
	if clean == text {
		return err
	}
	return &redacted{err: err, text: clean}
}

// ErrorText is the text of err as the API shows it: Redact's.
func ErrorText(err error) string {
	if err == nil {
		return ""
	}
	return redactText(err, err.Error())
}

type redacted struct {
	err  error
	text string
}

func (r *redacted) Error() string { return r.text }
func (r *redacted) Unwrap() error { return r.err }

// The same addresses in a text that no longer holds the errors that made
// it (one formatted with %v): a lookup's resolver, and the local end of a
// connection's operation.
var (
	resolverText = regexp.MustCompile(`\blookup (\S+) on \S+: `)
	localText    = regexp.MustCompile(`\b(dial|read|write|close) ((?:tcp|udp)[46]?) \S+->(\S+): `)
)

// redactText takes the broker host's addresses out of text, err's text.
func redactText(err error, text string) string {
	if !strings.Contains(text, " on ") && !strings.Contains(text, "->") {
		return text // nothing to take out: the common case costs two searches
	}
	walk(err, func(e error) {
		switch e := e.(type) {
		case *net.DNSError:
			if e.Server != "" {
				text = strings.ReplaceAll(text, " on "+e.Server+": ", ": ")
			}
		case *net.OpError:
			if e.Source == nil {
				break
			}
			if src := e.Source.String(); e.Addr != nil {
				text = strings.ReplaceAll(text, " "+src+"->", " ")
			} else {
				text = strings.ReplaceAll(text, " "+src+": ", ": ")
			}
		}
	})
	text = resolverText.ReplaceAllString(text, "lookup $1: ")
	return localText.ReplaceAllString(text, "$1 $2 $3: ")
}

// walk calls fn on err and every error it wraps, depth first.
func walk(err error, fn func(error)) {
	for depth := 0; err != nil && depth < 64; depth++ {
		fn(err)
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e, fn)
			}
			return
		default:
			err = errors.Unwrap(err)
		}
	}
}
