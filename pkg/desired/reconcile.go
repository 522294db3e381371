package desired

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// The sources of declared configuration, as owners.
var (
	// Inline is the desired_config setting, applied at start.
	Inline = eventgrid.Owner{Source: eventgrid.SourceDesiredConfig}
	// Twin is the module twin's desired properties, followed live.
	Twin = eventgrid.Owner{Source: eventgrid.SourceModuleTwin}
)

// File is the file desired_config_file names, followed live.
func File(path string) eventgrid.Owner {
	return eventgrid.Owner{Source: eventgrid.SourceDesiredConfigFile, File: path}
}

// Options configure a Reconciler.
type Options struct {
	// RetryMin and RetryMax bound the wait before a source is applied
	// again because entries failed for a passing reason: RetryMin, doubling
	// up to RetryMax. Zero means DefaultRetryMin and DefaultRetryMax.
	RetryMin, RetryMax time.Duration
	// Clock tells the time and arms the retries' timers: clock.System
	// when nil; tests give package fakeclock's.
	Clock clock.Clock
}

func (o Options) withDefaults() Options {
	if o.RetryMin <= 0 {
		o.RetryMin = DefaultRetryMin
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(DefaultRetryMax, o.RetryMin)
	}
	if o.Clock == nil {
		o.Clock = clock.System{}
	}
	return o
}

// Reconciler makes the topics and event subscriptions of the registry
// match what each source of declared configuration declares. A source owns
// what it declared: what it stops declaring is deleted, what it changes is
// updated in place (an event subscription keeps its queued events as long
// as its name and topic stay the same), and what it declares again
// unchanged is left alone. What the REST API or another source manages is
// never changed or deleted: an entry naming it is refused. An entry that
// failed for a passing reason is applied again with back-off (see Retries)
// until it applies or the declaration changes; one refused because the
// REST API manages its name is applied again when the REST API deletes
// what holds it (the Reconciler observes the registry for that). It is
// safe for concurrent use; applies run one at a time.
type Reconciler struct {
	store Store
	log   zerolog.Logger
	opts  Options

	mu       sync.Mutex // held for a whole apply
	states   map[eventgrid.Owner]*state
	lastErrs map[eventgrid.Owner]Errors // what was last warned about
	retries  map[eventgrid.Owner]*retry

	// hmu guards held, the names each source's entries wait for the REST
	// API to delete. The registry's observer calls take it under the
	// registry's lock, so nothing else is taken while it is held.
	// Lock order: Reconciler.mu -> Registry.mu -> Reconciler.hmu.
	hmu  sync.Mutex
	held map[eventgrid.Owner]*held
	// deletions counts the REST API's deletions the reconciler was told
	// of, so that an apply can tell one that came while it ran.
	deletions uint64

	// smu guards what /readyz reads, so that it never waits for an apply.
	smu      sync.Mutex
	status   map[eventgrid.Owner]*SourceStatus
	expected []eventgrid.Owner
	ready    atomic.Bool
}

// NewReconciler returns a Reconciler working through store, the registry
// behind the management API. It is ready until Expect names a source.
func NewReconciler(store Store, log zerolog.Logger, opts Options) *Reconciler {
	r := &Reconciler{
		store: store, log: log, opts: opts.withDefaults(),
		states: map[eventgrid.Owner]*state{}, lastErrs: map[eventgrid.Owner]Errors{}, retries: map[eventgrid.Owner]*retry{},
		status: map[eventgrid.Owner]*SourceStatus{}, held: map[eventgrid.Owner]*held{},
	}
	r.ready.Store(true)
	return r
}

// Expect makes Ready wait for a first Apply from each of owners.
func (r *Reconciler) Expect(owners ...eventgrid.Owner) {
	r.smu.Lock()
	defer r.smu.Unlock()
	r.expected = append(r.expected, owners...)
	r.updateReadyLocked()
}

// Ready reports whether every expected source has had its first
// declaration applied. A document that could not be parsed counts (its
// error is logged and reported, and nothing more can come until the source
// changes), and so does one with skipped entries, retried or not: /readyz
// lists them (Status).
func (r *Reconciler) Ready() bool { return r.ready.Load() }

func (r *Reconciler) updateReadyLocked() {
	for _, o := range r.expected {
		if s := r.status[o]; s == nil || !s.Applied {
			r.ready.Store(false)
			return
		}
	}
	r.ready.Store(true)
}

// Retries returns the channel that signals when owner's declaration is to
// be applied again: an apply left entries that failed for a passing
// reason, and their back-off has run out. The source's follower then
// applies its current declaration again.
func (r *Reconciler) Retries(owner eventgrid.Owner) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.retryOf(owner).due
}

