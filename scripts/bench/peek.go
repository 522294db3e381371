package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The peek scenario's shape: a subscription holding about 64 MiB of 60 KB
// events, and rounds of 64 concurrent peeks of the top 1,000.
const (
	peekEventSize = 60 << 10
	peekHeld      = 64 << 20
	peekClients   = 64
	peekTop       = 1000
	peekRounds    = 3
)

// scenarioJ queues about 64 MiB of 60 KB events for a dead subscriber
// (connection refused, back-off of an hour), then peeks at them
// (GET …/events?top=1000) from 64 clients at once, peekRounds times, each
// client reading its answer whole as fast as it can, while the broker's
// RSS is sampled. What the peeks raise the RSS by, at its highest, must
// stay under the 64 MiB the subscription holds: an answer is written as it
// is read, not built whole.
func (s *settings) scenarioJ() (r result, err error) {
	r = result{Scenario: "j", Title: fmt.Sprintf("%d concurrent peeks (top=%d) of 64 MiB of 60 KB events", peekClients, peekTop),
		Subscriptions: 1, PublishBatch: 1, DeliveryBatch: 1}
	deadAddr, err := freeAddr()
	if err != nil {
		return r, err
	}
	dead := "http://" + deadAddr + "/dead"
	pprofAddr, err := freeAddr()
	if err != nil {
		return r, err
	}
	events := int64((peekHeld + peekEventSize - 1) / peekEventSize)
	b, err := s.startBroker(&r, map[string]string{
		"broker__backoffIntervals":              "1h,1h",
		"broker__maxQueuedBytesPerSubscription": fmt.Sprint(2 * peekHeld),
		"debug__pprofAddress":                   pprofAddr,
	})
	if err != nil {
		return r, err
	}
	defer stopBroker(&r, b)
	mgmt := &http.Client{Timeout: 10 * time.Second}
	if err := b.createTopic(mgmt, topic); err != nil {
		return r, err
	}
	if err := b.subscribe(mgmt, topic, "dead", dead, 0); err != nil {
		return r, err
	}
	pub := newPublisher(b.url, topic, peekEventSize, 4)
	defer pub.close()
	var seq atomic.Int64
	r.Publish = pub.run(closedLoop{publishers: 4, batch: 1, total: events}, &seq)
	if r.Publish.Accepted != events {
		return r, fmt.Errorf("only %d of %d events were accepted (%d refused, %d failed: %s)",
			r.Publish.Accepted, events, r.Publish.Rejected, r.Publish.Errors+r.Publish.OtherStatus, r.Publish.FirstError)
	}
	// Every event has had its first attempt, refused: all wait in back-off.
	settle(b.pid)
	if err := b.collect(pprofAddr); err != nil {
		return r, err
	}
	before, err := procMem(b.pid)
	if err != nil {
		return r, err
	}
	liveBefore := b.liveHeap.Load()

	m, err := startMeter(b, "j", s.perfDir)
	if err != nil {
		return r, err
	}
	peak := sampleRSS(b.pid, 10*time.Millisecond)
	url := b.url + "/topics/" + topic + "/eventSubscriptions/dead/events" + apiVersion + fmt.Sprintf("&top=%d", peekTop)
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: peekClients}}
	var (
		answered, failed, bytesRead atomic.Int64
		firstErr                    atomic.Value
	)
	t0 := time.Now()
	for range peekRounds {
		var wg sync.WaitGroup
		for range peekClients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := peekOnce(client, url)
				bytesRead.Add(n)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					return
				}
				answered.Add(1)
			}()
		}
		wg.Wait()
	}
	seconds := time.Since(t0).Seconds()
	highest := peak.stop()
	if err := m.finish(&r, answered.Load()); err != nil {
		return r, err
	}
	after, err := procMem(b.pid)
	if err != nil {
		return r, err
	}
	if err := b.collect(pprofAddr); err != nil {
		return r, err
	}
	liveAfter := b.liveHeap.Load()
	r.RSS, r.PeakRSS = after.RSS, highest

	raise := highest - before.RSS
	r.detail("held_events", events)
	r.detail("peeks", answered.Load())
	r.detail("failed_peeks", failed.Load())
	r.detail("answer_bytes_per_peek", bytesRead.Load()/max(answered.Load(), 1))
	r.detail("peek_seconds", seconds)
	r.detail("rss_before_peeks_bytes", before.RSS)
	r.detail("highest_rss_during_peeks_bytes", highest)
	r.detail("rss_raise_bytes", raise)
	r.detail("rss_after_peeks_bytes", after.RSS)
	r.detail("live_heap_before_bytes", liveBefore)
	r.detail("live_heap_after_bytes", liveAfter)
	if v := firstErr.Load(); v != nil {
		r.note("first failed peek: %s", v)
	}
	r.note("%d events of %d KB held (%.0f MB); RSS %.1f MB before the peeks, at most %.1f MB during %d rounds of %d concurrent peeks (+%.1f MB), %.1f MB after",
		events, peekEventSize>>10, float64(events*peekEventSize)/mb, float64(before.RSS)/mb, float64(highest)/mb,
		peekRounds, peekClients, float64(raise)/mb, float64(after.RSS)/mb)
	r.note("%d peeks answered, %d failed, %.1f MB each; live heap %.1f MB before, %.1f MB after a collection",
		answered.Load(), failed.Load(), float64(bytesRead.Load())/float64(max(answered.Load(), 1))/mb,
		float64(liveBefore)/mb, float64(liveAfter)/mb)
	r.judge("64 concurrent peeks raise the RSS by less than 64 MiB", failed.Load() == 0 && raise < 64<<20)
	return r, nil
}

// peekOnce reads one peek's answer whole and returns its length.
func peekOnce(c *http.Client, url string) (int64, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return n, err
	}
	if resp.StatusCode != http.StatusOK {
		return n, fmt.Errorf("peek: %s", resp.Status)
	}
	return n, nil
}

// rssSampler records the highest RSS of a process, read every interval.
type rssSampler struct {
	stopped chan struct{}
	done    chan struct{}
	highest atomic.Int64
}

func sampleRSS(pid int, every time.Duration) *rssSampler {
	s := &rssSampler{stopped: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if m, err := procMem(pid); err == nil && m.RSS > s.highest.Load() {
				s.highest.Store(m.RSS)
			}
			select {
			case <-s.stopped:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the highest RSS seen.
func (s *rssSampler) stop() int64 {
	close(s.stopped)
	<-s.done
	return s.highest.Load()
}

// freeAddr returns a loopback address that was just free.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
