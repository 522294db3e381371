package inspect

import (
	"sync"
	"time"

	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Options configure a Board.
type Options struct {
	// MaxFailures and MaxFailureBytes bound each subscription's given-up
	// list (broker__maxFailuresPerSubscription,
	// broker__maxFailureBytesPerSubscription); 0 keeps none.
	MaxFailures     int
	MaxFailureBytes int64
	// Clock is the source of time; nil means the system clock.
	Clock clock.Clock
}

// Board holds the records of every topic and subscription (see the package
// documentation). Create it with New; it implements
// eventgrid.SubscriptionObserver and eventgrid.TopicObserver, and its
// methods are safe for concurrent use. Start begins sampling what each
// subscription holds, every Interval; Close stops it.
type Board struct {
	opts Options

	mu     sync.RWMutex
	topics map[string]*Topic // by name, as the topic was created
	subs   map[uint64]*Sub   // by subscription UID
	timer  clock.Timer
	closed bool
	// heldBy returns the events a subscription holds now, for the
	// history's queued series; set by Start.
	heldBy func(sub *eventgrid.EventSubscription) int
}

var (
	_ eventgrid.SubscriptionObserver = (*Board)(nil)
	_ eventgrid.TopicObserver        = (*Board)(nil)
)

// New returns an empty board.
func New(o Options) *Board {
	if o.Clock == nil {
		o.Clock = clock.System{}
	}
	return &Board{opts: o, topics: map[string]*Topic{}, subs: map[uint64]*Sub{}}
}

func (b *Board) now() time.Time { return b.opts.Clock.Now() }

func (b *Board) held(sub *eventgrid.EventSubscription) int {
	b.mu.RLock()
	heldBy := b.heldBy
	b.mu.RUnlock()
	if heldBy == nil || sub == nil {
		return 0
	}
	return heldBy(sub)
}

// TopicCreated implements eventgrid.TopicObserver.
func (b *Board) TopicCreated(t eventgrid.Topic) {
	rec := &Topic{b: b, name: t.Name}
	rec.hist.init(b.now())
	b.mu.Lock()
	old := b.topics[t.Name]
	b.topics[t.Name] = rec
	b.mu.Unlock()
	if old != nil {
		old.deleted()
	}
}

// TopicDeleted implements eventgrid.TopicObserver: the topic's live tails
// end.
func (b *Board) TopicDeleted(t eventgrid.Topic) {
	b.mu.Lock()
	rec := b.topics[t.Name]
	delete(b.topics, t.Name)
	b.mu.Unlock()
	if rec != nil {
		rec.deleted()
	}
}

// Topic returns the record of the topic named name, as it was created; nil
// when there is none.
func (b *Board) Topic(name string) *Topic {
	if b == nil {
		return nil
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.topics[name]
}

// SubscriptionPut implements eventgrid.SubscriptionObserver: a new
// subscription gets its record, an updated one keeps it, whatever its
// delivery mode.
func (b *Board) SubscriptionPut(sub *eventgrid.EventSubscription) { b.Sub(sub) }

// SubscriptionDeleted implements eventgrid.SubscriptionObserver: the
// record goes, and the subscription's streams end.
func (b *Board) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	b.mu.Lock()
	rec := b.subs[sub.UID]
	delete(b.subs, sub.UID)
	b.mu.Unlock()
	if rec != nil {
		rec.deleted()
	}
}

// Sub returns sub's record, made if it has none: the delivery modes take it
// when they make a subscription's queue. A nil Board returns nil.
func (b *Board) Sub(sub *eventgrid.EventSubscription) *Sub {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	rec := b.subs[sub.UID]
	if rec == nil {
		rec = &Sub{b: b, topic: sub.Topic, name: sub.Name}
		rec.fails.max, rec.fails.maxBytes = b.opts.MaxFailures, b.opts.MaxFailureBytes
		rec.hist.init(b.now())
		b.subs[sub.UID] = rec
	}
	rec.cur.Store(sub)
	return rec
}

// Subscription returns the record of the subscription with uid; nil when
// there is none.
func (b *Board) Subscription(uid uint64) *Sub {
	if b == nil {
		return nil
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.subs[uid]
}

// Start samples, at the start of every Interval, what each subscription
// holds by heldBy (the dispatcher's HeldEvents), so that the history shows
// it even while nothing happens. The delivery modes that hold the events
// report to the board, so it is made before them and told of them here.
func (b *Board) Start(heldBy func(sub *eventgrid.EventSubscription) int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.timer != nil {
		return
	}
	b.heldBy = heldBy
	b.timer = b.opts.Clock.AfterFunc(b.untilNext(), b.tick)
}

func (b *Board) untilNext() time.Duration {
	now := b.now()
	return startOf(intervalOf(now) + 1).Sub(now)
}

func (b *Board) tick() {
	now := b.now()
	b.mu.RLock()
	subs := make([]*Sub, 0, len(b.subs))
	for _, s := range b.subs {
		subs = append(subs, s)
	}
	b.mu.RUnlock()
	for _, s := range subs {
		s.sample(now)
	}
	b.mu.Lock()
	if !b.closed {
		b.timer.Reset(b.untilNext())
	}
	b.mu.Unlock()
}

// Close stops the sampling. It always returns nil.
func (b *Board) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
	}
	return nil
}
