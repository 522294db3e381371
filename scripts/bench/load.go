package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fixed-width fields of a benchmark event, written in place before each
// request: the id (a string, zero-padded) and the publish time in Unix
// nanoseconds (a number, 19 digits until the year 2286).
const (
	idDigits    = 12
	stampDigits = 19
)

// Event text around the two fields and the padding.
const (
	evHead  = `{"id":"`
	evMid   = `","subject":"bench","eventType":"bench","eventTime":"2026-01-01T00:00:00Z","dataVersion":"1.0","data":{"bt":`
	evPad   = `,"pad":"`
	evTail  = `"}}`
	evFixed = len(evHead) + idDigits + len(evMid) + stampDigits + len(evPad) + len(evTail)
)

// batchBody is a publish request body, a JSON array of events of a given
// size each, with the offsets of each event's id and publish time so they
// can be rewritten in place for the next request.
type batchBody struct {
	buf  []byte
	idAt []int
	btAt []int
}

// newBatchBody lays out k events of size bytes each (the smallest size an
// event can have is evFixed; smaller sizes give events of that size).
func newBatchBody(k, size int) *batchBody {
	pad := strings.Repeat("x", max(size-evFixed, 0))
	b := &batchBody{buf: make([]byte, 0, k*(evFixed+len(pad)+1)+1)}
	b.buf = append(b.buf, '[')
	for i := range k {
		if i > 0 {
			b.buf = append(b.buf, ',')
		}
		b.buf = append(b.buf, evHead...)
		b.idAt = append(b.idAt, len(b.buf))
		b.buf = append(b.buf, strings.Repeat("0", idDigits)...)
		b.buf = append(b.buf, evMid...)
		b.btAt = append(b.btAt, len(b.buf))
		b.buf = append(b.buf, strings.Repeat("1", stampDigits)...)
		b.buf = append(b.buf, evPad...)
		b.buf = append(b.buf, pad...)
		b.buf = append(b.buf, evTail...)
	}
	b.buf = append(b.buf, ']')
	return b
}

// stamp numbers the events from seq on and sets their publish time to t
// (Unix nanoseconds).
func (b *batchBody) stamp(seq, t int64) {
	for i := range b.idAt {
		putDigits(b.buf[b.idAt[i]:b.idAt[i]+idDigits], seq+int64(i))
		putDigits(b.buf[b.btAt[i]:b.btAt[i]+stampDigits], t)
	}
}

// putDigits writes v into dst in decimal, right-aligned and zero-padded; the
// most significant digits are lost if v does not fit.
func putDigits(dst []byte, v int64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
}

// publisher posts benchmark events to one topic over kept-alive
// connections.
type publisher struct {
	client *http.Client
	url    string // the topic's batch publish URL
	size   int
}

func newPublisher(base, topic string, size, conns int) *publisher {
	t := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return &publisher{
		client: &http.Client{Transport: t, Timeout: 2 * time.Minute},
		url:    base + "/topics/" + topic + "/events" + apiVersion,
		size:   size,
	}
}

func (p *publisher) close() { p.client.CloseIdleConnections() }

