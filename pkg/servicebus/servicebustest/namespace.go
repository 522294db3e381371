package servicebustest

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// Kinds of entity.
const (
	EventHub = "EventHub"
	Queue    = "ServiceBusQueue"
	Topic    = "ServiceBusTopic"
)

// Content types the send APIs accept.
const (
	contentTypeSingle = "application/atom+xml;type=entry;charset=utf-8"
	contentTypeBatch  = "application/vnd.microsoft.servicebus.json"
)

// Message is one message an entity accepted.
type Message struct {
	// Body is the message body: the request body of a single send, or the
	// decoded Body of a batch element.
	Body []byte
	// UserProperties are the message's properties, with their JSON types
	// (string, float64, bool).
	UserProperties map[string]any
	// Batched says whether the message came in the batch format.
	Batched bool
}

// Namespace is a fake namespace served over TLS on a loopback port. Its
// methods are safe for concurrent use.
type Namespace struct {
	// Host is the namespace's host:port, as a connection string's Endpoint
	// names it.
	Host string

	release chan struct{} // closed when the test ends

	mu       sync.Mutex
	entities map[string]*entityState // by lower-cased name
	fail     []failure
	hung     bool
	refused  []string
	requests int
}

type entityState struct {
	kind     string
	name     string
	keyName  string
	key      string
	messages []Message
}

type failure struct {
	status     int
	retryAfter string
}

// New starts a namespace whose server certificate (for 127.0.0.1) is
// issued by ca. It stops when the test ends.
func New(tb testing.TB, ca *testpki.CA) *Namespace {
	tb.Helper()
	n := &Namespace{entities: make(map[string]*entityState), release: make(chan struct{})}
	cert := ca.Issue(tb, "127.0.0.1", []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, time.Now().Add(time.Hour))
	n.Host = testpki.ServeTLS(tb, &tls.Config{Certificates: []tls.Certificate{cert}}, n)
	tb.Cleanup(func() { close(n.release) })
	return n
}

// AddEntity creates an entity of kind (EventHub, Queue or Topic) named name
// with a send key, and returns its entity-scoped connection string.
func (n *Namespace) AddEntity(kind, name string) string {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	e := &entityState{kind: kind, name: name, keyName: "send", key: base64.StdEncoding.EncodeToString(raw[:])}
	n.mu.Lock()
	n.entities[strings.ToLower(name)] = e
	n.mu.Unlock()
	return n.ConnectionString(name, e.keyName, e.key)
}

// ConnectionString returns an entity-scoped connection string for name with
// the given key.
func (n *Namespace) ConnectionString(name, keyName, key string) string {
	return "Endpoint=sb://" + n.Host + "/;SharedAccessKeyName=" + keyName + ";SharedAccessKey=" + key + ";EntityPath=" + name
}

// Messages returns the messages entity name accepted, in order.
func (n *Namespace) Messages(name string) []Message {
	n.mu.Lock()
	defer n.mu.Unlock()
	if e := n.entities[strings.ToLower(name)]; e != nil {
		return append([]Message(nil), e.messages...)
	}
	return nil
}

// Fail makes the next request answer status, with a Retry-After header when
// retryAfter is not empty. Calls queue up.
func (n *Namespace) Fail(status int, retryAfter string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.fail = append(n.fail, failure{status, retryAfter})
}

// Hang makes every request the namespace would accept from now on wait,
// unanswered, until its client leaves or the test ends, as a namespace
// that stopped answering; then its connection is closed, still
// unanswered.
func (n *Namespace) Hang() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hung = true
}

// Refused returns why each refused request was refused, in order.
func (n *Namespace) Refused() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.refused...)
}

// Requests returns how many requests arrived.
func (n *Namespace) Requests() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.requests
}

// ServeHTTP implements the send APIs.
func (n *Namespace) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	n.requests++
	n.mu.Unlock()
	status, msgs, reason := n.check(r)
	n.mu.Lock()
	hung := n.hung
	n.mu.Unlock()
	if status == http.StatusCreated && hung {
		select {
		case <-r.Context().Done():
		case <-n.release:
		}
		// A hung namespace never answers. Returning would answer 200 OK,
		// and the client can still read that: over TLS it says it leaves
		// (close_notify, which ends r's context) before it closes the
		// connection, and its transport takes an answer that races its
		// deadline. Aborting closes the connection unanswered.
		panic(http.ErrAbortHandler)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if status == http.StatusCreated && len(n.fail) > 0 {
		f := n.fail[0]
		n.fail = n.fail[1:]
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.WriteHeader(f.status)
		return
	}
	if status != http.StatusCreated {
		n.refused = append(n.refused, reason)
		http.Error(w, reason, status)
		return
	}
	e := n.entities[strings.ToLower(entityName(r.URL.Path))]
	e.messages = append(e.messages, msgs...)
	w.WriteHeader(http.StatusCreated)
}

func entityName(path string) string {
	return strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/messages")
}

