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
	// name is the attribute name, unescaped: ASCII letters and digits, in
	// any case until written.
	name []byte
	// value is a JSON string, number or boolean literal.
	value []byte
	// exact reports that name was written in lower case.
	exact bool
}

// extMapThreshold is the number of extensions above which duplicates are
// found with a map rather than a linear scan.
const extMapThreshold = 16

// cloudEvent decodes the structured-mode CloudEvent object elem at index i.
func (d *decoder) cloudEvent(i int, elem []byte, defaultID string) (*eventgrid.Event, error) {
	var m members
	d.resetExtensions()
	var err error
	rawjson.ObjectEach(elem, func(k, v []byte) bool {
		f, exact := fieldIndex(ceNames, k)
		switch {
		case f == ceData: // null data is a payload, not an absent attribute
			m.set(f, exact, v)
		case isNull(v): // a null attribute is an absent one
		case f >= 0:
			m.set(f, exact, v)
		default:
			err = d.addExtension(i, k, v)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}

	switch v := m.val[ceSpecVersion]; {
	case v == nil:
		return nil, fieldError(i, "specversion", "is required")
	case !isString(v):
		return nil, fieldError(i, "specversion", "must be a string")
	default:
		if s, _ := unquote(v); s != "1.0" && s != "1.0-rc1" {
			return nil, fieldError(i, "specversion", `must be "1.0", not %s`, quoteForMessage(s))
		}
	}
	switch id := m.val[ceID]; {
	case id == nil && defaultID == "":
		return nil, fieldError(i, "id", "is required")
	case id == nil:
		m.val[ceID] = rawjson.AppendString(nil, defaultID)
	case !isString(id):
		return nil, fieldError(i, "id", "must be a string")
	case len(id) == 2:
		return nil, fieldError(i, "id", "must not be empty")
	case defaultID != "":
		if err := checkDefaultID(i, id, defaultID); err != nil {
			return nil, err
		}
	}
	for _, f := range [...]int{ceSource, ceType} {
		switch v := m.val[f]; {
		case v == nil:
			return nil, fieldError(i, ceNames[f], "is required")
		case !isString(v):
			return nil, fieldError(i, ceNames[f], "must be a string")
		case len(v) == 2:
			return nil, fieldError(i, ceNames[f], "must not be empty")
		}
	}
	for _, f := range [...]int{ceSubject, ceTime, ceDataContentType, ceDataSchema, ceDataBase64} {
		if v := m.val[f]; v != nil && !isString(v) {
			return nil, fieldError(i, ceNames[f], "must be a string")
		}
	}
	if v := m.val[ceTime]; v != nil {
		if s, _ := unquote(v); !validTimestamp(s) {
			return nil, fieldError(i, "time", "must be an RFC 3339 timestamp, not %s", quoteForMessage(s))
		}
	}
	if v := m.val[ceDataBase64]; v != nil {
		if m.val[ceData] != nil {
			if !isNull(m.val[ceData]) {
				return nil, fieldError(i, "data_base64", `cannot be present together with "data"`)
			}
			// Serialisers that write every property send "data": null
			// next to data_base64; the null says nothing.
			m.val[ceData] = nil
		}
		if s, _ := unquote(v); !validBase64(s) {
			return nil, fieldError(i, "data_base64", "must be standard base64 (RFC 4648 §4, padded)")
		}
	}
	return d.buildCloudEvent(i, &m)
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
		start := len(b)
		b = append(b, e.name...)
		if !e.exact {
			for j := start; j < len(b); j++ {
				b[j] = lowerASCII(b[j])
			}
		}
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

func (d *decoder) resetExtensions() {
	d.exts = d.exts[:0]
	clear(d.extIndex)
}

// addExtension records the extension attribute with raw key k and non-null
// value v of the event at index i.
func (d *decoder) addExtension(i int, k, v []byte) error {
	name := k
	if !plainASCII(k) {
		quoted := make([]byte, 0, len(k)+2)
		quoted = append(append(append(quoted, '"'), k...), '"')
		s, _ := rawjson.Unquote(quoted)
		name = []byte(s)
	}
	if err := checkAttributeName(i, name); err != nil {
		return err
	}
	switch k := rawjson.KindOf(v); k {
	case rawjson.String, rawjson.Number, rawjson.Bool:
	default:
		return fieldError(i, string(name), "must be a string, number or boolean, not %s", kindName(k))
	}
	exact := true
	for _, c := range name {
		if 'A' <= c && c <= 'Z' {
			exact = false
			break
		}
	}
	if j := d.findExtension(name); j >= 0 {
		if exact && !d.exts[j].exact {
			d.exts[j] = extension{name: name, value: v, exact: true}
		}
		return nil
	}
	d.exts = append(d.exts, extension{name: name, value: v, exact: exact})
	return nil
}

// checkAttributeName returns an error unless name, matched
// case-insensitively, is a valid CloudEvents attribute name: ASCII letters
// and digits.
func checkAttributeName(i int, name []byte) error {
	ok := len(name) > 0
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			ok = false
			break
		}
	}
	if !ok {
		return fieldError(i, string(name), "is not a valid attribute name: CloudEvents attribute names are ASCII letters and digits")
	}
	return nil
}

// findExtension returns the index in d.exts of the extension named name,
// matched case-insensitively, or -1.
func (d *decoder) findExtension(name []byte) int {
	if len(d.exts) < extMapThreshold {
		for j := range d.exts {
			if e := d.exts[j].name; equalFoldBytes(e, name) {
				return j
			}
		}
		return -1
	}
	// Many extensions: index them by lower-case name so that a large event
	// cannot make this quadratic. The map holds exactly d.exts[:len(map)].
	if d.extIndex == nil {
		d.extIndex = make(map[string]int)
	}
	for j := len(d.extIndex); j < len(d.exts); j++ {
		d.extIndex[lowerString(d.exts[j].name)] = j
	}
	if j, ok := d.extIndex[lowerString(name)]; ok {
		return j
	}
	return -1
}

func equalFoldBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerString(b []byte) string {
	s := make([]byte, len(b))
	for i, c := range b {
		s[i] = lowerASCII(c)
	}
	return string(s)
}
