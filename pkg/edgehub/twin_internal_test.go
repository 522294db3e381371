package edgehub

import (
	"encoding/json"
	"reflect"
	"testing"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMerge: a patch merges as module twin patches do: null removes a
// member, objects merge, anything else replaces.
func TestMerge(t *testing.T) {
	doc := decode(t, `{"topics": {"a": {"inputSchema": "x"}, "b": {}}, "eventSubscriptions": "{}", "n": 1}`)
	merge(doc, decode(t, `{"topics": {"a": {"inputSchema": "y"}, "b": null, "c": {"k": null}}, "eventSubscriptions": {"s": {}}, "n": null}`))
	want := decode(t, `{"topics": {"a": {"inputSchema": "y"}, "c": {}}, "eventSubscriptions": {"s": {}}}`)
	if !reflect.DeepEqual(doc, want) {
		t.Errorf("merged %v, want %v", doc, want)
	}
}

// TestDiff: the patch turning one reported document into another, which
// merged into the first gives the second.
func TestDiff(t *testing.T) {
	from := decode(t, `{"$version": 7, "topics": {"a": {"inputSchema": "x"}, "gone": {}}, "errors": {"topics": {"bad": "m"}, "eventSubscriptions": {}}, "other": 1}`)
	to := decode(t, `{"topics": {"a": {"inputSchema": "x"}, "new": {"inputSchema": "z"}}, "errors": {"topics": {}, "eventSubscriptions": {}}, "eventSubscriptions": {}}`)
	got := diff(from, to)
	want := decode(t, `{"topics": {"gone": null, "new": {"inputSchema": "z"}}, "errors": {"topics": {"bad": null}}, "other": null}`)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diff %v, want %v", got, want)
	}
	merge(from, got)
	delete(from, "$version")
	if d := diff(from, to); len(d) != 0 {
		t.Errorf("after the patch, still differs by %v", d)
	}
	if d := diff(to, to); len(d) != 0 {
		t.Errorf("diff of a document with itself: %v", d)
	}
}
