package schema

import (
	"bytes"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// EventGridSchema envelope members, in canonical order.
const (
	egID = iota
	egTopic
	egSubject
	egEventType
	egEventTime
	egData
	egDataVersion
	egMetadataVersion
	egCount
)

var egNames = []string{
	egID:              "id",
	egTopic:           "topic",
	egSubject:         "subject",
	egEventType:       "eventType",
	egEventTime:       "eventTime",
	egData:            "data",
	egDataVersion:     "dataVersion",
	egMetadataVersion: "metadataVersion",
}

// eventGrid decodes the EventGridSchema event object elem at index i.
func (d *decoder) eventGrid(i int, elem []byte, defaultID string) (*eventgrid.Event, error) {
	var m members
	rawjson.ObjectEach(elem, func(k, v []byte) bool {
		f, exact := fieldIndex(egNames, k)
		// A null member is absent, except data, where null is a payload.
		if f >= 0 && (f == egData || !isNull(v)) {
			m.set(f, exact, v)
		}
		return true
	})
	id, err := d.checkEventGrid(i, &m, defaultID)
	if err != nil {
		return nil, err
	}
	return d.buildEventGrid(i, &m, id)
}

// checkEventGrid checks the members m of the EventGridSchema event at
// index i and returns its id, which is defaultID when m has none.
func (d *decoder) checkEventGrid(i int, m *members, defaultID string) ([]byte, error) {
	id := m.val[egID]
	switch {
	case id == nil && defaultID == "":
		return nil, fieldError(i, "id", "is required")
	case id == nil:
		id = rawjson.AppendString(nil, defaultID)
	case !isString(id):
		return nil, fieldError(i, "id", "must be a string")
	case len(id) == 2:
		return nil, fieldError(i, "id", "must not be empty")
	case defaultID != "":
		if err := checkDefaultID(i, id, defaultID); err != nil {
			return nil, err
		}
	}
	if v := m.val[egTopic]; v != nil {
		if !isString(v) {
			return nil, fieldError(i, "topic", "must be a string")
		}
		if !rawjson.KeyEqualFold(v[1:len(v)-1], d.topic) {
			return nil, fieldError(i, "topic", "is %s but the request is for topic %s",
				literalForMessage(v), quoteForMessage(d.topic))
		}
	}
	for _, f := range [...]int{egSubject, egEventType, egEventTime, egDataVersion} {
		switch v := m.val[f]; {
		case v == nil:
			return nil, fieldError(i, egNames[f], "is required")
		case !isString(v):
			return nil, fieldError(i, egNames[f], "must be a string")
		}
	}
	if len(m.val[egEventType]) == 2 {
		return nil, fieldError(i, "eventType", "must not be empty")
	}
	if s, _ := unquote(m.val[egEventTime]); !validTimestamp(s) {
		return nil, fieldError(i, "eventTime", "must be an RFC 3339 timestamp, not %s", quoteForMessage(s))
	}
	if v := m.val[egMetadataVersion]; v != nil && string(v) != `"1"` {
		if s, ok := rawjson.Unquote(v); !ok || s != "1" {
			return nil, fieldError(i, "metadataVersion", `must be "1"`)
		}
	}
	return id, nil
}

// The canonical EventGridSchema envelope: each member's key with what comes
// before it, in the order buildEventGrid writes them, and its end.
const (
	kID          = `{"id":`
	kTopic       = `,"topic":`
	kSubject     = `,"subject":`
	kEventType   = `,"eventType":`
	kEventTime   = `,"eventTime":`
	kData        = `,"data":`
	kDataVersion = `,"dataVersion":`
	kTail        = `,"metadataVersion":"1"}`
)

// buildEventGrid writes the canonical envelope of the checked members m,
// with id, of the event at index i.
func (d *decoder) buildEventGrid(i int, m *members, id []byte) (*eventgrid.Event, error) {
	subject, eventType, eventTime := m.val[egSubject], m.val[egEventType], m.val[egEventTime]
	data, dataVersion := m.val[egData], m.val[egDataVersion]
	n := len(kID) + len(id) + len(kTopic) + len(d.qtopic) + len(kSubject) + len(subject) +
		len(kEventType) + len(eventType) + len(kEventTime) + len(eventTime) +
		len(kDataVersion) + len(dataVersion) + len(kTail)
	if data != nil {
		n += len(kData) + len(data)
	}
	if n > eventgrid.MaxEventSize {
		return nil, tooLarge(i, n)
	}

	if d.toCloudEvents {
		if ev := d.buildConverted(m, id); ev != nil {
			return ev, nil
		}
	}
	b := d.mem.body(n)
	b = append(b, kID...)
	idAt := len(b)
	b = append(b, id...)
	b = append(b, kTopic...)
	b = append(b, d.qtopic...)
	b = append(b, kSubject...)
	subjectAt := len(b)
	b = append(b, subject...)
	b = append(b, kEventType...)
	typeAt := len(b)
	b = append(b, eventType...)
	b = append(b, kEventTime...)
	b = append(b, eventTime...)
	dataAt := 0
	if data != nil {
		b = append(b, kData...)
		dataAt = len(b)
		b = append(b, data...)
	}
	b = append(b, kDataVersion...)
	dataVersionAt := len(b)
	b = append(b, dataVersion...)
	b = append(b, kTail...)

	ev := d.mem.event()
	var plain [4]bool
	_, timePlain := plainText(eventTime)
	*ev = eventgrid.Event{
		HasSubject: true,
		DataAt:     int32(dataAt), // MaxEventSize bounds it
		Body:       b,
		Accepted:   d.accepted,
	}
	ev.ID, plain[0] = textAt(b, idAt, len(id))
	ev.Type, plain[1] = textAt(b, typeAt, len(eventType))
	ev.Subject, plain[2] = textAt(b, subjectAt, len(subject))
	ev.DataVersion, plain[3] = textAt(b, dataVersionAt, len(dataVersion))
	ev.Plain = d.plainTopic && timePlain && plain == [4]bool{true, true, true, true}
	return ev, nil
}

// canonicalMembers reads into m the members of body, an EventGridSchema
// Body that buildEventGrid wrote with the value of data at dataAt, from
// their places in the envelope: the string members around data are short,
// and data is not scanned at all. It reports false, m unspecified, when
// body does not have that layout.
func canonicalMembers(body []byte, dataAt int, m *members) bool {
	i := 0
	for f, key := range [...]string{egID: kID, egTopic: kTopic, egSubject: kSubject, egEventType: kEventType, egEventTime: kEventTime} {
		if !hasAt(body, i, key) || i+len(key) >= len(body) || body[i+len(key)] != '"' {
			return false
		}
		i += len(key)
		end := rawjson.StringEnd(body, i)
		m.val[f], m.exact[f] = body[i:end], true
		i = end
	}
	if i+len(kData) != dataAt || !hasAt(body, i, kData) {
		return false
	}
	// data ends where dataVersion's key starts.
	dataVersion, dataEnd, ok := dataVersionAtEnd(body)
	if !ok || dataEnd <= dataAt {
		return false
	}
	m.val[egData], m.exact[egData] = body[dataAt:dataEnd], true
	m.val[egDataVersion], m.exact[egDataVersion] = dataVersion, true
	return true
}

// plainMembers reads into m the members of ev.Body, which the decoder built
// and marked Plain, from their lengths: each string member's literal is its
// value in quotes, the topic's ends at the first quote after its opening
// one, and the eventTime's at data's key (or dataVersion's, without data).
// Only the keys are checked, a few bytes each. It reports false, m
// unspecified, when the body does not have that layout.
func plainMembers(ev *eventgrid.Event, m *members) bool {
	body := ev.Body
	id, i, ok := literalAt(body, 0, kID, len(ev.ID)+2)
	if !ok || !hasAt(body, i, kTopic) || i+len(kTopic) >= len(body) {
		return false
	}
	t := i + len(kTopic)
	end := bytes.IndexByte(body[t+1:], '"')
	if end < 0 {
		return false
	}
	topic := body[t : t+end+2]
	subject, i, ok := literalAt(body, t+end+2, kSubject, len(ev.Subject)+2)
	if !ok {
		return false
	}
	eventType, i, ok := literalAt(body, i, kEventType, len(ev.Type)+2)
	if !ok || !hasAt(body, i, kEventTime) {
		return false
	}
	timeAt := i + len(kEventTime)
	dvEnd := len(body) - len(kTail)
	dvKey := dvEnd - len(ev.DataVersion) - 2 - len(kDataVersion)
	if dvKey < timeAt || !hasAt(body, dvEnd, kTail) || !hasAt(body, dvKey, kDataVersion) {
		return false
	}
	timeEnd := dvKey
	if ev.DataAt > 0 {
		timeEnd = int(ev.DataAt) - len(kData)
		if timeEnd < timeAt || int(ev.DataAt) > dvKey || !hasAt(body, timeEnd, kData) {
			return false
		}
		m.val[egData] = body[ev.DataAt:dvKey]
	}
	eventTime := body[timeAt:timeEnd]
	if len(eventTime) < 2 || eventTime[0] != '"' || eventTime[len(eventTime)-1] != '"' ||
		bytes.IndexByte(eventTime[1:len(eventTime)-1], '"') >= 0 {
		return false // DataAt does not fit the body
	}
	m.val[egID], m.val[egTopic], m.val[egSubject], m.val[egEventType] = id, topic, subject, eventType
	m.val[egEventTime] = eventTime
	m.val[egDataVersion] = body[dvKey+len(kDataVersion) : dvEnd]
	return true
}

// literalAt returns the n bytes of body after key, which must be at i, and
// where they end; ok is false unless they are there and quoted.
func literalAt(body []byte, i int, key string, n int) (lit []byte, end int, ok bool) {
	start := i + len(key)
	end = start + n
	if !hasAt(body, i, key) || end > len(body) || n < 2 || body[start] != '"' || body[end-1] != '"' {
		return nil, 0, false
	}
	return body[start:end], end, true
}

// dataVersionAtEnd returns the dataVersion string literal of a body that
// ends as buildEventGrid ends one, read from the end, and where its key
// starts; ok is false for a body that does not end so. A string holds no
// bare quote, so the literal starts at the first quote before its end that
// no backslash escapes.
func dataVersionAtEnd(body []byte) (literal []byte, keyAt int, ok bool) {
	end := len(body) - len(kTail)
	if end < 2 || !bytes.HasSuffix(body, []byte(kTail)) || body[end-1] != '"' {
		return nil, 0, false
	}
	start := end - 2
	for start >= 0 && (body[start] != '"' || escaped(body, start)) {
		start--
	}
	keyAt = start - len(kDataVersion)
	if keyAt < 0 || !hasAt(body, keyAt, kDataVersion) {
		return nil, 0, false
	}
	return body[start:end], keyAt, true
}

// escaped reports whether b[i] follows an odd number of backslashes.
func escaped(b []byte, i int) bool {
	n := 0
	for i--; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// hasAt reports whether b holds s at offset i.
func hasAt(b []byte, i int, s string) bool {
	return i >= 0 && i+len(s) <= len(b) && string(b[i:i+len(s)]) == s
}

// checkDefaultID returns an error unless the id string literal id is
// defaultID, the id the request's URL names.
func checkDefaultID(i int, id []byte, defaultID string) error {
	if s, ok := unquote(id); ok && s == defaultID {
		return nil
	}
	return fieldError(i, "id", "is %s but the request is for event id %s",
		literalForMessage(id), quoteForMessage(defaultID))
}

// buildConverted writes the CloudEvent of the checked EventGridSchema
// members m, with id, as CloudEventOf would convert the body
// buildEventGrid writes for them, when the event is plain (see
// eventgrid.Event.Plain): the CloudEvent then takes each member's literal
// as it is (and newDecoder checked that the topic's is a source as it is).
// It returns nil for any other event, which is built and converted the
// usual way.
func (d *decoder) buildConverted(m *members, id []byte) *eventgrid.Event {
	subject, eventType, eventTime := m.val[egSubject], m.val[egEventType], m.val[egEventTime]
	data, dataVersion := m.val[egData], m.val[egDataVersion]
	for _, v := range [...][]byte{id, subject, eventType, eventTime, dataVersion} {
		if _, ok := plainText(v); !ok {
			return nil
		}
	}
	// Optional attributes that are empty or blank are left out, as the
	// conversion leaves them out.
	hasSubject, hasDataVersion := presentTextOf(subject, true), presentTextOf(dataVersion, true)
	n := len(kcID) + len(id) + len(kcSource) + len(d.qtopic) + len(kcType) + len(eventType) + len(kcTime) + len(eventTime) + 1
	if hasSubject {
		n += len(kcSubject) + len(subject)
	}
	if hasDataVersion {
		n += len(kcDataVersion) + len(dataVersion)
	}
	if data != nil {
		n += len(kcContentType) + len(kcData) + len(data)
	}

	b := d.mem.body(n)
	b = append(b, kcID...)
	idAt := len(b)
	b = append(b, id...)
	b = append(b, kcSource...)
	b = append(b, d.qtopic...)
	b = append(b, kcType...)
	typeAt := len(b)
	b = append(b, eventType...)
	subjectAt, dataVersionAt := -1, -1
	if hasSubject {
		b = append(b, kcSubject...)
		subjectAt = len(b)
		b = append(b, subject...)
	}
	b = append(b, kcTime...)
	b = append(b, eventTime...)
	if data != nil {
		b = append(b, kcContentType...)
	}
	if hasDataVersion {
		b = append(b, kcDataVersion...)
		dataVersionAt = len(b)
		b = append(b, dataVersion...)
	}
	if data != nil {
		b = append(b, kcData...)
		b = append(b, data...)
	}
	b = append(b, '}')

	ev := d.mem.event()
	*ev = eventgrid.Event{HasSubject: true, Converted: true, Body: b, Accepted: d.accepted}
	ev.ID, _ = textAt(b, idAt, len(id))
	ev.Type, _ = textAt(b, typeAt, len(eventType))
	ev.Subject = textOf(b, subjectAt, subject)
	ev.DataVersion = textOf(b, dataVersionAt, dataVersion)
	return ev
}

// The CloudEvent of an EventGridSchema event, as the conversion and
// buildConverted write it: each attribute's key with what comes before
// it, in their order.
const (
	kcID          = `{"specversion":"1.0","id":`
	kcSource      = `,"source":`
	kcType        = `,"type":`
	kcSubject     = `,"subject":`
	kcTime        = `,"time":`
	kcContentType = `,"datacontenttype":"application/json"`
	kcDataVersion = `,"dataversion":`
	kcData        = `,"data":`
)

// textOf is the text of the plain literal lit, shared with body when
// buildConverted wrote it there, at at; a blank one, which the CloudEvent
// leaves out, is copied (an empty one costs nothing).
func textOf(body []byte, at int, lit []byte) string {
	if at < 0 {
		return string(lit[1 : len(lit)-1])
	}
	s, _ := textAt(body, at, len(lit))
	return s
}
