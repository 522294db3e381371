package schema

import (
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// CloudEvents members, in canonical order (extensions go between dataschema
// and data).
const (
	ceSpecVersion = iota
	ceID
	ceSource
	ceType
	ceSubject
	ceTime
	ceDataContentType
	ceDataSchema
	ceData
	ceDataBase64
	ceCount
)

var ceNames = []string{
	ceSpecVersion:     "specversion",
	ceID:              "id",
	ceSource:          "source",
	ceType:            "type",
	ceSubject:         "subject",
	ceTime:            "time",
	ceDataContentType: "datacontenttype",
	ceDataSchema:      "dataschema",
	ceData:            "data",
	ceDataBase64:      "data_base64",
}

// extension is a CloudEvents extension attribute of the event being decoded.
type extension struct {
	// name is the attribute name, unescaped: lower-case ASCII letters and
	// digits once checkAttributeName has passed it.
	name []byte
	// value is a JSON string, number or boolean literal.
	value []byte
}

// cloudEvent decodes the structured-mode CloudEvent object elem at index i.
//
// The body passed rawjson.ValidStrict, so elem names no member twice, not
// even in two spellings: the ten members of the JSON format are matched
// ignoring ASCII case (the C# SDK writes SpecVersion, the original docs
// dataSchema) and written in lower case, and every other member is an
// extension attribute whose name must already be lower case.
func (d *decoder) cloudEvent(i int, elem []byte, defaultID string) (*eventgrid.Event, error) {
	var m members
	d.exts = d.exts[:0]
	var err error
	rawjson.ObjectEach(elem, func(k, v []byte) bool {
		name := k
		if !plainASCII(k) {
			name = unescapeName(k)
		}
		f := -1
		if plainASCII(name) {
			f, _ = fieldIndex(ceNames, name)
		}
		switch {
		case f == ceData: // null data is a payload, not an absent attribute
			m.val[f] = v
		case f >= 0:
			if !isNull(v) { // a null attribute is an absent one
				m.val[f] = v
			}
		default:
			err = d.addExtension(i, name, v)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	if err := d.checkAttributes(i, &m, defaultID); err != nil {
		return nil, err
	}
	if err := checkData(i, &m); err != nil {
		return nil, err
	}
	return d.buildCloudEvent(i, &m)
}

// checkData checks data_base64, that data is not given with it, and that
// data is a string unless datacontenttype declares JSON: a JSON serializer
// must write other content as a string (JSON format §3.1.1), and receivers
// such as the CloudEvents Go SDK refuse anything else.
func checkData(i int, m *members) error {
	if data, ct := m.val[ceData], m.val[ceDataContentType]; ct != nil && data != nil && !isString(data) && !isNull(data) {
		if string(ct) != `"application/json"` && !isJSONMediaType(mediaTypeOf(ct)) {
			s, _ := unquote(ct)
			return fieldError(i, "data", "must be a string, not %s, when \"datacontenttype\" %s is not a JSON media type "+
				"(*/json or */*+json); binary data goes in \"data_base64\"", kindName(rawjson.KindOf(data)), quoteForMessage(s))
		}
	}
	v := m.val[ceDataBase64]
	if v == nil {
		return nil
	}
	if !isString(v) {
		return fieldError(i, "data_base64", "must be a string")
	}
	if m.val[ceData] != nil {
		if !isNull(m.val[ceData]) {
			return fieldError(i, "data_base64", `cannot be present together with "data"`)
		}
		// Serialisers that write every property send "data": null next to
		// data_base64; the null says nothing.
		m.val[ceData] = nil
	}
	if s, _ := unquote(v); !validBase64(s) {
		return fieldError(i, "data_base64", "must be standard base64 (RFC 4648 §4, padded)")
	}
	return nil
}

// unescapeName decodes the escapes of the raw member name k.
func unescapeName(k []byte) []byte {
	quoted := make([]byte, 0, len(k)+2)
	quoted = append(append(append(quoted, '"'), k...), '"')
	s, _ := rawjson.Unquote(quoted)
	return []byte(s)
}

// buildCloudEvent writes the canonical body of the CloudEvent whose
// attribute literals are in m and whose extensions are in d.exts.
func (d *decoder) buildCloudEvent(i int, m *members) (*eventgrid.Event, error) {
	const head = `{"specversion":"1.0"`
	n := len(head) + 1
	for f := ceID; f < ceCount; f++ {
		if v := m.val[f]; v != nil {
			n += len(`,"":`) + len(ceNames[f]) + len(v)
		}
	}
	for _, e := range d.exts {
		n += len(`,"":`) + len(e.name) + len(e.value)
	}
	if n > eventgrid.MaxEventSize {
		return nil, tooLarge(i, n)
	}

	b := d.mem.body(n)
	b = append(b, head...)
	var at [ceCount]int
	member := func(f int) {
		if v := m.val[f]; v != nil {
			b = append(b, ',', '"')
			b = append(b, ceNames[f]...)
			b = append(b, '"', ':')
			at[f] = len(b)
			b = append(b, v...)
		}
	}
	for f := ceID; f <= ceDataSchema; f++ {
		member(f)
	}
	for _, e := range d.exts {
		b = append(b, ',', '"')
		b = append(b, e.name...)
		b = append(b, '"', ':')
		b = append(b, e.value...)
	}
	member(ceData)
	member(ceDataBase64)
	b = append(b, '}')

	ev := d.mem.event()
	*ev = eventgrid.Event{
		ID:       stringAt(b, at[ceID], len(m.val[ceID])),
		Type:     stringAt(b, at[ceType], len(m.val[ceType])),
		Body:     b,
		Accepted: d.accepted,
	}
	if v := m.val[ceSubject]; v != nil {
		ev.Subject, ev.HasSubject = stringAt(b, at[ceSubject], len(v)), true
	}
	return ev, nil
}

// addExtension records the extension attribute named name (unescaped)
// with value v of the event at index i. A null value is an absent
// attribute, but its name must still be valid.
func (d *decoder) addExtension(i int, name, v []byte) error {
	if d.foldNames && foldable(name) {
		name = []byte(lowerString(name))
	}
	if err := checkAttributeName(i, name); err != nil {
		return err
	}
	switch k := rawjson.KindOf(v); k {
	case rawjson.Null:
	case rawjson.String, rawjson.Number, rawjson.Bool:
		d.exts = append(d.exts, extension{name: name, value: v})
	default:
		return fieldError(i, string(name), "must be a string, number or boolean, not %s", kindName(k))
	}
	return nil
}
