package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/h1"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// Content types of delivery requests (docs/design.md#webhook-requests).
const (
	ContentTypeJSON        = "application/json; charset=utf-8"
	ContentTypeCloudEvents = "application/cloudevents-batch+json; charset=utf-8"
)

// Options configure a Sender.
type Options struct {
	// TLSConfig is used for https destinations; nil means Go's defaults.
	TLSConfig *tls.Config
	// DialTLSContext, if not nil, dials https destinations instead of the
	// transport's own TLS dialing (certs.DialTLS, which can verify
	// IP-address endpoints); requests through a proxy still use TLSConfig.
	DialTLSContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxConnsPerHost bounds the connections to one destination host.
	MaxConnsPerHost int
	// UserAgent is sent with every request.
	UserAgent string
	// Interop configures the validation handshakes.
	Interop InteropOptions
}

// Sender posts batches to their subscription's destination. It is safe for
// concurrent use and reuses connections (keep-alive) across batches.
type Sender struct {
	client    *http.Client
	conns     *h1.Client
	userAgent string
	interop   InteropOptions
	limits    limits
	endpoints endpoints
}

var _ push.Sender = (*Sender)(nil)

// New returns a Sender.
func New(o Options) *Sender {
	return &Sender{
		client: NewHTTPClient(o.TLSConfig, o.DialTLSContext, o.MaxConnsPerHost),
		conns: h1.New(h1.Options{Dial: dialer.DialContext, DialTLS: o.DialTLSContext, TLSConfig: o.TLSConfig,
			MaxConnsPerHost: perHost(o.MaxConnsPerHost)}),
		userAgent: o.UserAgent,
		interop:   o.Interop.withDefaults(),
		limits:    limits{m: map[string]*limit{}},
	}
}

// Close closes the connections the Sender keeps and cancels its dials in
// flight, waiting for them until ctx ends. A request in flight keeps its
// connection until it ends; requests after Close over the Sender's own
// connections fail.
func (s *Sender) Close(ctx context.Context) error {
	s.client.CloseIdleConnections()
	return s.conns.Close(ctx)
}

// perHost is the bound on connections to one host: n, or 100 when n is
// not positive.
func perHost(n int) int {
	if n <= 0 {
		return 100
	}
	return n
}

// dialer dials the connections of deliveries.
var dialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// NewHTTPClient returns the client outbound deliveries use: keep-alive
// connections, at most maxConnsPerHost to one host, TLS by tlsConfig or
// dialTLS (certs.DialTLS), and redirects never followed (a redirect is a
// failure: docs/design.md#delivery-success-and-retries). The Event Hubs and
// Service Bus sender uses it too.
func NewHTTPClient(tlsConfig *tls.Config, dialTLS func(ctx context.Context, network, addr string) (net.Conn, error), maxConnsPerHost int) *http.Client {
	maxConnsPerHost = perHost(maxConnsPerHost)
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			TLSClientConfig:       tlsConfig,
			DialTLSContext:        dialTLS,
			TLSHandshakeTimeout:   15 * time.Second,
			MaxIdleConns:          1024,
			MaxIdleConnsPerHost:   maxConnsPerHost,
			MaxConnsPerHost:       maxConnsPerHost,
			IdleConnTimeout:       90 * time.Second,
			ExpectContinueTimeout: time.Second,
			// The bound of the direct deliveries' client: both read the
			// same answers alike.
			MaxResponseHeaderBytes: h1.MaxHeaderBytes,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Send implements push.Sender. A batch becomes one request in the Batch
// content mode and one request per event in the Structured and Binary modes
// (where the first failure ends the batch's attempt).
func (s *Sender) Send(ctx context.Context, b *push.Batch) error {
	if p, ok := arrayPayload(b); ok {
		return s.post(ctx, b, p)
	}
	ps, err := eventPayloads(b)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if err := s.post(ctx, b, p); err != nil {
			return err
		}
	}
	return nil
}

// post sends one request of a batch.
func (s *Sender) post(ctx context.Context, b *push.Batch, p payload) error {
	dst := b.Subscription.Destination
	if dst.Validation == eventgrid.ValidationCloudEvents {
		if err := s.wait(ctx, b.Subscription); err != nil {
			return err
		}
	}
	name := senderName(dst.EndpointType)
	ep, err := s.endpoints.get(dst.EndpointURL)
	if err != nil {
		return &Error{Sender: name, Err: errors.New("cannot build the request for the destination URL")}
	}
	h := s.header(b, p)
	var resp *http.Response
	if ep.direct {
		resp, err = s.conns.Post(ctx, &ep.target, h, p.body.parts)
		resp, err = answer(ep.u, resp, err)
	} else {
		resp, err = s.send(ctx, ep, h, p.body)
	}
	if err != nil {
		return RequestError(ctx, name, err)
	}
	return CheckResponse(name, resp, func(status int) bool { return status >= 200 && status <= 204 }, time.Now())
}

