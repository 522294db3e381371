package queue

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// The settlement kinds, as metrics name them.
const (
	SettleAcknowledge = "acknowledge"
	SettleRelease     = "release"
	SettleReject      = "reject"
	SettleRenewLock   = "renewLock"
)

// The error codes of a failed lock token.
const (
	// CodeTokenLost: the token is unknown, its lock expired, or its event
	// was already settled.
	CodeTokenLost = "TokenLost"
	// CodeBadRequest: the token is not one this broker could have made.
	CodeBadRequest = "BadRequest"
)

// MaxRenewal is how long after a receive its lock can last at most.
const MaxRenewal = time.Hour

// ReleaseDelays are the delays a release may ask for, in seconds.
var ReleaseDelays = []int{0, 10, 60, 600, 3600}

// Options configure a Store. Zero values take the defaults.
type Options struct {
	// MaxWaiting bounds the receives waiting for events at once, across
	// all queue subscriptions (broker__maxWaitingReceives); a receive that
	// would wait beyond it gets EUnavailable. Zero is no bound.
	MaxWaiting int
	// TimeScale multiplies lock durations, release delays, the renew limit
	// and event times to live (broker__queueTimeScale, for tests); zero
	// means 1.
	TimeScale float64
	// Reporter tells what happens to the queue subscriptions' events
	// (package outcome): to the logs, the metrics, the inspection board and
	// the dead-letter writer. The broker gives both delivery modes one.
	// When it is nil, the store makes its own from DeliveryLogs,
	// DeadLetterer, Metrics and Board (see outcome.Options), which are
	// otherwise ignored.
	Reporter     *outcome.Reporter
	DeadLetterer eventgrid.DeadLetterer
	Metrics      outcome.Metrics
	Board        *inspect.Board
	eventgrid.DeliveryLogs
	// Clock is the source of time; nil means the system clock.
	Clock clock.Clock
}

// Store keeps the queue subscriptions' events, which the publish path
// enqueues (see Enqueue) within the broker's budget. It implements
// eventgrid.SubscriptionObserver and eventgrid.EventHolder for queue
// subscriptions. It is safe for concurrent use.
//
// Lock order: Store.mu, then a queue's mu. The reporter is called with no
// queue lock held; the budget's release, which never blocks, may be called
// under it.
type Store struct {
	opts Options
	rep  *outcome.Reporter

	mu     sync.RWMutex
	queues map[uint64]*queue // by subscription UID
	closed bool

	waiting atomic.Int64 // receives waiting, across the queues
}

// New returns an empty Store, which logs through its reporter.
func New(o Options, log zerolog.Logger) *Store {
	if o.TimeScale <= 0 {
		o.TimeScale = 1
	}
	if o.Clock == nil {
		o.Clock = clock.System{}
	}
	rep := o.Reporter
	if rep == nil {
		rep = outcome.New(outcome.Options{DeliveryLogs: o.DeliveryLogs, Metrics: o.Metrics, Board: o.Board,
			DeadLetterer: o.DeadLetterer, Clock: o.Clock}, log)
	}
	return &Store{opts: o, rep: rep, queues: map[uint64]*queue{}}
}

// enterWait counts one more waiting receive, unless the broker holds
// Options.MaxWaiting already; the receive leaves with waiting.Add(-1).
func (s *Store) enterWait() bool {
	if n := s.waiting.Add(1); s.opts.MaxWaiting > 0 && n > int64(s.opts.MaxWaiting) {
		s.waiting.Add(-1)
		return false
	}
	return true
}

func (s *Store) tooManyWaiting() error {
	return eventgrid.Errorf(eventgrid.EUnavailable, "The broker holds its limit of %d receives waiting for events (broker__maxWaitingReceives); retry later, or receive with a shorter maxWaitTime.", s.opts.MaxWaiting)
}

func (s *Store) scale(d time.Duration) time.Duration {
	if s.opts.TimeScale == 1 {
		return d
	}
	return time.Duration(float64(d) * s.opts.TimeScale)
}

// SubscriptionPut implements eventgrid.SubscriptionObserver: a queue
// subscription gets its queue, or updates it; a subscription that stops
// being a queue subscription loses its queue, as SubscriptionDeleted.
func (s *Store) SubscriptionPut(sub *eventgrid.EventSubscription) {
	if !sub.IsQueue() {
		s.SubscriptionDeleted(sub)
		return
	}
	s.mu.Lock()
	q := s.queues[sub.UID]
	if q == nil {
		if !s.closed {
			q = newQueue(s, sub)
			if sub.Owner.Declared() && sub.Paused {
				q.pausedSince = s.opts.Clock.Now()
			}
			s.queues[sub.UID] = q
		}
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	q.mu.Lock()
	q.sub = sub
	if sub.Owner.Declared() {
		// The declaration rules whether it is paused; an update over the
		// REST API keeps what :pause and :resume did.
		q.setPausedLocked(sub.Paused, s.opts.Clock.Now())
	}
	q.mu.Unlock()
}

// HeldEvents implements eventgrid.EventHolder: the events of sub's queue,
// available, locked or delayed.
func (s *Store) HeldEvents(sub *eventgrid.EventSubscription) int {
	c, _ := s.Counts(sub)
	return c.Available + c.Locked + c.Delayed
}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver. The
// queue's events are dropped and counted; waiting receives get
// ESubscriptionMissing, or, when sub is the subscription as it is now, a
// push subscription, the error that says so.
func (s *Store) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	s.mu.Lock()
	q := s.queues[sub.UID]
	delete(s.queues, sub.UID)
	s.mu.Unlock()
	if q == nil {
		return
	}
	if !sub.IsQueue() {
		q.mu.Lock()
		q.sub = sub
		q.mu.Unlock()
	}
	q.close(outcome.SubscriptionDeleted)
}

