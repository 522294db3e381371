package inspect

import (
	"bytes"
	"sync"
	"time"

	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// GivenUp is one event a subscription gave up on: dead-lettered, dropped by
// its retry policy, rejected or undeliverable.
type GivenUp struct {
	Time time.Time
	// DeadLettered is true when the event went to the subscription's
	// dead-letter destination, false when it was dropped.
	DeadLettered bool
	// Reason is Event Grid's deadLetterReason name.
	Reason string
	// Attempts is the attempts made (queue subscriptions: times received).
	Attempts int
	// LastError says why the last attempt failed, when one did;
	// LastStatus is its HTTP status, 0 when there was none.
	LastError  string
	LastStatus int
	// Body is the event as the subscription receives it. GaveUp copies
	// what it keeps.
	Body []byte
}

// Failure is an entry of a subscription's given-up list.
type Failure struct {
	GivenUp
	// EventID is the event's id, "" when it has none.
	EventID string
	// EventBytes is the event's size; Body is nil when the event alone
	// exceeded the list's byte bound.
	EventBytes int
}

// failures is a subscription's given-up list: the latest entries, at most
// max of them and maxBytes of bodies, oldest first. Dropping from the front
// and appending at the back, the slice reallocates now and then, copying
// only the entries it keeps.
type failures struct {
	max      int
	maxBytes int64

	mu    sync.Mutex
	list  []Failure
	bytes int64
	total int64
}

func (f *failures) add(g GivenUp) {
	e := Failure{GivenUp: g, EventID: EventID(g.Body), EventBytes: len(g.Body)}
	e.Body = nil
	if int64(len(g.Body)) <= f.maxBytes {
		e.Body = bytes.Clone(g.Body)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total++
	if f.max <= 0 {
		return
	}
	for len(f.list) > 0 && (len(f.list) >= f.max || f.bytes+int64(len(e.Body)) > f.maxBytes) {
		f.bytes -= int64(len(f.list[0].Body))
		f.list[0] = Failure{}
		f.list = f.list[1:]
	}
	f.list = append(f.list, e)
	f.bytes += int64(len(e.Body))
}

// newest returns the newest entries, at most top of them, newest first,
// and how many events were given up on in all.
func (f *failures) newest(top int) ([]Failure, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Failure, 0, min(top, len(f.list)))
	for i := len(f.list) - 1; i >= 0 && len(out) < top; i-- {
		out = append(out, f.list[i])
	}
	return out, f.total
}

// EventID returns the id of an event's JSON, "" when it has none.
func EventID(body []byte) string {
	v, ok := rawjson.Member(body, "id")
	if !ok {
		return ""
	}
	id, _ := rawjson.Unquote(v)
	return id
}
