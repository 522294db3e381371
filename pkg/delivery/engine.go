package delivery

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

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

// nanos returns t as nanoseconds since the engine's epoch, the unit of due
// times.
func (e *Engine) nanos(t time.Time) int64 { return int64(t.Sub(e.epoch)) }
