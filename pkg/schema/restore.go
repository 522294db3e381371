package schema

import (
	"errors"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// ErrNotRestorable is returned by RestoreEventGrid for an event that is not
// a CloudEvent the decoder built in place of an EventGridSchema event.
var ErrNotRestorable = errors.New("schema: event is not one built as its CloudEvent")

// RestoreEventGrid turns ev, an event the decoder built as its CloudEvent
// (eventgrid.Event.Converted), into the event it builds without
// Scratch.ToCloudEvents: its canonical EventGridSchema body, in memory of
// its own, with Converted false and Plain and DataAt set as the decoder
// sets them. The decoder builds an event so only when every member it
// writes is a plain literal, which the CloudEvent keeps as it is, so the
// result is exactly that event. It is for a publish path whose
// subscriptions changed after it asked for CloudEvents (see
// eventgrid.Subscribers). It returns an error wrapping ErrNotRestorable,
// ev unchanged, when ev.Body is not such a CloudEvent; an event that is not
// Converted is left as it is.
func RestoreEventGrid(ev *eventgrid.Event) error {
	if !ev.Converted {
		return nil
	}
	var source, eventTime, data []byte
	isObject := rawjson.ObjectEach(ev.Body, func(k, v []byte) bool {
		switch string(k) {
		case "source":
			source = v
		case "time":
			eventTime = v
		case "data":
			data = v
		}
		return true
	})
	if !isObject || !isString(source) || !isString(eventTime) {
		return ErrNotRestorable
	}
	lits := [...]string{ev.ID, ev.Subject, ev.Type, ev.DataVersion}
	n := len(kID) + len(kTopic) + len(source) + len(kSubject) + len(kEventType) + len(kEventTime) + len(eventTime) +
		len(kDataVersion) + len(kTail)
	for _, s := range lits {
		n += len(s) + 2
	}
	if data != nil {
		n += len(kData) + len(data)
	}
	b := make([]byte, 0, n)
	b = rawjson.AppendString(append(b, kID...), ev.ID)
	b = append(append(b, kTopic...), source...)
	b = rawjson.AppendString(append(b, kSubject...), ev.Subject)
	b = rawjson.AppendString(append(b, kEventType...), ev.Type)
	b = append(append(b, kEventTime...), eventTime...)
	dataAt := 0
	if data != nil {
		b = append(b, kData...)
		dataAt = len(b)
		b = append(b, data...)
	}
	b = rawjson.AppendString(append(b, kDataVersion...), ev.DataVersion)
	b = append(b, kTail...)
	plain := true
	for _, lit := range [...][]byte{source, eventTime} {
		_, ok := plainText(lit)
		plain = plain && ok
	}
	for _, s := range lits {
		plain = plain && plainString(s)
	}
	ev.Body, ev.Converted, ev.Plain, ev.DataAt = b, false, plain, int32(dataAt)
	return nil
}

// plainString reports whether s is printable ASCII that a JSON string
// literal holds without escapes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
