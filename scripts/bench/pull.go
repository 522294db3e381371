package main

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Scenario g: pull delivery. The publishers of b feed a queue subscription
// (deliveryMode Queue) of an EventGridSchema topic, which hands out the
// events converted to CloudEvents, and pullReceivers receivers each loop on
// :receive (maxEvents 100) and :acknowledge of every lock token received.
//
// It publishes a fixed number of events (-events, or pullEvents) with the
// broker's default queue budget, as b runs with: the subscription holds at
// most its share (25,000 events by default), and publishers that find it
// full are held for room, not refused, so the figures measure delivery at
// the pace the receivers set. (With room for every event, as g had before,
// the queue held the whole run's backlog, which b never holds, and the
// collector's work on it weighed on every event.)
const (
	pullReceivers = 4
	pullMaxEvents = 100
	pullEvents    = 400000
)

func (s *settings) scenarioG() (r result, err error) {
	r = result{Scenario: "g", Title: fmt.Sprintf("pull: 100-event publish, %d receivers of %d events, receive + acknowledge", pullReceivers, pullMaxEvents),
		Subscriptions: 1, PublishBatch: 100, DeliveryBatch: pullMaxEvents}
	total := amount(s.events, 100)
	if total == 0 {
		total = pullEvents
	}
	b, err := s.startBroker(&r, nil)
	if err != nil {
		return r, err
	}
	defer stopBroker(&r, b)
	mgmt := &http.Client{Timeout: 10 * time.Second}
	if err := b.createTopic(mgmt, topic); err != nil {
		return r, err
	}
	if err := b.put(mgmt, "/topics/"+topic+"/eventSubscriptions/q", `{"properties":{"deliveryConfiguration":{"deliveryMode":"Queue","queue":{"receiveLockDurationInSeconds":300}}}}`); err != nil {
		return r, err
	}
	pub := newPublisher(b.url, topic, s.size, s.publishers)
	defer pub.close()

	m, err := startMeter(b, "g", s.perfDir)
	if err != nil {
		return r, err
	}
	t0 := time.Now()
	var (
		acked     atomic.Int64
		lastAck   atomic.Int64
		expected  atomic.Int64 // set once publishing is done
		stop      = make(chan struct{})
		wg        sync.WaitGroup
		mu        sync.Mutex
		lat       []int64
		requests  atomic.Int64
		errOnce   sync.Once
		firstErr  error
		published = make(chan struct{})
	)
	expected.Store(-1)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * pullReceivers, DisableCompression: true}, Timeout: time.Minute}
	defer client.CloseIdleConnections()
	sub := b.url + "/topics/" + topic + "/eventSubscriptions/q"
	for range pullReceivers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var (
				samples        []int64
				body, req, ack []byte
				tokens         []string
			)
			defer func() { mu.Lock(); lat = append(lat, samples...); mu.Unlock() }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				body, err = post(client, sub+":receive?api-version=2024-06-01&maxWaitTime=10&maxEvents="+fmt.Sprint(pullMaxEvents), nil, body)
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					continue
				}
				requests.Add(1)
				now := time.Now().UnixNano()
				samples, _ = latencies(body, now, samples)
				tokens, err = lockTokens(body, tokens[:0])
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					continue
				}
				if len(tokens) == 0 {
					continue
				}
				req = ackBody(req[:0], tokens)
				if ack, err = post(client, sub+":acknowledge?api-version=2024-06-01", req, ack); err != nil {
					errOnce.Do(func() { firstErr = err })
					continue
				}
				acked.Add(int64(len(tokens)))
				lastAck.Store(time.Now().UnixNano())
			}
		}()
	}
	var seq atomic.Int64
	go func() {
		defer close(published)
		r.Publish = pub.run(closedLoop{publishers: s.publishers, batch: 100, total: total,
			deadline: t0.Add(s.duration), retry503: true, giveUp: s.drain}, &seq)
		expected.Store(r.Publish.Accepted)
	}()
	<-published
	// Wait until every accepted event is acknowledged, or nothing moves for
	// -drain.
	last, since := acked.Load(), time.Now()
	for acked.Load() < expected.Load() {
		time.Sleep(20 * time.Millisecond)
		if n := acked.Load(); n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > s.drain {
			r.note("acknowledgements stopped short of the events published (nothing for %v)", s.drain)
			break
		}
	}
	close(stop)
	wg.Wait()
	r.Expected = expected.Load()
	r.Received = acked.Load()
	if err := m.finish(&r, r.Received); err != nil {
		return r, err
	}
	if !b.alive() {
		return r, fmt.Errorf("the broker died during the run\n%s", b.output())
	}
	if t := lastAck.Load(); t > 0 {
		r.Seconds = float64(t-t0.UnixNano()) / 1e9
		r.EventsPerSecond = float64(r.Received) / r.Seconds
	}
	r.Latency = summarize(lat)
	r.detail("receive_requests", requests.Load())
	if firstErr != nil {
		r.note("receiver error: %v", firstErr)
	}
	if r.Publish.Rejected > 0 {
		r.note("%d publish requests got 503 (queue share full) and were retried", r.Publish.Rejected)
	}
	r.note("latency is publish to receive; events are converted from EventGridSchema to CloudEvents on the way")
	return r, nil
}

// post sends a POST with a JSON body (or none) and returns the answer's
// body, read into buf, or an error unless the status is 200.
func post(c *http.Client, url string, body, buf []byte) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	rb, err := readBody(resp.Body, buf[:0], resp.ContentLength)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST %s: %s: %.200s", url, resp.Status, rb)
	}
	return rb, nil
}

// lockTokenKey precedes each event's lock token in a receive answer.
var lockTokenKey = []byte(`"lockToken":`)

// lockTokens appends to dst the lock tokens of a receive answer. Like the
// sink's count of events (latencies), it finds them by their member name
// instead of decoding the answer: no other part of a benchmark event
// contains that text, and decoding every event cost the receivers several
// times the broker's CPU, on the cores the broker is measured on, where
// b's sink decodes nothing. A token is a JSON string without escapes: the
// broker's are URL-safe base64.
func lockTokens(body []byte, dst []string) ([]string, error) {
	for {
		i := bytes.Index(body, lockTokenKey)
		if i < 0 {
			return dst, nil
		}
		body = bytes.TrimLeft(body[i+len(lockTokenKey):], " ")
		if len(body) == 0 || body[0] != '"' {
			return dst, fmt.Errorf("receive answer: a lockToken that is not a plain string: %.40s", body)
		}
		body = body[1:]
		end := bytes.IndexAny(body, `"\`)
		if end < 0 || body[end] != '"' {
			return dst, fmt.Errorf("receive answer: a lockToken that is not a plain string: %.40s", body)
		}
		dst = append(dst, string(body[:end]))
		body = body[end+1:]
	}
}

// ackBody appends to dst the body of an acknowledge of tokens.
func ackBody(dst []byte, tokens []string) []byte {
	dst = append(dst, `{"lockTokens":[`...)
	for i, t := range tokens {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, t...)
		dst = append(dst, '"')
	}
	return append(dst, "]}"...)
}
