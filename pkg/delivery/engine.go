package delivery

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Options configure the Engine. Zero values are replaced by the defaults of
// DefaultOptions.
type Options struct {
	// DefaultMaxDeliveryAttempts and DefaultTTL apply unless a
	// subscription's retryPolicy sets its own.
	DefaultMaxDeliveryAttempts int
	DefaultTTL                 time.Duration
	// DefaultMaxEventsPerBatch and DefaultMaxBatchBytes fill in the cap a
	// batching subscription leaves unset.
	DefaultMaxEventsPerBatch int
	DefaultMaxBatchBytes     int
	// Backoff holds the delays of the two back-off lists: after the first
	// failed attempt, and after every later one.
	Backoff [2]time.Duration
	// DeliverTimeout bounds one delivery request.
	DeliverTimeout time.Duration
	// MaxConcurrent bounds the requests in flight across all subscriptions;
	// MaxPerSubscription bounds them per subscription, so that a hanging
	// subscriber cannot take every slot.
	MaxConcurrent      int
	MaxPerSubscription int
	// MaxQueuedEvents bounds the queued (event, subscription) pairs and
	// MaxQueuedBytes the bytes of the distinct events they hold. Publish
	// refuses a request that would exceed either.
	MaxQueuedEvents int
	MaxQueuedBytes  int64
	// LogDeliverySuccess logs every delivered batch; LogDeliveryFailure
	// every failed attempt; LogEventExpiry every event dropped by its retry
	// policy.
	LogDeliverySuccess bool
	LogDeliveryFailure bool
	LogEventExpiry     bool
	// LogRateWindow and LogRateBurst rate-limit the "delivery attempt
	// failed" and "event dropped by retry policy" lines, so that a dead
	// endpoint cannot flood the log: each subscription emits at most
	// LogRateBurst lines of each kind per window of LogRateWindow and counts
	// the rest. The next line emitted carries that count as "suppressed";
	// if none comes, a "log lines suppressed" line with fields "kind" and
	// "suppressed" reports it when the window ends, or when the
	// subscription's queue is discarded. Zero means the default; a negative
	// LogRateBurst turns the limit off.
	LogRateWindow time.Duration
	LogRateBurst  int
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		DefaultMaxDeliveryAttempts: 30,
		DefaultTTL:                 7200 * time.Second,
		DefaultMaxEventsPerBatch:   10,
		DefaultMaxBatchBytes:       1058576,
		Backoff:                    [2]time.Duration{time.Minute, 10 * time.Minute},
		DeliverTimeout:             60 * time.Second,
		MaxConcurrent:              100,
		MaxPerSubscription:         16,
		MaxQueuedEvents:            100000,
		MaxQueuedBytes:             256 << 20,
		LogDeliveryFailure:         true,
		LogEventExpiry:             true,
		LogRateWindow:              time.Minute,
		LogRateBurst:               10,
	}
}

func (o *Options) setDefaults() {
	d := DefaultOptions()
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&o.DefaultMaxDeliveryAttempts, d.DefaultMaxDeliveryAttempts)
	set(&o.DefaultMaxEventsPerBatch, d.DefaultMaxEventsPerBatch)
	set(&o.DefaultMaxBatchBytes, d.DefaultMaxBatchBytes)
	set(&o.MaxConcurrent, d.MaxConcurrent)
	set(&o.MaxPerSubscription, d.MaxPerSubscription)
	set(&o.MaxQueuedEvents, d.MaxQueuedEvents)
	if o.DefaultTTL <= 0 {
		o.DefaultTTL = d.DefaultTTL
	}
	for i := range o.Backoff {
		if o.Backoff[i] <= 0 {
			o.Backoff[i] = d.Backoff[i]
		}
	}
	if o.DeliverTimeout <= 0 {
		o.DeliverTimeout = d.DeliverTimeout
	}
	if o.MaxQueuedBytes <= 0 {
		o.MaxQueuedBytes = d.MaxQueuedBytes
	}
	if o.LogRateWindow <= 0 {
		o.LogRateWindow = d.LogRateWindow
	}
	if o.LogRateBurst == 0 {
		o.LogRateBurst = d.LogRateBurst
	}
}

