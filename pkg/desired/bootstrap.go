package desired

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// Load returns the declared configuration: inline (the desired_config
// setting) if it is set, else the content of file (desired_config_file).
// It returns nil and no error when neither is set, and an error when both
// are, when the file cannot be read, or when it is empty.
func Load(inline, file string) ([]byte, error) {
	hasInline := strings.TrimSpace(inline) != ""
	switch {
	case hasInline && file != "":
		return nil, errors.New("desired: desired_config and desired_config_file are both set; set only one")
	case hasInline:
		return []byte(inline), nil
	case file == "":
		return nil, nil
	}
	b, err := readFile(file)
	if err != nil {
		return nil, fmt.Errorf("desired: %w", err)
	}
	return b, nil
}

// unique refuses a name declared twice: names are case-insensitive.
func unique(name, what string, seen map[string]bool) error {
	k := strings.ToLower(name)
	if seen[k] {
		return eventgrid.Errorf(eventgrid.EInvalidName, "The %s %q is declared more than once; names are case-insensitive.", what, name)
	}
	seen[k] = true
	return nil
}

// parse checks doc's shape and returns the entries of its two maps, each
// sorted by name.
func parse(doc []byte) (topics, subs []entry, err error) {
	doc = rawjson.TrimSpace(doc)
	switch {
	case len(doc) == 0:
		return nil, nil, errors.New("desired: the desired configuration is empty")
	case !json.Valid(doc):
		return nil, nil, errors.New("desired: the desired configuration is not valid JSON")
	case rawjson.KindOf(doc) != rawjson.Object:
		return nil, nil, errors.New("desired: the desired configuration must be a JSON object")
	}
	root := doc
	if p, ok := rawjson.Member(root, "properties"); ok && rawjson.KindOf(p) == rawjson.Object {
		if d, ok := rawjson.Member(p, "desired"); ok {
			if rawjson.KindOf(d) != rawjson.Object {
				return nil, nil, errors.New("desired: properties.desired must be a JSON object")
			}
			root = d
		}
	}
	if topics, err = section(root, "topics"); err != nil {
		return nil, nil, err
	}
	if subs, err = section(root, "eventSubscriptions"); err != nil {
		return nil, nil, err
	}
	return topics, subs, nil
}

// section returns the entries of the map root[name], which may be absent,
// null, an object or a string holding an object.
func section(root []byte, name string) ([]entry, error) {
	v, ok := rawjson.Member(root, name)
	if !ok || rawjson.KindOf(v) == rawjson.Null {
		return nil, nil
	}
	if s, isStr := rawjson.Unquote(v); isStr {
		v = rawjson.TrimSpace([]byte(s))
		if !json.Valid(v) {
			return nil, fmt.Errorf("desired: %s is a string but not valid JSON", name)
		}
		if rawjson.KindOf(v) == rawjson.Null {
			return nil, nil
		}
	}
	var entries []entry
	var bad bool
	isObject := rawjson.ObjectEach(v, func(key, value []byte) bool {
		k, ok := rawjson.Unquote(append(append([]byte{'"'}, key...), '"'))
		if !ok {
			bad = true
			return false
		}
		if !strings.HasPrefix(k, "$") {
			entries = append(entries, entry{name: k, raw: value})
		}
		return true
	})
	if !isObject || bad {
		return nil, fmt.Errorf("desired: %s must be a JSON object mapping names to properties", name)
	}
	slices.SortStableFunc(entries, func(a, b entry) int {
		return strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name))
	})
	return entries, nil
}
