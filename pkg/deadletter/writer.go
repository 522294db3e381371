package deadletter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/azconn"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Options configure a Writer. Zero values take the defaults.
type Options struct {
	// FlushInterval is the most time a subscription's letters wait to
	// fill a blob, and the least time between two blobs that are not full
	// (broker__deadLetterFlushIntervalInSeconds, 60 s). A full blob's worth
	// of letters is written at once, as often as storage takes it.
	FlushInterval time.Duration
	// MaxWait is how long letters wait for storage before they are dropped
	// (4 hours, as the cloud).
	MaxWait time.Duration
	// RetryInterval is the first wait after a failed write; it doubles up
	// to FlushInterval.
	RetryInterval time.Duration
	// WriteTimeout bounds one write.
	WriteTimeout time.Duration
	// MaxBlobEvents bounds the events of one blob (1,000).
	MaxBlobEvents int
	// MaxBlobBytes bounds the bytes of one blob's events (4 MiB); a blob
	// holds at least one event.
	MaxBlobBytes int
	// Metrics, if not nil, counts what happens to the letters.
	Metrics Metrics
}

func (o *Options) setDefaults() {
	if o.FlushInterval <= 0 {
		o.FlushInterval = time.Minute
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 4 * time.Hour
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = min(5*time.Second, o.FlushInterval)
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.MaxBlobEvents <= 0 {
		o.MaxBlobEvents = 1000
	}
	if o.MaxBlobBytes <= 0 {
		o.MaxBlobBytes = 4 << 20
	}
	if o.Metrics == nil {
		o.Metrics = nopMetrics{}
	}
}

// Metrics receives what the Writer measures; implementations must not
// block.
type Metrics interface {
	// DeadLetterWritten counts n events written to storage.
	DeadLetterWritten(sub *eventgrid.EventSubscription, n int)
	// DeadLetterWriteFailed counts one failed write.
	DeadLetterWriteFailed(sub *eventgrid.EventSubscription)
	// DeadLetterDropped counts n events dropped after waiting MaxWait.
	DeadLetterDropped(sub *eventgrid.EventSubscription, n int)
}

type nopMetrics struct{}

func (nopMetrics) DeadLetterWritten(*eventgrid.EventSubscription, int) {}
func (nopMetrics) DeadLetterWriteFailed(*eventgrid.EventSubscription)  {}
func (nopMetrics) DeadLetterDropped(*eventgrid.EventSubscription, int) {}

// Writer writes dead letters to their subscriptions' containers. Create it
// with New; Close stops it.
type Writer struct {
	opts Options
	log  zerolog.Logger

	mu      sync.Mutex
	pending map[uint64]*pending // by subscription UID
	stopped bool
	wake    chan struct{}
	stop    chan struct{} // closed by Close: run returns after its write
	done    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
}

// pending is one subscription's letters waiting to be written.
type pending struct {
	sub       *eventgrid.EventSubscription
	letters   []letter
	bytes     int       // of the letters' bodies
	lastWrite time.Time // of the last blob
	next      time.Time // no write before
	backoff   time.Duration
	lastLog   time.Time // of the last failure line
	failures  int       // failed writes since the last logged line
	// deleted: the subscription was deleted. Its letters no longer count
	// against the budget; they are written at once, as storage takes
	// them, and dropped at the first failure.
	deleted bool
}

type letter struct {
	eventgrid.DeadLetter
	queued time.Time
}

var _ eventgrid.DeadLetterer = (*Writer)(nil)

// New returns a running Writer.
func New(o Options, logger zerolog.Logger) *Writer {
	o.setDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	w := &Writer{
		opts:    o,
		log:     logger.With().Str("component", "deadletter").Logger(),
		pending: map[uint64]*pending{},
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		ctx:     ctx,
		cancel:  cancel,
	}
	go w.run()
	return w
}

// DeadLetter implements eventgrid.DeadLetterer. It only queues the letter.
func (w *Writer) DeadLetter(l eventgrid.DeadLetter) {
	l.Done = once(l.Done)
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		w.drop([]letter{{DeadLetter: l}}, "the broker is stopping")
		return
	}
	p := w.pending[l.Subscription.UID]
	now := time.Now()
	if p == nil {
		p = &pending{}
		w.pending[l.Subscription.UID] = p
	}
	if len(p.letters) == 0 {
		// The first letter after a quiet spell goes at once, the rest wait
		// for the flush interval to fill a blob.
		p.next = maxTime(now, p.lastWrite.Add(w.opts.FlushInterval), p.next)
	}
	p.sub = l.Subscription
	if p.deleted {
		l.Done() // its subscription is gone: it no longer counts
	}
	p.letters = append(p.letters, letter{DeadLetter: l, queued: now})
	p.bytes += len(l.Body)
	if w.fullLocked(p) && p.backoff == 0 {
		// A full blob's worth goes at once, unless storage is failing.
		p.next = now
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// fullLocked reports whether p holds at least a blob's worth of letters.
func (w *Writer) fullLocked(p *pending) bool {
	return len(p.letters) >= w.opts.MaxBlobEvents || p.bytes >= w.opts.MaxBlobBytes
}

func maxTime(ts ...time.Time) time.Time {
	m := ts[0]
	for _, t := range ts[1:] {
		if t.After(m) {
			m = t
		}
	}
	return m
}

// run writes what is due until Close.
func (w *Writer) run() {
	defer close(w.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := w.flushDue(time.Now())
		timer.Reset(max(time.Until(next), time.Millisecond))
		select {
		case <-w.stop:
			return
		case <-w.wake:
		case <-timer.C:
		}
	}
}

// flushDue writes every subscription's due letters and returns when the
// next write is due.
func (w *Writer) flushDue(now time.Time) time.Time {
	next := now.Add(time.Hour)
	w.mu.Lock()
	var due []*pending
	for _, p := range w.pending {
		if len(p.letters) == 0 {
			continue
		}
		if !p.next.After(now) {
			due = append(due, p)
		} else if p.next.Before(next) {
			next = p.next
		}
	}
	w.mu.Unlock()
	for _, p := range due {
		if t := w.flush(p, time.Now()); t.Before(next) {
			next = t
		}
	}
	return next
}

// drop gives up on letters, with a log line and a counter.
func (w *Writer) drop(ls []letter, why string) {
	if len(ls) == 0 {
		return
	}
	sub := ls[0].Subscription
	w.opts.Metrics.DeadLetterDropped(sub, len(ls))
	w.log.Error().Str("topic", sub.Topic).Str("subscription", sub.Name).Int("events", len(ls)).
		Msg("dead letters dropped: " + why)
	for _, l := range ls {
		l.Done()
	}
}

// write puts one blob of letters into sub's container, creating the
// container when it is missing.
func (w *Writer) write(sub *eventgrid.EventSubscription, ls []letter, now time.Time) error {
	dl := sub.DeadLetter
	if dl == nil {
		return errors.New("the subscription no longer has a dead-letter destination")
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i := range ls {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(Shape(&ls[i].DeadLetter))
	}
	buf.WriteByte(']')
	opts := &container.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}
	// The SDK reads keys in their documented case only: it gets the string
	// as the PUT read it (azconn), in the form it takes.
	st, err := azconn.ParseStorage(dl.ConnectionString)
	if err != nil {
		return errors.New("the connection string is not usable")
	}
	c, err := container.NewClientFromConnectionString(st.ConnectionString(), dl.ContainerName, opts)
	if err != nil {
		return errors.New("the connection string is not usable")
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.opts.WriteTimeout)
	defer cancel()
	name := blobName(sub.Name, now)
	_, err = c.NewBlockBlobClient(name).UploadBuffer(ctx, buf.Bytes(), nil)
	if bloberror.HasCode(err, bloberror.ContainerNotFound) {
		if _, cerr := c.Create(ctx, nil); cerr != nil && !bloberror.HasCode(cerr, bloberror.ContainerAlreadyExists) {
			return describe(cerr)
		}
		_, err = c.NewBlockBlobClient(name).UploadBuffer(ctx, buf.Bytes(), nil)
	}
	return describe(err)
}

// describe reduces a storage error to what may be logged: the status and
// the service's error code, or the kind of network failure, never a URL or
// a key.
func describe(err error) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Errorf("storage answered %d %s", re.StatusCode, re.ErrorCode)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("storage did not answer in time")
	}
	return fmt.Errorf("storage unreachable: %s", redactURLs(err.Error()))
}