// Batch is one delivery request.
type Batch struct {
	Subscription *eventgrid.EventSubscription
	// Bodies are the events' JSON objects (eventgrid.Event.Body), in order.
	Bodies [][]byte
	// DeliveryCount is the number of attempts already made for the events
	// of the batch (the largest, when they differ): aeg-delivery-count.
	DeliveryCount int
}

// Sender delivers batches to destinations. It must be safe for concurrent
// use and must return once ctx is done.
type Sender interface {
	// Send makes one delivery attempt and returns nil if the destination
	// accepted the batch (HTTP 200-204). The engine reuses b afterwards:
	// Send must not keep it, or its Bodies slice, once it returns.
	Send(ctx context.Context, b *Batch) error
}

// Engine delivers published events to their subscriptions. Create it with
// New; it implements eventgrid.Publisher and eventgrid.SubscriptionObserver.
//
// Lock order: Engine.mu -> queue.mu. The budget counters are atomics.
type Engine struct {
	opts    Options
	sender  Sender
	metrics Metrics
	log     zerolog.Logger

	sem         chan struct{} // one token per request in flight
	stop        chan struct{} // closed by Close: workers take no more batches
	sendCtx     context.Context
	cancelSends context.CancelFunc
	wg          sync.WaitGroup // workers

	queuedEvents atomic.Int64
	queuedBytes  atomic.Int64
	// epoch is the origin of the back-off due times items keep as
	// milliseconds, which is half the size of a time.
	epoch time.Time

	mu     sync.RWMutex
	queues map[uint64]*queue // by subscription UID
	closed bool
}

var (
	_ eventgrid.Publisher            = (*Engine)(nil)
	_ eventgrid.SubscriptionObserver = (*Engine)(nil)
)

