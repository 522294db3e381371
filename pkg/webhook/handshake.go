package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// InteropOptions configure the validation handshakes
// (docs/design.md#validation-handshakes).
type InteropOptions struct {
	// Origin is the broker's host name, sent in WebHook-Request-Origin
	// (CloudEvents handshake and the deliveries that follow it).
	Origin string
	// RequestRate is the rate, in requests per minute, asked for in
	// WebHook-Request-Rate; 0 means DefaultRequestRate.
	RequestRate int
	// HandshakeTimeout bounds a handshake; 0 means DefaultHandshakeTimeout.
	// The caller's context may end it sooner.
	HandshakeTimeout time.Duration
}

// Defaults of InteropOptions.
const (
	DefaultRequestRate      = 6000
	DefaultHandshakeTimeout = 30 * time.Second
)

// The validation event of the EventGrid handshake.
const (
	validationEventType  = "Microsoft.EventGrid.SubscriptionValidationEvent"
	headerAllowedOrigin  = "WebHook-Allowed-Origin"
	headerAllowedRate    = "WebHook-Allowed-Rate"
	headerRequestOrigin  = "WebHook-Request-Origin"
	headerRequestRate    = "WebHook-Request-Rate"
	maxHandshakeResponse = 64 << 10
)

func (o InteropOptions) withDefaults() InteropOptions {
	if o.RequestRate <= 0 {
		o.RequestRate = DefaultRequestRate
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	return o
}

// limits holds the rates CloudEvents handshakes agreed, by subscription.
//
// Lock order: Registry.mu -> limits.mu (the registry calls SubscriptionPut
// and SubscriptionDeleted with its lock held); limits.mu is never held
// during network I/O or while waiting for a slot.
type limits struct {
	mu sync.Mutex
	// m is keyed by the lower-cased "topic/subscription"; an entry is made
	// by a handshake and bound to the subscription's UID once it is stored.
	m map[string]*limit
}

// limit spaces the deliveries to one subscription's endpoint.
type limit struct {
	uid      uint64 // 0 until the subscription is stored
	url      string // the endpoint the rate was agreed for
	interval time.Duration
	next     time.Time // guarded by limits.mu
}

func limitKey(sub *eventgrid.EventSubscription) string {
	return strings.ToLower(sub.Topic) + "/" + strings.ToLower(sub.Name)
}

// Handshake validates a WebHook endpoint as its subscription's
// destination.properties.validation asks (docs/design.md#validation-handshakes),
// when sub is new or its
// endpoint URL or validation mode differs from old's; otherwise, and for
// other destinations, it does nothing. It has the signature of
// registry.Options.Handshake.
//
//   - EventGrid: POST of a Microsoft.EventGrid.SubscriptionValidationEvent
//     with a random validationCode; the endpoint must answer 200 with
//     {"validationResponse": "<the code>"}.
//   - CloudEvents: OPTIONS with WebHook-Request-Origin and
//     WebHook-Request-Rate; the endpoint must answer 200 with
//     WebHook-Allowed-Origin equal to the origin or "*". Its
//     WebHook-Allowed-Rate ("*": no limit; absent: the rate asked for)
//     becomes a ceiling on the subscription's deliveries.
//
// It waits at most InteropOptions.HandshakeTimeout, and never past ctx. A
// refusal is an *eventgrid.Error (EInvalidDestination) saying why: the
// status, a wrong answer, a timeout or an unreachable endpoint; the text
// never contains the URL. It is safe for concurrent use.
//
// A CloudEvents handshake that passes returns onStored, which makes the
// agreed rate the ceiling of the subscription it is called with: the
// registry calls it once it has stored the subscription, so that a put
// refused after its handshake leaves no rate behind and the live
// subscription's rate as it was. Otherwise onStored is nil.
func (s *Sender) Handshake(ctx context.Context, old, sub *eventgrid.EventSubscription) (onStored func(stored *eventgrid.EventSubscription), err error) {
	dst := sub.Destination
	if dst.EndpointType != eventgrid.WebHook {
		return nil, nil
	}
	if old != nil && old.Destination.EndpointURL == dst.EndpointURL && old.Destination.Validation == dst.Validation {
		return nil, nil
	}
	within := s.interop.HandshakeTimeout
	if d, ok := ctx.Deadline(); ok && time.Until(d) < within {
		within = time.Until(d).Round(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	switch dst.Validation {
	case eventgrid.ValidationEventGrid:
		return nil, s.eventGridHandshake(ctx, within, sub)
	case eventgrid.ValidationCloudEvents:
		l, err := s.cloudEventsHandshake(ctx, within, sub)
		if err != nil {
			return nil, err
		}
		return func(stored *eventgrid.EventSubscription) { s.install(stored, l) }, nil
	}
	return nil, nil
}

func (s *Sender) eventGridHandshake(ctx context.Context, within time.Duration, sub *eventgrid.EventSubscription) error {
	code, err := randomHex(16)
	if err != nil {
		return err
	}
	id, err := randomHex(16)
	if err != nil {
		return err
	}
	ev := []map[string]any{{
		"id":              id,
		"topic":           sub.Topic,
		"subject":         "",
		"data":            map[string]any{"validationCode": code},
		"eventType":       validationEventType,
		"eventTime":       time.Now().UTC().Format(time.RFC3339Nano),
		"metadataVersion": "1",
		"dataVersion":     "1",
	}}
	body, _ := json.Marshal(ev)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.Destination.EndpointURL, bytes.NewReader(body))
	if err != nil {
		return refused(eventgrid.ValidationEventGrid, "the request could not be built for the endpoint URL")
	}
	h := req.Header
	h.Set("Content-Type", ContentTypeJSON)
	h.Set("aeg-event-type", "SubscriptionValidation")
	h.Set("aeg-subscription-name", sub.Name)
	h.Set("aeg-delivery-count", "0")
	h.Set("aeg-metadata-version", "1")
	h.Set("aeg-data-version", "1")
	s.setUserAgent(h)
	resp, err := s.client.Do(req)
	if err != nil {
		return unreachable(ctx, within, eventgrid.ValidationEventGrid, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxHandshakeResponse))
	if err != nil {
		return unreachable(ctx, within, eventgrid.ValidationEventGrid, err)
	}
	if resp.StatusCode != http.StatusOK {
		return refused(eventgrid.ValidationEventGrid, "the endpoint answered %d %s; it must answer 200 OK with {\"validationResponse\": \"<validationCode>\"}", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	var v struct {
		ValidationResponse *string `json:"validationResponse"`
	}
	if err := json.Unmarshal(answer, &v); err != nil || v.ValidationResponse == nil {
		return refused(eventgrid.ValidationEventGrid, "the endpoint's answer is not {\"validationResponse\": \"<validationCode>\"}")
	}
	if *v.ValidationResponse != code {
		return refused(eventgrid.ValidationEventGrid, "the endpoint answered a validationResponse that is not the validationCode it was sent")
	}
	return nil
}

// cloudEventsHandshake returns the rate the endpoint allowed.
func (s *Sender) cloudEventsHandshake(ctx context.Context, within time.Duration, sub *eventgrid.EventSubscription) (*limit, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, sub.Destination.EndpointURL, nil)
	if err != nil {
		return nil, refused(eventgrid.ValidationCloudEvents, "the request could not be built for the endpoint URL")
	}
	req.Header.Set(headerRequestOrigin, s.interop.Origin)
	req.Header.Set(headerRequestRate, strconv.Itoa(s.interop.RequestRate))
	s.setUserAgent(req.Header)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, unreachable(ctx, within, eventgrid.ValidationCloudEvents, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxHandshakeResponse))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, refused(eventgrid.ValidationCloudEvents, "the endpoint answered OPTIONS with %d %s; it must answer 200 OK with %s", resp.StatusCode, http.StatusText(resp.StatusCode), headerAllowedOrigin)
	}
	origin := strings.TrimSpace(resp.Header.Get(headerAllowedOrigin))
	switch {
	case origin == "":
		return nil, refused(eventgrid.ValidationCloudEvents, "the endpoint's answer has no %s header: it did not allow deliveries", headerAllowedOrigin)
	case origin != "*" && !strings.EqualFold(origin, s.interop.Origin):
		return nil, refused(eventgrid.ValidationCloudEvents, "the endpoint allows origin %q, not this broker's %q", origin, s.interop.Origin)
	}
	perMinute := s.interop.RequestRate
	if r := strings.TrimSpace(resp.Header.Get(headerAllowedRate)); r == "*" {
		perMinute = 0
	} else if r != "" {
		n, err := strconv.Atoi(r)
		if err != nil || n <= 0 {
			return nil, refused(eventgrid.ValidationCloudEvents, "the endpoint's %s %q is neither * nor a positive integer", headerAllowedRate, r)
		}
		perMinute = n
	}
	l := &limit{url: sub.Destination.EndpointURL}
	if perMinute > 0 {
		l.interval = time.Minute / time.Duration(perMinute)
	}
	return l, nil
}

// install makes l, the rate a handshake agreed, the ceiling of stored.
func (s *Sender) install(stored *eventgrid.EventSubscription, l *limit) {
	s.limits.mu.Lock()
	defer s.limits.mu.Unlock()
	l.uid = stored.UID
	s.limits.m[limitKey(stored)] = l
}

// wait returns when sub may be sent its next request under the rate its
// CloudEvents handshake agreed. It returns an error, without taking a slot,
// when the slot comes after ctx's deadline or ctx ends first.
func (s *Sender) wait(ctx context.Context, sub *eventgrid.EventSubscription) error {
	s.limits.mu.Lock()
	l := s.limits.m[limitKey(sub)]
	if l == nil || l.interval == 0 || l.url != sub.Destination.EndpointURL {
		s.limits.mu.Unlock()
		return nil
	}
	now := time.Now()
	at := now
	if l.next.After(now) {
		at = l.next
	}
	if d, ok := ctx.Deadline(); ok && at.After(d) {
		s.limits.mu.Unlock()
		return &Error{Err: fmt.Errorf("the endpoint's %s leaves no request before the delivery timeout", headerAllowedRate)}
	}
	l.next = at.Add(l.interval)
	s.limits.mu.Unlock()
	if !at.After(now) {
		return nil
	}
	t := time.NewTimer(at.Sub(now))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return &Error{Err: errors.New("delivery timeout while waiting for the endpoint's allowed rate")}
	}
}

