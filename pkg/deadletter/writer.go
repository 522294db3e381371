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

// flush writes one blob of p's letters, or gives up on those past MaxWait.
// It returns when p is due again.
func (w *Writer) flush(p *pending, now time.Time) time.Time {
	w.mu.Lock()
	var expired []letter
	kept := p.letters[:0]
	for _, l := range p.letters {
		if now.Sub(l.queued) >= w.opts.MaxWait {
			expired = append(expired, l)
			p.bytes -= len(l.Body)
		} else {
			kept = append(kept, l)
		}
	}
	clear(p.letters[len(kept):])
	p.letters = kept
	n, size := 0, 0
	for n < len(p.letters) && n < w.opts.MaxBlobEvents && (n == 0 || size+len(p.letters[n].Body) <= w.opts.MaxBlobBytes) {
		size += len(p.letters[n].Body)
		n++
	}
	batch := append([]letter(nil), p.letters[:n]...)
	sub := p.sub
	w.mu.Unlock()
	if len(expired) > 0 {
		w.drop(expired, fmt.Sprintf("storage did not take them within %v", w.opts.MaxWait))
	}
	if len(batch) == 0 {
		return now.Add(time.Hour)
	}
	err := w.write(sub, batch, now)
	w.mu.Lock()
	if err != nil && p.deleted {
		rest := p.letters
		p.letters, p.bytes = nil, 0
		delete(w.pending, sub.UID)
		w.mu.Unlock()
		w.drop(rest, "their subscription was deleted and storage did not take them: "+err.Error())
		return now.Add(time.Hour)
	}
	defer w.mu.Unlock()
	if err != nil {
		w.opts.Metrics.DeadLetterWriteFailed(sub)
		p.backoff = min(max(p.backoff*2, w.opts.RetryInterval), max(w.opts.FlushInterval, w.opts.RetryInterval))
		p.next = now.Add(p.backoff)
		p.failures++
		if now.Sub(p.lastLog) >= time.Minute {
			w.log.Error().Str("topic", sub.Topic).Str("subscription", sub.Name).Int("waiting", len(p.letters)).
				Int("failedWrites", p.failures).Str("error", err.Error()).Float64("retryInSeconds", p.backoff.Seconds()).
				Msg("dead letters could not be written to storage; they wait and are retried")
			p.lastLog, p.failures = now, 0
		}
		return p.next
	}
	// The letters written are the first len(batch) ones still pending: new
	// ones are only ever appended.
	clear(p.letters[:n])
	p.letters = p.letters[n:]
	p.bytes -= size
	p.backoff, p.lastWrite = 0, now
	p.next = now.Add(w.opts.FlushInterval)
	if w.fullLocked(p) || p.deleted {
		// A backlog of full blobs goes as fast as storage takes it, and
		// so do the letters of a deleted subscription.
		p.next = now
	}
	w.opts.Metrics.DeadLetterWritten(sub, n)
	for _, l := range batch {
		l.Done()
	}
	if len(p.letters) == 0 {
		delete(w.pending, sub.UID)
		if !p.deleted && p.lastWrite.Add(w.opts.FlushInterval).After(now) {
			// Keep the spacing for the next letters.
			w.pending[sub.UID] = &pending{lastWrite: p.lastWrite, sub: sub}
		}
	}
	return p.next
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
	c, err := container.NewClientFromConnectionString(dl.ConnectionString, dl.ContainerName, opts)
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
// gives up on the rest. It returns the number given up on. A write in
// progress is let finish (within ctx): cancelled, it could have stored its
// blob unseen, and the last try would write its letters a second time.
func (w *Writer) Close(ctx context.Context) int {
	w.mu.Lock()
	again := w.stopped
	w.stopped = true
	w.mu.Unlock()
	if again {
		return 0
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
	return n
}
