package servicebus

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/edgegrid/edgegrid/pkg/azconn"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

// Content types of send requests.
const (
	// ContentTypeSingle is what the REST APIs document for one message whose
	// body is the request body.
	ContentTypeSingle = "application/atom+xml;type=entry;charset=utf-8"
	// ContentTypeBatch is the batch format: a JSON array of
	// {"Body": "...", "UserProperties": {...}} objects.
	ContentTypeBatch = "application/vnd.microsoft.servicebus.json"
)

// API versions sent with each request: Event Hubs' documented send version,
// and a Service Bus version with the batch format.
const (
	eventHubsAPIVersion  = "2014-01"
	serviceBusAPIVersion = "2015-01"
)

// senderName starts the text of a destination's errors (webhook.Error):
// each kind names itself, "eventhub", "servicebusqueue" or
// "servicebustopic".
func senderName(t eventgrid.EndpointType) string { return strings.ToLower(string(t)) }

// maxCachedEntities bounds the parsed connection strings kept with their
// tokens; past it the cache starts afresh.
const maxCachedEntities = 1024

// Options configure a Sender.
type Options struct {
	// TLSConfig is used for the HTTPS requests; nil means Go's defaults.
	TLSConfig *tls.Config
	// DialTLSContext, if not nil, dials instead of the transport's own TLS
	// dialing (certs.DialTLS).
	DialTLSContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxConnsPerHost bounds the connections to one namespace.
	MaxConnsPerHost int
	// UserAgent is sent with every request.
	UserAgent string
	// TokenLifetime is how long a SAS token is valid; a token is made anew
	// when less than a fifth of it remains. Zero means one hour.
	TokenLifetime time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Sender sends batches to Event Hubs and Service Bus entities. It is safe
// for concurrent use.
type Sender struct {
	client    *http.Client
	userAgent string
	lifetime  time.Duration
	now       func() time.Time

	mu       sync.Mutex
	entities map[string]*entity // by connection string
}

var _ push.Sender = (*Sender)(nil)

// New returns a Sender.
func New(o Options) *Sender {
	if o.TokenLifetime <= 0 {
		o.TokenLifetime = time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Sender{
		client:    webhook.NewHTTPClient(o.TLSConfig, o.DialTLSContext, o.MaxConnsPerHost),
		userAgent: o.UserAgent,
		lifetime:  o.TokenLifetime,
		now:       o.Now,
		entities:  make(map[string]*entity),
	}
}

// Close closes the idle connections the Sender keeps. A request in flight
// keeps its connection until it ends. It returns nil: there is nothing to
// wait for.
func (s *Sender) Close(context.Context) error {
	s.client.CloseIdleConnections()
	return nil
}

// entity is a parsed connection string with its current token.
type entity struct {
	cs      azconn.Entity
	err     error
	sendURL string

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

func (s *Sender) entity(connStr string) *entity {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entities[connStr]; ok {
		return e
	}
	if len(s.entities) >= maxCachedEntities {
		clear(s.entities)
	}
	e := &entity{}
	e.cs, e.err = azconn.ParseEntity(connStr)
	if e.err == nil {
		e.sendURL = e.cs.Resource() + "/messages"
	}
	s.entities[connStr] = e
	return e
}

// authorization returns a valid SAS token, made anew when little of its
// lifetime remains.
func (e *entity) authorization(now time.Time, lifetime time.Duration) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.token == "" || !now.Before(e.renewAt) {
		e.token = SASToken(e.cs.Resource(), e.cs.KeyName, e.cs.Key, now.Add(lifetime))
		e.renewAt = now.Add(lifetime - lifetime/5)
	}
	return e.token
}

// Send implements push.Sender: one batched request when the
// subscription batches, otherwise one request per event. Success is 201.
func (s *Sender) Send(ctx context.Context, b *push.Batch) error {
	dst := &b.Subscription.Destination
	sender := senderName(dst.EndpointType)
	e := s.entity(dst.ConnectionString)
	if e.err != nil {
		return &webhook.Error{Sender: sender, Err: fmt.Errorf("connectionString %w", e.err)}
	}
	apiVersion := serviceBusAPIVersion
	if dst.EndpointType == eventgrid.EventHub {
		apiVersion = eventHubsAPIVersion
	}
	u := e.sendURL + "?timeout=60&api-version=" + apiVersion
	auth := e.authorization(s.now(), s.lifetime)
	attrs := dst.DeliveryAttributes
	if dst.Batching() {
		return s.postBatch(ctx, sender, u, auth, b.Bodies, attrs)
	}
	for i, body := range b.Bodies {
		var err error
		if len(attrs) > 0 {
			// Message properties travel in the batch format, even for one
			// message: headers would lose their names' case and their
			// values' types.
			err = s.postBatch(ctx, sender, u, auth, b.Bodies[i:i+1], attrs)
		} else {
			err = s.post(ctx, sender, u, auth, ContentTypeSingle, body)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Sender) postBatch(ctx context.Context, sender, u, auth string, events [][]byte, attrs []eventgrid.DeliveryAttribute) error {
	buf := getBuffer()
	defer putBuffer(buf)
	*buf = appendBatch((*buf)[:0], events, attrs)
	return s.post(ctx, sender, u, auth, ContentTypeBatch, *buf)
}

// post sends one request; sender names the destination kind in errors.
func (s *Sender) post(ctx context.Context, sender, u, auth, contentType string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return &webhook.Error{Sender: sender, Err: errors.New("cannot build the request for the entity")}
	}
	h := req.Header
	h.Set("Authorization", auth)
	h.Set("Content-Type", contentType)
	if s.userAgent != "" {
		h.Set("User-Agent", s.userAgent)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return webhook.RequestError(ctx, sender, err)
	}
	return webhook.CheckResponse(sender, resp, func(status int) bool { return status == http.StatusCreated }, s.now())
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func getBuffer() *[]byte { return bufPool.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) <= 1<<20 {
		bufPool.Put(b)
	}
}
