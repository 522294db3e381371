package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// viewer is what the console asks of a broker while an operator watches
// it: the topic's live tail and the subscription's delivery outcomes, both
// read as they come, and the data calls of the subscription and overview
// views every second (docs/console.md).
type viewer struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	streamEvents, dropped, polls, pollErrors, reopened atomic.Int64
	firstErr                                           atomic.Value // string
}

// startViewer opens the streams of topic and of its subscription sub, and
// starts polling.
func startViewer(base, topic, sub string) (*viewer, error) {
	ctx, cancel := context.WithCancel(context.Background())
	v := &viewer{cancel: cancel}
	subPath := "/topics/" + topic + "/eventSubscriptions/" + sub
	for _, p := range []string{"/topics/" + topic + "/events", subPath + "/deliveries"} {
		url := base + p + apiVersion
		body, err := openEventStream(ctx, url)
		if err != nil {
			v.close()
			return nil, err
		}
		v.wg.Add(1)
		go v.follow(ctx, url, body)
	}
	polled := []string{
		"/topics", "/topics/" + topic, "/topics/" + topic + "/eventSubscriptions", subPath,
		subPath + "/events?top=50", subPath + "/failures?top=100", subPath + "/history", "/topics/" + topic + "/history",
	}
	v.wg.Add(1)
	go v.poll(ctx, base, polled)
	return v, nil
}

func openEventStream(ctx context.Context, url string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return resp.Body, nil
}

// follow reads the stream at url, body first, and opens it again when
// the broker ends it (a stream lasts 1.5 × the request timeout), as the
// console does, until ctx is done.
func (v *viewer) follow(ctx context.Context, url string, body io.ReadCloser) {
	defer v.wg.Done()
	for {
		v.read(body)
		var err error
		for body = nil; body == nil && ctx.Err() == nil; {
			if body, err = openEventStream(ctx, url); err != nil {
				select { // refused for the limit while the last one ends
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
		if ctx.Err() != nil {
			return
		}
		v.reopened.Add(1)
	}
}

// read counts a stream's events, and the items the broker says it dropped
// because this reader fell behind, until the stream ends.
func (v *viewer) read(body io.ReadCloser) {
	defer body.Close()
	r := bufio.NewReaderSize(body, 64<<10)
	dropped := false
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			for err == bufio.ErrBufferFull { // a long data line: skip the rest
				_, err = r.ReadSlice('\n')
			}
			continue
		}
		if err != nil {
			return
		}
		s := string(line)
		switch {
		case s == "event: dropped\n":
			dropped = true
		case strings.HasPrefix(s, "event: "):
			v.streamEvents.Add(1)
		case dropped && strings.HasPrefix(s, "data: "):
			var d struct{ Count int64 }
			if json.Unmarshal(line[len("data: "):], &d) == nil {
				v.dropped.Add(d.Count)
			}
			dropped = false
		}
	}
}

// poll makes the views' data calls every second, as the page does.
func (v *viewer) poll(ctx context.Context, base string, paths []string) {
	defer v.wg.Done()
	c := &http.Client{Timeout: 10 * time.Second}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		for _, p := range paths {
			url := base + p + apiVersion
			if path, query, ok := strings.Cut(p, "?"); ok {
				url = base + path + apiVersion + "&" + query
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := c.Do(req)
			if ctx.Err() != nil {
				return
			}
			v.polls.Add(1)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("GET %s: %s", p, resp.Status)
				}
			}
			if err != nil {
				v.pollErrors.Add(1)
				v.firstErr.CompareAndSwap(nil, err.Error())
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// close stops the viewer and waits for it.
func (v *viewer) close() {
	v.cancel()
	v.wg.Wait()
}

// report records what the viewer saw in r.
func (v *viewer) report(r *result) {
	r.detail("console_stream_events", v.streamEvents.Load())
	r.detail("console_stream_dropped", v.dropped.Load())
	r.detail("console_polls", v.polls.Load())
	r.detail("console_streams_reopened", v.reopened.Load())
	r.note("console open: %d stream events read (%d dropped for the reader), %d data calls (%d failed), streams reopened %d times",
		v.streamEvents.Load(), v.dropped.Load(), v.polls.Load(), v.pollErrors.Load(), v.reopened.Load())
	if e, ok := v.firstErr.Load().(string); ok {
		r.note("first failed data call: %s", e)
	}
}

// scenarioI runs b's flow with nobody watching and with the console open
// (a live tail, the delivery outcomes and a page polling every second),
// alternating, -console-rounds times each, and compares the delivered
// events per second: the console should cost under 5 %.
func (s *settings) scenarioI() []result {
	var out []result
	var sum [2]float64
	var n [2]int
	for round := range s.consoleRounds {
		for k, watch := range []bool{false, true} {
			name, title := "i", "b with nobody watching"
			if watch {
				name, title = "i+console", "b with a live tail, the delivery outcomes and a page polling every second"
			}
			if s.waitIdle > 0 {
				if _, idle := waitIdle(s.waitIdle); !idle {
					fmt.Fprintf(os.Stderr, "scenario %s: the machine is still busy after %v\n", name, s.waitIdle)
				}
			}
			fmt.Fprintf(os.Stderr, "scenario %s (round %d)…\n", name, round+1)
			r, err := s.runFlow(flow{name: name, title: title, subs: 1, hang: -1, publishBatch: 100, deliveryBatch: 50,
				total: amount(s.events, 100), measure: []int{0}, watch: watch})
			if err != nil {
				r.Error = err.Error()
			} else if r.EventsPerSecond > 0 {
				sum[k] += r.EventsPerSecond
				n[k]++
			}
			out = append(out, r)
		}
	}
	if n[0] == 0 || n[1] == 0 {
		return out
	}
	off, on := sum[0]/float64(n[0]), sum[1]/float64(n[1])
	last := &out[len(out)-1]
	ratio := on / off
	last.detail("console_vs_none", ratio)
	last.note("mean of %d rounds: %.0f events/s with the console open, %.0f without: %+.1f%%", n[1], on, off, 100*(ratio-1))
	last.judge("within 5% of nobody watching", ratio >= 0.95)
	return out
}
