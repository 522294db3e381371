package resource

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// object is a decoded JSON object whose members are looked up
// case-insensitively.
type object struct {
	raw  []byte
	path string // field path of this object, for error messages
}

// parseObject checks that raw is a JSON object (or null/absent, giving an
// empty object) and returns it.
func parseObject(raw []byte, path, code string) (object, error) {
	raw = rawjson.TrimSpace(raw)
	switch rawjson.KindOf(raw) {
	case rawjson.Object:
		return object{raw: raw, path: path}, nil
	case rawjson.Invalid, rawjson.Null:
		return object{path: path}, nil
	case rawjson.String:
		// Module-twin values sometimes carry objects as JSON text.
		if s, ok := rawjson.Unquote(raw); ok && json.Valid([]byte(s)) && rawjson.KindOf([]byte(s)) == rawjson.Object {
			return object{raw: []byte(s), path: path}, nil
		}
	}
	return object{}, eventgrid.Errorf(code, "%s must be a JSON object.", orBody(path))
}

func orBody(path string) string {
	if path == "" {
		return "The request body"
	}
	return path
}

// field returns the path of member name of o.
func (o object) field(name string) string {
	if o.path == "" {
		return name
	}
	return o.path + "." + name
}

// get returns the value of the first of names present (case-insensitively)
// with a non-null value, and the name that matched.
func (o object) get(names ...string) (value []byte, name string, ok bool) {
	if o.raw == nil {
		return nil, "", false
	}
	for _, n := range names {
		if v, found := rawjson.Member(o.raw, n); found && rawjson.KindOf(v) != rawjson.Null {
			return v, n, true
		}
	}
	return nil, "", false
}

// str reads an optional string member.
func (o object) str(code string, names ...string) (string, bool, error) {
	v, name, ok := o.get(names...)
	if !ok {
		return "", false, nil
	}
	s, isStr := rawjson.Unquote(v)
	if !isStr {
		return "", false, eventgrid.Errorf(code, "%s must be a string.", o.field(name))
	}
	return s, true, nil
}

// namedStr is str that also returns which of names matched ("" if none).
func (o object) namedStr(code string, names ...string) (string, string, error) {
	v, name, ok := o.get(names...)
	if !ok {
		return "", "", nil
	}
	s, isStr := rawjson.Unquote(v)
	if !isStr {
		return "", "", eventgrid.Errorf(code, "%s must be a string.", o.field(name))
	}
	return s, name, nil
}

// boolean reads an optional boolean member; "true"/"false" strings are
// accepted in any case.
func (o object) boolean(code string, names ...string) (val, present bool, err error) {
	v, name, ok := o.get(names...)
	if !ok {
		return false, false, nil
	}
	if b, ok := parseBool(v); ok {
		return b, true, nil
	}
	return false, false, eventgrid.Errorf(code, "%s must be true or false.", o.field(name))
}

func parseBool(v []byte) (bool, bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	if s, ok := rawjson.Unquote(v); ok {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// positiveInt reads an optional integer member that must be at least 1.
// Integral numbers written with a fraction or exponent are accepted; a
// string is not, even one holding a number: JSON has numbers, and a client
// that quotes one has most likely put the wrong value there.
func (o object) positiveInt(code string, names ...string) (int, bool, error) {
	v, name, ok := o.get(names...)
	if !ok {
		return 0, false, nil
	}
	if err := notString(code, o.field(name), v); err != nil {
		return 0, false, err
	}
	if n, ok := parseInt(v); ok && n >= 1 {
		return n, true, nil
	}
	return 0, false, eventgrid.Errorf(code, "%s must be a positive integer, got %s.", o.field(name), v)
}

// notString returns an error when the value v of field, which must be a
// number, is a string.
func notString(code, field string, v []byte) error {
	if rawjson.KindOf(v) != rawjson.String {
		return nil
	}
	return eventgrid.Errorf(code, "%s must be a number, not a string (got %s).", field, v)
}

func parseInt(text []byte) (int, bool) {
	if n, err := strconv.Atoi(string(text)); err == nil {
		return n, true
	}
	d, ok := rawjson.ParseDecimal(text)
	if !ok || d.Sign <= 0 || d.Exp < int64(len(d.Digits)) || d.Exp > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(d.Digits + strings.Repeat("0", int(d.Exp)-len(d.Digits)))
	return n, err == nil
}

// array returns the elements of an optional array member. A string holding a
// JSON array is accepted (module-twin arrays are JSON-encoded strings).
func (o object) array(code string, names ...string) ([][]byte, bool, error) {
	v, name, ok := o.get(names...)
	if !ok {
		return nil, false, nil
	}
	if s, isStr := rawjson.Unquote(v); isStr {
		if b := []byte(s); json.Valid(b) && rawjson.KindOf(b) == rawjson.Array {
			v = b
		}
	}
	if rawjson.KindOf(v) != rawjson.Array {
		return nil, false, eventgrid.Errorf(code, "%s must be a JSON array.", o.field(name))
	}
	var elems [][]byte
	rawjson.ArrayEach(v, func(_ int, e []byte) bool {
		elems = append(elems, e)
		return true
	})
	return elems, true, nil
}
