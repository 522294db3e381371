package inspect_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

func newBoard(t *testing.T, o inspect.Options) (*inspect.Board, *fakeclock.Clock) {
	t.Helper()
	clk := fakeclock.New()
	o.Clock = clk
	b := inspect.New(o)
	t.Cleanup(func() { _ = b.Close() })
	return b, clk
}

func sub(uid uint64, topic, name string) *eventgrid.EventSubscription {
	return &eventgrid.EventSubscription{UID: uid, Topic: topic, Name: name}
}

// take reads what waits in st.
func take(st *inspect.Stream) (events []string, dropped int, ended bool) {
	items, dropped, ended := st.Take(nil)
	for _, it := range items {
		events = append(events, it.Event+" "+string(it.Data))
	}
	return events, dropped, ended
}

func TestBoard_Records(t *testing.T) {
	b, clk := newBoard(t, inspect.Options{MaxFailures: 10, MaxFailureBytes: 1 << 20})
	b.TopicCreated(eventgrid.Topic{Name: "Orders"})
	s := sub(1, "Orders", "hot")
	b.SubscriptionPut(s)
	if b.Topic("Orders") == nil || b.Topic("nope") != nil {
		t.Fatal("the topic's record is not found by the name it was created with")
	}
	rec := b.Subscription(1)
	if rec == nil || b.Sub(s) != rec {
		t.Fatal("a subscription's record is not the same across puts")
	}

	now := clk.Now()
	b.Topic("Orders").Published(3, 1, false, now)
	b.Topic("Orders").Published(0, 0, true, now)
	if st := b.Topic("Orders").Stats(); st.Received != 3 || st.Unmatched != 1 || st.PublishRequestsRefused != 1 || !st.LastReceived.Equal(now) {
		t.Errorf("topic stats %+v", st)
	}
	rec.Attempted(2, 0, time.Millisecond, 0, now)
	rec.Attempted(0, 3, time.Millisecond, 503, now.Add(time.Second))
	rec.GaveUp(inspect.GivenUp{Time: now, Reason: "MaxDeliveryAttemptsExceeded", Body: []byte(`{"id":"e1"}`)})
	rec.GaveUp(inspect.GivenUp{Time: now, DeadLettered: true, Body: []byte(`{}`)})
	want := inspect.Totals{Delivered: 2, FailedAttempts: 3, DeadLettered: 1, Dropped: 1, LastSuccess: now, LastFailureStatus: 503}
	if got := rec.Totals(); got != want {
		t.Errorf("totals %+v, want %+v", got, want)
	}

	b.SubscriptionDeleted(s)
	if b.Subscription(1) != nil {
		t.Error("a deleted subscription keeps its record")
	}
	b.TopicDeleted(eventgrid.Topic{Name: "Orders"})
	if b.Topic("Orders") != nil {
		t.Error("a deleted topic keeps its record")
	}
	var nilBoard *inspect.Board
	nilBoard.Sub(s).Attempted(1, 0, 0, 0, now) // a broker without a board
}

