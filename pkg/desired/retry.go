package desired

import (
	"bytes"
	"time"

	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Defaults of Options.
const (
	DefaultRetryMin = time.Second
	DefaultRetryMax = time.Minute
)

// passing reports whether an entry failed for a reason of the moment, one
// that may go away without the declaration changing: an endpoint that did
// not answer its validation handshake as asked, a limit reached, a topic
// not there yet, a resource another source still holds, the broker busy.
// A name the REST API holds is not: only its deletion over the REST API
// ends that, and the deletion itself applies the declaration again
// (Reconciler.TopicDeleted). Any other failure is in the entry itself, and
// only a change of the declaration can mend it.
func passing(err error) bool {
	if eventgrid.HeldByAPI(err) {
		return false // only a DELETE over the REST API ends it: see Reconciler.TopicDeleted
	}
	if eventgrid.IsPassing(err) {
		return true
	}
	switch eventgrid.ErrorCode(err) {
	case eventgrid.ELimitExceeded, eventgrid.ETopicNotFound, eventgrid.EConflict,
		eventgrid.EUnavailable, eventgrid.EQueueFull, eventgrid.EInternal:
		return true
	}
	return false
}

// backoff returns the wait before retry number attempt (from 1): lo,
// doubling with each attempt, at most hi.
func backoff(attempt int, lo, hi time.Duration) time.Duration {
	d := lo
	for i := 1; i < attempt && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}

// retry is the retry schedule of one source.
type retry struct {
	doc     []byte // the document last applied
	attempt int    // retries scheduled since it was first applied
	next    time.Time
	stop    clock.Timer
	due     chan struct{} // signalled when a retry is due
}

// schedule arms the source's next retry after an apply of doc that left
// entries failed for a passing reason (passing), or disarms it. A changed
// document starts the back-off over. It returns the wait, 0 when none.
func (r *Reconciler) schedule(rt *retry, doc []byte, passing bool) time.Duration {
	if rt.stop != nil {
		rt.stop.Stop()
		rt.stop = nil
	}
	if !bytes.Equal(rt.doc, doc) {
		rt.doc, rt.attempt = bytes.Clone(doc), 0
	}
	if !passing {
		rt.attempt, rt.next = 0, time.Time{}
		return 0
	}
	rt.attempt++
	d := backoff(rt.attempt, r.opts.RetryMin, r.opts.RetryMax)
	rt.next = r.opts.Clock.Now().Add(d)
	due := rt.due
	rt.stop = r.opts.Clock.AfterFunc(d, func() {
		select {
		case due <- struct{}{}:
		default: // one is pending already
		}
	})
	return d
}
