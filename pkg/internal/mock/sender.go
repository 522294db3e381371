package mock

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

var _ push.Sender = (*Sender)(nil)

// Sender is the fake of push.Sender: SendFn answers each batch (a nil
// SendFn accepts every one), and every call is recorded, when it returns,
// with copies of what it was given, so that a test can read it after the
// engine has reused the batch. Sender keeps the contract of
// pkg/testkit/sendertest and is safe for concurrent use when SendFn is.
type Sender struct {
	SendFn func(ctx context.Context, b *push.Batch) error
	// Now stamps the calls; nil means time.Now. A test on a fake clock
	// passes the clock's Now.
	Now func() time.Time
	// Discard keeps no calls, only the count of accepted events: for
	// benchmarks, where keeping the calls would be what is measured.
	Discard bool

	accepted atomic.Int64

	mu    sync.Mutex
	calls []SendCall
}

// SendCall is one call to Sender.Send.
type SendCall struct {
	// At is when Send was called.
	At time.Time
	// Subscription is the name of the batch's subscription.
	Subscription  string
	Bodies        [][]byte
	DeliveryCount int
	// Err is what Send returned.
	Err error
}

// IDs returns the "id" of each event of the call, in order.
func (c SendCall) IDs() []string {
	ids := make([]string, len(c.Bodies))
	for i, body := range c.Bodies {
		v, _ := rawjson.Member(body, "id")
		ids[i], _ = rawjson.Unquote(v)
	}
	return ids
}

// Send implements push.Sender: it returns what SendFn returns, and
// records the call.
func (s *Sender) Send(ctx context.Context, b *push.Batch) error {
	var call SendCall
	if !s.Discard {
		now := time.Now
		if s.Now != nil {
			now = s.Now
		}
		call = SendCall{At: now(), Subscription: b.Subscription.Name, DeliveryCount: b.DeliveryCount, Bodies: make([][]byte, len(b.Bodies))}
		for i, body := range b.Bodies {
			call.Bodies[i] = bytes.Clone(body)
		}
	}
	var err error
	if s.SendFn != nil {
		err = s.SendFn(ctx, b)
	}
	if err == nil {
		s.accepted.Add(int64(len(b.Bodies)))
	}
	if !s.Discard {
		call.Err = err
		s.mu.Lock()
		s.calls = append(s.calls, call)
		s.mu.Unlock()
	}
	return err
}

// Calls returns the calls that have returned so far, in the order they
// returned.
func (s *Sender) Calls() []SendCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Accepted returns how many events were in the batches Send returned nil
// for, Discard or not.
func (s *Sender) Accepted() int { return int(s.accepted.Load()) }

// Delivered returns, for the subscription named subscription, how many
// times each event (by id) was in a batch Send returned nil for.
func (s *Sender) Delivered(subscription string) map[string]int {
	m := map[string]int{}
	for _, c := range s.Calls() {
		if c.Subscription == subscription && c.Err == nil {
			for _, id := range c.IDs() {
				m[id]++
			}
		}
	}
	return m
}
