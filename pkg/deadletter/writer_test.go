package deadletter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/deadletter"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/azurite"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

// counts records the Writer's metrics.
type counts struct {
	written, failed, dropped atomic.Int64

	mu    sync.Mutex
	sizes []int // of the blobs written, in order
}

func (c *counts) DeadLetterWritten(_ *eventgrid.EventSubscription, n int) {
	c.written.Add(int64(n))
	c.mu.Lock()
	c.sizes = append(c.sizes, n)
	c.mu.Unlock()
}

// blobSizes returns how many letters each blob written held, in order.
func (c *counts) blobSizes() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sizes)
}

func (c *counts) DeadLetterWriteFailed(*eventgrid.EventSubscription)      { c.failed.Add(1) }
func (c *counts) DeadLetterDropped(_ *eventgrid.EventSubscription, n int) { c.dropped.Add(int64(n)) }

func sub(name string, schema eventgrid.InputSchema, connStr string) *eventgrid.EventSubscription {
	return &eventgrid.EventSubscription{UID: uint64(len(name)) + uint64(name[0])<<8, Topic: "t1", Name: name, EventDeliverySchema: schema,
		DeadLetter: &eventgrid.DeadLetterDestination{EndpointType: eventgrid.StorageBlob, ContainerName: "deadletters", ConnectionString: connStr}}
}

var published = time.Date(2026, 2, 3, 4, 5, 6, 700000000, time.UTC)

func letter(s *eventgrid.EventSubscription, body, reason string, status int, outcome push.Outcome, done *atomic.Int64) eventgrid.DeadLetter {
	return eventgrid.DeadLetter{
		Subscription: s, Body: []byte(body), Reason: reason, Attempts: 3,
		LastOutcome: outcome.String(), LastStatus: status, Published: published,
		LastAttempt: published.Add(90 * time.Second), Done: func() { done.Add(1) },
	}
}

// blobs returns every blob of the container by name, each decoded as the
// JSON array it must be.
func blobs(t *testing.T, connStr string) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for name, raw := range azurite.Blobs(t, connStr, "deadletters") {
		var events []map[string]any
		if err := json.Unmarshal(raw, &events); err != nil {
			t.Fatalf("blob %s is not a JSON array: %v: %s", name, err, raw)
		}
		out[name] = events
	}
	return out
}

func allEvents(m map[string][]map[string]any) []map[string]any {
	var all []map[string]any
	for _, evs := range m {
		all = append(all, evs...)
	}
	return all
}

var blobPath = regexp.MustCompile(`^([A-Z0-9_-]+)/(\d{4})/([1-9]\d?)/([1-9]\d?)/(\d{1,2})/[0-9a-f-]{36}\.json$`)

