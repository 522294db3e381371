package push

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"time"
)

// Outcome is the result of one delivery attempt, by the names cloud Event
// Grid documents for lastDeliveryOutcome.
type Outcome uint8

// The outcomes.
const (
	OutcomeNone            Outcome = iota // no attempt yet
	OutcomeDelivered                      // 200-204 (or the destination's success)
	OutcomeBadRequest                     // 400
	OutcomeUnauthorized                   // 401
	OutcomeForbidden                      // 403
	OutcomeNotFound                       // 404, 410
	OutcomeTimedOut                       // 408, or no answer in time
	OutcomePayloadTooLarge                // 413
	OutcomeBusy                           // 429, 503
	OutcomeSocketError                    // connection refused or reset, TLS failure
	OutcomeResolutionError                // host name not found
	OutcomeProbation                      // never attempted because of probation
	OutcomeAborted                        // any other status or error
)

var outcomeNames = [...]string{
	OutcomeNone:            "None",
	OutcomeDelivered:       "Delivered",
	OutcomeBadRequest:      "BadRequest",
	OutcomeUnauthorized:    "Unauthorized",
	OutcomeForbidden:       "Forbidden",
	OutcomeNotFound:        "NotFound",
	OutcomeTimedOut:        "TimedOut",
	OutcomePayloadTooLarge: "PayloadTooLarge",
	OutcomeBusy:            "Busy",
	OutcomeSocketError:     "SocketError",
	OutcomeResolutionError: "ResolutionError",
	OutcomeProbation:       "Probation",
	OutcomeAborted:         "Aborted",
}

// String returns the documented name.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "Aborted"
}

// StatusError is implemented by Sender errors that carry the destination's
// answer. Senders of every destination type return errors that implement
// it when a response arrived, so that the engine can classify them.
type StatusError interface {
	error
	// StatusCode is the HTTP status the destination answered (0: none).
	StatusCode() int
}

// RetryAfterError is implemented by Sender errors whose response said when
// to try again (Retry-After on 429 and 503).
type RetryAfterError interface {
	error
	RetryAfter() time.Duration
}

// Result is what the engine keeps of one failed or successful attempt.
type Result struct {
	Outcome    Outcome
	StatusCode int           // 0 when no response arrived
	RetryAfter time.Duration // 0 when the response did not say
}

// Classify turns what a Sender returned into a Result.
func Classify(err error) Result {
	if err == nil {
		return Result{Outcome: OutcomeDelivered}
	}
	var r Result
	var se StatusError
	if errors.As(err, &se) && se.StatusCode() != 0 {
		r.StatusCode = se.StatusCode()
		r.Outcome = outcomeOfStatus(r.StatusCode)
		var ra RetryAfterError
		if errors.As(err, &ra) {
			r.RetryAfter = ra.RetryAfter()
		}
		return r
	}
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidErr x509.CertificateInvalidError
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr):
		r.Outcome = OutcomeResolutionError
		if dnsErr.IsTimeout {
			r.Outcome = OutcomeTimedOut
		}
	case errors.Is(err, context.DeadlineExceeded):
		r.Outcome = OutcomeTimedOut
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &invalidErr):
		r.Outcome = OutcomeSocketError
	case errors.As(err, &netErr) && netErr.Timeout():
		r.Outcome = OutcomeTimedOut
	case errors.As(err, new(*net.OpError)):
		r.Outcome = OutcomeSocketError
	default:
		r.Outcome = OutcomeAborted
	}
	return r
}

func outcomeOfStatus(code int) Outcome {
	switch {
	case code >= 200 && code <= 204:
		return OutcomeDelivered
	case code == 400:
		return OutcomeBadRequest
	case code == 401:
		return OutcomeUnauthorized
	case code == 403:
		return OutcomeForbidden
	case code == 404, code == 410:
		return OutcomeNotFound
	case code == 408:
		return OutcomeTimedOut
	case code == 413:
		return OutcomePayloadTooLarge
	case code == 429, code == 503:
		return OutcomeBusy
	}
	return OutcomeAborted
}
