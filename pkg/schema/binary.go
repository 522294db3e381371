package schema

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// IsBinary reports whether h carries a binary-mode CloudEvent (a
// ce-specversion header). Header names are matched case-insensitively, also
// in a Header map built by hand without canonical keys. It is safe for
// concurrent use.
func IsBinary(h http.Header) bool {
	if _, ok := h["Ce-Specversion"]; ok {
		return true
	}
	for k := range h {
		if strings.EqualFold(k, "ce-specversion") {
			return true
		}
	}
	return false
}

// DecodeBinary builds a CloudEvent from an HTTP binary-mode request:
// attributes in ce-* headers, the body is the data, Content-Type is
// datacontenttype. defaultID as in DecodeOne (used when ce-id is absent).
//
// Header values are unquoted and percent-decoded as the CloudEvents HTTP
// binding (§3.1.3.2) says and must then be valid UTF-8. HTTP header names
// are case-insensitive, so attribute names are read in lower case; the
// attributes then follow the rules of DecodeOne, Content-Type as
// datacontenttype. Extension attributes become JSON strings, written in
// name order. The body becomes "data" as is when the content type is JSON
// (*/json or */*+json, parameters allowed), a JSON string when it is text/*
// or absent and the body is valid UTF-8, and "data_base64" otherwise; an
// empty body means no data.
//
// It returns an *eventgrid.Error: EInvalidEvent (index 0) when a header is
// malformed, repeated or not a valid attribute, or an attribute fails
// validation as in DecodeOne; EInvalidJSON when a JSON body is not valid
// JSON; EPayloadTooLarge when the canonical Body would exceed
// eventgrid.MaxEventSize (base64 makes a binary body a third larger). The
// Body never shares memory with body. DecodeBinary is safe for concurrent
// use.
func DecodeBinary(h http.Header, body []byte, defaultID string, accepted time.Time) (*eventgrid.Event, error) {
	if err := checkDefaultIDText(defaultID); err != nil {
		return nil, err
	}
	d := &decoder{mem: newArena(len(body)+512, 1, new(Scratch)), schema: eventgrid.CloudEventSchemaV1_0, accepted: accepted}
	var m members
	if err := d.readHeaders(h, &m); err != nil {
		return nil, err
	}
	if err := d.checkAttributes(0, &m, defaultID); err != nil {
		return nil, err
	}
	if err := binaryData(&m, body); err != nil {
		return nil, err
	}
	return d.buildCloudEvent(0, &m)
}

// readHeaders reads the attributes of a binary-mode request into m and
// d.exts: Content-Type as datacontenttype, and the ce-* headers. The
// extensions are sorted by name.
func (d *decoder) readHeaders(h http.Header, m *members) error {
	var contentType string
	hasContentType := false
	for k, vs := range h {
		if strings.EqualFold(k, "content-type") {
			if hasContentType || len(vs) > 1 {
				return fieldError(0, "datacontenttype", "cannot be given by more than one Content-Type header")
			}
			if len(vs) == 1 {
				contentType, hasContentType = strings.Trim(vs[0], " \t"), true
			}
			continue
		}
		if len(k) > 3 && strings.EqualFold(k[:3], "ce-") {
			if err := d.attributeHeader(m, k[3:], vs); err != nil {
				return err
			}
		}
	}
	if hasContentType {
		if m.val[ceDataContentType] != nil {
			return fieldError(0, "datacontenttype",
				"must be given by the Content-Type header, not also by ce-datacontenttype")
		}
		if !utf8.ValidString(contentType) {
			return fieldError(0, "datacontenttype", "must be valid UTF-8")
		}
		if contentType != "" {
			m.val[ceDataContentType] = rawjson.AppendString(nil, contentType)
		}
	}
	// Header maps have no order; sort so that the Body is deterministic,
	// and a header given twice, in two spellings of its name, shows.
	slices.SortFunc(d.exts, func(a, b extension) int { return bytes.Compare(a.name, b.name) })
	for j := 1; j < len(d.exts); j++ {
		if bytes.Equal(d.exts[j-1].name, d.exts[j].name) {
			return repeatedHeader("ce-" + string(d.exts[j].name))
		}
	}
	return nil
}

