package resource

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/suggest"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// memberKind says what the decoder does with a member of an object.
type memberKind uint8

const (
	// unknownMember: refused, with the nearest known name when one is
	// close.
	unknownMember memberKind = iota
	// readMember: the decoder reads it.
	readMember
	// readOnlyMember: GET returns it; a body may carry it back, and it is
	// ignored.
	readOnlyMember
	// unsupportedMember: a member of cloud Event Grid's API that edgegrid
	// does not implement; refused, saying so, unless it is null.
	unsupportedMember
	// misplacedMember: a member of another object, or of another kind of
	// the same object; refused, saying where it belongs.
	misplacedMember
)

// memberInfo is what a shape knows of one member name.
type memberInfo struct {
	kind memberKind
	// why completes the message of an unsupported or misplaced member.
	why string
}

// shape lists the members one kind of object may have.
type shape struct {
	// names are the members the decoder reads, in their documented
	// spelling: the candidates of a "did you mean" suggestion.
	names []string
	index map[string]memberInfo // by lower-case name
}

// shapeSpec describes a shape to newShape.
type shapeSpec struct {
	names []string
	// readOnly are members GET returns that the decoder does not read.
	readOnly []string
	// readOnlyOf names response types whose JSON members are read-only
	// unless listed in names, so that a member added to a response is
	// accepted back without another list to keep in step.
	readOnlyOf []any
	// unsupported and misplaced map a member to the reason it is refused.
	unsupported map[string]string
	misplaced   map[string]string
}

func newShape(spec shapeSpec) *shape {
	s := &shape{names: spec.names, index: map[string]memberInfo{}}
	add := func(name string, info memberInfo) {
		if _, dup := s.index[strings.ToLower(name)]; !dup {
			s.index[strings.ToLower(name)] = info
		}
	}
	for _, n := range spec.names {
		add(n, memberInfo{kind: readMember})
	}
	for _, n := range spec.readOnly {
		add(n, memberInfo{kind: readOnlyMember})
	}
	for _, v := range spec.readOnlyOf {
		for _, n := range jsonNames(reflect.TypeOf(v)) {
			add(n, memberInfo{kind: readOnlyMember})
		}
	}
	for n, why := range spec.unsupported {
		add(n, memberInfo{kind: unsupportedMember, why: why})
	}
	for n, why := range spec.misplaced {
		add(n, memberInfo{kind: misplacedMember, why: why})
	}
	return s
}

// jsonNames returns the JSON member names of struct type t.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// lookup returns what s knows of the member whose raw key is k.
func (s *shape) lookup(k []byte) memberInfo {
	var buf [64]byte
	if len(k) <= len(buf) {
		n, ascii := 0, true
		for _, c := range k {
			if c >= 0x80 || c == '\\' {
				ascii = false
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[n] = c
			n++
		}
		if ascii {
			return s.index[string(buf[:n])]
		}
	}
	// Escapes or non-ASCII letters: compare as get does, under Unicode
	// case folding.
	for name, info := range s.index {
		if rawjson.KeyEqualFold(k, name) {
			return info
		}
	}
	return memberInfo{}
}

// check refuses the first member of o that s does not accept: unknown,
// unsupported (and not null) or misplaced. The error names the member's
// path as the client wrote it.
//
// It costs one pass over o's members and allocates nothing unless it
// fails: the decoder reads the body without a second representation of it.
func (o object) check(s *shape) error {
	var err error
	rawjson.ObjectEach(o.raw, func(k, v []byte) bool {
		err = s.refuse(o, k, v)
		return err == nil
	})
	return err
}

// refuse returns the error for the member k of o, whose value is v, or nil
// when s accepts it.
func (s *shape) refuse(o object, k, v []byte) error {
	info := s.lookup(k)
	switch info.kind {
	case readMember, readOnlyMember:
		return nil
	case unsupportedMember:
		if rawjson.KindOf(v) == rawjson.Null {
			return nil
		}
		return eventgrid.Errorf(eventgrid.ENotSupported, "%s is not supported here: %s.", o.field(keyName(k)), info.why)
	case misplacedMember:
		return eventgrid.Errorf(eventgrid.EUnknownMember, "%s is not a member here: %s.", o.field(keyName(k)), info.why)
	}
	name := keyName(k)
	if near := suggest.Close(name, s.names); near != "" {
		return eventgrid.Errorf(eventgrid.EUnknownMember, "%s is not a known member; did you mean %s?", o.field(name), near)
	}
	return eventgrid.Errorf(eventgrid.EUnknownMember, "%s is not a known member; the members here are %s.", o.field(name), list(s.names))
}

// keyName returns a raw member name with its escapes decoded.
func keyName(k []byte) string {
	if s, ok := rawjson.Unquote(append(append([]byte{'"'}, k...), '"')); ok {
		return s
	}
	return string(k)
}

// list joins names as "a, b and c".
func list(names []string) string {
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// notHere is why a member of another kind of destination is refused.
func notHere(owners []eventgrid.EndpointType, here eventgrid.EndpointType) string {
	names := make([]string, len(owners))
	for i, o := range owners {
		names[i] = string(o)
	}
	return "it applies to " + list(names) + " destinations, not " + string(here)
}

// ownersOf maps each member of a destination kind's properties to the kinds
// that read it.
func ownersOf(kinds map[eventgrid.EndpointType][]string) map[string][]eventgrid.EndpointType {
	owners := map[string][]eventgrid.EndpointType{}
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		for _, n := range kinds[k] {
			owners[n] = append(owners[n], k)
		}
	}
	return owners
}
