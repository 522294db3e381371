package eventgrid

import "context"

// CommitHooks are what a subscription put's endpoint validation asked to be
// done once the subscription is stored (see OnCommit).
type CommitHooks struct {
	fns []func(stored *EventSubscription)
}

type commitKey struct{}

// WithCommitHooks returns a context for the endpoint validation of one
// subscription put, and the hooks OnCommit adds to through it.
func WithCommitHooks(ctx context.Context) (context.Context, *CommitHooks) {
	h := &CommitHooks{}
	return context.WithValue(ctx, commitKey{}, h), h
}

// OnCommit asks, from within a subscription put's endpoint validation,
// that fn run when the put stores its subscription; fn never runs when the
// put is refused or starts over, so what a validation agreed takes effect
// only with the subscription it was agreed for. OnCommit returns false,
// and keeps nothing, when ctx carries no hooks.
func OnCommit(ctx context.Context, fn func(stored *EventSubscription)) bool {
	h, ok := ctx.Value(commitKey{}).(*CommitHooks)
	if !ok {
		return false
	}
	h.fns = append(h.fns, fn)
	return true
}

// Run calls the hooks with the stored subscription. A nil *CommitHooks has
// none.
func (h *CommitHooks) Run(stored *EventSubscription) {
	if h == nil {
		return
	}
	for _, fn := range h.fns {
		fn(stored)
	}
}
