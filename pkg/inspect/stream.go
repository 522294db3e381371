package inspect

import (
	"sync"
	"sync/atomic"
	"time"
)

// A stream holds at most MaxStreamItems items and MaxStreamBytes bytes of
// data waiting for its reader; past either bound the oldest go. The
// streams of one topic or subscription carry at most MaxStreamRate items a
// second, counted over tenths of a second; beyond it items are skipped,
// before anything is copied or encoded, and each reader is told how many:
// a stream is for watching the broker, and must cost it next to nothing
// however busy it is (a subscription gets every event).
const (
	MaxStreamItems = 1000
	MaxStreamBytes = 4 << 20
	MaxStreamRate  = 1000
)

// paceWindow is the window MaxStreamRate is counted in.
const paceWindow = 100 * time.Millisecond

// Item is one server-sent event: its name and its data, which the stream
// shares with every other stream it was sent to and which must not be
// modified.
type Item struct {
	Event string
	// ID, when not empty, is the event's id line: for an event of the
	// live tail, the time the broker accepted it, as a peek's enqueuedTime
	// shows it, so that a viewer shows the broker's time and not when the
	// event reached it.
	ID   string
	Data []byte
}

// hub is the streams of one topic or subscription. Lock order: hub.mu,
// then a Stream's mu.
type hub struct {
	n atomic.Int32 // streams open: the cheap "is anyone watching?"
	// window and sent count the items let through in the current
	// paceWindow (its number: Unix ns / paceWindow); skipped the items
	// skipped beyond MaxStreamRate since the hub was made.
	window, sent, skipped atomic.Int64

	mu      sync.Mutex
	streams []*Stream
	ended   bool
}

// watching reports whether any stream is open: one atomic load.
func (h *hub) watching() bool { return h.n.Load() > 0 }

// admit reports whether an item made at now may go to the streams, within
// MaxStreamRate; one that may not is counted as skipped. Windows that
// start at the same time on several goroutines make the bound approximate,
// never unbounded.
func (h *hub) admit(now time.Time) bool {
	w := now.UnixNano() / int64(paceWindow)
	if cur := h.window.Load(); w > cur && h.window.CompareAndSwap(cur, w) {
		h.sent.Store(0)
	}
	if h.sent.Add(1) <= MaxStreamRate*int64(paceWindow)/int64(time.Second) {
		return true
	}
	h.skipped.Add(1)
	return false
}

// watch opens a stream, or returns nil once the hub has ended.
func (h *hub) watch() *Stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return nil
	}
	s := &Stream{h: h, ready: make(chan struct{}, 1), skipped: h.skipped.Load()}
	h.streams = append(h.streams, s)
	h.n.Add(1)
	return s
}

// publish gives it to every open stream.
func (h *hub) publish(it Item) {
	h.mu.Lock()
	for _, s := range h.streams {
		s.push(it, false)
	}
	h.mu.Unlock()
}

// end gives it, the last item, to every open stream, which then ends, and
// refuses new streams.
func (h *hub) end(it Item) {
	h.mu.Lock()
	h.ended = true
	for _, s := range h.streams {
		s.push(it, true)
	}
	h.streams = nil
	h.n.Store(0)
	h.mu.Unlock()
}

func (h *hub) leave(s *Stream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, x := range h.streams {
		if x == s {
			last := len(h.streams) - 1
			h.streams[i], h.streams[last] = h.streams[last], nil
			h.streams = h.streams[:last]
			h.n.Add(-1)
			return
		}
	}
}

// Stream is one reader's live stream. The broker adds to it without ever
// waiting for the reader: a reader that falls behind loses the oldest items
// and is told how many (Take). Close it when the reader goes.
type Stream struct {
	h     *hub
	ready chan struct{} // holds a token while items wait

	mu      sync.Mutex
	q       []Item // waiting from q[head] on
	head    int
	bytes   int
	dropped int
	skipped int64 // the hub's skipped count at the last Take
	ended   bool
}

// push adds it, dropping the oldest items beyond the bounds. A last item
// is always kept, and ends the stream.
func (s *Stream) push(it Item, last bool) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.q = append(s.q, it)
	s.bytes += len(it.Data)
	for len(s.q)-s.head > 1 && (len(s.q)-s.head > MaxStreamItems || s.bytes > MaxStreamBytes) {
		s.bytes -= len(s.q[s.head].Data)
		s.q[s.head] = Item{}
		s.head++
		s.dropped++
	}
	if s.head >= MaxStreamItems { // keep the backing array from growing
		n := copy(s.q, s.q[s.head:])
		clear(s.q[n:])
		s.q, s.head = s.q[:n], 0
	}
	s.ended = last
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Ready is signalled when items wait to be taken.
func (s *Stream) Ready() <-chan struct{} { return s.ready }

// Take appends the waiting items to dst and returns them, with how many
// items were dropped (for this reader, or beyond MaxStreamRate) since the
// last Take, and whether the stream has ended: its last item is among
// those returned.
func (s *Stream) Take(dst []Item) (items []Item, dropped int, ended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	items = append(dst, s.q[s.head:]...)
	clear(s.q)
	s.q, s.head, s.bytes = s.q[:0], 0, 0
	skipped := s.h.skipped.Load()
	dropped, s.dropped = s.dropped+int(skipped-s.skipped), 0
	s.skipped = skipped
	return items, dropped, s.ended
}

// Close detaches the stream: nothing more is added to it.
func (s *Stream) Close() { s.h.leave(s) }