// SubscriptionPut implements eventgrid.SubscriptionObserver: it binds the
// rate a handshake agreed to the stored subscription, and forgets it when
// the subscription no longer asks for the CloudEvents handshake. It does
// not block.
func (s *Sender) SubscriptionPut(sub *eventgrid.EventSubscription) {
	s.limits.mu.Lock()
	defer s.limits.mu.Unlock()
	k := limitKey(sub)
	if sub.Destination.Validation != eventgrid.ValidationCloudEvents {
		delete(s.limits.m, k)
	} else if l := s.limits.m[k]; l != nil {
		l.uid = sub.UID
	}
}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver: it forgets
// the subscription's agreed rate, unless a handshake for a new
// subscription of the same name has replaced it meanwhile.
func (s *Sender) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	s.limits.mu.Lock()
	defer s.limits.mu.Unlock()
	k := limitKey(sub)
	if l := s.limits.m[k]; l != nil && l.uid == sub.UID {
		delete(s.limits.m, k)
	}
}

func (s *Sender) setUserAgent(h http.Header) {
	if s.userAgent != "" {
		h.Set("User-Agent", s.userAgent)
	}
}

func refused(mode eventgrid.ValidationMode, format string, args ...any) error {
	return eventgrid.Errorf(eventgrid.EInvalidDestination, "The %s validation handshake with properties.destination.properties.endpointUrl failed: %s.", mode, fmt.Sprintf(format, args...))
}

// unreachable describes a handshake request that got no answer within
// the handshake's time limit.
func unreachable(ctx context.Context, within time.Duration, mode eventgrid.ValidationMode, err error) error {
	if ctx.Err() != nil {
		return refused(mode, "the endpoint did not answer within %s", within)
	}
	return refused(mode, "the endpoint could not be reached (%v)", cause(ctx, err))
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("webhook: random validation code: %w", err)
	}
	return hex.EncodeToString(b), nil
}