// TestBoard_Streams: a stream gets what happens once it is open, a reader
// that falls behind loses the oldest and is told how many, and deletion
// ends the streams with "deleted".
func TestBoard_Streams(t *testing.T) {
	b, clk := newBoard(t, inspect.Options{MaxFailures: 10, MaxFailureBytes: 1 << 20})
	b.TopicCreated(eventgrid.Topic{Name: "t"})
	topic := b.Topic("t")
	now := clk.Now()
	body := []byte(`{"id":"before"}`)
	topic.Accepted(body, now) // nobody watches yet
	if topic.Watching() {
		t.Fatal("watching before any stream opened")
	}
	st := topic.Watch()
	if !topic.Watching() {
		t.Fatal("not watching with a stream open")
	}
	body = []byte(`{"id":"one"}`)
	topic.Accepted(body, now)
	body[8] = 'X' // the stream keeps a copy
	select {
	case <-st.Ready():
	default:
		t.Fatal("the stream was not signalled")
	}
	if ev, dropped, ended := take(st); len(ev) != 1 || ev[0] != `published {"id":"one"}` || dropped != 0 || ended {
		t.Fatalf("took %q, %d dropped, ended %v", ev, dropped, ended)
	}

	// A slow reader: past MaxStreamItems the oldest go. (The events come
	// a tenth of a second apart, a hundred at a time, within
	// MaxStreamRate.)
	for i := range inspect.MaxStreamItems + 5 {
		topic.Accepted([]byte(fmt.Sprintf(`{"id":"%d"}`, i)), now.Add(time.Duration(i/100+1)*100*time.Millisecond))
	}
	ev, dropped, _ := take(st)
	if len(ev) != inspect.MaxStreamItems || dropped != 5 || ev[0] != `published {"id":"5"}` {
		t.Fatalf("took %d items from %q, %d dropped; want %d from id 5, 5 dropped", len(ev), ev[0], dropped, inspect.MaxStreamItems)
	}
	// And past MaxStreamBytes.
	big := []byte(`{"id":"big","pad":"` + strings.Repeat("x", 1<<20) + `"}`)
	for range 5 {
		topic.Accepted(big, now.Add(2*time.Second))
	}
	if ev, dropped, _ := take(st); len(ev) != 3 || dropped != 2 {
		t.Fatalf("took %d megabyte items, %d dropped; want 3 kept of 5", len(ev), dropped)
	}

	s := sub(7, "t", "s")
	b.SubscriptionPut(s)
	rec := b.Subscription(7)
	outs := rec.Watch()
	rec.Report(inspect.Outcome{Outcome: inspect.OutcomeFailed, EventID: "e", Time: clk.Now(), Attempt: 2, StatusCode: 503,
		Latency: 1500 * time.Microsecond, Error: "503", Next: clk.Now().Add(time.Minute)})
	rec.GaveUp(inspect.GivenUp{Time: clk.Now(), Reason: "TimeToLiveExceeded", Attempts: 3, Body: []byte(`{"id":"e"}`)})
	ev, _, _ = take(outs)
	wantOuts := []string{
		`delivery {"outcome":"failed","eventId":"e","time":"2026-01-01T00:00:00Z","attempt":2,"statusCode":503,"latencyMs":1.5,"error":"503","nextAttemptTime":"2026-01-01T00:01:00Z"}`,
		`delivery {"outcome":"dropped","eventId":"e","time":"2026-01-01T00:00:00Z","attempt":3,"reason":"TimeToLiveExceeded"}`,
	}
	if strings.Join(ev, "\n") != strings.Join(wantOuts, "\n") {
		t.Errorf("outcomes\n%s\nwant\n%s", strings.Join(ev, "\n"), strings.Join(wantOuts, "\n"))
	}

	// Deleting the topic ends its subscription's streams, then its own.
	b.SubscriptionDeleted(s)
	b.TopicDeleted(eventgrid.Topic{Name: "t"})
	if ev, _, ended := take(outs); !ended || len(ev) != 1 || ev[0] != `deleted {"subscription":"s","topic":"t"}` {
		t.Errorf("outcomes stream: %q, ended %v", ev, ended)
	}
	if ev, _, ended := take(st); !ended || len(ev) != 1 || ev[0] != `deleted {"topic":"t"}` {
		t.Errorf("tail: %q, ended %v", ev, ended)
	}
	if topic.Watch() != nil || rec.Watch() != nil {
		t.Error("a deleted topic or subscription opens new streams")
	}
}