// New returns an engine that delivers through sender. metrics may be nil.
// Workers start on demand; Close stops them.
func New(opts Options, sender Sender, metrics Metrics, logger zerolog.Logger) *Engine {
	opts.setDefaults()
	if metrics == nil {
		metrics = NopMetrics{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Engine{
		opts:        opts,
		sender:      sender,
		metrics:     metrics,
		log:         logger.With().Str("component", "delivery").Logger(),
		sem:         make(chan struct{}, opts.MaxConcurrent),
		stop:        make(chan struct{}),
		sendCtx:     ctx,
		cancelSends: cancel,
		queues:      map[uint64]*queue{},
		epoch:       time.Now(),
	}
}

// shared is one publish request's events, held by the queues of the
// subscriptions they matched. Its events were allocated together, so the
// request's whole size stays in the budget until its last delivery is done.
// Queues keep only each event's body (and this), not its Event, so that the
// Event structs, needed only to route, are freed once the request is queued.
type shared struct {
	size     int64
	refs     atomic.Int64 // deliveries still queued or in flight
	accepted time.Time    // when the request was accepted; TTLs count from here
}

// Publish implements eventgrid.Publisher.
func (e *Engine) Publish(_ context.Context, p eventgrid.Publication) error {
	var pairs, bytes int64
	var accepted time.Time
	for _, d := range p.Deliveries {
		pairs += int64(len(d.Subscriptions))
		bytes += int64(len(d.Event.Body))
		if accepted.IsZero() || d.Event.Accepted.Before(accepted) {
			accepted = d.Event.Accepted // the earliest, should they differ
		}
	}
	if pairs == 0 {
		return nil
	}
	bytes = max(bytes, p.Size)
	if !e.reserve(pairs, bytes) {
		e.metrics.Rejected(int(pairs))
		return eventgrid.Errorf(eventgrid.EQueueFull, "The broker holds its limit of queued events (%d deliveries, %d bytes) while subscribers catch up; retry later.", e.opts.MaxQueuedEvents, e.opts.MaxQueuedBytes)
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		e.queuedEvents.Add(-pairs)
		e.queuedBytes.Add(-bytes)
		return eventgrid.Errorf(eventgrid.EUnavailable, "The broker is shutting down.")
	}
	s := &shared{size: bytes, accepted: accepted}
	s.refs.Store(pairs)
	for _, d := range p.Deliveries {
		for _, sub := range d.Subscriptions {
			if q := e.queues[sub.UID]; q == nil || !q.push(item{body: d.Event.Body, s: s}) {
				// Deleted since the request was matched.
				e.metrics.Dropped(sub, DropDeleted, 1)
				e.release(s)
			}
		}
	}
	return nil
}

// Admit reports whether a request of about bytes bytes could be queued now.
// The publish path asks before reading a body, so that while the queues are
// full a request is refused without being read and decoded; Publish still
// makes the binding decision.
func (e *Engine) Admit(bytes int64) bool {
	return e.queuedEvents.Load() < int64(e.opts.MaxQueuedEvents) && e.queuedBytes.Load()+bytes <= e.opts.MaxQueuedBytes
}

// reserve takes room for pairs deliveries of bytes bytes from the budget, all
// or nothing.
func (e *Engine) reserve(pairs, bytes int64) bool {
	if n := e.queuedEvents.Add(pairs); n > int64(e.opts.MaxQueuedEvents) {
		e.queuedEvents.Add(-pairs)
		return false
	}
	if n := e.queuedBytes.Add(bytes); n > e.opts.MaxQueuedBytes {
		e.queuedBytes.Add(-bytes)
		e.queuedEvents.Add(-pairs)
		return false
	}
	return true
}

// release returns one delivery of s to the budget, and s's bytes with its
// last delivery.
func (e *Engine) release(s *shared) {
	e.queuedEvents.Add(-1)
	if s.refs.Add(-1) == 0 {
		e.queuedBytes.Add(-s.size)
	}
}

// SubscriptionPut implements eventgrid.SubscriptionObserver: it creates the
// subscription's queue or applies new settings to the events it holds.
func (e *Engine) SubscriptionPut(sub *eventgrid.EventSubscription) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	if q, ok := e.queues[sub.UID]; ok {
		q.update(sub)
		return
	}
	e.queues[sub.UID] = &queue{e: e, sub: sub}
}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver: it discards
// the subscription's queue.
func (e *Engine) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	e.mu.Lock()
	q, ok := e.queues[sub.UID]
	delete(e.queues, sub.UID)
	e.mu.Unlock()
	if !ok {
		return
	}
	if n := q.discard(DropDeleted); n > 0 {
		e.log.Warn().Str("topic", sub.Topic).Str("subscription", sub.Name).Int("events", n).Msg("event subscription deleted; its queued events were discarded")
	}
}

// Close stops delivery: workers take no new batches, requests in flight get
// until timeout to finish (then they are cancelled), and the events still
// queued are discarded, as nothing is persisted by design. It returns the
// number discarded.
func (e *Engine) Close(timeout time.Duration) int {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return 0
	}
	e.closed = true
	queues := make([]*queue, 0, len(e.queues))
	for _, q := range e.queues {
		queues = append(queues, q)
	}
	e.mu.Unlock()
	close(e.stop)
	for _, q := range queues {
		q.stopTimer()
	}
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	t := time.NewTimer(timeout)
	select {
	case <-done:
		t.Stop()
	case <-t.C:
		e.log.Warn().Dur("timeout", timeout).Msg("delivery requests still in flight at the stop timeout; cancelling them")
		e.cancelSends()
		<-done
	}
	e.cancelSends()
	n := 0
	for _, q := range queues {
		n += q.discard(DropShutdown)
	}
	e.log.Info().Int("discarded", n).Msg("delivery stopped; queued events are not persisted by design")
	return n
}
