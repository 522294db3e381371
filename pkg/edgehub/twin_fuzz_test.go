package edgehub

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzTwinPatch merges arbitrary desired-properties patches and diffs
// arbitrary reported documents: merging never panics, and the patch diff
// computes from one document to another, merged into the first, gives the
// second, as the twin would hold it (nulls and empty objects are absences,
// and $-metadata is the twin's own).
func FuzzTwinPatch(f *testing.F) {
	f.Add([]byte(`{"$version": 7, "topics": {"a": {"inputSchema": "x"}, "gone": {}}, "errors": {"topics": {"bad": "m"}}, "other": 1}`),
		[]byte(`{"topics": {"a": {"inputSchema": "x"}, "new": {"inputSchema": "z"}}, "errors": {"topics": {}}, "eventSubscriptions": {}}`))
	f.Add([]byte(`{"topics": {"a": {"inputSchema": "y"}, "b": null, "c": {"k": null}}, "n": null}`), []byte(`{"a": [1, {"b": null}], "c": "s"}`))
	f.Add([]byte(`{}`), []byte(`{"a": {"b": {"c": {}}}}`))
	f.Add([]byte(`{"a": {"$m": 1, "b": 2}}`), []byte(`{"a": {"c": 3}}`))
	f.Fuzz(func(t *testing.T, from, to []byte) {
		var a, b map[string]any
		if json.Unmarshal(from, &a) != nil || json.Unmarshal(to, &b) != nil || a == nil || b == nil {
			return
		}
		var patched map[string]any
		_ = json.Unmarshal(from, &patched)
		merge(patched, b) // b as a desired-properties patch: must not panic
		d := diff(a, b)
		if _, err := json.Marshal(d); err != nil {
			t.Fatalf("diff does not encode: %v", err)
		}
		merge(a, d)
		if got, want := prune(a), prune(b); !reflect.DeepEqual(got, want) {
			t.Fatalf("diff %v merged gives\n%v\nwant\n%v", d, got, want)
		}
	})
}

// prune returns m without null members, empty objects and $-metadata,
// which diff leaves alone at every depth.
func prune(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if strings.HasPrefix(k, "$") || v == nil {
			continue
		}
		if vm, ok := v.(map[string]any); ok {
			if vm = prune(vm); len(vm) == 0 {
				continue
			}
			v = vm
		}
		out[k] = v
	}
	return out
}