func TestWriter_ShapesAndLayout(t *testing.T) {
	az := azurite.Start(t)
	connStr := az.ConnectionString(azurite.Key)
	m := &counts{}
	w := deadletter.New(deadletter.Options{FlushInterval: 200 * time.Millisecond, Metrics: m}, zerolog.Nop())
	defer w.Close(context.Background())
	var done atomic.Int64
	eg := sub("egSub", eventgrid.EventGridSchema, connStr)
	ce := sub("ceSub", eventgrid.CloudEventSchemaV1_0, connStr)
	custom := sub("customSub", eventgrid.CustomEventSchema, connStr)
	w.DeadLetter(letter(eg, `{"id":"1","topic":"t1","subject":"s","eventType":"T","eventTime":"2026-01-01T00:00:00Z","data":{"a":1},"dataVersion":"1","metadataVersion":"1"}`,
		"UndeliverableDueToHttpBadRequest", 400, push.OutcomeBadRequest, &done))
	w.DeadLetter(letter(eg, `{"id":"2","topic":"t1","subject":"s","eventType":"T","eventTime":"2026-01-01T00:00:00Z","data":{},"dataVersion":"1","metadataVersion":"1"}`,
		string(outcome.MaxDeliveryAttemptsExceeded), 500, push.OutcomeAborted, &done))
	w.DeadLetter(letter(ce, `{"specversion":"1.0","id":"c1","source":"src","type":"T","data":{"x":true}}`,
		string(outcome.TimeToLiveExceeded), 0, push.OutcomeTimedOut, &done))
	w.DeadLetter(letter(custom, ` {"my":"event", "n": [1, 2]} `, string(outcome.MaxDeliveryAttemptsExceeded), 503, push.OutcomeBusy, &done))
	brokertest.Eventually(t, 30*time.Second, func() error {
		if done.Load() != 4 {
			return fmt.Errorf("%d of 4 letters done", done.Load())
		}
		return nil
	})
	if m.written.Load() != 4 || m.failed.Load() != 0 {
		t.Errorf("written %d, failed %d", m.written.Load(), m.failed.Load())
	}
	got := blobs(t, connStr)
	byID := map[string]map[string]any{}
	for name, evs := range got {
		p := blobPath.FindStringSubmatch(name)
		if p == nil {
			t.Errorf("blob %s is not laid out as <SUBSCRIPTION>/<yyyy>/<M>/<d>/<H>/<uuid>.json", name)
			continue
		}
		if p[1] != strings.ToUpper(p[1]) || !strings.Contains("EGSUB CESUB CUSTOMSUB", p[1]) {
			t.Errorf("blob %s: folder %s", name, p[1])
		}
		for _, ev := range evs {
			id, _ := ev["id"].(string)
			if p[1] == "CUSTOMSUB" {
				id = "custom"
			}
			byID[id] = ev
		}
	}
	eg1, eg2, c1, cu := byID["1"], byID["2"], byID["c1"], byID["custom"]
	if eg1 == nil || eg2 == nil || c1 == nil || cu == nil {
		t.Fatalf("blobs %v", got)
	}
	if eg1["deadLetterReason"] != "UndeliverableDueToHttpBadRequest" || eg1["deliveryAttempts"] != 3.0 ||
		eg1["lastDeliveryOutcome"] != "BadRequest" || eg1["lastHttpStatusCode"] != 400.0 ||
		eg1["publishTime"] != "2026-02-03T04:05:06.7000000Z" || eg1["lastDeliveryAttemptTime"] != "2026-02-03T04:06:36.7000000Z" ||
		eg1["eventType"] != "T" || eg1["data"].(map[string]any)["a"] != 1.0 {
		t.Errorf("EventGridSchema dead letter %v", eg1)
	}
	if eg2["deadLetterReason"] != "MaxDeliveryAttemptsExceeded" || eg2["lastDeliveryOutcome"] != "Aborted" || eg2["lastHttpStatusCode"] != 500.0 {
		t.Errorf("EventGridSchema dead letter %v", eg2)
	}
	if c1["deadletterreason"] != "TimeToLiveExceeded" || c1["lastdeliveryoutcome"] != "TimedOut" || c1["deliveryattempts"] != 3.0 ||
		c1["publishtime"] == nil || c1["lastdeliveryattempttime"] == nil || c1["lasthttpstatuscode"] != nil || c1["specversion"] != "1.0" {
		t.Errorf("CloudEvents dead letter %v", c1)
	}
	data, _ := json.Marshal(cu["data"])
	if string(data) != `{"my":"event","n":[1,2]}` || cu["eventType"] != deadletter.CustomEventType || cu["topic"] != "t1" ||
		cu["subject"] != "/topics/t1/eventSubscriptions/customSub" || cu["metadataVersion"] != "1" || cu["dataVersion"] == nil ||
		cu["eventTime"] != "2026-02-03T04:05:06.7000000Z" || cu["deadLetterReason"] != string(outcome.MaxDeliveryAttemptsExceeded) ||
		cu["lastDeliveryOutcome"] != "Busy" || len(cu["id"].(string)) != 36 {
		t.Errorf("CustomEventSchema dead letter %v", cu)
	}
	// Each subscription writes its own blobs. The first letter after a
	// quiet spell goes at once, so egSub's two letters take one blob or
	// two, depending on whether the writer woke between them.
	if n := len(got); n < 3 || n > 4 {
		t.Errorf("%d blobs, want one per subscription (two for egSub at most)", n)
	}
}

func TestWriter_StorageDownThenBack(t *testing.T) {
	az := azurite.Start(t)
	connStr := az.ConnectionString(azurite.Key)
	m := &counts{}
	logs := &logbuf.Buffer{}
	w := deadletter.New(deadletter.Options{FlushInterval: 100 * time.Millisecond, RetryInterval: 50 * time.Millisecond, Metrics: m}, zerolog.New(logs))
	defer w.Close(context.Background())
	s := sub("s", eventgrid.EventGridSchema, connStr)
	var done atomic.Int64
	az.Stop()
	for i := range 20 {
		w.DeadLetter(letter(s, fmt.Sprintf(`{"id":"%d","data":{}}`, i), string(outcome.MaxDeliveryAttemptsExceeded), 500, push.OutcomeAborted, &done))
	}
	brokertest.Eventually(t, 10*time.Second, func() error {
		if m.failed.Load() < 2 {
			return fmt.Errorf("%d failed writes", m.failed.Load())
		}
		return nil
	})
	if done.Load() != 0 || m.dropped.Load() != 0 {
		t.Fatalf("letters done (%d) or dropped (%d) while storage was down", done.Load(), m.dropped.Load())
	}
	if !strings.Contains(logs.String(), "dead letters could not be written") {
		t.Errorf("no log line while storage was down: %s", logs.String())
	}
	az.Restart()
	brokertest.Eventually(t, 30*time.Second, func() error {
		if done.Load() != 20 {
			return fmt.Errorf("%d of 20 letters done", done.Load())
		}
		return nil
	})
	if n := len(allEvents(blobs(t, connStr))); n != 20 || m.written.Load() != 20 {
		t.Errorf("%d dead letters in storage, %d counted written; want 20", n, m.written.Load())
	}
	if strings.Contains(logs.String(), azurite.Key) {
		t.Error("the account key reached the log")
	}
}