// TestBoard_StreamRate: a topic's tails carry at most MaxStreamRate
// events a second; the rest are skipped, copied for nobody, and each
// reader is told how many, even one that opened later only of those since.
func TestBoard_StreamRate(t *testing.T) {
	b, clk := newBoard(t, inspect.Options{})
	b.TopicCreated(eventgrid.Topic{Name: "t"})
	topic := b.Topic("t")
	st := topic.Watch()
	now := clk.Now()
	window := inspect.MaxStreamRate / 10 // items a tenth of a second
	for i := range 3 * window {
		topic.Accepted([]byte(fmt.Sprintf(`{"id":"%d"}`, i)), now)
	}
	late := topic.Watch()
	topic.Accepted([]byte(`{"id":"later"}`), now.Add(50*time.Millisecond)) // the same window: skipped
	ev, dropped, _ := take(st)
	if len(ev) != window || dropped != 2*window+1 {
		t.Errorf("%d events and %d dropped, want %d and %d", len(ev), dropped, window, 2*window+1)
	}
	if ev, dropped, _ := take(late); len(ev) != 0 || dropped != 1 {
		t.Errorf("a stream opened later: %d events, %d dropped; want 0 and 1", len(ev), dropped)
	}
	topic.Accepted([]byte(`{"id":"next"}`), now.Add(100*time.Millisecond)) // the next window
	if ev, dropped, _ := take(st); len(ev) != 1 || dropped != 0 {
		t.Errorf("in the next tenth of a second: %q, %d dropped", ev, dropped)
	}
	body := []byte(`{}`)
	for range window { // fill that window
		topic.Accepted(body, now.Add(100*time.Millisecond))
	}
	if testing.AllocsPerRun(100, func() { topic.Accepted(body, now.Add(100*time.Millisecond)) }) != 0 {
		t.Error("a skipped event allocates")
	}
}

func TestBoard_StreamClose(t *testing.T) {
	b, _ := newBoard(t, inspect.Options{})
	b.TopicCreated(eventgrid.Topic{Name: "t"})
	topic := b.Topic("t")
	a, c := topic.Watch(), topic.Watch()
	a.Close()
	if !topic.Watching() {
		t.Fatal("closing one stream of two stopped the watching")
	}
	c.Close()
	c.Close() // twice is harmless
	if topic.Watching() {
		t.Fatal("watching with every stream closed")
	}
}

// TestBoard_NothingWhenUnwatched: reporting to records nobody watches
// copies nothing and allocates nothing.
func TestBoard_NothingWhenUnwatched(t *testing.T) {
	b, clk := newBoard(t, inspect.Options{})
	b.TopicCreated(eventgrid.Topic{Name: "t"})
	b.SubscriptionPut(sub(1, "t", "s"))
	topic, rec := b.Topic("t"), b.Subscription(1)
	body := bytes.Repeat([]byte("x"), 1024)
	now := clk.Now()
	allocs := testing.AllocsPerRun(100, func() {
		topic.Published(1, 0, false, now)
		topic.Accepted(body, now)
		rec.Attempted(1, 0, time.Millisecond, 0, now)
		rec.Report(inspect.Outcome{Outcome: inspect.OutcomeDelivered})
	})
	if allocs != 0 {
		t.Errorf("%v allocations per event with nobody watching", allocs)
	}
}

func TestBoard_Failures(t *testing.T) {
	b, clk := newBoard(t, inspect.Options{MaxFailures: 3, MaxFailureBytes: 100})
	b.SubscriptionPut(sub(1, "t", "s"))
	rec := b.Subscription(1)
	give := func(id string, size int) {
		body := []byte(`{"id":"` + id + `","p":"` + strings.Repeat("x", max(size-17, 0)) + `"}`)
		rec.GaveUp(inspect.GivenUp{Time: clk.Now(), Reason: "Rejected", Attempts: 1, Body: body})
	}
	ids := func(fs []inspect.Failure) string {
		var s []string
		for _, f := range fs {
			s = append(s, fmt.Sprintf("%s:%d:%v", f.EventID, f.EventBytes, f.Body != nil))
		}
		return strings.Join(s, " ")
	}
	give("a", 20)
	give("b", 20)
	give("c", 20)
	give("d", 20) // the count bound: a goes
	if fs, total := rec.Failures(10); ids(fs) != "d:20:true c:20:true b:20:true" || total != 4 {
		t.Errorf("after 4: %s, total %d", ids(fs), total)
	}
	give("e", 70) // the byte bound: b and c go
	if fs, _ := rec.Failures(10); ids(fs) != "e:70:true d:20:true" {
		t.Errorf("after a large one: %s", ids(fs))
	}
	give("f", 150) // alone beyond the bound: kept without its body
	if fs, total := rec.Failures(2); ids(fs) != "f:150:false e:70:true" || total != 6 {
		t.Errorf("after one beyond the bound: %s, total %d", ids(fs), total)
	}

	none, _ := newBoard(t, inspect.Options{}) // broker__maxFailuresPerSubscription=0
	none.SubscriptionPut(sub(1, "t", "s"))
	none.Subscription(1).GaveUp(inspect.GivenUp{Body: []byte(`{}`)})
	if fs, total := none.Subscription(1).Failures(10); len(fs) != 0 || total != 1 {
		t.Errorf("keeping none: %d kept, total %d", len(fs), total)
	}
}