func (r *Reconciler) retryOf(owner eventgrid.Owner) *retry {
	rt := r.retries[owner]
	if rt == nil {
		rt = &retry{due: make(chan struct{}, 1)}
		r.retries[owner] = rt
	}
	return rt
}

// Apply makes the registry match doc, the whole declaration of owner.
//
// doc has the module twin's desired-properties shape,
//
//	{"topics": {"<name>": {<topic properties>}},
//	 "eventSubscriptions": {"<name>": {"topic": "<topic>", <subscription properties>}}}
//
// optionally wrapped as {"properties": {"desired": {…}}}; either map may be
// a string holding its JSON, and so may each entry and, as the resource
// package accepts, array-valued properties. An entry set to null is not
// declared. Members whose names start with '$' (twin metadata) are ignored.
//
// Apply parses doc, plans the steps from what owner applied before to what
// it declares now (see makePlan), carries them out, schedules a retry when
// entries failed for a passing reason, and logs the outcome. An entry that
// cannot be applied is logged, with its name and error message but none of
// its values, and skipped; what owner applied before under that name stays
// as it was.
//
// Apply returns an error only if doc is not valid JSON of that shape, in
// which case nothing changes, or if ctx is done, in which case the Result
// holds what was applied so far.
func (r *Reconciler) Apply(ctx context.Context, owner eventgrid.Owner, doc []byte) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	log := r.logFor(owner)
	topics, subs, err := parse(doc)
	if err != nil {
		log.Error().Str("error", err.Error()).Msg("declaration not applied: the configuration last applied stays in force")
		r.finish(owner, doc, Result{}, err, 0)
		return Result{}, err
	}
	d := declare(topics, subs, owner)
	x := &run{store: r.store, owner: owner, log: log, d: d, st: r.stateOf(owner)}
	deletions := r.deletionsSoFar()
	if err := x.execute(ctx, makePlan(d, x.st)); err != nil {
		return x.res, err
	}
	r.finish(owner, doc, x.res, nil, deletions)
	r.logResult(log, owner, x.res)
	return x.res, nil
}

func (r *Reconciler) stateOf(owner eventgrid.Owner) *state {
	st := r.states[owner]
	if st == nil {
		st = newState()
		r.states[owner] = st
	}
	return st
}

func (r *Reconciler) logFor(owner eventgrid.Owner) zerolog.Logger {
	c := r.log.With().Str("source", owner.Source)
	if owner.File != "" {
		c = c.Str("file", owner.File)
	}
	return c.Logger()
}

// finish schedules owner's retry and records its status after an apply of
// doc that returned res, or docErr for a document that could not be
// parsed, which changes neither what is applied nor its retries. The apply
// began after deletions deletions over the REST API.
func (r *Reconciler) finish(owner eventgrid.Owner, doc []byte, res Result, docErr error, deletions uint64) {
	r.smu.Lock()
	prev := r.status[owner]
	r.smu.Unlock()
	s := &SourceStatus{Source: owner.Source, File: owner.File, Applied: true}
	switch {
	case docErr != nil:
		if prev != nil {
			s.Skipped, s.NextRetry = prev.Skipped, prev.NextRetry
		}
		s.Error = docErr.Error()
	default:
		r.setHeld(owner, res, deletions)
		rt := r.retryOf(owner)
		if wait := r.schedule(rt, doc, len(res.passing) > 0); wait > 0 {
			log := r.logFor(owner)
			ev := log.Debug()
			if rt.attempt == 1 {
				ev = log.Info()
			}
			ev.Strs("entries", res.passing).Float64("retryInSeconds", wait.Seconds()).
				Msg("declared entries failed for a passing reason; applying the declaration again after a back-off")
			s.NextRetry = rt.next.UTC().Format(time.RFC3339)
		}
		if res.Errors.Len() > 0 {
			s.Skipped = &res.Errors
		}
	}
	r.smu.Lock()
	defer r.smu.Unlock()
	r.status[owner] = s
	r.updateReadyLocked()
}

// Follow applies doc as owner's declaration now, and again each time a
// retry is due, until ctx is done; onApply, if not nil, is told each
// outcome. It is how a source that never changes (desired_config) still
// converges.
func (r *Reconciler) Follow(ctx context.Context, owner eventgrid.Owner, doc []byte, onApply func(Result, error)) {
	due := r.Retries(owner)
	for {
		res, err := r.Apply(ctx, owner, doc)
		if ctx.Err() != nil {
			return
		}
		if onApply != nil {
			onApply(res, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-due:
		}
	}
}
