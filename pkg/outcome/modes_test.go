package outcome_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

// TestModes_OneStory feeds the same outcomes through both delivery modes,
// a push subscription and a queue subscription of one broker, and compares
// what the metrics, the board, the logs and the dead-letter writer
// receive. Of four events, 1 is delivered at once, 2 fails once and is
// delivered, 3 fails twice and is dead-lettered (both subscriptions allow
// two attempts), and 4 fails once and is still held when the
// subscriptions are deleted. A push attempt fails by the destination's
// error, a queue attempt by its receiver's release.
func TestModes_OneStory(t *testing.T) {
	w := newWorld(t)
	pushSub, queueSub := w.sub("push", false), w.sub("queue", true)
	w.publish(pushSub, queueSub, "1", "2", "3")

	// Push: 2 and 3 fail their first attempt and wait a second.
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st, _ := w.engine.QueueStats(pushSub); st.Backoff[0] != 2 || st.InFlight != 0 {
			return fmt.Errorf("push queue %+v; want 2 events in back-off", st)
		}
		return nil
	})
	w.clock.Advance(time.Second)
	w.waitSent(t, 5)
	// Queue: the receiver releases 2 and 3, then acknowledges 2 and
	// releases 3 again.
	got := w.receive(t, queueSub, 3)
	w.settle(t, queueSub, queue.SettleAcknowledge, got["1"])
	w.settle(t, queueSub, queue.SettleRelease, got["2"], got["3"])
	got = w.receive(t, queueSub, 2)
	w.settle(t, queueSub, queue.SettleAcknowledge, got["2"])
	w.settle(t, queueSub, queue.SettleRelease, got["3"])

	// 4 fails once in each mode, and is held when its subscription goes.
	w.publish(pushSub, queueSub, "4")
	w.waitSent(t, 6)
	w.settle(t, queueSub, queue.SettleRelease, w.receive(t, queueSub, 1)["4"])
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := w.engine.HeldEvents(pushSub); n != 1 {
			return fmt.Errorf("push holds %d events, want 1", n)
		}
		return nil
	})
	brokertest.Eventually(t, 5*time.Second, func() error {
		if w.letters.count() != 2 || w.metrics.count(pushSub.Name, "gaveUp") != 1 {
			return fmt.Errorf("%d dead letters", w.letters.count())
		}
		return nil
	})
	w.d.SubscriptionDeleted(pushSub)
	w.d.SubscriptionDeleted(queueSub)
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := w.metrics.count(pushSub.Name, "discarded"); n != 1 {
			return fmt.Errorf("push discarded %d", n)
		}
		return nil
	})

	p, q := w.story(t, pushSub), w.story(t, queueSub)
	if !p.equal(q) {
		t.Errorf("the two modes tell different stories:\npush  %+v\nqueue %+v", p, q)
	}
	want := story{
		metrics: map[string]int{"started": 6, "delivered": 2, "failed": 4, "gaveUp": 1, "deadLettered": 1, "discarded": 1},
		board:   inspect.Totals{Delivered: 2, FailedAttempts: 4, DeadLettered: 1},
		givenUp: []string{"3 after 2 dead-lettered"},
		logs: map[string]int{"delivered": 2, "delivery attempt failed": 4, "event dead-lettered": 1,
			"event subscription deleted; its queued events were discarded": 1},
		givenUpLines: []string{"3 after 2"},
		letters:      []string{"3 after 2"},
	}
	if !p.equal(want) {
		t.Errorf("push's story %+v\nwant %+v", p, want)
	}
	for sub, reason := range map[*eventgrid.EventSubscription]outcome.Reason{
		pushSub: outcome.MaxDeliveryAttemptsExceeded, queueSub: outcome.MaxDeliveryCountExceeded,
	} {
		if got := w.reasons(t, sub); !slices.Equal(got, []string{string(reason), string(reason), string(reason), string(reason), string(outcome.SubscriptionDeleted)}) {
			t.Errorf("%s: reasons %v; want %s in the metrics, the board, the log and the dead letter, then %s", sub.Name, got, reason, outcome.SubscriptionDeleted)
		}
	}
}

// world is a broker of both delivery modes with one reporter, and what its
// reporter's sinks receive.
type world struct {
	clock   *fakeclock.Clock
	board   *inspect.Board
	logs    *logbuf.Buffer
	metrics *records
	letters *letters
	sender  *mock.Sender
	engine  *push.Engine
	queues  *queue.Store
	d       *dispatch.Dispatcher
	uid     uint64
}