// TestBoard_SampledHistory: what a subscription holds is sampled at every
// interval, so the history shows a backlog while nothing happens.
func TestBoard_SampledHistory(t *testing.T) {
	held := 0
	b, clk := newBoard(t, inspect.Options{})
	b.SubscriptionPut(sub(1, "t", "s"))
	b.Start(func(*eventgrid.EventSubscription) int { return held })
	held = 12
	clk.Advance(5 * time.Second)
	held = 3
	clk.Advance(5 * time.Second)
	held = 0
	h := b.Subscription(1).History()
	if q := h.Queued[inspect.Points-3:]; q[0] != 12 || q[1] != 3 || q[2] != 0 {
		t.Errorf("queued %v, want 12, 3 and now 0", q)
	}
	if err := b.Close(); err != nil || len(clk.Armed()) != 0 {
		t.Errorf("Close = %v, timers armed %v", err, clk.Armed())
	}
}

func TestOldest(t *testing.T) {
	base := time.Unix(1000, 0)
	o := inspect.NewOldest(3)
	for _, s := range []int{5, 1, 9, 3, 7, 2} {
		if o.Wants(base.Add(time.Duration(s)*time.Second), 0) {
			o.Add(inspect.Waiting{Enqueued: base.Add(time.Duration(s) * time.Second), Queue: fmt.Sprint(s)})
		}
	}
	var got []string
	for _, w := range o.Sorted() {
		got = append(got, w.Queue)
	}
	if strings.Join(got, ",") != "1,2,3" {
		t.Errorf("oldest 3 = %v", got)
	}
	if inspect.NewOldest(0).Wants(base, 0) {
		t.Error("a picker of none wants an event")
	}
}

// TestOldest_Seq: events accepted together, a request's, come out in the
// order they were queued (Seq), whatever the order they are offered in,
// and the newest of them is the one left out beyond the top.
func TestOldest_Seq(t *testing.T) {
	base := time.Unix(1000, 0)
	o := inspect.NewOldest(3)
	for _, seq := range []uint64{4, 2, 1, 3} {
		if o.Wants(base, seq) {
			o.Add(inspect.Waiting{Enqueued: base, Seq: seq, Queue: fmt.Sprint(seq)})
		}
	}
	var got []string
	for _, w := range o.Sorted() {
		got = append(got, w.Queue)
	}
	if strings.Join(got, ",") != "1,2,3" {
		t.Errorf("a request's oldest 3 = %v, want 1,2,3", got)
	}
	if o.Wants(base, 5) || !o.Wants(base, 0) || !o.Wants(base.Add(-time.Second), 9) {
		t.Error("Wants does not follow the order of acceptance, then Seq")
	}
}

// BenchmarkBoard_Unwatched is what the inspection API adds to a publish
// request and to a delivery request when nobody watches: the topic's
// record looked up and told, the subscription's attempt recorded, and
// the checks before the live tail and the outcomes. Run it with
// -benchmem: it allocates nothing.
func BenchmarkBoard_Unwatched(b *testing.B) {
	board := inspect.New(inspect.Options{Clock: fakeclock.New()})
	defer board.Close()
	board.TopicCreated(eventgrid.Topic{Name: "t"})
	s := sub(1, "t", "s")
	board.SubscriptionPut(s)
	body := bytes.Repeat([]byte("x"), 1024)
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		at := now.Add(time.Duration(i) * time.Microsecond)
		topic := board.Topic("t") // publish
		if topic.Watching() {
			topic.Accepted(body, at)
		}
		topic.Published(1, 0, false, at)
		rec := board.Sub(s) // delivery: the queue keeps its record
		rec.Attempted(1, 0, time.Millisecond, 0, at)
		if rec.Watching() {
			rec.Report(inspect.Outcome{Outcome: inspect.OutcomeDelivered, Body: body, Time: at})
		}
	}
}
