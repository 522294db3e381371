package sendertest_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/sendertest"
)

// TestSender_Fake runs the suite against the sender fake the engine's
// tests use: the fake keeps the contract it stands in for.
func TestSender_Fake(t *testing.T) {
	sendertest.TestSender(t, sendertest.Features{}, func(t *testing.T) sendertest.Counterpart {
		var hung atomic.Bool
		s := &mock.Sender{}
		s.SendFn = func(ctx context.Context, _ *push.Batch) error {
			if hung.Load() {
				<-ctx.Done()
			}
			return ctx.Err()
		}
		return sendertest.Counterpart{
			Sender:       s,
			Subscription: &eventgrid.EventSubscription{Topic: "t", Name: "s"},
			Received: func(testing.TB) [][]byte {
				var bodies [][]byte
				for _, c := range s.Calls() {
					if c.Err == nil {
						bodies = append(bodies, c.Bodies...)
					}
				}
				return bodies
			},
			Hang: func() { hung.Store(true) },
		}
	})
}
