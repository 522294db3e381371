package mock

import (
	"context"
	"slices"
	"sync"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

var (
	_ eventgrid.Publisher = (*Publisher)(nil)
	_ eventgrid.Publisher = (*Recorder)(nil)
)

// Publisher is a function-field fake of eventgrid.Publisher. Publish calls
// PublishFn, which must be set; Publisher is as safe for concurrent use as
// PublishFn is.
type Publisher struct {
	PublishFn func(ctx context.Context, p eventgrid.Publication) error
}

// Publish implements eventgrid.Publisher by calling PublishFn. It panics if
// PublishFn is nil, which makes an unexpected call fail the test loudly.
func (p *Publisher) Publish(ctx context.Context, pub eventgrid.Publication) error {
	return p.PublishFn(ctx, pub)
}

// PublishCall is one call to Recorder.Publish.
type PublishCall struct {
	Topic      eventgrid.Topic
	Deliveries []eventgrid.Delivery
	Size       int64
}

// Events returns the events of the call in order.
func (c PublishCall) Events() []*eventgrid.Event {
	evs := make([]*eventgrid.Event, len(c.Deliveries))
	for i, d := range c.Deliveries {
		evs[i] = d.Event
	}
	return evs
}

// Recorder is an in-memory eventgrid.Publisher that records every call it
// accepts. By default it accepts everything; SetError makes it refuse, as a
// full broker does, and a refused call is not recorded (Publish is all or
// nothing). The zero value is ready to use, and every method is safe for
// concurrent use.
type Recorder struct {
	mu      sync.Mutex
	calls   []PublishCall
	err     error
	refused int
}

// Publish implements eventgrid.Publisher. It returns the error set with
// SetError, recording nothing, or records a copy of the deliveries slice
// (events and subscriptions are shared, as they are immutable once
// published) and returns nil.
func (r *Recorder) Publish(_ context.Context, p eventgrid.Publication) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		r.refused++
		return r.err
	}
	// The caller reuses its Event structs and slices (see
	// eventgrid.Publisher): keep copies.
	ds := make([]eventgrid.Delivery, len(p.Deliveries))
	for i, d := range p.Deliveries {
		ev := *d.Event
		ds[i] = eventgrid.Delivery{Event: &ev, Subscriptions: slices.Clone(d.Subscriptions)}
	}
	r.calls = append(r.calls, PublishCall{Topic: p.Topic, Deliveries: ds, Size: p.Size})
	return nil
}

// SetError makes every later Publish return err; nil restores accepting.
// An *eventgrid.Error with code eventgrid.EQueueFull is what the delivery
// engine returns when it is full (see QueueFull).
func (r *Recorder) SetError(err error) {
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
}

// QueueFull returns the error the delivery engine reports when it cannot
// hold a request's events, for use with SetError.
func QueueFull() error {
	return eventgrid.Errorf(eventgrid.EQueueFull, "The broker's queues are full; retry later.")
}

// Calls returns a copy of the recorded calls, oldest first.
func (r *Recorder) Calls() []PublishCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]PublishCall, len(r.calls))
	copy(out, r.calls)
	return out
}

// Deliveries returns every recorded delivery of every call, in order.
func (r *Recorder) Deliveries() []eventgrid.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []eventgrid.Delivery
	for _, c := range r.calls {
		out = append(out, c.Deliveries...)
	}
	return out
}

// Events returns the event of every recorded delivery, in order.
func (r *Recorder) Events() []*eventgrid.Event {
	ds := r.Deliveries()
	evs := make([]*eventgrid.Event, len(ds))
	for i, d := range ds {
		evs[i] = d.Event
	}
	return evs
}

// Refused returns how many calls returned the error set with SetError.
func (r *Recorder) Refused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused
}

// Reset forgets every recorded call and the refusal count; the error set
// with SetError stays.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.calls, r.refused = nil, 0
	r.mu.Unlock()
}
