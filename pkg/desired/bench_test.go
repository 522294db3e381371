package desired_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/desired"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// BenchmarkApplyUnchanged measures what a retry or an unchanged file costs:
// applying again a declaration of 4 topics and 500 subscriptions that is
// applied as declared.
func BenchmarkApplyUnchanged(b *testing.B) {
	subs := map[string]string{}
	for i := range 500 {
		subs[fmt.Sprintf("s%03d", i)] = hook(fmt.Sprintf("t%d", i%4), fmt.Sprintf("https://sink.example/%d", i))
	}
	d := []byte(doc(map[string]string{"t0": `{}`, "t1": `{}`, "t2": `{}`, "t3": `{}`}, subs))
	r := desired.NewReconciler(registry.New(registry.DefaultOptions(), nil), zerolog.Nop(), desired.Options{})
	ctx := context.Background()
	if res, err := r.Apply(ctx, desired.Inline, d); err != nil || res.Errors.Len() != 0 {
		b.Fatalf("%+v %v", res.Errors, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if res, _ := r.Apply(ctx, desired.Inline, d); res.Unchanged != 504 {
			b.Fatalf("unchanged %d", res.Unchanged)
		}
	}
}
