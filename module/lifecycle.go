package main

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/config"
)

// lifecycle is the one ordered list of what the broker started: each
// long-lived component is added as it starts, with its Close, and the list
// is closed last first, on a failed start and on stop alike. Closing is
// ordered so that nothing is closed under a component still using it: the
// listeners stop before the followers of the declared configuration are
// joined, those before the delivery modes close, and the modes before the
// dead-letter writer and the senders they use (the webhook sender's
// connections, its dials and its sweep of idle connections).
type lifecycle struct {
	log     zerolog.Logger
	started []component
}

// component is one entry of the list.
type component struct {
	name  string
	close func(context.Context) error
}

// add notes that name started and closes with close.
func (l *lifecycle) add(name string, close func(context.Context) error) {
	l.started = append(l.started, component{name, close})
}

// stop closes everything started, last first, within
// broker__stopTimeoutInSeconds from now: every component shares the one
// deadline, so the ones closed first leave what they did not use to those
// after them. An error a component returns (work it had to cut short) is
// logged with its name.
func (l *lifecycle) stop(cfg config.Config) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.StopTimeoutSeconds)*time.Second)
	defer cancel()
	for i := len(l.started) - 1; i >= 0; i-- {
		c := l.started[i]
		if err := c.close(ctx); err != nil {
			l.log.Warn().Err(err).Str("component", c.name).Msg("stopped before its work was done")
		}
	}
	l.started = nil
}

// atLeast is close given at least d after ctx's deadline: for the dead
// letters, which get what is left of the stop timeout and a second at
// least, so that a full stop timeout never leaves them no time at all.
func atLeast(d time.Duration, close func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		deadline := time.Now().Add(d)
		if dl, ok := ctx.Deadline(); ok && dl.After(deadline) {
			deadline = dl
		}
		ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
		return close(ctx)
	}
}

// ignoringContext adapts a close that needs no time bound.
func ignoringContext(close func()) func(context.Context) error {
	return func(context.Context) error { close(); return nil }
}