func newWorld(t *testing.T) *world {
	w := &world{clock: fakeclock.New(), logs: &logbuf.Buffer{}, metrics: &records{n: map[string]map[string]int{}}, letters: &letters{}}
	w.board = inspect.New(inspect.Options{Clock: w.clock, MaxFailures: 10, MaxFailureBytes: 1 << 20})
	rep := outcome.New(outcome.Options{
		DeliveryLogs: eventgrid.DeliveryLogs{LogDeliverySuccess: true, LogDeliveryFailure: true, LogEventExpiry: true},
		Metrics:      w.metrics, Board: w.board, DeadLetterer: w.letters, Clock: w.clock,
	}, zerolog.New(w.logs))
	// Events 2 and 4 fail their first attempt, 3 every one.
	w.sender = &mock.Sender{Now: w.clock.Now, SendFn: func(_ context.Context, b *push.Batch) error {
		switch id := idOf(b.Bodies[0]); {
		case id == "3", (id == "2" || id == "4") && b.DeliveryCount == 0:
			return errors.New("destination failed")
		}
		return nil
	}}
	bud := budget.New(budget.Limits{})
	o := push.DefaultOptions()
	o.Reporter, o.Budget, o.Clock, o.Backoff = rep, bud, w.clock, [2]time.Duration{time.Second, time.Second}
	w.engine = push.New(o, w.sender, nil, zerolog.Nop())
	t.Cleanup(func() { _ = w.engine.Close(context.Background()) })
	w.queues = queue.New(queue.Options{Reporter: rep, Clock: w.clock}, zerolog.Nop())
	t.Cleanup(func() { _ = w.queues.Close(context.Background()) })
	w.d = dispatch.New(dispatch.Options{Budget: bud, Push: w.engine, Queues: w.queues, Clock: w.clock})
	return w
}

// sub makes a subscription that allows two attempts and has a dead-letter
// destination.
func (w *world) sub(name string, queue bool) *eventgrid.EventSubscription {
	w.uid++
	s := &eventgrid.EventSubscription{UID: w.uid, Topic: "t", Name: name, EventDeliverySchema: eventgrid.CloudEventSchemaV1_0,
		DeadLetter: &eventgrid.DeadLetterDestination{EndpointType: eventgrid.StorageBlob, ContainerName: "dl"}}
	if queue {
		s.Queue = &eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 2, EventTimeToLive: time.Hour}
	} else {
		s.Destination = eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "http://127.0.0.1:1/"}
		s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 2}
	}
	w.board.SubscriptionPut(s)
	w.d.SubscriptionPut(s)
	return s
}

