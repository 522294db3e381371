package webhook

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// Content types of single-event requests (contentMode Structured,
// docs/design.md#content-modes).
const (
	ContentTypeCloudEvent = "application/cloudevents+json; charset=utf-8"
	// contentTypeDataJSON is a binary-mode CloudEvent's Content-Type when
	// it has data but no datacontenttype: the JSON format implies JSON.
	contentTypeDataJSON = "application/json"
)

// payload is one request's body and the headers that describe it.
type payload struct {
	body        *body
	contentType string
	// header holds the ce-* attributes of a binary-mode CloudEvent.
	header http.Header
}

// arrayPayload lays out the one request of a batch in the Batch content
// mode, the default: a JSON array. ok is false in the Structured and
// Binary modes, where eventPayloads lays out the requests.
func arrayPayload(b *push.Batch) (p payload, ok bool) {
	sub := b.Subscription
	dst := sub.Destination
	if dst.ContentMode == eventgrid.ContentStructured || dst.ContentMode == eventgrid.ContentBinary {
		return payload{}, false
	}
	p = payload{
		body:        newBody(b.Bodies, dst.EndpointType == eventgrid.EventGrid && sub.EventDeliverySchema == eventgrid.EventGridSchema, dst.TopicName),
		contentType: ContentTypeJSON,
	}
	if sub.EventDeliverySchema == eventgrid.CloudEventSchemaV1_0 {
		p.contentType = ContentTypeCloudEvents
	}
	return p, true
}

// eventPayloads lays out the requests of a batch in the Structured and
// Binary content modes: one per event.
func eventPayloads(b *push.Batch) ([]payload, error) {
	ps := make([]payload, len(b.Bodies))
	if b.Subscription.Destination.ContentMode == eventgrid.ContentBinary {
		for i, ev := range b.Bodies {
			p, err := binaryPayload(ev)
			if err != nil {
				return nil, err
			}
			ps[i] = p
		}
		return ps, nil
	}
	ce := b.Subscription.EventDeliverySchema == eventgrid.CloudEventSchemaV1_0
	for i, ev := range b.Bodies {
		ps[i] = payload{body: singleBody(ev), contentType: ContentTypeJSON}
		if ce {
			ps[i].contentType = ContentTypeCloudEvent
		}
	}
	return ps, nil
}

func singleBody(ev []byte) *body {
	b := &body{}
	b.add(ev)
	return b
}

// binaryPayload maps a canonical CloudEvents JSON object to the HTTP binary
// content mode (CloudEvents HTTP binding §3.1): every attribute but
// datacontenttype becomes a ce-* header holding its canonical string form,
// percent-encoded; datacontenttype becomes Content-Type; the body is the
// data: data_base64 decoded, the JSON text of data when the content type is
// JSON or absent (then Content-Type is application/json), and a string's
// own bytes for any other content type.
func binaryPayload(ev []byte) (payload, error) {
	p := payload{header: http.Header{}}
	var data, dataBase64 []byte
	hasType := false
	isObject := rawjson.ObjectEach(ev, func(k, v []byte) bool {
		name := string(k) // canonical bodies have plain lower-case names
		switch {
		case rawjson.KindOf(v) == rawjson.Null && name != "data":
		case name == "data":
			data = v
		case name == "data_base64":
			dataBase64 = v
		case name == "datacontenttype":
			p.contentType, _ = rawjson.Unquote(v)
			hasType = true
		default:
			text := string(v)
			if s, ok := rawjson.Unquote(v); ok {
				text = s
			}
			p.header["Ce-"+headerCase(name)] = []string{percentEncode(text)}
		}
		return true
	})
	if !isObject {
		return p, &Error{Err: errors.New("a binary-mode delivery needs a CloudEvent JSON object")}
	}
	switch {
	case dataBase64 != nil:
		s, _ := rawjson.Unquote(dataBase64)
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return p, &Error{Err: errors.New("the CloudEvent's data_base64 is not valid base64")}
		}
		p.body = singleBody(raw)
	case data == nil:
		p.body = &body{}
	case !hasType:
		p.contentType = contentTypeDataJSON
		p.body = singleBody(data)
	case isJSONMediaType(p.contentType):
		p.body = singleBody(data)
	default:
		if s, ok := rawjson.Unquote(data); ok {
			p.body = singleBody([]byte(s))
		} else {
			p.body = singleBody(data)
		}
	}
	return p, nil
}

// headerCase returns the canonical form of a ce-* header's attribute part,
// as http.CanonicalHeaderKey would give it for the whole name: attribute
// names are lower-case letters and digits, so only the first letter is
// upper-cased.
func headerCase(name string) string {
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		return name
	}
	return string(name[0]-'a'+'A') + name[1:]
}

// isJSONMediaType reports whether the content type ct declares JSON:
// */json or */*+json, parameters allowed, as the CloudEvents JSON format
// defines it.
func isJSONMediaType(ct string) bool {
	t, _, _ := strings.Cut(ct, ";")
	_, sub, ok := strings.Cut(strings.ToLower(strings.TrimSpace(t)), "/")
	return ok && (sub == "json" || strings.HasSuffix(sub, "+json"))
}

// percentEncode encodes a ce-* header value as the CloudEvents HTTP binding
// says (§3.1.3.2): space, double quote, percent and every byte outside
// printable ASCII become %XY (upper-case hex) of their UTF-8 bytes.
func percentEncode(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if mustEncode(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if mustEncode(c) {
			b = append(b, '%', hex[c>>4], hex[c&0xF])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

func mustEncode(c byte) bool { return c <= 0x20 || c >= 0x7F || c == '"' || c == '%' }