// post sends one publish request.
func (p *publisher) post(body []byte) (status int, retryAfter string, err error) {
	req, err := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

// publishStats counts what publishing did.
type publishStats struct {
	Requests          int64  `json:"requests"`
	Accepted          int64  `json:"accepted_events"`
	Rejected          int64  `json:"rejected_503"`
	MissingRetryAfter int64  `json:"rejected_without_retry_after"`
	RetryAfter        string `json:"retry_after,omitempty"`
	OtherStatus       int64  `json:"other_status"`
	Errors            int64  `json:"errors"`
	FirstError        string `json:"first_error,omitempty"`
	// Late counts, at a fixed rate, requests sent more than 1 ms after they
	// were due; MaxLate is the latest.
	Late    int64         `json:"late_over_1ms,omitempty"`
	MaxLate time.Duration `json:"max_late_ns,omitempty"`
}

func (s *publishStats) add(o publishStats) {
	s.Requests += o.Requests
	s.Accepted += o.Accepted
	s.Rejected += o.Rejected
	s.MissingRetryAfter += o.MissingRetryAfter
	s.OtherStatus += o.OtherStatus
	s.Errors += o.Errors
	s.Late += o.Late
	s.MaxLate = max(s.MaxLate, o.MaxLate)
	if s.RetryAfter == "" {
		s.RetryAfter = o.RetryAfter
	}
	if s.FirstError == "" {
		s.FirstError = o.FirstError
	}
}

// count records the outcome of one request of k events.
func (s *publishStats) count(k int, status int, retryAfter string, err error) {
	s.Requests++
	switch {
	case err != nil:
		s.Errors++
		if s.FirstError == "" {
			s.FirstError = err.Error()
		}
	case status == http.StatusOK:
		s.Accepted += int64(k)
	case status == http.StatusServiceUnavailable:
		s.Rejected++
		if retryAfter == "" {
			s.MissingRetryAfter++
		} else {
			s.RetryAfter = retryAfter
		}
	default:
		s.OtherStatus++
		if s.FirstError == "" {
			s.FirstError = "publish answered " + http.StatusText(status)
		}
	}
}

// closedLoop is a load of concurrent publishers, each sending its next
// request when the previous one is answered.
type closedLoop struct {
	publishers int
	batch      int       // events per request
	total      int64     // events to publish; 0 publishes until deadline
	deadline   time.Time // used when total is 0
	// retry503 resends a refused request after a short pause (the events
	// keep their numbers and get a new publish time) instead of counting
	// its events as not published, for up to giveUp per request.
	retry503 bool
	giveUp   time.Duration
}

// run publishes and returns what happened. seq numbers the events from
// its value on and is advanced past them.
func (p *publisher) run(l closedLoop, seq *atomic.Int64) publishStats {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total publishStats
		k     = int64(l.batch)
	)
	for range l.publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var st publishStats
			body := newBatchBody(l.batch, p.size)
			for {
				if l.total == 0 && time.Now().After(l.deadline) {
					break
				}
				first := seq.Add(k) - k
				if l.total > 0 && first+k > l.total {
					break
				}
				refusedSince := time.Time{}
				for {
					body.stamp(first, time.Now().UnixNano())
					status, ra, err := p.post(body.buf)
					st.count(l.batch, status, ra, err)
					if err != nil {
						// The transport may still hold the buffer.
						body = newBatchBody(l.batch, p.size)
						if st.Errors > 100 {
							break
						}
					}
					if status == http.StatusServiceUnavailable && l.retry503 {
						if refusedSince.IsZero() {
							refusedSince = time.Now()
						}
						if time.Since(refusedSince) < l.giveUp {
							time.Sleep(5 * time.Millisecond)
							continue
						}
					}
					break
				}
				if st.Errors > 100 {
					break
				}
			}
			mu.Lock()
			total.add(st)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total
}

// fixedRate publishes one event per request at rate events per second for
// the duration dur, open loop: request i is due at start+i/rate whatever happened to the
// others; workers bounds the requests in flight. Each event carries the time
// its request was actually sent. Requests sent more than 1 ms after they
// were due are counted in Late: some are timer and scheduling granularity
// on a busy machine; many, or long ones, mean the broker answers too slowly
// for the workers to keep up.
func (p *publisher) fixedRate(rate float64, dur time.Duration, workers int, start time.Time) publishStats {
	interval := time.Duration(float64(time.Second) / rate)
	n := int64(dur / interval)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total publishStats
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var st publishStats
			body := newBatchBody(1, p.size)
			for i := int64(w); i < n; i += int64(workers) {
				due := start.Add(time.Duration(i) * interval)
				if wait := time.Until(due); wait > 0 {
					time.Sleep(wait)
				}
				now := time.Now()
				if late := now.Sub(due); late > time.Millisecond {
					st.Late++
					st.MaxLate = max(st.MaxLate, late)
				}
				body.stamp(i, now.UnixNano())
				status, ra, err := p.post(body.buf)
				st.count(1, status, ra, err)
				if err != nil {
					body = newBatchBody(1, p.size)
				}
			}
			mu.Lock()
			total.add(st)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total
}
