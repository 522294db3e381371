package mock

import (
	"fmt"
	"sync"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

var _ eventgrid.SubscriptionObserver = (*SubscriptionObserver)(nil)

// ChangeOp says what happened to a subscription.
type ChangeOp string

// The changes a SubscriptionObserver records.
const (
	OpPut    ChangeOp = "put"
	OpDelete ChangeOp = "delete"
)

// Change is one call to a SubscriptionObserver. Sub is a shallow copy of the
// subscription taken at the time of the call, so later updates do not
// rewrite the history.
type Change struct {
	Op  ChangeOp
	Sub eventgrid.EventSubscription
}

// String formats the change as "op topic/name#uid", handy in test failures.
func (c Change) String() string {
	return fmt.Sprintf("%s %s/%s#%d", c.Op, c.Sub.Topic, c.Sub.Name, c.Sub.UID)
}

// SubscriptionObserver records every call of eventgrid.SubscriptionObserver
// in order. PutFn and DeletedFn, when set, are called after recording, still
// inside the observer call. The zero value is ready to use, and every method
// is safe for concurrent use. It never blocks beyond its own short lock
// (and whatever PutFn and DeletedFn do).
type SubscriptionObserver struct {
	PutFn     func(sub *eventgrid.EventSubscription)
	DeletedFn func(sub *eventgrid.EventSubscription)

	mu      sync.Mutex
	changes []Change
}

// SubscriptionPut implements eventgrid.SubscriptionObserver.
func (o *SubscriptionObserver) SubscriptionPut(sub *eventgrid.EventSubscription) {
	o.record(OpPut, sub)
	if o.PutFn != nil {
		o.PutFn(sub)
	}
}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver.
func (o *SubscriptionObserver) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	o.record(OpDelete, sub)
	if o.DeletedFn != nil {
		o.DeletedFn(sub)
	}
}

func (o *SubscriptionObserver) record(op ChangeOp, sub *eventgrid.EventSubscription) {
	o.mu.Lock()
	o.changes = append(o.changes, Change{Op: op, Sub: *sub})
	o.mu.Unlock()
}

// Changes returns a copy of the recorded changes, oldest first.
func (o *SubscriptionObserver) Changes() []Change {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]Change, len(o.changes))
	copy(out, o.changes)
	return out
}

// Reset forgets every recorded change.
func (o *SubscriptionObserver) Reset() {
	o.mu.Lock()
	o.changes = nil
	o.mu.Unlock()
}
