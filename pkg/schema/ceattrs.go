package schema

import "github.com/edgegrid/edgegrid/pkg/rawjson"

// checkAttributes holds the context attributes of the CloudEvent at index
// i, the literals in m and the extensions in d.exts, to the rules of the
// CloudEvents 1.0 core specification and its JSON format, as
// docs/api.md#cloudevents-attributes lists them. Binary mode gives every
// attribute as a JSON string literal, so both content modes share it. A
// missing id becomes defaultID when that is set.
func (d *decoder) checkAttributes(i int, m *members, defaultID string) error {
	switch v := m.val[ceSpecVersion]; {
	case v == nil:
		return fieldError(i, "specversion", "is required")
	case !isString(v):
		return fieldError(i, "specversion", "must be a string")
	default:
		if s, _ := unquote(v); s != "1.0" && s != "1.0-rc1" {
			return fieldError(i, "specversion", `must be "1.0", not %s`, quoteForMessage(s))
		}
	}
	switch id := m.val[ceID]; {
	case id == nil && defaultID == "":
		return fieldError(i, "id", "is required")
	case id == nil:
		m.val[ceID] = rawjson.AppendString(nil, defaultID)
	case !isString(id):
		return fieldError(i, "id", "must be a string")
	case len(id) == 2:
		return fieldError(i, "id", "must not be empty")
	case defaultID != "":
		if err := checkDefaultID(i, id, defaultID); err != nil {
			return err
		}
	}
	for _, f := range [...]int{ceSource, ceType} {
		if m.val[f] == nil {
			return fieldError(i, ceNames[f], "is required")
		}
	}
	for f := ceID; f <= ceDataSchema; f++ {
		if v := m.val[f]; v != nil {
			if err := checkContextAttribute(i, f, v); err != nil {
				return err
			}
		}
	}
	for j := range d.exts {
		if err := checkExtension(i, &d.exts[j]); err != nil {
			return err
		}
	}
	return nil
}

// checkContextAttribute checks the value v of the core attribute f (other
// than specversion): a string, not empty, a CloudEvents String, and of the
// attribute's form.
func checkContextAttribute(i, f int, v []byte) error {
	name := ceNames[f]
	if !isString(v) {
		return fieldError(i, name, "must be a string")
	}
	s, plain := plainText(v)
	if !plain {
		s, _ = unquote(v)
		if err := checkText(i, name, s); err != nil {
			return err
		}
	}
	switch f {
	case ceID, ceSource, ceType, ceSubject:
		if s == "" {
			if f == ceSubject {
				return fieldError(i, name, "must not be empty: leave it out, or null, when there is none")
			}
			return fieldError(i, name, "must not be empty")
		}
		if isBlank(s) {
			return fieldError(i, name, "must not be only white space")
		}
	}
	switch f {
	case ceSource:
		if !validURIReference(s) {
			return fieldError(i, name, `must be a URI reference (RFC 3986), such as "/sensors/7" or "urn:example:s7", not %s`,
				quoteForMessage(s))
		}
	case ceTime:
		if !validTimestamp(s) {
			return fieldError(i, name, "must be an RFC 3339 timestamp, not %s", quoteForMessage(s))
		}
	case ceDataContentType:
		if !validMediaType(s) {
			return fieldError(i, name, `must be a media type (RFC 2046) such as "application/json", not %s`,
				quoteForMessage(s))
		}
	case ceDataSchema:
		if !validAbsoluteURI(s) {
			return fieldError(i, name, `must be an absolute URI (RFC 3986) such as "https://example.com/schema.json", not %s`,
				quoteForMessage(s))
		}
	}
	return nil
}

// checkText returns an error when s holds a character that a CloudEvents
// String cannot: a control character or a Unicode noncharacter.
func checkText(i int, name, s string) error {
	r, bad := badStringRune(s)
	if !bad {
		return nil
	}
	what := "the control character"
	if r > 0x9f {
		what = "the Unicode noncharacter"
	}
	return fieldError(i, name, "holds %s U+%04X, which CloudEvents attribute values cannot hold", what, r)
}

