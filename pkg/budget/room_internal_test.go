package budget

import "testing"

// TestRoomAfter: a delivery given back wakes the held requests when the
// share it came from and the broker each have 1/64 of their bounds free,
// in events and in bytes; event bounds under 128 wake on every delivery.
func TestRoomAfter(t *testing.T) {
	b := New(Limits{Events: 6400, Bytes: 64000, EventsPerSubscription: 640, BytesPerSubscription: 6400})
	s := new(Share)
	set := func(shareEvents, shareBytes, events, bytes int64) {
		s.events.Store(shareEvents)
		s.bytes.Store(shareBytes)
		b.events.Store(events)
		b.bytes.Store(bytes)
	}
	for _, c := range []struct {
		name                                   string
		shareEvents, shareBytes, events, bytes int64
		want                                   bool
	}{
		{"share 9 events short of its margin", 631, 0, 631, 0, false},
		{"share's margin free", 630, 0, 630, 0, true},
		{"share's bytes short of their margin", 10, 6301, 10, 6301, false},
		{"broker short of its margin", 0, 0, 6301, 0, false},
		{"broker's bytes short of their margin", 0, 0, 0, 63001, false},
		{"everything free", 0, 0, 0, 0, true},
	} {
		set(c.shareEvents, c.shareBytes, c.events, c.bytes)
		if got := b.roomAfter(s); got != c.want {
			t.Errorf("%s: roomAfter = %v; want %v", c.name, got, c.want)
		}
	}
	set(0, 0, 6301, 0)
	if b.roomAfter(nil) {
		t.Error("no share, broker short of its margin: roomAfter = true")
	}
	set(0, 0, 6300, 0)
	if !b.roomAfter(nil) {
		t.Error("no share, broker's margin free: roomAfter = false")
	}

	small := New(Limits{Events: 10, Bytes: 1000, EventsPerSubscription: 5, BytesPerSubscription: 400})
	small.events.Store(9) // one delivery's room free
	small.bytes.Store(985)
	s.events.Store(4)
	s.bytes.Store(390)
	if !small.roomAfter(s) {
		t.Error("small bounds, one delivery's room free: roomAfter = false")
	}
}
