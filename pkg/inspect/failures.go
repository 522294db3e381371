package inspect

import (
	"bytes"
	"cmp"
	"slices"
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
	// Redriven is when the event was put back on its subscription by a
	// redrive (docs/console.md#redrive), zero while it was not: a redrive
	// moves an entry once.
	Redriven time.Time

	seq uint64 // the entry's number in its list, from 1, rising
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
	seq   uint64
}

// add keeps g, and returns how many older entries the bounds pushed out
// for it.
func (f *failures) add(g GivenUp) (evicted int) {
	e := Failure{GivenUp: g, EventID: EventID(g.Body), EventBytes: len(g.Body)}
	e.Body = nil
	if int64(len(g.Body)) <= f.maxBytes {
		e.Body = bytes.Clone(g.Body)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total++
	if f.max <= 0 {
		return 0
	}
	for len(f.list) > 0 && (len(f.list) >= f.max || f.bytes+int64(len(e.Body)) > f.maxBytes) {
		f.bytes -= int64(len(f.list[0].Body))
		f.list[0] = Failure{}
		f.list = f.list[1:]
		evicted++
	}
	f.seq++
	e.seq = f.seq
	f.list = append(f.list, e)
	f.bytes += int64(len(e.Body))
	return evicted
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

// Why a redrive did not move an event it was asked for (NotMoved.Reason).
const (
	// NotMovedNotFound: no entry of the list has the id: the event was
	// never given up on, or the list's bounds pushed it out.
	NotMovedNotFound = "notFound"
	// NotMovedAlreadyRedriven: every entry with the id was redriven
	// already.
	NotMovedAlreadyRedriven = "alreadyRedriven"
	// NotMovedBodyNotKept: the event alone exceeded the list's byte bound,
	// so its body was not kept.
	NotMovedBodyNotKept = "bodyNotKept"
)

// RedriveFilter chooses the given-up events a redrive moves: those whose
// id is in IDs when IDs is not nil, else those given up on at or after
// Since (every one when Since is zero).
type RedriveFilter struct {
	IDs   []string
	Since time.Time
}

// Redrivable is an event a redrive claimed from the given-up list: its body
// and its entry.
type Redrivable struct {
	Body []byte
	seq  uint64
}

// NotMoved is an event a redrive did not move, by its id, and why.
type NotMoved struct {
	ID     string
	Reason string
}

// claim marks the entries of the list that f chooses, and that were not
// redriven yet, as redriven at now, oldest first, and returns their
// bodies, shared with the list (they must not be modified), and the events
// it leaves, with why: an entry without its body, and, for an id asked for,
// none found or all redriven already.
func (f *failures) claim(rf RedriveFilter, now time.Time) (out []Redrivable, left []NotMoved) {
	// want holds the ids asked for: 0 while no entry has it, 1 when only
	// redriven ones have, 2 once one not redriven has; 3 once told.
	var want map[string]int8
	if rf.IDs != nil {
		want = make(map[string]int8, len(rf.IDs))
		for _, id := range rf.IDs {
			want[id] = 0
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.list {
		e := &f.list[i]
		if want != nil {
			st, ok := want[e.EventID]
			if !ok {
				continue
			}
			if e.Redriven.IsZero() {
				st = 2
			}
			want[e.EventID] = max(st, 1)
		} else if e.Time.Before(rf.Since) {
			continue
		}
		switch {
		case !e.Redriven.IsZero():
		case e.Body == nil:
			left = append(left, NotMoved{ID: e.EventID, Reason: NotMovedBodyNotKept})
		default:
			e.Redriven = now
			out = append(out, Redrivable{Body: e.Body, seq: e.seq})
		}
	}
	for _, id := range rf.IDs {
		switch want[id] {
		case 0:
			left = append(left, NotMoved{ID: id, Reason: NotMovedNotFound})
		case 1:
			left = append(left, NotMoved{ID: id, Reason: NotMovedAlreadyRedriven})
		}
		want[id] = 3 // told once, however often asked for
	}
	return out, left
}

// unclaim undoes claim for rs, whose redrive failed: their entries, those
// still in the list, can be redriven again.
func (f *failures) unclaim(rs []Redrivable) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range rs {
		i, ok := slices.BinarySearchFunc(f.list, r.seq, func(e Failure, seq uint64) int {
			return cmp.Compare(e.seq, seq)
		})
		if ok {
			f.list[i].Redriven = time.Time{}
		}
	}
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