// Types of the CloudEvents type system, for extensions whose type is known.
const (
	typeAny = iota // any String, Integer or Boolean: the type cannot be told
	typeBoolean
	typeInteger
	typeTimestamp
	typeURI
	typeURIRef
)

var typeNames = [...]string{
	typeBoolean:   "a Boolean: true or false",
	typeInteger:   "an Integer from -2147483648 to 2147483647",
	typeTimestamp: "an RFC 3339 timestamp",
	typeURI:       "an absolute URI (RFC 3986)",
	typeURIRef:    "a URI reference (RFC 3986)",
}

// extensionType returns the type that the extensions documented with the
// CloudEvents specification (https://github.com/cloudevents/spec, folder
// cloudevents/extensions) give name when it is not String. Any other
// extension has typeAny: its value is a String, Integer or Boolean by its
// JSON type, and a string may encode any type.
func extensionType(name []byte) int {
	switch string(name) {
	case "deprecated":
		return typeBoolean
	case "sampledrate", "severitynumber":
		return typeInteger
	case "expirytime", "recordedtime", "deprecationfrom", "deprecationsunset":
		return typeTimestamp
	case "deprecationmigration":
		return typeURI
	case "dataref":
		return typeURIRef
	}
	return typeAny
}

// checkExtension checks the value of an extension attribute: a JSON
// string, number or boolean (checked when it was read); a string must be a
// CloudEvents String, a number an Integer. An extension of a known type
// must hold that type, natively or in its canonical string encoding.
func checkExtension(i int, e *extension) error {
	typ := extensionType(e.name)
	v := e.value
	var ok bool
	switch {
	case isString(v):
		s, plain := plainText(v)
		if !plain {
			s, _ = unquote(v)
			if err := checkText(i, string(e.name), s); err != nil {
				return err
			}
		}
		switch typ {
		case typeAny:
			ok = true
		case typeBoolean:
			ok = s == "true" || s == "false"
		case typeInteger:
			ok = validInteger(s)
		case typeTimestamp:
			ok = validTimestamp(s)
		case typeURI:
			ok = validAbsoluteURI(s)
		case typeURIRef:
			ok = validURIReference(s)
		}
		if !ok {
			return fieldError(i, string(e.name), "must be %s, not %s", typeNames[typ], quoteForMessage(s))
		}
		return nil
	case v[0] == 't' || v[0] == 'f':
		ok = typ == typeAny || typ == typeBoolean
	default: // a number
		if !validInteger(string(v)) {
			return fieldError(i, string(e.name),
				"must be an integer from -2147483648 to 2147483647 (a CloudEvents Integer), not %s", literalForMessage(v))
		}
		ok = typ == typeAny || typ == typeInteger
	}
	if !ok {
		return fieldError(i, string(e.name), "must be %s, not %s", typeNames[typ], literalForMessage(v))
	}
	return nil
}

// checkAttributeName returns an error unless name is a valid CloudEvents
// attribute name: lower-case ASCII letters and digits. Names are
// case-sensitive, so one with upper-case letters is refused, not renamed.
func checkAttributeName(i int, name []byte) error {
	ok, upper := len(name) > 0, false
	for _, c := range name {
		switch {
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			upper = true
		default:
			ok = false
		}
	}
	const rule = "is not a valid attribute name: CloudEvents attribute names are lower-case ASCII letters and digits"
	switch {
	case !ok:
		return fieldError(i, string(name), rule)
	case upper:
		return fieldError(i, string(name), rule+"; names are case-sensitive, so it is not read as %s",
			quoteForMessage(lowerString(name)))
	}
	return nil
}

// foldable reports whether name is an attribute name but for its case:
// ASCII letters and digits, an upper-case letter among them.
func foldable(name []byte) bool {
	upper := false
	for _, c := range name {
		switch {
		case 'A' <= c && c <= 'Z':
			upper = true
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return upper
}

func lowerString(b []byte) string {
	s := make([]byte, len(b))
	for i, c := range b {
		s[i] = lowerASCII(c)
	}
	return string(s)
}
