package logbuf_test

import (
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

func TestBuffer(t *testing.T) {
	var b logbuf.Buffer
	log := zerolog.New(&b)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for range 50 {
				log.Info().Int("writer", i).Msg("hello")
			}
		})
	}
	wg.Wait()
	if n := len(b.Messages(t, "hello")); n != 200 {
		t.Fatalf("%d lines, want 200", n)
	}
	type line struct {
		Writer int `json:"writer"`
	}
	if got := logbuf.Decode[line](t, &b); len(got) != 200 {
		t.Fatalf("Decode: %d lines", len(got))
	}
	if !b.Contains(`"writer":3`) {
		t.Fatal("Contains misses a written line")
	}
	if n := len(b.Take(t)); n != 200 || b.String() != "" {
		t.Fatalf("Take: %d lines, %q left", n, b.String())
	}
	log.Info().Msg("again")
	b.Reset()
	if len(b.Lines(t)) != 0 {
		t.Fatal("Reset kept lines")
	}
}
