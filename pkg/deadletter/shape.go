package deadletter

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// timeFormat is RFC 3339 in UTC with fractional seconds, as the cloud writes.
const timeFormat = "2006-01-02T15:04:05.0000000Z"

// CustomEventType is the eventType of the EventGridSchema envelope a
// CustomEventSchema event is dead-lettered in; the envelope's subject is
// /topics/<topic>/eventSubscriptions/<subscription> and its data is the
// custom event byte for byte.
const CustomEventType = "Edgegrid.DeadLetteredCustomEvent"

// names of the added fields, EventGridSchema (camelCase) then CloudEvents.
var fieldNames = [2][6]string{
	{"deadLetterReason", "deliveryAttempts", "lastDeliveryOutcome", "publishTime", "lastDeliveryAttemptTime", "lastHttpStatusCode"},
	{"deadletterreason", "deliveryattempts", "lastdeliveryoutcome", "publishtime", "lastdeliveryattempttime", "lasthttpstatuscode"},
}

// Shape returns the dead-lettered form of l (docs/design.md#dead-lettering):
// the event as its
// subscription received it with the reason and the last outcome added.
func Shape(l *eventgrid.DeadLetter) []byte {
	sub := l.Subscription
	body := rawjson.TrimSpace(l.Body)
	names := &fieldNames[0]
	switch sub.EventDeliverySchema {
	case eventgrid.CloudEventSchemaV1_0:
		names = &fieldNames[1]
	case eventgrid.CustomEventSchema:
		body = customEnvelope(sub, body, l.Published)
	}
	out := make([]byte, 0, len(body)+256)
	out = append(out, body[:len(body)-1]...) // without the closing brace
	if len(rawjson.TrimSpace(body[1:len(body)-1])) > 0 {
		out = append(out, ',')
	}
	out = appendField(out, names[0], strconv.Quote(l.Reason))
	out = append(out, ',')
	out = appendField(out, names[1], strconv.Itoa(l.Attempts))
	out = append(out, ',')
	out = appendField(out, names[2], strconv.Quote(l.LastOutcome))
	out = append(out, ',')
	out = appendField(out, names[3], strconv.Quote(l.Published.UTC().Format(timeFormat)))
	if !l.LastAttempt.IsZero() {
		out = append(out, ',')
		out = appendField(out, names[4], strconv.Quote(l.LastAttempt.UTC().Format(timeFormat)))
	}
	if l.LastStatus != 0 {
		out = append(out, ',')
		out = appendField(out, names[5], strconv.Itoa(l.LastStatus))
	}
	return append(out, '}')
}

func appendField(out []byte, name, value string) []byte {
	out = append(out, '"')
	out = append(out, name...)
	out = append(out, '"', ':')
	return append(out, value...)
}

// customEnvelope wraps a custom event in an EventGridSchema envelope.
func customEnvelope(sub *eventgrid.EventSubscription, data []byte, published time.Time) []byte {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	env := `{"id":` + q(newID()) +
		`,"topic":` + q(sub.Topic) +
		`,"subject":` + q("/topics/"+sub.Topic+"/eventSubscriptions/"+sub.Name) +
		`,"eventType":` + q(CustomEventType) +
		`,"eventTime":` + q(published.UTC().Format(timeFormat)) +
		`,"data":` + string(data) +
		`,"dataVersion":"1.0","metadataVersion":"1"}`
	return []byte(env)
}

// newID returns a random (version 4) UUID.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// blobName is where a blob of subscription sub written at t goes:
// <SUBSCRIPTION NAME IN UPPER CASE>/<yyyy>/<M>/<d>/<H>/<uuid>.json, in UTC,
// without zero padding, as the cloud lays them out.
func blobName(sub string, t time.Time) string {
	t = t.UTC()
	return upper(sub) + "/" + strconv.Itoa(t.Year()) + "/" + strconv.Itoa(int(t.Month())) + "/" +
		strconv.Itoa(t.Day()) + "/" + strconv.Itoa(t.Hour()) + "/" + newID() + ".json"
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