// header is the header of one request of a batch: the payload's own, the
// custom delivery properties, the cloud's aeg-* headers, the SAS key of
// an EventGrid destination, the handshake's origin, the signatures and
// the User-Agent.
func (s *Sender) header(b *push.Batch, p payload) http.Header {
	sub := b.Subscription
	dst := sub.Destination
	h := make(http.Header, 8)
	for k, v := range p.header {
		h[k] = v
	}
	// The fixed headers are set by their canonical names, as Header.Set
	// would set them, without canonicalising them anew for every request,
	// and their values share one array: one allocation, not one each.
	vals := make([]string, 0, 7)
	set := func(k, v string) {
		vals = append(vals, v)
		h[k] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	if p.contentType != "" {
		set("Content-Type", p.contentType)
	}
	setProperties(h, dst.DeliveryAttributes, b.Bodies)
	set("Aeg-Event-Type", "Notification")
	set("Aeg-Subscription-Name", sub.Name)
	set("Aeg-Delivery-Count", strconv.Itoa(b.DeliveryCount))
	set("Aeg-Metadata-Version", "1")
	if sub.EventDeliverySchema == eventgrid.EventGridSchema {
		if v, ok := commonDataVersion(b.Bodies); ok {
			set("Aeg-Data-Version", v)
		}
	}
	if dst.EndpointType == eventgrid.EventGrid && dst.SASKey != "" {
		h.Set("aeg-sas-key", dst.SASKey)
	}
	if dst.Validation == eventgrid.ValidationCloudEvents {
		h.Set(headerRequestOrigin, s.interop.Origin)
	}
	if len(dst.SigningSecrets) > 0 {
		sign(h, dst.SigningSecrets, sub.UID, p.body, time.Now())
	}
	if s.userAgent != "" {
		set("User-Agent", s.userAgent)
	}
	return h
}

// send sends a request through the http.Client.
func (s *Sender) send(ctx context.Context, ep *endpoint, h http.Header, body *body) (*http.Response, error) {
	req, err := newRequest(ctx, ep, body.reader())
	if err != nil {
		return nil, err
	}
	// GetBody lets the transport replay the request on a fresh connection
	// when a kept-alive one turns out to be closed before anything was sent.
	req.GetBody = body.getBody
	req.ContentLength = body.size
	req.Header = h
	return s.roundTrip(req)
}

// senderName is how a destination kind names itself in its errors:
// "webhook: ..." or "eventgrid: ...".
func senderName(t eventgrid.EndpointType) string {
	switch t {
	case eventgrid.WebHook:
		return "webhook"
	case eventgrid.EventGrid:
		return "eventgrid"
	}
	return strings.ToLower(string(t))
}

// commonDataVersion returns the dataVersion every event of a batch shares;
// ok is false when they differ, as one header cannot speak for all.
func commonDataVersion(bodies [][]byte) (v string, ok bool) {
	for i, body := range bodies {
		dv := schema.DataVersion(body)
		if i == 0 {
			v = dv
		} else if dv != v {
			return "", false
		}
	}
	return v, len(bodies) > 0
}

// body is a delivery request's JSON array, held as the events' own bytes
// with the brackets and commas between them, so that no event is copied
// but into a body of up to flatMax bytes, sent from one slice.
type body struct {
	parts [][]byte
	size  int64
	flat  []byte
	// one holds parts for a body of one event, the most common: the
	// brackets and the event, without a slice of their own.
	one [3][]byte
}

// flatMax is the largest body sent from one slice: net/http writes the
// headers and the body in one piece when it knows the body to be in memory
// (a *bytes.Reader), and in two writes, so two packets to read, otherwise.
// Copying a body this small costs less than the write it saves.
const flatMax = 16 << 10

var (
	openBracket  = []byte{'['}
	comma        = []byte{','}
	closeBracket = []byte{']'}
)

// newBody lays out the array. With rewriteTopic, EventGridSchema events get
// topicName as their topic, or null when it is empty
// (docs/design.md#eventgrid-destination).
func newBody(events [][]byte, rewriteTopic bool, topicName string) *body {
	b := &body{}
	if n := 2*len(events) + 1; n <= len(b.one) {
		b.parts = b.one[:0]
	} else {
		b.parts = make([][]byte, 0, n)
	}
	b.add(openBracket)
	for i, ev := range events {
		if i > 0 {
			b.add(comma)
		}
		if rewriteTopic {
			b.add(schema.WithTopic(ev, topicName))
		} else {
			b.add(ev)
		}
	}
	b.add(closeBracket)
	return b
}

func (b *body) add(p []byte) {
	b.parts = append(b.parts, p)
	b.size += int64(len(p))
}

// getBody is the request's GetBody: the body again, from its start.
func (b *body) getBody() (io.ReadCloser, error) { return b.reader(), nil }

func (b *body) reader() io.ReadCloser {
	if b.size <= flatMax {
		if b.flat == nil {
			b.flat = make([]byte, 0, b.size)
			for _, p := range b.parts {
				b.flat = append(b.flat, p...)
			}
		}
		return io.NopCloser(bytes.NewReader(b.flat))
	}
	return &partsReader{parts: b.parts}
}

// partsReader reads a sequence of byte slices as one stream.
type partsReader struct {
	parts [][]byte
	i     int
	off   int
}

func (r *partsReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.i < len(r.parts) {
		c := copy(p[n:], r.parts[r.i][r.off:])
		n += c
		r.off += c
		if r.off == len(r.parts[r.i]) {
			r.i++
			r.off = 0
		}
	}
	if n == 0 && r.i >= len(r.parts) {
		return 0, io.EOF
	}
	return n, nil
}

// WriteTo lets io.Copy write each part directly.
func (r *partsReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for r.i < len(r.parts) {
		n, err := w.Write(r.parts[r.i][r.off:])
		total += int64(n)
		if err != nil {
			r.off += n
			return total, err
		}
		r.i++
		r.off = 0
	}
	return total, nil
}

func (r *partsReader) Close() error { return nil }
