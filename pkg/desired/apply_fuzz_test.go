package desired_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/desired"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// FuzzApply applies arbitrary declarations. Apply never panics; a document
// it refuses changes nothing; one it applies is applied: a second Apply of
// the same document changes nothing and skips the same entries, and the
// reported properties encode as JSON.
func FuzzApply(f *testing.F) {
	for _, s := range []string{
		`{"topics":{"sensors":{"inputSchema":"EventGridSchema"},"raw":{"inputSchema":"customeventschema"},"gone":null},` +
			`"eventSubscriptions":{"hot":{"topic":"sensors","destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x"}},` +
			`"filter":{"includedEventTypes":"[\"a\"]","advancedFilters":"[{\"operatorType\":\"NumberIn\",\"key\":\"data.n\",\"values\":[1]}]"},` +
			`"deliveryPolicy":{"approxBatchSizeInBytes":204800,"maxEventsPerBatch":25}},` +
			`"typo":{"topic":"sensors","destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x"}},"filter":{"subjectBeginWith":"/a"}}}}`,
		`{"properties":{"desired":{"$version":3,"topics":"{\"t\":{}}","eventSubscriptions":{"s":{"topic":"t","destination":{"endpointType":"edgehub","properties":{"outputName":"o"}}}}}}}`,
		`{"topics":{"T":{},"t":{}}}`, `{"eventSubscriptions":{"s":{"destination":{}}}}`, `{}`, `[]`, `"x"`, ``, `{"topics":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		o := registry.DefaultOptions()
		o.MaxTopics, o.MaxSubscriptionsPerTopic = 20, 20
		reg := registry.New(o, nil)
		r := desired.NewReconciler(reg, zerolog.Nop(), desired.Options{})
		ctx := context.Background()
		file := desired.File("desired.json")
		first, err := r.Apply(ctx, file, doc)
		if err != nil {
			if first.Changed() {
				t.Fatalf("a refused document changed %+v", first)
			}
			if ts, _ := reg.Topics(ctx); len(ts) != 0 {
				t.Fatalf("a refused document created %d topics", len(ts))
			}
			return
		}
		if _, err := json.Marshal(r.Reported(file, first, nil)); err != nil {
			t.Fatalf("reported properties do not encode: %v", err)
		}
		second, err := r.Apply(ctx, file, doc)
		if err != nil {
			t.Fatalf("the second Apply of a document applied once fails: %v", err)
		}
		if second.Changed() {
			t.Fatalf("the second Apply of the same document changed %+v (first %+v)", second, first)
		}
		if !reflect.DeepEqual(first.Errors, second.Errors) {
			t.Fatalf("the second Apply skips other entries:\nfirst  %+v\nsecond %+v", first.Errors, second.Errors)
		}
	})
}