func TestWriter_WrongKeyReportedThenDropped(t *testing.T) {
	az := azurite.Start(t)
	wrong := "AAAA" + azurite.Key[4:]
	connStr := az.ConnectionString(wrong)
	m := &counts{}
	logs := &logbuf.Buffer{}
	w := deadletter.New(deadletter.Options{FlushInterval: 50 * time.Millisecond, RetryInterval: 20 * time.Millisecond,
		MaxWait: 2 * time.Second, Metrics: m}, zerolog.New(logs))
	defer w.Close(context.Background())
	var done atomic.Int64
	w.DeadLetter(letter(sub("s", eventgrid.EventGridSchema, connStr), `{"id":"1","data":{}}`, string(outcome.TimeToLiveExceeded), 0, push.OutcomeTimedOut, &done))
	brokertest.Eventually(t, 10*time.Second, func() error {
		if m.dropped.Load() != 1 || done.Load() != 1 {
			return fmt.Errorf("dropped %d, done %d", m.dropped.Load(), done.Load())
		}
		return nil
	})
	out := logs.String()
	if !strings.Contains(out, "storage answered 403") || !strings.Contains(out, "dead letters dropped") {
		t.Errorf("log does not report the refused key and the drop: %s", out)
	}
	if m.failed.Load() == 0 {
		t.Error("no failed write counted")
	}
	if strings.Contains(out, wrong) || strings.Contains(out, "AccountKey") {
		t.Error("the connection string reached the log")
	}
}

// TestWriter_Backlog: more than a blob's worth of letters is written in as
// many full blobs as it takes, at once, not one blob per flush interval; a
// blob holds at most MaxBlobEvents letters and MaxBlobBytes bytes of them.
// What does not fill a blob waits for the interval.
func TestWriter_Backlog(t *testing.T) {
	az := azurite.Start(t)
	connStr := az.ConnectionString(azurite.Key)
	m := &counts{}
	w := deadletter.New(deadletter.Options{FlushInterval: time.Hour, MaxBlobEvents: 100, MaxBlobBytes: 4000, Metrics: m}, zerolog.Nop())
	defer w.Close(context.Background())
	s := sub("s", eventgrid.EventGridSchema, connStr)
	var done atomic.Int64
	small := func(i int) eventgrid.DeadLetter {
		return letter(s, fmt.Sprintf(`{"id":"%03d","data":{}}`, i), string(outcome.MaxDeliveryAttemptsExceeded), 500, push.OutcomeAborted, &done)
	}
	waitDone := func(n int64) {
		t.Helper()
		brokertest.Eventually(t, 20*time.Second, func() error {
			if done.Load() < n {
				return fmt.Errorf("%d of %d letters done", done.Load(), n)
			}
			return nil
		})
	}
	// The first letter after a quiet spell goes at once, with whatever
	// else has come by the time the writer takes it; what is left then
	// goes in full blobs, and the rest waits for the interval. Sent with
	// the 349 below, the first blob would hold as many as had come: 91 of
	// them (a writer slow to wake) leave 259, two full blobs and 59
	// waiting, rather than three. So the first letter goes, and is
	// written, before the others come.
	w.DeadLetter(small(0))
	waitDone(1)
	// 349 letters of 22 bytes: three blobs of 100 go at once, and the 49
	// left wait for the interval.
	for i := 1; i < 350; i++ {
		w.DeadLetter(small(i))
	}
	waitDone(301)
	if got := m.blobSizes(); !slices.Equal(got, []int{1, 100, 100, 100}) {
		t.Fatalf("blobs of %v letters before the interval, want [1 100 100 100]", got)
	}
	// Four letters of about 1,500 bytes make those waiting more than
	// 4,000 bytes: at least one blob goes at once, bounded by bytes. How
	// many letters it holds depends on the letters' encoded length, which
	// varies by a few bytes with the times they carry, so only the bounds
	// are checked. What is left waits for the interval: Close writes it.
	big := strings.Repeat("x", 1480)
	before := done.Load()
	for i := range 4 {
		w.DeadLetter(letter(s, fmt.Sprintf(`{"id":"b%d","data":%q}`, i, big), string(outcome.MaxDeliveryAttemptsExceeded), 500, push.OutcomeAborted, &done))
	}
	waitDone(before + 1)
	if n := done.Load(); n >= 354 {
		t.Errorf("%d letters done before the interval, want some still waiting for it", n)
	}
	if err := w.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	got := blobs(t, connStr)
	var sizes []int
	total := 0
	for _, evs := range got {
		sizes = append(sizes, len(evs))
		total += len(evs)
	}
	slices.Sort(sizes)
	if total != 354 || sizes[len(sizes)-1] > 100 || len(sizes) > 8 {
		t.Errorf("blobs of %v letters, want 354 in full blobs of at most 100 letters or 4,000 bytes", sizes)
	}
	if m.written.Load() != 354 {
		t.Errorf("%d counted written, want 354", m.written.Load())
	}
}
