package desired

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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
		return nil, errors.New("desired_config and desired_config_file are both set; set only one")
	case hasInline:
		return []byte(inline), nil
	case file == "":
		return nil, nil
	}
	return readFile(file)
}

// Check returns the error Apply would return for doc without applying
// anything: whether doc is a declaration at all.
func Check(doc []byte) error {
	_, _, err := parse(doc)
	return err
}

// entry is one member of the topics or eventSubscriptions map.
type entry struct {
	name string
	raw  []byte
}

// parse checks doc's shape and returns the entries of its two maps, each
// sorted by name. A JSON mistake is reported with its line and column.
func parse(doc []byte) (topics, subs []entry, err error) {
	doc = rawjson.TrimSpace(doc)
	if len(doc) == 0 {
		return nil, nil, errors.New("the declaration is empty")
	}
	if err := syntaxError(doc); err != nil {
		return nil, nil, fmt.Errorf("the declaration is not valid JSON: %w", err)
	}
	if rawjson.KindOf(doc) != rawjson.Object {
		return nil, nil, errors.New("the declaration must be a JSON object")
	}
	root := doc
	if p, ok := rawjson.Member(root, "properties"); ok && rawjson.KindOf(p) == rawjson.Object {
		if d, ok := rawjson.Member(p, "desired"); ok {
			if rawjson.KindOf(d) != rawjson.Object {
				return nil, nil, errors.New("properties.desired must be a JSON object")
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

// syntaxError returns nil when doc is valid JSON, and otherwise where and
// why it is not: "line 3, column 14: invalid character …".
func syntaxError(doc []byte) error {
	if se := rawjson.Locate(doc); se != nil {
		return se
	}
	return nil
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
		if err := syntaxError(v); err != nil {
			return nil, fmt.Errorf("%s is a string but not valid JSON (%w)", name, err)
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
		return nil, fmt.Errorf("%s must be a JSON object mapping names to declarations", name)
	}
	slices.SortStableFunc(entries, func(a, b entry) int {
		return strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name))
	})
	return entries, nil
}
