package storagequeue

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/edgegrid/edgegrid/pkg/azconn"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
)

// Sender implements push.Sender for StorageQueue destinations. It is
// safe for concurrent use and keeps one queue client per subscription.
type Sender struct {
	mu      sync.Mutex
	clients map[uint64]*client // by subscription UID
}

type client struct {
	connStr, queue string
	q              *azqueue.QueueClient
}

var (
	_ push.Sender       = (*Sender)(nil)
	_ push.PartialError = (*Error)(nil)
)

// New returns a Sender.
func New() *Sender { return &Sender{clients: map[uint64]*client{}} }

// Error is a failed send. Its text holds the service's status and error
// code, never the queue's URL or the connection string.
type Error struct {
	Status int
	Code   string
	Err    error
	// Enqueued is how many of the batch's first events the queue took
	// before this failure.
	Enqueued int
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("storagequeue: queue service answered %d %s", e.Status, e.Code)
	}
	return "storagequeue: " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// StatusCode implements push.StatusError.
func (e *Error) StatusCode() int { return e.Status }

// Accepted implements push.PartialError: the events enqueued before
// the failure are not sent again.
func (e *Error) Accepted() int { return e.Enqueued }

// Send implements push.Sender: one message per event of the batch, in
// order; the first failure ends the attempt, and its *Error says how many
// events were enqueued before it, so that a retry sends only the rest.
func (s *Sender) Send(ctx context.Context, b *push.Batch) error {
	q, err := s.client(b.Subscription)
	if err != nil {
		return err
	}
	var opts *azqueue.EnqueueMessageOptions
	if ttl := b.Subscription.Destination.QueueMessageTTLSeconds; ttl != nil {
		t := int32(*ttl)
		opts = &azqueue.EnqueueMessageOptions{TimeToLive: &t}
	}
	for i, body := range b.Bodies {
		if _, err := q.EnqueueMessage(ctx, base64.StdEncoding.EncodeToString(body), opts); err != nil {
			e := describe(ctx, err)
			e.Enqueued = i
			return e
		}
	}
	return nil
}

// client returns the subscription's queue client, made anew when its
// connection string or queue changed.
func (s *Sender) client(sub *eventgrid.EventSubscription) (*azqueue.QueueClient, error) {
	d := &sub.Destination
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.clients[sub.UID]; c != nil && c.connStr == d.ConnectionString && c.queue == d.QueueName {
		return c.q, nil
	}
	// The engine retries; the SDK's own retries would only hide failures.
	opts := &azqueue.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}
	// The SDK reads keys in their documented case only: it gets the string
	// as the PUT read it (azconn), in the form it takes.
	st, err := azconn.ParseStorage(d.ConnectionString)
	if err != nil {
		return nil, &Error{Err: errors.New("the connection string is not usable")}
	}
	q, err := azqueue.NewQueueClientFromConnectionString(st.ConnectionString(), d.QueueName, opts)
	if err != nil {
		return nil, &Error{Err: errors.New("the connection string is not usable")}
	}
	s.clients[sub.UID] = &client{connStr: d.ConnectionString, queue: d.QueueName, q: q}
	return q, nil
}

// SubscriptionPut implements eventgrid.SubscriptionObserver: nothing to do
// until the next send.
func (s *Sender) SubscriptionPut(*eventgrid.EventSubscription) {}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver: it forgets
// the subscription's client.
func (s *Sender) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	s.mu.Lock()
	delete(s.clients, sub.UID)
	s.mu.Unlock()
}

// describe keeps the status and code of a service error and the kind of a
// network one; the SDK's own texts carry the queue's URL.
func describe(ctx context.Context, err error) *Error {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return &Error{Status: re.StatusCode, Code: re.ErrorCode}
	}
	if ctx.Err() != nil {
		return &Error{Err: fmt.Errorf("no answer before the delivery timeout: %w", context.DeadlineExceeded)}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &Error{Err: ue.Err}
	}
	return &Error{Err: errors.New("the queue service could not be reached")}
}