func (w *world) publish(push, queue *eventgrid.EventSubscription, ids ...string) {
	ds := make([]eventgrid.Delivery, len(ids))
	for i, id := range ids {
		body := fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"s","type":"t"}`, id)
		ds[i] = eventgrid.Delivery{Event: &eventgrid.Event{ID: id, Body: []byte(body), Accepted: w.clock.Now()},
			Subscriptions: []*eventgrid.EventSubscription{push, queue}}
	}
	if err := w.d.Publish(context.Background(), eventgrid.Publication{Topic: eventgrid.Topic{Name: "t"}, Deliveries: ds}); err != nil {
		panic(err)
	}
}

// waitSent waits until the push destination answered n requests.
func (w *world) waitSent(t *testing.T, n int) {
	t.Helper()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if got := len(w.sender.Calls()); got != n {
			return fmt.Errorf("%d requests, want %d", got, n)
		}
		return nil
	})
}

// receive receives n events of sub and returns their lock tokens by id.
func (w *world) receive(t *testing.T, sub *eventgrid.EventSubscription, n int) map[string]string {
	t.Helper()
	got, err := w.queues.Receive(context.Background(), sub, n, 0)
	if err != nil || len(got) != n {
		t.Fatalf("received %d events, %v; want %d", len(got), err, n)
	}
	tokens := map[string]string{}
	for _, r := range got {
		tokens[idOf(r.Body)] = r.LockToken
	}
	return tokens
}

func (w *world) settle(t *testing.T, sub *eventgrid.EventSubscription, kind string, tokens ...string) {
	t.Helper()
	var res queue.Result
	var err error
	switch kind {
	case queue.SettleAcknowledge:
		res, err = w.queues.Acknowledge(sub, tokens)
	case queue.SettleRelease:
		res, err = w.queues.Release(sub, tokens, 0)
	}
	if err != nil || len(res.Succeeded) != len(tokens) {
		t.Fatalf("%s %v: %+v, %v", kind, tokens, res, err)
	}
}

// story is what the sinks received of one subscription, in terms that do
// not name its mode.
type story struct {
	// metrics sums the records' events by kind (and by how an attempt
	// ended, and whether an event given up on was dead-lettered).
	metrics map[string]int
	board   inspect.Totals
	givenUp []string // the board's given-up list: "<id> after <attempts> dead-lettered|dropped"
	// logs sums the events of the subscription's lines by message;
	// givenUpLines and letters are "<id> after <attempts>".
	logs         map[string]int
	givenUpLines []string
	letters      []string
}

func (s story) equal(o story) bool {
	return fmt.Sprint(s.metrics) == fmt.Sprint(o.metrics) && s.board == o.board && slices.Equal(s.givenUp, o.givenUp) &&
		fmt.Sprint(s.logs) == fmt.Sprint(o.logs) && slices.Equal(s.givenUpLines, o.givenUpLines) && slices.Equal(s.letters, o.letters)
}

func (w *world) story(t *testing.T, sub *eventgrid.EventSubscription) story {
	s := story{metrics: w.metrics.of(sub.Name), logs: map[string]int{}}
	s.board = w.board.Subscription(sub.UID).Totals()
	s.board.LastSuccess = time.Time{}
	fs, _ := w.board.Subscription(sub.UID).Failures(10)
	for _, f := range fs {
		how := "dropped"
		if f.DeadLettered {
			how = "dead-lettered"
		}
		s.givenUp = append(s.givenUp, fmt.Sprintf("%s after %d %s", f.EventID, f.Attempts, how))
	}
	for _, l := range w.logs.Lines(t) {
		if l["subscription"] != sub.Name {
			continue
		}
		msg := l["message"].(string)
		if n, ok := l["events"].(float64); ok {
			s.logs[msg] += int(n)
			continue
		}
		s.logs[msg]++
		s.givenUpLines = append(s.givenUpLines, fmt.Sprintf("%s after %v", l["eventId"], l["attempts"]))
	}
	for _, l := range w.letters.of(sub) {
		s.letters = append(s.letters, fmt.Sprintf("%s after %d", idOf(l.Body), l.Attempts))
	}
	return s
}

// reasons lists the reasons sub's sinks received: the metrics', the
// board's, the log's and the dead letter's of the event given up on, then
// the metrics' of the events discarded.
func (w *world) reasons(t *testing.T, sub *eventgrid.EventSubscription) []string {
	var out []string
	out = append(out, w.metrics.reasons(sub.Name, outcome.GaveUp)...)
	fs, _ := w.board.Subscription(sub.UID).Failures(10)
	for _, f := range fs {
		out = append(out, f.Reason)
	}
	for _, l := range w.logs.Lines(t) {
		if l["subscription"] == sub.Name && l["reason"] != nil {
			out = append(out, l["reason"].(string))
		}
	}
	for _, l := range w.letters.of(sub) {
		out = append(out, l.Reason)
	}
	return append(out, w.metrics.reasons(sub.Name, outcome.Discarded)...)
}

// records is the metrics sink: it sums what the records say, by
// subscription.
type records struct {
	mu  sync.Mutex
	n   map[string]map[string]int
	why []outcome.Record
}

func (r *records) Record(rec outcome.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.n[rec.Sub.Name]
	if m == nil {
		m = map[string]int{}
		r.n[rec.Sub.Name] = m
	}
	switch rec.Kind {
	case outcome.Started:
		m["started"] += rec.Events
	case outcome.Attempted:
		m["delivered"] += rec.Events - rec.Failed
		m["failed"] += rec.Failed
	case outcome.GaveUp:
		m["gaveUp"]++
		if rec.DeadLettered {
			m["deadLettered"]++
		}
		r.why = append(r.why, rec)
	case outcome.Discarded:
		m["discarded"] += rec.Events
		r.why = append(r.why, rec)
	}
}

func (r *records) of(name string) map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.n[name] {
		out[k] = v
	}
	return out
}

func (r *records) count(name, what string) int { return r.of(name)[what] }

func (r *records) reasons(name string, kind outcome.Kind) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.why {
		if rec.Sub.Name == name && rec.Kind == kind && (kind != outcome.Discarded || rec.Events > 0) {
			out = append(out, string(rec.Reason))
		}
	}
	return out
}

// letters is the dead-letter writer: it keeps the letters and is done with
// each at once.
type letters struct {
	mu  sync.Mutex
	all []eventgrid.DeadLetter
}

func (l *letters) DeadLetter(d eventgrid.DeadLetter) {
	l.mu.Lock()
	l.all = append(l.all, d)
	l.mu.Unlock()
	d.Done()
}

func (l *letters) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.all)
}

func (l *letters) of(sub *eventgrid.EventSubscription) []eventgrid.DeadLetter {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []eventgrid.DeadLetter
	for _, d := range l.all {
		if d.Subscription.UID == sub.UID {
			out = append(out, d)
		}
	}
	return out
}

func idOf(body []byte) string {
	v, _ := rawjson.Member(body, "id")
	id, _ := rawjson.Unquote(v)
	return id
}