// check validates a send request and returns the messages it carries, or
// the status and reason of its refusal.
func (n *Namespace) check(r *http.Request) (int, []Message, string) {
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, nil, "method " + r.Method
	}
	if !strings.HasSuffix(r.URL.Path, "/messages") {
		return http.StatusNotFound, nil, "path " + r.URL.Path + " is not /<entity>/messages"
	}
	name := entityName(r.URL.Path)
	n.mu.Lock()
	e := n.entities[strings.ToLower(name)]
	n.mu.Unlock()
	if e == nil {
		return http.StatusNotFound, nil, "no entity " + name
	}
	v := r.URL.Query().Get("api-version")
	switch {
	case e.kind == EventHub && v != "2014-01":
		return http.StatusBadRequest, nil, "Event Hubs api-version must be 2014-01, got " + v
	case e.kind != EventHub && v != "" && v != "2013-08" && v != "2014-01" && v != "2015-01":
		return http.StatusBadRequest, nil, "unknown Service Bus api-version " + v
	}
	if reason := checkToken(r.Header.Get("Authorization"), "https://"+r.Host+"/"+name, e); reason != "" {
		return http.StatusUnauthorized, nil, reason
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
	if err != nil || len(body) > 1<<20 {
		return http.StatusRequestEntityTooLarge, nil, "body too large or unreadable"
	}
	switch ct := strings.ToLower(strings.ReplaceAll(r.Header.Get("Content-Type"), " ", "")); ct {
	case contentTypeSingle:
		return http.StatusCreated, []Message{{Body: body}}, ""
	case contentTypeBatch:
		msgs, reason := decodeBatch(body)
		if reason != "" {
			return http.StatusBadRequest, nil, reason
		}
		return http.StatusCreated, msgs, ""
	default:
		return http.StatusUnsupportedMediaType, nil, "content type " + ct
	}
}

// checkToken verifies a SAS token the way the services do: every part
// present, the key name known, not expired, the audience a prefix of the
// entity's URI (any of the http, https and sb schemes, ignoring case) and
// the signature the HMAC-SHA256 of the encoded audience and the expiry.
func checkToken(auth, entityURI string, e *entityState) string {
	const prefix = "SharedAccessSignature "
	if !strings.HasPrefix(auth, prefix) {
		return "Authorization is not a SharedAccessSignature"
	}
	parts := map[string]string{}
	for _, p := range strings.Split(strings.TrimPrefix(auth, prefix), "&") {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return "malformed token part " + p
		}
		parts[k] = v
	}
	sr, sig, se, skn := parts["sr"], parts["sig"], parts["se"], parts["skn"]
	if sr == "" || sig == "" || se == "" || skn == "" {
		return "token lacks sr, sig, se or skn"
	}
	if name, _ := url.QueryUnescape(skn); name != e.keyName {
		return "unknown key name " + skn
	}
	exp, err := strconv.ParseInt(se, 10, 64)
	if err != nil || time.Unix(exp, 0).Before(time.Now()) {
		return "token expired or se malformed"
	}
	aud, err := url.QueryUnescape(sr)
	if err != nil {
		return "sr is not URL-encoded"
	}
	if !audienceCovers(aud, entityURI) {
		return "audience " + aud + " does not cover " + entityURI
	}
	mac := hmac.New(sha256.New, []byte(e.key))
	mac.Write([]byte(sr + "\n" + se))
	want := mac.Sum(nil)
	gotText, err := url.QueryUnescape(sig)
	if err != nil {
		return "sig is not URL-encoded"
	}
	got, err := base64.StdEncoding.DecodeString(gotText)
	if err != nil || !hmac.Equal(got, want) {
		return "signature mismatch (got " + hex.EncodeToString(got) + ")"
	}
	return ""
}

func audienceCovers(aud, uri string) bool {
	strip := func(s string) string {
		s = strings.ToLower(s)
		for _, p := range []string{"https://", "http://", "sb://"} {
			s = strings.TrimPrefix(s, p)
		}
		return strings.TrimSuffix(s, "/")
	}
	a, u := strip(aud), strip(uri)
	return a != "" && (u == a || strings.HasPrefix(u, a+"/"))
}

// batchElement is one message of the batch format. Unknown members are
// refused, so that a misspelt member shows.
type batchElement struct {
	Body             *string        `json:"Body"`
	BrokerProperties map[string]any `json:"BrokerProperties"`
	UserProperties   map[string]any `json:"UserProperties"`
	IsBodyBase64     bool           `json:"IsBodyBase64"`
}

func decodeBatch(body []byte) ([]Message, string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var elems []batchElement
	if err := dec.Decode(&elems); err != nil {
		return nil, "batch body is not an array of messages: " + err.Error()
	}
	if len(elems) == 0 {
		return nil, "empty batch"
	}
	msgs := make([]Message, 0, len(elems))
	for i, el := range elems {
		if el.Body == nil {
			return nil, fmt.Sprintf("batch element %d has no Body", i)
		}
		b := []byte(*el.Body)
		if el.IsBodyBase64 {
			var err error
			if b, err = base64.StdEncoding.DecodeString(*el.Body); err != nil {
				return nil, fmt.Sprintf("batch element %d: Body is not base64", i)
			}
		}
		for k, v := range el.UserProperties {
			switch v.(type) {
			case string, float64, bool:
			default:
				return nil, fmt.Sprintf("batch element %d: property %s is not a string, number or boolean", i, k)
			}
		}
		msgs = append(msgs, Message{Body: b, UserProperties: el.UserProperties, Batched: true})
	}
	return msgs, ""
}