// Close drops every queued event (counted, reason Shutdown) and ends the
// receives still waiting, which answer no events. It does not wait for
// anything, and always returns nil; later calls do nothing more.
func (s *Store) Close(context.Context) error {
	s.mu.Lock()
	qs := s.queues
	s.queues = map[uint64]*queue{}
	s.closed = true
	s.mu.Unlock()
	for _, q := range qs {
		q.close(outcome.Shutdown)
	}
	return nil
}

func (s *Store) queue(sub *eventgrid.EventSubscription) (*queue, error) {
	if !sub.IsQueue() {
		return nil, notQueue(sub)
	}
	s.mu.RLock()
	q := s.queues[sub.UID]
	s.mu.RUnlock()
	if q == nil {
		return nil, missing(sub)
	}
	return q, nil
}

func notQueue(sub *eventgrid.EventSubscription) error {
	return eventgrid.Errorf(eventgrid.EBadRequest, "Event subscription %q of topic %q delivers by push; receive, acknowledge, release, reject and renewLock apply to subscriptions whose deliveryMode is Queue.", sub.Name, sub.Topic)
}

func missing(sub *eventgrid.EventSubscription) error {
	return eventgrid.Errorf(eventgrid.ESubscriptionMissing, "Event subscription %q does not exist in topic %q.", sub.Name, sub.Topic)
}

// Counts are the events a queue subscription holds.
type Counts struct {
	// Available events can be received now; Locked are received and not
	// yet settled; Delayed were released with a delay that has not passed.
	Available, Locked, Delayed int
	// Waiting is the number of receives waiting for events.
	Waiting int
	// Paused is set while the subscription is paused.
	Paused bool
}

// Counts returns sub's counts, and false if sub has no queue.
func (s *Store) Counts(sub *eventgrid.EventSubscription) (Counts, bool) {
	s.mu.RLock()
	q := s.queues[sub.UID]
	s.mu.RUnlock()
	if q == nil {
		return Counts{}, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.countsLocked(), true
}

// SubscriptionCounts pairs a queue subscription with its counts.
type SubscriptionCounts struct {
	Subscription *eventgrid.EventSubscription
	Counts
}

// Stats returns the counts of every queue subscription.
func (s *Store) Stats() []SubscriptionCounts {
	s.mu.RLock()
	qs := make([]*queue, 0, len(s.queues))
	for _, q := range s.queues {
		qs = append(qs, q)
	}
	s.mu.RUnlock()
	out := make([]SubscriptionCounts, 0, len(qs))
	for _, q := range qs {
		q.mu.Lock()
		out = append(out, SubscriptionCounts{Subscription: q.sub, Counts: q.countsLocked()})
		q.mu.Unlock()
	}
	return out
}

// Received is one event handed out by Receive.
type Received struct {
	LockToken     string
	DeliveryCount int
	// LockedUntil is when the lock expires unless it is renewed.
	LockedUntil time.Time
	// Body is the CloudEvent, shared with the queue; it must not be
	// modified.
	Body []byte
}

// Receive hands out up to max available events of sub, oldest first, each
// locked under a new token. When none is available it waits up to wait for
// one to become available (published, released, its lock expired or its
// release delay passed), and returns none if none came. Waiting receives
// are woken one per available event, oldest first. It returns
// ESubscriptionMissing if the subscription is deleted meanwhile, and
// EUnavailable, without waiting, when Options.MaxWaiting receives wait
// already.
func (s *Store) Receive(ctx context.Context, sub *eventgrid.EventSubscription, max int, wait time.Duration) ([]Received, error) {
	q, err := s.queue(sub)
	if err != nil {
		return nil, err
	}
	return q.receive(ctx, max, wait)
}

// Failure is a lock token that could not be settled.
type Failure struct {
	LockToken string
	Code      string
	Message   string
}

// Result is the outcome of a settlement, token by token.
type Result struct {
	Succeeded []string
	Failed    []Failure
}

// Acknowledge removes the events locked under tokens.
func (s *Store) Acknowledge(sub *eventgrid.EventSubscription, tokens []string) (Result, error) {
	return s.settle(sub, tokens, SettleAcknowledge, 0)
}

// Release makes the events locked under tokens available again, after
// delay (one of ReleaseDelays).
func (s *Store) Release(sub *eventgrid.EventSubscription, tokens []string, delay time.Duration) (Result, error) {
	return s.settle(sub, tokens, SettleRelease, delay)
}

// Reject dead-letters the events locked under tokens (reason Rejected), or
// drops them when sub has no dead-letter destination.
func (s *Store) Reject(sub *eventgrid.EventSubscription, tokens []string) (Result, error) {
	return s.settle(sub, tokens, SettleReject, 0)
}

// RenewLocks extends the locks of tokens by the lock duration, up to one
// hour after the receive that made each lock.
func (s *Store) RenewLocks(sub *eventgrid.EventSubscription, tokens []string) (Result, error) {
	return s.settle(sub, tokens, SettleRenewLock, 0)
}

func (s *Store) settle(sub *eventgrid.EventSubscription, tokens []string, kind string, delay time.Duration) (Result, error) {
	q, err := s.queue(sub)
	if err != nil {
		return Result{}, err
	}
	return q.settle(tokens, kind, s.scale(delay)), nil
}