// Close writes what it can of the waiting letters until ctx is done, then
// gives up on the rest (counted as dropped), and returns an error saying
// how many it gave up on. A write in progress is let finish (within ctx):
// cancelled, it could have stored its blob unseen, and the last try would
// write its letters a second time. Later calls do nothing.
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	again := w.stopped
	w.stopped = true
	w.mu.Unlock()
	if again {
		return nil
	}
	close(w.stop)
	select {
	case <-w.done:
	case <-ctx.Done():
		w.cancel()
		<-w.done
	}
	w.cancel()
	// One last try for everything waiting, within ctx.
	w.ctx = ctx
	w.mu.Lock()
	var all []*pending
	for _, p := range w.pending {
		if len(p.letters) > 0 {
			all = append(all, p)
		}
	}
	w.mu.Unlock()
	n := 0
	for _, p := range all {
		for len(p.letters) > 0 && ctx.Err() == nil {
			before := len(p.letters)
			w.flush(p, time.Now())
			if len(p.letters) == before {
				break // storage refused; do not spin
			}
		}
		w.mu.Lock()
		rest := p.letters
		p.letters, p.bytes = nil, 0
		w.mu.Unlock()
		n += len(rest)
		w.drop(rest, "the broker is stopping")
	}
	if n > 0 {
		return fmt.Errorf("deadletter: %d dead letters not written before the stop timeout were dropped", n)
	}
	return nil
}
