package push

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// Engine delivers events to push subscriptions. Create it with New; it
// implements eventgrid.SubscriptionObserver, and takes the events the
// publish path enqueues (see Enqueue) within the broker's budget.
//
// A pool of MaxConcurrent workers takes turns over the subscriptions that
// have events ready: each turn sends one batch of one subscription, and a
// subscription with more to send goes to the back of the line, so every
// subscription with ready events gets its turn. How hung endpoints are kept
// from holding the pool is told in the package documentation (doc.go).
//
// Lock order: Engine.mu -> queue.mu -> Engine.sched. The budget counters
// are atomics. Nothing logs, sends or calls out while holding a lock: the
// workers collect the records of what happened (package outcome) and hand
// them to the reporter after unlocking.
type Engine struct {
	opts   Options
	clock  clock.Clock
	sender Sender
	// rep tells what happens to deliveries (package outcome).
	rep *outcome.Reporter
	log zerolog.Logger

	sendCtx     context.Context
	cancelSends context.CancelFunc
	wg          sync.WaitGroup // workers

	budget   *budget.Budget
	inFlight atomic.Int64

	// watch is the timer of the watchdog that finds suspect requests:
	// watchOn says it is armed, as it is while requests are in flight, and
	// watchOff that the engine stopped it for good. watchMu guards them
	// and is taken with no other lock held.
	watchMu  sync.Mutex
	watch    clock.Timer
	watchOn  atomic.Bool
	watchOff bool
	// epoch is the origin of the int64 nanosecond due times queue items
	// keep: they cannot wrap in any uptime.
	epoch time.Time
	// wallBase is the epoch's wall-clock time in Unix nanoseconds, moved
	// when the wall clock is found stepped against the monotonic one
	// (see wall).
	wallBase atomic.Int64

	mu     sync.RWMutex
	queues map[uint64]*queue // by subscription UID
	closed bool

	// sched guards the run queues and the workers' wake-ups. It is the
	// innermost lock.
	sched sync.Mutex
	// idle are the pool's workers waiting for work, the one that went idle
	// last at the end: wakeLocked wakes it first. A worker that has just
	// run has its stack grown and its memory in the CPU's caches, where
	// one idle since the last garbage collection has had its stack shrunk
	// and would grow it again (a copy of every frame) for its next
	// request; first in, first out would take turns over all MaxConcurrent
	// workers and hit that on most requests.
	idle     []*worker
	runq     fifo[*queue] // proven subscriptions whose endpoint answers
	slowq    fifo[*queue] // unproven, failing or hung subscriptions
	slowBusy int          // pool workers whose request counts against slowMax
	slowMax  int
	turn     bool       // alternates between runq and slowq when both wait
	discards []*discard // deleted queues' events, for a worker to report
	stopping bool
	// slots are the pool's workers, one per slot; a worker whose request
	// turned suspect leaves its slot to a new worker and is parked: it
	// waits for its answer outside the pool, in parkedW, at most parkMax
	// at a time.
	slots   []*worker
	parkedW []*worker
	parkMax int
}

var (
	_ eventgrid.SubscriptionObserver = (*Engine)(nil)
	_ eventgrid.EventHolder          = (*Engine)(nil)
)

// New returns an engine that delivers through sender, with its workers
// started. It reports through Options.Reporter or, when that is nil, a
// reporter of its own, made from its options, metrics (which may be nil)
// and logger. Close stops it.
func New(opts Options, sender Sender, metrics outcome.Metrics, logger zerolog.Logger) *Engine {
	opts.setDefaults()
	rep := opts.Reporter
	if rep == nil {
		rep = outcome.New(outcome.Options{
			DeliveryLogs: opts.DeliveryLogs, LogRateWindow: opts.LogRateWindow, LogRateBurst: opts.LogRateBurst,
			Metrics: metrics, Board: opts.Board, DeadLetterer: opts.DeadLetterer, Clock: opts.Clock,
		}, logger)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{
		opts:        opts,
		budget:      opts.Budget,
		clock:       opts.Clock,
		sender:      sender,
		rep:         rep,
		log:         logger.With().Str("component", "delivery").Logger(),
		sendCtx:     ctx,
		cancelSends: cancel,
		queues:      map[uint64]*queue{},
		epoch:       opts.Clock.Now(),
		slowMax:     max(1, opts.MaxConcurrent/2),
		parkMax:     opts.MaxParked,
		slots:       make([]*worker, opts.MaxConcurrent),
	}
	e.wallBase.Store(e.epoch.UnixNano())
	e.sched.Lock()
	for i := range e.slots {
		e.startWorkerLocked(i)
	}
	e.sched.Unlock()
	return e
}

// nanos returns t as nanoseconds since the engine's epoch, the unit of due
// times.
func (e *Engine) nanos(t time.Time) int64 { return int64(t.Sub(e.epoch)) }
