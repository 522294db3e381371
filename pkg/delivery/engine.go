package delivery

import (
	"context"
	"math/rand/v2"
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
	// DefaultSchedule is the delivery profile of subscriptions whose
	// retryPolicy names none.
	DefaultSchedule eventgrid.RetrySchedule
	// ExponentialScale multiplies the CloudExponential delays and
	// probation lengths; tests shorten them with it.
	ExponentialScale float64
	// ProbationAfterFailures is the number of consecutive failed attempts
	// that put a CloudExponential subscription on probation (B4).
	ProbationAfterFailures int
	// DefaultMaxEventsPerBatch and DefaultMaxBatchBytes fill in the cap a
	// batching subscription leaves unset.
	DefaultMaxEventsPerBatch int
	DefaultMaxBatchBytes     int
	// Backoff holds the delays of the two back-off lists: after the first
	// failed attempt, and after every later one.
	Backoff [2]time.Duration
	// DeliverTimeout bounds one delivery request.
	DeliverTimeout time.Duration
	// MaxConcurrent is the number of delivery workers, and so the bound on
	// requests in flight. MaxPerSubscription bounds one subscription's
	// requests in flight; a subscription starts at one and doubles its
	// allowance with each success, halving it on each failure, so that
	// endpoints that hang or fail hold one worker each. Subscriptions whose
	// last attempt failed share at most half of the workers.
	MaxConcurrent      int
	MaxPerSubscription int
	// MaxQueuedEvents bounds the queued (event, subscription) pairs and
	// MaxQueuedBytes the bytes of the distinct events they hold, over the
	// whole broker. MaxQueuedEventsPerSubscription and
	// MaxQueuedBytesPerSubscription bound one subscription's share, so that
	// a dead subscriber refuses only the requests that would queue for it.
	MaxQueuedEvents                int
	MaxQueuedBytes                 int64
	MaxQueuedEventsPerSubscription int
	MaxQueuedBytesPerSubscription  int64
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

	// Clock is the source of time; nil means the system clock.
	Clock Clock
	// DeadLetterer takes the events that subscriptions with a dead-letter
	// destination give up on; nil drops them as subscriptions without one.
	DeadLetterer DeadLetterer
	// Transform, if not nil, returns the body a subscription receives for
	// an event of topic, when it differs from the published one (schema
	// conversion). It is called at publish time.
	Transform func(topic eventgrid.Topic, sub *eventgrid.EventSubscription, body []byte) []byte
	// Jitter returns a number in [-1, 1] that randomises CloudExponential
	// delays; nil means uniformly random.
	Jitter func() float64
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		DefaultMaxDeliveryAttempts:     30,
		DefaultTTL:                     7200 * time.Second,
		DefaultSchedule:                eventgrid.EdgeQueues,
		ExponentialScale:               1,
		ProbationAfterFailures:         10,
		DefaultMaxEventsPerBatch:       10,
		DefaultMaxBatchBytes:           1058576,
		Backoff:                        [2]time.Duration{time.Minute, 10 * time.Minute},
		DeliverTimeout:                 60 * time.Second,
		MaxConcurrent:                  100,
		MaxPerSubscription:             16,
		MaxQueuedEvents:                100000,
		MaxQueuedBytes:                 256 << 20,
		MaxQueuedEventsPerSubscription: 25000,
		MaxQueuedBytesPerSubscription:  64 << 20,
		LogDeliveryFailure:             true,
		LogEventExpiry:                 true,
		LogRateWindow:                  time.Minute,
		LogRateBurst:                   10,
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
	set(&o.ProbationAfterFailures, d.ProbationAfterFailures)
	if o.MaxQueuedEventsPerSubscription <= 0 {
		o.MaxQueuedEventsPerSubscription = min(d.MaxQueuedEventsPerSubscription, o.MaxQueuedEvents)
	}
	if o.DefaultTTL <= 0 {
		o.DefaultTTL = d.DefaultTTL
	}
	if o.DefaultSchedule == "" {
		o.DefaultSchedule = d.DefaultSchedule
	}
	if o.ExponentialScale <= 0 {
		o.ExponentialScale = d.ExponentialScale
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
	if o.MaxQueuedBytesPerSubscription <= 0 {
		o.MaxQueuedBytesPerSubscription = min(d.MaxQueuedBytesPerSubscription, o.MaxQueuedBytes)
	}
	if o.LogRateWindow <= 0 {
		o.LogRateWindow = d.LogRateWindow
	}
	if o.LogRateBurst == 0 {
		o.LogRateBurst = d.LogRateBurst
	}
	if o.Clock == nil {
		o.Clock = SystemClock{}
	}
	if o.Jitter == nil {
		o.Jitter = func() float64 { return 2*rand.Float64() - 1 }
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
// A fixed pool of MaxConcurrent workers takes turns over the subscriptions
// that have events ready: each turn sends one batch of one subscription, and
// a subscription with more to send goes to the back of the line, so every
// subscription with ready events gets its turn.
//
// Lock order: Engine.mu -> queue.mu -> Engine.sched. The budget counters
// are atomics. Nothing logs, sends or calls out while holding a lock: the
// workers collect what to log and whom to tell, and do it after unlocking.
type Engine struct {
	opts    Options
	clock   Clock
	sender  Sender
	metrics Metrics
	log     zerolog.Logger

	sendCtx     context.Context
	cancelSends context.CancelFunc
	wg          sync.WaitGroup // workers

	queuedEvents atomic.Int64
	queuedBytes  atomic.Int64
	inFlight     atomic.Int64
	// epoch is the origin of the int64 nanosecond due times queue items
	// keep: they cannot wrap in any uptime.
	epoch time.Time

	mu     sync.RWMutex
	queues map[uint64]*queue // by subscription UID
	closed bool

	// sched guards the run queues and the workers' wake-ups. It is the
	// innermost lock.
	sched    sync.Mutex
	wake     *sync.Cond
	runq     fifo[*queue] // subscriptions whose last attempt succeeded
	slowq    fifo[*queue] // subscriptions whose last attempt failed
	slowBusy int          // workers serving slowq subscriptions
	slowMax  int
	turn     bool       // alternates between runq and slowq when both wait
	discards []*discard // deleted queues' events, for a worker to release
	stopping bool
}

var (
	_ eventgrid.Publisher            = (*Engine)(nil)
	_ eventgrid.SubscriptionObserver = (*Engine)(nil)
)

// New returns an engine that delivers through sender, with its workers
// started. metrics may be nil. Close stops it.
func New(opts Options, sender Sender, metrics Metrics, logger zerolog.Logger) *Engine {
	opts.setDefaults()
	if metrics == nil {
		metrics = NopMetrics{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{
		opts:        opts,
		clock:       opts.Clock,
		sender:      sender,
		metrics:     metrics,
		log:         logger.With().Str("component", "delivery").Logger(),
		sendCtx:     ctx,
		cancelSends: cancel,
		queues:      map[uint64]*queue{},
		epoch:       opts.Clock.Now(),
		slowMax:     max(1, opts.MaxConcurrent/2),
	}
	e.wake = sync.NewCond(&e.sched)
	e.wg.Add(opts.MaxConcurrent)
	for range opts.MaxConcurrent {
		go e.work()
	}
	return e
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

// share is one subscription's part of a publish request.
type share struct {
	sub    *eventgrid.EventSubscription
	q      *queue
	events int64
	bytes  int64
}

// sharesPool holds the per-request tallies, one request's at a time.
var sharesPool = sync.Pool{New: func() any { return new([]share) }}

// Publish implements eventgrid.Publisher. A request that can never fit the
// budget gets EPayloadTooLarge; one that does not fit now gets EQueueFull,
// naming the subscription whose share is full when that is why.
func (e *Engine) Publish(_ context.Context, p eventgrid.Publication) error {
	var pairs, bytes int64
	var accepted time.Time
	sp := sharesPool.Get().(*[]share)
	shares := (*sp)[:0]
	defer func() {
		clear(shares)
		*sp = shares[:0]
		sharesPool.Put(sp)
	}()
	for _, d := range p.Deliveries {
		pairs += int64(len(d.Subscriptions))
		bytes += int64(len(d.Event.Body))
		if accepted.IsZero() || d.Event.Accepted.Before(accepted) {
			accepted = d.Event.Accepted // the earliest, should they differ
		}
		for _, sub := range d.Subscriptions {
			shares = tally(shares, sub, int64(len(d.Event.Body)))
		}
	}
	if pairs == 0 {
		return nil
	}
	bytes = max(bytes, p.Size)
	if err := e.neverFits(pairs, bytes, shares); err != nil {
		e.metrics.Rejected(int(pairs))
		return err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return eventgrid.Errorf(eventgrid.EUnavailable, "The broker is shutting down.")
	}
	for i := range shares {
		shares[i].q = e.queues[shares[i].sub.UID] // nil: deleted since the request was matched
	}
	if err := e.reserve(pairs, bytes, shares); err != nil {
		e.metrics.Rejected(int(pairs))
		return err
	}
	s := &shared{size: bytes, accepted: accepted}
	s.refs.Store(pairs)
	for _, d := range p.Deliveries {
		for _, sub := range d.Subscriptions {
			q := e.queues[sub.UID]
			body := d.Event.Body
			if q != nil && e.opts.Transform != nil {
				body = e.opts.Transform(p.Topic, sub, body)
			}
			if q == nil || !q.push(item{body: body, s: s}, len(d.Event.Body)) {
				e.metrics.Dropped(sub, DropDeleted, 1)
				e.release(s)
				if q != nil {
					q.unreserve(1, int64(len(d.Event.Body)))
				}
			}
		}
	}
	for i := range shares {
		if q := shares[i].q; q != nil {
			q.kick()
		}
	}
	return nil
}

// tally adds one delivery of n bytes to sub's share of a request.
func tally(shares []share, sub *eventgrid.EventSubscription, n int64) []share {
	for i := range shares {
		if shares[i].sub == sub {
			shares[i].events++
			shares[i].bytes += n
			return shares
		}
	}
	return append(shares, share{sub: sub, events: 1, bytes: n})
}

// neverFits returns a permanent error for a request larger than the budget
// it would have to fit, however empty the queues.
func (e *Engine) neverFits(pairs, bytes int64, shares []share) error {
	o := &e.opts
	switch {
	case pairs > int64(o.MaxQueuedEvents):
		return eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request makes %d deliveries, more than the broker ever queues (broker__maxQueuedEvents %d); send fewer events per request.", pairs, o.MaxQueuedEvents)
	case bytes > o.MaxQueuedBytes:
		return eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request's events take %d bytes, more than the broker ever queues (broker__maxQueuedBytes %d); send fewer events per request.", bytes, o.MaxQueuedBytes)
	}
	for _, sh := range shares {
		switch {
		case sh.events > int64(o.MaxQueuedEventsPerSubscription):
			return eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request makes %d deliveries to event subscription %s, more than one subscription ever queues (broker__maxQueuedEventsPerSubscription %d); send fewer events per request.", sh.events, sh.sub.Name, o.MaxQueuedEventsPerSubscription)
		case sh.bytes > o.MaxQueuedBytesPerSubscription:
			return eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request queues %d bytes for event subscription %s, more than one subscription ever queues (broker__maxQueuedBytesPerSubscription %d); send fewer events per request.", sh.bytes, sh.sub.Name, o.MaxQueuedBytesPerSubscription)
		}
	}
	return nil
}

// reserve takes room for the request from each subscription's share and
// from the broker's budget, all or nothing.
func (e *Engine) reserve(pairs, bytes int64, shares []share) error {
	o := &e.opts
	for i, sh := range shares {
		if sh.q == nil {
			continue
		}
		if !sh.q.reserve(sh.events, sh.bytes) {
			for _, prev := range shares[:i] {
				if prev.q != nil {
					prev.q.unreserve(prev.events, prev.bytes)
				}
			}
			return eventgrid.Errorf(eventgrid.EQueueFull, "Event subscription %s holds its share of queued events (broker__maxQueuedEventsPerSubscription %d, broker__maxQueuedBytesPerSubscription %d) while its subscriber catches up; retry later.", sh.sub.Name, o.MaxQueuedEventsPerSubscription, o.MaxQueuedBytesPerSubscription)
		}
	}
	if !e.reserveGlobal(pairs, bytes) {
		for _, sh := range shares {
			if sh.q != nil {
				sh.q.unreserve(sh.events, sh.bytes)
			}
		}
		return eventgrid.Errorf(eventgrid.EQueueFull, "The broker holds its limit of queued events (broker__maxQueuedEvents %d, broker__maxQueuedBytes %d) while subscribers catch up; retry later.", o.MaxQueuedEvents, o.MaxQueuedBytes)
	}
	return nil
}

// Admit reports whether a request of about bytes bytes could be queued now,
// as far as the broker-wide budget tells. The publish path asks before
// reading a body, so that while the broker is full a request is refused
// without being read and decoded; Publish still makes the binding decision.
func (e *Engine) Admit(bytes int64) bool {
	return e.queuedEvents.Load() < int64(e.opts.MaxQueuedEvents) && e.queuedBytes.Load()+bytes <= e.opts.MaxQueuedBytes
}

func (e *Engine) reserveGlobal(pairs, bytes int64) bool {
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

// release returns one delivery of s to the broker's budget, and s's bytes
// with its last delivery.
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
	e.queues[sub.UID] = newQueue(e, sub)
}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver: it detaches
// the subscription's queue; a worker releases its events and logs how many
// were discarded, outside the caller's locks.
func (e *Engine) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	e.mu.Lock()
	q, ok := e.queues[sub.UID]
	delete(e.queues, sub.UID)
	e.mu.Unlock()
	if !ok {
		return
	}
	if d := q.detach(DropDeleted); d != nil {
		e.sched.Lock()
		if e.stopping {
			e.sched.Unlock()
			d.run(e) // Close is waiting for the workers; nothing else will
			return
		}
		e.discards = append(e.discards, d)
		e.wake.Signal()
		e.sched.Unlock()
	}
}

// Close stops delivery: workers take no new batches, requests in flight get
// until timeout to finish (then they are cancelled), and the events still
// queued are discarded, as nothing is persisted by design. It returns the
// number discarded. No goroutine or timer of the engine runs once it has
// returned.
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
	for _, q := range queues {
		q.stop() // no more timers, no more scheduling
	}
	e.sched.Lock()
	e.stopping = true
	pending := e.discards
	e.discards = nil
	e.wake.Broadcast()
	e.sched.Unlock()

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
	for _, d := range pending {
		d.run(e)
	}
	for _, q := range queues {
		if d := q.detach(DropShutdown); d != nil {
			n += d.run(e)
		}
	}
	e.log.Info().Int("discarded", n).Msg("delivery stopped; queued events are not persisted by design")
	return n
}

// schedule puts q in line for a worker, unless it is already. Called with
// q.mu held.
func (e *Engine) schedule(q *queue, slow bool) {
	if q.scheduled.Load() {
		// A worker will take it and see what the caller changed under q.mu,
		// which it locks after clearing the flag.
		return
	}
	e.sched.Lock()
	defer e.sched.Unlock()
	if q.scheduled.Load() || e.stopping {
		return
	}
	q.scheduled.Store(true)
	if slow {
		e.slowq.push(q)
	} else {
		e.runq.push(q)
	}
	e.wake.Signal()
}

// next waits for work: a queue to serve (slow tells from which line, so the
// worker can give its place back) or a discard to run. It returns false
// when the engine stops.
func (e *Engine) next() (q *queue, slow bool, d *discard, ok bool) {
	e.sched.Lock()
	defer e.sched.Unlock()
	for {
		if e.stopping {
			return nil, false, nil, false
		}
		if n := len(e.discards); n > 0 {
			d = e.discards[n-1]
			e.discards[n-1] = nil
			e.discards = e.discards[:n-1]
			return nil, false, d, true
		}
		fast := e.runq.len() > 0
		canSlow := e.slowq.len() > 0 && e.slowBusy < e.slowMax
		if fast && canSlow {
			e.turn = !e.turn
			fast = e.turn
		}
		switch {
		case fast:
			q = e.runq.pop()
		case canSlow:
			q = e.slowq.pop()
			e.slowBusy++
			slow = true
		default:
			e.wake.Wait()
			continue
		}
		q.scheduled.Store(false)
		return q, slow, nil, true
	}
}

// doneSlow gives back a slow-line place.
func (e *Engine) doneSlow() {
	e.sched.Lock()
	e.slowBusy--
	if e.slowq.len() > 0 {
		e.wake.Signal()
	}
	e.sched.Unlock()
}

// work is one worker: it serves queues until the engine stops.
func (e *Engine) work() {
	defer e.wg.Done()
	var b taken // reused for every batch this worker sends
	for {
		q, slow, d, ok := e.next()
		if !ok {
			return
		}
		if d != nil {
			d.run(e)
			continue
		}
		q.serve(&b)
		if slow {
			e.doneSlow()
		}
	}
}

// millis returns t as nanoseconds since the engine's epoch, the unit of due
// times.
func (e *Engine) nanos(t time.Time) int64 { return int64(t.Sub(e.epoch)) }

// fifo is a first-in first-out list that reuses its memory.
type fifo[T any] struct {
	items []T
	head  int
}

func (f *fifo[T]) len() int { return len(f.items) - f.head }

func (f *fifo[T]) push(v T) {
	if f.head > 0 && f.head == len(f.items) {
		f.items, f.head = f.items[:0], 0
	}
	f.items = append(f.items, v)
}

func (f *fifo[T]) pop() T {
	var zero T
	v := f.items[f.head]
	f.items[f.head] = zero
	f.head++
	if f.head > 64 && f.head*2 > len(f.items) {
		n := copy(f.items, f.items[f.head:])
		clear(f.items[n:])
		f.items, f.head = f.items[:n], 0
	}
	return v
}