// attributeHeader reads the header ce-<attr>, with values vs, into m (a
// context attribute) or d.exts (an extension).
func (d *decoder) attributeHeader(m *members, attr string, vs []string) error {
	name := []byte(attr)
	for j, c := range name {
		name[j] = lowerASCII(c)
	}
	if err := checkAttributeName(0, name); err != nil {
		return err
	}
	header := "ce-" + string(name)
	if len(vs) != 1 {
		return repeatedHeader(header)
	}
	val, ok := decodeHeaderValue(vs[0])
	if !ok {
		return eventgrid.Errorf(eventgrid.EInvalidEvent,
			"event at index 0: header %s is not a valid quoted or percent-encoded UTF-8 value",
			quoteForMessage(header))
	}
	lit := rawjson.AppendString(nil, val)
	f, _ := fieldIndex(ceNames, name)
	switch {
	case f == ceData || f == ceDataBase64:
		return fieldError(0, string(name), "cannot be a header: the body is the data")
	case f >= 0 && m.val[f] != nil:
		return repeatedHeader(header)
	case f >= 0:
		m.val[f] = lit
	default:
		d.exts = append(d.exts, extension{name: name, value: lit})
	}
	return nil
}

func repeatedHeader(header string) error {
	return eventgrid.Errorf(eventgrid.EInvalidEvent,
		"event at index 0: header %s must appear exactly once", quoteForMessage(header))
}

// binaryData sets m's data or data_base64 from the request body.
func binaryData(m *members, body []byte) error {
	mediaType := mediaTypeOf(m.val[ceDataContentType])
	switch {
	case isJSONMediaType(mediaType):
		data := rawjson.TrimSpace(body)
		if len(data) == 0 {
			return nil
		}
		if _, err := rawjson.ValidStrict(data); err != nil {
			if se, ok := err.(*rawjson.StrictError); ok {
				where := "data"
				if rawjson.KindOf(data) == rawjson.Array {
					where += "[" + strconv.Itoa(se.Element) + "]"
				}
				return strictError(se, where, 0)
			}
			return invalidJSON("the request body (Content-Type "+mediaType+")", body)
		}
		m.val[ceData] = data
	case len(body) == 0:
	case (mediaType == "" || strings.HasPrefix(mediaType, "text/")) && utf8.Valid(body):
		m.val[ceData] = rawjson.AppendString(nil, string(body))
	default:
		b64 := make([]byte, 0, base64.StdEncoding.EncodedLen(len(body))+2)
		b64 = append(b64, '"')
		b64 = base64.StdEncoding.AppendEncode(b64, body)
		m.val[ceDataBase64] = append(b64, '"')
	}
	return nil
}

// decodeHeaderValue decodes a ce-* header value: optional white space is
// trimmed, double-quoted parts are unquoted (backslash escapes included, as
// RFC 7230 §3.2.6 says), then one round of percent-decoding is applied. ok
// is false for an unterminated quote, a malformed percent escape or a result
// that is not valid UTF-8 (overlong encodings included).
func decodeHeaderValue(v string) (s string, ok bool) {
	v = strings.Trim(v, " \t")
	if strings.IndexByte(v, '"') >= 0 {
		var b strings.Builder
		quoted := false
		for i := 0; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '"':
				quoted = !quoted
			case c == '\\' && quoted:
				if i++; i == len(v) {
					return "", false
				}
				b.WriteByte(v[i])
			default:
				b.WriteByte(c)
			}
		}
		if quoted {
			return "", false
		}
		v = b.String()
	}
	if strings.IndexByte(v, '%') >= 0 {
		b := make([]byte, 0, len(v))
		for i := 0; i < len(v); i++ {
			if v[i] != '%' {
				b = append(b, v[i])
				continue
			}
			if i+2 >= len(v) {
				return "", false
			}
			hi, ok1 := unhex(v[i+1])
			lo, ok2 := unhex(v[i+2])
			if !ok1 || !ok2 {
				return "", false
			}
			b = append(b, hi<<4|lo)
			i += 2
		}
		v = string(b)
	}
	return v, utf8.ValidString(v)
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
