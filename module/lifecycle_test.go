package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

// TestLifecycle_Stop: what started is closed last first, every component
// within the one stop deadline; an error is logged with the component's
// name and the rest still close; the list is closed once.
func TestLifecycle_Stop(t *testing.T) {
	var logs logbuf.Buffer
	lc := &lifecycle{log: zerolog.New(&logs)}
	var order []string
	var deadlines []time.Time
	for _, name := range []string{"first", "second", "third"} {
		lc.add(name, func(ctx context.Context) error {
			order = append(order, name)
			d, _ := ctx.Deadline()
			deadlines = append(deadlines, d)
			if name == "second" {
				return errors.New("cut short")
			}
			return nil
		})
	}
	cfg := config.Default()
	cfg.StopTimeoutSeconds = 7
	before := time.Now()
	lc.stop(cfg)
	if want := []string{"third", "second", "first"}; !slices.Equal(order, want) {
		t.Fatalf("closed %v; want %v", order, want)
	}
	for _, d := range deadlines {
		if d != deadlines[0] || d.Before(before.Add(7*time.Second)) || d.After(time.Now().Add(7*time.Second)) {
			t.Fatalf("deadlines %v; want one, broker__stopTimeoutInSeconds from the stop", deadlines)
		}
	}
	lines := logs.Messages(t, "stopped before its work was done")
	if len(lines) != 1 || lines[0]["component"] != "second" || lines[0]["error"] != "cut short" {
		t.Fatalf("logged %v; want the second component's error", lines)
	}
	lc.stop(cfg)
	if len(order) != 3 {
		t.Fatalf("a second stop closed again: %v", order)
	}
}

// TestLifecycle_AtLeast: the dead letters get what is left of the stop
// timeout, and a second at least, even once it has passed.
func TestLifecycle_AtLeast(t *testing.T) {
	var got time.Duration
	closeFn := atLeast(time.Second, func(ctx context.Context) error {
		if ctx.Err() != nil {
			t.Error("given a context already done")
		}
		d, _ := ctx.Deadline()
		got = time.Until(d)
		return nil
	})
	spent, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Minute))
	defer cancel()
	_ = closeFn(spent)
	if got < 900*time.Millisecond || got > time.Second {
		t.Errorf("after the stop timeout: %v left; want a second", got)
	}
	long, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	_ = closeFn(long)
	if got < 59*time.Second {
		t.Errorf("within the stop timeout: %v left; want what is left of it", got)
	}
}
