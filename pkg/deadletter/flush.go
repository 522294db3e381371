package deadletter

import (
	"fmt"
	"time"
)

// flush writes one blob of p's letters, or gives up on those past MaxWait.
// It returns when p is due again.
func (w *Writer) flush(p *pending, now time.Time) time.Time {
	w.mu.Lock()
	expired := w.expireLocked(p, now)
	batch, size := w.batchLocked(p)
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
		return w.failedLocked(p, err, now)
	}
	return w.writtenLocked(p, batch, size, now)
}

// expireLocked takes out of p the letters that waited MaxWait, and returns
// them.
func (w *Writer) expireLocked(p *pending, now time.Time) []letter {
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
	return expired
}

// batchLocked returns a copy of the first letters of p that fit one blob,
// and the bytes of their bodies.
func (w *Writer) batchLocked(p *pending) (batch []letter, size int) {
	n := 0
	for n < len(p.letters) && n < w.opts.MaxBlobEvents && (n == 0 || size+len(p.letters[n].Body) <= w.opts.MaxBlobBytes) {
		size += len(p.letters[n].Body)
		n++
	}
	return append([]letter(nil), p.letters[:n]...), size
}

// failedLocked backs p off after a failed write, logging it at most once a
// minute, and returns when to try again.
func (w *Writer) failedLocked(p *pending, err error, now time.Time) time.Time {
	sub := p.sub
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

// writtenLocked takes the letters of batch, of size bytes, out of p once
// they are written, and returns when p's next blob may be written.
func (w *Writer) writtenLocked(p *pending, batch []letter, size int, now time.Time) time.Time {
	sub := p.sub
	// The letters written are the first len(batch) ones still pending: new
	// ones are only ever appended.
	n := len(batch)
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
