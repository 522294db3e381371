package inspect

import (
	"bytes"
	"encoding/json"
	"sync/atomic"
	"time"
)

// Topic is one topic's record. Its methods are safe for concurrent use and
// do nothing on a nil *Topic.
type Topic struct {
	b    *Board
	name string

	received, unmatched, refused atomic.Int64
	lastReceived                 atomic.Int64 // Unix ns, 0 before the first

	hist topicHistory
	tail hub
}

// TopicStats are a topic's counts since it was created.
type TopicStats struct {
	// Received counts the events accepted, Unmatched those of them no
	// subscription took, PublishRequestsRefused the publish requests
	// answered with an error.
	Received, Unmatched, PublishRequestsRefused int64
	// LastReceived is when the topic last accepted an event, zero before
	// the first.
	LastReceived time.Time
}

// Published records a publish request: the events it brought that were
// accepted and how many of those matched nothing, or that it was refused.
func (t *Topic) Published(received, unmatched int, refused bool, at time.Time) {
	if t == nil {
		return
	}
	if refused {
		t.refused.Add(1)
		return
	}
	if received == 0 {
		return
	}
	t.received.Add(int64(received))
	t.unmatched.Add(int64(unmatched))
	t.lastReceived.Store(at.UnixNano())
	t.hist.published(at, received, unmatched)
}

// Watching reports whether anyone reads the topic's live tail: one atomic
// load, to ask before calling Accepted.
func (t *Topic) Watching() bool { return t != nil && t.tail.watching() }

// Accepted gives an event accepted at at to the topic's live tails, as a
// copy (the stream keeps nothing of the request), with at as its id,
// within MaxStreamRate.
func (t *Topic) Accepted(body []byte, at time.Time) {
	if !t.Watching() || !t.tail.admit(at) {
		return
	}
	t.tail.publish(Item{Event: "published", ID: FormatTime(at), Data: bytes.Clone(body)})
}

// Watch opens a live tail of the topic, or returns nil once the topic is
// deleted (and for a nil *Topic).
func (t *Topic) Watch() *Stream {
	if t == nil {
		return nil
	}
	return t.tail.watch()
}

// Stats returns the topic's counts.
func (t *Topic) Stats() TopicStats {
	s := TopicStats{Received: t.received.Load(), Unmatched: t.unmatched.Load(), PublishRequestsRefused: t.refused.Load()}
	if ns := t.lastReceived.Load(); ns != 0 {
		s.LastReceived = time.Unix(0, ns).UTC()
	}
	return s
}

// History returns the topic's history up to now.
func (t *Topic) History() TopicHistory { return t.hist.snapshot(t.b.now()) }

func (t *Topic) deleted() {
	data, _ := json.Marshal(map[string]string{"topic": t.name})
	t.tail.end(Item{Event: "deleted", Data: data})
}
